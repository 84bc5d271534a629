//! Archived nodes list in creation order even when they were created in the same
//! millisecond, before and after the archive moves to its side file.

use crate::common::flat_plan;
use claimdag::store::{embedded::Tuning, Clock};
use claimdag::{Id, ListFilter, Status, Store};
use std::sync::Arc;

/// Every call happens at the same millisecond.
struct Frozen;

impl Clock for Frozen {
    fn now_ms(&self) -> u64 {
        1_800_000_000_000
    }
}

#[test]
fn archived_nodes_keep_creation_order() {
    let tmp = tempfile::tempdir().unwrap();
    for compact in [false, true] {
        let dir = tmp.path().join(format!("store-{compact}"));
        let tuning = Tuning {
            sync: false,
            compact_min_bytes: if compact { 1 } else { 1 << 30 },
            ..Tuning::default()
        };
        let store = Store::with(dir, tuning, Arc::new(Frozen));
        let plan = flat_plan(12, |i| format!("finished {i}"));
        let ids: Vec<Id> = store
            .import("", plan)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        for id in &ids {
            store
                .complete(*id, Status::Cancelled, 1, None, None)
                .unwrap();
        }
        assert_eq!(store.archive("", &[], None).unwrap(), 12);
        let filter = ListFilter {
            only_archived: true,
            ..ListFilter::default()
        };
        let listed: Vec<Id> = store
            .list(&filter)
            .unwrap()
            .into_iter()
            .map(|v| v.node.id)
            .collect();
        assert_eq!(listed, ids, "compact={compact}");
    }
}
