//! What decides whether a session's work is published, for gc and for `ls
//! --status` alike: one publish walk for all tips (the commits no
//! remote-tracking ref reaches), the evidence for those it reaches, and the
//! proof of content (`git::content`) for the others.

use std::collections::HashMap;

use anyhow::Result;

use super::plan::Branch;
use crate::context::Ctx;
use crate::git::store::Stored;
use crate::git::{Content, ContentQuery, IntegrationRef};
use crate::model::{Evidence, Oid, SessionId, State};

/// [`Publish::counted`]'s answer.
pub(crate) struct Walked {
    /// Each session's, in order.
    pub branches: Vec<Result<Branch>>,
    /// For each tip walked, how many of its commits no remote-tracking ref
    /// reaches.
    pub counts: HashMap<Oid, usize>,
    /// The sessions whose proof of content failed (reported): their
    /// `Unpublished` is no verdict.
    pub undecided: Vec<usize>,
}

/// The remote-tracking refs and the integration refs, read once.
pub(crate) struct Publish<'a> {
    ctx: &'a Ctx<'a>,
    /// Remote-tracking refs by the commit they point at (short names).
    remote_at: HashMap<Oid, Vec<String>>,
    /// `(short name, tip)` of every remote-tracking ref.
    remote_refs: Vec<(String, Oid)>,
    integration: Vec<IntegrationRef>,
    /// Whether to say on stderr which refs the proof of content looks at.
    announce: bool,
    /// Whether it was said.
    named: std::cell::Cell<bool>,
}

impl<'a> Publish<'a> {
    /// Read the remote-tracking refs and the integration refs; what people
    /// should hear about them (a `bullpen.gc.integrationRef` that matches
    /// nothing) goes to stderr now. `announce`: name the refs the proof of
    /// content looks at, the first time it looks.
    pub(crate) fn new(ctx: &'a Ctx<'a>, announce: bool) -> Result<Publish<'a>> {
        let short = |n: &str| n.strip_prefix("refs/remotes/").unwrap_or(n).to_owned();
        let remote_refs: Vec<(String, Oid)> = ctx
            .repo
            .remote_refs()?
            .into_iter()
            .map(|(n, o)| (short(&n), o))
            .collect();
        let mut remote_at: HashMap<Oid, Vec<String>> = HashMap::new();
        for (n, o) in &remote_refs {
            remote_at.entry(*o).or_default().push(n.clone());
        }
        let (integration, notes) = match ctx.repo.integration_refs() {
            Ok(found) => found,
            Err(e) => (
                Vec::new(),
                vec![format!(
                    "cannot tell which refs sessions are merged into, so none is looked at: {e:#}"
                )],
            ),
        };
        for n in notes {
            ctx.ui.warn(n);
        }
        Ok(Publish {
            ctx,
            remote_at,
            remote_refs,
            integration,
            announce,
            named: std::cell::Cell::new(false),
        })
    }

    /// Never name the refs the proof of content looks at.
    pub(crate) fn quiet(&self) {
        self.named.set(true);
    }

    /// What every verdict here depends on besides a session's own tip and
    /// base: each remote-tracking ref and each integration ref, by name and
    /// commit (a key for caching verdicts, never a proof).
    pub(crate) fn refs_key(&self) -> Vec<(String, Oid)> {
        let mut key: Vec<(String, Oid)> = self.remote_refs.clone();
        key.extend(
            self.integration
                .iter()
                .map(|r| (format!("integration {}", r.refname), r.tip)),
        );
        key
    }

    /// Where each session's branch stands: one walk for all tips (which
    /// commits no remote-tracking ref reaches), the evidence for those it
    /// reaches, and one proof of content for the others.
    pub(crate) fn branch_states(
        &self,
        sessions: &[Stored],
        tips: &[Result<Option<Oid>>],
    ) -> Result<Vec<Result<Branch>>> {
        Ok(self.counted(sessions, tips)?.branches)
    }

    /// [`Publish::branch_states`], with what `ls --status` shows besides.
    pub(crate) fn counted(
        &self,
        sessions: &[Stored],
        tips: &[Result<Option<Oid>>],
    ) -> Result<Walked> {
        let repo = &self.ctx.repo;
        let all_tips: Vec<Oid> = tips
            .iter()
            .filter_map(|t| t.as_ref().ok().copied().flatten())
            .collect();
        let reach = repo.unpublished_commits(&all_tips)?;
        let counts = reach.iter().map(|(t, c)| (*t, c.len())).collect();
        let mut out: Vec<Result<Branch>> = Vec::with_capacity(sessions.len());
        let mut queries = Vec::new();
        let mut asked = Vec::new();
        let mut undecided = Vec::new();
        for (i, (s, tip)) in sessions.iter().zip(tips).enumerate() {
            let tip = match tip {
                Ok(t) => *t,
                Err(e) => {
                    out.push(Err(anyhow::anyhow!("{e:#}")));
                    continue;
                }
            };
            let base = s.record.base.parse::<Oid>().ok();
            let at_base =
                s.record.state == State::Provisioning && tip.is_some_and(|t| base == Some(t));
            out.push(Ok(match tip {
                None => Branch::Missing,
                Some(tip) if at_base => Branch::AtBase { tip },
                Some(tip) => match reach.get(&tip) {
                    // A remote reaches it, but so does its base: no commit of its
                    // own, nothing of it published.
                    Some(commits)
                        if commits.is_empty()
                            && base.is_some_and(|b| repo.reaches(b, tip).unwrap_or(false)) =>
                    {
                        Branch::AtBase { tip }
                    }
                    Some(commits) if commits.is_empty() => Branch::Published {
                        tip,
                        evidence: self.reachable(tip, &s.record.id),
                    },
                    commits => {
                        let commits = commits.cloned().unwrap_or_default();
                        if !self.integration.is_empty() {
                            queries.push(ContentQuery {
                                tip,
                                commits: commits.clone(),
                            });
                            asked.push(i);
                        }
                        Branch::Unpublished {
                            tip,
                            ahead: Some(commits.len()),
                            found: None,
                        }
                    }
                },
            }));
        }
        if !queries.is_empty() && self.announce && !self.named.replace(true) {
            let refs: Vec<String> = self
                .integration
                .iter()
                .map(|r| format!("{} ({})", r.name, r.chosen))
                .collect();
            self.ctx.ui.info(format!(
                "looking for the changes of {} on {}",
                match queries.len() {
                    1 => "1 unpublished session".to_owned(),
                    n => format!("{n} unpublished sessions"),
                },
                refs.join(", ")
            ));
        }
        let answers = repo.find_content(&queries, &self.integration);
        for (i, answer) in asked.into_iter().zip(answers) {
            let Ok(Branch::Unpublished { tip, ahead, .. }) = &out[i] else {
                continue;
            };
            let (tip, ahead) = (*tip, *ahead);
            match answer {
                Ok(Content::Published(evidence)) => {
                    out[i] = Ok(Branch::Published { tip, evidence });
                }
                Ok(Content::Unmerged(found)) => {
                    out[i] = Ok(Branch::Unpublished { tip, ahead, found });
                }
                Err(e) => {
                    undecided.push(i);
                    self.ctx.ui.warn(format!(
                        "{}: cannot tell whether its changes are in {}: {e:#}",
                        sessions[i].record.id,
                        self.integration
                            .iter()
                            .map(|r| r.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            }
        }
        Ok(Walked {
            branches: out,
            counts,
            undecided,
        })
    }

    /// Which remote-tracking ref reaches `tip` (known reachable): one that
    /// points at it (the session's own `*/bullpen/<id>` first), else the
    /// session's `*/bullpen/<id>`, an integration ref or any other that reaches it.
    pub(crate) fn reachable(&self, tip: Oid, id: &SessionId) -> Evidence {
        let own = |n: &str| n.ends_with(&format!("/{}", id.branch()));
        if let Some(names) = self.remote_at.get(&tip) {
            let from = names
                .iter()
                .find(|n| own(n))
                .or_else(|| names.iter().find(|n| !n.ends_with("/HEAD")))
                .or(names.first());
            return Evidence::Reachable {
                from: from.cloned(),
            };
        }
        let candidates = self
            .remote_refs
            .iter()
            .filter(|(n, _)| own(n))
            .cloned()
            .chain(self.integration.iter().map(|r| (r.name.clone(), r.tip)));
        // Then any other (a stacked pull request's `origin/bullpen/stack-b`).
        let others = self
            .remote_refs
            .iter()
            .filter(|(n, _)| !own(n) && !n.ends_with("/HEAD"))
            .cloned();
        for (name, at) in candidates.chain(others) {
            if self.ctx.repo.reaches(at, tip).unwrap_or(false) {
                return Evidence::Reachable { from: Some(name) };
            }
        }
        Evidence::Reachable { from: None }
    }
}
