//! The result codes of the C ABI (docs/reference.md, "Exit codes and errors") and the failure a call returns.
//!
//! `claimdag_code` is built from the core's table of codes (`claimdag::with_codes!`), so its
//! values and names are those of every other front door; the header's enum is written from
//! the same table (tests/header.rs).

use std::ffi::{CStr, CString};

/// Builds `claimdag_code` from the rows of the core's table: `CLAIMDAG_OK` and one
/// `CLAIMDAG_<NAME>` per code, with the same value.
macro_rules! c_code_enum {
    ($($variant:ident = $value:literal, $name:ident, exit $exit:literal, $meaning:literal;)+) => {
        pastey::paste! {
            /// The result of every fallible call. The values are those of docs/reference.md (its error codes) and
            /// are never renumbered; `CLAIMDAG_OK` is 0, every failure is non-zero. After a
            /// failure, `claimdag_last_error()` gives the message on the same thread.
            #[allow(non_camel_case_types)]
            #[repr(C)]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub enum claimdag_code {
                /// Success.
                CLAIMDAG_OK = 0,
                $(#[doc = $meaning] [<CLAIMDAG_ $name:upper>] = $value,)+
            }

            impl From<claimdag::Code> for claimdag_code {
                fn from(code: claimdag::Code) -> Self {
                    match code {
                        $(claimdag::Code::$variant => claimdag_code::[<CLAIMDAG_ $name:upper>],)+
                    }
                }
            }
        }
    };
}

claimdag::with_codes!(c_code_enum);

/// The stable name of a code value, as static C text (built once from the core's names).
pub(crate) fn name_of(value: u32) -> &'static CStr {
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

impl From<claimdag::id::IdError> for Failure {
    fn from(e: claimdag::id::IdError) -> Failure {
        claimdag::Error::from(e).into()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_match_the_core_codes_and_names() {
        for code in claimdag::Code::ALL {
            let c: claimdag_code = code.into();
            assert_eq!(c as u32, code as u32);
            assert_eq!(name_of(c as u32).to_str().unwrap(), code.as_str());
            assert_eq!(claimdag::Code::from_value(c as u32), Some(code));
        }
        assert_eq!(claimdag_code::CLAIMDAG_OK as u32, 0);
        assert_eq!(name_of(16).to_str().unwrap(), "unknown");
        assert_eq!(name_of(u32::MAX).to_str().unwrap(), "unknown");
    }
}
