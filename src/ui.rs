//! Where output goes: every command gets a [`Ui`] with its stdout, its stderr
//! and the colour decision, the way gitoxide-core functions take `out` and
//! `err`. No library module prints to the process's streams itself, so every
//! message can be captured in a test without starting a process.
//!
//! Data goes to stdout; progress (`bullpen: ...`), warnings (`warning: ...`),
//! errors (`error: ...`) and hints (`hint: ...`) go to stderr, as git does.

use std::cell::{RefCell, RefMut};
use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::rc::Rc;

use anyhow::{Context, Result};

use crate::model::error::{classify, Kind};

pub struct Ui {
    out: RefCell<Box<dyn Write>>,
    err: RefCell<Box<dyn Write>>,
    color: bool,
    /// stderr is a terminal: progress is drawn there.
    err_terminal: bool,
    /// The progress bar being drawn, if any: lines on stderr go above it.
    bar: RefCell<Option<indicatif::ProgressBar>>,
}

impl Ui {
    /// The process's streams. stdout is buffered (a line-buffered stdout makes
    /// one write(2) per line: 21,000 for `ls --json` at 1,000 sessions); callers
    /// [`Ui::flush`] before anything else writes to the same terminal.
    pub fn stdio() -> Ui {
        let color = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let mut ui = Ui::new(
            Box::new(std::io::BufWriter::new(std::io::stdout())),
            Box::new(std::io::stderr()),
            color,
        );
        ui.err_terminal = std::io::stderr().is_terminal();
        ui
    }

    pub fn new(out: Box<dyn Write>, err: Box<dyn Write>, color: bool) -> Ui {
        Ui {
            out: RefCell::new(out),
            err: RefCell::new(err),
            color,
            err_terminal: false,
            bar: RefCell::new(None),
        }
    }

    /// Progress over `total` items on stderr when it is a terminal (a bar,
    /// with the item at hand); nothing otherwise: the report says the rest.
    pub fn progress(&self, total: u64, what: &str) -> Progress<'_> {
        if !self.err_terminal || total == 0 {
            return Progress {
                ui: self,
                on: false,
            };
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "{what} {{bar:30}} {{pos}}/{{len}} {{elapsed}} {{wide_msg}}"
        )) {
            bar.set_style(style);
        }
        *self.bar.borrow_mut() = Some(bar);
        Progress { ui: self, on: true }
    }

    /// A Ui that writes into buffers (for tests): (ui, stdout, stderr).
    pub fn capture(color: bool) -> (Ui, Captured, Captured) {
        let out = Captured::default();
        let err = Captured::default();
        let ui = Ui::new(Box::new(out.clone()), Box::new(err.clone()), color);
        (ui, out, err)
    }

    /// stdout, for data.
    pub fn out(&self) -> RefMut<'_, Box<dyn Write>> {
        self.out.borrow_mut()
    }

    /// Whether stdout gets colour.
    pub fn color(&self) -> bool {
        self.color
    }

    /// A line on stderr. A stderr that cannot be written to has nowhere to
    /// report that either: the line is dropped.
    fn line(&self, prefix: &str, msg: impl Display) {
        let write = || {
            let mut err = self.err.borrow_mut();
            let _ = writeln!(err, "{prefix}{msg}");
            let _ = err.flush();
        };
        match self.bar.borrow().as_ref() {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Progress and information: `bullpen: ...`.
    pub fn info(&self, msg: impl Display) {
        self.line("bullpen: ", msg);
    }

    /// `warning: ...`
    pub fn warn(&self, msg: impl Display) {
        self.line("warning: ", msg);
    }

    /// `hint: ...`
    pub fn hint(&self, msg: impl Display) {
        self.line("hint: ", msg);
    }

    /// The error and its hints, as git prints them; returns its kind.
    pub fn error(&self, e: &anyhow::Error) -> Kind {
        let (kind, hints) = classify(e);
        self.line("error: ", format!("{e:#}"));
        for h in hints {
            self.hint(h);
        }
        kind
    }

    /// `value` as pretty JSON and a newline on stdout. serde_json's error hides
    /// the underlying `io::Error`; it is turned back into one so that a closed
    /// pipe (`... --json | head`) is recognised by `main` and exits quietly.
    pub fn write_json(&self, value: &impl serde::Serialize) -> Result<()> {
        let mut out = self.out();
        serde_json::to_writer_pretty(&mut *out, value)
            .map_err(std::io::Error::from)
            .context("cannot write JSON")?;
        writeln!(out).context("cannot write to stdout")
    }

    /// Push out what is buffered for stdout.
    pub fn flush(&self) -> Result<()> {
        self.out().flush().context("cannot write to stdout")
    }
}

/// A progress display from [`Ui::progress`]; does nothing when there is none.
pub struct Progress<'a> {
    ui: &'a Ui,
    on: bool,
}

impl Progress<'_> {
    fn with(&self, f: impl FnOnce(&indicatif::ProgressBar)) {
        if self.on {
            if let Some(bar) = self.ui.bar.borrow().as_ref() {
                f(bar);
            }
        }
    }

    /// The item at hand.
    pub fn working_on(&self, what: &str) {
        self.with(|b| b.set_message(what.to_owned()));
    }

    /// One more item done.
    pub fn done(&self) {
        self.with(|b| b.inc(1));
    }

    /// Run `f` with the bar out of the way (it prints to stderr itself).
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let bar = self.ui.bar.borrow_mut().take();
        let r = match &bar {
            Some(b) => b.suspend(f),
            None => f(),
        };
        *self.ui.bar.borrow_mut() = bar;
        r
    }

    /// Clear the bar: what follows is the report.
    pub fn finish(&self) {
        if self.on {
            if let Some(bar) = self.ui.bar.borrow_mut().take() {
                bar.finish_and_clear();
            }
        }
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A shared buffer that a [`Ui`] writes into (see [`Ui::capture`]).
#[derive(Clone, Default)]
pub struct Captured(Rc<RefCell<Vec<u8>>>);

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Error;

    #[test]
    fn errors_print_with_their_hints_and_kind() {
        let (ui, out, err) = Ui::capture(false);
        let e = anyhow::Error::new(Error::refused("occupied").hint("move it aside"))
            .context("cannot resume session x");
        assert_eq!(ui.error(&e), Kind::Refused);
        ui.info("done");
        assert_eq!(
            err.text(),
            "error: cannot resume session x: occupied\nhint: move it aside\nbullpen: done\n"
        );
        assert_eq!(out.text(), "");
    }
}
