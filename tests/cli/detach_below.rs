//! Detaching from a program that draws on the main screen below its cursor
//! (Claude Code's input box, with its hint line under it): bullpen's words
//! and the shell's prompt that follow go under the drawing, not over it.

use crate::bg::{wait_logged, Bg};
use crate::pty::Term;
use crate::support::BIN;

fn rows_after(t: &Term) -> Vec<String> {
    let mut p = vt100::Parser::new(24.try_into().unwrap(), 80.try_into().unwrap(), 0);
    p.process(t.shown().as_bytes());
    p.screen()
        .rows(0, 80.try_into().unwrap())
        .map(|r| r.trim_end().to_owned())
        .collect()
}

#[test]
fn detaching_from_a_main_screen_drawing_writes_below_it() {
    let env = Bg::new();
    // An input line with a hint under it, the cursor back on the input line.
    env.spawn_bg(
        "a",
        &[
            "sh",
            "-c",
            "printf '\\033[10;1Hconversation\\n> \\nhint-row\\033[1A\\r\\033[2C'; read x",
        ],
    );
    wait_logged(&env, "a", "hint-row");
    let mut cmd = env.cmd(BIN, &env.repo);
    cmd.args(["attach", "a"]);
    let mut t = Term::spawn(cmd, 24, 80);
    t.expect("hint-row");
    t.send(b"\x1c");
    t.expect("detached from session");
    assert_eq!(t.wait().code(), Some(0), "{}", t.shown());
    let rows = rows_after(&t);
    assert!(
        rows.iter().any(|r| r == "hint-row"),
        "the drawing was written over: {rows:#?}"
    );
    let hint = rows.iter().position(|r| r == "hint-row").unwrap();
    let words = rows
        .iter()
        .position(|r| r.starts_with("bullpen: detached from session"))
        .unwrap_or_else(|| panic!("no detach line: {rows:#?}"));
    assert!(words > hint, "{rows:#?}");
    env.bullpen(&["stop", "a"]).ok();
}
