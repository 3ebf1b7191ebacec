//! A session while it is being created (`provisioning`): it is its spawner's
//! alone, a change under the spawn makes the spawn undo itself, and an
//! interrupted spawn is finished by the next gc whatever moment it died at.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{make_executable, Env, BIN};

/// A post-checkout hook running `script` (inside `git worktree add`, while the
/// record says `provisioning`).
fn post_checkout(env: &Env, script: &str) {
    let hooks = env.repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\n{script}\n")).unwrap();
    make_executable(&hook);
}

fn record_state(env: &Env, id: &str) -> Option<String> {
    let refname = format!("refs/bullpen/sessions/{id}");
    if !env
        .git(&env.repo, &["rev-parse", "-q", "--verify", &refname])
        .status
        .success()
    {
        return None;
    }
    let v = env.record_at(&refname);
    v["state"].as_str().map(str::to_owned)
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A spawn held in its post-checkout hook: released (and ended) however the
/// test ends.
struct Held {
    child: Option<std::process::Child>,
    gate: std::path::PathBuf,
}

impl Held {
    fn id(&self) -> u32 {
        self.child.as_ref().map_or(0, |c| c.id())
    }

    fn release(mut self) -> std::process::Output {
        let _ = std::fs::write(&self.gate, "");
        self.child.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.gate, "");
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_session_being_created_is_not_resumed_and_runs_one_command() {
    let env = Env::new();
    let gate = env.root().join("go");
    post_checkout(
        &env,
        // Bounded, so that a failing test never leaves a spawn waiting forever.
        &format!(
            "i=0; while [ ! -e {} ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done",
            gate.display()
        ),
    );
    let ran = env.root().join("ran");
    let spawn = Held {
        child: Some(
            env.cmd(BIN, &env.repo)
                .args(["spawn", "x", "--", "sh", "-c"])
                .arg(format!("echo spawn >> {}", ran.display()))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        ),
        gate: gate.clone(),
    };
    wait_for("provisioning", || {
        record_state(&env, "x").as_deref() == Some("provisioning")
    });
    // Bounded: a resume that went on would wait for the spawn's lock forever.
    let mut child = env
        .cmd(BIN, &env.repo)
        .args(["resume", "x", "--", "sh", "-c"])
        .arg(format!("echo resume >> {}", ran.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            std::fs::write(&gate, "").unwrap();
            panic!("resume of a session being created did not return");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let resume: crate::support::Run = child.wait_with_output().unwrap().into();
    assert_eq!(resume.code(), 125, "{}", resume.stderr);
    assert!(
        resume.stderr.contains(&format!(
            "is still being created (by `git bullpen spawn`, pid {})",
            spawn.id()
        )),
        "{}",
        resume.stderr
    );
    let gc = env.bullpen(&["gc", "--json"]).ok();
    assert!(gc.stdout.contains("still being created"), "{}", gc.stdout);
    let out = spawn.release();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "spawn\n");
}

#[test]
fn a_record_changed_under_a_spawn_makes_it_undo_itself() {
    let env = Env::new();
    // While git creates the worktree, something else writes the record.
    post_checkout(
        &env,
        "c=$(git rev-parse refs/bullpen/sessions/x) && \
         n=$(git commit-tree \"$c^{tree}\" -p \"$c\" -m meddled) && \
         git update-ref refs/bullpen/sessions/x \"$n\" \"$c\"",
    );
    let marker = env.root().join("ran");
    let run = env
        .bullpen(&["spawn", "x", "--", "touch", marker.to_str().unwrap()])
        .fails();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert!(
        run.stderr.contains("changed while it was being created"),
        "{}",
        run.stderr
    );
    assert!(!marker.exists(), "the command ran");
    let branch = env.git(&env.repo, &["rev-parse", "--verify", "-q", "bullpen/x"]);
    assert!(!branch.status.success(), "the branch was kept");
    let wts = env.git_out(&["worktree", "list", "--porcelain"]);
    assert!(!wts.contains("/x\n"), "the worktree was kept: {wts}");
}

/// Where a spawn is SIGKILLed: an exact step, reached and held before the kill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Inside the `n`th write of the record (1 provisioning, 2 the claim, 3
    /// the exit): gix blocked appending to the ref's reflog, a FIFO,
    /// with the ref's `.lock` taken.
    Record(usize),
    /// Before `git worktree add` runs (it then never runs).
    BeforeGit,
    /// Inside `git worktree add`, in its post-checkout hook: git finishes alone.
    Checkout,
    /// The same, the whole process group killed: git dies part-way too.
    CheckoutGroup,
    /// After `git worktree add` finished, before spawn heard of it.
    AfterGit,
    /// While the command runs (it goes on alone).
    Command,
}

impl Step {
    fn name(self) -> String {
        match self {
            Step::Record(n) => format!("record{n}"),
            Step::BeforeGit => "before-git".into(),
            Step::Checkout => "checkout".into(),
            Step::CheckoutGroup => "checkout-group".into(),
            Step::AfterGit => "after-git".into(),
            Step::Command => "command".into(),
        }
    }

    /// The record's state right after the kill (`None`: no record).
    fn left(self) -> Option<&'static str> {
        match self {
            Step::Record(1) => None,
            Step::Record(2)
            | Step::BeforeGit
            | Step::Checkout
            | Step::CheckoutGroup
            | Step::AfterGit => Some("provisioning"),
            _ => Some("running"),
        }
    }

    /// Whether something of the run (git, the command) goes on after the kill
    /// and says so with `done` once released.
    fn goes_on(self) -> bool {
        matches!(self, Step::Checkout | Step::AfterGit | Step::Command)
    }
}

/// A `git` first on PATH that, for a spawn run with `KILL_AT`/`KILL_GATE`, holds
/// `git worktree add` before or after it runs: it says `arrived`, waits for a
/// line on the `gate` FIFO, and says `done` when git has finished.
fn hold_git(env: &mut Env) {
    let real = crate::support::which_git();
    let dir = env.root().join("hold-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let hold = r#": > "$KILL_GATE/arrived"; read go < "$KILL_GATE/gate""#;
    let script = format!(
        "#!/bin/sh\n\
         case \" $* \" in *\" worktree add \"*) ;; *) exec {real} \"$@\";; esac\n\
         [ -n \"$KILL_GATE\" ] || exec {real} \"$@\"\n\
         if [ \"$KILL_AT\" = before-git ]; then {hold}; exit 1; fi\n\
         {real} \"$@\"; rc=$?\n\
         if [ \"$KILL_AT\" = after-git ]; then {hold}; fi\n\
         : > \"$KILL_GATE/done\"\n\
         exit $rc\n"
    );
    std::fs::write(dir.join("git"), script).unwrap();
    make_executable(&dir.join("git"));
    env.path_prefix.insert(0, dir);
    post_checkout(
        env,
        &format!("case \"$KILL_AT\" in checkout|checkout-group) {hold};; esac"),
    );
}

fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Whether a thread of `pid` sleeps opening a FIFO no one reads
/// (`wait_for_partner`, the kernel's wait in `fifo_open`).
fn blocked_opening_a_fifo(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("wchan"))
            .is_ok_and(|w| w.trim() == "wait_for_partner")
    })
}

/// Reads the first `n - 1` reflog entries of a record whose reflog is a FIFO
/// (each append opens, writes and closes it) and leaves the `n`th writer
/// waiting to open it. Ended however the test ends.
struct ReflogGate {
    fifo: std::path::PathBuf,
    entries: std::sync::mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl ReflogGate {
    fn new(env: &Env, id: &str, n: usize) -> ReflogGate {
        let logs = env.repo.join(".git/logs/refs/bullpen/sessions");
        std::fs::create_dir_all(&logs).unwrap();
        let fifo = logs.join(id);
        mkfifo(&fifo);
        let (tx, entries) = std::sync::mpsc::channel();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Read;
                for _ in 1..n {
                    let mut entry = String::new();
                    if let Ok(mut f) = std::fs::File::open(&fifo) {
                        let _ = f.read_to_string(&mut entry);
                    }
                    if tx.send(entry).is_err() {
                        return;
                    }
                }
            })
        };
        ReflogGate {
            fifo,
            entries,
            reader: Some(reader),
        }
    }
}

impl Drop for ReflogGate {
    fn drop(&mut self) {
        use std::os::unix::fs::OpenOptionsExt;
        // A reader still waiting for a writer (the spawn ended early) is
        // released by a writer that opens without blocking.
        if let Some(reader) = self.reader.take() {
            while !reader.is_finished() {
                let _ = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&self.fifo);
                std::thread::yield_now();
            }
            let _ = reader.join();
        }
        let _ = std::fs::remove_file(&self.fifo);
    }
}

/// A spawn run in a process group of its own: the group is SIGKILLed however
/// the test ends, unless disarmed once all of it has ended.
struct Group(Option<i32>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            // SAFETY: kill(2) on the process group this test created.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
}

/// Open the FIFO `gate` and write a line: lets a held wrapper, hook or command go on.
fn release(gate: &std::path::Path) {
    std::fs::write(gate, "go\n").unwrap();
}

/// Spawn `id` and SIGKILL it at `step`, held there first; return once nothing
/// of the run is left running.
fn kill_at(env: &Env, id: &str, step: Step) {
    use std::os::unix::process::CommandExt;
    let gates = env.root().join(format!("gate-{id}"));
    std::fs::create_dir_all(&gates).unwrap();
    let gate = gates.join("gate");
    mkfifo(&gate);
    let reflog = match step {
        Step::Record(n) => Some(ReflogGate::new(env, id, n)),
        _ => None,
    };
    let command = r#"[ "$KILL_AT" != command ] || { : > "$KILL_GATE/arrived"; read go < "$KILL_GATE/gate"; : > "$KILL_GATE/done"; }"#;
    let mut child = env
        .cmd(BIN, &env.repo)
        .args(["spawn", id, "--", "sh", "-c", command])
        .env("KILL_AT", step.name())
        .env("KILL_GATE", &gates)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut group = Group(Some(child.id() as i32));
    match &reflog {
        Some(r) => {
            let Step::Record(n) = step else {
                unreachable!()
            };
            for _ in 1..n {
                r.entries
                    .recv_timeout(Duration::from_secs(60))
                    .unwrap_or_else(|_| panic!("{id}: fewer than {n} record writes"));
            }
            wait_for("the record write to block", || {
                blocked_opening_a_fifo(child.id())
            });
        }
        None => wait_for("the step", || gates.join("arrived").exists()),
    }
    match step {
        // SAFETY: kill(2) on the process group this test created.
        Step::CheckoutGroup => unsafe {
            libc::kill(-(child.id() as i32), libc::SIGKILL);
        },
        _ => child.kill().unwrap(),
    }
    child.wait().unwrap();
    drop(reflog);
    match step {
        Step::Record(_) | Step::CheckoutGroup => {}
        _ => release(&gate),
    }
    if step.goes_on() {
        wait_for("the rest of the run", || gates.join("done").exists());
    }
    group.0 = None;
    std::fs::remove_dir_all(&gates).unwrap();
}

/// SIGKILL spawn at each of its steps; after each, gc converges: no session is
/// left `provisioning`, and nothing of a killed spawn (branch, worktree, git's
/// entry) outlives the gc that collected it.
#[test]
fn a_killed_spawn_is_finished_by_the_next_gc_whenever_it_died() {
    let mut env = Env::new();
    hold_git(&mut env);
    let steps = [
        Step::Record(1),
        Step::BeforeGit,
        Step::Checkout,
        Step::CheckoutGroup,
        Step::AfterGit,
        Step::Record(2),
        Step::Command,
        Step::Record(3),
    ];
    let ids: Vec<String> = steps.iter().map(|s| format!("k-{}", s.name())).collect();
    for (step, id) in steps.iter().zip(&ids) {
        kill_at(&env, id, *step);
        assert_eq!(
            record_state(&env, id).as_deref(),
            step.left(),
            "{id}: the record right after the kill"
        );
    }
    // A spawn killed inside a ref update leaves that ref's `.lock`, as git would:
    // gc names it with git's advice, and the user (here: the test, nothing else
    // runs in this repository) removes it as the advice says.
    let mut reports = String::new();
    for _ in 0..3 {
        let gc = env.bullpen(&["gc"]);
        reports.push_str(&gc.stdout);
        reports.push_str(&gc.stderr);
        let locks: Vec<&str> = gc
            .stdout
            .split("cannot lock ")
            .skip(1)
            .filter_map(|rest| rest.split(": it exists").next())
            .collect();
        if locks.is_empty() {
            break;
        }
        assert!(
            gc.stderr.contains("remove the file manually to continue"),
            "{}",
            gc.stderr
        );
        for lock in locks {
            let _ = std::fs::remove_file(lock);
        }
    }
    let wts = env.git_out(&["worktree", "list", "--porcelain"]);
    for id in &ids {
        let state = record_state(&env, id);
        // Killed later than provisioning, a session is ready, running (lost) or
        // exited: a session like any other. Never left provisioning.
        assert_ne!(state.as_deref(), Some("provisioning"), "{id}: {reports}");
        if matches!(state.as_deref(), None | Some("collected")) {
            let branch = env.git(
                &env.repo,
                &["rev-parse", "--verify", "-q", &format!("bullpen/{id}")],
            );
            assert!(!branch.status.success(), "{id}: its branch is left");
            assert!(
                !wts.contains(&format!("/{id}\n")),
                "{id}: its worktree is left: {wts}"
            );
        }
    }
}
