//! The rules Cargo cannot hold, checked on the parsed code (syn), every line of
//! every library file but its tests: no library module prints to the process's
//! streams, one module reads `/proc`, nothing outside the git crate runs git,
//! plans and decisions are pure, the model does no I/O, and nothing touches
//! git's admin entries or runs `git worktree prune` outside the git crate.
//!
//! Each rule was broken once on purpose and seen to fail (see the report of
//! issue 23): a print after `mod tests;`, `dbg!`, `io::stdout()` after `use
//! std::io`, a renamed `stderr`, a `/proc` path built with `join`, `sh -c "git
//! …"`, and `std::fs` in the model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One library source file: its module path as the binary sees it (`git/mod.rs`
/// for `crates/git/src/lib.rs`), and its parsed items.
struct Source {
    rel: String,
    file: syn::File,
}

/// Every library file of the binary and of the floor's crates, without the
/// files that are test modules (declared `#[cfg(test)] mod x;`).
fn sources() -> Vec<Source> {
    let mut roots = vec![(String::new(), PathBuf::from(ROOT).join("src"))];
    for krate in ["git", "model", "sys", "trust"] {
        roots.push((
            format!("{krate}/"),
            Path::new(ROOT).join("crates").join(krate).join("src"),
        ));
    }
    let mut out = Vec::new();
    for (prefix, dir) in roots {
        let mut files = Vec::new();
        walk(&dir, &mut files);
        files.sort();
        let mut parsed = Vec::new();
        let mut test_files = Vec::new();
        for path in files {
            let text = std::fs::read_to_string(&path).expect("read source");
            let file = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
            test_files.extend(test_modules(&path, &file));
            parsed.push((path, file));
        }
        for (path, file) in parsed {
            if test_files.contains(&path) {
                continue;
            }
            let inner = path.strip_prefix(&dir).expect("under its root");
            let inner = inner.to_string_lossy();
            let rel = match (prefix.is_empty(), inner.as_ref()) {
                (false, "lib.rs") => format!("{prefix}mod.rs"),
                _ => format!("{prefix}{inner}"),
            };
            out.push(Source { rel, file });
        }
    }
    assert!(
        out.len() > 100,
        "the sources were not found ({})",
        out.len()
    );
    out
}

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

/// The files of the `#[cfg(test)] mod x;` declarations of `file` (at `path`).
fn test_modules(path: &Path, file: &syn::File) -> Vec<PathBuf> {
    let dir = path.parent().expect("a directory");
    let stem = path.file_stem().expect("a name").to_string_lossy();
    // A `mod.rs`/`lib.rs`/`main.rs` declares its modules beside it; `a.rs`, in `a/`.
    let base = match stem.as_ref() {
        "mod" | "lib" | "main" => dir.to_path_buf(),
        _ => dir.join(stem.as_ref()),
    };
    let mut out = Vec::new();
    for item in &file.items {
        let syn::Item::Mod(m) = item else { continue };
        if m.content.is_some() || !is_test_only(&m.attrs) {
            continue;
        }
        let explicit = m.attrs.iter().find_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(dir.join(s.value())),
                _ => None,
            },
            _ => None,
        });
        let name = m.ident.to_string();
        out.push(explicit.unwrap_or_else(|| base.join(format!("{name}.rs"))));
        out.push(base.join(&name).join("mod.rs"));
    }
    out
}

/// `#[cfg(test)]` or `#[test]`.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

/// What a file does, as the rules need it: the macros it invokes, the paths it
/// names (each with its `use` aliases resolved), its string literals (with the
/// method or function they are an argument of), whether a function of it starts
/// a shell.
#[derive(Default)]
struct Facts {
    macros: Vec<String>,
    paths: Vec<String>,
    /// (literal, the name of the call it is an argument of, if any)
    literals: Vec<(String, Option<String>)>,
    /// The program and argument literals of the functions that run a shell
    /// (`Command::new("sh")`).
    shell_literals: Vec<String>,
}

struct Collector {
    aliases: BTreeMap<String, String>,
    facts: Facts,
    /// The call whose arguments are being visited.
    call: Vec<Option<String>>,
    /// Literals of the function being visited, and whether it runs a shell.
    fn_literals: Vec<(Vec<String>, bool)>,
}

const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "/bin/sh", "/bin/bash"];

impl Collector {
    fn resolve(&self, path: &syn::Path) -> String {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let Some(first) = segs.first() else {
            return String::new();
        };
        let head = self.aliases.get(first).cloned().unwrap_or(first.clone());
        std::iter::once(head)
            .chain(segs[1..].iter().cloned())
            .collect::<Vec<_>>()
            .join("::")
    }

    fn literal(&mut self, value: String) {
        let call = self.call.last().cloned().flatten();
        if let Some((lits, shell)) = self.fn_literals.last_mut() {
            if call.as_deref() == Some("Command::new") && SHELLS.contains(&value.as_str()) {
                *shell = true;
            }
            // What a command is given: its program and arguments.
            if matches!(call.as_deref(), Some(".arg" | ".args" | "Command::new")) {
                lits.push(value.clone());
            }
        }
        self.facts.literals.push((value, call));
    }

    fn in_function(&mut self, visit: impl FnOnce(&mut Self)) {
        self.fn_literals.push((Vec::new(), false));
        visit(self);
        if let Some((lits, shell)) = self.fn_literals.pop() {
            if shell {
                self.facts.shell_literals.extend(lits);
            }
        }
    }
}

/// The `use` tree's names, as (local name, full path).
fn use_aliases(prefix: &str, tree: &syn::UseTree, out: &mut BTreeMap<String, String>) {
    let join = |name: &str| match prefix.is_empty() {
        true => name.to_owned(),
        false => format!("{prefix}::{name}"),
    };
    match tree {
        syn::UseTree::Path(p) => use_aliases(&join(&p.ident.to_string()), &p.tree, out),
        syn::UseTree::Name(n) if n.ident == "self" => {
            let last = prefix.rsplit("::").next().unwrap_or(prefix).to_owned();
            out.insert(last, prefix.to_owned());
        }
        syn::UseTree::Name(n) => {
            out.insert(n.ident.to_string(), join(&n.ident.to_string()));
        }
        syn::UseTree::Rename(r) => {
            out.insert(r.rename.to_string(), join(&r.ident.to_string()));
        }
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_aliases(prefix, t, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_only(&m.attrs) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_only(&f.attrs) {
            self.in_function(|c| visit::visit_item_fn(c, f));
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_only(&f.attrs) {
            self.in_function(|c| visit::visit_impl_item_fn(c, f));
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if is_test_only(&u.attrs) {
            return;
        }
        let mut found = BTreeMap::new();
        use_aliases("", &u.tree, &mut found);
        for full in found.values() {
            self.facts.paths.push(full.clone());
        }
        self.aliases.extend(found);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let full = self.resolve(p);
        self.facts.paths.push(full);
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let name = self.resolve(&m.path);
        self.facts.macros.push(name);
        // The arguments of format-like macros are expressions: look inside them.
        if let Ok(args) = m.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) {
            for a in &args {
                self.visit_expr(a);
            }
        }
        visit::visit_macro(self, m);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let name = match &*c.func {
            syn::Expr::Path(p) => {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let n = segs.len();
                Some(segs[n.saturating_sub(2)..].join("::"))
            }
            _ => None,
        };
        self.visit_expr(&c.func);
        self.call.push(name);
        for a in &c.args {
            self.visit_expr(a);
        }
        self.call.pop();
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        self.visit_expr(&m.receiver);
        self.call.push(Some(format!(".{}", m.method)));
        for a in &m.args {
            self.visit_expr(a);
        }
        self.call.pop();
    }

    fn visit_lit_str(&mut self, s: &'ast syn::LitStr) {
        self.literal(s.value());
    }

    fn visit_lit_byte_str(&mut self, s: &'ast syn::LitByteStr) {
        self.literal(String::from_utf8_lossy(&s.value()).into_owned());
    }
}

fn facts(file: &syn::File) -> Facts {
    let mut c = Collector {
        aliases: BTreeMap::new(),
        facts: Facts::default(),
        call: Vec::new(),
        fn_literals: Vec::new(),
    };
    // Aliases first: a `use` may come after the code that relies on it.
    for item in &file.items {
        if let syn::Item::Use(u) = item {
            use_aliases("", &u.tree, &mut c.aliases);
        }
    }
    c.visit_file(file);
    c.facts
}

fn all_facts() -> Vec<(String, Facts)> {
    sources()
        .into_iter()
        .map(|s| (s.rel, facts(&s.file)))
        .collect()
}

/// The rules over one file's facts; the violations found.
fn violations(rel: &str, f: &Facts) -> Vec<String> {
    let mut bad = Vec::new();
    let in_git = rel.starts_with("git/");
    let in_model = rel.starts_with("model/");
    // Library code never prints (only the Ui and main own the streams).
    if rel != "ui.rs" && rel != "main.rs" {
        for m in &f.macros {
            let name = m.rsplit("::").next().unwrap_or(m);
            if ["print", "println", "eprint", "eprintln", "dbg"].contains(&name) {
                bad.push(format!("{rel} prints ({name}!)"));
            }
        }
        for p in &f.paths {
            if ["std::io::stdout", "std::io::stderr"].contains(&p.as_str()) {
                bad.push(format!("{rel} uses {p}"));
            }
        }
    }
    // One module reads /proc.
    if rel != "sys/procfs.rs" {
        for (lit, call) in &f.literals {
            let joined = matches!(call.as_deref(), Some(".join" | ".push" | "Path::new"))
                && (lit == "proc" || lit.starts_with("proc/"));
            if lit.starts_with("/proc") || joined {
                bad.push(format!("{rel} names /proc ({lit:?})"));
            }
        }
    }
    // Only the git crate talks to git: no gix, no `git` run, directly or by a shell.
    if !in_git {
        for p in &f.paths {
            if p == "gix" || p.starts_with("gix::") {
                bad.push(format!("{rel} uses gix ({p})"));
            }
        }
        for (lit, _) in &f.literals {
            if lit == "git" || lit.ends_with("/git") {
                bad.push(format!("{rel} runs git ({lit:?})"));
            }
        }
        for lit in &f.shell_literals {
            if runs_git(lit) {
                bad.push(format!("{rel} runs git through a shell ({lit:?})"));
            }
        }
        for (lit, _) in &f.literals {
            let admin = [".git/worktrees", "gitdir", "modules"].contains(&lit.as_str())
                || lit.contains(".git/worktrees");
            if admin {
                bad.push(format!("{rel} touches git's admin entries ({lit:?})"));
            }
        }
    }
    for (lit, _) in &f.literals {
        if lit == "prune" {
            bad.push(format!("{rel} runs `git worktree prune`"));
        }
    }
    // The model does no I/O.
    if in_model {
        for p in &f.paths {
            let io = ["std::fs", "std::process", "std::net", "std::env", "std::os"]
                .iter()
                .any(|m| p == m || p.starts_with(&format!("{m}::")));
            if io {
                bad.push(format!("{rel} does I/O through {p}"));
            }
        }
    }
    // Plans and decisions import nothing of the crate but the model.
    if is_pure(rel) && !in_model {
        for p in &f.paths {
            let mut segs = p.split("::");
            // In a plan's own folder (`gc/plan/`), `super::` is that plan.
            let own_plan = rel.contains("/plan/") && !p.starts_with("super::super");
            let reach = match segs.next() {
                Some("crate") => segs.next().filter(|m| *m != "model"),
                Some("super") if !own_plan => Some("super"),
                _ => None,
            };
            if let Some(m) = reach {
                bad.push(format!("{rel} is a plan or decision and names {m}: {p}"));
            }
            let io = [
                "std::fs",
                "std::process",
                "std::net",
                "std::env",
                "libc",
                "gix",
            ]
            .iter()
            .any(|m| p == m || p.starts_with(&format!("{m}::")));
            if io {
                bad.push(format!(
                    "{rel} is a plan or decision and does I/O through {p}"
                ));
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

/// Plans and decisions: pure functions over plain facts.
fn is_pure(rel: &str) -> bool {
    rel.starts_with("model/")
        || rel.ends_with("/plan.rs")
        || rel.contains("/plan/")
        || rel.ends_with("/decide.rs")
        || rel == "ls/table.rs"
}

/// Whether a shell line runs git: `git` as a command word.
fn runs_git(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || ";&|()`$".contains(c))
        .any(|w| w == "git" || w.ends_with("/git"))
}

#[test]
fn the_library_keeps_the_rules_cargo_cannot_hold() {
    let mut bad = Vec::new();
    let mut pure = 0;
    for (rel, f) in all_facts() {
        pure += usize::from(is_pure(&rel) && !rel.starts_with("model/"));
        bad.extend(violations(&rel, &f));
    }
    assert!(pure >= 6, "the plans and decisions were not found ({pure})");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The rules see each kind of violation, however it is written.
#[test]
fn each_rule_sees_its_violation() {
    let check = |rel: &str, code: &str| {
        let file = syn::parse_file(code).expect("parses");
        violations(rel, &facts(&file))
    };
    let cases = [
        (
            "git/mod.rs",
            "#[cfg(test)]\nmod tests;\nfn f() { println!(\"x\"); }",
        ),
        ("gc/execute.rs", "fn f(x: u8) { dbg!(x); }"),
        (
            "gc/execute.rs",
            "use std::io;\nfn f() { let _ = io::stdout(); }",
        ),
        (
            "gc/execute.rs",
            "use std::io::stderr as err;\nfn f() { let _ = err(); }",
        ),
        (
            "gc/execute.rs",
            "fn f() { std::path::Path::new(\"/\").join(\"proc\"); }",
        ),
        (
            "gc/execute.rs",
            "fn f() { let _ = std::fs::read(\"/proc/self/stat\"); }",
        ),
        (
            "gc/execute.rs",
            "fn f() { Command::new(\"sh\").arg(\"-c\").arg(\"cd x && git status\"); }",
        ),
        ("gc/execute.rs", "fn f() { Command::new(\"git\"); }"),
        ("gc/execute.rs", "fn f() { let _ = gix::open(\".\"); }"),
        ("model/id.rs", "fn f() { let _ = std::fs::read(\"x\"); }"),
        (
            "model/id.rs",
            "use std::process;\nfn f() { process::exit(1); }",
        ),
        ("gc/plan.rs", "use crate::git::Repo;"),
        ("gc/plan.rs", "use super::facts::Facts;"),
    ];
    for (rel, code) in cases {
        assert!(!check(rel, code).is_empty(), "not seen in {rel}: {code}");
    }
    // And what is allowed stays allowed.
    for (rel, code) in [
        (
            "ui.rs",
            "fn f() { println!(\"x\"); let _ = std::io::stdout(); }",
        ),
        (
            "sys/procfs.rs",
            "fn f() { let _ = std::fs::read(\"/proc/self/stat\"); }",
        ),
        ("git/cli.rs", "fn f() { Command::new(\"git\"); }"),
        (
            "gc/execute.rs",
            "fn f() -> &'static str { \"run `git bullpen gc`\" }",
        ),
        ("gc/plan.rs", "use crate::model::Record;"),
        (
            "gc/execute.rs",
            "#[cfg(test)]\nmod tests { fn f() { println!(\"x\"); } }",
        ),
    ] {
        assert_eq!(check(rel, code), Vec::<String>::new(), "{rel}: {code}");
    }
}
