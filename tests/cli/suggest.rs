//! "Did you mean", as git offers for a mistyped command: for a session id and
//! an agent name that match nothing.

use crate::support::Env;

#[test]
fn a_mistyped_session_id_names_the_nearest_ones() {
    let env = Env::new();
    for id in ["fix-login", "fix-logout", "tests"] {
        env.bullpen(&["spawn", id, "--", "true"]).ok();
    }
    let run = env.bullpen(&["resume", "fix-logn"]).fails();
    assert!(
        run.stderr.contains("hint: did you mean 'fix-login'?"),
        "{}",
        run.stderr
    );
    let run = env.bullpen(&["logs", "tsets"]).fails();
    assert!(
        run.stderr.contains("hint: did you mean 'tests'?"),
        "{}",
        run.stderr
    );
    // Nothing near: no guess.
    let run = env.bullpen(&["path", "docs"]).fails();
    assert!(!run.stderr.contains("did you mean"), "{}", run.stderr);
}

#[test]
fn a_mistyped_agent_names_the_profile_it_is_near() {
    let env = Env::new();
    let run = env.bullpen(&["spawn", "--agent", "cluade", "x"]).fails();
    assert!(
        run.stderr.contains("hint: did you mean 'claude'?"),
        "{}",
        run.stderr
    );
    assert!(
        env.git_out(&["for-each-ref", "refs/bullpen/"]).is_empty(),
        "nothing was created"
    );
}
