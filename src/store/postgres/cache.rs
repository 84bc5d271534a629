//! A handle's cached view of a PostgreSQL store and how it catches up: the whole store in one
//! snapshot the first time, then per workspace (a write reads only its own workspace's
//! changes, [`Conn::sync_ws`]) or the whole store's (a read, [`Conn::sync`]).

use super::{check_version, first_row, int_at, local_ms, missing, parse_node, parse_settings};
use super::{snapshot, sql, Conn, PgStore};
use crate::error::{Error, Result};
use crate::model::{ArchivedStub, Change, Millis, Node};
use crate::state::State;
use std::collections::HashMap;

/// What a catch-up on one workspace answers.
pub(super) struct WsRow {
    pub wseq: i64,
    pub now: i64,
    pub last_now: i64,
    pub version: i32,
    pub settings_version: i64,
    pub settings: Option<String>,
    pub nodes: String,
}

/// One workspace as the cache last saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Space {
    /// Its write count: the cache holds every change of its writes up to this one.
    pub wseq: i64,
    /// Its clock: the time its last write was decided at.
    pub last_now: i64,
}

impl Conn {
    /// Brings the whole cached state up to date; returns the server's time, and whether the
    /// store exists. With `flush`, what it reads is on disk first (a read shows nothing a
    /// crash could take back). Rows that are not claimdag's nodes are `corrupt`.
    pub(super) fn sync(&mut self, store: &PgStore, flush: bool) -> Result<(Millis, bool)> {
        if !self.loaded {
            let loaded = self.full_load(store, None)?;
            // After the snapshot: every commit it holds is then on disk.
            if flush && self.exists {
                self.flush(store)?;
            }
            return Ok(loaded);
        }
        let stmt = match self.stmt(store, sql::SINCE_ALL) {
            Ok(s) => s,
            Err(e) => return self.absent(store, e),
        };
        let known: HashMap<&str, i64> = self
            .spaces
            .iter()
            .map(|(w, s)| (w.as_str(), s.wseq))
            .collect();
        let known = serde_json::to_string(&known).map_err(|e| Error::Internal(e.to_string()))?;
        let sv = self.settings_version;
        let flush = flush && self.durable;
        let row = match self.client()?.query_one(&stmt, &[&known, &sv, &flush]) {
            Ok(r) => r,
            Err(e) if missing(&e) => {
                self.statements.clear();
                return self.absent(store, store.err(e));
            }
            Err(e) => return Err(store.err(e)),
        };
        let (now, version, sv): (i64, i32, i64) = (row.get(0), row.get(1), row.get(2));
        check_version(store, version)?;
        let spaces: String = row.get(4);
        let spaces: HashMap<String, (i64, i64)> = serde_json::from_str(&spaces)
            .map_err(|e| store.corrupt(format!("the workspaces' rows are garbled: {e}")))?;
        self.apply_rows(store, row.get(3), &row.get::<_, String>(5))?;
        self.settings_version = sv;
        let mut last = 0;
        for (w, (wseq, last_now)) in spaces {
            last = last.max(last_now);
            self.spaces.insert(w, Space { wseq, last_now });
        }
        self.saw_clock(now, last);
        self.exists = true;
        Ok((now as Millis, true))
    }

    /// Brings workspace `w` of the cached state up to date (and the settings), for a write
    /// to it; returns the server's time. The store exists. With `flush`, what it reads is
    /// on disk first (a refusal is answered only on what a crash cannot take back).
    pub(super) fn sync_ws(&mut self, store: &PgStore, w: &str, flush: bool) -> Result<Millis> {
        let stmt = self.stmt(store, sql::SINCE_WS)?;
        let seen = self.spaces.get(w).copied().unwrap_or_default();
        let sv = self.settings_version;
        let flush = flush && self.durable;
        let row = self
            .client()?
            .query_one(&stmt, &[&w, &seen.wseq, &sv, &flush])
            .map_err(|e| store.err(e))?;
        let caught = WsRow {
            wseq: row.get(0),
            now: row.get(1),
            last_now: row.get(2),
            version: row.get(3),
            settings_version: row.get(4),
            settings: row.get(5),
            nodes: row.get(6),
        };
        self.caught_up(store, w, caught)
    }

    /// Starts a transaction holding workspace `w`'s lock and catches up on it under the
    /// lock, in one round trip; returns the server's time.
    pub(super) fn lock_ws(&mut self, store: &PgStore, w: &str) -> Result<Millis> {
        let seen = self.spaces.get(w).copied().unwrap_or_default();
        let text = sql::q(sql::LOCK_WS, &store.target.schema)
            .replace("{w}", &sql::literal(w))
            .replace("{since}", &seen.wseq.to_string())
            .replace("{sv}", &self.settings_version.to_string());
        let messages = self
            .client()?
            .simple_query(&text)
            .map_err(|e| store.err(e))?;
        let row = first_row(store, &messages, "lock")?;
        let int = |i: usize| int_at(store, row, i);
        let caught = WsRow {
            wseq: int(0)?,
            now: int(1)?,
            last_now: int(2)?,
            version: int(3)? as i32,
            settings_version: int(4)?,
            settings: row.get(5).map(str::to_string),
            nodes: row.get(6).unwrap_or("[]").to_string(),
        };
        self.caught_up(store, w, caught)
    }

    pub(super) fn caught_up(&mut self, store: &PgStore, w: &str, row: WsRow) -> Result<Millis> {
        check_version(store, row.version)?;
        self.apply_rows(store, row.settings, &row.nodes)?;
        self.settings_version = row.settings_version;
        let space = Space {
            wseq: row.wseq,
            last_now: row.last_now,
        };
        self.spaces.insert(w.to_string(), space);
        self.saw_clock(row.now, row.last_now);
        Ok(row.now as Millis)
    }

    /// Returns once every commit before it is on disk (nothing when this session commits
    /// asynchronously: its writes are not waited for either).
    pub(super) fn flush(&mut self, store: &PgStore) -> Result<()> {
        if !self.durable {
            return Ok(());
        }
        let stmt = self.stmt(store, sql::FLUSH)?;
        self.client()?
            .execute(&stmt, &[])
            .map_err(|e| store.err(e))?;
        Ok(())
    }

    /// Makes workspace `w`'s row, committed, before a first write to it.
    pub(super) fn ensure_ws(&mut self, store: &PgStore, w: &str) -> Result<()> {
        let stmt = self.stmt(store, sql::ENSURE_WS)?;
        self.client()?
            .execute(&stmt, &[&w])
            .map_err(|e| store.err(e))?;
        self.sync_ws(store, w, false).map(|_| ())
    }

    /// The store is not there (yet): an empty state at write 0. When it is there after all
    /// (another process made it since the look that missed it), it is loaded instead.
    pub(super) fn absent(&mut self, store: &PgStore, why: Error) -> Result<(Millis, bool)> {
        let exists: bool = self
            .client()?
            .query_one(sql::EXISTS, &[&store.target.schema])
            .map_err(|e| store.err(e))?
            .get(0);
        if exists {
            // Another process made the store between the look that missed it and this one:
            // read it as it now is (once; a store that exists and still cannot be read is
            // the error).
            if self.reloading {
                return Err(why);
            }
            self.reloading = true;
            let loaded = self.full_load(store, None);
            self.reloading = false;
            return loaded;
        }
        self.state = State::default();
        self.spaces.clear();
        self.settings_version = 0;
        self.loaded = true;
        self.exists = false;
        let now: i64 = self
            .client()?
            .query_one(sql::NOW, &[])
            .map_err(|e| store.err(e))?
            .get(0);
        self.saw_clock(now, 0);
        Ok((now as Millis, false))
    }

    /// Reads the whole store in one snapshot. Rows changed by hand in a way that breaks the
    /// store (see [`tampering`]) are `corrupt`; `check` passes `found` to have them listed
    /// instead.
    pub(super) fn full_load(
        &mut self,
        store: &PgStore,
        found: Option<&mut Vec<String>>,
    ) -> Result<(Millis, bool)> {
        let schema = store.target.schema.clone();
        let client = self.client()?;
        let mut tx = snapshot(client, store)?;
        let row = match tx.query_one(&sql::q(sql::STORE_ROW, &schema), &[]) {
            Ok(r) => r,
            Err(e) if missing(&e) => {
                drop(tx);
                return self.absent(store, store.err(e));
            }
            Err(e) => return Err(store.err(e)),
        };
        let (now, version, settings, sv): (i64, i32, String, i64) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        check_version(store, version)?;
        let q = |t| sql::q(t, &schema);
        let spaces: HashMap<String, Space> = tx
            .query(&q(sql::SPACES), &[])
            .map_err(|e| store.err(e))?
            .iter()
            .map(|r| {
                let space = Space {
                    wseq: r.get(1),
                    last_now: r.get(2),
                };
                (r.get::<_, String>(0), space)
            })
            .collect();
        let rows = tx
            .query(&q(sql::ALL_NODES), &[])
            .map_err(|e| store.err(e))?;
        let last = tx
            .query_one(&q(sql::LAST_WRITES), &[])
            .map_err(|e| store.err(e))?;
        tx.commit().map_err(|e| store.err(e))?;
        let mut problems = tampering((last.get(0), last.get(1)));
        let mut live = Vec::new();
        let mut stubs = crate::id::IdMap::default();
        let mut seen = crate::id::IdMap::default();
        for r in rows {
            let (archived, body): (bool, String) = (r.get(0), r.get(1));
            let node = parse_node(store, &body)?;
            problems.extend(columns_disagree(&node, (r.get(2), r.get(3), r.get(4))));
            problems.extend(past_its_workspace(&spaces, r.get(5), r.get(6)));
            problems.extend(second_row(&mut seen, &node));
            if archived {
                stubs.insert(node.id, ArchivedStub::of(&node));
            } else {
                live.push(node);
            }
        }
        match found {
            Some(found) => found.extend(problems),
            None => {
                if let Some(first) = problems.into_iter().next() {
                    return Err(store.corrupt(first));
                }
            }
        }
        let settings = parse_settings(store, &settings)?;
        // (A node with two rows is among the problems: `second_row`.)
        self.state = State::from_parts(settings, live, stubs);
        let last_now = spaces.values().map(|s| s.last_now).max().unwrap_or(0);
        self.spaces = spaces;
        self.settings_version = sv;
        self.loaded = true;
        self.exists = true;
        self.saw_clock(now, last_now);
        Ok((now as Millis, true))
    }

    /// Notes the server's clock (`now`, just read) and a workspace's last write time.
    pub(super) fn saw_clock(&mut self, now: i64, last_now: i64) {
        self.offset_ms = now - local_ms();
        self.last_now = self.last_now.max(last_now.max(0) as u64);
    }

    /// The server's time as this handle reads it now, for a write to `w` (`None`: the
    /// settings): its clock plus the last offset seen, never before that workspace's last
    /// write's time (any write's, for the settings). `commit7` refuses a time past the
    /// server's own.
    pub(super) fn decision_time(&self, w: Option<&str>) -> Millis {
        let floor = match w {
            Some(w) => self.spaces.get(w).map_or(0, |s| s.last_now.max(0) as u64),
            // A settings change is judged at no lease: it only never goes back.
            None => self.last_now,
        };
        ((local_ms() + self.offset_ms).max(0) as u64).max(floor)
    }

    /// The time a read is made at: never before any write seen.
    pub(super) fn read_time(&self, now: Millis) -> Millis {
        now.max(self.last_now)
    }

    /// The sum a whole-store catch-up stands at (`version7` on the server).
    pub(super) fn version(&self) -> i64 {
        self.spaces.values().map(|s| s.wseq).sum::<i64>() + self.settings_version
    }

    /// Applies the rows a catch-up or a refused commit returned
    /// (`[{"archived": bool, "node": {...}}]`), and the settings when they moved.
    pub(super) fn apply_rows(
        &mut self,
        store: &PgStore,
        settings: Option<String>,
        nodes: &str,
    ) -> Result<()> {
        #[derive(serde::Deserialize)]
        struct Row {
            archived: bool,
            node: Node,
        }
        let rows: Vec<Row> = serde_json::from_str(nodes)
            .map_err(|e| store.corrupt(format!("a node row is not a claimdag node: {e}")))?;
        let mut change = Change {
            settings: settings
                .map(|s| parse_settings(store, &s))
                .transpose()?,
            ..Change::default()
        };
        if rows.is_empty() && change.settings.is_none() {
            return Ok(());
        }
        for r in rows {
            if r.archived {
                change.archived.push(r.node);
            } else {
                change.nodes.push(r.node);
            }
        }
        self.state.apply(&change);
        Ok(())
    }
}

/// The write counter moved back by hand: the history names a write past the last number
/// handed out, which the next write would take again.
fn tampering((history, head): (i64, i64)) -> Vec<String> {
    if history > head {
        return vec![format!(
            "the history holds write {history}, past the last write number {head}: the write counter was changed by hand"
        )];
    }
    Vec::new()
}

/// A node row changed by a write of its workspace past the workspace's count: the
/// workspace's row was moved back by hand, and the next write would build on a count it
/// already used.
fn past_its_workspace(spaces: &HashMap<String, Space>, w: String, wseq: i64) -> Option<String> {
    let count = spaces.get(&w).map_or(0, |s| s.wseq);
    (wseq > count).then(|| {
        format!(
            "a node row of workspace {w:?} was changed by its write {wseq}, past its last write {count}: the workspace's row was changed by hand"
        )
    })
}

/// A second row for a node (`seen` holds the nodes whose row came before): one was added by
/// hand, and which of the two is the node is unknown.
fn second_row(seen: &mut crate::id::IdMap<()>, node: &Node) -> Option<String> {
    seen.insert(node.id, ()).map(|()| {
        format!(
            "node {} has two rows: one was added by hand",
            node.id.hex()
        )
    })
}

/// A node row whose status, generation or holder column says other than its body: it was
/// edited by hand, and which of the two is meant is unknown.
fn columns_disagree(
    node: &Node,
    (status, generation, holder): (String, i64, Option<String>),
) -> Option<String> {
    let body_status = serde_json::to_value(node.status).ok();
    let body_holder = node.holder.map(|h| h.hex());
    let same = body_status.as_ref().and_then(|v| v.as_str()) == Some(status.as_str())
        && generation == node.generation as i64
        && holder == body_holder;
    (!same).then(|| {
        format!(
            "node {}: its status, generation or holder column disagrees with its body: the row was changed by hand",
            node.id.hex()
        )
    })
}
