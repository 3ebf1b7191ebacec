//! A failed spawn undoes only what it made: the directory it created itself
//! (same inode), holding nothing or its own new worktree, and the admin entries
//! its `git worktree add` registered. Races are staged with a `git` wrapper that
//! stops `git worktree add` on a FIFO until the test has acted.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{make_executable, which_git, Env, Run, BIN};

/// A `git` wrapper that, at the first `git <needle>`, writes its arguments to
/// `reached`, waits for a line on `fifo`, then fails if `fail` exists and runs
/// the real git otherwise.
pub struct Gate {
    pub bin: PathBuf,
    reached: PathBuf,
    fifo: PathBuf,
    fail: PathBuf,
}

impl Gate {
    pub fn new(env: &Env, name: &str, needle: &str) -> Gate {
        let dir = env.root().join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let gate = Gate {
            bin: dir.join("bin"),
            reached: dir.join("reached"),
            fifo: dir.join("fifo"),
            fail: dir.join("fail"),
        };
        std::fs::create_dir_all(&gate.bin).expect("mkdir");
        let status = std::process::Command::new("mkfifo")
            .arg(&gate.fifo)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        // Only the first such call stops; `reached` holds its arguments.
        let script = format!(
            "#!/bin/sh\ncase \" $* \" in *\" {needle} \"*)\n  if [ ! -e '{reached}' ]; then\n  \
             echo \"$*\" > '{reached}'\n  read line < '{fifo}'\n  \
             if [ -e '{fail}' ]; then echo 'fatal: injected failure' >&2; exit 128; fi\n  fi;;\nesac\n\
             exec {real} \"$@\"\n",
            reached = gate.reached.display(),
            fifo = gate.fifo.display(),
            fail = gate.fail.display(),
            real = which_git(),
        );
        let git = gate.bin.join("git");
        std::fs::write(&git, script).expect("write wrapper");
        make_executable(&git);
        gate
    }

    /// Start `git-bullpen <args>` in `cwd` with the wrapper first on PATH, in a
    /// process group of its own.
    pub fn start(&self, env: &Env, cwd: &Path, args: &[&str]) -> Child {
        use std::os::unix::process::CommandExt;
        let mut cmd = env.cmd(BIN, cwd);
        cmd.process_group(0);
        let path = std::env::join_paths(std::iter::once(self.bin.clone()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("PATH");
        cmd.env("PATH", path)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start git-bullpen")
    }

    /// Wait until the wrapper stopped at its step (a deadline only as a failure
    /// bound); the arguments git was called with.
    pub fn wait_reached(&self, child: &mut Child) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.reached.exists() {
            if let Ok(Some(status)) = child.try_wait() {
                let mut err = String::new();
                let mut out = String::new();
                use std::io::Read;
                if let Some(mut e) = child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                if let Some(mut o) = child.stdout.take() {
                    let _ = o.read_to_string(&mut out);
                }
                panic!("bullpen ended ({status}) before the stopped git step\n{out}\n{err}");
            }
            assert!(
                Instant::now() < deadline,
                "the stopped git step never reached"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // Written before the wrapper blocks; read until the line is whole.
        loop {
            let args = std::fs::read_to_string(&self.reached).expect("read");
            if args.ends_with('\n') {
                return args;
            }
            assert!(
                Instant::now() < deadline,
                "the wrapper never wrote its arguments"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Let the stopped git go on: failing with `fail`, else as the real git.
    pub fn release(&self, fail: bool) {
        if fail {
            std::fs::write(&self.fail, "").expect("write");
        }
        std::fs::write(&self.fifo, "go\n").expect("open the fifo");
    }
}

impl Drop for Gate {
    /// A test that failed early must not leave git (and bullpen) waiting.
    fn drop(&mut self) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.fifo)
        {
            let _ = f.write_all(b"go\n");
        }
    }
}

/// A second repository `other` with one commit, next to the test repository.
fn other_repo(env: &Env) -> PathBuf {
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    env.git(&other, &["init", "-q", "-b", "main"]).ok();
    std::fs::write(other.join("OTHER"), "theirs\n").expect("write");
    env.git(&other, &["add", "OTHER"]).ok();
    env.git(&other, &["commit", "-q", "-m", "other"]).ok();
    other
}

/// Both repositories put their worktrees in one shared root.
fn shared_root(env: &Env, repos: &[&Path]) -> PathBuf {
    let root = env.root().join("shared-root");
    for repo in repos {
        env.git(
            repo,
            &[
                "config",
                "bullpen.worktreeRoot",
                root.to_str().expect("utf-8"),
            ],
        )
        .ok();
    }
    root
}

fn finish(child: Child) -> Run {
    child.wait_with_output().expect("wait").into()
}

/// Where `dir` is a worktree of: its common git dir, as git says.
fn common_dir_of(env: &Env, dir: &Path) -> PathBuf {
    let run = env
        .git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )
        .ok();
    PathBuf::from(run.stdout.trim())
}

#[test]
fn a_spawn_that_loses_the_path_to_another_repository_leaves_its_worktree_alone() {
    let env = Env::new();
    let other = other_repo(&env);
    let root = shared_root(&env, &[&env.repo, &other]);
    let gate = Gate::new(&env, "gate", "worktree add");
    let mut first = gate.start(&env, &env.repo, &["spawn", "same", "--", "true"]);
    gate.wait_reached(&mut first);
    // Meanwhile the other repository spawns the same id into the shared root
    // (its lock is its own), and its command leaves work there.
    let second = env.bullpen_in(
        &other,
        &["spawn", "same", "--", "sh", "-c", "echo mine > work.txt"],
    );
    gate.release(false);
    let first = finish(first);
    let path = root.join("same");
    let (winner, winner_repo, loser) = match (first.status.success(), second.status.success()) {
        (true, false) => ("first", &env.repo, &second),
        (false, true) => ("second", &other, &first),
        _ => panic!(
            "exactly one spawn must win the path\nfirst:\n{}\nsecond:\n{}",
            first.stderr, second.stderr
        ),
    };
    crate::support::assert_contains(&loser.stderr, "already exists");
    assert!(
        path.join(".git").exists(),
        "the {winner} spawn's worktree was deleted by the loser's undo\nloser:\n{}",
        loser.stderr
    );
    assert_eq!(
        common_dir_of(&env, &path),
        winner_repo.join(".git"),
        "{winner}"
    );
    if winner == "second" {
        assert!(path.join("work.txt").exists(), "the winner's work is gone");
    }
}

#[test]
fn a_failed_add_leaves_a_directory_that_replaced_the_one_spawn_made() {
    let env = Env::new();
    let gate = Gate::new(&env, "gate", "worktree add");
    let mut spawn = gate.start(&env, &env.repo, &["spawn", "swap", "--", "true"]);
    gate.wait_reached(&mut spawn);
    // The directory spawn made is moved away, and someone else's takes its place.
    let path = env.bullpen_home.join("worktrees");
    let made = find_dir_named(&path, "swap").expect("spawn made its directory");
    std::fs::rename(&made, made.with_file_name("moved-away")).expect("rename");
    std::fs::create_dir(&made).expect("mkdir");
    std::fs::write(made.join("theirs.txt"), "not bullpen's\n").expect("write");
    gate.release(true);
    let run = finish(spawn).fails();
    assert!(
        made.join("theirs.txt").exists(),
        "the undo removed a directory it did not make\n{}",
        run.stderr
    );
    crate::support::assert_contains(&run.stderr, "is not the directory this attempt created");
}

#[test]
fn a_failed_add_leaves_another_repositorys_worktree_in_the_directory_spawn_made() {
    let env = Env::new();
    let other = other_repo(&env);
    let root = shared_root(&env, &[&env.repo, &other]);
    let gate = Gate::new(&env, "gate", "worktree add");
    let mut spawn = gate.start(&env, &env.repo, &["spawn", "into", "--", "true"]);
    gate.wait_reached(&mut spawn);
    // git adds a worktree into an existing empty directory: the other
    // repository's user does so into the one spawn made.
    let path = root.join("into");
    env.git(
        &other,
        &["worktree", "add", "-q", path.to_str().expect("utf-8")],
    )
    .ok();
    gate.release(true);
    let run = finish(spawn).fails();
    assert!(
        path.join("OTHER").exists(),
        "the undo removed another repository's worktree\n{}",
        run.stderr
    );
    assert_eq!(common_dir_of(&env, &path), other.join(".git"));
}

#[test]
fn a_failed_add_leaves_an_entry_that_was_registered_before() {
    let env = Env::new();
    // A worktree of the user's at the very path, its directory away (an
    // unmounted disk): git refuses the add, and the entry is not spawn's.
    let root = env.bullpen_home.join("mine-root");
    env.git(
        &env.repo,
        &[
            "config",
            "bullpen.worktreeRoot",
            root.to_str().expect("utf-8"),
        ],
    )
    .ok();
    let path = root.join("away");
    env.git(
        &env.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            path.to_str().expect("utf-8"),
        ],
    )
    .ok();
    std::fs::remove_dir_all(&path).expect("rm");
    let run = env.bullpen(&["spawn", "away", "--", "true"]).fails();
    let list = env.git_out(&["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(&format!("worktree {}", path.display())),
        "the user's entry was removed\n{list}\n{}",
        run.stderr
    );
    assert!(!path.exists(), "the directory spawn made is left");
}

fn find_dir_named(under: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(under).ok()?.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
        if p.is_dir() && !p.is_symlink() {
            if let Some(found) = find_dir_named(&p, name) {
                return Some(found);
            }
        }
    }
    None
}

#[test]
fn a_directory_made_by_someone_else_while_spawn_waited_for_the_lock_stays() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;
    let env = Env::new();
    let state = env.repo.join(".git/bullpen");
    std::fs::create_dir_all(&state).expect("mkdir");
    let lock = std::fs::File::create(state.join("worktree.lock")).expect("lock file");
    // SAFETY: flock(2) on a file this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let ino = lock.metadata().expect("stat").ino();
    let mut spawn = env
        .cmd(BIN, &env.repo)
        .args(["spawn", "late", "--", "true"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start git-bullpen");
    // Spawn has checked the path is free and waits for the lock (the kernel
    // lists it as a blocked waiter on that file).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let locks = std::fs::read_to_string("/proc/locks").expect("read /proc/locks");
        let waiting = locks.lines().any(|l| {
            l.contains("->")
                && l.split_whitespace()
                    .any(|f| f.ends_with(&format!(":{ino}")))
        });
        if waiting {
            break;
        }
        if let Ok(Some(status)) = spawn.try_wait() {
            panic!("spawn ended ({status}) before it waited for the lock");
        }
        assert!(Instant::now() < deadline, "spawn never waited for the lock");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Now someone else's directory appears at the path.
    let root = env.bullpen_home.join("worktrees");
    let key = std::fs::read_dir(&root)
        .expect("the worktree root")
        .flatten()
        .next()
        .expect("the repository's folder")
        .path();
    let path = key.join("late");
    std::fs::create_dir(&path).expect("mkdir");
    std::fs::write(path.join("notes.txt"), "someone's\n").expect("write");
    drop(lock);
    let run = finish(spawn).fails();
    crate::support::assert_contains(&run.stderr, "already exists");
    assert!(
        path.join("notes.txt").exists(),
        "spawn's undo removed a directory it did not make\n{}",
        run.stderr
    );
}

#[test]
fn gc_collects_a_spawn_killed_between_its_directory_and_git_worktree_add() {
    let env = Env::new();
    let gate = Gate::new(&env, "gate", "worktree add");
    let mut spawn = gate.start(&env, &env.repo, &["spawn", "cut", "--", "true"]);
    gate.wait_reached(&mut spawn);
    let made = find_dir_named(&env.bullpen_home.join("worktrees"), "cut").expect("made");
    // SAFETY: kill(2) on the process group this test created (spawn and the wrapper).
    unsafe { libc::kill(-(spawn.id() as i32), libc::SIGKILL) };
    let _ = spawn.wait();
    let gc = env.bullpen(&["gc"]).ok();
    crate::support::assert_contains(&gc.stdout, "collected  cut");
    assert!(!made.exists(), "the empty directory spawn made is left");
    let branch = env.git(&env.repo, &["rev-parse", "--verify", "-q", "bullpen/cut"]);
    assert!(!branch.status.success(), "its branch is left");
}

#[test]
fn the_undo_after_a_lost_ready_record_waits_for_the_worktree_lock() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    let lock = env.repo.join(".git/bullpen/worktree.lock");
    let held = env.root().join("held");
    let fifo = env.root().join("release");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(status.success());
    // Setup, after git made the worktree: something writes the record (so the
    // `ready` compare-and-swap is lost), and another process takes the lock.
    let setup = format!(
        "c=$(git rev-parse refs/bullpen/sessions/x) && \
         n=$(git commit-tree \"$c^{{tree}}\" -p \"$c\" -m meddled) && \
         git update-ref refs/bullpen/sessions/x \"$n\" \"$c\" && \
         (flock '{lock}' sh -c \": > '{held}'; cat '{fifo}' >/dev/null\" </dev/null >/dev/null 2>&1 &) && \
         while [ ! -e '{held}' ]; do sleep 0.01; done",
        lock = lock.display(),
        held = held.display(),
        fifo = fifo.display(),
    );
    env.git(&env.repo, &["config", "bullpen.setup", &setup])
        .ok();
    let mut spawn = env
        .cmd(BIN, &env.repo)
        .args(["spawn", "x", "--", "true"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start git-bullpen");
    struct Release(PathBuf);
    impl Drop for Release {
        fn drop(&mut self) {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.0)
            {
                let _ = f.write_all(b"go\n");
            }
        }
    }
    let release = Release(fifo.clone());
    let deadline = Instant::now() + Duration::from_secs(60);
    let ino = loop {
        if let Ok(m) = std::fs::metadata(&lock) {
            if held.exists() {
                break m.ino();
            }
        }
        assert!(Instant::now() < deadline, "setup never took the lock");
        std::thread::sleep(Duration::from_millis(10));
    };
    // spawn lost the record and waits for the lock before it undoes anything.
    loop {
        let locks = std::fs::read_to_string("/proc/locks").expect("read /proc/locks");
        if locks.lines().any(|l| {
            l.contains("->")
                && l.split_whitespace()
                    .any(|f| f.ends_with(&format!(":{ino}")))
        }) {
            break;
        }
        if let Ok(Some(status)) = spawn.try_wait() {
            panic!("spawn ended ({status}) without waiting for the worktree lock");
        }
        assert!(Instant::now() < deadline, "spawn never waited for the lock");
        std::thread::sleep(Duration::from_millis(10));
    }
    let path = crate::undo::find_dir_named(&env.bullpen_home.join("worktrees"), "x")
        .expect("the worktree");
    assert!(path.join(".git").exists(), "undone without the lock");
    drop(release);
    let run = finish(spawn).fails();
    crate::support::assert_contains(&run.stderr, "changed while it was being created");
    assert!(!path.exists(), "the worktree is left");
}
