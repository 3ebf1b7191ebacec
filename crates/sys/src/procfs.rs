//! The one reader of `/proc`: process status lines (start time, group, session),
//! the boot id, the host name, and who uses a directory (processes whose current
//! directory, root, executable or an open file lies inside it; one scan answers
//! for many directories at once), and the mount points of this process's mount
//! namespace. When bullpen cannot look (no `/proc`, another platform), the
//! answers are "gone" for processes and "cannot tell" for directories and mount
//! points, and callers keep what they would have removed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::model::process::{
    descends_from, parse_stat, same_process, session_alive, Group, Identity, ProcessRef, Stat,
};
use crate::model::usage::{Busy, Use, User};
use crate::model::Process;

/// Reads `/proc/<pid>/stat`.
pub fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &text)
}

/// Every process visible in `/proc` right now.
pub fn all_processes() -> Vec<Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat)
        .collect()
}

/// `/proc/<pid>/stat` field 22 (starttime). `None` if the process is gone
/// (a zombie is gone: it has ended, only its parent has not collected it; where
/// nobody reaps orphans it would otherwise look alive forever) or `/proc` is
/// unavailable.
pub fn start_time(pid: u32) -> Option<u64> {
    stat(pid).filter(|s| !s.is_dead()).map(|s| s.start_time)
}

/// This boot's id, read once per process (`ls` and `gc` ask for every running
/// session).
pub fn boot_id() -> Option<String> {
    static BOOT_ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT_ID
        .get_or_init(|| {
            std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|s| s.trim().to_owned())
        })
        .clone()
}

pub fn identity(pid: u32) -> Identity {
    Identity {
        start_time: start_time(pid),
        boot_id: boot_id(),
    }
}

/// A process as bullpen notes it down (pid, start time, boot id).
pub fn process_ref(pid: u32) -> ProcessRef {
    let Identity {
        start_time,
        boot_id,
    } = identity(pid);
    ProcessRef {
        pid,
        start_time,
        boot_id,
    }
}

/// Is the recorded process alive (the same process, not a reused pid)?
pub fn is_alive(recorded: &Process) -> bool {
    same_process(recorded, &identity(recorded.pid))
}

/// [`session_alive`] with the facts read from `/proc`.
pub fn is_session_alive(recorded: &Process) -> bool {
    let supervisor = recorded.supervisor_pid.map(identity);
    session_alive(recorded, &identity(recorded.pid), supervisor.as_ref())
}

/// The living processes that descend from `ancestor` now (zombies do not
/// count), in `/proc`'s order.
pub fn descendants(ancestor: u32) -> Vec<u32> {
    let all = all_processes();
    let parents: HashMap<u32, u32> = all.iter().map(|p| (p.pid, p.ppid)).collect();
    all.iter()
        .filter(|p| !p.is_dead() && descends_from(p.pid, ancestor, &parents))
        .map(|p| p.pid)
        .collect()
}

/// The living members of a process group now (zombies do not count: they have ended).
pub fn group_members(group: &Group) -> Vec<u32> {
    group.members(&all_processes())
}

/// This process's process group.
pub fn own_pgrp() -> u32 {
    // libc, not rustix: in a pid namespace whose process group lies outside it
    // getpgrp(2) returns 0, which rustix's Pid cannot hold (it asserts).
    // SAFETY: getpgrp(2) has no preconditions and cannot fail.
    let pgrp = unsafe { libc::getpgrp() };
    u32::try_from(pgrp).unwrap_or(0)
}

/// The host name bullpen records: `BULLPEN_HOSTNAME` when set (tests play two
/// machines on one), else `/proc/sys/kernel/hostname`, else `$HOSTNAME`, else
/// `unknown`; control characters become `?` and it is cut to 255 bytes, so a
/// record from here always passes another machine's checks. Two machines may
/// share a name: records also carry the clone id, which tells them apart.
pub fn hostname() -> String {
    let name = std::env::var(crate::model::config::ENV_HOSTNAME)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_control() { '?' } else { c };
        if out.len() + c.len_utf8() > crate::model::remote::MAX_HOST_BYTES {
            break;
        }
        out.push(c);
    }
    out
}

/// The result of one scan.
#[derive(Debug)]
pub struct Scan {
    result: Result<HashMap<PathBuf, Vec<User>>, String>,
    /// Processes that exist but whose links could not be read (permission).
    pub uninspectable: usize,
}

impl Scan {
    /// The answer for `dir` (one of the directories the scan was asked about).
    pub fn busy(&self, dir: &Path) -> Busy {
        match &self.result {
            Err(why) => Busy::CannotTell(why.clone()),
            Ok(map) => match map.get(&key(dir)) {
                Some(users) if !users.is_empty() => Busy::InUse(users.clone()),
                _ => Busy::Idle,
            },
        }
    }
}

/// The key a directory is matched under: canonical when it exists.
fn key(dir: &Path) -> PathBuf {
    super::paths::canonical_or_self(dir)
}

/// Scan all processes once for uses of any of `dirs`. This process is never
/// counted. Processes that cannot be inspected (other users', or protected ones)
/// are skipped and counted in `uninspectable`: no unprivileged tool can see them.
pub fn scan(dirs: &[PathBuf]) -> Scan {
    let wanted: HashMap<PathBuf, PathBuf> = dirs.iter().map(|d| (key(d), d.clone())).collect();
    if wanted.is_empty() {
        return Scan {
            result: Ok(HashMap::new()),
            uninspectable: 0,
        };
    }
    platform::scan(&wanted)
}

/// The directory among `wanted` (keys) that contains `target`, if any.
fn owner<'a>(wanted: &'a HashMap<PathBuf, PathBuf>, target: &Path) -> Option<&'a PathBuf> {
    target
        .ancestors()
        .find_map(|a| wanted.get_key_value(a).map(|(k, _)| k))
}

/// Every mount point this process sees (`/proc/self/mountinfo`'s fifth field,
/// its octal escapes undone). `Err`: why they cannot be read.
pub fn mount_points() -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo ({e})"))?;
    Ok(parse_mountinfo(&text))
}

/// The mount points of a `mountinfo` text.
fn parse_mountinfo(text: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    text.split(|b| *b == b'\n')
        .filter_map(|line| line.split(|b| *b == b' ').nth(4))
        .map(|field| PathBuf::from(std::ffi::OsString::from_vec(unescape(field))))
        .collect()
}

/// `\040` (space), `\011`, `\012`, `\134` back to their bytes.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)))
            .map(|d| d.iter().fold(0u32, |n, b| n * 8 + u32::from(b - b'0')));
        match octal.and_then(|n| u8::try_from(n).ok()) {
            Some(byte) => {
                out.push(byte);
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

/// Whether a process of the terminal's foreground process group `pgrp` is
/// blocked waiting on the terminal (`tty`: its device number): in a `read` of
/// it (`/proc/<pid>/syscall`: the call and its descriptor), or, for a program
/// that has put the terminal in raw mode (`raw`: a full-screen program, which
/// waits in an event loop), in a `poll`/`select`/`epoll` with the terminal
/// open. `false` when it cannot be told (another user's process, no `/proc`).
/// `members`: also look at the group's other members (a scan of `/proc`),
/// where the leader alone does not wait.
pub fn waits_on_terminal(pgrp: u32, tty: u64, raw: bool, members: bool) -> bool {
    // The leader first: most often the one that reads.
    if waits_on(pgrp, tty, raw) {
        return true;
    }
    members
        && all_processes()
            .iter()
            .filter(|p| p.pgrp == pgrp && p.pid != pgrp && !p.is_dead())
            .any(|p| waits_on(p.pid, tty, raw))
}

fn waits_on(pid: u32, tty: u64, raw: bool) -> bool {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return false;
    };
    let mut fields = text.split_whitespace();
    let Some(nr) = fields.next().and_then(|n| n.parse::<libc::c_long>().ok()) else {
        return false; // "running", or "-1 ..." (not in a system call)
    };
    let is_tty = |fd: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|m| m.rdev() == tty)
    };
    if syscalls::READS.contains(&nr) {
        let fd = fields
            .next()
            .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
        return fd.is_some_and(|fd| is_tty(&fd.to_string()));
    }
    raw && syscalls::WAITS.contains(&nr) && (0..3).any(|fd: u32| is_tty(&fd.to_string()))
}

/// The system calls that read a descriptor and those that wait on several.
mod syscalls {
    #[cfg(target_arch = "x86_64")]
    pub const READS: &[libc::c_long] = &[libc::SYS_read, libc::SYS_readv, libc::SYS_pread64];
    #[cfg(target_arch = "x86_64")]
    pub const WAITS: &[libc::c_long] = &[
        libc::SYS_poll,
        libc::SYS_ppoll,
        libc::SYS_select,
        libc::SYS_pselect6,
        libc::SYS_epoll_wait,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ];
    #[cfg(not(target_arch = "x86_64"))]
    pub const READS: &[libc::c_long] = &[libc::SYS_read, libc::SYS_readv, libc::SYS_pread64];
    #[cfg(not(target_arch = "x86_64"))]
    pub const WAITS: &[libc::c_long] = &[
        libc::SYS_ppoll,
        libc::SYS_pselect6,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ];
}

/// Whether `pid` descends from the process `ancestor` (walking its parents in
/// `/proc`; a chain that breaks or reaches pid 1 first does not).
pub fn is_descendant(pid: u32, ancestor: u32) -> bool {
    let mut at = pid;
    for _ in 0..4096 {
        let Some(s) = stat(at) else {
            return false;
        };
        if s.ppid == ancestor {
            return true;
        }
        if s.ppid <= 1 {
            return false;
        }
        at = s.ppid;
    }
    false
}

/// Does any process exist with this pid (including ones we may not signal)?
/// A pid of 0 or beyond `i32::MAX` (untrusted input) never exists.
pub fn pid_exists(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    let Some(pid) = rustix::process::Pid::from_raw(pid).filter(|_| pid > 0) else {
        return false;
    };
    // Signal 0: only whether it exists (and may be signalled).
    matches!(
        rustix::process::test_kill_process(pid),
        Ok(()) | Err(rustix::io::Errno::PERM)
    )
}

#[cfg(target_os = "linux")]
mod platform {
    use super::*;

    pub fn scan(wanted: &HashMap<PathBuf, PathBuf>) -> Scan {
        let proc_dir = Path::new("/proc");
        let entries = match std::fs::read_dir(proc_dir) {
            Ok(e) => e,
            Err(err) => {
                return Scan {
                    result: Err(format!("cannot read /proc ({err})")),
                    uninspectable: 0,
                }
            }
        };
        let me = std::process::id();
        let mut found: HashMap<PathBuf, Vec<User>> = HashMap::new();
        let mut inspected = 0usize;
        let mut uninspectable = 0usize;
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let base = entry.path();
            let mut denied = false;
            let mut uses: Vec<(PathBuf, Use)> = Vec::new();
            let mut link = |name: &str, how: Use, uses: &mut Vec<(PathBuf, Use)>| {
                match std::fs::read_link(base.join(name)) {
                    Ok(target) => {
                        if let Some(dir) = owner(wanted, &target) {
                            uses.push((dir.clone(), how));
                        }
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => denied = true,
                    Err(_) => {} // gone, or a kernel thread without these links
                }
            };
            link("cwd", Use::Cwd, &mut uses);
            link("root", Use::Root, &mut uses);
            link("exe", Use::Exe, &mut uses);
            match std::fs::read_dir(base.join("fd")) {
                Ok(fds) => {
                    for fd in fds.flatten() {
                        if let Ok(target) = std::fs::read_link(fd.path()) {
                            if let Some(dir) = owner(wanted, &target) {
                                uses.push((dir.clone(), Use::OpenFile));
                            }
                        }
                    }
                }
                Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => denied = true,
                Err(_) => {}
            }
            if denied {
                uninspectable += 1;
            } else {
                inspected += 1;
            }
            if uses.is_empty() {
                continue;
            }
            let name = std::fs::read_to_string(base.join("comm"))
                .map(|s| s.trim().to_owned())
                .unwrap_or_default();
            for (dir, how) in uses {
                let users = found.entry(dir).or_default();
                if !users.iter().any(|u| u.pid == pid) {
                    users.push(User {
                        pid,
                        name: name.clone(),
                        how,
                    });
                }
            }
        }
        if inspected == 0 {
            return Scan {
                result: Err("no process could be inspected through /proc".to_owned()),
                uninspectable,
            };
        }
        for users in found.values_mut() {
            users.sort_by_key(|u| u.pid);
        }
        Scan {
            result: Ok(found),
            uninspectable,
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    use super::*;

    pub fn scan(_wanted: &HashMap<PathBuf, PathBuf>) -> Scan {
        Scan {
            result: Err(format!(
                "bullpen cannot yet see which processes use a directory on {}",
                std::env::consts::OS
            )),
            uninspectable: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_matches_ancestors_only() {
        let mut wanted = HashMap::new();
        wanted.insert(PathBuf::from("/w/a"), PathBuf::from("/w/a"));
        assert_eq!(
            owner(&wanted, Path::new("/w/a/x/y")),
            Some(&PathBuf::from("/w/a"))
        );
        assert_eq!(
            owner(&wanted, Path::new("/w/a")),
            Some(&PathBuf::from("/w/a"))
        );
        assert_eq!(owner(&wanted, Path::new("/w/ab")), None);
        assert_eq!(owner(&wanted, Path::new("/w")), None);
    }

    #[test]
    fn mount_points_are_the_fifth_field_unescaped() {
        let text = b"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                     90 22 0:50 / /w/a\\040b/c\\134d rw - tmpfs none rw\n";
        assert_eq!(
            parse_mountinfo(text),
            vec![PathBuf::from("/"), PathBuf::from("/w/a b/c\\d")]
        );
        assert_eq!(unescape(b"x\\01"), b"x\\01".to_vec());
        assert!(mount_points().is_ok_and(|m| m.contains(&PathBuf::from("/"))));
    }

    #[test]
    fn reads_own_start_time() {
        assert!(start_time(std::process::id()).is_some());
        assert!(boot_id().is_some());
    }

    #[test]
    fn pid_zero_and_huge_never_exist() {
        assert!(!pid_exists(0));
        assert!(!pid_exists(u32::MAX));
        assert!(pid_exists(std::process::id()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sees_a_child_with_its_cwd_inside() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        let scan = scan(&[dir.path().to_path_buf()]);
        let busy = scan.busy(dir.path());
        let _ = child.kill();
        let _ = child.wait();
        match busy {
            Busy::InUse(users) => {
                assert!(users
                    .iter()
                    .any(|u| u.pid == child.id() && u.how == Use::Cwd));
            }
            other => panic!("expected busy, got {other:?}"),
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn own_process_is_not_counted() {
        let cwd = std::env::current_dir().unwrap();
        let scan = scan(std::slice::from_ref(&cwd));
        if let Busy::InUse(users) = scan.busy(&cwd) {
            assert!(users.iter().all(|u| u.pid != std::process::id()));
        }
    }
}
