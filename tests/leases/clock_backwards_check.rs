//! A clock that steps back (an NTP correction, a VM resumed from a snapshot) must not make a
//! sound store fail `check`: every write sets the node's `updated_at` to the clock's time,
//! which can then be earlier than its `created_at`, and `check` reports "updated before it
//! was created" (exit 6 from the CLI).

use claimdag::model::Status;
use claimdag::rules::Upsert;
use claimdag::store::{embedded::Tuning, Clock};
use claimdag::Store;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct TestClock(AtomicU64);

impl Clock for TestClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[test]
fn a_write_after_the_clock_stepped_back_leaves_a_store_check_accepts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(TestClock(AtomicU64::new(1_800_000_000_000)));
    let store = Store::with(tmp.path().join("store"), Tuning::default(), clock.clone());
    let id = store
        .upsert(Upsert {
            summary: "created before the clock stepped back".into(),
            ..Upsert::default()
        })
        .expect("upsert");
    clock.0.fetch_sub(1_000, Ordering::SeqCst);
    store
        .complete(id, Status::Cancelled, 1, None, None)
        .expect("cancel");
    let report = store.check().expect("check");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}
