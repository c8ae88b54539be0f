//! The date and time of day of a UTC instant as RFC 3339 text (`2026-11-27T19:45:40`), written
//! straight into a buffer: the text chrono writes, without its formatting machinery, which was
//! a sizeable part of a duel's answer and of an exported row. The fraction and the `Z` are the
//! caller's (milliseconds in answers, up to nanoseconds in exports).

/// `secs` since the epoch as `YYYY-MM-DDTHH:MM:SS`; `None` outside years 1 to 9999, which the
/// callers leave to chrono.
pub fn date_time(secs: i64) -> Option<[u8; 19]> {
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    if !(1..=9999).contains(&year) {
        return None;
    }
    let second_of_day = secs.rem_euclid(86_400) as u32;
    let mut out = *b"0000-00-00T00:00:00";
    digits(&mut out[0..4], year as u32);
    digits(&mut out[5..7], month);
    digits(&mut out[8..10], day);
    digits(&mut out[11..13], second_of_day / 3600);
    digits(&mut out[14..16], second_of_day / 60 % 60);
    digits(&mut out[17..19], second_of_day % 60);
    Some(out)
}

/// `value`'s last `out.len()` decimal digits, zero-padded.
pub fn digits(out: &mut [u8], mut value: u32) {
    for d in out.iter_mut().rev() {
        *d = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
