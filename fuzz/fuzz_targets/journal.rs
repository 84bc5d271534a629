//! The journal reader on arbitrary bytes: never panics; what it finds after the records is
//! the torn part and then zeros only (the reserve); what a scan keeps scans the same again
//! with nothing torn, and every record it keeps encodes to a record it reads back.
#![no_main]

use claimdag::store::embedded::journal::{self, Head, HEADER};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("journal");
    // The bytes as a whole file, and after a good header.
    let _ = journal::check_header(data, path);
    let mut file = HEADER.to_vec();
    file.extend_from_slice(data);
    assert_eq!(journal::check_header(&file, path).ok(), Some(Head::Good));
    let body = &file[HEADER.len()..];
    // With and without knowing the record before (a cache's catch-up, a whole load).
    let _ = journal::scan(body, path, HEADER.len() as u64, Some(3));
    let Ok(scan) = journal::scan(body, path, HEADER.len() as u64, None) else {
        return;
    };
    let end = scan.valid_len + scan.torn;
    assert!(end <= body.len());
    assert!(body[end..].iter().all(|&b| b == 0), "only zeros after the torn part");
    let again = journal::scan(&body[..scan.valid_len], path, HEADER.len() as u64, None)
        .expect("the kept part scans");
    assert_eq!(again.records, scan.records);
    assert_eq!(again.torn, 0);
    for rec in &scan.records {
        let bytes = journal::encode(rec);
        let one = journal::scan(&bytes, path, 0, None).expect("an encoded record scans");
        assert_eq!(one.records.as_slice(), std::slice::from_ref(rec));
    }
});
