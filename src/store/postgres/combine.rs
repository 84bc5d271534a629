//! Combined writes (schema/combine.sql): under contention a handle
//! leaves its request in the `asks` table and waits, and whichever handle leads the
//! workspace next decides every waiting request with the rules, in order, on its caught-up
//! state, and commits them as consecutive writes with every answer, in one transaction. A
//! workspace then gets through many writes a lock hand-over instead of one.
//!
//! Nothing is decided outside the rules: a leader runs [`rules::apply`] on each request as
//! if it were its own, and a request whose workspace the leader sees otherwise is handed back
//! to its handle to be written the usual way.

use super::cache::Space;
use super::rows::{Cols, Led as LedRow, Turn, WsRow};
use super::{sql, Conn, PgStore};
use crate::error::{Error, Result};
use crate::model::Change;
use crate::rules::{self, NoArchive, Output, Request, Scope};
use serde::{Deserialize, Serialize};

/// The most waiting requests one leader decides in one transaction.
const MOST: i32 = 64;
/// A handle combines its next write when at least this many writes were decided together
/// with its last one, or (its last write written the usual way, under the lock) when this
/// many other writes came to its workspace since the one before: with fewer writers, the
/// lock costs less than the line.
pub(super) const COMBINE_AT: usize = 4;

/// The store's combining policy (`PgStore::combine`): as contention says, always (tests),
/// never (tests and measures).
pub(super) const ALWAYS: u8 = 1;
pub(super) const NEVER: u8 = 2;

/// What a leader answers a waiting request.
#[derive(Serialize, Deserialize)]
enum Answer {
    /// The rules' output, or their refusal.
    Done(std::result::Result<Output, Error>),
    /// The leader sees the request in another workspace (or cannot read it): its handle
    /// writes it the usual way.
    Again,
}

/// Whether `req` may be left for a leader: the verbs of a fleet's hot path, which read and
/// write one workspace and nothing of the archive.
pub(super) fn combinable(req: &Request) -> bool {
    if let Request::Acting { request, .. } | Request::Through { request, .. } = req {
        return combinable(request);
    }
    matches!(
        req,
        Request::ClaimNext { .. }
            | Request::Claim { .. }
            | Request::Renew { .. }
            | Request::Release { .. }
            | Request::Complete(_)
            | Request::CompleteMany(_)
            | Request::Cancel { .. }
            | Request::Reopen { .. }
    )
}

/// Runs `req` combined with other handles' when this handle's last write met enough other
/// writers ([`COMBINE_AT`]); `None` when it is to be written the usual way (less
/// contention, a workspace the cache does not know, or a leader that saw the request
/// otherwise).
pub(super) fn execute(conn: &mut Conn, store: &PgStore, req: &Request) -> Result<Option<Output>> {
    let policy = store.combine.load(std::sync::atomic::Ordering::Relaxed);
    let wanted = match policy {
        ALWAYS => true,
        NEVER => false,
        _ => conn.contention.combine,
    };
    if !wanted || !conn.cache.loaded || !conn.cache.exists || !combinable(req) {
        return Ok(None);
    }
    let w = match req.scope(&conn.cache.state) {
        Scope::Workspace(w) if conn.cache.spaces.contains_key(&w) => w,
        _ => return Ok(None),
    };
    let body = serde_json::to_string(req)
        .map_err(|e| Error::Internal(format!("a request does not serialise: {e}")))?;
    // From here the request may be decided by another handle: a broken connection leaves
    // its outcome unknown. Any failure takes the request back (unless a leader answered
    // it) and gives back the lead, so that no leader decides it after the call failed.
    conn.call.sent = true;
    match wait_or_lead(conn, store, &w, &body) {
        Ok(outcome) => outcome,
        Err(e) => {
            abandon(conn, store, &w);
            Err(e)
        }
    }
}

/// Leaves the request (`body`) and waits for its answer, or leads (again) until the
/// request is decided: the verb's outcome, or an error of the exchange itself.
fn wait_or_lead(
    conn: &mut Conn,
    store: &PgStore,
    w: &str,
    body: &str,
) -> Result<Result<Option<Output>>> {
    let row = wait(conn, store, w, Some(body))?;
    conn.contention.ask = Cols::typed(store, &row, "a request")
        .read::<Turn>()?
        .ask
        .ok_or_else(|| store.corrupt("a request was not numbered"))?;
    let mut led = turn(conn, store, w, &row)?;
    loop {
        match led {
            Led::Answered(answer) => return Ok(answered(conn, store, &answer)),
            Led::Decided(Answer::Done(result)) => return Ok(result.map(Some)),
            Led::Decided(Answer::Again) => return Ok(Ok(None)),
            // Not decided this time: wait (or lead) again.
            Led::Again => {
                if !conn.cache.loaded {
                    conn.sync(store, false)?;
                }
                let row = wait(conn, store, w, None)?;
                led = turn(conn, store, w, &row)?;
            }
        }
    }
}

/// Leaves the request `body` for the leader of `w` and waits ([`sql::ASK`]), or (no body)
/// waits again ([`sql::TURN`]): the row answered, the request's number first.
fn wait(conn: &mut Conn, store: &PgStore, w: &str, body: Option<&str>) -> Result<postgres::Row> {
    let since = conn.cache.spaces.get(w).copied().unwrap_or_default().wseq;
    let (sv, durable) = (conn.cache.settings_version, conn.session.durable);
    let row = match body {
        Some(body) => {
            let ask = conn.stmt(store, sql::ASK)?;
            conn.client()?
                .query_one(&ask, &[&w, &body, &since, &sv, &MOST, &durable])
        }
        None => {
            let again = conn.stmt(store, sql::TURN)?;
            conn.client()?
                .query_one(&again, &[&w, &since, &sv, &MOST, &durable])
        }
    };
    row.map_err(|e| store.err(e))
}

/// Ends the transaction left open (if any), takes back this session's request if no leader
/// answered it (the call fails: its outcome is unknown, but no later leader decides it),
/// and then gives back the lead of `w` if this session holds it: the request's removal is
/// committed before the next leader can look.
fn abandon(conn: &mut Conn, store: &PgStore, w: &str) {
    let text = sql::fill(
        sql::ABANDON,
        &[
            ("schema", &sql::ident(&store.target.schema)),
            ("w", &sql::literal(w)),
        ],
    );
    if let Ok(client) = conn.client() {
        let _ = client.batch_execute(&text);
    }
}

/// A leader's answer to this handle, committed (and on disk when the handle's writes are
/// durable) by the statement that read it: the output, the refusal, or `None` (write it the
/// usual way). The handle's own cache did not see the write: it catches up at its next use.
fn answered(conn: &mut Conn, store: &PgStore, text: &str) -> Result<Option<Output>> {
    conn.contention.contended = true;
    let (batch, answer): (usize, Answer) = serde_json::from_str(text)
        .map_err(|e| store.corrupt(format!("a combined write's answer is garbled: {e}")))?;
    conn.contention.combine = batch >= COMBINE_AT;
    match answer {
        Answer::Done(result) => result.map(Some),
        Answer::Again => Ok(None),
    }
}

enum Led {
    /// A leader answered this handle's request.
    Answered(String),
    /// This handle led, and decided its own request with the others.
    Decided(Answer),
    /// This handle led, but its own request was not among those it took, or the commit was
    /// refused (by time, or because the workspace or the settings moved meanwhile).
    Again,
}

/// Reads what `turn` answered (`row`, laid out as [`sql::TURN`]'s): this handle's answer,
/// or the lead of `w`: then catches up, decides every waiting request and commits them with
/// their answers.
fn turn(conn: &mut Conn, store: &PgStore, w: &str, row: &postgres::Row) -> Result<Led> {
    let cols = Cols::typed(store, row, "a combined write's turn");
    let turn: Turn = cols.read()?;
    if let Some(answer) = turn.answered {
        return Ok(Led::Answered(answer));
    }
    let caught = cols.read::<WsRow>();
    let asks = serde_json::from_str::<Vec<(i64, String)>>(turn.asks.as_deref().unwrap_or("[]"))
        .map_err(|e| store.corrupt(format!("the waiting requests are garbled: {e}")));
    let result = caught
        .and_then(|caught| conn.caught_up(store, w, caught))
        .and_then(|now| decide_and_commit(conn, store, w, now, asks?));
    if result.is_err() {
        // The cache may hold changes that were not committed: read it afresh next time.
        conn.cache.loaded = false;
    }
    result
}

/// Decides the waiting requests (this handle's among them) in order and commits them, as
/// the leader of `w` at server time `now`.
fn decide_and_commit(
    conn: &mut Conn,
    store: &PgStore,
    w: &str,
    now: u64,
    asks: Vec<(i64, String)>,
) -> Result<Led> {
    let me = conn.contention.ask;
    let others = asks.iter().filter(|(id, _)| *id != me).count();
    let batch = asks.len();
    let decided = decide(conn, w, now, asks)?;
    let changes = serde_json::to_string(&decided.changes)
        .map_err(|e| Error::Internal(format!("a change does not serialise: {e}")))?;
    let answers = serde_json::to_string(&decided.answers)
        .map_err(|e| Error::Internal(format!("an answer does not serialise: {e}")))?;
    let expected = conn.cache.spaces.get(w).map_or(0, |s| s.wseq);
    let (sv, durable) = (conn.cache.settings_version, conn.session.durable);
    let valid_until = decided.valid_until.map(|t| t as i64);
    let lead = conn.stmt(store, sql::LEAD)?;
    let row = conn
        .client()?
        .query_one(
            &lead,
            &[
                &w,
                &expected,
                &sv,
                &(now as i64),
                &valid_until,
                &changes,
                &answers,
                &durable,
            ],
        )
        .map_err(|e| store.err(e))?;
    let led: LedRow = Cols::typed(store, &row, "a combined commit").read()?;
    if let Some(problem) = led.problem {
        return Err(store.corrupt(problem));
    }
    if !led.committed {
        // Refused (a lease ran out while deciding, or the workspace or the settings moved
        // since the catch-up): nothing was written and the requests still wait. The cache
        // holds the decided changes: it is read afresh.
        conn.cache.loaded = false;
        return Ok(Led::Again);
    }
    let (wseq, last_now) = (led.wseq, led.last_now);
    conn.cache.spaces.insert(w.to_string(), Space { wseq, last_now });
    conn.cache.settings_version = led.settings_version;
    conn.saw_clock(led.now, last_now);
    // It combined because its workspace was busy: its next write made the usual way takes
    // the lock first (an optimistic one would race the writers it just led), and decides
    // on its cache again only after calm locked writes (`CALM`).
    conn.contention.contended = true;
    if others > 0 {
        conn.contention.calm = 0;
    }
    conn.contention.combine = batch >= COMBINE_AT;
    Ok(match decided.mine {
        Some(answer) => Led::Decided(answer),
        None => Led::Again,
    })
}

/// The requests a leader decided: the changes to commit in order, the answers of the other
/// handles' requests by id, this handle's own, and until when the decisions hold.
struct Decided {
    changes: Vec<Change>,
    answers: std::collections::BTreeMap<String, String>,
    mine: Option<Answer>,
    valid_until: Option<u64>,
}

/// Runs each request through the rules on the cached state, applying each change before
/// the next request is decided, as if they had come one at a time.
fn decide(conn: &mut Conn, w: &str, now: u64, asks: Vec<(i64, String)>) -> Result<Decided> {
    let scope = Scope::Workspace(w.to_string());
    let batch = asks.len();
    let mut out = Decided {
        changes: Vec::new(),
        answers: Default::default(),
        mine: None,
        valid_until: None,
    };
    for (id, body) in asks {
        let answer = match serde_json::from_str::<Request>(&body) {
            Ok(req) if combinable(&req) && req.scope(&conn.cache.state) == scope => {
                let valid = rules::valid_until_in(&conn.cache.state, &scope, now);
                match rules::apply(&conn.cache.state, &NoArchive, &req, now) {
                    Ok(effect) => {
                        if !effect.change.is_empty() {
                            conn.cache.state.apply(&effect.change);
                            out.changes.push(effect.change);
                            out.valid_until = match (out.valid_until, valid) {
                                (Some(a), Some(b)) => Some(a.min(b)),
                                (a, b) => a.or(b),
                            };
                        }
                        Answer::Done(Ok(effect.output))
                    }
                    Err(e) => Answer::Done(Err(e)),
                }
            }
            _ => Answer::Again,
        };
        if id == conn.contention.ask {
            out.mine = Some(answer);
        } else {
            // Every decided request is answered, or the whole lead fails: one left without
            // an answer would be decided again by the next leader.
            let text = serde_json::to_string(&(batch, &answer))
                .map_err(|e| Error::Internal(format!("an answer does not serialise: {e}")))?;
            out.answers.insert(id.to_string(), text);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::Answer;
    use crate::error::Error;
    use crate::id::Id;
    use crate::model::Status;
    use crate::rules::{Finish, Grant, Output, Request};

    fn id(n: u8) -> Id {
        Id([n; 16])
    }

    /// A request left for a leader is the request its handle made, field for field.
    #[test]
    fn a_request_reaches_the_leader_as_it_was_made() {
        let finish = |output| Finish {
            node: id(1),
            status: Status::Done,
            gen: 3,
            actor: Some(id(2)),
            note: Some("ok".into()),
            output,
            held: true,
        };
        let requests = [
            Request::Complete(finish(Some(serde_json::Value::Null))),
            Request::Complete(finish(None)),
            Request::CompleteMany(vec![finish(Some(serde_json::json!({"a": [1, 2]})))]),
            Request::ClaimNext {
                workspace: "w".into(),
                actor: id(2),
                role: Some("r".into()),
                ttl_ms: Some(60_000),
                resume: true,
                count: 10,
            },
            Request::Renew {
                node: id(1),
                actor: id(2),
                gen: None,
                ttl_ms: None,
                progress: Some("half".into()),
                usage: None,
            },
        ];
        for req in requests {
            let text = serde_json::to_string(&req).unwrap();
            let back: Request = serde_json::from_str(&text).unwrap();
            assert_eq!(back, req, "{text}");
        }
    }

    /// So is the answer: the output, or the refusal with every field its code and message
    /// are made from.
    #[test]
    fn an_answer_reaches_its_handle_as_the_rules_gave_it() {
        let answers = [
            Answer::Done(Ok(Output::Claimed(vec![Grant {
                id: id(1),
                generation: 4,
                resumed: false,
                progress: Some("p".into()),
                progress_at: Some(7),
                inputs: vec![(id(3), Some("{}".into())), (id(4), None)],
            }]))),
            Answer::Done(Err(Error::StaleGeneration {
                node: id(1),
                given: 2,
                generation: 3,
            })),
            Answer::Done(Err(Error::AssigneeBusy {
                node: id(1),
                actor: id(2),
                actor_name: None,
                held: vec![id(5)],
                max_held: 1,
            })),
            Answer::Again,
        ];
        for answer in answers {
            let text = serde_json::to_string(&(7, &answer)).unwrap();
            let (batch, back): (usize, Answer) = serde_json::from_str(&text).unwrap();
            assert_eq!(batch, 7);
            match (&answer, &back) {
                (Answer::Done(a), Answer::Done(b)) => {
                    assert_eq!(a, b, "{text}");
                    if let (Err(a), Err(b)) = (a, b) {
                        assert_eq!((a.code(), a.to_string()), (b.code(), b.to_string()));
                    }
                }
                (Answer::Again, Answer::Again) => {}
                _ => panic!("{text} came back otherwise"),
            }
        }
    }
}
