//! The sizes a run's terminal had, for `logs` (the log itself stays the raw
//! byte stream): one line per size, `<log inode> <log offset> <rows>x<cols>`,
//! appended by the supervisor to `local/<id>/sizes` when the run starts and at
//! each resize, before any byte written at that size reaches the log. A line
//! whose inode is not the log's now is of a log since removed: not this one's.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::SessionId;
use crate::sys::layout::Layout;

/// From `offset` on, the log was written at `rows` x `cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub offset: u64,
    pub rows: u16,
    pub cols: u16,
}

/// The file of a session's sizes.
pub fn path(layout: &Layout, id: &SessionId) -> PathBuf {
    layout.local_dir(id).join("sizes")
}

/// Pure: one line of the file.
pub fn format(inode: u64, size: Size) -> String {
    format!("{inode} {} {}x{}\n", size.offset, size.rows, size.cols)
}

/// Pure: the sizes of the log whose inode is `inode`, in the order written. A
/// line that is not one (cut short by a crash) is skipped.
pub fn parse(text: &str, inode: u64) -> Vec<Size> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let ino: u64 = words.next()?.parse().ok()?;
            let offset: u64 = words.next()?.parse().ok()?;
            let (rows, cols) = words.next()?.split_once('x')?;
            let size = Size {
                offset,
                rows: rows.parse().ok().filter(|&n| n > 0)?,
                cols: cols.parse().ok().filter(|&n| n > 0)?,
            };
            (ino == inode && words.next().is_none()).then_some(size)
        })
        .collect()
}

/// The supervisor's side: appends a line whenever the size changes.
pub struct Recorder {
    file: PathBuf,
    last: Option<(u16, u16)>,
}

impl Recorder {
    pub fn new(file: PathBuf) -> Recorder {
        Recorder { file, last: None }
    }

    /// The terminal is `rows` x `cols` from the log's current end on.
    pub fn record(&mut self, log: &std::fs::File, rows: u16, cols: u16) -> Result<()> {
        if self.last == Some((rows, cols)) {
            return Ok(());
        }
        let meta = log.metadata().context("cannot read the size of the log")?;
        let line = format(
            meta.ino(),
            Size {
                offset: meta.len(),
                rows,
                cols,
            },
        );
        append(&self.file, &line)?;
        self.last = Some((rows, cols));
        Ok(())
    }
}

fn append(file: &Path, line: &str) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(file)
        .with_context(|| format!("cannot open {}", file.display()))?;
    // One write: a line is never interleaved with another.
    f.write_all(line.as_bytes())
        .with_context(|| format!("cannot write to {}", file.display()))
}

/// `logs`' side: the sizes recorded for the log `log` (none when there is no
/// file: a run of an older bullpen, or one started elsewhere).
pub fn read(file: &Path, log: &std::fs::File) -> Result<Vec<Size>> {
    let inode = log
        .metadata()
        .with_context(|| format!("cannot read the log's inode for {}", file.display()))?
        .ino();
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(parse(&text, inode)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_another_log_and_broken_lines_are_skipped() {
        let a = Size {
            offset: 0,
            rows: 50,
            cols: 200,
        };
        let b = Size {
            offset: 1234,
            rows: 30,
            cols: 100,
        };
        let text = format!(
            "{}{}{}7 9 1x\n7 9 0x5\n7 9 3x4 extra\n7 12",
            format(7, a),
            format(8, b),
            format(7, b)
        );
        assert_eq!(parse(&text, 7), [a, b]);
        assert_eq!(parse(&text, 8), [b]);
        assert_eq!(parse("", 7), []);
    }
}
