//! This thread's last failure: what `claimdag_last_error` and `claimdag_last_error_json`
//! give. Every exported call records its outcome here (through the panic boundary).

use std::cell::RefCell;
use std::ffi::{c_char, CString};

/// This thread's last failure: its message and its JSON body.
pub(crate) struct Last {
    pub(crate) message: CString,
    pub(crate) body: CString,
}

thread_local! {
    static LAST_ERROR: RefCell<Option<Last>> = const { RefCell::new(None) };
}

/// A C string of `text`; a NUL inside is written as `\0` so the rest stays visible.
fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

/// Records the outcome of a call on this thread: the failure, or nothing.
pub(crate) fn set_last_error(error: Option<&claimdag::Error>) {
    let last = error.map(|e| Last {
        message: c_text(&e.to_string()),
        body: c_text(&claimdag::verbs::error_body(e).to_string()),
    });
    // Neither the thread-local nor the cell can be unavailable here in practice; if one
    // is (a call from a thread-local destructor), the message is dropped, never a panic.
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut s) = slot.try_borrow_mut() {
            *s = last;
        }
    });
}

/// A pointer into this thread's last failure, or "" when the last call succeeded.
pub(crate) fn last_text(pick: fn(&Last) -> &CString) -> *const c_char {
    let ptr = LAST_ERROR.try_with(|slot| match slot.try_borrow() {
        Ok(s) => s.as_ref().map(|l| pick(l).as_ptr()),
        Err(_) => None,
    });
    match ptr {
        Ok(Some(p)) => p,
        _ => c"".as_ptr(),
    }
}
