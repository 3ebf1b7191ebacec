//! Facts are fresh at the act: right before each removal, under the lock, gc
//! scans the directory for processes again. A `git` wrapper stops the first
//! `git worktree remove` so that a process can enter the next worktree after
//! the gather saw it idle.

use std::process::{Child, Command};

use crate::support::{assert_contains, Env};
use crate::undo::Gate;

/// A process with its current directory in `dir`, ended when dropped.
struct Inside(Child);

impl Drop for Inside {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn enter(dir: &std::path::Path) -> Inside {
    Inside(
        Command::new("sleep")
            .arg("1000")
            .current_dir(dir)
            .spawn()
            .expect("start sleep"),
    )
}

#[test]
fn gc_keeps_a_worktree_that_a_process_entered_after_the_gather() {
    let env = Env::new();
    env.add_bare_remote();
    env.git(&env.repo, &["push", "-q", "origin", "main"]).ok();
    env.git(&env.repo, &["fetch", "-q", "origin"]).ok();
    let one = env.spawn_sh("one", "true");
    let two = env.spawn_sh("two", "true");
    let gate = Gate::new(&env, "gate", "worktree remove");
    let mut gc = gate.start(&env, &env.repo, &["gc"]);
    let args = gate.wait_reached(&mut gc);
    // gc gathered both idle and removes the first; a process enters the other.
    let (first, other, other_id) = if args.contains(one.to_str().expect("utf-8")) {
        (&one, &two, "two")
    } else {
        (&two, &one, "one")
    };
    assert!(args.contains(first.to_str().expect("utf-8")), "{args}");
    let inside = enter(other);
    // The process is in the directory (its cwd), as gc's scan would see it.
    assert_eq!(
        std::fs::read_link(format!("/proc/{}/cwd", inside.0.id())).expect("cwd"),
        *other
    );
    gate.release(false);
    let run: crate::support::Run = gc.wait_with_output().expect("wait").into();
    assert!(
        other.join(".git").exists(),
        "gc removed a worktree a process is in\n{}\n{}",
        run.stdout,
        run.stderr
    );
    assert_contains(
        &run.stdout,
        &format!(
            "kept     {other_id}: busy: pid {} (sleep) has its current directory in it",
            inside.0.id()
        ),
    );
    assert!(!first.exists(), "the idle one was removed");
    drop(inside);
}
