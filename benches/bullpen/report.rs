//! The figures, printed as Markdown tables (pasteable into the README).

use std::time::Duration;

use crate::measure::{mib, ms, Case, Samples};

pub struct TimeRow {
    pub what: String,
    pub fixture: String,
    pub bullpen: Duration,
    pub baseline: Duration,
    /// Median CPU time (user + system, children included) of each side.
    pub bullpen_cpu: Duration,
    pub baseline_cpu: Duration,
    /// Maximum allowed ratio bullpen / baseline, when the issue sets one.
    pub budget: Option<f64>,
}

impl TimeRow {
    pub fn ratio(&self) -> f64 {
        self.bullpen.as_secs_f64() / self.baseline.as_secs_f64().max(1e-9)
    }

    pub fn cpu_ratio(&self) -> f64 {
        self.bullpen_cpu.as_secs_f64() / self.baseline_cpu.as_secs_f64().max(1e-9)
    }
}

pub struct MemRow {
    pub what: String,
    pub fixture: String,
    pub kib: u64,
    pub baseline: String,
    pub baseline_kib: u64,
    pub budget_mib: Option<f64>,
}

/// One target of issue 17 ("at git's floor"): what it is, the figure measured
/// in this run, and whether it was met.
pub struct Target {
    pub what: String,
    pub figure: String,
    pub met: bool,
}

#[derive(Default)]
pub struct Report {
    pub times: Vec<TimeRow>,
    pub mems: Vec<MemRow>,
    pub targets: Vec<Target>,
    pub notes: Vec<String>,
    /// Raw samples: (label, wall times in ms).
    pub details: Vec<(String, Vec<Duration>)>,
}

impl Report {
    pub fn time(&mut self, row: TimeRow) {
        eprintln!(
            "  {} [{}]: {} vs {} = {:.2}x (CPU {:.2}x){}",
            row.what,
            row.fixture,
            ms(row.bullpen),
            ms(row.baseline),
            row.ratio(),
            row.cpu_ratio(),
            verdict_time(&row)
                .map(|v| format!(" (budget {v})"))
                .unwrap_or_default()
        );
        self.times.push(row);
    }

    pub fn mem(&mut self, row: MemRow) {
        eprintln!(
            "  peak RSS {} [{}]: {}",
            row.what,
            row.fixture,
            mib(row.kib)
        );
        self.mems.push(row);
    }

    /// Every sample of every case, for the list at the end.
    pub fn samples(&mut self, fixture: &str, cases: &[Case], s: &Samples) {
        for (i, c) in cases.iter().enumerate() {
            self.details
                .push((format!("{} [{fixture}]", c.name), s.walls(i)));
        }
    }

    /// A target with its figure and verdict (printed as a `met`/`missed` line).
    pub fn target(&mut self, what: impl Into<String>, figure: impl Into<String>, met: bool) {
        let t = Target {
            what: what.into(),
            figure: figure.into(),
            met,
        };
        eprintln!("  target {}: {} ({})", t.what, t.figure, met_word(t.met));
        self.targets.push(t);
    }

    pub fn note(&mut self, note: String) {
        eprintln!("note: {note}");
        self.notes.push(note);
    }

    pub fn print(&self) {
        println!("| measurement | fixture | bullpen (median) | baseline (median) | ratio | CPU ratio | budget | verdict |");
        println!("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |");
        // Grouped by measurement (in the order each first ran), then by fixture.
        let group = |what: &str| self.times.iter().position(|t| t.what == what);
        let mut rows: Vec<&TimeRow> = self.times.iter().collect();
        rows.sort_by_key(|r| group(&r.what));
        for r in rows {
            println!(
                "| {} | {} | {} | {} | {:.2}× | {:.2}× | {} | {} |",
                r.what,
                r.fixture,
                ms(r.bullpen),
                ms(r.baseline),
                r.ratio(),
                r.cpu_ratio(),
                r.budget
                    .map(|b| format!("≤ {}×", budget(b)))
                    .unwrap_or("—".into()),
                verdict_time(r).unwrap_or("—")
            );
        }
        println!();
        println!("| peak memory (max RSS) | fixture | bullpen | baseline | budget | verdict |");
        println!("| --- | --- | ---: | --- | --- | --- |");
        let group = |what: &str| self.mems.iter().position(|m| m.what == what);
        let mut mems: Vec<&MemRow> = self.mems.iter().collect();
        mems.sort_by_key(|m| group(&m.what));
        for m in mems {
            let verdict = m.budget_mib.map(|b| {
                if (m.kib as f64) / 1024.0 <= b {
                    "PASS"
                } else {
                    "FAIL"
                }
            });
            println!(
                "| {} | {} | {} | {}: {} | {} | {} |",
                m.what,
                m.fixture,
                mib(m.kib),
                m.baseline,
                mib(m.baseline_kib),
                m.budget_mib
                    .map(|b| format!("≤ {b} MiB"))
                    .unwrap_or("—".into()),
                verdict.unwrap_or("—")
            );
        }
        if !self.targets.is_empty() {
            println!();
            println!("Targets (issue 17), measured side by side in this run:");
            println!();
            for t in &self.targets {
                println!("- {}: {} — {}", t.what, t.figure, met_word(t.met));
            }
        }
        if !self.notes.is_empty() {
            println!();
            for n in &self.notes {
                println!("- {n}");
            }
        }
        println!();
        println!("<details><summary>every sample (ms), in run order</summary>");
        println!();
        for (label, walls) in &self.details {
            let v: Vec<String> = walls
                .iter()
                .map(|d| format!("{:.1}", d.as_secs_f64() * 1000.0))
                .collect();
            println!("- {label}: {}", v.join(", "));
        }
        println!();
        println!("</details>");
    }
}

/// A budget as the issues write it: `1.2`, `0.33` (a third), never 16 digits.
fn budget(b: f64) -> String {
    let s = format!("{b:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn verdict_time(r: &TimeRow) -> Option<&'static str> {
    r.budget
        .map(|b| if r.ratio() <= b { "PASS" } else { "FAIL" })
}

fn met_word(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}
