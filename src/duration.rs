//! Durations as people write them: `500ms`, `30s`, `15m`, `2h`, `1d`; a bare number is
//! seconds.

use crate::error::{Error, Result};

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

#[cfg(test)]
mod tests {
    use super::*;

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
