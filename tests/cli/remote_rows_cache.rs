//! `ls --remote` takes the row of a fetched record commit from its cache
//! (`<common>/bullpen/cache/remote`) once the record passed the checks for
//! its remote and id, and makes no record then. The cache is only an
//! optimisation: a listing from it prints what a listing without it prints,
//! refusals included; an edited or forged file changes nothing; and a row
//! answers only for the remote and the id it was checked for.

use std::path::PathBuf;

use crate::remote::{args, commit, Machine, Machines};
use crate::support::{assert_contains, Env};

/// What the table reads (and commits ahead).
fn cache_file(m: &Machine) -> PathBuf {
    m.dir.join(".git/bullpen/cache/remote")
}

/// The whole rows, which `--json` reads too.
fn rows_file(m: &Machine) -> PathBuf {
    m.dir.join(".git/bullpen/cache/remote-rows")
}

fn tracking(remote: &str, id: &str) -> String {
    format!("refs/bullpen/remotes/{remote}/sessions/{id}")
}

/// What `ls --remote <extra>` prints: stdout and stderr, at a pinned clock.
fn listing(m: &Machine, env: &Env, extra: &[&str]) -> (String, String) {
    let mut argv = vec!["ls", "--remote"];
    argv.extend_from_slice(extra);
    let out = m
        .cmd(env, crate::support::BIN, &m.dir)
        .env("BULLPEN_TEST_EPOCH", "1798761600")
        .args(&argv)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (text(out.stdout), text(out.stderr))
}

/// The listings people and scripts get: the table and the JSON, with and
/// without collected ones; `before` runs before each.
fn listings(m: &Machine, env: &Env, before: &dyn Fn()) -> Vec<(String, String)> {
    [&["--all"][..], &["--all", "--json"], &[], &["--json"]]
        .iter()
        .map(|extra| {
            before();
            listing(m, env, extra)
        })
        .collect()
}

/// Before a listing: no cache to read.
fn no_cache(m: &Machine) -> impl Fn() + '_ {
    || {
        let _ = std::fs::remove_file(cache_file(m));
        let _ = std::fs::remove_file(rows_file(m));
    }
}

/// `git <args>` in `m`'s clone with `input` on stdin; trimmed stdout.
fn git_stdin(m: &Machine, env: &Env, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = m
        .cmd(env, "git", &m.dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// From a: `good` (a commit ahead), `plain`, `gone` (collected), pushed and
/// fetched by b. In b, by hand: `broken` (no record), `dup` (good's record
/// under another id's name) and `upstream/good` (good's record fetched from
/// another remote, valid there).
fn fixture() -> Machines {
    let m = Machines::new();
    let (env, a, b) = (&m.env, &m.a, &m.b);
    a.bullpen(env, &args(&["spawn", "good"], &commit("g1", "g1")))
        .ok();
    a.bullpen(env, &["spawn", "plain", "--", "true"]).ok();
    a.bullpen(env, &["spawn", "gone", "--", "true"]).ok();
    a.bullpen(env, &["push", "--all"]).ok();
    a.bullpen(env, &["rm", "--force", "gone"]).ok();
    a.bullpen(env, &["push", "origin", "gone"]).ok();
    b.bullpen(env, &["fetch"]).ok();
    let good = b.git_out(env, &["rev-parse", &tracking("origin", "good")]);
    let bad = git_stdin(b, env, &["hash-object", "-w", "--stdin"], b"x");
    let tree = git_stdin(
        b,
        env,
        &["mktree"],
        format!("100644 blob {bad}\tsession.json\n").as_bytes(),
    );
    let broken = b.git_out(env, &["commit-tree", &tree, "-m", "forged"]);
    b.git_out(env, &["update-ref", &tracking("origin", "broken"), &broken]);
    b.git_out(env, &["update-ref", &tracking("origin", "dup"), &good]);
    b.git_out(env, &["update-ref", &tracking("upstream", "good"), &good]);
    m
}

/// Rows from the cache are the rows the checks make, byte for byte, for the
/// table and the JSON, and the refused records are refused alike: `broken`,
/// and `dup`, whose commit the cache holds as checked for `good`; `good` from
/// `upstream` is its own row there, not origin's.
#[test]
fn rows_from_the_cache_are_those_the_checks_make() {
    let m = fixture();
    let (env, b) = (&m.env, &m.b);
    no_cache(b)();
    let checked = listing(b, env, &["--all", "--json"]);
    for file in [cache_file(b), rows_file(b)] {
        let cache = std::fs::read_to_string(&file).unwrap();
        assert_eq!(cache.lines().filter(|l| l.starts_with("r ")).count(), 4);
    }
    let cached = listing(b, env, &["--all", "--json"]);
    assert_eq!(cached, checked);
    for (stdout, stderr) in [&checked, &cached] {
        assert_contains(
            stderr,
            &format!("skipping {}: ", tracking("origin", "broken")),
        );
        assert_contains(
            stderr,
            &format!(
                "skipping {}: it holds the record of session 'good', not of 'dup'",
                tracking("origin", "dup")
            ),
        );
        let rows: Vec<serde_json::Value> = serde_json::from_str(stdout).unwrap();
        let mut seen: Vec<String> = rows
            .iter()
            .map(|r| {
                format!(
                    "{}/{} {}",
                    r["remote"].as_str().unwrap(),
                    r["id"],
                    r["state"]
                )
            })
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            [
                r#"origin/"gone" "collected""#,
                r#"origin/"good" "exited""#,
                r#"origin/"plain" "exited""#,
                r#"upstream/"good" "exited""#
            ],
            "{stdout}"
        );
    }
    // Each listing, once checked and once from the cache.
    let without = listings(b, env, &no_cache(b));
    listing(b, env, &["--all"]);
    assert_eq!(listings(b, env, &|| ()), without);
}

/// A cache file edited by hand (a row's state, with or without the rest of
/// the file), or one that says a refused record passed, changes no verdict and
/// no printed row: it reads as empty. So for each of the two files.
#[test]
fn an_edited_or_forged_cache_changes_nothing() {
    let m = fixture();
    let (env, b) = (&m.env, &m.b);
    let checked = listings(b, env, &no_cache(b));
    listing(b, env, &["--all", "--json"]);
    for file in [cache_file(b), rows_file(b)] {
        forged_changes_nothing(&m, &file, &checked);
    }
}

/// [`an_edited_or_forged_cache_changes_nothing`] for `file`.
fn forged_changes_nothing(m: &Machines, file: &PathBuf, checked: &[(String, String)]) {
    let (env, b) = (&m.env, &m.b);
    let real = std::fs::read_to_string(file).unwrap();
    let (body, mac) = real.split_at(real.trim_end().rfind('\n').unwrap() + 1);
    let good = b.git_out(env, &["rev-parse", &tracking("origin", "good")]);
    let broken = b.git_out(env, &["rev-parse", &tracking("origin", "broken")]);
    let good_row = body
        .lines()
        .find(|l| l.starts_with(&format!("r {good} origin good ")))
        .unwrap()
        .to_owned();
    let row = good_row.splitn(5, ' ').nth(4).unwrap();
    assert_contains(row, r#""state":"exited""#);
    let running = row.replace(r#""state":"exited""#, r#""state":"running""#);
    let forged = [
        // A row changed in place, the MAC kept.
        real.replace(row, &running),
        // A row for the refused record added, the MAC kept.
        format!("{body}r {broken} origin broken {running}\n{mac}"),
        // The first line and that row, no MAC.
        format!(
            "{}\nr {broken} origin broken {running}\n",
            body.lines().next().unwrap()
        ),
    ];
    for text in forged {
        let write = || std::fs::write(file, &text).unwrap();
        assert_eq!(listings(b, env, &write), checked, "with the cache:\n{text}");
    }
    std::fs::write(file, real).unwrap();
}

/// A table listing that reads records also writes their whole rows, so the
/// `--json` after it reads no record: it finds every row in the cache (the
/// file is left as it was) and prints what a listing without a cache prints.
#[test]
fn a_table_listing_fills_the_whole_rows_for_json() {
    let m = fixture();
    let (env, b) = (&m.env, &m.b);
    no_cache(b)();
    let checked = listing(b, env, &["--all", "--json"]);
    no_cache(b)();
    listing(b, env, &["--all"]);
    let rows = std::fs::read_to_string(rows_file(b)).unwrap();
    assert_eq!(
        rows.lines().filter(|l| l.starts_with("r ")).count(),
        4,
        "{rows}"
    );
    assert_eq!(listing(b, env, &["--all", "--json"]), checked);
    assert_eq!(std::fs::read_to_string(rows_file(b)).unwrap(), rows);
}
