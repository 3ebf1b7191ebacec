//! git's conventions for a command: the version on the top level only.

use crate::support::Env;

#[test]
fn the_version_is_the_top_levels_alone() {
    let env = Env::new();
    let top = env.bullpen(&["-V"]).ok();
    assert!(top.stdout.starts_with("git-bullpen "), "{}", top.stdout);
    // A usage error: 129, and 125 where the command's own status passes through.
    for (sub, code) in [("ls", 129), ("gc", 129), ("spawn", 125)] {
        let run = env.bullpen(&[sub, "-V"]);
        assert_eq!(run.code(), code, "{sub} -V: {}{}", run.stdout, run.stderr);
        assert!(!run.stdout.contains("0.1.0"), "{sub} -V: {}", run.stdout);
    }
}
