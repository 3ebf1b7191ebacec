//! Timing and peak memory of child processes, and interleaved comparisons.
//!
//! Each sample is the wall time from spawning a process to reaping it, and its
//! peak resident set from `wait4(2)` (which covers the process and every child it
//! waited for, e.g. the `git worktree add` that `spawn` runs). Output goes to
//! /dev/null for every command alike.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    pub wall: Duration,
    /// User + system CPU time of the process and the children it waited for:
    /// steadier than wall time on a loaded machine (no time spent waiting for a core).
    pub cpu: Duration,
    /// Peak RSS in KiB (`ru_maxrss` on Linux).
    pub maxrss_kib: u64,
}

/// Run one process to completion; panics (with its stderr) if it fails, so that a
/// broken fixture never produces a figure.
pub fn run_one(cmd: &mut Command, errlog: &Path) -> Sample {
    let err = std::fs::File::create(errlog).expect("create stderr log");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err));
    let start = Instant::now();
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: plain wait4 on our own child; rusage is a plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = loop {
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break r;
    };
    let wall = start.elapsed();
    // The child is reaped; `Child` does not wait or kill on drop.
    drop(child);
    assert_eq!(r, pid, "wait4 failed: {}", std::io::Error::last_os_error());
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if !ok {
        panic!(
            "{cmd:?} failed (wait status {status:#x}); stderr:\n{}",
            std::fs::read_to_string(errlog).unwrap_or_default()
        );
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Sample {
        wall,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        maxrss_kib: usage.ru_maxrss as u64,
    }
}

/// Run a sequence of processes one after the other (a baseline made of several
/// git commands): total wall time, largest peak RSS.
pub fn run_seq(cmds: Vec<Command>, errlog: &Path) -> Sample {
    let start = Instant::now();
    let mut maxrss = 0;
    let mut cpu = Duration::ZERO;
    for mut c in cmds {
        let s = run_one(&mut c, errlog);
        maxrss = maxrss.max(s.maxrss_kib);
        cpu += s.cpu;
    }
    Sample {
        wall: start.elapsed(),
        cpu,
        maxrss_kib: maxrss,
    }
}

/// One side of a comparison: a name and how to build the processes of one run.
/// `before`/`after` run untimed around each sample (set-up and clean-up).
pub struct Case<'a> {
    pub name: &'static str,
    pub build: Box<dyn Fn(usize) -> Vec<Command> + 'a>,
    pub after: Option<Box<dyn Fn(usize) + 'a>>,
}

impl<'a> Case<'a> {
    pub fn new(name: &'static str, build: impl Fn(usize) -> Vec<Command> + 'a) -> Case<'a> {
        Case {
            name,
            build: Box::new(build),
            after: None,
        }
    }

    pub fn then(mut self, after: impl Fn(usize) + 'a) -> Case<'a> {
        self.after = Some(Box::new(after));
        self
    }
}

/// The samples of every case, in the order the cases were given.
pub struct Samples {
    pub per_case: Vec<Vec<Sample>>,
}

impl Samples {
    pub fn median(&self, case: usize) -> Duration {
        median(self.per_case[case].iter().map(|s| s.wall).collect())
    }

    pub fn median_cpu(&self, case: usize) -> Duration {
        median(self.per_case[case].iter().map(|s| s.cpu).collect())
    }

    pub fn peak_kib(&self, case: usize) -> u64 {
        self.per_case[case]
            .iter()
            .map(|s| s.maxrss_kib)
            .max()
            .unwrap_or(0)
    }

    pub fn walls(&self, case: usize) -> Vec<Duration> {
        self.per_case[case].iter().map(|s| s.wall).collect()
    }
}

/// Run every case `runs` times, interleaved (run r: case A, case B, ...; the
/// order rotates each run so neither side always goes first), after one untimed
/// warm-up of each case (page cache, lazy state) unless `warmup` is false.
pub fn compare(cases: &[Case], runs: usize, warmup: bool, errlog: &Path) -> Samples {
    let mut per_case = vec![Vec::new(); cases.len()];
    let mut round = 0;
    if warmup {
        for c in cases {
            run_seq((c.build)(round), errlog);
            if let Some(after) = &c.after {
                after(round);
            }
        }
        round += 1;
    }
    for r in 0..runs {
        for k in 0..cases.len() {
            let i = (k + r) % cases.len();
            let c = &cases[i];
            let s = run_seq((c.build)(round), errlog);
            per_case[i].push(s);
            if let Some(after) = &c.after {
                after(round);
            }
        }
        round += 1;
    }
    Samples { per_case }
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Run one process, reading its stdout as it comes: the time from its start
/// to the end of its line `lines` (1: the first), and the whole run's sample.
/// Panics (with its stderr) if it fails.
pub fn to_line(cmd: &mut Command, lines: usize, errlog: &Path) -> (Duration, Sample) {
    use std::io::Read;
    let err = std::fs::File::create(errlog).expect("create stderr log");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(err));
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let mut out = child.stdout.take().expect("stdout");
    let mut seen = 0;
    let mut at = None;
    let mut buf = [0u8; 65536];
    loop {
        let n = out.read(&mut buf).expect("read stdout");
        if n == 0 {
            break;
        }
        if at.is_none() {
            seen += buf[..n].iter().filter(|b| **b == b'\n').count();
            if seen >= lines {
                at = Some(start.elapsed());
            }
        }
    }
    drop(out);
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: plain wait4 on our own child; rusage is a plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = loop {
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break r;
    };
    let wall = start.elapsed();
    drop(child);
    assert_eq!(r, pid, "wait4 failed: {}", std::io::Error::last_os_error());
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        panic!(
            "{cmd:?} failed (wait status {status:#x}); stderr:\n{}",
            std::fs::read_to_string(errlog).unwrap_or_default()
        );
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let sample = Sample {
        wall,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        maxrss_kib: usage.ru_maxrss as u64,
    };
    (at.unwrap_or(wall), sample)
}
