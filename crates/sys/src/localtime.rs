//! The local offset from UTC, as the C library has it.

/// The offset from UTC in seconds at `seconds` after the epoch (`TZ`, else
/// /etc/localtime); 0 when the C library cannot tell.
pub fn offset_at(seconds: i64) -> i32 {
    let t = seconds as libc::time_t;
    // SAFETY: localtime_r only writes the `tm` it is given.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&t, &mut tm) }.is_null();
    if ok {
        tm.tm_gmtoff as i32
    } else {
        0
    }
}
