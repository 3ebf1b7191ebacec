//! Issue 26: the cost of `--sandbox` on spawn, side by side with the same
//! spawn unconfined (the ruleset made, a private TMPDIR, Landlock before exec).

use std::path::Path;

use crate::env::Env;
use crate::fixtures::Repo;
use crate::measure::{compare, Case};
use crate::report::{Report, TimeRow};

/// `spawn --sandbox <id> -- true` against `spawn <id> -- true`, interleaved.
pub fn bench_sandbox(env: &Env, repo: &Repo, runs: usize, errlog: &Path, report: &mut Report) {
    let dir = &repo.dir;
    let cases = vec![
        Case::new("git bullpen spawn <id> -- true", |r| {
            vec![env.bullpen(dir, &["spawn", &format!("u{r}"), "--", "true"])]
        }),
        Case::new("git bullpen spawn --sandbox <id> -- true", |r| {
            vec![env.bullpen(
                dir,
                &[
                    "spawn",
                    "--sandbox=best-effort",
                    &format!("s{r}"),
                    "--",
                    "true",
                ],
            )]
        }),
    ];
    let s = compare(&cases, runs, true, errlog);
    report.time(TimeRow {
        what: "`spawn --sandbox <id> -- true` vs `spawn <id> -- true`".into(),
        fixture: "small repo".into(),
        bullpen: s.median(1),
        baseline: s.median(0),
        bullpen_cpu: s.median_cpu(1),
        baseline_cpu: s.median_cpu(0),
        budget: None,
    });
}
