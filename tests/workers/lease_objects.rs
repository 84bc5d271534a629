//! The Rust lease object: it renews a short lease across a long task, reports a lost one,
//! finishes with the granted generation, and hands the node back when dropped.

use claimdag::{Actor, Code, Status, Store, Upsert};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn store() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::open(Some(&tmp.path().join("claims"))).unwrap();
    (tmp, s)
}

fn node(s: &Store, summary: &str) -> claimdag::Id {
    s.upsert(Upsert {
        summary: summary.into(),
        ..Upsert::default()
    })
    .unwrap()
}

#[test]
fn a_lease_renews_itself_across_a_task_many_times_longer() {
    let (_t, s) = store();
    let a = node(&s, "a long task");
    let me = Actor::from_name("worker-1").unwrap();
    let lease = s
        .lease_next("", me, None, 300)
        .unwrap()
        .expect("a is ready");
    assert_eq!((lease.id(), lease.generation()), (a, 2));
    // Four lease lengths: without renewal, reclaim would hand it back.
    std::thread::sleep(Duration::from_millis(1200));
    assert!(
        s.reclaim("", None).unwrap().is_empty(),
        "the lease is alive"
    );
    assert!(!lease.is_lost());
    lease.complete(Status::Done, Some("finished")).unwrap();
    let v = s.get(a).unwrap();
    assert_eq!((v.node.status, v.node.generation), (Status::Done, 2));
    let renews = s
        .history(Some(a))
        .unwrap()
        .iter()
        .filter(|l| l.event.verb == "renew")
        .count();
    assert!(renews >= 2, "renewed while the task ran: {renews}");
}

#[test]
fn a_lost_lease_is_reported_and_its_completion_refused() {
    let (_t, s) = store();
    let a = node(&s, "taken over");
    let me = Actor::from_name("worker-1").unwrap();
    let lease = s.lease(a, me, 300).unwrap();
    let called = Arc::new(AtomicUsize::new(0));
    let c2 = called.clone();
    lease.on_lost(move |e| {
        assert_eq!(e.code(), Code::StaleGeneration);
        c2.fetch_add(1, Ordering::SeqCst);
    });
    // Another process hands the claim back and takes the node.
    let other = Store::open(s.dir()).unwrap();
    other.reclaim("", Some(0)).unwrap();
    let them = Actor::from_name("worker-2").unwrap();
    assert_eq!(other.claim(a, them, None, None).unwrap(), 4);
    let t = Instant::now();
    while !lease.is_lost() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the lost lease was never noticed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(lease.lost_because().unwrap().code(), Code::StaleGeneration);
    assert_eq!(called.load(Ordering::SeqCst), 1, "the callback ran once");
    let e = lease.complete(Status::Done, None).unwrap_err();
    assert_eq!(e.code(), Code::StaleGeneration);
    let v = s.get(a).unwrap();
    assert_eq!(
        (v.node.status, v.node.holder),
        (Status::Claimed, Some(them))
    );
}

#[test]
fn a_lease_whose_renewals_keep_failing_is_lost_after_a_ttl() {
    use claimdag::store::embedded::fault::{self, SyncFault};
    let (_t, s) = store();
    let a = node(&s, "the disk goes away under it");
    let me = Actor::from_name("worker-1").unwrap();
    let lease = s.lease(a, me, 600).unwrap();
    let called = Arc::new(AtomicUsize::new(0));
    let c2 = called.clone();
    // The renewals fail on I/O; once the claim has run out, the store says stale instead.
    let why = |c: Code| matches!(c, Code::Io | Code::StaleGeneration);
    lease.on_lost(move |e| {
        assert!(why(e.code()), "{e}");
        c2.fetch_add(1, Ordering::SeqCst);
    });
    // From now on every write of this store fails: no renew gets through.
    let dir = s.dir().unwrap().to_path_buf();
    let failing = SyncFault {
        fail: u32::MAX,
        ..SyncFault::default()
    };
    fault::set_sync_fault(&dir, failing);
    let t = Instant::now();
    while !lease.is_lost() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "a lease no renew got through for was never lost"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Not before a whole ttl without a renew (a passing failure is retried).
    assert!(
        t.elapsed() >= Duration::from_millis(400),
        "{:?}",
        t.elapsed()
    );
    assert!(why(lease.lost_because().unwrap().code()));
    assert_eq!(called.load(Ordering::SeqCst), 1, "the callback ran once");
    // The disk comes back; the claim has run out meanwhile and goes to someone else.
    fault::set_sync_fault(&dir, SyncFault::default());
    drop(lease);
    std::thread::sleep(Duration::from_millis(700));
    let them = Actor::from_name("worker-2").unwrap();
    assert_eq!(s.claim(a, them, None, None).unwrap(), 4);
}

#[test]
fn a_lease_taken_over_and_dropped_changes_nothing() {
    let (_t, s) = store();
    let a = node(&s, "taken over before the next renew");
    let me = Actor::from_name("worker-1").unwrap();
    let lease = s.lease(a, me, 60_000).unwrap();
    s.reclaim("", Some(0)).unwrap();
    let them = Actor::from_name("worker-2").unwrap();
    assert_eq!(s.claim(a, them, None, None).unwrap(), 4);
    // Not noticed yet (the next renew is 20 s away): the release on drop is refused.
    assert!(!lease.is_lost());
    drop(lease);
    let v = s.get(a).unwrap();
    assert_eq!((v.node.holder, v.node.generation), (Some(them), 4));
}

#[test]
fn a_lease_dropped_unfinished_hands_the_node_back() {
    let (_t, s) = store();
    let a = node(&s, "dropped");
    let me = Actor::from_name("worker-1").unwrap();
    {
        let lease = s.lease_next("", me, None, 60_000).unwrap().unwrap();
        assert_eq!(lease.generation(), 2);
    }
    let v = s.get(a).unwrap();
    assert_eq!((v.node.status, v.node.generation), (Status::Todo, 3));
    assert!(v.ready);
    // release returns the new generation.
    let lease = s.lease(a, me, 60_000).unwrap();
    assert_eq!(lease.release().unwrap(), 5);
}

#[test]
fn lease_next_wait_wakes_on_another_store_handles_write_and_runs_out_empty() {
    let (_t, s) = store();
    let me = Actor::from_name("worker-1").unwrap();
    // Nothing at all: the wait runs out, not before it is over.
    let t = Instant::now();
    assert!(s
        .lease_next_wait("", me, None, 60_000, Duration::from_millis(200))
        .unwrap()
        .is_none());
    assert!(
        t.elapsed() >= Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
    // A second handle (as another process would) adds a node while this one waits.
    let other = Store::open(s.dir()).unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        node(&other, "arrives later")
    });
    let t = Instant::now();
    let lease = s
        .lease_next_wait("", me, None, 60_000, Duration::from_secs(30))
        .unwrap()
        .expect("woken by the other handle's upsert");
    let a = writer.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!((lease.id(), lease.generation()), (a, 2));
    assert!(!lease.is_lost());
    lease.complete(Status::Done, None).unwrap();
    assert_eq!(s.get(a).unwrap().node.status, Status::Done);
}

#[test]
fn release_retry_in_schedules_the_node_and_stops_renewing() {
    let (_t, s) = store();
    let a = node(&s, "the service is down");
    let me = Actor::from_name("worker-1").unwrap();
    let lease = s.lease(a, me, 300).unwrap();
    let before = s.now().unwrap();
    assert_eq!(lease.release_retry_in(60_000).unwrap(), 3);
    let v = s.get(a).unwrap();
    assert_eq!(v.node.status, Status::Todo);
    assert_eq!(v.display, claimdag::DisplayWord::Scheduled);
    assert!(!v.ready);
    let nb = v.node.not_before.expect("not_before set");
    assert!(
        nb >= before + 60_000 && nb <= before + 120_000,
        "{nb} vs {before}"
    );
    // Not claimable until then; the renewal thread is gone (no renew after the release).
    assert_eq!(s.claim_next("", me, None, None).unwrap(), None);
    std::thread::sleep(Duration::from_millis(400));
    let verbs: Vec<String> = s
        .history(Some(a))
        .unwrap()
        .iter()
        .map(|l| l.event.verb.clone())
        .collect();
    assert_eq!(
        verbs.last().map(String::as_str),
        Some("release"),
        "{verbs:?}"
    );
}
