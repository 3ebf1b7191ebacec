//! gc's report of sandboxed runs' private `TMPDIR`s that bullpen left alone
//! (`run::kept_tmp`): each named with why and what to do, never removed; a
//! note whose directory is gone is forgotten.

use super::execute::Gc;
use super::report::{Action, Entry};
use crate::model::private_tmp::{decide, Verdict};
use crate::model::SessionId;
use crate::run::kept_tmp;

impl Gc<'_> {
    pub(super) fn kept_tmpdirs(&self) -> Vec<Entry> {
        let mut out = Vec::new();
        for (file, note) in kept_tmp::all(self.ctx) {
            let Ok(id) = note.session.parse::<SessionId>() else {
                continue;
            };
            let (reason, hint) = match decide(&kept_tmp::facts(&id, &note.path, note.made)) {
                Verdict::Gone => {
                    if !self.dry_run {
                        if let Err(e) = kept_tmp::forget(&file) {
                            self.ctx.ui.warn(format!("{e:#}"));
                        }
                    }
                    continue;
                }
                Verdict::Keep { reason, hint } => (reason, hint),
                // It looks like bullpen's now; it did not when its run ended.
                Verdict::Remove => (
                    format!("when its run ended, {}", note.reason),
                    "look at it and remove it by hand if it holds nothing you need (bullpen \
                     never removes it; gc names it until it is gone)"
                        .to_owned(),
                ),
            };
            out.push(Entry {
                kind: "tmpdir",
                id: Some(id.to_string()),
                action: Action::Kept,
                reason: format!("session {id}'s private TMPDIR, left alone: {reason}"),
                worktree: None,
                branch: None,
                hint: Some(hint),
                dry_run: self.dry_run,
                published: None,
                ignored: None,
                path: Some(note.path.display().to_string()),
            });
        }
        out
    }
}
