//! The store's settings (`config`): leases, claims per actor, attempts, backoff, how much
//! history stays live, and the pools and rates (`limits.rs`).

use super::{Limits, DEFAULT_TTL_MS};
use serde::{Deserialize, Serialize};

/// Default longest backoff of a handed-back node: one hour.
pub const DEFAULT_RETRY_DELAY_MAX_MS: u64 = 3_600_000;

fn default_retry_delay_max() -> u64 {
    DEFAULT_RETRY_DELAY_MAX_MS
}
fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}
fn is_default_retry_delay_max(v: &u64) -> bool {
    *v == DEFAULT_RETRY_DELAY_MAX_MS
}

/// A duration setting's value in milliseconds; a bad one is refused naming the setting.
fn duration(key: &str, text: &str) -> crate::Result<u64> {
    crate::duration::parse_ms(text).map_err(|e| match e {
        crate::Error::InvalidInput(m) => crate::Error::InvalidInput(format!("{key}: {m}")),
        e => e,
    })
}

/// Store settings (docs/reference.md, "Nodes").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub default_ttl_ms: u64,
    /// Live claims one actor may hold in a workspace; 0 = no limit.
    pub max_held: u64,
    pub max_attempts: Option<u32>,
    /// The first backoff of a handed-back node (0: ready again at once); it doubles with
    /// every attempt, up to `retry_delay_max_ms`. Stores written before it read as 0.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub retry_delay_ms: u64,
    #[serde(
        default = "default_retry_delay_max",
        skip_serializing_if = "is_default_retry_delay_max"
    )]
    pub retry_delay_max_ms: u64,
    /// How much of the history stays live; older history moves to the archive (read by
    /// `log --all` and `watch --since 0`). Stores written before it keep everything.
    #[serde(default, skip_serializing_if = "HistoryKeep::is_all")]
    pub history_keep: HistoryKeep,
    /// The pools' slots and the rates' windows (`pool set`, `rate set`).
    #[serde(default, skip_serializing_if = "Limits::is_empty")]
    pub limits: Limits,
    /// `deadline_action cancel`: the holder of a claim past its node's deadline is asked
    /// to stop (`none`, the default: the node is only marked overdue).
    #[serde(default, skip_serializing_if = "is_false")]
    pub deadline_cancel: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// The setting `history_keep`: how much of the history stays live. In JSON, its text form:
/// `"all"`, `"7d"`, `"1000000"`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(into = "String", try_from = "String")]
#[schemars(with = "String")]
pub enum HistoryKeep {
    /// Everything (the default).
    #[default]
    All,
    /// The events of this many last milliseconds (`7d`).
    ForMs(u64),
    /// This many last events (`1000000`).
    Events(u64),
}

impl HistoryKeep {
    pub fn is_all(&self) -> bool {
        *self == HistoryKeep::All
    }

    /// Reads `all`, a duration with its unit (`7d`, `12h`) or a count of events.
    pub fn parse(text: &str) -> crate::Result<HistoryKeep> {
        let v = text.trim();
        if v == "all" {
            return Ok(HistoryKeep::All);
        }
        let bad = || {
            crate::Error::invalid(format!(
                "history_keep must be all, a duration with its unit (7d, 12h) or a number \
                 of events (1000000), got {text:?}"
            ))
        };
        if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) {
            let n: u64 = v.parse().map_err(|_| bad())?;
            return if n == 0 {
                Err(crate::Error::invalid(
                    "history_keep must keep at least 1 event (all: keep everything)",
                ))
            } else {
                Ok(HistoryKeep::Events(n))
            };
        }
        match crate::duration::parse_ms(v) {
            Ok(ms) if ms < 60_000 => Err(crate::Error::invalid(format!(
                "history_keep must keep at least 1m of history, got {text:?} (all: keep \
                 everything)"
            ))),
            Ok(ms) => Ok(HistoryKeep::ForMs(ms)),
            Err(_) => Err(bad()),
        }
    }
}

impl From<HistoryKeep> for String {
    fn from(k: HistoryKeep) -> String {
        k.to_string()
    }
}

impl TryFrom<String> for HistoryKeep {
    type Error = crate::Error;
    fn try_from(s: String) -> crate::Result<HistoryKeep> {
        HistoryKeep::parse(&s)
    }
}

impl std::fmt::Display for HistoryKeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryKeep::All => f.write_str("all"),
            HistoryKeep::ForMs(ms) => f.write_str(&crate::duration::format_ms(*ms)),
            HistoryKeep::Events(n) => write!(f, "{n}"),
        }
    }
}

impl Settings {
    /// The settings' names, as `config` shows them.
    pub const KEYS: [&'static str; 7] = [
        "default_ttl",
        "max_held",
        "max_attempts",
        "retry_delay",
        "retry_delay_max",
        "history_keep",
        "deadline_action",
    ];

    /// Every setting as `config` shows it: `default_ttl 15m`, `max_held 1`, `max_attempts none`.
    pub fn entries(&self) -> Vec<(String, String)> {
        let max_attempts = self
            .max_attempts
            .map(|m| m.to_string())
            .unwrap_or_else(|| "none".into());
        vec![
            (
                "default_ttl",
                crate::duration::format_ms(self.default_ttl_ms),
            ),
            ("max_held", self.max_held.to_string()),
            ("max_attempts", max_attempts),
            (
                "retry_delay",
                match self.retry_delay_ms {
                    0 => "0".to_string(),
                    d => crate::duration::format_ms(d),
                },
            ),
            (
                "retry_delay_max",
                crate::duration::format_ms(self.retry_delay_max_ms),
            ),
            ("history_keep", self.history_keep.to_string()),
            (
                "deadline_action",
                if self.deadline_cancel {
                    "cancel"
                } else {
                    "none"
                }
                .to_string(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .chain(
            self.limits
                .pools
                .iter()
                .map(|(n, k)| (format!("pool.{n}"), k.to_string())),
        )
        .chain(self.limits.rates.iter().map(|(n, r)| {
            (
                format!("rate.{n}"),
                format!("{}/{}", r.limit, crate::duration::format_ms(r.per_ms)),
            )
        }))
        .collect()
    }

    /// One setting as `config KEY` shows it.
    pub fn get(&self, key: &str) -> crate::Result<String> {
        Settings::check_key(key)?;
        Ok(self
            .entries()
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .unwrap_or_else(|| "none".into()))
    }

    /// Sets one setting from its text form (`config KEY VALUE`); the rules validate the
    /// result when it is committed.
    pub fn set(&mut self, key: &str, value: &str) -> crate::Result<()> {
        Settings::check_key(key)?;
        let v = value.trim();
        let whole =
            |what: &str| crate::Error::invalid(format!("{key} must be {what}, got {value:?}"));
        if self.limits.set(key, v)? {
            return Ok(());
        }
        match key {
            "default_ttl" => self.default_ttl_ms = duration(key, v)?,
            "max_held" => {
                self.max_held = v
                    .parse()
                    .map_err(|_| whole("a whole number (0 = no limit)"))?
            }
            "retry_delay" => self.retry_delay_ms = duration(key, v)?,
            "retry_delay_max" => self.retry_delay_max_ms = duration(key, v)?,
            "history_keep" => self.history_keep = HistoryKeep::parse(v)?,
            "deadline_action" => {
                self.deadline_cancel = match v {
                    "none" => false,
                    "cancel" => true,
                    _ => return Err(whole("none or cancel")),
                }
            }
            _ => {
                self.max_attempts = match v {
                    "none" => None,
                    _ => Some(v.parse().map_err(|_| whole("a whole number or none"))?),
                }
            }
        }
        Ok(())
    }

    fn check_key(key: &str) -> crate::Result<()> {
        if Settings::KEYS.contains(&key) || Limits::is_key(key)? {
            Ok(())
        } else {
            Err(crate::Error::invalid(format!(
                "unknown setting {key:?}: the settings are {}, pool.NAME and rate.NAME",
                Settings::KEYS.join(", ")
            )))
        }
    }

    /// The backoff of a node handed back after `attempts` claims:
    /// `min(retry_delay_max, retry_delay x 2^(attempts-1))`, 0 when `retry_delay` is 0.
    pub fn backoff_ms(&self, attempts: u32) -> u64 {
        if self.retry_delay_ms == 0 {
            return 0;
        }
        let doublings = attempts.saturating_sub(1).min(63);
        self.retry_delay_ms
            .saturating_mul(1u64 << doublings)
            .min(self.retry_delay_max_ms)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            default_ttl_ms: DEFAULT_TTL_MS,
            max_held: 1,
            max_attempts: None,
            retry_delay_ms: 0,
            retry_delay_max_ms: DEFAULT_RETRY_DELAY_MAX_MS,
            history_keep: HistoryKeep::All,
            limits: Limits::default(),
            deadline_cancel: false,
        }
    }
}
