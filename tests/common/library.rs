//! The library in process: handles on a store directory, actors and plans.

use std::path::Path;

/// A library handle on the store at `dir` (for tests that drive the store in process).
pub fn handle(dir: &Path) -> claimdag::Store {
    claimdag::Store::open(Some(dir)).expect("open")
}

/// The actor whose id is zero but for its last byte, `n`.
pub fn actor_id(n: u8) -> claimdag::Id {
    let mut b = [0u8; 16];
    b[15] = n;
    claimdag::Id(b)
}

/// A handle on `dir` without fsync, compacting past `compact_min_bytes` (and a quarter of the
/// snapshot), on the system clock.
pub fn unsynced(dir: &Path, compact_min_bytes: u64) -> claimdag::Store {
    claimdag::Store::from_backend(unsynced_backend(dir, compact_min_bytes))
}

/// The embedded backend of [`unsynced`], for a test that calls it directly too.
pub fn unsynced_backend(
    dir: &Path,
    compact_min_bytes: u64,
) -> std::sync::Arc<claimdag::store::embedded::EmbeddedStore> {
    segmented_backend(
        dir,
        compact_min_bytes,
        claimdag::store::embedded::Tuning::default().segment_bytes,
    )
}

/// An unsynced store whose history is sealed into segments of `segment_bytes`.
pub fn segmented(dir: &Path, compact_min_bytes: u64, segment_bytes: u64) -> claimdag::Store {
    claimdag::Store::from_backend(segmented_backend(dir, compact_min_bytes, segment_bytes))
}

fn segmented_backend(
    dir: &Path,
    compact_min_bytes: u64,
    segment_bytes: u64,
) -> std::sync::Arc<claimdag::store::embedded::EmbeddedStore> {
    let tuning = claimdag::store::embedded::Tuning {
        sync: false,
        compact_min_bytes,
        segment_bytes,
    };
    std::sync::Arc::new(claimdag::store::embedded::EmbeddedStore::new(
        dir.to_path_buf(),
        tuning,
        std::sync::Arc::new(claimdag::store::SystemClock),
    ))
}

/// A plan of `n` independent nodes, keys `k0`, `k1`, ..., summaries from `summary`.
pub fn flat_plan(n: usize, summary: impl Fn(usize) -> String) -> claimdag::rules::Plan {
    claimdag::rules::Plan {
        nodes: (0..n)
            .map(|i| claimdag::rules::PlanNode {
                key: format!("k{i}"),
                summary: summary(i),
                ..claimdag::rules::PlanNode::default()
            })
            .collect(),
    }
}
