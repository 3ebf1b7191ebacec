//! gc's bounded history: collected records older than `bullpen.gc.expire`
//! go, with their logs and local state, where their branch and worktree are
//! gone. Their notes stay.

use std::path::Path;

use anyhow::Result;

use super::execute::Gc;
use super::report::{Action, Entry};
use crate::git::store::{self, Stored};
use crate::model::config::GC_EXPIRE;
use crate::model::time;
use crate::sys::lock::Lock;
use crate::trust::local::Local;

impl Gc<'_> {
    /// Collected records older than `bullpen.gc.expire` go, with their logs and
    /// local state; their provenance notes stay. Only where the branch and the
    /// worktree are gone (a record marked collected by hand over live work is
    /// left alone). Under the lock: the local state goes before the record, so
    /// that a spawn reusing the id (refused while the record exists) never
    /// loses the local state it writes.
    pub(super) fn expired(&self, collected: &[Stored]) -> Result<Vec<Entry>> {
        let time::Expire::Before(horizon) = self.expire else {
            return Ok(Vec::new());
        };
        let repo = &self.ctx.repo;
        let mut due = Vec::new();
        for s in collected {
            let r = &s.record;
            let Some(at) = time::parse_rfc3339(&r.updated_at) else {
                continue;
            };
            if at >= horizon
                || repo.ref_target(&r.id.branch_ref())?.is_some()
                || Path::new(&r.worktree).symlink_metadata().is_ok()
            {
                continue;
            }
            due.push((s, at));
        }
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let _lock = if self.dry_run {
            None
        } else {
            Some(Lock::acquire(&self.ctx.layout.lock_path())?)
        };
        let mut out = Vec::new();
        for (s, at) in due {
            let r = &s.record;
            let date = time::rfc3339(at).get(..10).unwrap_or_default().to_owned();
            let mut e = self.entry(
                "record",
                Some(r),
                Action::Expired,
                format!(
                    "collected {date}, before {GC_EXPIRE} ({}): its record, log and local state \
                     go; its notes stay",
                    self.expire_value
                ),
            );
            if !self.dry_run {
                if let Err(why) = self.expire_one(s) {
                    e.action = Action::Degraded;
                    e.reason = format!("could not expire its record: {why}");
                    e.hint = Some("run `git bullpen gc` again".to_owned());
                }
            }
            out.push(e);
        }
        Ok(out)
    }

    fn expire_one(&self, s: &Stored) -> std::result::Result<(), String> {
        let id = &s.record.id;
        let log = self.ctx.layout.log_path(id);
        match std::fs::remove_file(&log) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", log.display())),
        }
        Local::of(&self.ctx.layout, id)
            .remove()
            .map_err(|e| format!("{e:#}"))?;
        store::delete(&self.ctx.repo, s, "bullpen: gc: expired").map_err(|e| format!("{e:#}"))
    }
}
