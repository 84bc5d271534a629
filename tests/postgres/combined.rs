//! Combined writes (schema version 8): sixteen handles in one workspace, each its own
//! connection, race `claim_next`, `renew` and `complete`; under that contention their
//! requests are left for the workspace's leader and decided together. Every node is granted
//! once and done by its holder, a stale complete is still refused, every request stays a
//! write of its own in the history, and nothing is left waiting. The same race with the
//! server killing the connections every 150 ms (leaders and waiters among them) never
//! grants a node's generation twice, and a request whose wait in line times out is taken
//! back, never decided by a later leader. A request a leader answers costs its handle one
//! message, and a write made the usual way waits while the leader lock is held.

use super::{pg, psql, psql_at, schema_of};
use claimdag::{Code, Id, Status, Store};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

const NODES: usize = 192;
const WORKERS: u8 = 16;

/// What a history line says of the request that wrote it: its verb, node and actor.
type Request = (String, Option<Id>, Option<Id>);

fn actor(i: u8) -> Id {
    Id([i + 1; 16])
}

/// What each write number of `history` holds: the requests its lines name.
fn requests_by_write(history: &[claimdag::model::HistoryLine]) -> BTreeMap<u64, BTreeSet<Request>> {
    let mut writes: BTreeMap<u64, BTreeSet<Request>> = BTreeMap::new();
    for l in history {
        let e = &l.event;
        writes
            .entry(l.seq)
            .or_default()
            .insert((e.verb.clone(), e.node, e.actor));
    }
    writes
}

/// One worker's loop: claim-next, renew, complete, then the same complete again (stale: the
/// node is done). Answers what it was granted.
fn worker(url: &str, me: Id) -> Vec<(Id, u64)> {
    let store = Store::open(Some(Path::new(url))).expect("open");
    let mut grants = Vec::new();
    while let Some((id, gen)) = store
        .claim_next("", me, None, Some(120_000))
        .expect("claim_next")
    {
        store
            .renew(id, me, Some(gen), Some(120_000))
            .expect("renew");
        store
            .complete(id, Status::Done, gen, Some(me), None)
            .expect("complete");
        let again = store.complete(id, Status::Done, gen, Some(me), None);
        assert_eq!(
            again.as_ref().map_err(|e| e.code()).err(),
            Some(Code::Terminal),
            "a second complete of {id} at gen={gen}: {again:?}"
        );
        grants.push((id, gen));
    }
    grants
}

#[test]
fn a_fleet_in_one_workspace_is_decided_by_leaders_and_every_node_is_granted_once() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let store = Store::open(Some(Path::new(&url))).expect("open");
    let mut ids = BTreeSet::new();
    for i in 0..NODES {
        let id = store
            .upsert(claimdag::Upsert {
                summary: format!("node {i}"),
                ..Default::default()
            })
            .expect("upsert");
        ids.insert(id);
    }
    store.set_settings(&[("max_held", "0")]).expect("max_held");
    let all: Vec<(u8, Vec<(Id, u64)>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|i| {
                let url = url.clone();
                s.spawn(move || (i, worker(&url, actor(i))))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    // Every node granted once, at generation 2, and done by the worker it was granted to.
    let mut granted: BTreeMap<Id, (u8, u64)> = BTreeMap::new();
    for (w, grants) in &all {
        for (id, gen) in grants {
            assert!(
                granted.insert(*id, (*w, *gen)).is_none(),
                "node {id} was granted twice"
            );
            assert_eq!(*gen, 2, "node {id}");
        }
    }
    assert_eq!(granted.keys().copied().collect::<BTreeSet<_>>(), ids);
    let history = store.history(None).expect("history");
    for line in history.iter().filter(|l| l.event.verb == "complete") {
        let node = line.event.node.expect("a complete names its node");
        assert_eq!(line.event.actor, Some(actor(granted[&node].0)), "{line:?}");
    }
    // The requests were left for leaders, and each stayed a write of its own: one verb on
    // one node by one actor per write number.
    let asked: i64 = psql(&format!("SELECT last_value FROM {schema}.asks_id_seq"))
        .parse()
        .unwrap();
    assert!(
        asked > 0,
        "no request was left for a leader: no contention?"
    );
    let writes = requests_by_write(&history);
    let merged: Vec<_> = writes.iter().filter(|(_, w)| w.len() > 1).collect();
    assert!(
        merged.is_empty(),
        "writes holding several requests: {merged:?}"
    );
    let by_verb = |verb: &str| history.iter().filter(|l| l.event.verb == verb).count();
    assert_eq!(
        (by_verb("claim"), by_verb("renew"), by_verb("complete")),
        (NODES, NODES, NODES)
    );
    assert_eq!(psql(&format!("SELECT count(*) FROM {schema}.asks")), "0");
    let report = store.check().expect("check");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

/// A worker that goes on through lost connections: a failed call is `io` (its outcome
/// unknown), and a claim it may have lost runs out. Ends when nothing is ready or held.
fn enduring_worker(url: &str, me: Id) -> Vec<(Id, u64)> {
    let store = Store::open(Some(Path::new(url))).expect("open");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let mut grants = Vec::new();
    while std::time::Instant::now() < deadline {
        match store.claim_next("", me, None, Some(1_500)) {
            Ok(Some((id, gen))) => {
                grants.push((id, gen));
                let _ = store.complete(id, Status::Done, gen, Some(me), None);
            }
            Ok(None) => match store.pending("", None) {
                Ok(held) if held.is_empty() => return grants,
                _ => std::thread::sleep(std::time::Duration::from_millis(100)),
            },
            Err(e) => assert_eq!(e.code(), Code::Io, "{e}"),
        }
    }
    panic!("the work did not end within 90 s");
}

#[test]
fn connections_killed_among_combined_writes_never_grant_a_generation_twice() {
    let (url, _, _turn) = pg::fresh_own();
    let schema = schema_of(&url);
    let store = Store::open(Some(Path::new(&url))).expect("open");
    for i in 0..96 {
        store
            .upsert(claimdag::Upsert {
                summary: format!("node {i}"),
                ..Default::default()
            })
            .expect("upsert");
    }
    store.set_settings(&[("max_held", "0")]).expect("max_held");
    let done = std::sync::atomic::AtomicBool::new(false);
    let grants: Vec<(Id, u64)> = std::thread::scope(|s| {
        let killer = s.spawn(|| {
            let mut kills = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) && kills < 12 {
                std::thread::sleep(std::time::Duration::from_millis(150));
                pg::kill_own_connections();
                kills += 1;
            }
            kills
        });
        let workers: Vec<_> = (0..WORKERS)
            .map(|i| {
                let url = url.clone();
                s.spawn(move || enduring_worker(&url, actor(i)))
            })
            .collect();
        let all = workers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(killer.join().unwrap() > 0);
        all
    });

    // No generation of a node went to two workers, and every node ended done.
    let mut seen = BTreeSet::new();
    for g in &grants {
        assert!(seen.insert(*g), "node {} gen={} granted twice", g.0, g.1);
    }
    let history = store.history(None).expect("history");
    let mut claims = BTreeSet::new();
    for l in history.iter().filter(|l| l.event.verb == "claim") {
        let key = (l.event.node, l.event.generation);
        assert!(claims.insert(key), "a second claim at {key:?}");
    }
    let writes = requests_by_write(&history);
    // One request a write (a write first hands back the expired claims of its workspace:
    // those lines name the holder that lost them).
    for (seq, w) in &writes {
        let actors: BTreeSet<_> = w
            .iter()
            .filter(|r| r.0 != "expire")
            .filter_map(|r| r.2)
            .collect();
        assert!(
            actors.len() <= 1,
            "write {seq} holds several requests: {w:?}"
        );
    }
    let asked: i64 = psql_at(
        pg::own_url(),
        &format!("SELECT last_value FROM {schema}.asks_id_seq"),
    )
    .parse()
    .unwrap();
    assert!(asked > 0, "no request was left for a leader");
    let report = store.check().expect("check");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.nodes, 96);
    let left = store.pending("", None).expect("pending");
    assert!(left.is_empty(), "{left:?}");
    let completed: BTreeSet<_> = history
        .iter()
        .filter(|l| l.event.verb == "complete")
        .map(|l| l.event.node)
        .collect();
    assert_eq!(completed.len(), 96, "nodes completed");
}

/// A request left for a leader whose call then fails (here: a statement timeout while it
/// waits in line) is taken back before the call answers `io`: no later leader decides it.
#[test]
fn a_request_whose_wait_times_out_is_never_decided_later() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let plain = Store::open(Some(Path::new(&url))).expect("open");
    let node = plain
        .upsert(claimdag::Upsert {
            summary: "waits".into(),
            ..Default::default()
        })
        .expect("upsert");
    // Another session holds the workspace's leader lock for 2 s.
    let mut holder = super::psql_meanwhile(&format!(
        "SELECT pg_advisory_lock({schema}.lead_key('')); SELECT pg_sleep(2);"
    ));
    std::thread::sleep(std::time::Duration::from_millis(400));
    let timed = Store::open(Some(Path::new(&format!(
        "{url}&options=-c%20statement_timeout%3D300"
    ))))
    .expect("open");
    timed.now().expect("load");
    timed.always_combine();
    let late = actor(1);
    let e = timed.claim(node, late, None, None).unwrap_err();
    assert_eq!(e.code(), Code::Io, "{e}");
    // Taken back while the lock is still held: nothing waits for the next leader.
    assert_eq!(psql(&format!("SELECT count(*) FROM {schema}.asks")), "0");
    holder.wait().unwrap();
    // The next leader decides its own request and nothing of the one that timed out.
    let other = Store::open(Some(Path::new(&url))).expect("open");
    other.now().expect("load");
    other.always_combine();
    let second = other.upsert(claimdag::Upsert {
        summary: "another".into(),
        ..Default::default()
    });
    assert!(second.is_ok(), "{second:?}");
    let lead = other.claim(second.unwrap(), actor(2), None, None);
    assert_eq!(lead.ok(), Some(2));
    let seen = plain.history(Some(node)).expect("history");
    assert!(
        seen.iter().all(|l| l.event.actor != Some(late)),
        "the timed-out claim was decided: {seen:?}"
    );
    let n = plain.get(node).expect("get").node;
    assert_eq!(
        (n.status, n.generation, n.holder),
        (Status::Todo, 1, None),
        "{n:?}"
    );
    assert!(plain.check().unwrap().problems.is_empty());
}

/// Polls `sql` (a count) until it answers `n` (at most 10 s).
fn count_reaches(sql: &str, n: usize) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while psql(sql) != n.to_string() {
        assert!(std::time::Instant::now() < end, "never {n}: {sql}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The query counting the sessions that hold (`granted`) or wait for the advisory lock
/// `key` (an SQL expression).
fn on_lock(key: &str, granted: bool) -> String {
    format!(
        "SELECT count(*) FROM pg_locks l WHERE l.locktype = 'advisory' \
         AND l.granted = {granted} \
         AND ((l.classid::bigint << 32) | l.objid::bigint) = {key}"
    )
}

/// A psql session holding an advisory lock until dropped (its session then ends).
struct Holder {
    psql: std::process::Child,
    /// Kept open: psql waits on it for more.
    _input: std::process::ChildStdin,
}

impl Holder {
    fn take(key: &str) -> Holder {
        let mut child = std::process::Command::new("psql")
            .arg(pg::url())
            .args(["-X", "-q"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("run psql");
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "SELECT pg_advisory_lock({key});").unwrap();
        Holder {
            psql: child,
            _input: stdin,
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.psql.kill();
        let _ = self.psql.wait();
    }
}

/// A request a leader answers costs its handle one round trip: the message that leaves it
/// and waits is also the one that reads the answer, commits and waits for the disk.
#[test]
fn a_request_answered_by_a_leader_costs_its_handle_one_round_trip() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let plain = Store::open(Some(Path::new(&url))).expect("open");
    let nodes: Vec<Id> = (0..3)
        .map(|i| {
            plain
                .upsert(claimdag::Upsert {
                    summary: format!("node {i}"),
                    ..Default::default()
                })
                .expect("upsert")
        })
        .collect();
    // The proxy counts what the waiting handle sends.
    let proxy = super::proxy::Proxy::start(super::server_port(), &[""], std::time::Duration::ZERO);
    let waiter = Store::open(Some(Path::new(&proxy.store_url(&url)))).expect("open");
    let leader = Store::open(Some(Path::new(&url))).expect("open");
    for s in [&waiter, &leader] {
        s.now().expect("load");
        s.always_combine();
    }
    // A first combined write (led by the waiter itself) prepares its statements.
    assert_eq!(waiter.claim(nodes[2], actor(3), None, None).ok(), Some(2));
    let key = format!("{schema}.lead_key('')");
    let on_key = |granted: bool| on_lock(&key, granted);
    std::thread::scope(|scope| {
        // Another session holds the leader's lock while the leader-to-be and then the
        // waiter queue for it: the first in line leads and answers the other. (Dropped
        // first if an assertion fails, so that the claims end.)
        let holder = Holder::take(&key);
        count_reaches(&on_key(true), 1);
        let led = scope.spawn(|| leader.claim(nodes[0], actor(1), None, None));
        count_reaches(&on_key(false), 1);
        let before = proxy.hits();
        let answered = scope.spawn(|| waiter.claim(nodes[1], actor(2), None, None));
        count_reaches(&on_key(false), 2);
        drop(holder);
        assert_eq!(led.join().unwrap().ok(), Some(2));
        assert_eq!(answered.join().unwrap().ok(), Some(2));
        assert_eq!(proxy.hits() - before, 1, "messages the answered claim sent");
    });
    // Both claims were written, and nothing waits.
    let history = plain.history(None).expect("history");
    let claims: Vec<_> = history.iter().filter(|l| l.event.verb == "claim").collect();
    assert_eq!(claims.len(), 3, "{history:?}");
    assert_eq!(psql(&format!("SELECT count(*) FROM {schema}.asks")), "0");
    assert!(plain.check().unwrap().problems.is_empty());
}

/// A write made the usual way (not left for a leader) waits while its workspace's leader
/// lock is held, so it never lands between a leader's catch-up and its commit; it goes on
/// once the lock is given back.
#[test]
fn a_write_made_the_usual_way_waits_for_the_leader() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let plain = Store::open(Some(Path::new(&url))).expect("open");
    plain
        .upsert(claimdag::Upsert {
            summary: "before the leader".into(),
            ..Default::default()
        })
        .expect("upsert");
    let key = format!("{schema}.lead_key('')");
    std::thread::scope(|scope| {
        let holder = Holder::take(&key);
        count_reaches(&on_lock(&key, true), 1);
        let wrote = scope.spawn(|| {
            plain.upsert(claimdag::Upsert {
                summary: "after the leader".into(),
                ..Default::default()
            })
        });
        // The write's session waits in line for the lock.
        count_reaches(&on_lock(&key, false), 1);
        drop(holder);
        assert!(wrote.join().unwrap().is_ok());
    });
    let other = Store::open(Some(Path::new(&url))).expect("open");
    let nodes = other.list(&claimdag::ListFilter::default()).expect("list");
    assert_eq!(nodes.len(), 2, "{nodes:?}");
}
