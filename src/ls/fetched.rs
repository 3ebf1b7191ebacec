//! The row of a fetched session as `ls --remote`'s cache holds it (pure): the
//! row its record makes (`table::remote_row`), before what depends on this
//! clone (commits ahead, the host's label), as one line of JSON; and the row
//! back from that line, with no record made.

use serde::{Deserialize, Serialize};

use super::table::{remote_row, RemoteFacts, Row};
use crate::model::{time, Observed, Record, State};

/// One cache entry: the recorded state, typed, and the row.
#[derive(Serialize, Deserialize)]
struct Entry {
    state: State,
    row: Row,
}

/// Pure: the line the cache keeps for `r`, fetched from `remote`.
pub fn to_line(r: &Record, remote: &str) -> Option<String> {
    let facts = RemoteFacts {
        remote: remote.to_owned(),
        ahead: None,
        host_label: String::new(),
    };
    let mut row = remote_row(r, &facts);
    row.host_label = None;
    serde_json::to_string(&Entry {
        state: r.state,
        row,
    })
    .ok()
}

/// Pure: the row a cached line holds (`None`: not one `to_line` made). The
/// caller adds commits ahead and the host's label.
pub fn from_line(line: &str) -> Option<Row> {
    let Entry { state, mut row } = serde_json::from_str(line).ok()?;
    row.observed = Some(Observed::Stored(state));
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
        let back = from_line(&to_line(&record, "origin").unwrap()).unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&[&back]).unwrap(),
            serde_json::to_string_pretty(&[&made]).unwrap()
        );
        assert_eq!(
            (back.observed, back.since, back.host_label.as_deref()),
            (made.observed, made.since, None)
        );
        assert!(from_line("{}").is_none());
    }
}
