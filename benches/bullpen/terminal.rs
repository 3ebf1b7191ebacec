//! A background run's terminal through `git bullpen attach`, next to tmux on the
//! same output, each on a real pseudo-terminal that the suite reads as fast as
//! it can (as a fast terminal emulator would), and next to the bare pseudo-
//! terminal (the command on the suite's terminal, no relay at all):
//!
//! - throughput: the time from typing `go` to seeing the end mark of
//!   `seq 1 <N>` (~21 MB for N = 3,000,000), the loop already running;
//! - latency: one keystroke's round trip, from writing `x` to the terminal to
//!   reading its echo back (the inner terminal's line discipline echoes it).
//!
//! tmux keeps a screen and sends the client what changed (it may skip what
//! scrolled by unseen); attach forwards every byte. Both are read until the mark.

use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};
use rustix::pty::{self, OpenptFlags};

use crate::env::{run_ok, Env};
use crate::measure::median;
use crate::report::{MemRow, Report, TimeRow};

const MARK: &[u8] = b"END-OF-SEQ";
const LIMIT: Duration = Duration::from_secs(120);

/// A program on a pseudo-terminal of the suite's.
struct Term {
    master: OwnedFd,
    child: Child,
}

impl Term {
    fn spawn(cmd: Command) -> Term {
        Term::spawn_sized(cmd, 24, 80)
    }

    fn spawn_sized(mut cmd: Command, rows: u16, cols: u16) -> Term {
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = pty::openpt(flags).expect("openpt");
        pty::grantpt(&master).expect("grantpt");
        pty::unlockpt(&master).expect("unlockpt");
        let slave = pty::ioctl_tiocgptpeer(&master, flags).expect("slave");
        let ws = rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&slave, ws).expect("winsize");
        let dup = || std::process::Stdio::from(slave.try_clone().expect("dup"));
        cmd.stdin(dup()).stdout(dup()).stderr(dup());
        // SAFETY: only raw system calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                rustix::process::setsid()?;
                rustix::process::ioctl_tiocsctty(std::os::fd::BorrowedFd::borrow_raw(0))?;
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn on a terminal");
        drop(slave);
        rustix::io::ioctl_fionbio(&master, true).expect("non-blocking");
        Term { master, child }
    }

    fn send(&self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() {
            match rustix::io::write(&self.master, &bytes[at..]) {
                Ok(n) => at += n,
                Err(rustix::io::Errno::AGAIN) => self.wait(PollFlags::OUT),
                Err(e) => panic!("cannot type into the terminal: {e}"),
            }
        }
    }

    fn wait(&self, ev: PollFlags) {
        let mut fds = [PollFd::new(&self.master, ev)];
        let ts = rustix::event::Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        let _ = poll(&mut fds, Some(&ts));
    }

    /// Read until `needle` has been shown; the bytes read.
    fn read_until(&self, needle: &[u8]) -> usize {
        let deadline = Instant::now() + LIMIT;
        let mut buf = vec![0u8; 1 << 16];
        let mut tail: Vec<u8> = Vec::new();
        let mut total = 0;
        loop {
            assert!(Instant::now() < deadline, "never shown: {needle:?}");
            match rustix::io::read(&self.master, &mut buf) {
                Ok(0) => panic!("the terminal closed before {needle:?}"),
                Ok(n) => {
                    total += n;
                    tail.extend_from_slice(&buf[..n]);
                    if tail.windows(needle.len()).any(|w| w == needle) {
                        return total;
                    }
                    let keep = needle.len().saturating_sub(1);
                    if tail.len() > keep {
                        tail.drain(..tail.len() - keep);
                    }
                }
                Err(rustix::io::Errno::AGAIN) => self.wait(PollFlags::IN),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => panic!("reading the terminal: {e}"),
            }
        }
    }

    /// Read whatever is there now and for `quiet` after.
    fn drain(&self, quiet: Duration) {
        let mut buf = vec![0u8; 1 << 16];
        let end = Instant::now() + quiet;
        while Instant::now() < end {
            match rustix::io::read(&self.master, &mut buf) {
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The program every side runs: `seq` on `go`, `cat` (echoing) otherwise.
fn program(n: usize) -> String {
    format!("while read x; do if [ \"$x\" = go ]; then seq 1 {n}; echo END-OF-\"SEQ\"; fi; done")
}

struct Side {
    name: &'static str,
    term: Term,
}

pub fn bench(env: &Env, repo: &Path, runs: usize, n: usize, keys: usize, report: &mut Report) {
    let tmux = crate::env::which("tmux");
    let prog = program(n);
    // bullpen: a background run, attached.
    run_ok(&mut env.bullpen(repo, &["spawn", "--bg", "term", "--", "sh", "-c", &prog]));
    let mut attach = env.bullpen(repo, &["attach", "term"]);
    attach.env("TERM", "xterm-256color");
    let mut sides = vec![Side {
        name: "attach",
        term: Term::spawn(attach),
    }];
    sides[0].term.read_until(b"detach with");
    // tmux: the same program in a session of its own server, attached.
    let tmux_dir = env.root.join("tmux");
    std::fs::create_dir_all(&tmux_dir).expect("mkdir");
    let tmux_cmd = |args: &[&str]| {
        let mut c = env.cmd(tmux.as_deref().unwrap_or(Path::new("tmux")), repo);
        c.args(["-L", "bench", "-f", "/dev/null"])
            .args(args)
            .env("TMUX_TMPDIR", &tmux_dir)
            .env("TERM", "xterm-256color");
        c
    };
    if tmux.is_some() {
        run_ok(&mut tmux_cmd(&[
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "80",
            "-y",
            "24",
            "sh",
            "-c",
            &prog,
        ]));
        run_ok(&mut tmux_cmd(&["set", "-g", "status", "off"]));
        let t = Term::spawn(tmux_cmd(&["attach", "-t", "b"]));
        t.drain(Duration::from_millis(500));
        sides.push(Side {
            name: "tmux",
            term: t,
        });
    } else {
        report.note(
            "tmux is not installed: attach is measured against the bare terminal only".into(),
        );
    }
    // The bare terminal: the program on the suite's own terminal.
    let mut bare = env.cmd("sh", repo);
    bare.args(["-c", &prog]);
    sides.push(Side {
        name: "bare pty",
        term: Term::spawn(bare),
    });
    for s in &sides {
        s.term.drain(Duration::from_millis(200));
    }

    // Throughput: one warm-up each, then `runs` rounds, the order rotating.
    let mut seq: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    for round in 0..=runs {
        for k in 0..sides.len() {
            let i = (k + round) % sides.len();
            let t = &sides[i].term;
            let start = Instant::now();
            t.send(b"go\r");
            t.read_until(MARK);
            if round > 0 {
                seq[i].push(start.elapsed());
            }
            t.drain(Duration::from_millis(100));
        }
    }
    // Latency: `keys` keystrokes each, interleaved; a newline now and then
    // keeps the line short (not measured).
    let mut lat: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    for key in 0..keys {
        for (i, s) in sides.iter().enumerate() {
            if key % 40 == 0 {
                s.term.send(b"\r");
                s.term.drain(Duration::from_millis(30));
            }
            let start = Instant::now();
            s.term.send(b"x");
            s.term.read_until(b"x");
            lat[i].push(start.elapsed());
        }
    }
    let find = |name: &str| sides.iter().position(|s| s.name == name);
    let label = format!("`seq 1 {n}` (~{} MB), attached", n * 8 / 1_000_000);
    let pairs = [
        ("tmux", "through `attach` vs through tmux"),
        ("bare pty", "through `attach` vs the bare terminal"),
    ];
    let a = find("attach").expect("attach");
    for (other, what) in pairs {
        if let Some(o) = find(other) {
            let (x, y) = (median(seq[a].clone()), median(seq[o].clone()));
            report.time(TimeRow {
                what: format!("output throughput {what}"),
                fixture: label.clone(),
                bullpen: x,
                baseline: y,
                bullpen_cpu: x,
                baseline_cpu: y,
                budget: None,
            });
            let (x, y) = (median(lat[a].clone()), median(lat[o].clone()));
            report.time(TimeRow {
                what: format!("one keystroke's round trip {what}"),
                fixture: format!("{keys} keys, echoed by the inner terminal"),
                bullpen: x,
                baseline: y,
                bullpen_cpu: x,
                baseline_cpu: y,
                budget: None,
            });
        }
    }
    for (i, s) in sides.iter().enumerate() {
        report
            .details
            .push((format!("seq through {}", s.name), seq[i].clone()));
    }
    for (i, s) in sides.iter().enumerate() {
        let l = &lat[i];
        let mut sorted = l.clone();
        sorted.sort();
        report.note(format!(
            "keystroke round trip through {}: median {:.0} µs, p90 {:.0} µs, max {:.0} µs ({} keys)",
            s.name,
            median(l.clone()).as_secs_f64() * 1e6,
            sorted[sorted.len() * 9 / 10].as_secs_f64() * 1e6,
            sorted[sorted.len() - 1].as_secs_f64() * 1e6,
            l.len()
        ));
    }
    report.note(
        "terminal rows: wall times only (their CPU ratio column repeats the wall ratio); \
         the bullpen side is `attach` plus the run's supervisor relaying"
            .into(),
    );
    drop(sides);
    if tmux.is_some() {
        let _ = tmux_cmd(&["kill-server"]).status();
    }
    let _ = env.bullpen(repo, &["stop", "term"]).status();
}

/// A FIFO at `path`, made with mkfifo(1).
fn fifo(path: &Path) {
    run_ok(Command::new("mkfifo").arg(path));
}

/// Block until the program says it is done on the FIFO `done`.
fn wait_done(done: &Path) {
    let mut said = String::new();
    std::io::Read::read_to_string(&mut std::fs::File::open(done).expect("open"), &mut said)
        .expect("read the done FIFO");
}

/// The program of the detached side: `seq` on each line of `go`, then a word on
/// `done` once all of it is written (the terminal's reader has taken all but
/// what the pty buffers: a few KiB).
fn detached_program(n: usize, go: &Path, done: &Path) -> String {
    format!(
        "exec 3<>'{}'; while read x <&3; do seq 1 {n}; echo done > '{}'; done",
        go.display(),
        done.display()
    )
}

/// The supervisor's pid of session `id`, from its record.
fn supervisor_of(env: &Env, repo: &Path, id: &str) -> u32 {
    let json = run_ok(&mut env.git(
        repo,
        &[
            "cat-file",
            "blob",
            &format!("refs/bullpen/sessions/{id}:session.json"),
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).expect("session.json");
    v["process"]["supervisor_pid"]
        .as_u64()
        .expect("a supervisor") as u32
}

/// The CPU time (user and system) process `pid` has spent.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // After the command's name in parentheses: utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')').expect("stat's comm") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_millis(ticks * 1000 / hz)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// Issue 24's figures: output throughput with nobody attached (the supervisor's
/// model on) against a detached tmux session on the same output; the
/// supervisor's resident memory with 10,000 lines of 200-column output; the time
/// from starting `attach` to the first full screen drawn.
pub fn screen(env: &Env, repo: &Path, runs: usize, n: usize, report: &mut Report) {
    let dir = env.root.join("screen");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let (go, done) = (dir.join("go"), dir.join("done"));
    fifo(&go);
    fifo(&done);
    let prog = detached_program(n, &go, &done);
    run_ok(&mut env.bullpen(
        repo,
        &["spawn", "--bg", "detached", "--", "sh", "-c", &prog],
    ));
    let mut sides: Vec<(&str, std::path::PathBuf, std::path::PathBuf)> =
        vec![("bullpen", go.clone(), done.clone())];
    // The CPU each side's keeper of the screen spends: the supervisor, tmux's server.
    let mut keepers = vec![supervisor_of(env, repo, "detached")];
    let tmux = crate::env::which("tmux");
    let tmux_dir = env.root.join("tmux-screen");
    let tmux_cmd = |args: &[&str]| {
        let mut c = env.cmd(tmux.as_deref().unwrap_or(Path::new("tmux")), repo);
        c.args(["-L", "screen", "-f", "/dev/null"])
            .args(args)
            .env("TMUX_TMPDIR", &tmux_dir)
            .env("TERM", "xterm-256color");
        c
    };
    if tmux.is_some() {
        std::fs::create_dir_all(&tmux_dir).expect("mkdir");
        let (tgo, tdone) = (dir.join("tgo"), dir.join("tdone"));
        fifo(&tgo);
        fifo(&tdone);
        let tprog = detached_program(n, &tgo, &tdone);
        run_ok(&mut tmux_cmd(&[
            "new-session",
            "-d",
            "-s",
            "d",
            "-x",
            "80",
            "-y",
            "24",
            "sh",
            "-c",
            &tprog,
        ]));
        sides.push(("tmux", tgo, tdone));
        let pid = run_ok(&mut tmux_cmd(&["display-message", "-p", "#{pid}"]));
        keepers.push(pid.trim().parse().expect("the tmux server's pid"));
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    // Right after each burst: the time from starting `attach` to the screen
    // drawn (the model catches up on what it has not taken in first).
    let mut after_burst = Vec::new();
    let last = n.to_string();
    for round in 0..=runs {
        for k in 0..sides.len() {
            let i = (k + round) % sides.len();
            let (side, go, done) = &sides[i];
            let (start, before) = (Instant::now(), cpu_time(keepers[i]));
            std::fs::write(go, "go\n").expect("go");
            wait_done(done);
            if round > 0 {
                times[i].push(start.elapsed());
                cpu[i].push(cpu_time(keepers[i]).saturating_sub(before));
            }
            if *side == "bullpen" && round > 0 {
                let start = Instant::now();
                let t = Term::spawn(env.bullpen(repo, &["attach", "detached"]));
                t.read_until(last.as_bytes());
                after_burst.push(start.elapsed());
                t.send(b"\x1c");
                t.read_until(b"detached from");
            }
        }
    }
    report.note(format!(
        "from starting `git bullpen attach` to the screen drawn, right after `seq 1 {n}` \
         detached (24 x 80): median {:.1} ms (target: under 50 ms), samples {:?}",
        median(after_burst.clone()).as_secs_f64() * 1e3,
        after_burst
            .iter()
            .map(|d| format!("{:.1}", d.as_secs_f64() * 1e3))
            .collect::<Vec<_>>()
    ));
    if sides.len() > 1 {
        let (x, y) = (median(times[0].clone()), median(times[1].clone()));
        let (xc, yc) = (median(cpu[0].clone()), median(cpu[1].clone()));
        report.time(TimeRow {
            what: "output throughput detached (the supervisor's model on) vs a detached tmux"
                .into(),
            fixture: format!("`seq 1 {n}` (~{} MB)", n * 8 / 1_000_000),
            bullpen: x,
            baseline: y,
            bullpen_cpu: xc,
            baseline_cpu: yc,
            budget: Some(1.0),
        });
        report.note(format!(
            "detached `seq 1 {n}`: CPU of the supervisor {:.0} ms, of tmux's server {:.0} ms \
             (medians; the CPU ratio column of that row)",
            xc.as_secs_f64() * 1e3,
            yc.as_secs_f64() * 1e3
        ));
        let _ = tmux_cmd(&["kill-server"]).status();
    }
    let _ = env.bullpen(repo, &["stop", "detached"]).status();

    // Memory and the first screen: 10,000 lines of 200 columns, on a 50 x 200
    // terminal, with the default scrollback and with bullpen.scrollback=10000.
    let lines = "awk 'BEGIN { for (i = 0; i < 10000; i++) printf \"%0200d\\n\", i }'; \
                 printf SCREEN-END; echo done > '{done}'; read x";
    for (id, scrollback) in [("rss", None), ("rss-10k", Some("10000"))] {
        let prog = lines.replace("{done}", &done.display().to_string());
        let mut spawn = env.bullpen(repo, &["spawn", "--bg", id, "--", "sh", "-c", &prog]);
        if let Some(v) = scrollback {
            spawn.env("GIT_CONFIG_PARAMETERS", format!("'bullpen.scrollback={v}'"));
        }
        let spawn = Term::spawn_sized(spawn, 50, 200);
        wait_done(&done);
        drop(spawn);
        let kib = rss_kib(supervisor_of(env, repo, id));
        report.mem(MemRow {
            what: "a supervisor's resident memory after 10,000 lines of 200 columns".into(),
            fixture: format!(
                "bullpen.scrollback={}",
                scrollback.unwrap_or("1000 (the default)")
            ),
            kib,
            baseline: "the issue's target".into(),
            baseline_kib: 16 * 1024,
            budget_mib: Some(16.0),
        });
        if scrollback.is_some() {
            let _ = env.bullpen(repo, &["stop", id]).status();
            continue;
        }
        let mut first = Vec::new();
        for _ in 0..runs.max(3) {
            let start = Instant::now();
            let t = Term::spawn_sized(env.bullpen(repo, &["attach", id]), 50, 200);
            t.read_until(b"SCREEN-END");
            first.push(start.elapsed());
            t.send(b"\x1c");
            t.read_until(b"detached from");
        }
        let x = median(first.clone());
        report.note(format!(
            "from starting `git bullpen attach` to the first full screen (50 x 200, after \
             10,000 lines): median {:.1} ms (target: under 50 ms), samples {:?}",
            x.as_secs_f64() * 1e3,
            first
                .iter()
                .map(|d| format!("{:.1}", d.as_secs_f64() * 1e3))
                .collect::<Vec<_>>()
        ));
        let _ = env.bullpen(repo, &["stop", id]).status();
    }
}
