//! The row of a fetched session as `ls --remote`'s cache holds it (pure): the
//! row its record makes (`table::remote_row`), before what depends on this
//! clone (commits ahead, the host's label), as one line; and the row back
//! from that line, with no record made. Two lines: the few facts the table
//! shows and the listing sorts and filters by (the table reads those alone),
//! and the whole row (the JSON object), read for `--json`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::table::{remote_row, RemoteFacts, Row};
use crate::model::{time, Observed, Record, State};

/// What the table of fetched sessions shows of a record, and what the
/// listing sorts, filters and counts commits ahead by.
#[derive(Serialize, Deserialize)]
struct Shown<'a> {
    state: State,
    exit_code: Option<i32>,
    signal: Option<i32>,
    #[serde(borrow)]
    created_at: Cow<'a, str>,
    #[serde(borrow)]
    updated_at: Cow<'a, str>,
    #[serde(borrow)]
    host: Cow<'a, str>,
    #[serde(borrow)]
    clone_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    agent: Option<Cow<'a, str>>,
    #[serde(borrow)]
    base: Cow<'a, str>,
}

/// Pure: the lines the cache keeps for `r`, fetched from `remote`: what is
/// shown, and the whole row.
pub fn to_lines(r: &Record, remote: &str) -> Option<(String, String)> {
    let facts = RemoteFacts {
        remote: remote.to_owned(),
        ahead: None,
        host_label: String::new(),
    };
    let mut row = remote_row(r, &facts);
    row.host_label = None;
    let shown = Shown {
        state: r.state,
        exit_code: row.exit_code,
        signal: row.signal,
        created_at: Cow::Borrowed(&row.created_at),
        updated_at: Cow::Borrowed(&row.updated_at),
        host: Cow::Borrowed(&row.host),
        clone_id: row.clone_id.as_deref().map(Cow::Borrowed),
        agent: row.agent.as_deref().map(Cow::Borrowed),
        base: Cow::Borrowed(&row.base),
    };
    let shown = serde_json::to_string(&shown).ok()?;
    let row = serde_json::to_string(&row).ok()?;
    Some((shown, row))
}

/// Pure: the row cached lines hold (`None`: not ones `to_lines` made) for
/// session `id` from `remote`: with the `whole` row, all of it (what
/// `--json` prints), else only what the table shows and the listing needs.
/// The caller adds commits ahead and the host's label.
pub fn from_lines(shown: &str, whole: Option<&str>, id: &str, remote: &str) -> Option<Row> {
    let shown: Shown = serde_json::from_str(shown).ok()?;
    let mut row = match whole {
        Some(whole) => serde_json::from_str(whole).ok()?,
        None => Row {
            id: id.to_owned(),
            state: shown.state.as_str().to_owned(),
            exit_code: shown.exit_code,
            signal: shown.signal,
            created_at: shown.created_at.into_owned(),
            updated_at: shown.updated_at.into_owned(),
            host: shown.host.into_owned(),
            clone_id: shown.clone_id.map(Cow::into_owned),
            agent: shown.agent.map(Cow::into_owned),
            base: shown.base.into_owned(),
            remote: Some(remote.to_owned()),
            ..Row::default()
        },
    };
    row.observed = Some(Observed::Stored(shown.state));
    row.since = time::parse_rfc3339(&row.updated_at);
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row read back is the row the record makes: the same JSON, the same
    /// table facts.
    #[test]
    fn a_row_read_back_is_the_row_its_record_makes() {
        let json = r#"{"schema":1,"id":"fix","branch":"bullpen/fix","worktree":"/w/fix",
            "base":"1111111111111111111111111111111111111111","command":["sh","-c","x"],
            "agent":"claude","state":"exited","host":"laptop","created_at":"2026-01-02T03:04:05Z",
            "updated_at":"2026-01-02T03:05:05Z",
            "process":{"pid":7,"start_time":1,"boot_id":"b","started_at":"2026-01-02T03:04:06Z",
                "command":["sh","-c","y"],"terminal":false},
            "exit":{"code":3,"signal":null,"at":"2026-01-02T03:05:05Z"},
            "clone_id":"00112233445566778899aabbccddeeff","sandbox":{"mode":"strict","x":[1.5]}}"#;
        let record = Record::parse(json.as_bytes()).unwrap();
        let facts = RemoteFacts {
            remote: "origin".into(),
            ahead: None,
            host_label: "laptop".into(),
        };
        let made = remote_row(&record, &facts);
        let (line, row) = to_lines(&record, "origin").unwrap();
        let whole = from_lines(&line, Some(&row), "fix", "origin").unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&[&whole]).unwrap(),
            serde_json::to_string_pretty(&[&made]).unwrap()
        );
        let shown = from_lines(&line, None, "fix", "origin").unwrap();
        for back in [&whole, &shown] {
            let facts = |r: &Row| {
                (
                    r.observed,
                    r.since,
                    (r.id.clone(), r.state.clone(), r.exit_code, r.signal),
                    (r.created_at.clone(), r.host.clone(), r.clone_id.clone()),
                    (r.agent.clone(), r.base.clone(), r.remote.clone()),
                )
            };
            assert_eq!(facts(back), facts(&made));
            assert_eq!(back.host_label, None);
        }
        assert!(from_lines("{}", None, "fix", "origin").is_none());
        assert!(from_lines(&line, Some(&row[1..]), "fix", "origin").is_none());
    }
}
