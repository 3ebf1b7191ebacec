//! The map of ARCHITECTURE.md names every source file. The rules on what the
//! code may do are checked on the parsed code, in `rules.rs`.

use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const CRATES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates");
/// The crates under `crates/`, each a module of the binary's `lib.rs`.
const FLOOR: [&str; 4] = ["git", "model", "sys", "trust"];

/// Every `.rs` file under `src/` and the floor's crates, as its path relative to
/// `src/` (the floor's files under the module the binary re-exports them as).
fn sources() -> Vec<String> {
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
        .map(|p| match p.strip_prefix(CRATES) {
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
        })
        .collect()
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
    let files: std::collections::BTreeSet<String> = sources().into_iter().collect();
    let missing: Vec<_> = files.difference(&mapped).collect();
    let stale: Vec<_> = mapped.difference(&files).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "ARCHITECTURE.md's map lacks {missing:?} and names {stale:?}, which do not exist"
    );
}
