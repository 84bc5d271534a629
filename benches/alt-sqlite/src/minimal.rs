//! The least a SQLite claim table must write: one table
//! `n(id integer primary key, status, holder, gen, prio, ttl, at)`, one index on
//! `(status, prio desc, id)` and an unindexed history table `h`. Each write is
//! `BEGIN IMMEDIATE`, hand back expired claims, the change, a history row, `COMMIT`;
//! `journal_mode=WAL`, `synchronous=FULL`. Printed as the system `sqlite-min`, beside the
//! richer schema of `main.rs` (dependencies, two indexes, a history with its fields).

use super::now_ms;
use crate::common::{emit, median, note, Floor, Series};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::Path;
use std::time::{Duration, Instant};

const SYSTEM: &str = "sqlite-min";
const TTL_MS: i64 = 900_000;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS n (
    id INTEGER PRIMARY KEY, status TEXT NOT NULL, holder INTEGER, gen INTEGER NOT NULL,
    prio INTEGER NOT NULL, ttl INTEGER, at INTEGER);
CREATE INDEX IF NOT EXISTS n_pick ON n (status, prio DESC, id);
CREATE TABLE IF NOT EXISTS h (at INTEGER, verb TEXT, node INTEGER, holder INTEGER, gen INTEGER);
";

fn expire(tx: &rusqlite::Transaction<'_>, now: i64) {
    tx.prepare_cached(
        "UPDATE n SET status = 'todo', holder = NULL, gen = gen + 1
         WHERE status = 'claimed' AND at + ttl <= ?1",
    )
    .expect("prepare")
    .execute(params![now])
    .expect("expire");
}

fn history(tx: &rusqlite::Transaction<'_>, now: i64, verb: &str, id: i64, who: i64, gen: i64) {
    tx.prepare_cached("INSERT INTO h (at, verb, node, holder, gen) VALUES (?1, ?2, ?3, ?4, ?5)")
        .expect("prepare")
        .execute(params![now, verb, id, who, gen])
        .expect("history");
}

/// Claims the first `todo` row by the index; `None` when there is none.
fn claim_next(c: &mut Connection, who: i64) -> Option<(i64, i64)> {
    let now = now_ms();
    let tx = c
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .expect("begin");
    expire(&tx, now);
    let picked: Option<(i64, i64)> = tx
        .prepare_cached(
            "SELECT id, gen FROM n WHERE status = 'todo' ORDER BY prio DESC, id LIMIT 1",
        )
        .expect("prepare")
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .expect("pick");
    let (id, gen) = picked?;
    tx.prepare_cached(
        "UPDATE n SET status = 'claimed', holder = ?2, gen = ?3, ttl = ?4, at = ?5 WHERE id = ?1",
    )
    .expect("prepare")
    .execute(params![id, who, gen + 1, TTL_MS, now])
    .expect("claim");
    history(&tx, now, "claim", id, who, gen + 1);
    tx.commit().expect("commit");
    Some((id, gen + 1))
}

/// Completes `id` when `who` holds it at `gen`.
fn complete(c: &mut Connection, id: i64, gen: i64, who: i64) {
    let now = now_ms();
    let tx = c
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .expect("begin");
    expire(&tx, now);
    let changed = tx
        .prepare_cached(
            "UPDATE n SET status = 'done', at = ?4
             WHERE id = ?1 AND gen = ?2 AND holder = ?3 AND status = 'claimed'",
        )
        .expect("prepare")
        .execute(params![id, gen, who, now])
        .expect("complete");
    assert_eq!(changed, 1, "the fence refused a live claim");
    history(&tx, now, "complete", id, who, gen);
    tx.commit().expect("commit");
}

/// `n` rows at `dir`: then durable claim-next + complete cycles, each paired with the bare
/// append + fdatasync floor.
pub fn size(work: &Path, n: usize, label: &str, quick: bool) {
    let dir = work.join(format!("sqlite-min-{label}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut c = super::connect(&dir.join("claims.db"), true, SCHEMA);
    note(&format!(
        "sqlite-min: inserting {n} rows in one transaction"
    ));
    let t = Instant::now();
    {
        let tx = c.transaction().expect("begin");
        {
            let mut ins = tx
                .prepare("INSERT INTO n (id, status, gen, prio) VALUES (?1, 'todo', 1, 0)")
                .expect("prepare");
            for i in 0..n {
                ins.execute(params![i as i64]).expect("insert");
            }
        }
        tx.commit().expect("commit");
    }
    emit(
        SYSTEM,
        &format!("import_s@{label}"),
        t.elapsed().as_secs_f64(),
        "",
    );
    let max = if quick { 50 } else { 200 }.min(n / 4);
    let s = Series::new(max, Duration::from_secs(if quick { 2 } else { 5 }));
    note(&format!(
        "sqlite-min: durable claim-next + complete at {n} rows"
    ));
    let mut floor = Floor::new(&work.join("floor-min"));
    let us = s.run_paired(
        |_| floor.once(),
        |_| {
            let (id, gen) = claim_next(&mut c, 7).expect("a todo row");
            complete(&mut c, id, gen, 7);
        },
    );
    emit(
        SYSTEM,
        &format!("next_cycle_us@{label}"),
        median(us),
        "median",
    );
    emit(
        SYSTEM,
        &format!("floor_us@{label}"),
        floor.done(),
        "median, paired",
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}
