//! gc at scale (issue 13): removing N published clean sessions against git's
//! own removals of N plain worktrees, what the proof of content adds to a dry
//! run, and peak memory on a real repository.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::env::{run_ok, Env};
use crate::fixtures::Repo;
use crate::measure::{compare, median, run_one, Case, Sample};
use crate::report::{MemRow, Report, TimeRow};

/// Removing N published clean sessions: at most this times `git worktree
/// remove` + `git branch -d` of N plain worktrees.
const REMOVAL_BUDGET: f64 = 1.2;
/// The proof of content: `gc --dry-run` at most this times the same dry run
/// without it.
const CONTENT_BUDGET: f64 = 1.5;
const PEAK_MIB_BUDGET: f64 = 64.0;

/// Issue 27: `ls --status` no slower than worktrunk's `wt list` (issue 17's
/// 3× faster needs skipping statuses: no sound way without a file-system
/// monitor, see BENCHMARKS.md).
const WT_LIST_BUDGET: f64 = 1.0;

/// What these sections are asked to do (from the suite's options).
pub struct GcConfig {
    pub removal_ns: Vec<usize>,
    pub removal_files: usize,
    pub runs_removal: usize,
    pub content_n: usize,
    pub content_merged: usize,
    pub runs_content: usize,
    /// A clone or a bare mirror of a real repository (`BULLPEN_BENCH_REAL_REPO`).
    pub real_repo: Option<PathBuf>,
    pub real_n: usize,
    pub runs_real: usize,
}

/// One session's commit: a file of its own (a change the proof of content can find).
const SESSION_COMMIT: &str = "echo \"$BULLPEN_SESSION\" > \"bullpen-$BULLPEN_SESSION.txt\" && \
     git add \"bullpen-$BULLPEN_SESSION.txt\" && git commit -q -m \"work of $BULLPEN_SESSION\"";

/// A clone of `base` (its files checked out) whose `origin` is `base`'s bare
/// origin, in a directory of its own.
fn clone_of(env: &Env, base: &Repo, name: &str) -> PathBuf {
    let dir = env.root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let src = base.dir.to_str().expect("utf-8 path");
    let dst = dir.to_str().expect("utf-8 path");
    run_ok(&mut env.git(&env.root, &["clone", "-q", src, dst]));
    let origin = base
        .dir
        .parent()
        .expect("a parent")
        .join("origin.git")
        .to_string_lossy()
        .into_owned();
    run_ok(&mut env.git(&dir, &["remote", "set-url", "origin", &origin]));
    run_ok(&mut env.git(&dir, &["fetch", "-q", "origin"]));
    dir
}

/// Spawn sessions `ids` in `dir`, each committing a file of its own.
/// Spawn a session per id, each making one commit; the wall time of each spawn.
fn spawn_all(env: &Env, dir: &Path, ids: &[String]) -> Vec<std::time::Duration> {
    ids.iter()
        .map(|id| {
            let t = Instant::now();
            run_ok(&mut env.bullpen(dir, &["spawn", id, "--", "sh", "-c", SESSION_COMMIT]));
            t.elapsed()
        })
        .collect()
}

/// Push the session branches of `ids` to origin, in chunks.
fn push_all(env: &Env, dir: &Path, ids: &[String]) {
    let branches: Vec<String> = ids.iter().map(|id| format!("bullpen/{id}")).collect();
    for chunk in branches.chunks(200) {
        let mut args = vec!["push", "-q", "origin"];
        args.extend(chunk.iter().map(String::as_str));
        run_ok(&mut env.git(dir, &args));
    }
}

fn count_plan(plan: &serde_json::Value, action: &str) -> usize {
    plan.as_array().map_or(0, |a| {
        a.iter()
            .filter(|e| e["kind"] == "session" && e["action"] == action)
            .count()
    })
}

/// Removing N published clean sessions (`git bullpen gc`) against a careful
/// script's removal of N plain worktrees of the same repository (`git worktree
/// remove <path> && git branch -d <branch>`, each), both with thousands of
/// files per worktree. Each sample builds both fixtures anew (untimed): real
/// spawns, pushed; plain `git worktree add -b`.
pub fn bench_removal(env: &Env, cfg: &GcConfig, errlog: &Path, report: &mut Report) {
    let t = Instant::now();
    let base = Repo::create(env, "removal", cfg.removal_files);
    eprintln!(
        "fixture: {}-file repository for removals in {:.1} s",
        cfg.removal_files,
        t.elapsed().as_secs_f64()
    );
    for &n in &cfg.removal_ns {
        let mut ours: Vec<Sample> = Vec::new();
        let mut theirs: Vec<Sample> = Vec::new();
        for run in 0..cfg.runs_removal {
            let t = Instant::now();
            let a = clone_of(env, &base, &format!("removal-{n}-{run}-bullpen"));
            let ids: Vec<String> = (0..n).map(|i| format!("n{n}r{run}s{i:04}")).collect();
            spawn_all(env, &a, &ids);
            push_all(env, &a, &ids);
            let plan: serde_json::Value = serde_json::from_str(&run_ok(
                &mut env.bullpen(&a, &["gc", "--dry-run", "--json"]),
            ))
            .expect("gc --dry-run --json parses");
            assert_eq!(count_plan(&plan, "removed"), n, "gc would remove them all");
            let b = clone_of(env, &base, &format!("removal-{n}-{run}-git"));
            let wt_root = env.root.join(format!("removal-{n}-{run}-plain"));
            let mut list = String::new();
            for i in 0..n {
                let path = wt_root.join(format!("g{i:04}"));
                let path = path.to_str().expect("utf-8 path");
                let branch = format!("bench/g{i:04}");
                run_ok(&mut env.git(&b, &["worktree", "add", "-q", "-b", &branch, path]));
                list.push_str(&format!("{path} {branch}\n"));
            }
            let list_file = env.root.join(format!("removal-{n}-{run}.list"));
            std::fs::File::create(&list_file)
                .and_then(|mut f| f.write_all(list.as_bytes()))
                .expect("write the list");
            // The fixtures' files go to disk first (untimed): a removal of files
            // still under writeback waits for it, and the fixture built first
            // (bullpen's) would pay for both.
            run_ok(&mut Command::new("sync"));
            eprintln!(
                "fixture: {n} sessions and {n} plain worktrees (run {run}) in {:.1} s",
                t.elapsed().as_secs_f64()
            );
            let script = format!(
                "while read w b; do git worktree remove \"$w\" && git branch -q -d \"$b\" || exit 1; \
                 done < '{}'",
                list_file.display()
            );
            let mut bullpen_gc = env.bullpen(&a, &["gc"]);
            let mut git_loop = env.cmd("sh", &b);
            git_loop.args(["-c", &script]);
            // The order alternates, so that neither side always runs on a warmer cache.
            if run % 2 == 0 {
                ours.push(run_one(&mut bullpen_gc, errlog));
                theirs.push(run_one(&mut git_loop, errlog));
            } else {
                theirs.push(run_one(&mut git_loop, errlog));
                ours.push(run_one(&mut bullpen_gc, errlog));
            }
            // Both did all of it.
            let left = run_ok(&mut env.git(&a, &["worktree", "list", "--porcelain"]));
            assert_eq!(
                left.lines().filter(|l| l.starts_with("worktree ")).count(),
                1
            );
            let left = run_ok(&mut env.git(&b, &["worktree", "list", "--porcelain"]));
            assert_eq!(
                left.lines().filter(|l| l.starts_with("worktree ")).count(),
                1
            );
            for dir in [&a, &b, &wt_root] {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        let fixture = format!(
            "N={n}, {}-file worktrees, published and clean",
            crate::thousands(cfg.removal_files)
        );
        let wall = |v: &[Sample]| median(v.iter().map(|s| s.wall).collect());
        let cpu = |v: &[Sample]| median(v.iter().map(|s| s.cpu).collect());
        report.time(TimeRow {
            what: "`gc` removing N sessions vs `git worktree remove` + `git branch -d` of N".into(),
            fixture: fixture.clone(),
            bullpen: wall(&ours),
            baseline: wall(&theirs),
            bullpen_cpu: cpu(&ours),
            baseline_cpu: cpu(&theirs),
            budget: Some(REMOVAL_BUDGET),
        });
        report.details.push((
            format!("git bullpen gc [{fixture}]"),
            ours.iter().map(|s| s.wall).collect(),
        ));
        report.details.push((
            format!("git worktree remove + git branch -d [{fixture}]"),
            theirs.iter().map(|s| s.wall).collect(),
        ));
        report.mem(MemRow {
            what: "`gc` removing N sessions".into(),
            fixture,
            kib: ours.iter().map(|s| s.maxrss_kib).max().unwrap_or(0),
            baseline: "largest git of the baseline".into(),
            baseline_kib: theirs.iter().map(|s| s.maxrss_kib).max().unwrap_or(0),
            budget_mib: Some(PEAK_MIB_BUDGET),
        });
    }
}

/// `gc --dry-run` over N sessions (half pushed, some squash-merged on the
/// remote by a second clone, their branches deleted there and pruned here),
/// with the proof of content and without it (`bullpen.gc.integrationRef` set
/// to nothing).
pub fn bench_content(env: &Env, cfg: &GcConfig, errlog: &Path, report: &mut Report) {
    let t = Instant::now();
    let repo = Repo::create(env, "content", 0);
    let dir = &repo.dir;
    let n = cfg.content_n;
    let ids: Vec<String> = (0..n).map(|i| format!("c{i:04}")).collect();
    spawn_all(env, dir, &ids);
    let pushed: Vec<String> = ids.iter().step_by(2).cloned().collect();
    let merged: Vec<String> = ids
        .iter()
        .skip(1)
        .step_by(2)
        .take(cfg.content_merged)
        .cloned()
        .collect();
    push_all(env, dir, &pushed);
    push_all(env, dir, &merged);
    // The forge: squash-merge each into main, push, delete the branches.
    let origin = repo.dir.parent().expect("a parent").join("origin.git");
    let forge = env.root.join("content-forge");
    run_ok(&mut env.git(
        &env.root,
        &[
            "clone",
            "-q",
            "-b",
            "main",
            origin.to_str().expect("utf-8 path"),
            forge.to_str().expect("utf-8 path"),
        ],
    ));
    for id in &merged {
        run_ok(&mut env.git(
            &forge,
            &["merge", "-q", "--squash", &format!("origin/bullpen/{id}")],
        ));
        run_ok(&mut env.git(&forge, &["commit", "-q", "-m", &format!("Squashed {id}")]));
    }
    run_ok(&mut env.git(&forge, &["push", "-q", "origin", "main"]));
    for chunk in merged.chunks(200) {
        let mut args = vec!["push", "-q", "origin", "--delete"];
        let branches: Vec<String> = chunk.iter().map(|id| format!("bullpen/{id}")).collect();
        args.extend(branches.iter().map(String::as_str));
        run_ok(&mut env.git(&forge, &args));
    }
    run_ok(&mut env.git(dir, &["fetch", "-q", "--prune", "origin"]));
    eprintln!(
        "fixture: {n} sessions, {} pushed, {} squash-merged, in {:.1} s",
        pushed.len(),
        merged.len(),
        t.elapsed().as_secs_f64()
    );
    let without = |c: &mut Command| {
        c.env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "bullpen.gc.integrationRef")
            .env("GIT_CONFIG_VALUE_0", "");
    };
    let plan = |proof: bool| -> serde_json::Value {
        let mut c = env.bullpen(dir, &["gc", "--dry-run", "--json"]);
        if !proof {
            without(&mut c);
        }
        serde_json::from_str(&run_ok(&mut c)).expect("gc --dry-run --json parses")
    };
    assert_eq!(
        count_plan(&plan(true), "removed"),
        pushed.len() + merged.len(),
        "with the proof of content, the squash-merged go too"
    );
    assert_eq!(
        count_plan(&plan(false), "removed"),
        pushed.len(),
        "without it, only the pushed"
    );
    let cases = [
        Case::new("git bullpen gc --dry-run, no proof of content", |_| {
            let mut c = env.bullpen(dir, &["gc", "--dry-run"]);
            without(&mut c);
            vec![c]
        }),
        Case::new("git bullpen gc --dry-run", |_| {
            vec![env.bullpen(dir, &["gc", "--dry-run"])]
        }),
    ];
    let s = compare(&cases, cfg.runs_content, true, errlog);
    let fixture = format!(
        "N={n}, {} pushed, {} squash-merged",
        pushed.len(),
        merged.len()
    );
    report.time(TimeRow {
        what: "`gc --dry-run` vs the same without the proof of content".into(),
        fixture: fixture.clone(),
        bullpen: s.median(1),
        baseline: s.median(0),
        bullpen_cpu: s.median_cpu(1),
        baseline_cpu: s.median_cpu(0),
        budget: Some(CONTENT_BUDGET),
    });
    report.samples(&fixture, &cases, &s);
    report.mem(MemRow {
        what: "`gc --dry-run` with the proof of content".into(),
        fixture,
        kib: s.peak_kib(1),
        baseline: "without it".into(),
        baseline_kib: s.peak_kib(0),
        budget_mib: Some(PEAK_MIB_BUDGET),
    });
}

/// What a worktree of a real session holds besides its commits: ignored
/// build output in every one (`vendor/`: 20 directories of 20 files, and a
/// `.phpunit.result.cache`, ignored by symfony's `.gitignore`; disposable,
/// so gc still removes the published ones), and in each of `edited` real
/// edits: a tracked file modified, one deleted, one untracked file.
fn worktree_contents(env: &Env, dir: &Path, edited: &[&String]) {
    let listed: serde_json::Value =
        serde_json::from_str(&run_ok(&mut env.bullpen(dir, &["ls", "--json"]))).expect("json");
    let tracked = run_ok(&mut env.git(dir, &["ls-files"]));
    let tracked: Vec<&str> = tracked.lines().filter(|l| l.ends_with(".php")).collect();
    for (k, r) in listed.as_array().into_iter().flatten().enumerate() {
        let wt = PathBuf::from(r["worktree"].as_str().expect("a worktree"));
        for d in 0..20 {
            let sub = wt.join("vendor").join(format!("pkg{d:02}")).join("src");
            std::fs::create_dir_all(&sub).expect("mkdir vendor");
            for f in 0..20 {
                std::fs::write(
                    sub.join(format!("F{f:02}.php")),
                    format!("<?php // {d} {f}\n"),
                )
                .expect("write vendor");
            }
        }
        std::fs::write(wt.join(".phpunit.result.cache"), "{}\n").expect("write cache");
        let id = r["id"].as_str().unwrap_or_default();
        if edited.iter().any(|e| e.as_str() == id) && tracked.len() > 2 {
            let a = wt.join(tracked[(k * 7) % tracked.len()]);
            let mut text = std::fs::read_to_string(&a).unwrap_or_default();
            text.push_str("\n// an edit of this session\n");
            std::fs::write(&a, text).expect("edit a tracked file");
            let _ = std::fs::remove_file(wt.join(tracked[(k * 7 + 1) % tracked.len()]));
            std::fs::write(wt.join("NOTES.md"), "work in progress\n").expect("untracked");
        }
    }
}

/// Peak memory of `gc --dry-run` and `gc` on a real repository (its history
/// and pack as they are): `BULLPEN_BENCH_REAL_REPO` names a clone or a bare
/// mirror, which the suite clones (`--shared`: its objects are read in place)
/// and gives `real_n` sessions, half pushed, a few squash-merged.
pub fn bench_real(env: &Env, cfg: &GcConfig, errlog: &Path, report: &mut Report) {
    let Some(src) = &cfg.real_repo else {
        report.note(
            "real repository: not measured (set BULLPEN_BENCH_REAL_REPO to a clone or a bare \
             mirror of one, e.g. symfony/symfony)"
                .into(),
        );
        return;
    };
    let t = Instant::now();
    let base = env.root.join("real");
    std::fs::create_dir_all(&base).expect("mkdir");
    let origin = base.join("origin.git");
    let dir = base.join("repo");
    let s = |p: &Path| p.to_str().expect("utf-8 path").to_owned();
    run_ok(&mut env.git(
        &base,
        &["clone", "-q", "--bare", "--shared", &s(src), &s(&origin)],
    ));
    run_ok(&mut env.git(&base, &["clone", "-q", &s(&origin), &s(&dir)]));
    let name = src
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let files = run_ok(&mut env.git(&dir, &["ls-files"])).lines().count();
    let n = cfg.real_n;
    let ids: Vec<String> = (0..n).map(|i| format!("x{i:03}")).collect();
    let spawns = spawn_all(env, &dir, &ids);
    let pushed: Vec<String> = ids.iter().step_by(2).cloned().collect();
    let merged: Vec<String> = ids
        .iter()
        .skip(1)
        .step_by(2)
        .take(n / 20)
        .cloned()
        .collect();
    push_all(env, &dir, &pushed);
    push_all(env, &dir, &merged);
    let forge = base.join("forge");
    run_ok(&mut env.git(&base, &["clone", "-q", "--shared", &s(&origin), &s(&forge)]));
    for id in &merged {
        run_ok(&mut env.git(
            &forge,
            &["merge", "-q", "--squash", &format!("origin/bullpen/{id}")],
        ));
        run_ok(&mut env.git(&forge, &["commit", "-q", "-m", &format!("Squashed {id}")]));
    }
    let head = run_ok(&mut env.git(&forge, &["symbolic-ref", "--short", "HEAD"]));
    run_ok(&mut env.git(&forge, &["push", "-q", "origin", head.trim()]));
    for id in &merged {
        run_ok(&mut env.git(
            &forge,
            &["push", "-q", "origin", "--delete", &format!("bullpen/{id}")],
        ));
    }
    run_ok(&mut env.git(&dir, &["fetch", "-q", "--prune", "origin"]));
    let unpublished: Vec<&String> = ids
        .iter()
        .filter(|id| !pushed.contains(id) && !merged.contains(id))
        .collect();
    worktree_contents(env, &dir, &unpublished);
    eprintln!(
        "fixture: {name}, {files} files, {n} sessions ({} pushed, {} squash-merged) in {:.0} s",
        pushed.len(),
        merged.len(),
        t.elapsed().as_secs_f64()
    );
    let plan: serde_json::Value = serde_json::from_str(&run_ok(
        &mut env.bullpen(&dir, &["gc", "--dry-run", "--json"]),
    ))
    .expect("gc --dry-run --json parses");
    assert_eq!(
        count_plan(&plan, "removed"),
        pushed.len() + merged.len(),
        "gc would remove the pushed and the squash-merged"
    );
    let wt = PathBuf::from(
        plan.as_array()
            .and_then(|a| a.iter().find(|e| e["kind"] == "session"))
            .and_then(|e| e["worktree"].as_str())
            .expect("a session's worktree"),
    );
    // Issue 17, item 5: spawn does not slow down as sessions accumulate.
    if spawns.len() >= 40 {
        let first = median(spawns[..20].to_vec());
        let last = median(spawns[spawns.len() - 20..].to_vec());
        report.note(format!(
            "spawn on {name} as sessions accumulate: median of the first 20 {:.0} ms, of the \
             last 20 (sessions {}–{}) {:.0} ms, {:.2}×",
            first.as_secs_f64() * 1e3,
            spawns.len() - 19,
            spawns.len(),
            last.as_secs_f64() * 1e3,
            last.as_secs_f64() / first.as_secs_f64().max(1e-9)
        ));
    }
    let cases = [
        Case::new("git status (one session worktree)", |_| {
            vec![env.git(&wt, &["status", "--porcelain"])]
        }),
        Case::new("git bullpen gc --dry-run", |_| {
            vec![env.bullpen(&dir, &["gc", "--dry-run"])]
        }),
        Case::new("git bullpen ls --status", |_| {
            vec![env.bullpen(&dir, &["ls", "--status"])]
        }),
    ];
    let samples = compare(&cases, cfg.runs_real, true, errlog);
    let fixture = format!("{name} ({files} files), {n} sessions");
    report.time(TimeRow {
        what: "`gc --dry-run` on a real repository vs one `git status`".into(),
        fixture: fixture.clone(),
        bullpen: samples.median(1),
        baseline: samples.median(0),
        bullpen_cpu: samples.median_cpu(1),
        baseline_cpu: samples.median_cpu(0),
        budget: None,
    });
    report.samples(&fixture, &cases, &samples);
    report.mem(MemRow {
        what: "`gc --dry-run` on a real repository".into(),
        fixture: fixture.clone(),
        kib: samples.peak_kib(1),
        baseline: "`git status` in one worktree".into(),
        baseline_kib: samples.peak_kib(0),
        budget_mib: Some(PEAK_MIB_BUDGET),
    });
    report.mem(MemRow {
        what: "`ls --status` on a real repository".into(),
        fixture: fixture.clone(),
        kib: samples.peak_kib(2),
        baseline: "`git status` in one worktree".into(),
        baseline_kib: samples.peak_kib(0),
        budget_mib: Some(PEAK_MIB_BUDGET),
    });
    // worktrunk's `wt list` shows the same facts of the same worktrees
    // (uncommitted work, ahead/behind, against the remote): issue 27 asks
    // `ls --status` to be no slower.
    if let Some(wt) = crate::env::which("wt") {
        let version = env.cmd(&wt, &dir).arg("--version").output().ok();
        let version = version
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "an unknown version".into());
        report.note(format!("worktrunk on PATH: `{version}`"));
        let cases = [
            Case::new("wt list", |_| {
                let mut c = env.cmd(&wt, &dir);
                c.arg("list");
                vec![c]
            }),
            Case::new("git bullpen ls --status", |_| {
                vec![env.bullpen(&dir, &["ls", "--status"])]
            }),
        ];
        let s = compare(&cases, cfg.runs_real, true, errlog);
        report.time(TimeRow {
            what: "`ls --status` vs worktrunk's `wt list` (same worktrees)".into(),
            fixture: fixture.clone(),
            bullpen: s.median(1),
            baseline: s.median(0),
            bullpen_cpu: s.median_cpu(1),
            baseline_cpu: s.median_cpu(0),
            budget: Some(WT_LIST_BUDGET),
        });
        report.samples(&fixture, &cases, &s);
        let r = s.median(1).as_secs_f64() / s.median(0).as_secs_f64().max(1e-9);
        report.target(
            format!("`ls --status` ≤ {WT_LIST_BUDGET}× `wt list` [{fixture}]"),
            format!(
                "{r:.2}× ({} vs {})",
                crate::measure::ms(s.median(1)),
                crate::measure::ms(s.median(0))
            ),
            r <= WT_LIST_BUDGET,
        );
    }
    let first = crate::first_row(env, &dir, cfg.runs_real, errlog);
    report.note(format!(
        "`ls --status` [{fixture}]: its first row after {}, all of it after {} (medians of {})",
        crate::measure::ms(first.0),
        crate::measure::ms(first.1),
        cfg.runs_real
    ));
    for (i, what) in [(1, "`gc --dry-run`"), (2, "`ls --status`")] {
        let m = samples.peak_kib(i) as f64 / 1024.0;
        report.target(
            format!("peak memory of {what} ≤ {PEAK_MIB_BUDGET} MiB [{fixture}]"),
            format!("{m:.1} MiB"),
            m <= PEAK_MIB_BUDGET,
        );
    }
    // The real run last: it removes what it can.
    let real = run_one(&mut env.bullpen(&dir, &["gc"]), errlog);
    report.mem(MemRow {
        what: "`gc` on a real repository".into(),
        fixture: fixture.clone(),
        kib: real.maxrss_kib,
        baseline: "`git status` in one worktree".into(),
        baseline_kib: samples.peak_kib(0),
        budget_mib: Some(PEAK_MIB_BUDGET),
    });
    let m = real.maxrss_kib as f64 / 1024.0;
    report.target(
        format!("peak memory of `gc` ≤ {PEAK_MIB_BUDGET} MiB [{fixture}]"),
        format!("{m:.1} MiB"),
        m <= PEAK_MIB_BUDGET,
    );
    report.note(format!(
        "`gc` on {name}: removed {} sessions in {:.1} s",
        pushed.len() + merged.len(),
        real.wall.as_secs_f64()
    ));
}
