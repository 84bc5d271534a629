//! The result codes of the C ABI (SPEC section 4) and the thread-local last-error message.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};

/// The result of every fallible call. The values are those of SPEC section 4 and are never
/// renumbered; `CLAIMDAG_OK` is 0, every failure is non-zero. After a failure,
/// `claimdag_last_error()` gives the message on the same thread.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum claimdag_code {
    /// Success.
    CLAIMDAG_OK = 0,
    /// The node, link or id prefix does not exist; also "nothing ready" from
    /// `claimdag_claim_next` and `claimdag_next`.
    CLAIMDAG_NOT_FOUND = 1,
    /// The node is claimed already (by anyone, the holder included).
    CLAIMDAG_ALREADY_CLAIMED = 2,
    /// The actor already holds `max_held` live claims in this workspace.
    CLAIMDAG_ASSIGNEE_BUSY = 3,
    /// The node waits on prerequisites that are not done (or it is blocked).
    CLAIMDAG_NOT_READY = 4,
    /// The node used up its attempts.
    CLAIMDAG_ATTEMPTS_EXHAUSTED = 5,
    /// A live claim holds a resource that overlaps one of the node's.
    CLAIMDAG_RESOURCE_CONFLICT = 6,
    /// The node is not claimed.
    CLAIMDAG_NOT_CLAIMED = 7,
    /// The node is finished (done, failed or cancelled).
    CLAIMDAG_TERMINAL = 8,
    /// The generation given is not the node's current one: the claim was handed back.
    CLAIMDAG_STALE_GENERATION = 9,
    /// The actor is not the holder of the claim.
    CLAIMDAG_NOT_HOLDER = 10,
    /// The link would close a cycle (or links a node to itself).
    CLAIMDAG_CYCLE = 11,
    /// An argument was NULL, not UTF-8, or not acceptable; the message says which.
    CLAIMDAG_INVALID_INPUT = 12,
    /// A file of the store is damaged; the message names it.
    CLAIMDAG_CORRUPT = 13,
    /// The operating system refused an operation; the message has the error and the path.
    CLAIMDAG_IO = 14,
    /// A bug in claimdag: a panic was caught at the boundary. The store is unchanged.
    CLAIMDAG_INTERNAL = 15,
}

impl From<claimdag::Code> for claimdag_code {
    fn from(code: claimdag::Code) -> Self {
        use claimdag::Code as C;
        match code {
            C::NotFound => claimdag_code::CLAIMDAG_NOT_FOUND,
            C::AlreadyClaimed => claimdag_code::CLAIMDAG_ALREADY_CLAIMED,
            C::AssigneeBusy => claimdag_code::CLAIMDAG_ASSIGNEE_BUSY,
            C::NotReady => claimdag_code::CLAIMDAG_NOT_READY,
            C::AttemptsExhausted => claimdag_code::CLAIMDAG_ATTEMPTS_EXHAUSTED,
            C::ResourceConflict => claimdag_code::CLAIMDAG_RESOURCE_CONFLICT,
            C::NotClaimed => claimdag_code::CLAIMDAG_NOT_CLAIMED,
            C::Terminal => claimdag_code::CLAIMDAG_TERMINAL,
            C::StaleGeneration => claimdag_code::CLAIMDAG_STALE_GENERATION,
            C::NotHolder => claimdag_code::CLAIMDAG_NOT_HOLDER,
            C::Cycle => claimdag_code::CLAIMDAG_CYCLE,
            C::InvalidInput => claimdag_code::CLAIMDAG_INVALID_INPUT,
            C::Corrupt => claimdag_code::CLAIMDAG_CORRUPT,
            C::Io => claimdag_code::CLAIMDAG_IO,
            C::Internal => claimdag_code::CLAIMDAG_INTERNAL,
        }
    }
}

/// The stable name of a code value, as JSON error bodies write it; "unknown" otherwise.
/// The stable name of a code value, as static C text (built once from the core's names).
fn name_of(value: u32) -> &'static CStr {
    static NAMES: std::sync::OnceLock<Vec<CString>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        std::iter::once("ok")
            .chain(claimdag::Code::ALL.iter().map(|c| c.as_str()))
            .map(|n| CString::new(n).unwrap_or_default())
            .collect()
    });
    names
        .get(value as usize)
        .map(CString::as_c_str)
        .unwrap_or(c"unknown")
}

/// How a `claimdag_code` argument arrives from C. A C caller may pass any value of the
/// enum's underlying type, and a Rust enum holding an undeclared value is undefined
/// behaviour, so the value is received as an integer (same size and passing convention as
/// the C enum) and checked. The header spells the type `claimdag_code` (cbindgen.toml).
pub type CodeArg = u32;

/// A failed call: the code to return and the message for `claimdag_last_error`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub code: claimdag_code,
    pub error: claimdag::Error,
}

impl Failure {
    pub fn invalid(message: impl Into<String>) -> Failure {
        claimdag::Error::invalid(message).into()
    }

    pub fn internal(message: impl Into<String>) -> Failure {
        claimdag::Error::Internal(message.into()).into()
    }
}

impl From<claimdag::Error> for Failure {
    fn from(e: claimdag::Error) -> Failure {
        Failure {
            code: e.code().into(),
            error: e,
        }
    }
}

/// This thread's last failure: its message and its JSON body.
struct Last {
    message: CString,
    body: CString,
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
fn last_text(pick: fn(&Last) -> &CString) -> *const c_char {
    let ptr = LAST_ERROR.try_with(|slot| match slot.try_borrow() {
        Ok(s) => s.as_ref().map(|l| pick(l).as_ptr()),
        Err(_) => None,
    });
    match ptr {
        Ok(Some(p)) => p,
        _ => c"".as_ptr(),
    }
}

/// The message of the last failed call on this thread, or "" when the last call succeeded
/// (or none was made). Never NULL.
///
/// Every function returning a `claimdag_code` replaces the message: with the failure's text
/// on failure, with "" on success. The pointer is owned by the library and valid until
/// the next such call on this thread; copy the text to keep it. Other threads have their
/// own message (like libgit2's `git_error_last`). The text is UTF-8.
#[no_mangle]
pub extern "C" fn claimdag_last_error() -> *const c_char {
    crate::panic::ffi_boundary_or("claimdag_last_error", c"".as_ptr(), || {
        last_text(|l| &l.message)
    })
}

/// This thread's last failure as the JSON error body every front door gives (SPEC section
/// 4): `{"code": "...", "message": "...", ...}` with the node, holder, generation, the nodes
/// an actor holds and the path when the error names them. "" when the last call succeeded.
/// Valid until this thread's next call into the library; never NULL, never freed.
#[no_mangle]
pub extern "C" fn claimdag_last_error_json() -> *const c_char {
    crate::panic::ffi_boundary_or("claimdag_last_error_json", c"".as_ptr(), || {
        last_text(|l| &l.body)
    })
}

/// The stable name of a code: "ok", "not_found", "already_claimed", ... (the `code` word
/// of the CLI's JSON errors); "unknown" for a value that is not a code. Never NULL.
///
/// The text is static: never free it.
#[no_mangle]
pub extern "C" fn claimdag_code_str(code: CodeArg) -> *const c_char {
    crate::panic::ffi_boundary_or("claimdag_code_str", c"unknown".as_ptr(), || {
        name_of(code).as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_match_the_core_codes_and_names() {
        for code in claimdag::Code::ALL {
            let c: claimdag_code = code.into();
            assert_eq!(c as u32, code as u32);
            assert_eq!(name_of(c as u32).to_str().unwrap(), code.as_str());
        }
        assert_eq!(claimdag_code::CLAIMDAG_OK as u32, 0);
        assert_eq!(name_of(16).to_str().unwrap(), "unknown");
        assert_eq!(name_of(u32::MAX).to_str().unwrap(), "unknown");
    }

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
