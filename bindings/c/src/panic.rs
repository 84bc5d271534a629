//! The panic boundary. Every exported function runs its body through [`ffi_boundary`] (or
//! [`ffi_boundary_or`] for the few that return no code), so no panic ever unwinds into C:
//! a caught panic becomes `CLAIMDAG_INTERNAL` with a message.

use crate::code::{claimdag_code, Failure};
use crate::last::set_last_error;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of an exported function that returns a code. `Ok` is `CLAIMDAG_OK` (and
/// clears this thread's last error); a [`Failure`] returns its code and records its
/// message; a panic returns `CLAIMDAG_INTERNAL` with a message naming `name`.
///
/// The body must write its out-params only once it cannot fail any more.
pub(crate) fn ffi_boundary(
    name: &'static str,
    body: impl FnOnce() -> Result<(), Failure>,
) -> claimdag_code {
    // AssertUnwindSafe: the only state shared across calls is the store handle, whose
    // lock recovers from poisoning by reloading from disk (claimdag::Store).
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            set_last_error(None);
            claimdag_code::CLAIMDAG_OK
        }
        Ok(Err(failure)) => {
            set_last_error(Some(&failure.error));
            failure.code
        }
        Err(payload) => {
            set_last_error(Some(&panic_error(name, payload)));
            claimdag_code::CLAIMDAG_INTERNAL
        }
    }
}

/// Runs the body of an exported function that returns no code; a panic returns `fallback`
/// and records a message. The last error is otherwise left as it was.
pub(crate) fn ffi_boundary_or<T>(name: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            set_last_error(Some(&panic_error(name, payload)));
            fallback
        }
    }
}

fn panic_error(name: &str, payload: Box<dyn Any + Send>) -> claimdag::Error {
    let what = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    };
    // Dropping a payload runs foreign code; a payload whose drop panics again is leaked.
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
    claimdag::Error::Internal(format!("{name} panicked: {what} (please report this bug)"))
}

/// Panics inside the boundary, so tests in C can see `CLAIMDAG_INTERNAL` come back as a
/// code. Present only with the `testing` feature (the C tests build with it; the shipped
/// library does not have it) and not declared in the header.
#[cfg(feature = "testing")]
#[no_mangle]
pub extern "C" fn claimdag_testing_panic() -> claimdag_code {
    ffi_boundary("claimdag_testing_panic", || {
        panic!("a deliberate panic to test the boundary")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last::last_text;
    use std::ffi::CStr;

    /// This thread's last message, as `claimdag_last_error` gives it.
    fn last() -> String {
        unsafe { CStr::from_ptr(last_text(|l| &l.message)) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_internal_with_a_message() {
        let code = ffi_boundary("claimdag_example", || panic!("boom {}", 7));
        assert_eq!(code, claimdag_code::CLAIMDAG_INTERNAL);
        assert!(
            last().contains("claimdag_example panicked: boom 7"),
            "{}",
            last()
        );
    }

    #[cfg(feature = "testing")]
    #[test]
    fn the_test_hook_panics_inside_the_boundary() {
        assert_eq!(claimdag_testing_panic(), claimdag_code::CLAIMDAG_INTERNAL);
        assert!(last().contains("deliberate panic"), "{}", last());
    }

    #[test]
    fn failures_and_successes_set_the_message() {
        let code = ffi_boundary("f", || Err(Failure::invalid("nope")));
        assert_eq!(code, claimdag_code::CLAIMDAG_INVALID_INPUT);
        assert_eq!(last(), "nope");
        assert_eq!(ffi_boundary("f", || Ok(())), claimdag_code::CLAIMDAG_OK);
        assert_eq!(last(), "");
    }

    #[test]
    fn the_fallback_comes_back_on_a_panic() {
        assert_eq!(ffi_boundary_or("g", 5, || -> i32 { panic!("x") }), 5);
        assert!(last().contains("g panicked: x"));
        assert_eq!(ffi_boundary_or("g", 5, || 6), 6);
    }
}
