//! The screen (issue 24): the supervisor keeps each background run's terminal,
//! `attach` draws it at once (what was written while nobody was attached
//! included), detaching turns off every mode the program turned on, and `peek`
//! reads the screen while another terminal is attached. Driven from real
//! pseudo-terminals (`pty::Term`); what the attached terminal shows is read by
//! feeding every byte attach wrote to it through a terminal emulator (vt100).

use serde_json::Value;

use crate::bg::{wait_for, wait_logged, Bg};
use crate::pty::Term;
use crate::support::{assert_contains, Env, BIN};

const ATTACHED: &str = "detach with Ctrl-\\";
const DETACHED: &str = "detached from session";

fn attach(env: &Env, id: &str, rows: u16, cols: u16) -> Term {
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", id]);
    let mut t = Term::spawn(cmd, rows, cols);
    t.expect(ATTACHED);
    t
}

/// Detach with the key, and see attach end.
#[track_caller]
fn detach(t: &mut Term) {
    t.send(b"\x1c");
    t.expect(DETACHED);
    assert_eq!(t.wait().code(), Some(0), "{}", t.shown());
}

/// The outer terminal: everything attach wrote, through an emulator.
fn outer(t: &Term, rows: u16, cols: u16) -> vt100::Parser {
    let mut p = vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 0);
    p.process(t.shown().as_bytes());
    p
}

/// The screen's rows, trailing spaces dropped.
fn rows(p: &vt100::Parser) -> Vec<String> {
    let (_, cols) = p.screen().size();
    p.screen()
        .rows(0, cols.get())
        .map(|r| r.trim_end().to_owned())
        .collect()
}

/// A full-screen program: it draws at fixed places, then waits.
const DRAW: &str =
    "printf '\\033[2J\\033[3;10Hhello\\033[10;20H\\033[1;31mworld\\033[m\\033[20;1Hready'; \
                    read x";

#[test]
fn attach_draws_the_screen_as_it_was_at_the_same_and_at_another_size() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", DRAW]);
    // Drawn while nobody was attached.
    wait_logged(&env, "a", "ready");
    let mut t = attach(&env, "a", 24, 80);
    t.expect("ready");
    let first = outer(&t, 24, 80);
    let shown = rows(&first);
    assert_eq!(shown[2], "         hello", "{shown:#?}");
    assert_eq!(shown[9], "                   world");
    assert_eq!(shown[19], "ready");
    assert_eq!(
        shown.iter().filter(|r| !r.is_empty()).count(),
        3,
        "{shown:#?}"
    );
    let cell = first.screen().cell(9, 19).unwrap();
    assert!(cell.bold() && cell.fgcolor() == vt100::Color::Idx(1));
    assert_eq!(first.screen().cursor_position(), (19, 5));
    detach(&mut t);

    // Again: the same screen, colours and cursor included.
    let mut t = attach(&env, "a", 24, 80);
    t.expect("ready");
    let again = outer(&t, 24, 80);
    assert_eq!(
        again.screen().contents_formatted(),
        first.screen().contents_formatted()
    );
    detach(&mut t);

    // Taller and wider: the same rows at the same places.
    let mut t = attach(&env, "a", 30, 100);
    t.expect("ready");
    let bigger = rows(&outer(&t, 30, 100));
    assert_eq!(bigger.len(), 30);
    assert_eq!(&bigger[..24], &shown[..]);
    detach(&mut t);
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn what_was_written_while_detached_is_on_the_screen_at_attach() {
    let env = Bg::new();
    let fifo = env.root().join("ticks");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let script = format!(
        "exec 3<>'{}'; i=0; while read l <&3; do i=$((i+1)); echo \"tick $i\"; done",
        fifo.display()
    );
    env.spawn_bg("a", &["sh", "-c", &script]);
    let tick = || std::fs::write(&fifo, "x\n").unwrap();
    tick();
    wait_logged(&env, "a", "tick 1");
    let mut t = attach(&env, "a", 24, 80);
    t.expect("tick 1");
    detach(&mut t);
    tick();
    tick();
    wait_logged(&env, "a", "tick 3");
    let mut t = attach(&env, "a", 24, 80);
    t.expect("tick 3");
    let shown = rows(&outer(&t, 24, 80));
    assert_eq!(
        &shown[..4],
        ["tick 1", "tick 2", "tick 3", ""],
        "{shown:#?}"
    );
    detach(&mut t);
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn a_taller_terminal_gets_back_what_scrolled_off_within_bullpen_scrollback() {
    let env = Bg::new();
    let script = "seq 1 30; printf ready; read x";
    env.spawn_bg("a", &["sh", "-c", script]);
    env.git_out(&["config", "bullpen.scrollback", "0"]);
    env.spawn_bg("none", &["sh", "-c", script]);
    for id in ["a", "none"] {
        wait_logged(&env, id, "ready");
    }
    // Drawn at 24 rows (the default size: no terminal started them); attached
    // at 40, the rows above come back from the scrollback.
    let mut t = attach(&env, "a", 40, 80);
    t.expect("ready");
    let shown = rows(&outer(&t, 40, 80));
    assert_eq!(shown[0], "1", "{shown:#?}");
    assert_eq!(shown[29], "30");
    assert_eq!(shown[30], "ready");
    detach(&mut t);
    // None kept: the screen's rows only.
    let mut t = attach(&env, "none", 40, 80);
    t.expect("ready");
    let shown = rows(&outer(&t, 40, 80));
    assert_eq!(shown[0], "", "{shown:#?}");
    assert!(!shown.contains(&"1".to_owned()), "{shown:#?}");
    assert!(shown.contains(&"30".to_owned()), "{shown:#?}");
    detach(&mut t);
    env.bullpen(&["stop", "a"]).ok();
    env.bullpen(&["stop", "none"]).ok();
}

#[test]
fn a_scrollback_git_cannot_read_as_a_number_is_refused_before_the_run_starts() {
    let env = Bg::new();
    env.git_out(&["config", "bullpen.scrollback", "ten"]);
    let run = env.bullpen(&["spawn", "--bg", "a", "--", "true"]);
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        "fatal: session a did not start; nothing of it is left: bad numeric config value 'ten' \
         for 'bullpen.scrollback': invalid unit\n\
         hint: bullpen.scrollback is a number of lines, e.g. 1000 or 10k\n",
    );
    assert!(
        env.try_row("a").is_none(),
        "{}",
        env.bullpen(&["ls"]).stdout
    );
    env.git_out(&["config", "bullpen.scrollback", "10k"]);
    env.spawn_bg("b", &["sh", "-c", "read x"]);
    env.bullpen(&["stop", "b"]).ok();
}

/// Every mode the issue names, turned on while nobody was attached.
const ALL_MODES: &str = "printf '\\033[?1049h\\033[?1h\\033=\\033[?1000h\\033[?1006h\\033[?2004h\
                         \\033[?1004h\\033[>1u\\033[>4;2m\\033[?25l\\033[31mready'; read x";

#[test]
fn detach_turns_off_every_mode_the_program_turned_on() {
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", ALL_MODES]);
    wait_logged(&env, "a", "ready");
    let mut t = attach(&env, "a", 24, 80);
    t.expect("ready");
    // The screen drawn at attach turned them on in this terminal.
    let during = outer(&t, 24, 80);
    let s = during.screen();
    assert!(s.alternate_screen() && s.application_cursor() && s.application_keypad());
    assert!(s.bracketed_paste() && s.hide_cursor());
    assert_eq!(
        s.mouse_protocol_mode(),
        vt100::MouseProtocolMode::PressRelease
    );
    let before = t.shown();
    for on in ["\x1b[?1004h", "\x1b[>1u", "\x1b[>4;2m"] {
        assert_contains(&before, on);
    }
    detach(&mut t);
    let after = outer(&t, 24, 80);
    let s = after.screen();
    assert!(!s.alternate_screen(), "still on the alternate screen");
    assert!(!s.application_cursor() && !s.application_keypad());
    assert!(!s.bracketed_paste() && !s.hide_cursor());
    assert_eq!(s.mouse_protocol_mode(), vt100::MouseProtocolMode::None);
    assert_eq!(
        s.mouse_protocol_encoding(),
        vt100::MouseProtocolEncoding::Default
    );
    assert_eq!(s.fgcolor(), vt100::Color::Default);
    // What vt100 does not follow: the exact bytes, after the screen was drawn.
    let shown = t.shown();
    let tail = &shown[before.len()..];
    for off in ["\x1b[?1004l", "\x1b[<1u", "\x1b[>4m"] {
        assert_contains(tail, off);
    }
    // The kitty flags popped before leaving the alternate screen, where they
    // were pushed.
    let pop = tail.find("\x1b[<1u").unwrap();
    assert!(pop < tail.find("\x1b[?1049l").unwrap(), "{tail:?}");
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn peek_shows_the_screen_while_another_terminal_is_attached() {
    let env = Bg::new();
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "printf 'word1\\033[3Cword2\\033[20Gx\\r\\nspin 1\\rspin 2\\n\\033[32mgreen\\033[m\\n'; \
             while read l; do echo \"got-$l\"; done",
        ],
    );
    wait_logged(&env, "a", "green");
    assert_eq!(
        env.bullpen(&["peek", "a"]).ok().stdout,
        "word1   word2      x\nspin 2\ngreen\n"
    );
    let mut t = attach(&env, "a", 24, 80);
    t.expect("green");
    wait_for("a to be attached", || {
        env.try_row("a").filter(|r| r["attached"] == true)
    });
    t.send(b"one\r");
    t.expect("got-one");
    wait_logged(&env, "a", "got-one");
    let peek = env.bullpen(&["peek", "a"]).ok();
    assert_eq!(
        peek.stdout,
        "word1   word2      x\nspin 2\ngreen\none\ngot-one\n"
    );
    let json: Value =
        serde_json::from_str(&env.bullpen(&["peek", "--json", "a"]).ok().stdout).unwrap();
    assert_eq!(json["rows"], 24);
    assert_eq!(json["cols"], 80);
    assert_eq!(json["cursor"]["row"], 5);
    assert_eq!(json["cursor"]["col"], 0);
    assert_eq!(json["cursor"]["visible"], true);
    assert_eq!(json["alternate_screen"], false);
    assert_eq!(json["lines"].as_array().unwrap().len(), 24);
    assert_eq!(json["lines"][4], "got-one");
    let colored = env.bullpen(&["--color", "peek", "a"]).ok().stdout;
    assert_contains(&colored, "\x1b[32mgreen");
    assert!(colored.ends_with("\x1b[m\n"), "{colored:?}");
    // The attached terminal is still attached, and still works.
    assert_eq!(env.row("a")["attached"], true);
    t.send(b"two\r");
    t.expect("got-two");
    // The attached terminal's new size is the model's too.
    t.resize(30, 100);
    wait_for("the screen to be 30 x 100", || {
        let json = env.bullpen(&["peek", "--json", "a"]).ok().stdout;
        let json: Value = serde_json::from_str(&json).unwrap();
        (json["rows"] == 30 && json["cols"] == 100).then_some(())
    });
    detach(&mut t);
    env.bullpen(&["stop", "a"]).ok();
    let done = env.bullpen(&["peek", "a"]);
    assert_eq!(done.code(), 128, "{}", done.stderr);
    assert_contains(&done.stderr, "session a is not running (stopped");
}

/// peek trusts the socket as attach does: one its supervisor does not serve
/// is sent nothing.
#[test]
fn peek_never_talks_to_a_socket_its_supervisor_does_not_serve() {
    use std::io::Read;
    let env = Bg::new();
    env.spawn_bg("a", &["sh", "-c", "read x"]);
    let pid = env.record("a")["process"]["pid"].as_u64().unwrap();
    let proof = env
        .repo
        .join(format!(".git/bullpen/local/a/run-{pid}.json"));
    let proof: Value = serde_json::from_str(&std::fs::read_to_string(proof).unwrap()).unwrap();
    let path = std::path::PathBuf::from(proof["socket"].as_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    let impostor = std::os::unix::net::UnixListener::bind(&path).unwrap();
    impostor.set_nonblocking(true).unwrap();
    let run = env.bullpen(&["peek", "a"]);
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        &format!(
            "not reading the screen of session a: its socket {} is answered by pid {}",
            path.display(),
            std::process::id()
        ),
    );
    let (mut conn, _) = impostor.accept().expect("peek connected");
    conn.set_nonblocking(true).unwrap();
    let mut got = Vec::new();
    let _ = conn.read_to_end(&mut got);
    assert!(
        got.is_empty(),
        "peek sent {got:?} to a socket it does not trust"
    );
    env.bullpen(&["stop", "a"]).ok();
}
