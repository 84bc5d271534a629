//! The rows the store's queries answer, read by column name into named structs, whichever
//! protocol carried them (a prepared statement's typed row, or the text of a statement sent
//! whole in one round trip). A column missing or of another type is `corrupt`, naming what
//! answered it.

use super::PgStore;
use crate::error::Result;
use postgres::types::Type;

/// One answered row's columns, by name.
pub(super) struct Cols<'r> {
    store: &'r PgStore,
    row: Row<'r>,
    what: &'static str,
}

enum Row<'r> {
    Typed(&'r postgres::Row),
    Text(&'r postgres::SimpleQueryRow),
}

/// A struct read from one row.
pub(super) trait FromRow: Sized {
    fn from_row(c: &Cols<'_>) -> Result<Self>;
}

impl<'r> Cols<'r> {
    pub fn typed(store: &'r PgStore, row: &'r postgres::Row, what: &'static str) -> Self {
        Cols {
            store,
            row: Row::Typed(row),
            what,
        }
    }

    pub fn text(store: &'r PgStore, row: &'r postgres::SimpleQueryRow, what: &'static str) -> Self {
        Cols {
            store,
            row: Row::Text(row),
            what,
        }
    }

    pub fn read<T: FromRow>(&self) -> Result<T> {
        T::from_row(self)
    }

    fn bad(&self, name: &str, e: impl std::fmt::Display) -> crate::error::Error {
        self.store
            .corrupt(format!("{}: column {name}: {e}", self.what))
    }

    /// A text column (NULL is `None`).
    pub fn str(&self, name: &str) -> Result<Option<String>> {
        let got = match self.row {
            Row::Typed(r) => r
                .try_get::<_, Option<String>>(name)
                .map_err(|e| e.to_string()),
            Row::Text(r) => r
                .try_get(name)
                .map(|s| s.map(str::to_string))
                .map_err(|e| e.to_string()),
        };
        got.map_err(|e| self.bad(name, e))
    }

    /// A number column (`int` or `bigint`; NULL is `None`).
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>> {
        match self.row {
            Row::Typed(r) => {
                let ty = r
                    .columns()
                    .iter()
                    .find(|c| c.name() == name)
                    .map(|c| c.type_().clone());
                if ty == Some(Type::INT4) {
                    r.try_get::<_, Option<i32>>(name)
                        .map(|v| v.map(i64::from))
                        .map_err(|e| self.bad(name, e))
                } else {
                    r.try_get::<_, Option<i64>>(name)
                        .map_err(|e| self.bad(name, e))
                }
            }
            Row::Text(_) => self
                .str(name)?
                .map(|s| s.parse().map_err(|e| self.bad(name, e)))
                .transpose(),
        }
    }

    /// A number column, NULL read as 0.
    pub fn int(&self, name: &str) -> Result<i64> {
        Ok(self.opt_int(name)?.unwrap_or_default())
    }

    /// A boolean column, NULL read as false.
    pub fn flag(&self, name: &str) -> Result<bool> {
        match self.row {
            Row::Typed(r) => r
                .try_get::<_, Option<bool>>(name)
                .map(Option::unwrap_or_default)
                .map_err(|e| self.bad(name, e)),
            Row::Text(_) => Ok(self.str(name)?.as_deref() == Some("t")),
        }
    }
}

/// A workspace's row as a catch-up answers it (`since_ws`, `lock_ws`, `turn`).
pub(super) struct WsRow {
    pub wseq: i64,
    pub now: i64,
    pub last_now: i64,
    pub version: i32,
    pub settings_version: i64,
    pub settings: Option<String>,
    pub nodes: String,
}

impl FromRow for WsRow {
    fn from_row(c: &Cols<'_>) -> Result<Self> {
        Ok(WsRow {
            wseq: c.int("wseq")?,
            now: c.int("now_ms")?,
            last_now: c.int("last_now")?,
            version: c.int("version")? as i32,
            settings_version: c.int("settings_version")?,
            settings: c.str("settings")?,
            nodes: c.str("nodes")?.unwrap_or_else(|| "[]".into()),
        })
    }
}

/// What a whole-store catch-up answers (`since_all`).
pub(super) struct AllRow {
    pub now: i64,
    pub version: i32,
    pub settings_version: i64,
    pub settings: Option<String>,
    pub spaces: String,
    pub nodes: String,
}

impl FromRow for AllRow {
    fn from_row(c: &Cols<'_>) -> Result<Self> {
        Ok(AllRow {
            now: c.int("now_ms")?,
            version: c.int("version")? as i32,
            settings_version: c.int("settings_version")?,
            settings: c.str("settings")?,
            spaces: c.str("spaces")?.unwrap_or_else(|| "{}".into()),
            nodes: c.str("nodes")?.unwrap_or_else(|| "[]".into()),
        })
    }
}

/// The store row and the server's time, for a full load.
pub(super) struct StoreRow {
    pub now: i64,
    pub version: i32,
    pub settings: String,
    pub settings_version: i64,
}

impl FromRow for StoreRow {
    fn from_row(c: &Cols<'_>) -> Result<Self> {
        Ok(StoreRow {
            now: c.int("now")?,
            version: c.int("version")? as i32,
            settings: c.str("settings")?.unwrap_or_default(),
            settings_version: c.int("settings_version")?,
        })
    }
}

/// A node row of a full load or the archive: whether it is archived, and its body.
pub(super) struct NodeRow {
    pub archived: bool,
    pub body: String,
}

impl FromRow for NodeRow {
    fn from_row(c: &Cols<'_>) -> Result<Self> {
        Ok(NodeRow {
            archived: c.flag("archived")?,
            body: c.str("body")?.unwrap_or_default(),
        })
    }
}

/// What a commit answers (`commit`): committed, or the workspace's rows since.
pub(super) struct Committed {
    pub committed: bool,
    pub wseq: i64,
    pub now: i64,
    pub last_now: i64,
    pub settings_version: i64,
    pub settings: Option<String>,
    pub nodes: String,
    pub problem: Option<String>,
}

impl FromRow for Committed {
    fn from_row(c: &Cols<'_>) -> Result<Self> {
        Ok(Committed {
            committed: c.flag("committed")?,
            wseq: c.int("wseq")?,
            now: c.int("now_ms")?,
            last_now: c.int("last_now")?,
            settings_version: c.int("settings_version")?,
            settings: c.str("settings")?,
            nodes: c.str("nodes")?.unwrap_or_else(|| "[]".into()),
            problem: c.str("problem")?,
        })
    }
}

/// What a wait in line answers (`ask`, `turn`): the request's number (`ask` only), then
/// the answer, or the lead with the waiting requests and the workspace's row.
pub(super) struct Turn {
    pub ask: Option<i64>,
    pub answered: Option<String>,
    pub asks: Option<String>,
}

impl FromRow for Turn {
    fn from_row(c: &Cols<'_>) -> Result<Self> {
        let answered = match c.str("outcome")?.as_deref() {
            Some("answered") => Some(c.str("answer")?.unwrap_or_default()),
            _ => None,
        };
        Ok(Turn {
            ask: c.opt_int("ask")?,
            answered,
            asks: c.str("asks")?,
        })
    }
}

/// What a leader's commit answers (`lead`).
pub(super) struct Led {
    pub committed: bool,
    pub wseq: i64,
    pub now: i64,
    pub last_now: i64,
    pub settings_version: i64,
    pub problem: Option<String>,
}

impl FromRow for Led {
    fn from_row(c: &Cols<'_>) -> Result<Self> {
        Ok(Led {
            committed: c.flag("committed")?,
            wseq: c.int("wseq")?,
            now: c.int("now_ms")?,
            last_now: c.int("last_now")?,
            settings_version: c.int("settings_version")?,
            problem: c.str("problem")?,
        })
    }
}
