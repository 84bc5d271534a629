//! The exported functions about failures: this thread's last error, as text and as JSON,
//! and the stable name of a code.

use crate::code::{name_of, CodeArg};
use crate::last::last_text;
use crate::panic::ffi_boundary_or;
use std::ffi::c_char;

/// The message of the last failed call on this thread, or "" when the last call succeeded
/// (or none was made). Never NULL.
///
/// Every function returning a `claimdag_code` replaces the message: with the failure's text
/// on failure, with "" on success. The pointer is owned by the library and valid until
/// the next such call on this thread; copy the text to keep it. Other threads have their
/// own message (like libgit2's `git_error_last`). The text is UTF-8.
#[no_mangle]
pub extern "C" fn claimdag_last_error() -> *const c_char {
    ffi_boundary_or("claimdag_last_error", c"".as_ptr(), || {
        last_text(|l| &l.message)
    })
}

/// This thread's last failure as the JSON error body every front door gives (docs/reference.md,
/// 4): `{"code": "...", "message": "...", ...}` with the node, holder, generation, the nodes
/// an actor holds and the path when the error names them. "" when the last call succeeded.
/// Valid until this thread's next call into the library; never NULL, never freed.
#[no_mangle]
pub extern "C" fn claimdag_last_error_json() -> *const c_char {
    ffi_boundary_or("claimdag_last_error_json", c"".as_ptr(), || {
        last_text(|l| &l.body)
    })
}

/// The stable name of a code: "ok", "not_found", "already_claimed", ... (the `code` word
/// of the CLI's JSON errors); "unknown" for a value that is not a code. Never NULL.
///
/// The text is static: never free it.
#[no_mangle]
pub extern "C" fn claimdag_code_str(code: CodeArg) -> *const c_char {
    ffi_boundary_or("claimdag_code_str", c"unknown".as_ptr(), || {
        name_of(code).as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last::set_last_error;
    use std::ffi::CStr;

    #[test]
    fn last_error_is_per_thread_and_cleared() {
        set_last_error(Some(&claimdag::Error::invalid("bad\0thing")));
        let here = unsafe { CStr::from_ptr(claimdag_last_error()) };
        assert_eq!(here.to_str().unwrap(), "bad\\0thing");
        let body = unsafe { CStr::from_ptr(claimdag_last_error_json()) };
        let body: serde_json::Value = serde_json::from_str(body.to_str().unwrap()).unwrap();
        assert_eq!(body["code"], "invalid_input");
        std::thread::spawn(|| {
            let there = unsafe { CStr::from_ptr(claimdag_last_error()) };
            assert_eq!(there.to_bytes(), b"");
        })
        .join()
        .unwrap();
        set_last_error(None);
        let cleared = unsafe { CStr::from_ptr(claimdag_last_error()) };
        assert_eq!(cleared.to_bytes(), b"");
        let cleared = unsafe { CStr::from_ptr(claimdag_last_error_json()) };
        assert_eq!(cleared.to_bytes(), b"");
    }
}
