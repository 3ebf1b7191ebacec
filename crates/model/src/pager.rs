//! Which pager `ls` and `logs` write through, by git's rules (`pager.c`'s
//! `git_pager`, `git.c`'s `check_pager_config`), as a pure function of plain facts.
//!
//! Only a terminal on stdout is paged. `pager.bullpen.<command>`, else
//! `pager.bullpen` (the key git itself reads for `git bullpen`), is a boolean
//! (false: no pager) or a pager of its own. The program is then the first of
//! `GIT_PAGER`, that key's string, `core.pager`, `PAGER` and `less`; an empty
//! one or `cat` means none. `git --no-pager bullpen` sets `GIT_PAGER=cat`.

/// What the decision needs: the environment and the configuration, as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// stdout is a terminal.
    pub tty: bool,
    /// `--no-pager`.
    pub no_pager: bool,
    /// `GIT_PAGER`, `PAGER`.
    pub git_pager: Option<String>,
    pub pager: Option<String>,
    /// `pager.bullpen.<command>` and `pager.bullpen`: `Some(None)` for a key
    /// given without a value.
    pub command_key: Option<Option<String>>,
    pub bullpen_key: Option<Option<String>>,
    /// `core.pager`.
    pub core_pager: Option<String>,
}

/// The variables git sets for the pager when they are unset (`PAGER_ENV`).
pub const ENV_DEFAULTS: &[(&str, &str)] = &[("LESS", "FRX"), ("LV", "-c")];

/// git's default pager.
pub const DEFAULT: &str = "less";

/// The pager command to run through `sh -c`, or none.
pub fn choose(f: &Facts) -> Option<String> {
    if !f.tty || f.no_pager {
        return None;
    }
    let key = f.command_key.as_ref().or(f.bullpen_key.as_ref());
    let own = match key {
        Some(value) => match maybe_bool(value.as_deref()) {
            Some(false) => return None,
            Some(true) => None,
            None => value.clone(),
        },
        None => None,
    };
    let program = f
        .git_pager
        .clone()
        .or(own)
        .or_else(|| f.core_pager.clone())
        .or_else(|| f.pager.clone())
        .unwrap_or_else(|| DEFAULT.to_owned());
    match program.trim() {
        "" | "cat" => None,
        _ => Some(program),
    }
}

/// A boolean config value (`color.pager`) as git reads it; `None` when it is
/// not one. The key alone is true.
pub fn config_bool(value: Option<&str>) -> Option<bool> {
    maybe_bool(value)
}

/// An environment variable's value as git's `git_env_bool` reads it
/// (`GIT_PAGER_IN_USE`): anything but a true boolean is false.
pub fn is_true(value: &str) -> bool {
    maybe_bool(Some(value)) == Some(true)
}

/// A value as `git_parse_maybe_bool` reads it: `None` when it is not a boolean.
fn maybe_bool(value: Option<&str>) -> Option<bool> {
    let Some(v) = value else {
        return Some(true);
    };
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" | "" => Some(false),
        n => n.parse::<i64>().ok().map(|n| n != 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tty() -> Facts {
        Facts {
            tty: true,
            ..Facts::default()
        }
    }

    #[test]
    fn gits_order_of_pagers() {
        let s = |v: &str| Some(v.to_owned());
        let key = |v: &str| Some(Some(v.to_owned()));
        let table: Vec<(Facts, Option<&str>)> = vec![
            (tty(), Some("less")),
            (Facts::default(), None),
            (
                Facts {
                    no_pager: true,
                    ..tty()
                },
                None,
            ),
            (
                Facts {
                    pager: s("more"),
                    ..tty()
                },
                Some("more"),
            ),
            (
                Facts {
                    pager: s("more"),
                    core_pager: s("most"),
                    ..tty()
                },
                Some("most"),
            ),
            (
                Facts {
                    core_pager: s("most"),
                    bullpen_key: key("less -S"),
                    ..tty()
                },
                Some("less -S"),
            ),
            (
                Facts {
                    git_pager: s("pg"),
                    bullpen_key: key("less -S"),
                    core_pager: s("most"),
                    ..tty()
                },
                Some("pg"),
            ),
            (
                Facts {
                    git_pager: s("cat"),
                    ..tty()
                },
                None,
            ),
            (
                Facts {
                    git_pager: s(""),
                    pager: s("more"),
                    ..tty()
                },
                None,
            ),
            // The command's key beats pager.bullpen, a boolean included.
            (
                Facts {
                    command_key: key("false"),
                    bullpen_key: key("most"),
                    ..tty()
                },
                None,
            ),
            (
                Facts {
                    command_key: key("1"),
                    bullpen_key: key("off"),
                    core_pager: s("most"),
                    ..tty()
                },
                Some("most"),
            ),
            (
                Facts {
                    command_key: Some(None),
                    ..tty()
                },
                Some("less"),
            ),
            (
                Facts {
                    bullpen_key: key("no"),
                    git_pager: s("pg"),
                    ..tty()
                },
                None,
            ),
        ];
        for (facts, want) in table {
            assert_eq!(choose(&facts).as_deref(), want, "{facts:?}");
        }
    }
}
