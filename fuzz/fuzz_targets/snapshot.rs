//! The snapshot loader on arbitrary bytes: never panics; a snapshot it accepts writes back
//! to one that reads as the same state, with the stored pick order its nodes give. A
//! snapshot with an index is read without decoding its nodes; one whose nodes (or stored
//! pick order) then do not decode says so (`State::damage`, which the store turns into
//! `corrupt`) and is never written back.
#![no_main]

use claimdag::store::embedded::snapshot;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("snapshot.json");
    if let Ok((state, seq)) = snapshot::read(data, path) {
        // Asked for one at a time, then all at once.
        let ids: Vec<_> = state.claimed_ids().iter().copied().collect();
        for id in &ids {
            let _ = state.get(id);
        }
        // The pick order, from what the snapshot stores when it stores one.
        let _ = state.pick_order();
        let count = state.nodes().len();
        let mut out = Vec::new();
        let written = snapshot::write(&mut out, &state, seq);
        if state.damage().is_some() {
            assert!(written.is_err(), "a damaged state was written");
            return;
        }
        written.expect("write to memory");
        assert_eq!(count, state.len(), "nodes() and len() disagree");
        let (again, seq2) = snapshot::read(&out, path).expect("a written snapshot reads");
        assert_eq!(seq, seq2);
        assert_eq!(
            state, again,
            "a snapshot does not read back as it was written"
        );
        for n in state.nodes() {
            assert_eq!(again.get(&n.id), Some(n), "a node reads back differently by id");
        }
        let drift = again.pick_order().differences(again.nodes(), &again);
        assert!(drift.is_empty(), "a written pick order reads back wrong: {drift:?}");
    }
});
