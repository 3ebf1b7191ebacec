//! `git bullpen attach`: a background run's terminal, driven from a real
//! pseudo-terminal (`pty::Term`) as a person would: typing, reading the
//! screen, resizing, detaching and coming back. Every test kills what it
//! started (the `Bg` guard).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::bg::{kill, proc_stat, still_alive, timeless, wait_for, Bg};
use crate::pty::Term;
use crate::support::{assert_contains, Env, BIN};

/// `git bullpen <args>` on a new terminal of 24 x 80.
fn on_terminal(env: &Env, args: &[&str]) -> Term {
    on_terminal_sized(env, args, 24, 80)
}

fn on_terminal_sized(env: &Env, args: &[&str], rows: u16, cols: u16) -> Term {
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(args);
    Term::spawn(cmd, rows, cols)
}

/// `sh -c <script>` on a new terminal, with `$B` the bullpen binary.
fn shell_on_terminal(env: &Env, script: &str) -> Term {
    let mut cmd = env.cmd("sh", &env.repo);
    cmd.args(["-c", script]).env("B", BIN);
    Term::spawn(cmd, 24, 80)
}

/// The attached line, as attach prints it once the terminal is raw.
const ATTACHED: &str = "detach with Ctrl-\\";

fn supervisor_of(env: &Bg, id: &str) -> u32 {
    env.record(id)["process"]["supervisor_pid"]
        .as_u64()
        .expect("a supervisor") as u32
}

/// The local proof of the run the session's record names, `run-<pid>.json`.
fn run_proof_of(env: &Bg, id: &str) -> PathBuf {
    let pid = env.record(id)["process"]["pid"].as_u64().expect("a pid");
    env.repo
        .join(format!(".git/bullpen/local/{id}/run-{pid}.json"))
}

/// The socket this machine recorded for the session's run (in its local proof).
fn socket_of(env: &Bg, id: &str) -> PathBuf {
    let run = std::fs::read_to_string(run_proof_of(env, id)).expect("run-<pid>.json");
    let run: Value = serde_json::from_str(&run).unwrap();
    PathBuf::from(run["socket"].as_str().expect("a socket"))
}

fn wait_attached(env: &Bg, id: &str, attached: bool) -> Value {
    wait_for(&format!("{id} to be attached: {attached}"), || {
        env.try_row(id).filter(|r| r["attached"] == attached)
    })
}

#[test]
fn what_is_typed_reaches_the_run_and_attach_ends_with_its_status() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "read x; echo got-$x; exit 3"]);
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    t.send(b"hello\r");
    t.expect("got-hello");
    t.expect("session a exited 3 after ");
    assert_eq!(t.wait().code(), Some(3), "{}", t.shown());
    // The end was recorded before attach returned.
    let row = env.row("a");
    assert_eq!(
        (row["state"].as_str(), row["exit_code"].as_i64()),
        (Some("exited"), Some(3))
    );
    assert_eq!(row["attached"], Value::Null);
    // The log has it all, as text (the echo of what was typed included).
    // The log has it all, as text (the echo of what was typed included), and
    // the supervisor's end line after it.
    let logs = env.bullpen(&["logs", "a"]).ok().stdout;
    assert_eq!(
        timeless(&logs),
        "hello\ngot-hello\nbullpen: session a exited 3 after [T]\n"
    );
    let raw = env.bullpen(&["logs", "--raw", "a"]).ok().stdout;
    assert!(
        raw.starts_with("hello\r\ngot-hello\r\nbullpen: "),
        "{raw:?}"
    );
}

#[test]
fn detach_leaves_the_run_going_and_attach_comes_back_to_it() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "while read x; do echo got-$x; done"]);
    let row = env.row("a");
    assert_eq!(row["attached"], false);
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    t.send(b"one\r");
    t.expect("got-one");
    let row = wait_attached(&env, "a", true);
    assert!(row["last_output_at"].is_string(), "{row}");
    let table = env.bullpen(&["ls"]).ok().stdout;
    assert_state_cell(&table, "a", "(attached, ");
    t.send(b"\x1c");
    t.expect("detached from session a; it keeps running");
    assert_eq!(t.wait().code(), Some(0), "{}", t.shown());
    wait_attached(&env, "a", false);
    assert_eq!(env.state("a"), "running");
    // Detached, and waiting on its terminal for the next line.
    wait_for("a to need input", || {
        let table = env.bullpen(&["ls"]).ok().stdout;
        table.contains("(needs input ").then_some(())
    });

    // From another terminal, later: the same run, still there.
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    t.send(b"two\r");
    t.expect("got-two");
    t.send(b"\x1c");
    assert_eq!(t.wait().code(), Some(0));
    assert_eq!(env.state("a"), "running");
    let logs = env.bullpen(&["logs", "a"]).ok().stdout;
    assert_eq!(logs, "one\ngot-one\ntwo\ngot-two\n");
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn the_window_size_follows_the_attached_terminal() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "while read x; do stty size; done"]);
    let mut t = on_terminal_sized(&env, &["attach", "a"], 30, 100);
    t.expect(ATTACHED);
    // The size is passed on at attach...
    t.send(b"\r");
    t.expect("30 100");
    // ...and on every resize (SIGWINCH to attach). Asked again until it shows:
    // the resize and the next key race to the run.
    t.resize(40, 120);
    let deadline = std::time::Instant::now() + crate::pty::DEADLINE;
    while !t.shown().contains("40 120") {
        assert!(std::time::Instant::now() < deadline, "{}", t.shown());
        t.send(b"\r");
        std::thread::sleep(Duration::from_millis(50));
    }
    t.send(b"\x1c");
    assert_eq!(t.wait().code(), Some(0));
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn a_second_attach_is_refused_naming_the_first_unless_it_steals() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "while read x; do echo got-$x; done"]);
    let mut first = on_terminal(&env, &["attach", "a"]);
    first.expect(ATTACHED);
    wait_attached(&env, "a", true);
    let mut second = on_terminal(&env, &["attach", "a"]);
    let said = second.expect("one terminal at a time");
    assert_eq!(second.wait().code(), Some(125), "{}", second.shown());
    assert_contains(
        &said,
        &format!(
            "session a is attached to another terminal (pid {}",
            first.pid()
        ),
    );
    assert_contains(&second.shown(), "git bullpen attach --steal a");
    // The first one is still attached and working.
    first.send(b"still\r");
    first.expect("got-still");

    let mut third = on_terminal(&env, &["attach", "--steal", "a"]);
    third.expect(ATTACHED);
    first.expect(&format!("the terminal of pid {} took it over", third.pid()));
    assert_eq!(first.wait().code(), Some(0));
    third.send(b"mine\r");
    third.expect("got-mine");
    third.send(b"\x1c");
    assert_eq!(third.wait().code(), Some(0));
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn stop_while_attached_ends_attach_with_the_runs_status() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "while read x; do :; done"]);
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    wait_attached(&env, "a", true);
    let stop = env.bullpen(&["stop", "a"]).ok();
    assert_contains(&stop.stderr, "session a stopped by SIGHUP");
    t.expect("session a stopped by SIGHUP");
    assert_eq!(t.wait().code(), Some(128 + 1), "{}", t.shown());
    assert_eq!(env.state("a"), "stopped");
}

#[test]
fn gc_keeps_an_attached_session() {
    let env = Bg::new();
    env.add_bare_remote();
    env.spawn_bg("a", &["sh", "-c", "while read x; do :; done"]);
    env.git_out(&["push", "-q", "origin", "bullpen/a"]);
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    wait_attached(&env, "a", true);
    let gc = env.bullpen(&["gc"]).ok();
    assert_contains(&gc.stdout, "kept");
    assert!(env.worktree_of("a").is_dir());
    t.send(b"\x1c");
    assert_eq!(t.wait().code(), Some(0));
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn logs_follow_keeps_printing_while_a_terminal_is_attached() {
    let env = Bg::new();
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "while read x; do echo got-$x; [ $x = end ] && exit 0; done",
        ],
    );
    let follow = env
        .cmd(BIN, &env.repo)
        .args(["logs", "--follow", "a"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    t.send(b"one\r");
    t.expect("got-one");
    t.send(b"end\r");
    t.expect("session a exited 0 after ");
    assert_eq!(t.wait().code(), Some(0));
    let out = follow.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        timeless(&String::from_utf8_lossy(&out.stdout)),
        "one\ngot-one\nend\ngot-end\nbullpen: session a exited 0 after [T]\n"
    );
}

/// `ls`'s STATE cell of session `id` says it is running, and then `what`.
#[track_caller]
fn assert_state_cell(table: &str, id: &str, what: &str) {
    let line = table
        .lines()
        .find(|l| {
            l.trim_start_matches(['*', ' '])
                .starts_with(&format!("{id} "))
        })
        .unwrap_or_else(|| panic!("no row for {id}:\n{table}"));
    let state = line.trim_start_matches(['*', ' '])[id.len()..].trim_start();
    assert!(
        state.starts_with("running ") && state.contains(what),
        "{id}: {what:?} not in {line:?}"
    );
}

/// The next line the terminal shows, trimmed.
fn line(t: &mut Term) -> String {
    t.expect("\n").trim().to_owned()
}

/// A shell on a terminal that prints the terminal's settings (`stty -g`), runs
/// `attach <id>` in the background (its pid is printed), then prints its
/// status and the settings again.
fn attach_between_sttys(env: &Env, id: &str) -> (Term, String, u32) {
    let mut t = shell_on_terminal(
        env,
        &format!(
            "stty -g; exec 3<&0; \"$B\" attach {id} <&3 & p=$!; echo pid=$p; wait $p; \
             echo rc=$?; stty -g"
        ),
    );
    let before = line(&mut t);
    let pid = line(&mut t).trim_start_matches("pid=").parse().unwrap();
    t.expect(ATTACHED);
    (t, before, pid)
}

/// attach has ended with `rc`, and the settings are as they were, byte for byte.
#[track_caller]
fn assert_restored(t: &mut Term, before: &str, rc: i32) {
    t.expect("rc=");
    assert_eq!(line(t), rc.to_string(), "{}", t.shown());
    assert_eq!(
        line(t),
        before,
        "the terminal's settings changed:\n{}",
        t.shown()
    );
    assert_eq!(t.wait().code(), Some(0));
}

#[test]
fn the_terminal_is_restored_exactly_on_detach_on_the_runs_end_and_on_errors() {
    let env = Bg::new();
    env.spawn_bg(
        "a",
        &["sh", "-c", "while read x; do [ $x = end ] && exit 4; done"],
    );
    // Detach.
    let (mut t, before, _) = attach_between_sttys(&env, "a");
    t.send(b"\x1c");
    assert_restored(&mut t, &before, 0);
    // The run ends while attached.
    let (mut t, before, _) = attach_between_sttys(&env, "a");
    t.send(b"end\r");
    assert_restored(&mut t, &before, 4);
    // The supervisor is killed while attached: an error, the terminal restored.
    env.spawn_bg("b", &["sh", "-c", "while read x; do :; done"]);
    let (mut t, before, _) = attach_between_sttys(&env, "b");
    wait_attached(&env, "b", true);
    kill(supervisor_of(&env, "b"), libc::SIGKILL);
    assert_restored(&mut t, &before, 125);
    assert_contains(&t.shown(), "lost the connection to session b");
    // attach itself killed (SIGTERM) while attached: restored too.
    env.bullpen(&["stop", "b"]).ok();
    env.bullpen(&[
        "resume",
        "--bg",
        "b",
        "--",
        "sh",
        "-c",
        "while read x; do :; done",
    ])
    .ok();
    let (mut t, before, pid) = attach_between_sttys(&env, "b");
    wait_attached(&env, "b", true);
    kill(pid, libc::SIGTERM);
    assert_restored(&mut t, &before, 143);
    env.bullpen(&["stop", "b"]).ok();
}

#[test]
fn the_detach_key_is_the_one_git_config_names() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "while read x; do echo got-$x; done"]);
    // One git cannot be read as a key: said in git's words, nothing connected.
    env.git_out(&["config", "bullpen.detachKey", "alt-x"]);
    let run = env.bullpen(&["attach", "a"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "fatal: bad config value 'alt-x' for 'bullpen.detachKey'\n\
         hint: a detach key is ctrl-<key>, C-<key> or ^<key>, where <key> is a letter or one \
         of @ [ \\ ] ^ _ ?: e.g. ctrl-] or ^Q\n"
    );
    assert_eq!(env.row("a")["attached"], false);
    env.git_out(&["config", "bullpen.detachKey", "ctrl-]"]);
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect("detach with Ctrl-]");
    t.send(b"one\r");
    t.expect("got-one");
    t.send(b"\x1d");
    t.expect("detached from session a; it keeps running");
    assert_eq!(t.wait().code(), Some(0), "{}", t.shown());
    assert_eq!(env.state("a"), "running");
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn attach_to_a_session_that_is_not_running_says_so() {
    let env = Bg::new();
    env.bullpen(&["spawn", "fg", "--", "true"]).ok();
    let mut t = on_terminal(&env, &["attach", "fg"]);
    t.expect("session fg is not running (exited 0)");
    assert_eq!(t.wait().code(), Some(125));
    // Without a terminal on stdin: said, nothing connected.
    env.spawn_bg("a", &["sh", "-c", "while read x; do :; done"]);
    let run = env.bullpen(&["attach", "a"]).fails();
    assert_contains(&run.stderr, "attach needs a terminal");
    assert_eq!(env.row("a")["attached"], false);
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn a_socket_left_by_a_killed_supervisor_does_not_block_the_next_run() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "read x"]);
    let stale = socket_of(&env, "a");
    let stale_proof = run_proof_of(&env, "a");
    assert!(stale.exists());
    let sup = supervisor_of(&env, "a");
    let sup_stat = proc_stat(sup).unwrap();
    kill(sup, libc::SIGKILL);
    wait_for("the supervisor to die", || {
        (!still_alive(&sup_stat)).then_some(())
    });
    // Its terminal hung up with it: the command (a shell reading) is gone too.
    env.wait_state("a", "lost");
    assert!(stale.exists(), "SIGKILL leaves the socket behind");
    // A second session whose supervisor is killed too: stop removes its socket.
    env.spawn_bg("b", &["sh", "-c", "read x"]);
    let b_socket = socket_of(&env, "b");
    let b_proof = run_proof_of(&env, "b");
    let b_sup = proc_stat(supervisor_of(&env, "b")).unwrap();
    kill(b_sup.pid, libc::SIGKILL);
    env.wait_state("b", "lost");
    env.bullpen(&["stop", "b"]).ok();
    assert!(!b_socket.exists(), "stop of a lost run removes its socket");
    assert!(!b_proof.exists(), "and the run's local proof");
    env.bullpen(&[
        "resume",
        "--bg",
        "a",
        "--",
        "sh",
        "-c",
        "read x; echo got-$x",
    ])
    .ok();
    let fresh = socket_of(&env, "a");
    assert_ne!(fresh, stale);
    assert!(
        !stale.exists(),
        "the next run removed the socket left behind"
    );
    assert!(
        !stale_proof.exists(),
        "and the local proof of the run it replaced"
    );
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    t.send(b"again\r");
    t.expect("got-again");
    assert_eq!(t.wait().code(), Some(0));
    assert!(!fresh.exists(), "a run that ends removes its socket");
}

/// A stand-in listening where the session's socket was: attach must see that
/// the supervisor is not the one answering, and send it nothing.
#[test]
fn attach_never_talks_to_a_socket_its_supervisor_does_not_serve() {
    use std::io::Read;
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "while read x; do :; done"]);
    let path = socket_of(&env, "a");
    std::fs::remove_file(&path).unwrap();
    let impostor = std::os::unix::net::UnixListener::bind(&path).unwrap();
    impostor.set_nonblocking(true).unwrap();
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect("not by the session's supervisor");
    assert_eq!(t.wait().code(), Some(125), "{}", t.shown());
    assert_contains(
        &t.shown(),
        &format!("answered by pid {}", std::process::id()),
    );
    let (mut conn, _) = impostor.accept().expect("attach connected");
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = Vec::new();
    let _ = conn.read_to_end(&mut got);
    assert!(
        got.is_empty(),
        "attach sent {got:?} to a socket it does not trust"
    );
    env.bullpen(&["stop", "a"]).ok();
}

/// The supervisor accepts its own user only. The client runs as nobody
/// (`setpriv`, as root only), with the socket made reachable for this test:
/// perl connects, says hello, and prints what it is answered.
#[test]
fn a_connection_from_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: running a client as another user needs root");
        return;
    }
    for tool in ["setpriv", "perl"] {
        if crate::docs::which(tool).is_none() {
            return crate::ship::skip_or_fail(&format!("{tool} is not installed"));
        }
    }
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "read x; echo got-$x"]);
    let path = socket_of(&env, "a");
    // Reachable by others: search rights on the directories up to it, the
    // socket writable. (The supervisor made them all its own only.)
    let mut dir = path.parent().unwrap().to_path_buf();
    chmod_add(&dir, 0o711);
    while dir.starts_with(env.root()) && dir.pop() {
        chmod_add(&dir, 0o711);
    }
    chmod_add(&path, 0o666);
    let hello = bullpen::run::wire::frame(&bullpen::run::wire::Msg::Hello {
        steal: true,
        rows: 24,
        cols: 80,
    });
    let typed = bullpen::run::wire::frame(&bullpen::run::wire::Msg::Input(b"pwned\r".to_vec()));
    let script = r#"
use Socket;
# Refused, the connection is closed at once: writing then must not kill us.
$SIG{PIPE} = 'IGNORE';
socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
connect($s, pack_sockaddr_un($ARGV[0])) or die "connect: $!";
syswrite($s, pack("H*", $ARGV[1]));
syswrite($s, pack("H*", $ARGV[2]));
my $got = "";
# Refused: the supervisor closes at once. Let in, it would not: stop after 3 s.
local $SIG{ALRM} = sub { print "answer:", $got, "\n"; exit 0 };
alarm 3;
while (sysread($s, my $buf, 4096)) { $got .= $buf; }
print "answer:", $got, "\n";
"#;
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "perl",
            "-e",
            script,
        ])
        .arg(&path)
        .arg(hex(&hello))
        .arg(hex(&typed))
        .env_clear()
        .current_dir("/")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client did not run ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_contains(&said, "this session belongs to another user");
    assert!(
        !out.stdout.windows(5).any(|w| w == b"W\0\0\0\0"),
        "let in: {said:?}"
    );
    assert_eq!(env.state("a"), "running");
    assert_eq!(env.row("a")["attached"], false);
    // The user itself still gets in, and the run's one `read` gets the user's
    // line: nothing the impostor typed reached it (it would have come first).
    let mut t = on_terminal(&env, &["attach", "a"]);
    t.expect(ATTACHED);
    t.send(b"me\r");
    t.expect("got-me");
    assert_eq!(t.wait().code(), Some(0));
    let logs = env.bullpen(&["logs", "a"]).ok().stdout;
    assert!(!logs.contains("pwned"), "{logs}");
}

fn chmod_add(path: &Path, bits: u32) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).unwrap().permissions().mode();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | bits)).unwrap();
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
