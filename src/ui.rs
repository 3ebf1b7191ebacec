//! Where output goes: every command gets a [`Ui`] with its stdout, its stderr
//! and the colour decision, the way gitoxide-core functions take `out` and
//! `err`. No library module prints to the process's streams itself, so every
//! message can be captured in a test without starting a process.
//!
//! Data goes to stdout; progress (`bullpen: ...`), warnings (`warning: ...`),
//! errors (`fatal: ...`, as git's `die()`; `error: ...` for a usage error, as
//! git's option parser) and hints (`hint: ...`) go to stderr, as git does.
//!
//! Colour is decided here and nowhere else ([`decide_color`]), in git's order:
//! `--color` beats git config `color.bullpen`, which beats `color.ui`; `auto`
//! (the default) means stdout is a terminal that is not `TERM=dumb`, or a pager
//! (ours, or git's when it pages `git bullpen` for `pager.bullpen`: then stdout
//! is its pipe and `GIT_PAGER_IN_USE` says so) unless `color.pager` is false, and
//! (an addition: git 2.47 ignores it) `NO_COLOR` is not set to a non-empty value.
//!
//! `-q` ([`Ui::set_quiet`]) drops the `bullpen:` lines and the progress bar. The
//! pager of `ls` and `logs` ([`Ui::want_pager`], [`Ui::start_pager`]) is chosen by
//! `model::pager` and run by `sys::pager`; `main` waits for it ([`Ui::finish_pager`]).

use std::cell::{Cell, RefCell, RefMut};
use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::rc::Rc;

use anyhow::{Context, Result};

use crate::model::config;
use crate::model::error::{classify, GitFailed, Kind};
use crate::model::Error;

/// When to colour: git's `--color=<when>` and the values of its `color.*` keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    Always,
    Never,
    Auto,
}

/// Where output goes, for `auto`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Terminal {
    /// stdout is a terminal.
    pub tty: bool,
    /// `TERM` is unset or `dumb` (git colours nothing there).
    pub dumb: bool,
    /// `NO_COLOR` is set to a non-empty value.
    pub no_color: bool,
    /// stdout goes to a pager: ours, or git's (`GIT_PAGER_IN_USE`, which git
    /// sets when it pages `git bullpen` itself for `pager.bullpen`).
    pub pager_in_use: bool,
}

impl Terminal {
    /// This process's stdout and environment.
    pub fn stdout() -> Terminal {
        let term = std::env::var_os("TERM");
        Terminal {
            tty: std::io::stdout().is_terminal(),
            dumb: term.as_ref().is_none_or(|t| t.is_empty() || t == "dumb"),
            no_color: std::env::var_os(config::ENV_NO_COLOR).is_some_and(|v| !v.is_empty()),
            pager_in_use: std::env::var(config::ENV_GIT_PAGER_IN_USE)
                .is_ok_and(|v| crate::model::pager::is_true(&v)),
        }
    }
}

/// The colour decision: the first of `option` (`--color`), `color.bullpen` and
/// `color.ui` that is given, else `auto`; `auto` colours a terminal that is not
/// dumb, or a pager when `color_pager` (git's `color.pager`, true unless set
/// false), unless `NO_COLOR` asks for none.
pub fn decide_color(
    option: Option<When>,
    color_bullpen: Option<When>,
    color_ui: Option<When>,
    color_pager: bool,
    terminal: Terminal,
) -> bool {
    match option.or(color_bullpen).or(color_ui).unwrap_or(When::Auto) {
        When::Always => true,
        When::Never => false,
        When::Auto => {
            let shown = terminal.tty || (terminal.pager_in_use && color_pager);
            shown && !terminal.dumb && !terminal.no_color
        }
    }
}

/// A `color.*` value as git's `git_config_colorbool` reads it: `always`,
/// `never`, `auto` (any case), or a boolean, true meaning `auto`. `None` is
/// the key alone (`[color] ui`), which is true.
pub fn parse_color_value(key: &str, value: Option<&str>) -> Result<When, Error> {
    let Some(value) = value else {
        return Ok(When::Auto);
    };
    let v = value.to_ascii_lowercase();
    match v.as_str() {
        "always" => Ok(When::Always),
        "never" => Ok(When::Never),
        "auto" => Ok(When::Auto),
        "true" | "yes" | "on" => Ok(When::Auto),
        "false" | "no" | "off" | "" => Ok(When::Never),
        // git reads any other boolean as an integer: non-zero is true.
        _ if v.parse::<i64>().is_ok() => Ok(match v.parse::<i64>() {
            Ok(0) => When::Never,
            _ => When::Auto,
        }),
        _ => Err(
            Error::failed(format!("bad boolean config value '{value}' for '{key}'")).hint(format!(
                "{key} takes always, never, auto, or true/false (git config {key} auto)"
            )),
        ),
    }
}

pub struct Ui {
    out: RefCell<Box<dyn Write>>,
    err: RefCell<Box<dyn Write>>,
    /// `--color`, kept for when the configuration is known.
    option: Option<When>,
    /// Where stdout goes; once our pager runs, to the pager and no terminal.
    terminal: Cell<Terminal>,
    /// `color.bullpen`, `color.ui`, `color.pager`, once read.
    color_config: Cell<(Option<When>, Option<When>, bool)>,
    color: Cell<bool>,
    /// How wide a line of a table may be (`ls`): `None` for as wide as it takes.
    width: Option<usize>,
    /// stderr is a terminal: progress is drawn there.
    err_terminal: Cell<bool>,
    /// The progress bar being drawn, if any: lines on stderr go above it.
    bar: RefCell<Option<indicatif::ProgressBar>>,
    /// `-q`: no progress and no `bullpen:` lines.
    quiet: Cell<bool>,
    /// The command whose output may be paged (`ls`, `logs`), until the
    /// configuration is known ([`Ui::start_pager`]).
    pager_wish: Cell<Option<&'static str>>,
    /// The pager stdout goes through, while it runs.
    pager: RefCell<Option<crate::sys::pager::Pager>>,
}

impl Ui {
    /// The process's streams. stdout is buffered (a line-buffered stdout makes
    /// one write(2) per line: 21,000 for `ls --json` at 1,000 sessions); callers
    /// [`Ui::flush`] before anything else writes to the same terminal. `option`
    /// is `--color`; the configuration joins in [`Ui::configure_color`].
    pub fn stdio(option: Option<When>) -> Ui {
        let mut ui = Ui::new(
            Box::new(std::io::BufWriter::new(std::io::stdout())),
            Box::new(std::io::stderr()),
            false,
        );
        ui.option = option;
        ui.terminal.set(Terminal::stdout());
        ui.recolor();
        ui.width = stdout_width();
        ui.err_terminal.set(std::io::stderr().is_terminal());
        ui
    }

    pub fn new(out: Box<dyn Write>, err: Box<dyn Write>, color: bool) -> Ui {
        let option = Some(if color { When::Always } else { When::Never });
        Ui {
            out: RefCell::new(out),
            err: RefCell::new(err),
            option,
            terminal: Cell::new(Terminal::default()),
            color_config: Cell::new((None, None, true)),
            color: Cell::new(color),
            width: None,
            err_terminal: Cell::new(false),
            bar: RefCell::new(None),
            quiet: Cell::new(false),
            pager_wish: Cell::new(None),
            pager: RefCell::new(None),
        }
    }

    /// Decide colour again with the repository's configuration (`lookup` gives
    /// a key's value: `Some(None)` for a key given without one). A value git
    /// would not accept fails, as in git.
    pub fn configure_color(&self, lookup: impl Fn(&str) -> Option<Option<String>>) -> Result<()> {
        let read = |key: &str| -> Result<Option<When>> {
            match lookup(key) {
                None => Ok(None),
                Some(v) => Ok(Some(parse_color_value(key, v.as_deref())?)),
            }
        };
        // Like git, a bad value is an error even where --color makes it moot.
        let bullpen = read(config::COLOR_BULLPEN)?;
        let ui = read(config::COLOR_UI)?;
        let pager = match lookup(config::COLOR_PAGER) {
            None => true,
            Some(v) => crate::model::pager::config_bool(v.as_deref()).ok_or_else(|| {
                let v = v.unwrap_or_default();
                Error::failed(format!(
                    "bad boolean config value '{v}' for '{}'",
                    config::COLOR_PAGER
                ))
                .hint(format!(
                    "{} takes true or false (git config {} false)",
                    config::COLOR_PAGER,
                    config::COLOR_PAGER
                ))
            })?,
        };
        self.color_config.set((bullpen, ui, pager));
        self.recolor();
        Ok(())
    }

    /// The colour decision again, with what is known now.
    fn recolor(&self) {
        let (bullpen, ui, pager) = self.color_config.get();
        self.color.set(decide_color(
            self.option,
            bullpen,
            ui,
            pager,
            self.terminal.get(),
        ));
    }

    /// Progress over `total` items on stderr when it is a terminal (a bar,
    /// with the item at hand); nothing otherwise: the report says the rest.
    pub fn progress(&self, total: u64, what: &str) -> Progress<'_> {
        if !self.err_terminal.get() || self.quiet.get() || total == 0 {
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
        self.color.get()
    }

    /// How wide a table's lines may be: `$COLUMNS`, else the terminal's when
    /// stdout is one, else `None` (a pipe gets whole lines).
    pub fn width(&self) -> Option<usize> {
        self.width
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

    /// Progress and information: `bullpen: ...`; nothing with `-q`.
    pub fn info(&self, msg: impl Display) {
        if !self.quiet.get() {
            self.line("bullpen: ", msg);
        }
    }

    /// `-q`: from now on no progress and no `bullpen:` lines; warnings, hints,
    /// errors and stdout stay.
    pub fn set_quiet(&self) {
        self.quiet.set(true);
    }

    /// `command`'s output goes through a pager when git's rules say so, once
    /// the repository's configuration is known ([`Ui::start_pager`]).
    pub fn want_pager(&self, command: &'static str) {
        self.pager_wish.set(Some(command));
    }

    /// Start the pager asked for with [`Ui::want_pager`], if git's rules
    /// (`model::pager`) choose one with this configuration (`lookup` as for
    /// [`Ui::configure_color`]). A pager that cannot start is no pager, as in git.
    pub fn start_pager(&self, lookup: impl Fn(&str) -> Option<Option<String>>) {
        let Some(command) = self.pager_wish.take() else {
            return;
        };
        if !self.terminal.get().tty {
            return;
        }
        let env = |key: &str| std::env::var(key).ok();
        let facts = crate::model::pager::Facts {
            tty: true,
            no_pager: false,
            git_pager: env(config::ENV_GIT_PAGER),
            pager: env(config::ENV_PAGER),
            command_key: lookup(&format!("{}.{command}", config::PAGER_BULLPEN)),
            bullpen_key: lookup(config::PAGER_BULLPEN),
            core_pager: lookup(config::CORE_PAGER).flatten(),
        };
        let Some(program) = crate::model::pager::choose(&facts) else {
            return;
        };
        if self.flush().is_err() {
            return;
        }
        let stderr_too = self.err_terminal.get();
        if let Ok(pager) =
            crate::sys::pager::start(&program, crate::model::pager::ENV_DEFAULTS, stderr_too)
        {
            // stderr, if it goes to the pager too, is no place for a bar.
            self.err_terminal.set(false);
            *self.pager.borrow_mut() = Some(pager);
            // stdout is the pager now: `auto` colours it as `color.pager` says.
            self.terminal.set(Terminal {
                tty: false,
                pager_in_use: true,
                ..self.terminal.get()
            });
            self.recolor();
        }
    }

    /// The end of the output: stdout flushed, our own streams back, and the
    /// pager, if one runs, waited for.
    pub fn finish_pager(&self) {
        let pager = self.pager.borrow_mut().take();
        if let Some(pager) = pager {
            let _ = self.flush();
            pager.finish();
        }
    }

    /// `warning: ...`
    pub fn warn(&self, msg: impl Display) {
        self.line("warning: ", msg);
    }

    /// `hint: ...`
    pub fn hint(&self, msg: impl Display) {
        self.line("hint: ", msg);
    }

    /// The error and its hints, as git prints them (`fatal: ...`, or
    /// `error: ...` for a usage error); returns its kind.
    pub fn error(&self, e: &anyhow::Error) -> Kind {
        let (kind, hints) = classify(e);
        let prefix = match kind {
            Kind::Usage => "error: ",
            Kind::Failed | Kind::Refused => "fatal: ",
        };
        let (message, git_said) = message(e);
        if let Some(text) = git_said {
            self.line("", text);
        }
        self.line(prefix, message);
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

/// The error's chain, outermost first, joined with `: ` (as anyhow's `{:#}`),
/// with the operating system's words for an I/O error as git prints them
/// (`Permission denied`, without Rust's ` (os error 13)`). A failed git
/// command is named in the line, and what git said on stderr comes back apart,
/// to be printed as it came, before it.
fn message(e: &anyhow::Error) -> (String, Option<String>) {
    let mut git_said = None;
    let mut parts = Vec::new();
    for cause in e.chain() {
        if let Some(failed) = cause.downcast_ref::<GitFailed>() {
            parts.push(failed.summary());
            git_said = Some(failed.stderr.clone()).filter(|s| !s.is_empty());
            break;
        }
        let text = cause.to_string();
        parts.push(match cause.downcast_ref::<std::io::Error>() {
            Some(io) if io.raw_os_error().is_some() => match text.rfind(" (os error ") {
                Some(i) if text.ends_with(')') => text[..i].to_string(),
                _ => text,
            },
            _ => text,
        });
    }
    (parts.join(": "), git_said)
}

/// An error on one line, worded as [`Ui::error`] words it (git's words after
/// bullpen's, newlines as spaces): for a report that travels as one line.
pub fn one_line(e: &anyhow::Error) -> String {
    let (text, git_said) = message(e);
    let text = match git_said {
        Some(said) => format!("{text}: {said}"),
        None => text,
    };
    text.replace('\n', " ")
}

/// `$COLUMNS` (as git reads it), else the width of the terminal on stdout.
fn stdout_width() -> Option<usize> {
    if let Some(n) = std::env::var(crate::model::config::ENV_COLUMNS)
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return Some(n);
    }
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(&stdout)
        .map(|(terminal_size::Width(w), _)| usize::from(w))
        .filter(|w| *w > 0)
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
            "fatal: cannot resume session x: occupied\nhint: move it aside\nbullpen: done\n"
        );
        assert_eq!(out.text(), "");
    }

    #[test]
    fn usage_errors_say_error_and_os_errors_read_as_git_prints_them() {
        let (ui, _, err) = Ui::capture(false);
        let usage = anyhow::Error::new(Error::usage("two ids given"));
        assert_eq!(ui.error(&usage), Kind::Usage);
        let denied = anyhow::Error::new(std::io::Error::from_raw_os_error(libc::EACCES))
            .context("cannot create /x/y");
        assert_eq!(ui.error(&denied), Kind::Failed);
        assert_eq!(
            err.text(),
            "error: two ids given\nfatal: cannot create /x/y: Permission denied\n"
        );
    }

    #[test]
    fn colour_follows_gits_order_of_precedence() {
        use When::*;
        let tty = Terminal {
            tty: true,
            dumb: false,
            no_color: false,
            pager_in_use: false,
        };
        let pipe = Terminal { tty: false, ..tty };
        let dumb = Terminal { dumb: true, ..tty };
        let no_color = Terminal {
            no_color: true,
            ..tty
        };
        // (--color, color.bullpen, color.ui, terminal) -> colour
        let table = [
            (None, None, None, tty, true),
            (None, None, None, pipe, false),
            (None, None, None, dumb, false),
            (None, None, None, no_color, false),
            (None, None, Some(Never), tty, false),
            (None, None, Some(Always), pipe, true),
            (None, Some(Auto), Some(Never), tty, true),
            (None, Some(Never), Some(Always), tty, false),
            (None, Some(Always), Some(Never), pipe, true),
            (Some(Never), Some(Always), Some(Always), tty, false),
            (Some(Always), Some(Never), Some(Never), pipe, true),
            (Some(Auto), Some(Always), None, pipe, false),
            // NO_COLOR turns off what would be automatic, not what was asked for.
            (None, None, Some(Always), no_color, true),
            (Some(Always), None, None, no_color, true),
            (None, Some(Auto), None, no_color, false),
        ];
        for (option, bullpen, ui, terminal, want) in table {
            assert_eq!(
                decide_color(option, bullpen, ui, true, terminal),
                want,
                "{option:?} {bullpen:?} {ui:?} {terminal:?}"
            );
        }
    }

    #[test]
    fn colour_in_a_pager_follows_color_pager() {
        use When::*;
        // Our pager (stdout was a terminal) or git's (`GIT_PAGER_IN_USE`).
        let paged = Terminal {
            tty: false,
            dumb: false,
            no_color: false,
            pager_in_use: true,
        };
        let dumb = Terminal {
            dumb: true,
            ..paged
        };
        let tty_in_use = Terminal { tty: true, ..paged };
        // (--color, color.ui, color.pager, terminal) -> colour
        let table = [
            (None, None, true, paged, true),
            (None, None, false, paged, false),
            (None, Some(Auto), false, paged, false),
            (None, Some(Always), false, paged, true),
            (Some(Always), None, false, paged, true),
            (None, None, true, dumb, false),
            (None, Some(Never), true, paged, false),
            // A terminal is coloured whatever color.pager says (git's check_auto_color).
            (None, None, false, tty_in_use, true),
        ];
        for (option, ui, pager, terminal, want) in table {
            assert_eq!(
                decide_color(option, None, ui, pager, terminal),
                want,
                "{option:?} {ui:?} {pager} {terminal:?}"
            );
        }
    }

    #[test]
    fn colour_values_read_as_git_reads_them() {
        use When::*;
        for (v, want) in [
            (Some("always"), Always),
            (Some("NEVER"), Never),
            (Some("Auto"), Auto),
            (Some("true"), Auto),
            (Some("yes"), Auto),
            (Some("1"), Auto),
            (Some("2"), Auto),
            (Some("0"), Never),
            (None, Auto),
            (Some("false"), Never),
            (Some("off"), Never),
            (Some(""), Never),
        ] {
            assert_eq!(parse_color_value("color.ui", v), Ok(want), "{v:?}");
        }
        let e = parse_color_value("color.bullpen", Some("sometimes")).unwrap_err();
        assert_eq!(
            e.message(),
            "bad boolean config value 'sometimes' for 'color.bullpen'"
        );
    }
}
