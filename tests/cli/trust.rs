//! The trust model, tried as an attacker would: records forged with plumbing
//! (`hash-object`, `mktree`, `commit-tree`, `update-ref`) or fetched from another
//! clone never make bullpen signal a process, run a command or delete a
//! directory that it did not start or create on this machine — and each is
//! reported with why it is not trusted.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{process_ref, Env, Run};

/// A process that must survive: `setsid sleep`, the leader of its own session
/// and process group, like any unrelated job of the user's.
pub(crate) struct Victim(Child);

impl Victim {
    pub(crate) fn start() -> Victim {
        let child = Command::new("setsid")
            .args(["sleep", "300"])
            .stdin(Stdio::null())
            .spawn()
            .expect("setsid sleep");
        let v = Victim(child);
        // setsid forks when it is a group leader; wait until the sleep is the
        // leader of its own session so that its ids are what a forger would use.
        let deadline = Instant::now() + Duration::from_secs(10);
        while v
            .stat()
            .is_none_or(|(pgrp, sid, _)| pgrp != v.pid() || sid != v.pid())
        {
            assert!(
                Instant::now() < deadline,
                "setsid sleep never led its session"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        v
    }

    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    /// (pgrp, session, state) from /proc.
    fn stat(&self) -> Option<(u32, u32, char)> {
        let text = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).ok()?;
        let f: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
        Some((f[2].parse().ok()?, f[3].parse().ok()?, f[0].chars().next()?))
    }

    #[track_caller]
    pub(crate) fn assert_alive(&self, what: &str) {
        let alive = self.stat().is_some_and(|(_, _, s)| !matches!(s, 'Z' | 'X'));
        assert!(alive, "{what}: the victim {} was signalled", self.pid());
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A complete session.json for `id`, as bullpen would write it, to forge from.
fn template(env: &Env, id: &str, worktree: &Path) -> Value {
    let base = env.git_out(&["rev-parse", "HEAD"]);
    json!({
        "schema": 1,
        "id": id,
        "branch": format!("bullpen/{id}"),
        "worktree": worktree,
        "base": base,
        "command": ["sh", "-c", "touch pwned"],
        "state": "ready",
        "host": "elsewhere",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "run_start": null,
        "process": null,
        "exit": null,
        "log": null,
    })
}

/// Point `refs/bullpen/sessions/<id>` at a commit holding `record`, with plumbing.
fn forge(env: &Env, id: &str, record: &Value) {
    let file = env.root().join(format!("forged-{id}.json"));
    std::fs::write(&file, serde_json::to_vec_pretty(record).unwrap()).unwrap();
    let blob = env.git_out(&["hash-object", "-w", file.to_str().unwrap()]);
    let out = env
        .cmd("sh", &env.repo)
        .args([
            "-c",
            &format!("printf '100644 blob {blob}\\tsession.json\\n' | git mktree"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let tree = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let refname = format!("refs/bullpen/sessions/{id}");
    let mut args = vec!["commit-tree".to_owned(), tree, "-m".into(), "forged".into()];
    if let Ok(old) = env
        .git(&env.repo, &["rev-parse", "--verify", "-q", &refname])
        .ok_or_none()
    {
        args.extend(["-p".to_owned(), old]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let commit = env.git_out(&args);
    env.git_out(&["update-ref", &refname, &commit]);
}

trait OkOrNone {
    fn ok_or_none(self) -> Result<String, ()>;
}

impl OkOrNone for Run {
    fn ok_or_none(self) -> Result<String, ()> {
        if self.status.success() {
            Ok(self.stdout.trim().to_owned())
        } else {
            Err(())
        }
    }
}

/// What a forged record must not reach.
struct Targets {
    victim: Victim,
    /// A directory of the user's, outside bullpen's worktree root.
    precious: PathBuf,
}

impl Targets {
    fn new(env: &Env) -> Targets {
        let precious = env.root().join("precious");
        std::fs::create_dir_all(precious.join("work")).unwrap();
        std::fs::write(precious.join("work/file"), "mine\n").unwrap();
        Targets {
            victim: Victim::start(),
            precious,
        }
    }

    #[track_caller]
    fn assert_untouched(&self, env: &Env, what: &str) {
        self.victim.assert_alive(what);
        assert!(
            self.precious.join("work/file").exists(),
            "{what}: a directory of the user's was deleted"
        );
        assert!(
            !env.repo.join("pwned").exists()
                && !std::fs::read_dir(env.bullpen_home.join("worktrees"))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|repo| {
                        std::fs::read_dir(repo.path())
                            .into_iter()
                            .flatten()
                            .flatten()
                            .any(|s| s.path().join("pwned").exists())
                    }),
            "{what}: the forged command ran"
        );
    }
}

/// The worktree root bullpen uses for `env.repo` (from a real session).
fn root_of(env: &Env) -> PathBuf {
    env.bullpen(&["spawn", "probe", "--", "true"]).ok();
    env.worktree_of("probe").parent().unwrap().to_path_buf()
}

/// Whether unshare can give a test a private pid namespace here.
fn pid_namespaces_work() -> bool {
    let works = Command::new("unshare")
        .args(["-fp", "--mount-proc", "--kill-child", "setsid", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        works || std::env::var_os("CI").is_none() || !root,
        "unshare -fp --mount-proc fails as root in CI"
    );
    works
}

const IN_NAMESPACE: &str = "BULLPEN_TEST_IN_PID_NAMESPACE";

/// Run the test `name` of this binary again as pid 1 of a private pid namespace,
/// in a session of its own (so that a breach that signals group -1, 1 or 0 ends
/// only what the test started there: a process group reaches across pid
/// namespaces, so the inherited one must be left). `false`: already inside, run
/// the test body.
pub(crate) fn contained(name: &str) -> bool {
    if std::env::var_os(IN_NAMESPACE).is_some() {
        return false;
    }
    if !pid_namespaces_work() {
        eprintln!("skipped: {name} needs unshare -fp --mount-proc");
        return true;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("unshare")
        .args(["-fp", "--mount-proc", "--kill-child", "setsid"])
        .arg(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(IN_NAMESPACE, "1")
        .output()
        .unwrap();
    let shown = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "in a private pid namespace:\n{shown}");
    assert!(shown.contains("1 passed"), "{shown}");
    true
}

/// Every kind of forged record, each tried with `stop`, a plain `resume` and
/// `gc`: nothing is signalled, run or deleted, and each act is refused or kept
/// with a reason that says why the record is not trusted. Run as pid 1 of a
/// private pid namespace: a record naming group 1 must not reach the host even
/// if the guard were gone.
#[test]
fn forged_records_never_signal_run_or_delete() {
    if contained("trust::forged_records_never_signal_run_or_delete") {
        return;
    }
    let env = Env::new();
    env.add_bare_remote();
    let root = root_of(&env);
    let t = Targets::new(&env);
    let victim = process_ref(t.victim.pid());
    let me = process_ref(std::process::id());
    let boot = victim["boot_id"].clone();
    let own_pgrp = {
        // SAFETY: getpgrp has no preconditions.
        unsafe { libc::getpgrp() as u32 }
    };
    let running = |cmd: &Value, sup: &Value| {
        json!({
            "pid": cmd["pid"], "start_time": cmd["start_time"], "boot_id": cmd["boot_id"],
            "background": true, "supervisor_pid": sup["pid"],
            "supervisor_start_time": sup["start_time"], "started_at": "2026-01-01T00:00:00Z",
        })
    };
    let pid = |p: u64, start: u64| json!({"pid": p, "start_time": start, "boot_id": boot});

    // (name, edit of the template, what must be said)
    type Edit<'a> = Box<dyn Fn(&mut Value) + 'a>;
    let signal_cases: Vec<(&str, Edit)> = vec![
        (
            "pid 1 as command and supervisor, start time 0",
            Box::new(|r| {
                r["process"] = running(&pid(1, 0), &pid(1, 0));
            }),
        ),
        (
            "pid 0",
            Box::new(|r| r["process"] = running(&pid(0, 0), &pid(0, 0))),
        ),
        (
            "an unrelated group leader, start time 0",
            Box::new(|r| {
                r["process"] = running(
                    &pid(t.victim.pid().into(), 0),
                    &pid(t.victim.pid().into(), 0),
                );
            }),
        ),
        (
            "an unrelated group leader with its exact identity",
            Box::new(|r| {
                r["process"] = running(&victim, &victim);
            }),
        ),
        (
            "the victim as command, this test as supervisor",
            Box::new(|r| {
                r["process"] = running(&victim, &me);
            }),
        ),
        (
            "bullpen's own process group",
            Box::new(|r| {
                r["process"] = running(&pid(own_pgrp.into(), 0), &me);
            }),
        ),
        (
            "a pid beyond i32",
            Box::new(|r| {
                r["process"] = running(&pid(u64::from(u32::MAX), 0), &pid(u64::from(u32::MAX), 0));
            }),
        ),
        (
            "a foreground run of the victim",
            Box::new(|r| {
                let mut p = running(&victim, &victim);
                p["background"] = false.into();
                r["process"] = p;
            }),
        ),
        (
            "another boot",
            Box::new(|r| {
                let mut p = running(&victim, &victim);
                p["boot_id"] = "00000000-0000-0000-0000-000000000000".into();
                r["process"] = p;
            }),
        ),
    ];
    let mut n = 0;
    for (name, edit) in &signal_cases {
        n += 1;
        let id = format!("sig{n}");
        let mut r = template(&env, &id, &root.join(&id));
        r["state"] = "running".into();
        edit(&mut r);
        forge(&env, &id, &r);
        let run = env.bullpen(&["stop", "--timeout", "0.2", &id]);
        t.assert_untouched(&env, name);
        if run.status.success() {
            // Nothing alive to prove (pid 0, a pid beyond i32, another boot): stop
            // may record the end, but it signals nothing.
            for sig in ["SIGHUP", "SIGTERM", "SIGKILL"] {
                assert!(!run.stderr.contains(sig), "{name}: {}", run.stderr);
            }
        } else {
            assert_eq!(run.code(), 3, "{name}: {}", run.stderr);
            assert!(
                run.stderr
                    .contains("nothing on this machine proves it is ours")
                    || run.stderr.contains("runs in the foreground")
                    || run.stderr.contains("never signals"),
                "{name}: {}",
                run.stderr
            );
        }
        let gc = env.bullpen(&["gc"]);
        t.assert_untouched(&env, &format!("gc after {name}"));
        assert!(gc.code() == 0 || gc.code() == 1, "{name}: {}", gc.stderr);
    }

    // Records that claim paths or commands: resume must not run the command, gc
    // must not delete what the record names.
    let path_cases: Vec<(&str, Edit, &str)> = vec![
        (
            "a command this machine never recorded",
            Box::new(|_| {}),
            "was not recorded on this machine",
        ),
        (
            "the user's own directory outside the root",
            Box::new(|r| {
                r["worktree"] = json!(t.precious);
            }),
            "not recorded on this machine",
        ),
        (
            "the repository itself",
            Box::new(|r| r["worktree"] = json!(env.repo)),
            "not recorded",
        ),
        (
            "the home directory",
            Box::new(|r| r["worktree"] = json!(env.home)),
            "not recorded",
        ),
        (
            "the worktree root itself",
            Box::new(|r| r["worktree"] = json!(root)),
            "not recorded",
        ),
        (
            "a path with ..",
            Box::new(|r| {
                r["worktree"] = json!(format!("{}/x/../../precious", root.display()));
            }),
            "not recorded",
        ),
        (
            "another session's worktree",
            Box::new(|r| {
                r["worktree"] = json!(root.join("probe"));
            }),
            "not recorded",
        ),
        (
            "a branch that is not the session's",
            Box::new(|r| r["branch"] = "main".into()),
            "not recorded",
        ),
        (
            "an empty command",
            Box::new(|r| r["command"] = json!([])),
            "",
        ),
    ];
    for (name, edit, said) in &path_cases {
        n += 1;
        let id = format!("path{n}");
        let mut r = template(&env, &id, &root.join(&id));
        edit(&mut r);
        // A branch for it, so that resume gets as far as it can.
        env.git_out(&["branch", &format!("bullpen/{id}")]);
        forge(&env, &id, &r);
        let run = env.bullpen(&["resume", &id]);
        t.assert_untouched(&env, name);
        assert!(!run.status.success(), "{name}: resume ran: {}", run.stderr);
        assert!(run.stderr.contains(said), "{name}: {}", run.stderr);
        let gc = env.bullpen(&["gc", "--json"]);
        t.assert_untouched(&env, &format!("gc after {name}"));
        assert!(
            env.git(
                &env.repo,
                &["rev-parse", "--verify", "-q", &format!("bullpen/{id}")]
            )
            .status
            .success(),
            "{name}: gc deleted the branch: {}",
            gc.stdout
        );
    }

    // A directory in the root that bullpen did not create, registered by hand on
    // the session branch, clean and published: gc does not delete it.
    n += 1;
    let id = format!("hand{n}");
    let by_hand = root.join(&id);
    env.git_out(&["branch", &format!("bullpen/{id}")]);
    env.git_out(&["push", "-q", "origin", &format!("bullpen/{id}")]);
    env.git_out(&[
        "worktree",
        "add",
        "-q",
        by_hand.to_str().unwrap(),
        &format!("bullpen/{id}"),
    ]);
    forge(&env, &id, &template(&env, &id, &by_hand));
    let gc = env.bullpen(&["gc", "--json"]).ok();
    assert!(
        by_hand.join("README").exists(),
        "gc deleted a worktree it did not create"
    );
    assert!(
        gc.stdout
            .contains("nothing on this machine shows bullpen created its worktree"),
        "{}",
        gc.stdout
    );

    // A plain directory where a session would be, with a forged teardown note:
    // "finishing" it would delete the user's files.
    n += 1;
    let id = format!("marker{n}");
    let dir = root.join(&id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine\n").unwrap();
    env.git_out(&["branch", &format!("bullpen/{id}")]);
    env.git_out(&["push", "-q", "origin", &format!("bullpen/{id}")]);
    let tip = env.git_out(&["rev-parse", &format!("bullpen/{id}")]);
    let mut r = template(&env, &id, &dir);
    r["gc_teardown"] = json!({"admin_id": id, "tip": tip, "started_at": "2026-01-01T00:00:00Z"});
    forge(&env, &id, &r);
    env.bullpen(&["gc"]);
    assert!(
        dir.join("notes.txt").exists(),
        "a forged teardown note deleted files"
    );

    // An interrupted spawn, forged: provisioning, its spawner dead, its branch at
    // the base. The branch is not bullpen's to delete, nor a worktree at the path.
    n += 1;
    let id = format!("prov{n}");
    let dir = root.join(&id);
    env.git_out(&["branch", &format!("bullpen/{id}")]);
    env.git_out(&[
        "worktree",
        "add",
        "-q",
        dir.to_str().unwrap(),
        &format!("bullpen/{id}"),
    ]);
    let mut r = template(&env, &id, &dir);
    r["state"] = "provisioning".into();
    r["spawner"] = pid(999_999, 1);
    forge(&env, &id, &r);
    env.bullpen(&["gc"]);
    assert!(
        dir.join("README").exists(),
        "a forged provisioning record deleted a worktree"
    );
    assert!(env
        .git(
            &env.repo,
            &["rev-parse", "--verify", "-q", &format!("bullpen/{id}")]
        )
        .status
        .success());
    let resume = env.bullpen(&["resume", &id]).fails();
    assert_eq!(resume.code(), 125, "{}", resume.stderr);
    assert!(
        resume.stderr.contains("never finished"),
        "{}",
        resume.stderr
    );

    assert!(n >= 20, "only {n} kinds of forged record");
    t.assert_untouched(&env, "the end");
}

/// A record fetched from another clone (another machine's session of the same
/// id, with another command) replaces the local record: a plain resume does not
/// run it, and says which command this machine recorded.
#[test]
fn a_fetched_record_does_not_run_its_command() {
    let env = Env::new();
    let bare = env.add_bare_remote();
    env.git_out(&["push", "-q", "origin", "main"]);
    env.bullpen(&["spawn", "x", "--", "true"]).ok();
    let wt = env.worktree_of("x");
    // The other machine: a clone with its own BULLPEN_HOME, its own session x.
    let other = env.root().join("other");
    env.git(
        &env.root(),
        &[
            "clone",
            "-q",
            "-b",
            "main",
            bare.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    )
    .ok();
    let other_home = env.root().join("other-home");
    std::fs::create_dir_all(&other_home).unwrap();
    let out = env
        .cmd(crate::support::BIN, &other)
        .env("BULLPEN_HOME", &other_home)
        .args(["spawn", "x", "--", "sh", "-c", "touch pwned"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.git(
        &other,
        &["push", "-q", "origin", "+refs/bullpen/*:refs/bullpen/*"],
    )
    .ok();
    env.git_out(&["fetch", "-q", "origin", "+refs/bullpen/*:refs/bullpen/*"]);
    let run = env.bullpen(&["resume", "x"]).fails();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert!(!wt.join("pwned").exists(), "the fetched command ran");
    assert!(
        run.stderr.contains("not the one this machine recorded")
            && run
                .stderr
                .contains("git bullpen resume x -- sh -c 'touch pwned'")
            && run
                .stderr
                .contains("the command this machine recorded for it: git bullpen resume x -- true"),
        "{}",
        run.stderr
    );
}

/// A record naming pid 1, with its exact identity, inside a private pid
/// namespace (`unshare -fp --mount-proc`): were stop ever to signal it, the
/// breach would end only that namespace's init and its `sleep`, which the test
/// sees.
#[test]
fn pid_1_is_never_signalled_even_with_its_exact_identity() {
    let env = Env::new();
    if !pid_namespaces_work() {
        eprintln!("skipped: unshare -fp --mount-proc is not available");
        return;
    }
    let root = root_of(&env);
    let mut r = template(&env, "init", &root.join("init"));
    r["state"] = "running".into();
    r["process"] = json!("@PROCESS@");
    let record = serde_json::to_string_pretty(&r).unwrap().replace(
        "\"@PROCESS@\"",
        r#"{"pid": 1, "start_time": $start, "boot_id": "$boot", "background": true,
            "supervisor_pid": 1, "supervisor_start_time": $start, "started_at": "x"}"#,
    );
    // Runs as pid 1 of the namespace: forge the record with its own identity,
    // then ask bullpen to stop it.
    let script = format!(
        r#"sleep 300 & S=$!
start=$(cut -d' ' -f22 /proc/1/stat)
boot=$(cat /proc/sys/kernel/random/boot_id)
cat > forged.json <<END
{record}
END
b=$(git hash-object -w forged.json)
t=$(printf '100644 blob %s\tsession.json\n' "$b" | git mktree)
c=$(git commit-tree "$t" -m forged)
git update-ref refs/bullpen/sessions/init "$c"
rm forged.json
{bin} stop --timeout 0.2 init; echo "stop: $?"
kill -0 $S && echo "sleep alive"
echo "init alive"
kill $S
"#,
        bin = crate::support::BIN,
    );
    let out: Run = env
        .cmd("unshare", &env.repo)
        .args([
            "-fp",
            "--mount-proc",
            "--kill-child",
            "setsid",
            "sh",
            "-c",
            &script,
        ])
        .output()
        .unwrap()
        .into();
    let shown = format!("{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("init alive"), "{shown}");
    assert!(out.stdout.contains("sleep alive"), "{shown}");
    assert!(out.stdout.contains("stop: 3"), "{shown}");
    assert!(
        out.stderr
            .contains("nothing on this machine proves it is ours"),
        "{shown}"
    );
}

/// git's entry for a vanished worktree at a session's path is removed by resume
/// only when bullpen created that worktree here: a forged record cannot make it
/// delete someone's entry. The hint works when followed.
#[test]
fn resume_removes_a_stale_entry_only_for_a_worktree_created_here() {
    let env = Env::new();
    let root = root_of(&env);
    let dir = root.join("y");
    env.git_out(&["branch", "bullpen/y"]);
    env.git_out(&["worktree", "add", "-q", dir.to_str().unwrap(), "bullpen/y"]);
    std::fs::remove_dir_all(&dir).unwrap();
    forge(&env, "y", &template(&env, "y", &dir));
    let marker = env.root().join("ran");
    let run = env
        .bullpen(&["resume", "y", "--", "touch", marker.to_str().unwrap()])
        .fails();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert!(!marker.exists());
    let listed = env.git_out(&["worktree", "list", "--porcelain"]);
    assert!(
        listed.contains(&format!("worktree {}", dir.display())),
        "{listed}"
    );
    let hint = format!("`git worktree remove {}`", dir.display());
    assert!(run.stderr.contains(&hint), "{}", run.stderr);
    env.git_out(&["worktree", "remove", dir.to_str().unwrap()]);
    env.bullpen(&["resume", "y", "--", "touch", marker.to_str().unwrap()])
        .ok();
    assert!(marker.exists());
}
