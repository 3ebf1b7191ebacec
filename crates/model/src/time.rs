//! RFC 3339 timestamps (UTC, whole seconds) without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in seconds since the epoch: the one read of the clock for what people
/// read (ages, `updated_at`). Tests pin it with `BULLPEN_TEST_EPOCH` (seconds).
pub fn now_unix() -> i64 {
    if let Some(pinned) = test_epoch() {
        return pinned;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The test clock: what `main` found in [`super::config::ENV_TEST_EPOCH`] (the
/// model reads no environment).
static EPOCH: std::sync::OnceLock<i64> = std::sync::OnceLock::new();

/// Pin the clock at `unix` (tests only: `main` calls it when
/// [`super::config::ENV_TEST_EPOCH`] is set), before anything reads it.
pub fn pin_test_epoch(unix: i64) {
    let _ = EPOCH.set(unix);
}

fn test_epoch() -> Option<i64> {
    EPOCH.get().copied()
}

pub fn now_rfc3339() -> String {
    rfc3339(now_unix())
}

/// `2026-11-30T04:23:07Z`
pub fn rfc3339(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Parses what [`rfc3339`] writes (and any `Z`/`+00:00` UTC form with whole seconds).
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let rest = &s[19..];
    let offset = match rest {
        "Z" | "+00:00" => 0,
        r if r.len() == 6 && (r.starts_with('+') || r.starts_with('-')) => {
            let sign = if r.starts_with('-') { -1 } else { 1 };
            sign * (r.get(1..3)?.parse::<i64>().ok()? * 3600
                + r.get(4..6)?.parse::<i64>().ok()? * 60)
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset)
}

/// What `bullpen.gc.expire` keeps: everything, or what is newer than a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expire {
    Never,
    /// What was collected before this moment (seconds since the epoch) goes.
    Before(i64),
}

/// The default of `bullpen.gc.expire`, as git's `gc.reflogExpire`.
pub const DEFAULT_EXPIRE: &str = "90.days.ago";

/// Pure: read an expiry the way git reads `gc.reflogExpire`: `never` (or
/// `false`), `now` (or `all`), a span ago (`90.days.ago`, `2 weeks`, `1.year`;
/// seconds, minutes, hours, days, weeks, months of 30 days, years of 365), or a
/// date (`2026-01-01`, RFC 3339). `now` is the present, in seconds.
pub fn parse_expire(value: &str, now: i64) -> Result<Expire, String> {
    let v = value.trim().to_ascii_lowercase();
    match v.as_str() {
        "never" | "false" => return Ok(Expire::Never),
        "now" | "all" => return Ok(Expire::Before(now)),
        _ => {}
    }
    if let Some(t) = parse_rfc3339(value.trim()) {
        return Ok(Expire::Before(t));
    }
    if let Some(t) = parse_date(&v) {
        return Ok(Expire::Before(t));
    }
    let words: Vec<&str> = v
        .split(|c: char| c == '.' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let words = match words.split_last() {
        Some((&"ago", rest)) => rest,
        _ => &words[..],
    };
    let bad = || {
        format!(
            "{value:?} is not an expiry (as gc.reflogExpire: 90.days.ago, 2.weeks, never, now, \
             2026-01-01)"
        )
    };
    let [n, unit] = words else {
        return Err(bad());
    };
    let n: i64 = n.parse().map_err(|_| bad())?;
    if n < 0 {
        // "-2.weeks": a cutoff ahead of now, past which everything already is.
        return Err(bad());
    }
    let unit = unit.strip_suffix('s').unwrap_or(unit);
    let secs = match unit {
        "second" | "sec" => 1,
        "minute" | "min" => 60,
        "hour" => 3600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        "month" => 30 * 86_400,
        "year" => 365 * 86_400,
        _ => return Err(bad()),
    };
    n.checked_mul(secs)
        .and_then(|span| now.checked_sub(span))
        .map(Expire::Before)
        .ok_or_else(bad)
}

/// `2026-01-01`, midnight UTC.
fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d) * 86_400)
}

/// A short human age: `42s`, `5m`, `3h`, `12d`.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// How long something took, for people: `0.3s`, `12s`, `5m 3s`, `2h 5m`, `3d 4h`.
pub fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=9 => format!("{:.1}s", d.as_secs_f64()),
        10..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d {}h", s / 86_400, s % 86_400 / 3600),
    }
}

// Howard Hinnant's civil calendar algorithms.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Pure: the days from 1970-01-01 to a civil date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for t in [
            0,
            1_700_000_000,
            1_795_000_000,
            951_782_400, /* 2000-02-29 */
        ] {
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        }
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(
            parse_rfc3339("2000-02-29T01:00:00+01:00"),
            Some(951_782_400)
        );
        assert_eq!(parse_rfc3339("garbage"), None);
    }

    #[test]
    fn ages() {
        assert_eq!(age(5), "5s");
        assert_eq!(age(300), "5m");
        assert_eq!(age(7200), "2h");
        assert_eq!(age(86_400 * 3), "3d");
    }

    #[test]
    fn expiries_as_git_reads_them() {
        let now = 1_000_000_000;
        let day = 86_400;
        assert!(parse_expire("-2.weeks", now).is_err());
        assert_eq!(parse_expire("never", now), Ok(Expire::Never));
        assert_eq!(parse_expire("false", now), Ok(Expire::Never));
        assert_eq!(parse_expire("now", now), Ok(Expire::Before(now)));
        assert_eq!(parse_expire("all", now), Ok(Expire::Before(now)));
        assert_eq!(
            parse_expire("90.days.ago", now),
            Ok(Expire::Before(now - 90 * day))
        );
        assert_eq!(
            parse_expire(DEFAULT_EXPIRE, now),
            Ok(Expire::Before(now - 90 * day))
        );
        assert_eq!(
            parse_expire("2 weeks ago", now),
            Ok(Expire::Before(now - 14 * day))
        );
        assert_eq!(
            parse_expire("1.year", now),
            Ok(Expire::Before(now - 365 * day))
        );
        assert_eq!(
            parse_expire("3.hours", now),
            Ok(Expire::Before(now - 3 * 3600))
        );
        assert_eq!(
            parse_expire("2026-01-01", now),
            Ok(Expire::Before(
                parse_rfc3339("2026-01-01T00:00:00Z").unwrap()
            ))
        );
        for bad in [
            "",
            "soon",
            "90",
            "days.90",
            "x.days",
            "1.fortnight",
            "99999999999999.years",
        ] {
            assert!(parse_expire(bad, now).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations() {
        use std::time::Duration as D;
        assert_eq!(duration(D::from_millis(340)), "0.3s");
        assert_eq!(duration(D::from_secs(12)), "12s");
        assert_eq!(duration(D::from_secs(303)), "5m 3s");
        assert_eq!(duration(D::from_secs(7500)), "2h 5m");
        assert_eq!(duration(D::from_secs(86_400 * 3 + 3600 * 4)), "3d 4h");
    }
}
