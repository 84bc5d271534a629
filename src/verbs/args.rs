//! Arguments as users write them that are more than a string: durations, roles and the
//! status a node is finished with. Node and actor arguments are strings resolved by [`super::Ctx`].

use crate::error::{Error, Result};
use crate::model::Status;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A role argument (`--role R` of `ready`, `claim-next`, the pane): a word of
/// `[a-z0-9_-]` of at most 32 characters, or "" (any role), checked as the verbs that take
/// one check it.
pub fn check_role(role: &str) -> Result<()> {
    crate::rules::validate_word("role", role, 0)
}

/// A duration as a user wrote it: `500ms`, `30s`, `15m`, `2h`, `1d`, or a bare number of
/// seconds (in JSON, a string in that form or a whole number of seconds). It is read when
/// the verb runs, so a malformed one is an `invalid_input` like any other bad argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dur {
    /// The text form.
    Text(String),
    /// Whole seconds (a JSON number).
    Seconds(u64),
    /// Milliseconds, from a front door that measured them itself.
    Ms(u64),
}

impl Dur {
    /// The duration in milliseconds; a malformed or too large one is `invalid_input`.
    pub fn ms(&self) -> Result<u64> {
        match self {
            Dur::Text(t) => crate::duration::parse_ms(t),
            Dur::Seconds(s) => s
                .checked_mul(1000)
                .ok_or_else(|| Error::invalid(too_large(*s))),
            Dur::Ms(ms) => Ok(*ms),
        }
    }

    /// An optional duration in milliseconds.
    pub fn opt_ms(d: &Option<Dur>) -> Result<Option<u64>> {
        d.as_ref().map(Dur::ms).transpose()
    }
}

impl std::str::FromStr for Dur {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> std::result::Result<Dur, Self::Err> {
        Ok(Dur::Text(s.to_string()))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Dur::Text(t) => s.serialize_str(t),
            Dur::Seconds(n) => s.serialize_u64(*n),
            Dur::Ms(ms) => s.serialize_str(&crate::duration::format_ms(*ms)),
        }
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Dur, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(DURATION)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<Dur, E> {
                // Read now, so that a malformed one is refused naming its field.
                match crate::duration::parse_ms(s) {
                    Ok(_) => Ok(Dur::Text(s.to_string())),
                    Err(e) => Err(E::custom(e)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, secs: u64) -> std::result::Result<Dur, E> {
                // Read now too, so that one too large is refused naming its field.
                match Dur::Seconds(secs).ms() {
                    Ok(_) => Ok(Dur::Seconds(secs)),
                    Err(e) => Err(E::custom(e)),
                }
            }
            fn visit_u128<E: serde::de::Error>(self, secs: u128) -> std::result::Result<Dur, E> {
                match u64::try_from(secs) {
                    Ok(s) => self.visit_u64(s),
                    Err(_) => Err(E::custom(too_large(secs))),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, secs: i64) -> std::result::Result<Dur, E> {
                match u64::try_from(secs) {
                    Ok(s) => Ok(Dur::Seconds(s)),
                    Err(_) => Err(E::custom(format!(
                        "a duration must not be negative, got {secs}: expected {DURATION}"
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Dur {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A duration: \"500ms\", \"30s\", \"15m\", \"2h\", \"1d\", or whole seconds",
            "oneOf": [
                {"type": "string", "pattern": "^[0-9]+(ms|s|m|h|d)?$"},
                {"type": "integer", "minimum": 0}
            ]
        })
    }
}

/// The refusal of a whole number of seconds too large for a duration in milliseconds.
fn too_large(secs: impl std::fmt::Display) -> String {
    format!(
        "duration of {secs} s is too large (at most {} ms)",
        u64::MAX
    )
}

/// What a duration argument should be, in the words of an error.
const DURATION: &str = "a duration such as \"30s\", \"15m\", \"500ms\", or whole seconds";

/// A JSON type error in the user's words: serde's message (`invalid value: integer `-1`,
/// expected u64`) with the Rust type it expected said as what to write.
pub(super) fn plain_expectation(message: &str) -> String {
    const PLAIN: &[(&str, &str)] = &[
        ("u64", "a whole number from 0 up"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u16", "a whole number from 0 to 65535"),
        ("u8", "a whole number from 0 to 255"),
        ("usize", "a whole number from 0 up"),
        (
            "i64",
            "a whole number from -9223372036854775808 to 9223372036854775807",
        ),
        ("i32", "a whole number from -2147483648 to 2147483647"),
        ("a boolean", "true or false"),
    ];
    for (rust, plain) in PLAIN {
        if let Some(head) = message.strip_suffix(&format!("expected {rust}")) {
            return format!("{head}expected {plain}");
        }
    }
    message.to_string()
}

/// The status `complete` finishes a node with: `done`, `failed` or `cancelled`.
/// An output given as JSON text on a command line (`--output '{"rows": 3}'`).
pub fn parse_json_arg(text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| Error::invalid(format!("output is not valid JSON: {e}")))
}

pub fn parse_finish_status(text: &str) -> Result<Status> {
    match Status::parse(text.trim()) {
        Some(s) if s.is_terminal() => Ok(s),
        _ => Err(Error::invalid(format!(
            "status must be done, failed or cancelled, got {text:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_text_or_seconds() {
        let d: Dur = serde_json::from_str("\"15m\"").unwrap();
        assert_eq!(d.ms().unwrap(), 900_000);
        let d: Dur = serde_json::from_str("30").unwrap();
        assert_eq!(d.ms().unwrap(), 30_000);
        assert!(serde_json::from_str::<Dur>("-1").is_err());
        assert!(serde_json::from_str::<Dur>("1.5").is_err());
        let bad = serde_json::from_str::<Dur>("\"5x\"").unwrap_err();
        assert!(bad.to_string().contains("bad duration"), "{bad}");
        let bad = Dur::Text("5x".into());
        assert!(bad.ms().unwrap_err().to_string().contains("bad duration"));
        assert!(Dur::Seconds(u64::MAX)
            .ms()
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert_eq!(serde_json::to_string(&Dur::Ms(90_000)).unwrap(), "\"90s\"");
    }
}
