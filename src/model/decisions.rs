//! What people and money decide about a node (SPEC 13): the children a container counts,
//! and the budget a node may spend with what it has spent. Deadlines are plain times on the
//! node (`Node::deadline`).

use serde::{Deserialize, Serialize};

/// The container kind: a node of kind `epic` is never offered or claimed; it finishes when
/// all its children (the nodes whose `parent` it is) have.
pub const EPIC: &str = "epic";

/// The kinds whose nodes are containers.
pub const CONTAINERS: [&str; 1] = [EPIC];

/// True for a container kind.
pub fn is_container(kind: &str) -> bool {
    CONTAINERS.contains(&kind)
}

/// A gate whose prerequisites are done (it displays `ready`): a person's decision,
/// `approve` or `reject`, is all it waits for. Pages and the pane put these first.
pub fn awaits_decision(kind: &str, display: super::DisplayWord) -> bool {
    kind == super::GATE && display == super::DisplayWord::Ready
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// How a container's children stand: how many it has, and how many ended in each
/// terminal status (the rest are open).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Children {
    pub total: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub done: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cancelled: u64,
}

impl Children {
    /// Children not yet finished.
    pub fn open(&self) -> u64 {
        self.total
            .saturating_sub(self.done + self.failed + self.cancelled)
    }

    /// The status the container reaches when every child has finished: `failed` if one
    /// failed, else `cancelled` if every one was cancelled, else `done`. `None` while a
    /// child is open, and for a container with no children yet.
    pub fn settled(&self) -> Option<super::Status> {
        use super::Status;
        if self.total == 0 || self.open() > 0 {
            None
        } else if self.failed > 0 {
            Some(Status::Failed)
        } else if self.cancelled == self.total {
            Some(Status::Cancelled)
        } else {
            Some(Status::Done)
        }
    }

    /// Counts one child in `status` (`sign` +1) or stops counting it (-1).
    pub fn count(&mut self, status: super::Status, add: bool) {
        use super::Status;
        let step = |v: &mut u64| {
            *v = if add {
                v.saturating_add(1)
            } else {
                v.saturating_sub(1)
            }
        };
        step(&mut self.total);
        match status {
            Status::Done => step(&mut self.done),
            Status::Failed => step(&mut self.failed),
            Status::Cancelled => step(&mut self.cancelled),
            Status::Todo | Status::Claimed => {}
        }
    }
}

/// What a node spent or may spend: tokens, and cost in millionths of its unit (kept whole
/// so that no digit is lost; shown as a decimal, `cost=0.25`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Spend {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tokens: u64,
    /// Cost in millionths (`cost=1.5` is 1500000).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cost_micros: u64,
}

/// Tokens and cost, each given or not: a node's budget (the most it may spend of each,
/// where set), or a claim's report of what it has spent so far (a field left out keeps the
/// last one reported).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Amounts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micros: Option<u64>,
}

impl Spend {
    pub fn is_zero(&self) -> bool {
        *self == Spend::default()
    }

    /// This spend plus `other`, each saturating at the largest value.
    pub fn plus(&self, other: &Spend) -> Spend {
        Spend {
            tokens: self.tokens.saturating_add(other.tokens),
            cost_micros: self.cost_micros.saturating_add(other.cost_micros),
        }
    }

    /// The first field in which this spend is below `earlier`, if any.
    pub fn below(&self, earlier: &Spend) -> Option<&'static str> {
        if self.tokens < earlier.tokens {
            Some("tokens")
        } else if self.cost_micros < earlier.cost_micros {
            Some("cost")
        } else {
            None
        }
    }
}

impl std::fmt::Display for Spend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tokens={}", self.tokens)?;
        if self.cost_micros > 0 {
            write!(f, ",cost={}", format_cost(self.cost_micros))?;
        }
        Ok(())
    }
}

/// The most a node may spend.
pub type Budget = Amounts;
/// What a claim reports it has spent so far.
pub type Usage = Amounts;

impl Amounts {
    /// `tokens=N[,cost=X]`, at least one of them; `what` names it in an error.
    pub fn parse(what: &str, text: &str) -> crate::Result<Amounts> {
        let (tokens, cost_micros) = pairs(what, text)?;
        Ok(Amounts {
            tokens,
            cost_micros,
        })
    }

    /// This report over the claim's `last` one: a field left out keeps its last value.
    pub fn over(&self, last: &Spend) -> Spend {
        Spend {
            tokens: self.tokens.unwrap_or(last.tokens),
            cost_micros: self.cost_micros.unwrap_or(last.cost_micros),
        }
    }

    /// How `spent` goes past this budget (`tokens 1200 of 1000`), if it does.
    pub fn exceeded_by(&self, spent: &Spend) -> Option<String> {
        let mut over = Vec::new();
        if let Some(t) = self.tokens.filter(|t| spent.tokens > *t) {
            over.push(format!("tokens {} of {t}", spent.tokens));
        }
        if let Some(c) = self.cost_micros.filter(|c| spent.cost_micros > *c) {
            over.push(format!(
                "cost {} of {}",
                format_cost(spent.cost_micros),
                format_cost(c)
            ));
        }
        (!over.is_empty()).then(|| over.join(", "))
    }
}

impl std::fmt::Display for Amounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(t) = self.tokens {
            parts.push(format!("tokens={t}"));
        }
        if let Some(c) = self.cost_micros {
            parts.push(format!("cost={}", format_cost(c)));
        }
        f.write_str(&parts.join(","))
    }
}

impl super::Node {
    /// Spent past its budget.
    pub fn is_over_budget(&self) -> bool {
        self.budget
            .is_some_and(|b| b.exceeded_by(&self.spent).is_some())
    }
}

/// Millionths as a decimal with no trailing zeros: 1500000 is `1.5`, 3 is `0.000003`.
pub fn format_cost(micros: u64) -> String {
    let (whole, frac) = (micros / 1_000_000, micros % 1_000_000);
    if frac == 0 {
        return whole.to_string();
    }
    let digits = format!("{frac:06}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// A decimal cost (`2`, `0.25`, at most 6 digits after the point) in millionths.
pub fn parse_cost(what: &str, text: &str) -> crate::Result<u64> {
    let bad = |why: &str| {
        crate::Error::invalid(format!(
            "{what}: cost must be a decimal number such as 2 or 0.25 {why}, got {text:?}"
        ))
    };
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !digits(whole)
        || !digits(frac)
        || (text.contains('.') && frac.is_empty())
    {
        return Err(bad("(digits, one point)"));
    }
    if frac.len() > 6 {
        return Err(bad("with at most 6 digits after the point"));
    }
    let w: u64 = whole.parse().map_err(|_| bad("within 18446744073709"))?;
    let f: u64 = format!("{frac:0<6}").parse().unwrap_or(0);
    w.checked_mul(1_000_000)
        .and_then(|w| w.checked_add(f))
        .ok_or_else(|| bad("within 18446744073709"))
}

/// `tokens=N` and `cost=X`, comma-separated, each at most once, at least one.
fn pairs(what: &str, text: &str) -> crate::Result<(Option<u64>, Option<u64>)> {
    let (mut tokens, mut cost) = (None, None);
    let bad = |why: String| {
        crate::Error::invalid(format!(
            "{what} must be tokens=N and/or cost=X, comma-separated (tokens=20000,cost=1.5): \
             {why}"
        ))
    };
    for part in text.split(',').map(str::trim) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(bad(format!("{part:?} has no '='")));
        };
        match key.trim() {
            "tokens" if tokens.is_none() => {
                let v = value.trim();
                tokens = Some(
                    v.parse::<u64>()
                        .map_err(|_| bad(format!("tokens must be a whole number, got {v:?}")))?,
                );
            }
            "cost" if cost.is_none() => cost = Some(parse_cost(what, value.trim())?),
            k @ ("tokens" | "cost") => return Err(bad(format!("{k} is given twice"))),
            k => return Err(bad(format!("unknown field {k:?}"))),
        }
    }
    Ok((tokens, cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_keep_every_digit() {
        for (text, micros) in [("2", 2_000_000), ("0.25", 250_000), ("0.000001", 1)] {
            assert_eq!(parse_cost("budget", text).unwrap(), micros);
            assert_eq!(format_cost(micros), text);
        }
        for bad in [
            "",
            ".5",
            "1.",
            "1.0000001",
            "-1",
            "1e3",
            "99999999999999999999",
        ] {
            assert!(parse_cost("budget", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn budgets_and_spend_read_their_text() {
        let b = Budget::parse("budget", "tokens=1000,cost=2.5").unwrap();
        assert_eq!(b.to_string(), "tokens=1000,cost=2.5");
        let s = Usage::parse("usage", "cost=3, tokens=10").unwrap();
        assert_eq!(
            b.exceeded_by(&s.over(&Spend::default())).as_deref(),
            Some("cost 3 of 2.5")
        );
        let last = Spend {
            tokens: 7,
            cost_micros: 9,
        };
        let t = Usage::parse("usage", "tokens=8").unwrap().over(&last);
        assert_eq!((t.tokens, t.cost_micros), (8, 9));
        assert!(Budget::parse("budget", "tokens=1,tokens=2").is_err());
        assert!(Budget::parse("budget", "minutes=3").is_err());
        assert!(Usage::parse("usage", "tokens=-1").is_err());
    }

    #[test]
    fn a_container_settles_when_its_children_have() {
        let mut c = Children::default();
        assert_eq!(c.settled(), None);
        c.count(super::super::Status::Todo, true);
        c.count(super::super::Status::Done, true);
        assert_eq!(c.settled(), None);
        c.count(super::super::Status::Todo, false);
        c.count(super::super::Status::Cancelled, true);
        assert_eq!(c.settled(), Some(super::super::Status::Done));
        c.count(super::super::Status::Failed, true);
        assert_eq!(c.settled(), Some(super::super::Status::Failed));
    }
}
