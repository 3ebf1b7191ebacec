//! A new session's index is settled before its command starts: no entry is
//! racily clean (mtime not older than the index's own, in seconds), so the
//! first status in the worktree re-hashes nothing and rewrites no index.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::support::{make_executable, Env};

/// The index of worktree `wt` and its mtime in seconds.
fn index_of(env: &Env, wt: &Path) -> (PathBuf, i64) {
    let path = env
        .git(
            wt,
            &["rev-parse", "--path-format=absolute", "--git-path", "index"],
        )
        .ok()
        .stdout
        .trim()
        .to_owned();
    let mtime = std::fs::metadata(&path).expect("the index").mtime();
    (PathBuf::from(path), mtime)
}

/// The mtime, in seconds, each entry of `wt`'s index recorded.
fn entry_mtimes(env: &Env, wt: &Path) -> Vec<(String, i64)> {
    let debug = env.git(wt, &["ls-files", "--debug"]).ok().stdout;
    let mut out = Vec::new();
    let mut name = String::new();
    for line in debug.lines() {
        match line.strip_prefix("  mtime: ") {
            Some(t) => {
                let secs = t
                    .split(':')
                    .next()
                    .expect("secs")
                    .parse()
                    .expect("a number");
                out.push((name.clone(), secs));
            }
            None if !line.starts_with("  ") => name = line.to_owned(),
            None => {}
        }
    }
    out
}

#[test]
fn a_fresh_worktree_has_no_racily_clean_entry_and_its_first_status_writes_no_index() {
    settled_with(20);
}

/// So with more entries than one thread of the settle takes (512): they are
/// shared among the cores.
#[test]
fn a_fresh_worktree_of_many_files_is_settled_on_every_thread() {
    settled_with(1300);
}

/// A spawn from a repository of `n` files and a tool leaves no entry racily
/// clean, and the first status re-hashes nothing.
fn settled_with(n: usize) {
    let env = Env::new();
    for i in 0..n {
        std::fs::write(env.repo.join(format!("file{i}")), format!("{i}\n")).unwrap();
    }
    std::fs::create_dir_all(env.repo.join("dir")).unwrap();
    std::fs::write(env.repo.join("dir/tool"), "#!/bin/sh\n").unwrap();
    make_executable(&env.repo.join("dir/tool"));
    env.git_out(&["add", "."]);
    env.git_out(&["commit", "-q", "-m", "files"]);
    let wt = env.spawn_sh("fresh", "true");

    let (_, index_secs) = index_of(&env, &wt);
    let entries = entry_mtimes(&env, &wt);
    assert_eq!(entries.len(), n + 2, "{entries:?}");
    let racy: Vec<_> = entries.iter().filter(|(_, s)| *s >= index_secs).collect();
    assert!(
        racy.is_empty(),
        "racily clean (index at {index_secs}): {racy:?}"
    );

    // git rewrites the index after a status that met a racy entry; this one
    // finds nothing to re-hash, nothing changed, and leaves the index alone.
    let status = env
        .cmd("git", &wt)
        .args(["status", "--porcelain"])
        .env("GIT_TRACE2_PERF", "1")
        .output()
        .unwrap();
    assert!(status.status.success());
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
    let trace = String::from_utf8_lossy(&status.stderr);
    assert!(
        trace.contains("label:refresh"),
        "no refresh traced: {trace}"
    );
    assert!(
        !trace.contains("do_write_index"),
        "the first status rewrote the index: {trace}"
    );
}

/// A `post-checkout` hook running `script` in the new worktree (after git's
/// checkout, before spawn settles the index).
fn post_checkout(env: &Env, script: &str) {
    let hooks = env.repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\n{script}\n")).unwrap();
    make_executable(&hook);
}

#[test]
fn a_file_touched_after_the_checkout_keeps_its_mtime() {
    let env = Env::new();
    // The same content again, and a later mtime: not as git checked it out.
    post_checkout(
        &env,
        "cat README > ../readme && cat ../readme > README && \
         touch -m -d \"@$(( $(stat -c %Y README) + 1 ))\" README",
    );
    let wt = env.spawn_sh("touched", "true");
    let meta = std::fs::metadata(wt.join("README")).unwrap();
    let (_, index_secs) = index_of(&env, &wt);
    assert!(
        meta.mtime() > index_secs,
        "README's mtime was moved: {} (index at {index_secs})",
        meta.mtime()
    );
    assert_eq!(env.git(&wt, &["status", "--porcelain"]).ok().stdout, "");
}

#[test]
fn an_edit_that_kept_size_and_mtime_is_still_seen_as_modified() {
    let env = Env::new();
    // The same size, in place (same inode), the checkout's mtime put back:
    // only the content tells.
    post_checkout(
        &env,
        "m=$(stat -c %y README) && printf 'HELLO\\n' > README && touch -m -d \"$m\" README",
    );
    let wt = env.spawn_sh("edited", "true");
    assert_eq!(
        std::fs::read_to_string(wt.join("README")).unwrap(),
        "HELLO\n"
    );
    let status = env.git(&wt, &["status", "--porcelain"]).ok().stdout;
    assert_eq!(status, " M README\n");
}

#[test]
fn a_split_index_is_settled_by_git_and_stays_split() {
    let env = Env::new();
    env.git_out(&["config", "core.splitIndex", "true"]);
    let wt = env.spawn_sh("split", "true");
    let (index, index_secs) = index_of(&env, &wt);
    let bytes = std::fs::read(&index).unwrap();
    assert!(
        bytes.windows(4).any(|w| w == b"link"),
        "the index lost its split-index link"
    );
    let racy: Vec<_> = entry_mtimes(&env, &wt)
        .into_iter()
        .filter(|(_, s)| *s >= index_secs)
        .collect();
    assert!(
        racy.is_empty(),
        "racily clean (index at {index_secs}): {racy:?}"
    );
    assert_eq!(env.git(&wt, &["status", "--porcelain"]).ok().stdout, "");
}
