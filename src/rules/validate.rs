//! Checks of input fields, shared by every verb: words, workspaces, summaries, free text,
//! lease lengths.

use crate::error::{Error, Result};
use crate::model::{Millis, MAX_PROGRESS_BYTES, MAX_SUMMARY_BYTES};

/// Checks a kind or role word: `[a-z0-9_-]`, at most 32 characters (`min` 1 for kinds).
pub fn validate_word(what: &str, text: &str, min: usize) -> Result<()> {
    let ok = text.len() >= min
        && text.len() <= 32
        && text
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{what} must be {min}-32 characters of [a-z0-9_-], got {text:?}"
        )))
    }
}

/// Checks a workspace name: at most 64 characters of `[A-Za-z0-9_.-]`.
pub fn validate_workspace(text: &str) -> Result<()> {
    let ok = text.len() <= 64
        && text
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "workspace must be at most 64 characters of [A-Za-z0-9_.-], got {text:?}"
        )))
    }
}

/// Trims and checks a summary: non-empty, at most 4096 bytes, no NUL.
pub fn normalize_summary(text: &str) -> Result<String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::invalid(
            "summary is empty (after trimming whitespace)",
        ));
    }
    if t.len() > MAX_SUMMARY_BYTES {
        return Err(Error::invalid(format!(
            "summary is {} bytes, longer than the limit of {MAX_SUMMARY_BYTES}",
            t.len()
        )));
    }
    check_text("summary", t, MAX_SUMMARY_BYTES)?;
    Ok(t.to_string())
}

/// Checks a checkpoint (`renew --progress`, a lease's `progress`): no NUL, at most 64 KiB.
pub fn check_progress(text: &str) -> Result<()> {
    check_text("progress", text, MAX_PROGRESS_BYTES)
}

/// Checks a free-text field: no NUL, at most `max` bytes.
pub fn check_text(what: &str, text: &str, max: usize) -> Result<()> {
    if text.contains('\0') {
        return Err(Error::invalid(format!("{what} contains a NUL character")));
    }
    if text.len() > max {
        return Err(Error::invalid(format!(
            "{what} is {} bytes, longer than the limit of {max}",
            text.len()
        )));
    }
    Ok(())
}

/// Checks a one-line field (a label, a resource, a ref): as [`check_text`], and no control
/// character, so that printed it stays one field on one line and cannot drive a terminal.
pub(super) fn check_line(what: &str, text: &str, max: usize) -> Result<()> {
    check_text(what, text, max)?;
    match text.chars().find(|c| c.is_control()) {
        Some(c) => Err(Error::invalid(format!(
            "{what} contains a control character (U+{:04X}): labels, resources and refs are \
             one line of text",
            c as u32
        ))),
        None => Ok(()),
    }
}

/// Checks the items of a list of one-line fields: none empty, each as [`check_line`].
pub(super) fn check_list(what: &str, items: &[String], max: usize) -> Result<()> {
    for item in items {
        if item.trim().is_empty() {
            return Err(Error::invalid(format!("{what} must not be empty")));
        }
        check_line(what, item, max)?;
    }
    Ok(())
}

pub use crate::duration::LATEST_TIME;

/// A delay from now (0 allowed) that the clock can reach.
pub(super) fn check_delay(now: Millis, delay: u64, what: &str) -> Result<()> {
    if now.checked_add(delay).is_none_or(|t| t > LATEST_TIME) {
        return Err(Error::invalid(format!(
            "{what} of {delay} ms overflows the clock (now + {what})"
        )));
    }
    Ok(())
}

pub(super) fn check_ttl(now: Millis, ttl: u64, what: &str) -> Result<()> {
    if ttl == 0 {
        return Err(Error::invalid(format!("{what} must be longer than 0")));
    }
    if now.checked_add(ttl).is_none() {
        return Err(Error::invalid(format!(
            "{what} of {ttl} ms overflows the clock (now + ttl)"
        )));
    }
    Ok(())
}

/// An output as the compact JSON text it is stored as, refused past 64 KiB.
pub(super) fn output_text(v: &serde_json::Value) -> Result<String> {
    let text = v.to_string();
    if text.len() > MAX_PROGRESS_BYTES {
        return Err(Error::invalid(format!(
            "output is {} bytes serialised, longer than the limit of {MAX_PROGRESS_BYTES}",
            text.len()
        )));
    }
    Ok(text)
}
