//! The command-line parser on arbitrary arguments (split at NUL and newline bytes, not
//! necessarily UTF-8): it answers Ok or a message, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

fuzz_target!(|data: &[u8]| {
    let mut args = vec![OsString::from("claimdag")];
    args.extend(
        data.split(|&b| b == 0 || b == b'\n')
            .map(|a| OsString::from_vec(a.to_vec())),
    );
    let _ = claimdag::cli::parse_args(args);
});
