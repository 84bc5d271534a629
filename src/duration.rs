//! Durations as people write them: `500ms`, `30s`, `15m`, `2h`, `1d`; a bare number is
//! seconds.

use crate::error::{Error, Result};

/// The latest time a store keeps: year 9999's last millisecond, so that every time it keeps
/// prints as RFC 3339 and nothing added to it overflows. A time given past it is refused,
/// and a delay that would reach past it (a backoff) ends at it.
pub const LATEST_TIME: u64 = 253_402_300_799_999;

/// Parses a duration into milliseconds.
pub fn parse_ms(text: &str) -> Result<u64> {
    let t = text.trim();
    let (num, mult): (&str, u64) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3_600_000)
    } else if let Some(n) = t.strip_suffix('d') {
        (n, 86_400_000)
    } else {
        (t, 1000)
    };
    let bad = || {
        Error::invalid(format!(
            "bad duration {text:?}: use a non-negative whole number with ms, s, m, h or d (a bare number is seconds)"
        ))
    };
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let too_large = || {
        Error::invalid(format!(
            "duration {text:?} is too large (at most {} ms)",
            u64::MAX
        ))
    };
    let n: u64 = num.parse().map_err(|_| too_large())?;
    n.checked_mul(mult).ok_or_else(too_large)
}

/// Formats milliseconds the way [`parse_ms`] reads them, in the largest exact unit.
pub fn format_ms(ms: u64) -> String {
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number (see [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A time as RFC 3339 in UTC with milliseconds: `2026-12-03T07:05:00.000Z`.
pub fn format_time(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    let (h, mi, s) = (t / 3600, t / 60 % 60, t % 60);
    let frac = ms % 1000;
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{frac:03}Z")
}

/// [`parse_time`] for the argument `what`: a refusal names it (`deadline: bad time ...`).
pub fn parse_time_of(what: &str, text: &str, now: u64) -> Result<u64> {
    parse_time(text, now).map_err(|e| match e {
        Error::InvalidInput(m) => Error::InvalidInput(format!("{what}: {m}")),
        e => e,
    })
}

/// A point in time as users write it: RFC 3339 (`2026-12-03T07:05:00Z`,
/// `2026-12-03T08:05:00.5+01:00`), or `+DUR` from `now` (`+90s`, `+2h`).
pub fn parse_time(text: &str, now: u64) -> Result<u64> {
    let t = text.trim();
    if let Some(d) = t.strip_prefix('+') {
        let ms = parse_ms(d)?;
        return now
            .checked_add(ms)
            .filter(|t| *t <= LATEST_TIME)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "time {text:?} is past the latest time the clock can reach ({})",
                    format_time(LATEST_TIME)
                ))
            });
    }
    parse_rfc3339(t).ok_or_else(|| {
        Error::invalid(format!(
            "bad time {text:?}: use RFC 3339 (2026-12-03T07:05:00Z, or with an offset \
             such as +01:00) or +DUR from now (+90s, +2h)"
        ))
    })
}

/// Parses an RFC 3339 date-time at or after 1970, in milliseconds since the epoch.
fn parse_rfc3339(t: &str) -> Option<u64> {
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        s.iter()
            .all(u8::is_ascii_digit)
            .then(|| std::str::from_utf8(s).ok()?.parse().ok())?
    };
    let sep = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let month_days = [31, 28 + i64::from(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)), 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[(mo - 1) as usize] {
        return None;
    }
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut i = 19;
    let mut ms = 0i64;
    if sep(i, b".") {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let digits = std::str::from_utf8(&b[start..i]).ok()?;
        if digits.is_empty() {
            return None;
        }
        let first3: String = digits.chars().chain("000".chars()).take(3).collect();
        ms = first3.parse().ok()?;
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        c @ (b'+' | b'-') if b.len() == i + 6 && sep(i + 3, b":") => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if *c == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s.min(59) - offset;
    u64::try_from(secs.checked_mul(1000)?.checked_add(ms)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_back_as_written() {
        let t = parse_time("2026-12-03T07:05:00Z", 0).unwrap();
        assert_eq!(t, 1_796_281_500_000);
        assert_eq!(format_time(t), "2026-12-03T07:05:00.000Z");
        assert_eq!(format_time(t + 250), "2026-12-03T07:05:00.250Z");
        assert_eq!(parse_time("2026-12-03T08:05:00.25+01:00", 0).unwrap(), t + 250);
        assert_eq!(parse_time("2026-12-03t07:05:00z", 0).unwrap(), t);
        assert_eq!(parse_time("+90s", 1000).unwrap(), 91_000);
        assert_eq!(format_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_time(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(parse_time("2024-02-29T00:00:00Z", 0).unwrap() / 1000, 1_709_164_800);
    }

    #[test]
    fn refuses_bad_times() {
        for bad in [
            "tomorrow",
            "2026-12-03",
            "2026-13-03T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-12-03T24:00:00Z",
            "2026-12-03T07:05:00",
            "2026-12-03T07:05:00+1:00",
            "1969-12-31T23:59:59Z",
            "+-5s",
            "+",
            "2026-12-03T07:05:00.Z",
        ] {
            let e = parse_time(bad, 0).unwrap_err().to_string();
            assert!(e.contains("bad time") || e.contains("bad duration"), "{bad}: {e}");
        }
        let e = parse_time("+18446744073709551s", 1000).unwrap_err().to_string();
        assert!(e.contains("+18446744073709551s") && e.contains("latest time"), "{e}");
        // The last millisecond of year 9999 is the latest time; one past it is named as given.
        assert_eq!(parse_time("+1ms", LATEST_TIME - 1).unwrap(), LATEST_TIME);
        let e = parse_time("+2ms", LATEST_TIME - 1).unwrap_err().to_string();
        assert!(e.contains("\"+2ms\"") && e.contains("9999-12-31T23:59:59.999Z"), "{e}");
    }

    #[test]
    fn parses_suffixes() {
        assert_eq!(parse_ms("250ms").unwrap(), 250);
        assert_eq!(parse_ms("60").unwrap(), 60_000);
        assert_eq!(parse_ms("15m").unwrap(), 900_000);
        assert_eq!(parse_ms("2h").unwrap(), 7_200_000);
        assert_eq!(parse_ms("1d").unwrap(), 86_400_000);
        assert_eq!(parse_ms("0").unwrap(), 0);
    }

    #[test]
    fn refuses_bad_durations() {
        for bad in ["", "-5", "1.5s", "5x", "ms", "1e3"] {
            assert!(parse_ms(bad)
                .unwrap_err()
                .to_string()
                .contains("bad duration"));
        }
        for big in [
            "99999999999999999999",
            "99999999999999999999d",
            "18446744073709552s",
        ] {
            let e = parse_ms(big).unwrap_err().to_string();
            assert!(e.contains("too large"), "{big}: {e}");
        }
    }

    #[test]
    fn formats_back() {
        assert_eq!(format_ms(900_000), "15m");
        assert_eq!(format_ms(1500), "1500ms");
    }
}
