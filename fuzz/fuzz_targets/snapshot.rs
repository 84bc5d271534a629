//! The snapshot loader on arbitrary bytes: never panics; a snapshot it accepts writes back
//! to one that reads as the same state.
#![no_main]

use claimdag::store::snapshot;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("snapshot.json");
    if let Ok((state, seq)) = snapshot::read(data, path) {
        let mut out = Vec::new();
        snapshot::write(&mut out, &state, seq).expect("write to memory");
        let (again, seq2) = snapshot::read(&out, path).expect("a written snapshot reads");
        assert_eq!(seq, seq2);
        assert_eq!(
            state, again,
            "a snapshot does not read back as it was written"
        );
    }
});
