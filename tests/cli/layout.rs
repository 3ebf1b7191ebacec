//! The layout's rules, checked on the source itself: plans and decisions are
//! pure (they import only `model`), one module talks to git, one reads `/proc`,
//! and no library module prints to the process's streams.

use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const CRATES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates");
/// The crates under `crates/`, each a module of the binary's `lib.rs`.
const FLOOR: [&str; 4] = ["git", "model", "sys", "trust"];

/// Every `.rs` file under `src/`, as (path relative to `src/`, code without comments).
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read src").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(Path::new(SRC), &mut files);
    // The floor's crates, named as the modules the binary re-exports them as
    // (`crates/git/src/lib.rs` is `git/mod.rs`).
    for krate in FLOOR {
        walk(&Path::new(CRATES).join(krate).join("src"), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = match p.strip_prefix(CRATES) {
                Ok(inner) => {
                    let mut parts = inner.iter();
                    let krate = parts.next().expect("a crate").to_string_lossy();
                    let rest = parts.skip(1).collect::<PathBuf>();
                    match rest.to_string_lossy().as_ref() {
                        "lib.rs" => format!("{krate}/mod.rs"),
                        rest => format!("{krate}/{rest}"),
                    }
                }
                Err(_) => p
                    .strip_prefix(SRC)
                    .expect("under src")
                    .to_string_lossy()
                    .into_owned(),
            };
            let text = std::fs::read_to_string(&p).expect("read source");
            // A table test kept beside its module (`plan_tests.rs`) is test code whole.
            let code = match rel.ends_with("_tests.rs") {
                true => String::new(),
                false => code_only(&text),
            };
            (rel, code)
        })
        .collect()
}

/// The text without `//` comments (doc comments included) and without the
/// `#[cfg(test)] mod tests` block at the end of a file.
fn code_only(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Plans and decisions: pure functions over plain facts.
fn is_pure(rel: &str) -> bool {
    rel.starts_with("model/")
        || rel.ends_with("/plan.rs")
        || rel.ends_with("/decide.rs")
        || rel == "ls/table.rs"
}

/// The crate modules a pure file names (`crate::x`, or a sibling through `super::`).
fn crate_modules(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[i + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
            .collect();
        found.push(name);
    }
    found
}

#[test]
fn plans_and_decisions_import_only_the_model() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for (rel, code) in sources().iter().filter(|(rel, _)| is_pure(rel)) {
        checked += 1;
        let in_model = rel.starts_with("model/");
        for m in crate_modules(code) {
            // In the model crate, `crate::` is the model itself.
            if m != "model" && !in_model {
                bad.push(format!("{rel} names crate::{m}"));
            }
        }
        for line in code.lines().filter(|l| l.contains("super::")) {
            // In model/, `super::` is the model itself; elsewhere it reaches the
            // feature's other (impure) files.
            if !in_model {
                bad.push(format!("{rel} reaches a sibling module: {}", line.trim()));
            }
        }
        for io in [
            "std::fs",
            "std::process",
            "std::net",
            "std::env",
            "libc::",
            "gix",
        ] {
            if !in_model && code.contains(io) {
                bad.push(format!("{rel} does I/O through {io}"));
            }
        }
    }
    assert!(checked >= 10, "the pure files were not found ({checked})");
    assert!(bad.is_empty(), "impure plans:\n{}", bad.join("\n"));
}

#[test]
fn only_the_git_boundary_talks_to_git_and_only_procfs_reads_proc() {
    let mut bad = Vec::new();
    for (rel, code) in sources() {
        if !rel.starts_with("git/") && (code.contains("gix::") || code.contains("\"git\"")) {
            bad.push(format!("{rel} talks to git outside src/git/"));
        }
        if rel != "sys/procfs.rs" && code.contains("\"/proc") {
            bad.push(format!("{rel} reads /proc outside src/sys/procfs.rs"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A bare `git worktree prune` unregisters every worktree whose directory is
/// missing at that moment, a user's own on an unmounted disk included: bullpen
/// never runs it, and only the git boundary touches git's admin entries
/// (`<common>/worktrees/<id>`, their `gitdir` files and `modules/`).
#[test]
fn no_worktree_prune_and_admin_entries_only_in_the_git_boundary() {
    let mut bad = Vec::new();
    for (rel, code) in sources() {
        if code.contains("\"prune\"") {
            bad.push(format!("{rel} runs `git worktree prune`"));
        }
        if rel.starts_with("git/") {
            continue;
        }
        for line in code.lines() {
            let admin = (line.contains("common_dir") && line.contains("\"worktrees\""))
                || line.contains("\"gitdir\"")
                || line.contains("\"modules\"")
                || line.contains(".git/worktrees");
            if admin {
                bad.push(format!(
                    "{rel} touches git's admin entries: {}",
                    line.trim()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn no_library_module_prints_to_the_process_streams() {
    let mut bad = Vec::new();
    for (rel, code) in sources() {
        if rel == "ui.rs" || rel == "main.rs" {
            continue;
        }
        for p in [
            "println!",
            "eprintln!",
            "print!(",
            "eprint!(",
            "std::io::stdout",
            "std::io::stderr",
        ] {
            if code.contains(p) {
                bad.push(format!("{rel} uses {p}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The layout test itself must see a violation: a pure file naming another
/// module is caught.
#[test]
fn the_purity_check_catches_a_foreign_import() {
    let code =
        code_only("use crate::model::Oid;\nuse crate::git::Repo;\n// crate::sys in a comment\n");
    assert_eq!(crate_modules(&code), ["model", "git"]);
}

/// ARCHITECTURE.md's map names every source file (a folder's `mod.rs` is its
/// folder line), and nothing that is not there.
#[test]
fn the_architecture_map_matches_the_tree() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md"))
        .expect("read ARCHITECTURE.md");
    let start = doc.find("## Map").expect("a Map section");
    let block = &doc[start..];
    let block = &block[block.find("```").expect("the map's code block") + 3..];
    let block = &block[..block.find("```").expect("its end")];
    let mut mapped = std::collections::BTreeSet::new();
    let mut folder = String::new();
    for line in block.lines() {
        let word = line.split_whitespace().next().unwrap_or("");
        // `crates/git/src/` is the `git/` the binary re-exports.
        let word = match word
            .strip_prefix("crates/")
            .and_then(|w| w.split_once("/src/"))
        {
            Some((krate, rest)) => format!("src/{krate}/{rest}"),
            None => word.to_owned(),
        };
        if let Some(rest) = word.strip_prefix("src/") {
            if let Some(dir) = rest.strip_suffix('/') {
                folder = format!("{dir}/");
                mapped.insert(format!("{folder}mod.rs"));
            } else {
                folder.clear();
                mapped.insert(rest.to_owned());
            }
        } else if line.starts_with("  ") && word.ends_with(".rs") && !folder.is_empty() {
            // `  a.rs b.rs c.rs   what they are`: several files of a folder.
            for w in line.split_whitespace().take_while(|w| w.ends_with(".rs")) {
                mapped.insert(format!("{folder}{w}"));
            }
        } else if !line.starts_with(' ') {
            folder.clear();
        }
    }
    let files: std::collections::BTreeSet<String> =
        sources().into_iter().map(|(rel, _)| rel).collect();
    let missing: Vec<_> = files.difference(&mapped).collect();
    let stale: Vec<_> = mapped.difference(&files).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "ARCHITECTURE.md's map lacks {missing:?} and names {stale:?}, which do not exist"
    );
}
