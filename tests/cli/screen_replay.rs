//! The screen after a burst (issue 24): the supervisor feeds its terminal model
//! in batches and leaves out what a burst scrolls off unseen
//! (`run::keep::Keep::catch_up`); whatever it left out, the screen that
//! `attach` draws, the rows a taller terminal gets back from the scrollback and
//! what `peek --json` reads are exact. Gated on what the log holds and on
//! FIFOs, never on time.

use serde_json::Value;

use crate::bg::{wait_logged, Bg};
use crate::pty::Term;
use crate::support::{Env, BIN};

const ATTACHED: &str = "detach with Ctrl-\\";
const DETACHED: &str = "detached from session";

fn attach(env: &Env, id: &str, rows: u16, cols: u16) -> Term {
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", id]);
    let mut t = Term::spawn(cmd, rows, cols);
    t.expect(ATTACHED);
    t
}

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

fn rows(p: &vt100::Parser) -> Vec<String> {
    let (_, cols) = p.screen().size();
    p.screen()
        .rows(0, cols.get())
        .map(|r| r.trim_end().to_owned())
        .collect()
}

fn peek_json(env: &Env, id: &str) -> Value {
    serde_json::from_str(&env.bullpen(&["peek", "--json", id]).ok().stdout).unwrap()
}

fn numbers(range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|i| i.to_string()).collect()
}

#[test]
fn a_screen_written_while_detached_past_a_batch_is_exact_in_peek_and_on_attach() {
    let env = Bg::new();
    // ~690 KB with the terminal's CRs: more than one batch of the model's.
    let script = "seq 1 100000; printf '\\033[1;31mred\\033[m end'; read x";
    env.spawn_bg("a", &["sh", "-c", script]);
    wait_logged(&env, "a", "end");

    // At the run's size (24 x 80): the last 23 numbers, then the last line.
    let json = peek_json(&env, "a");
    let mut want = numbers(99_978..=100_000);
    want.push("red end".into());
    assert_eq!(json["lines"], serde_json::json!(want), "{json}");
    assert_eq!(json["cursor"]["row"], 23);
    assert_eq!(json["cursor"]["col"], 7);

    // Taller: the 16 rows above come back from the scrollback.
    let mut t = attach(&env, "a", 40, 80);
    t.expect("end");
    let shown = outer(&t, 40, 80);
    let mut want = numbers(99_962..=100_000);
    want.push("red end".into());
    assert_eq!(rows(&shown), want);
    let red = shown.screen().cell(39, 0).unwrap();
    assert!(red.bold() && red.fgcolor() == vt100::Color::Idx(1));
    assert_eq!(shown.screen().cursor_position(), (39, 7));
    detach(&mut t);
    assert_eq!(peek_json(&env, "a")["lines"], serde_json::json!(want));
    env.bullpen(&["stop", "a"]).ok();
}

#[test]
fn a_full_screen_program_that_drew_then_wrote_100000_lines_is_exact_on_reattach() {
    let env = Bg::new();
    let go = env.root().join("go");
    let made = std::process::Command::new("mkfifo")
        .arg(&go)
        .status()
        .unwrap();
    assert!(made.success());
    // The alternate screen, a status line and a corner below a scroll region
    // at the top; then, on the FIFO's word, 100,000 lines into the region.
    let script = format!(
        "printf '\\033[?1049h\\033[2J\\033[22;1Hstatus: \\033[7mreverse\\033[m\
         \\033[24;70Hcorner\\033[1;20r\\033[20;1H'; echo drawn; \
         exec 3<>'{}'; read x <&3; seq 1 100000; printf DONE; read x",
        go.display()
    );
    env.spawn_bg("a", &["sh", "-c", &script]);
    wait_logged(&env, "a", "drawn");
    let mut t = attach(&env, "a", 24, 80);
    t.expect("corner");
    detach(&mut t);

    std::fs::write(&go, "go\n").unwrap();
    wait_logged(&env, "a", "DONE");
    let mut want = numbers(99_982..=100_000);
    want.push("DONE".into());
    want.push(String::new());
    want.push("status: reverse".into());
    want.push(String::new());
    want.push(format!("{}corner", " ".repeat(69)));
    let json = peek_json(&env, "a");
    assert_eq!(json["lines"], serde_json::json!(want), "{json}");
    assert_eq!(json["alternate_screen"], true);

    let mut t = attach(&env, "a", 24, 80);
    t.expect("DONE");
    let shown = outer(&t, 24, 80);
    assert_eq!(rows(&shown), want);
    assert!(shown.screen().alternate_screen());
    assert!(shown.screen().cell(21, 8).unwrap().inverse());
    assert!(!shown.screen().cell(21, 0).unwrap().inverse());
    assert_eq!(shown.screen().cursor_position(), (19, 4));
    detach(&mut t);
    env.bullpen(&["stop", "a"]).ok();
}
