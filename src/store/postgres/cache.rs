//! A handle's cached view of a PostgreSQL store and how it catches up: the whole store in one
//! snapshot the first time, then per workspace (a write reads only its own workspace's
//! changes, [`Conn::sync_ws`]) or the whole store's (a read, [`Conn::sync`]).

use super::rows::{AllRow, Cols, NodeRow, StoreRow, WsRow};
use super::{check_version, first_row, local_ms, missing, parse_node, parse_settings};
use super::{snapshot, sql, Conn, PgStore};
use crate::error::{Error, Result};
use crate::model::{ArchivedStub, Change, Millis, Node};
use crate::state::State;
use std::collections::HashMap;

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
        if !self.cache.loaded {
            let loaded = self.full_load(store, None)?;
            // After the snapshot: every commit it holds is then on disk.
            if flush && self.cache.exists {
                self.flush(store)?;
            }
            return Ok(loaded);
        }
        let stmt = match self.stmt(store, sql::SINCE_ALL) {
            Ok(s) => s,
            Err(e) => return self.absent(store, e),
        };
        let known: HashMap<&str, i64> = self
            .cache
            .spaces
            .iter()
            .map(|(w, s)| (w.as_str(), s.wseq))
            .collect();
        let known = serde_json::to_string(&known).map_err(|e| Error::Internal(e.to_string()))?;
        let sv = self.cache.settings_version;
        let flush = flush && self.session.durable;
        let row = match self.client()?.query_one(&stmt, &[&known, &sv, &flush]) {
            Ok(r) => r,
            Err(e) if missing(&e) => {
                self.statements.clear();
                return self.absent(store, store.err(e));
            }
            Err(e) => return Err(store.err(e)),
        };
        let all: AllRow = Cols::typed(store, &row, "a catch-up").read()?;
        check_version(store, all.version)?;
        let spaces: HashMap<String, (i64, i64)> = serde_json::from_str(&all.spaces)
            .map_err(|e| store.corrupt(format!("the workspaces' rows are garbled: {e}")))?;
        self.apply_rows(store, all.settings, &all.nodes)?;
        self.cache.settings_version = all.settings_version;
        let now = all.now;
        let mut last = 0;
        for (w, (wseq, last_now)) in spaces {
            last = last.max(last_now);
            self.cache.spaces.insert(w, Space { wseq, last_now });
        }
        self.saw_clock(now, last);
        self.cache.exists = true;
        Ok((now as Millis, true))
    }

    /// Brings workspace `w` of the cached state up to date (and the settings), for a write
    /// to it; returns the server's time. The store exists. With `flush`, what it reads is
    /// on disk first (a refusal is answered only on what a crash cannot take back).
    pub(super) fn sync_ws(&mut self, store: &PgStore, w: &str, flush: bool) -> Result<Millis> {
        let stmt = self.stmt(store, sql::SINCE_WS)?;
        let seen = self.cache.spaces.get(w).copied().unwrap_or_default();
        let sv = self.cache.settings_version;
        let flush = flush && self.session.durable;
        let row = self
            .client()?
            .query_one(&stmt, &[&w, &seen.wseq, &sv, &flush])
            .map_err(|e| store.err(e))?;
        let caught = Cols::typed(store, &row, "a workspace's catch-up").read()?;
        self.caught_up(store, w, caught)
    }

    /// Starts a transaction holding workspace `w`'s lock and catches up on it under the
    /// lock, in one round trip; returns the server's time.
    pub(super) fn lock_ws(&mut self, store: &PgStore, w: &str) -> Result<Millis> {
        let seen = self.cache.spaces.get(w).copied().unwrap_or_default();
        let text = sql::fill(
            sql::LOCK_WS,
            &[
                ("schema", &sql::ident(&store.target.schema)),
                ("w", &sql::literal(w)),
                ("since", &seen.wseq.to_string()),
                ("sv", &self.cache.settings_version.to_string()),
            ],
        );
        let messages = self
            .client()?
            .simple_query(&text)
            .map_err(|e| store.err(e))?;
        let row = first_row(store, &messages, "lock")?;
        let caught = Cols::text(store, row, "a lock").read()?;
        self.caught_up(store, w, caught)
    }

    pub(super) fn caught_up(&mut self, store: &PgStore, w: &str, row: WsRow) -> Result<Millis> {
        check_version(store, row.version)?;
        self.apply_rows(store, row.settings, &row.nodes)?;
        self.cache.settings_version = row.settings_version;
        let space = Space {
            wseq: row.wseq,
            last_now: row.last_now,
        };
        self.cache.spaces.insert(w.to_string(), space);
        self.saw_clock(row.now, row.last_now);
        Ok(row.now as Millis)
    }

    /// Returns once every commit before it is on disk (nothing when this session commits
    /// asynchronously: its writes are not waited for either).
    pub(super) fn flush(&mut self, store: &PgStore) -> Result<()> {
        if !self.session.durable {
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
            .get("exists");
        if exists {
            // Another process made the store between the look that missed it and this one:
            // read it as it now is (once; a store that exists and still cannot be read is
            // the error).
            if self.cache.reloading {
                return Err(why);
            }
            self.cache.reloading = true;
            let loaded = self.full_load(store, None);
            self.cache.reloading = false;
            return loaded;
        }
        self.cache.state = State::default();
        self.cache.spaces.clear();
        self.cache.settings_version = 0;
        self.cache.loaded = true;
        self.cache.exists = false;
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
        let StoreRow {
            now,
            version,
            settings,
            settings_version: sv,
        } = Cols::typed(store, &row, "the store row").read()?;
        check_version(store, version)?;
        let q = |t| sql::q(t, &schema);
        let spaces: HashMap<String, Space> = tx
            .query(&q(sql::SPACES), &[])
            .map_err(|e| store.err(e))?
            .iter()
            .map(|r| {
                let c = Cols::typed(store, r, "a workspace's row");
                let space = Space {
                    wseq: c.int("wseq")?,
                    last_now: c.int("last_now")?,
                };
                Ok((c.str("name")?.unwrap_or_default(), space))
            })
            .collect::<Result<_>>()?;
        let rows = tx
            .query(&q(sql::ALL_NODES), &[])
            .map_err(|e| store.err(e))?;
        // The tables changed by hand in a way that breaks the store (schema/commit.sql).
        let problems: Vec<String> = tx
            .query(&q(sql::TAMPERING), &[])
            .map_err(|e| store.err(e))?
            .iter()
            .map(|r| Ok(Cols::typed(store, r, "a tamper check").str("t")?.unwrap_or_default()))
            .collect::<Result<_>>()?;
        tx.commit().map_err(|e| store.err(e))?;
        let mut live = Vec::new();
        let mut stubs = crate::id::IdMap::default();
        for r in &rows {
            let NodeRow { archived, body } = Cols::typed(store, r, "a node row").read()?;
            let node = parse_node(store, &body)?;
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
        self.cache.state = State::from_parts(settings, live, stubs);
        let last_now = spaces.values().map(|s| s.last_now).max().unwrap_or(0);
        self.cache.spaces = spaces;
        self.cache.settings_version = sv;
        self.cache.loaded = true;
        self.cache.exists = true;
        self.saw_clock(now, last_now);
        Ok((now as Millis, true))
    }

    /// Notes the server's clock (`now`, just read) and a workspace's last write time.
    pub(super) fn saw_clock(&mut self, now: i64, last_now: i64) {
        self.clock.offset_ms = now - local_ms();
        self.clock.last_now = self.clock.last_now.max(last_now.max(0) as u64);
    }

    /// The server's time as this handle reads it now, for a write to `w` (`None`: the
    /// settings): its clock plus the last offset seen, never before that workspace's last
    /// write's time (any write's, for the settings). `commit` refuses a time past the
    /// server's own.
    pub(super) fn decision_time(&self, w: Option<&str>) -> Millis {
        let floor = match w {
            Some(w) => self.cache.spaces.get(w).map_or(0, |s| s.last_now.max(0) as u64),
            // A settings change is judged at no lease: it only never goes back.
            None => self.clock.last_now,
        };
        ((local_ms() + self.clock.offset_ms).max(0) as u64).max(floor)
    }

    /// The time a read is made at: never before any write seen.
    pub(super) fn read_time(&self, now: Millis) -> Millis {
        now.max(self.clock.last_now)
    }

    /// The sum a whole-store catch-up stands at (`change_count` on the server).
    pub(super) fn version(&self) -> i64 {
        self.cache.spaces.values().map(|s| s.wseq).sum::<i64>() + self.cache.settings_version
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
        self.cache.state.apply(&change);
        Ok(())
    }
}
