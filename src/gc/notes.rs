//! The notes gc writes before it removes anything: where each session's work
//! went (the evidence) and provenance on the commits that have none.

use anyhow::Result;

use super::execute::Gc;
use super::plan::{Decision, SessionFacts};
use crate::git::store::Stored;
use crate::model::id::NOTES_REF;
use crate::model::{Evidence, Oid, Record};

impl Gc<'_> {
    /// Before anything is removed: in the notes of each branch gc is about to
    /// delete (or may, once its status is known), where the work went (the
    /// evidence, on its tip) and, on each commit of the branch that has no
    /// provenance note yet (made by a process the command left behind), one. In
    /// one notes commit; a text a note already holds is not added again. A
    /// failure is a warning: the evidence also goes into the record.
    pub(super) fn note_where_work_went(
        &mut self,
        sessions: &[Stored],
        facts: &[Result<SessionFacts>],
    ) {
        let mut notes: Vec<(Oid, String)> = Vec::new();
        let mut tips = Vec::new();
        for (s, f) in sessions.iter().zip(facts) {
            let Ok(f) = f else { continue };
            let d = self.decide(f);
            let likely = matches!(d, Decision::Remove { .. } | Decision::Collect { .. })
                || d.needs_status()
                || d.needs_nested();
            let Some(tip) = f
                .branch_state
                .tip()
                .filter(|t| likely && !self.noted.contains(t))
            else {
                continue;
            };
            match self.notes_for(&s.record, tip, f.branch_state.evidence()) {
                Ok(n) => {
                    notes.extend(n);
                    tips.push(tip);
                }
                Err(e) => self
                    .ctx
                    .ui
                    .warn(format!("{}: cannot read its notes: {e:#}", s.record.id)),
            }
        }
        if notes.is_empty() {
            self.noted.extend(tips);
            return;
        }
        let n = tips.len();
        match self.ctx.repo.add_notes_unless_there(
            NOTES_REF,
            &notes,
            &format!("bullpen: gc notes where the work of {n} session(s) went"),
        ) {
            Ok(()) => self.noted.extend(tips),
            Err(e) => self.ctx.ui.warn(format!(
                "could not write the notes on where the work went ({NOTES_REF}): {e:#}"
            )),
        }
    }

    /// The notes for one session about to be collected: a provenance note on
    /// each commit of its branch (since its base) that has none, and the
    /// evidence on its tip. One text per commit.
    pub(super) fn notes_for(
        &self,
        r: &Record,
        tip: Oid,
        evidence: Option<&Evidence>,
    ) -> Result<Vec<(Oid, String)>> {
        let repo = &self.ctx.repo;
        let mut hidden = Vec::new();
        if let Ok(base) = r.base.parse::<Oid>() {
            hidden.push(base);
        }
        let commits = repo.commits_between(tip, &hidden)?;
        let bare = repo.without_note(NOTES_REF, &commits)?;
        let mut out: Vec<(Oid, String)> = bare
            .iter()
            .map(|c| {
                (
                    *c,
                    format!(
                        "bullpen-session: {}\nbullpen-found-by: gc (on the branch, but no run of the \
                         session recorded it: made by a process the command left behind?)\n",
                        r.id
                    ),
                )
            })
            .collect();
        if let Some(e) = evidence {
            // The integration commits it landed on name the session too.
            out.extend(e.landing_notes(r.id.as_str()));
            let line = format!("bullpen-published: {}\n", e.full_words());
            match out.iter_mut().find(|(c, _)| *c == tip) {
                Some((_, text)) => {
                    text.push('\n');
                    text.push_str(&line);
                }
                None => out.push((tip, line)),
            }
        }
        Ok(out)
    }
}
