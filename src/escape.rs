//! Text that a terminal shows as it is: every text form (the verbs' text replies, `graph`'s
//! labels, the pane) writes user text through [`one_line`], so that a summary, a label or a
//! ref cannot add lines, move the cursor, retitle the terminal or reorder what it shows.
//! JSON output needs none of this: JSON escapes control characters itself.

use std::fmt::Write;

/// True for a character written as an escape: a control character (C0, DEL, C1), a Unicode
/// bidi embedding, override or isolate (U+202A-U+202E, U+2066-U+2069), or a line or
/// paragraph separator (U+2028, U+2029).
pub fn is_escaped(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// Keeps text on one line and inert: `\n`, `\r` and `\t` are written as those escapes,
/// every other character of `is_escaped` as `\u{hex}`.
pub fn one_line(text: &str) -> String {
    if !text.chars().any(is_escaped) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_escaped(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bidi_and_separators_are_escaped() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(one_line("\u{1b}]2;x\u{7}"), "\\u{1b}]2;x\\u{7}");
        assert_eq!(one_line("\u{85}\u{9b}"), "\\u{85}\\u{9b}");
        assert_eq!(
            one_line("\u{202e}a\u{2066}b\u{2069}\u{2028}"),
            "\\u{202e}a\\u{2066}b\\u{2069}\\u{2028}"
        );
        assert_eq!(one_line("plain é ü 中 🙂"), "plain é ü 中 🙂");
        // Escaping twice changes nothing more.
        let once = one_line("x\u{1b}\u{202e}\n");
        assert_eq!(one_line(&once), once);
    }
}
