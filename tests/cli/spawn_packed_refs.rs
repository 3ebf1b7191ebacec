//! Record and branch updates in a repository whose refs are packed (after
//! `git gc` or `git pack-refs`): gix reads packed-refs for a ref with no loose
//! file after taking that ref's own lock, without `packed-refs.lock`, as git
//! does (`vendor/gix-ref`, "git-bullpen"); a `packed-refs.lock` that exists is
//! still reported, never written past.

use crate::support::*;

fn packed_refs_holds(env: &Env, refname: &str) -> bool {
    std::fs::read_to_string(env.repo.join(".git/packed-refs"))
        .unwrap()
        .lines()
        .any(|l| l.ends_with(&format!(" {refname}")))
}

#[test]
fn a_record_only_in_packed_refs_is_updated_from_its_packed_value() {
    let env = Env::new();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    let before = env.record("a");
    assert_eq!(before["state"], "exited", "{before}");
    env.git(&env.repo, &["pack-refs", "--all"]).ok();
    let record = record_ref("a");
    assert!(packed_refs_holds(&env, &record), "not packed: {record}");
    assert!(!env.repo.join(".git").join(&record).exists());
    let packed_tip = env.git_out(&["rev-parse", &record]);
    // Its next event is a compare-and-swap from the packed tip: it must
    // find it there (no loose file), and move the record on from it.
    let run = env.bullpen(&["resume", "a", "--", "true"]);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let tip = env.git_out(&["rev-parse", &record]);
    assert_ne!(tip, packed_tip);
    let parents = env.git_out(&["rev-list", "--parents", "-n", "1", &record]);
    assert!(
        env.git(
            &env.repo,
            &["merge-base", "--is-ancestor", &packed_tip, &tip]
        )
        .status
        .success(),
        "the record did not continue from its packed tip: {parents}"
    );
    assert!(!env.repo.join(".git/packed-refs.lock").exists());
}

#[test]
fn a_new_session_in_a_packed_repository_takes_no_packed_refs_lock_it_finds() {
    let env = Env::new();
    env.bullpen(&["spawn", "a", "--", "true"]).ok();
    env.git(&env.repo, &["pack-refs", "--all"]).ok();
    // A packed-refs.lock that exists (a git that crashed, or one rewriting
    // packed-refs now) is waited for and reported, as before: bullpen does not
    // write past it.
    let lock = env.repo.join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    let before = env.snapshot();
    let run = env.bullpen(&["spawn", "b", "--", "true"]).fails();
    assert_eq!(run.code(), 125, "{}", run.stderr);
    assert_contains(
        &run.stderr,
        &format!("cannot lock {}: it exists", lock.display()),
    );
    assert_eq!(env.snapshot(), before);
    std::fs::remove_file(&lock).unwrap();
    // Without it, the spawn goes ahead and leaves packed-refs as it was.
    let packed = std::fs::read(env.repo.join(".git/packed-refs")).unwrap();
    env.bullpen(&["spawn", "b", "--", "true"]).ok();
    assert_eq!(env.record("b")["state"], "exited");
    assert_eq!(
        std::fs::read(env.repo.join(".git/packed-refs")).unwrap(),
        packed
    );
    assert!(!lock.exists());
}
