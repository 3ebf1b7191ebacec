//! Attention: what a running session is doing, as a pure state machine.
//!
//! Two sources, both kept in the session's local state (never in a ref):
//!
//! - the **terminal** ([`from_terminal`]): the supervisor of a background run
//!   sees the program's output and whether its foreground process group waits
//!   on the terminal. Quiet and waiting on the terminal is `needs input`; it
//!   cannot tell a permission prompt from an idle prompt (both wait on the
//!   terminal), so it never says `idle`;
//! - the **agent** ([`next`]): an agent's own hooks (`git bullpen hook <event>`)
//!   say exactly: a permission prompt or a question is `needs input`, the end
//!   of a turn is `idle`, and anything that shows it going again is `working`.
//!
//! Where the agent reports for a run, its word wins ([`shown`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a running session is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    Working,
    /// Waiting for a person: a permission prompt, a question.
    NeedsInput,
    /// Its turn is over: waiting for the next prompt.
    Idle,
    /// The agent's session ended (its process may still be winding down).
    Exited,
}

impl Activity {
    /// As people read it (and `ls --json` has it): `needs input`.
    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Working => "working",
            Activity::NeedsInput => "needs input",
            Activity::Idle => "idle",
            Activity::Exited => "exited",
        }
    }

    /// How soon a person is wanted: `ls --attention` sorts by it.
    pub fn urgency(self) -> u8 {
        match self {
            Activity::NeedsInput => 0,
            Activity::Idle => 1,
            Activity::Working => 2,
            Activity::Exited => 3,
        }
    }
}

/// Where an activity was learnt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Terminal,
    Agent,
}

/// An activity and when it was entered (RFC 3339), for one run (its command's pid).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamped {
    pub schema: u32,
    pub activity: Activity,
    pub since: String,
    pub source: Source,
    /// The run's command (the record's `process.pid`): a state left by an
    /// earlier run is not this run's.
    pub pid: u32,
    /// The terminal's: how many times this run has entered `working` (so an
    /// agent's partial word can tell whether the program wrote since).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub workings: u64,
    /// The agent's, when only a partial report stands behind it (Codex's notify
    /// program, which tells the end of a turn and nothing else): the terminal's
    /// `workings` when it was said. It holds until the terminal sees the program
    /// working again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_working: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An event an agent reported: its name and payload (JSON, as its hooks send it).
#[derive(Clone, Debug, PartialEq)]
pub struct Event<'a> {
    pub name: &'a str,
    pub payload: &'a serde_json::Value,
}

/// Tools through which an agent asks its user a question (Claude Code's
/// `AskUserQuestion`, Codex's `request_user_input`): using one is waiting for
/// a person, not working.
pub const QUESTION_TOOLS: &[&str] = &["AskUserQuestion", "request_user_input"];

/// Pure: whether `event` alone is a partial report (it tells one transition
/// and would miss the others): Codex's notify program, which runs at the end
/// of each turn whether or not Codex's hooks run.
pub fn is_partial(event: &str) -> bool {
    event == "codex-notify"
}

/// Pure: the activity after `event`, from `now` (`None`: nothing reported yet
/// in this run). `None` when the event says nothing of it (the state stays).
///
/// Claude Code's hook events (and Codex's, which share the names and shapes):
/// `UserPromptSubmit`, `PreToolUse`, `PostToolUse(Failure)`, `PermissionDenied`,
/// `ElicitationResult` → working (a permission prompt answered goes back to
/// working on whichever comes first); `PermissionRequest`, `Elicitation`,
/// `PreToolUse` of a question tool, `Notification` of a permission prompt or an
/// elicitation dialog → needs input; `Stop`, `StopFailure`, `SessionStart`,
/// `Notification` of an idle prompt, Codex's `Interrupt` (a turn interrupted)
/// → idle (except while a person is already wanted: an idle prompt then is
/// the same wait); `SessionEnd` → exited. Codex's `notify` program
/// (`agent-turn-complete`, named `codex-notify` here) → idle.
pub fn next(now: Option<Activity>, event: &Event) -> Option<Activity> {
    let field = |k: &str| event.payload.get(k).and_then(|v| v.as_str());
    let to = match event.name {
        "UserPromptSubmit" | "PostToolUse" | "PostToolUseFailure" | "PermissionDenied"
        | "ElicitationResult" | "SubagentStart" => Activity::Working,
        "PreToolUse" => match field("tool_name") {
            Some(t) if QUESTION_TOOLS.contains(&t) => Activity::NeedsInput,
            _ => Activity::Working,
        },
        "PermissionRequest" | "Elicitation" => Activity::NeedsInput,
        "Notification" => match field("notification_type") {
            Some("permission_prompt" | "elicitation_dialog") => Activity::NeedsInput,
            Some("elicitation_complete" | "elicitation_response") => Activity::Working,
            // Claude's "waiting for your input" after a quiet minute: the turn
            // is over, unless it is still waiting on a prompt of its own.
            Some("idle_prompt") if now == Some(Activity::NeedsInput) => return None,
            Some("idle_prompt") => Activity::Idle,
            _ => return None,
        },
        "Stop" | "StopFailure" | "SessionStart" | "Interrupt" => Activity::Idle,
        "SessionEnd" => Activity::Exited,
        "codex-notify" => match field("type") {
            Some("agent-turn-complete") => Activity::Idle,
            _ => return None,
        },
        _ => return None,
    };
    (now != Some(to)).then_some(to)
}

/// How long a terminal must be quiet before its program counts as waiting.
pub const QUIET: Duration = Duration::from_millis(500);

/// Pure: the activity of a program on a terminal: writing within [`QUIET`] is
/// working; quiet and waiting on the terminal (its foreground process group
/// blocked reading it) is needs input; quiet otherwise (computing, waiting on
/// the network or a child) is working.
pub fn from_terminal(quiet_for: Duration, waiting_on_terminal: bool) -> Activity {
    if quiet_for >= QUIET && waiting_on_terminal {
        Activity::NeedsInput
    } else {
        Activity::Working
    }
}

/// Pure: what `ls` and `wait` show for the run of command `pid`: the agent's
/// word where it has reported in this run, else the terminal's; neither when
/// both are of another run. A partial word of the agent's holds only until
/// the terminal has seen the program working again (see [`holds`]).
pub fn shown<'a>(
    terminal: Option<&'a Stamped>,
    agent: Option<&'a Stamped>,
    pid: u32,
) -> Option<&'a Stamped> {
    let this_run = |s: &&Stamped| s.pid == pid;
    let terminal = terminal.filter(this_run);
    match agent.filter(this_run) {
        Some(a) if holds(a, terminal) => Some(a),
        _ => terminal,
    }
}

/// Pure: whether the agent's word `agent` (of this run) holds against the
/// terminal's: always for a full report; for a partial one (Codex's notify,
/// with no hooks behind it), while the terminal has not entered `working`
/// since it was said.
pub fn holds(agent: &Stamped, terminal: Option<&Stamped>) -> bool {
    match (agent.until_working, terminal) {
        (Some(n), Some(t)) => t.workings <= n,
        _ => true,
    }
}

/// Pure: the `until_working` of an agent's new word after `event`: `None` (a
/// full report) unless the event is partial and nothing fuller was said in
/// this run (`before`: the agent's last word of this run); then the terminal's
/// `workings` now.
pub fn until_working(
    event: &str,
    before: Option<&Stamped>,
    terminal: Option<&Stamped>,
) -> Option<u64> {
    let full_before = before.is_some_and(|b| b.until_working.is_none());
    // No terminal's word yet: its first `working` is the run's start.
    (is_partial(event) && !full_before).then(|| terminal.map_or(1, |t| t.workings))
}

/// Pure: whether moving from `from` to `to` calls for a person
/// (`bullpen.notify` runs once per such transition).
pub fn calls_for_attention(from: Option<Activity>, to: Activity) -> bool {
    to == Activity::NeedsInput && from != Some(Activity::NeedsInput)
}

/// What `wait --for` waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Awaited {
    Input,
    Idle,
    Exit,
}

/// Pure: what `ls` says of an activity (`activity` as [`Activity::as_str`]
/// words it, entered at `since`, unix seconds): `needs input 2m`, `idle 5m`,
/// `working`, after `attached, ` while a terminal is attached.
pub fn cell(activity: &str, since: Option<i64>, attached: bool, now: i64) -> String {
    let state = match since {
        Some(t) if activity != Activity::Working.as_str() => {
            format!("{activity} {}", super::time::age(now - t))
        }
        _ => activity.to_owned(),
    };
    match attached {
        true => format!("attached, {state}"),
        false => state,
    }
}

/// How a session stands for `wait --for`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// It got where it was waited for.
    Reached,
    /// Its run is over without getting there: nothing more will come of it.
    Ended,
}

/// Pure: has a session got where `wait --for` waits? `activity`: what it shows
/// now (`None`: not known); `ended`: its run is over (or it is not running).
/// `None`: not yet.
pub fn arrived(awaited: Awaited, activity: Option<Activity>, ended: bool) -> Option<Arrival> {
    let reached = match awaited {
        _ if ended => {
            return Some(if awaited == Awaited::Exit {
                Arrival::Reached
            } else {
                Arrival::Ended
            })
        }
        Awaited::Input => activity == Some(Activity::NeedsInput),
        // Waiting on a person is also a stop in its work.
        Awaited::Idle => matches!(
            activity,
            Some(Activity::Idle | Activity::NeedsInput | Activity::Exited)
        ),
        Awaited::Exit => false,
    };
    reached.then_some(Arrival::Reached)
}

#[cfg(test)]
mod tests {
    use super::Activity::*;
    use super::*;
    use serde_json::json;

    fn after(now: Option<Activity>, name: &str, payload: serde_json::Value) -> Option<Activity> {
        next(
            now,
            &Event {
                name,
                payload: &payload,
            },
        )
    }

    /// Runs a sequence of events from nothing; the state after each.
    fn run(events: &[(&str, serde_json::Value)]) -> Vec<Option<Activity>> {
        let mut now = None;
        events
            .iter()
            .map(|(name, payload)| {
                if let Some(to) = after(now, name, payload.clone()) {
                    now = Some(to);
                }
                now
            })
            .collect()
    }

    fn tool(name: &str) -> serde_json::Value {
        json!({"hook_event_name": "x", "tool_name": name, "tool_input": {}, "tool_use_id": "t1"})
    }

    fn note(kind: &str) -> serde_json::Value {
        json!({"message": "m", "notification_type": kind})
    }

    #[test]
    fn a_prompt_submitted_is_working() {
        assert_eq!(
            after(None, "UserPromptSubmit", json!({"prompt": "p"})),
            Some(Working)
        );
        assert_eq!(
            after(Some(Idle), "UserPromptSubmit", json!({})),
            Some(Working)
        );
        assert_eq!(
            after(Some(NeedsInput), "UserPromptSubmit", json!({})),
            Some(Working)
        );
        assert_eq!(after(Some(Working), "UserPromptSubmit", json!({})), None);
    }

    #[test]
    fn a_permission_request_needs_input() {
        assert_eq!(
            after(Some(Working), "PermissionRequest", tool("Bash")),
            Some(NeedsInput)
        );
        assert_eq!(
            after(Some(NeedsInput), "PermissionRequest", tool("Bash")),
            None
        );
    }

    #[test]
    fn a_permission_answered_goes_back_to_working_on_whatever_comes_first() {
        // worktrunk #2916: a one-way machine stayed "waiting" here.
        for back in [
            "PostToolUse",
            "PostToolUseFailure",
            "PreToolUse",
            "PermissionDenied",
        ] {
            assert_eq!(
                after(Some(NeedsInput), back, tool("Bash")),
                Some(Working),
                "{back}"
            );
        }
        assert_eq!(
            after(Some(NeedsInput), "UserPromptSubmit", json!({})),
            Some(Working)
        );
    }

    #[test]
    fn a_question_through_a_tool_needs_input_and_its_answer_is_working() {
        // orca #7852: AskUserQuestion was shown as working.
        assert_eq!(
            after(Some(Working), "PreToolUse", tool("AskUserQuestion")),
            Some(NeedsInput)
        );
        assert_eq!(
            after(Some(NeedsInput), "PostToolUse", tool("AskUserQuestion")),
            Some(Working)
        );
        assert_eq!(after(Some(Working), "PreToolUse", tool("Bash")), None);
    }

    #[test]
    fn notifications_of_a_permission_prompt_and_of_an_idle_prompt_differ() {
        assert_eq!(
            after(Some(Working), "Notification", note("permission_prompt")),
            Some(NeedsInput)
        );
        assert_eq!(
            after(Some(Working), "Notification", note("elicitation_dialog")),
            Some(NeedsInput)
        );
        assert_eq!(
            after(Some(Working), "Notification", note("idle_prompt")),
            Some(Idle)
        );
        // Waiting on a prompt of its own for a minute is still that wait.
        assert_eq!(
            after(Some(NeedsInput), "Notification", note("idle_prompt")),
            None
        );
        assert_eq!(after(Some(Idle), "Notification", note("idle_prompt")), None);
        assert_eq!(
            after(
                Some(NeedsInput),
                "Notification",
                note("elicitation_response")
            ),
            Some(Working)
        );
        assert_eq!(
            after(Some(Working), "Notification", note("auth_success")),
            None
        );
        assert_eq!(after(Some(Working), "Notification", json!({})), None);
    }

    #[test]
    fn an_elicitation_needs_input_until_its_result() {
        assert_eq!(
            after(Some(Working), "Elicitation", json!({})),
            Some(NeedsInput)
        );
        assert_eq!(
            after(Some(NeedsInput), "ElicitationResult", json!({})),
            Some(Working)
        );
    }

    #[test]
    fn the_end_of_a_turn_is_idle_and_the_end_of_the_session_exited() {
        assert_eq!(
            after(Some(Working), "Stop", json!({"stop_hook_active": false})),
            Some(Idle)
        );
        assert_eq!(after(Some(Working), "StopFailure", json!({})), Some(Idle));
        assert_eq!(
            after(None, "SessionStart", json!({"source": "startup"})),
            Some(Idle)
        );
        assert_eq!(
            after(Some(Idle), "SessionEnd", json!({"reason": "exit"})),
            Some(Exited)
        );
        assert_eq!(
            after(Some(NeedsInput), "SessionEnd", json!({})),
            Some(Exited)
        );
    }

    #[test]
    fn codex_notify_ends_a_turn() {
        let done = json!({"type": "agent-turn-complete", "turn-id": "1"});
        assert_eq!(after(Some(Working), "codex-notify", done), Some(Idle));
        assert_eq!(
            after(Some(Working), "codex-notify", json!({"type": "other"})),
            None
        );
    }

    #[test]
    fn events_that_say_nothing_of_attention_change_nothing() {
        for name in [
            "SubagentStop",
            "PreCompact",
            "CwdChanged",
            "FileChanged",
            "Nonsense",
        ] {
            assert_eq!(after(Some(NeedsInput), name, json!({})), None, "{name}");
        }
    }

    #[test]
    fn orders_a_real_session_produces() {
        // A turn with a tool that needed permission, then the end of the turn,
        // then Claude's idle notification a minute later.
        let states = run(&[
            ("SessionStart", json!({"source": "startup"})),
            ("UserPromptSubmit", json!({"prompt": "fix it"})),
            ("PreToolUse", tool("Bash")),
            ("PermissionRequest", tool("Bash")),
            ("Notification", note("permission_prompt")),
            ("PostToolUse", tool("Bash")),
            ("Stop", json!({"stop_hook_active": false})),
            ("Notification", note("idle_prompt")),
            ("SessionEnd", json!({"reason": "exit"})),
        ]);
        assert_eq!(
            states,
            [
                Some(Idle),
                Some(Working),
                Some(Working),
                Some(NeedsInput),
                Some(NeedsInput),
                Some(Working),
                Some(Idle),
                Some(Idle),
                Some(Exited)
            ]
        );
        // The notification before the PermissionRequest hook (both orders occur),
        // and a denied permission: working again.
        let states = run(&[
            ("UserPromptSubmit", json!({})),
            ("Notification", note("permission_prompt")),
            ("PermissionRequest", tool("Edit")),
            ("PermissionDenied", tool("Edit")),
            ("PreToolUse", tool("AskUserQuestion")),
            ("Notification", note("idle_prompt")),
            ("PostToolUse", tool("AskUserQuestion")),
        ]);
        assert_eq!(
            states,
            [
                Some(Working),
                Some(NeedsInput),
                Some(NeedsInput),
                Some(Working),
                Some(NeedsInput),
                Some(NeedsInput),
                Some(Working)
            ]
        );
    }

    #[test]
    fn a_terminal_is_working_while_it_writes_and_needs_input_when_quiet_on_a_read() {
        assert_eq!(from_terminal(Duration::ZERO, true), Working);
        assert_eq!(from_terminal(QUIET / 2, true), Working);
        assert_eq!(from_terminal(QUIET, true), NeedsInput);
        // Quiet, but not reading the terminal: computing (or waiting on something else).
        assert_eq!(from_terminal(QUIET * 10, false), Working);
    }

    fn stamped(activity: Activity, source: Source, pid: u32) -> Stamped {
        Stamped {
            schema: 1,
            activity,
            since: "t".into(),
            source,
            pid,
            workings: 0,
            until_working: None,
        }
    }

    #[test]
    fn codex_s_notify_alone_holds_only_until_the_program_works_again() {
        // workmux #197: with notify alone, a Codex session stayed "idle" through
        // its next turn and its next approval prompt.
        let terminal = |a, workings| Stamped {
            workings,
            ..stamped(a, Source::Terminal, 7)
        };
        let notified = Stamped {
            until_working: until_working("codex-notify", None, Some(&terminal(Working, 3))),
            ..stamped(Idle, Source::Agent, 7)
        };
        assert_eq!(notified.until_working, Some(3));
        // Quiet on its prompt after the turn: the terminal says needs input, notify idle.
        let asks = terminal(NeedsInput, 3);
        assert_eq!(shown(Some(&asks), Some(&notified), 7), Some(&notified));
        // The next turn wrote (working again), then asked: the terminal's word.
        let again = terminal(NeedsInput, 4);
        assert_eq!(shown(Some(&again), Some(&notified), 7), Some(&again));
        // No terminal (a run in the foreground): notify's word.
        assert_eq!(shown(None, Some(&notified), 7), Some(&notified));
        // Where Codex's hooks report (a full word before), notify is no less exact.
        let hooked = stamped(Working, Source::Agent, 7);
        assert_eq!(
            until_working("codex-notify", Some(&hooked), Some(&asks)),
            None
        );
        assert_eq!(
            until_working("codex-notify", Some(&notified), Some(&again)),
            Some(4)
        );
        assert_eq!(until_working("Stop", None, Some(&asks)), None);
        let full = stamped(Idle, Source::Agent, 7);
        assert_eq!(shown(Some(&again), Some(&full), 7), Some(&full));
    }

    #[test]
    fn codex_s_interrupt_ends_the_turn_and_its_question_tool_needs_input() {
        assert_eq!(after(Some(Working), "Interrupt", json!({})), Some(Idle));
        assert_eq!(
            after(Some(Working), "PreToolUse", tool("request_user_input")),
            Some(NeedsInput)
        );
    }

    #[test]
    fn the_agent_s_word_wins_for_its_run_only() {
        let t = stamped(NeedsInput, Source::Terminal, 7);
        let a = stamped(Idle, Source::Agent, 7);
        let old = stamped(Idle, Source::Agent, 6);
        assert_eq!(shown(Some(&t), Some(&a), 7), Some(&a));
        assert_eq!(shown(Some(&t), Some(&old), 7), Some(&t));
        assert_eq!(shown(None, Some(&old), 7), None);
        assert_eq!(shown(Some(&t), None, 8), None);
    }

    #[test]
    fn a_person_is_called_once_per_transition_into_needs_input() {
        assert!(calls_for_attention(None, NeedsInput));
        assert!(calls_for_attention(Some(Working), NeedsInput));
        assert!(calls_for_attention(Some(Idle), NeedsInput));
        assert!(!calls_for_attention(Some(NeedsInput), NeedsInput));
        assert!(!calls_for_attention(Some(Working), Idle));
    }

    #[test]
    fn what_each_wait_waits_for() {
        use Arrival::*;
        use Awaited as A;
        assert_eq!(arrived(A::Input, Some(NeedsInput), false), Some(Reached));
        assert_eq!(arrived(A::Input, Some(Idle), false), None);
        assert_eq!(arrived(A::Input, None, false), None);
        assert_eq!(arrived(A::Idle, Some(Idle), false), Some(Reached));
        assert_eq!(arrived(A::Idle, Some(NeedsInput), false), Some(Reached));
        assert_eq!(arrived(A::Idle, Some(Working), false), None);
        assert_eq!(arrived(A::Exit, Some(Exited), false), None);
        assert_eq!(arrived(A::Exit, Some(Working), true), Some(Reached));
        assert_eq!(arrived(A::Input, Some(NeedsInput), true), Some(Ended));
        assert_eq!(arrived(A::Idle, None, true), Some(Ended));
    }

    #[test]
    fn ls_says_how_long_a_person_has_been_wanted() {
        assert_eq!(cell("needs input", Some(100), false, 220), "needs input 2m");
        assert_eq!(cell("idle", Some(0), true, 300), "attached, idle 5m");
        assert_eq!(cell("working", Some(0), false, 300), "working");
    }

    #[test]
    fn sorted_by_who_needs_a_person_first() {
        let mut v = [Working, Exited, Idle, NeedsInput];
        v.sort_by_key(|a| a.urgency());
        assert_eq!(v, [NeedsInput, Idle, Working, Exited]);
    }
}
