//! A push killed (SIGKILL) while `git push` runs, what it sends staged (in
//! `packed-refs`): before git sent anything, and once the remote took it all
//! but before bullpen read git's report. A fetch then, the push made again,
//! another clone's fetch and `ls` see what the remote has and nothing else:
//! nothing here is lost, nothing is said to have landed that did not, and no
//! staged ref is left or read as a record.

use crate::remote::{args, commit, Machine, Machines};
use crate::remote_attacks::{hold_git, killed_while_held, outgoing, At};
use crate::support::{assert_contains, Env};

/// The ids of `ls --remote --json`, sorted.
fn remote_ids(machine: &Machine, env: &Env) -> Vec<String> {
    let mut ids: Vec<String> = machine
        .ls_json(env, &["--remote"])
        .iter()
        .map(|r| r["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    ids.sort();
    ids
}

/// Every ref under `refs/bullpen/` and `refs/heads/` with what it points at.
fn refs(machine: &Machine, env: &Env) -> String {
    machine.git_out(
        env,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/bullpen/",
            "refs/heads/",
        ],
    )
}

#[test]
fn a_push_killed_while_git_pushes_loses_and_misreports_nothing() {
    for at in [At::Before, At::After] {
        let mut m = Machines::new();
        let env = &m.env;
        for id in ["x", "y"] {
            let file = format!("{id}.txt");
            m.a.bullpen(env, &args(&["spawn", id], &commit(&file, id)))
                .ok();
        }
        let mine: Vec<(String, String)> = ["x", "y"]
            .iter()
            .map(|id| {
                (
                    m.a.git_out(env, &["rev-parse", &format!("refs/bullpen/sessions/{id}")]),
                    m.a.git_out(env, &["rev-parse", &format!("bullpen/{id}")]),
                )
            })
            .collect();
        let pid = hold_git(env, &mut m.a, "push", at);
        killed_while_held(env, &mut m.a, &pid, &["push", "--all", "origin"]);
        let landed = matches!(at, At::After);
        for (id, (record, branch)) in ["x", "y"].iter().zip(&mine) {
            let there = |r: &str| m.origin_ref(r);
            let (want_record, want_branch) = match landed {
                true => (Some(record.clone()), Some(branch.clone())),
                false => (None, None),
            };
            assert_eq!(there(&format!("refs/bullpen/sessions/{id}")), want_record);
            assert_eq!(there(&format!("refs/heads/bullpen/{id}")), want_branch);
        }
        // Staged, and left so by the kill: packed, no loose file of it.
        assert_ne!(outgoing(&m.a, env), "");
        let loose = m.a.dir.join(".git/refs/bullpen/outgoing");
        let files = walk(&loose);
        assert!(files.is_empty(), "loose staged refs: {files:?}");
        let before = refs(&m.a, env);

        // A fetch with the staged refs there lists what the remote has only.
        m.a.bullpen(env, &["fetch", "origin"]).ok();
        let want: Vec<String> = match landed {
            true => vec!["x".into(), "y".into()],
            false => vec![],
        };
        assert_eq!(remote_ids(&m.a, env), want);

        let run = m.a.bullpen(env, &["push", "--all", "origin"]).ok();
        if landed {
            assert_contains(&run.stderr, "everything is up to date on origin");
            assert!(!run.stderr.contains("pushed to"), "{}", run.stderr);
        } else {
            assert_contains(
                &run.stderr,
                "pushed to origin: x (record, branch), y (record, branch)",
            );
        }
        assert_eq!(outgoing(&m.a, env), "", "the push made again clears it");
        for (id, (record, branch)) in ["x", "y"].iter().zip(&mine) {
            assert_eq!(
                m.origin_ref(&format!("refs/bullpen/sessions/{id}"))
                    .as_ref(),
                Some(record)
            );
            assert_eq!(
                m.origin_ref(&format!("refs/heads/bullpen/{id}")).as_ref(),
                Some(branch)
            );
            // Nothing of this clone's own changed.
            assert_eq!(
                &m.a.git_out(env, &["rev-parse", &format!("refs/bullpen/sessions/{id}")]),
                record
            );
        }
        assert_eq!(remote_ids(&m.a, env), ["x", "y"]);
        assert_eq!(m.a.ls_json(env, &[]).len(), 2);
        // Only the staged refs went, and what the remote has was noted.
        let after = refs(&m.a, env);
        for line in before.lines().filter(|l| !l.contains("/outgoing/")) {
            assert!(after.contains(line), "{line} lost:\n{after}");
        }

        // Another clone sees both, as pushed.
        m.b.bullpen(env, &["fetch"]).ok();
        assert_eq!(remote_ids(&m.b, env), ["x", "y"]);

        // git reads the packed refs as bullpen wrote them: fsck, gc, and the
        // same refs after.
        m.a.git(env, &["fsck", "--no-progress"]).ok();
        m.a.git(env, &["gc", "--quiet"]).ok();
        assert_eq!(refs(&m.a, env), after);
        assert_eq!(remote_ids(&m.a, env), ["x", "y"]);
    }
}

/// The files under `dir`, at any depth (none when it is not there).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| match e.path().is_dir() {
            true => walk(&e.path()),
            false => vec![e.path()],
        })
        .collect()
}
