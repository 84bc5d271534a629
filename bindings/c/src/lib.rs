//! The C ABI of claimdag (docs/c-api.md): `libclaimdag.so` / `libclaimdag.a` and
//! `include/claimdag.h`, generated from this crate by cbindgen (`cbindgen.toml`).
//!
//! Conventions, the same for every function (docs/c-api.md explains them for C hosts):
//!
//! - every exported body runs inside [`panic::ffi_boundary`]: no panic reaches C, a caught
//!   one is `CLAIMDAG_INTERNAL`;
//! - every pointer goes through [`ffi`]: a NULL where a value is required, or a string
//!   that is not UTF-8, is `CLAIMDAG_INVALID_INPUT`, checked before anything changes;
//! - out-params are written only when the call returns `CLAIMDAG_OK`;
//! - each thread keeps the message of its last failure (`claimdag_last_error`).

#![deny(unsafe_op_in_unsafe_fn)]

pub mod code;
pub mod errors;
mod ffi;
pub mod handle;
mod last;
pub mod panic;

// The exported functions by group; blank lines keep rustfmt from sorting the groups, so
// the header lists them in this order: the handle, the writes, the claims, the holder's
// conversation (checkpoints, cancel requests, outputs), the reads.
pub mod store;

pub mod write;

pub mod claims;

pub mod talk;

pub mod read;

pub use claims::CLAIMDAG_NO_LEASE;
pub use code::claimdag_code;
pub use errors::{claimdag_code_str, claimdag_last_error};
pub use handle::claimdag_store;
pub use read::claimdag_list_options;
pub use write::{claimdag_upsert_options, CLAIMDAG_NO_OLDER_THAN};
