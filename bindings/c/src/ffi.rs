//! Turning C arguments into Rust values, in one place: NULL checks, UTF-8 checks, the
//! store handle, node and actor arguments, and out-params that are written only once a
//! call has succeeded.

use crate::code::Failure;
use crate::handle::claimdag_store;
use claimdag::id::Id;
use claimdag::verbs::{Ctx, Reply, Verb};
use claimdag::Store;
use std::ffi::{c_char, CStr, CString};
use std::ptr::NonNull;

/// The one failure for a NULL pointer where a value is required.
pub(crate) fn null_arg(name: &str) -> Failure {
    Failure::invalid(format!("argument `{name}` is NULL"))
}

/// A required string argument.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that stays valid and unchanged
/// while the result is in use.
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(null_arg(name));
    }
    // SAFETY: not NULL, and the caller promises a live NUL-terminated string.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str().map_err(|e| {
        Failure::invalid(format!(
            "argument `{name}` is not valid UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// An optional string argument: NULL is `None`.
///
/// # Safety
/// As [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(
    ptr: *const c_char,
    name: &str,
) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { str_arg(ptr, name) }.map(Some)
    }
}

/// An array of `len` strings; `len == 0` is `None` ("not given"), whatever `ptr` is.
///
/// # Safety
/// When `len > 0`, `ptr` is NULL or points to `len` pointers, each as in [`str_arg`].
pub(crate) unsafe fn str_array_arg(
    ptr: *const *const c_char,
    len: usize,
    name: &str,
) -> Result<Option<Vec<String>>, Failure> {
    if len == 0 {
        return Ok(None);
    }
    if ptr.is_null() {
        return Err(null_arg(name));
    }
    // SAFETY: not NULL, and the caller promises `len` readable elements.
    let items = unsafe { std::slice::from_raw_parts(ptr, len) };
    items
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            // SAFETY: each element is a string pointer as the caller promised.
            unsafe { str_arg(p, &format!("{name}[{i}]")) }.map(str::to_string)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The store behind a handle.
///
/// # Safety
/// `ptr` is NULL or a handle from `claimdag_open` that has not been closed.
pub(crate) unsafe fn store_arg<'a>(ptr: *const claimdag_store) -> Result<&'a Store, Failure> {
    // SAFETY: NULL or a live handle, as the caller promises; shared access only.
    match unsafe { ptr.as_ref() } {
        Some(handle) => Ok(&handle.store),
        None => Err(null_arg("store")),
    }
}

/// Runs one verb-layer request on the store behind a handle, in the default workspace
/// (`$CLAIMDAG_WORKSPACE`, else "") unless the request names one. Node, actor, status and
/// duration arguments are read by the verb layer, as for every front door.
pub(crate) fn run<V: Verb>(store: &Store, req: &V) -> Result<V::Reply, Failure> {
    let cx = Ctx::from_env(store, None)?;
    Ok(claimdag::verbs::reply(&cx, req)?)
}

/// A reply's JSON, as the CLI's `--json` prints it, as a string for C.
pub(crate) fn reply_json<R: Reply>(reply: &R) -> Result<CString, Failure> {
    let text = serde_json::to_string(reply)
        .map_err(|e| Failure::internal(format!("a reply does not serialise: {e}")))?;
    c_string(text)
}

/// An optional string argument as the owned value a request holds.
pub(crate) fn owned(text: Option<&str>) -> Option<String> {
    text.map(str::to_string)
}

/// 0 means "not given" for generations (a node's generation starts at 1) and durations.
pub(crate) fn given(value: u64) -> Option<u64> {
    (value != 0).then_some(value)
}

/// A checked, non-NULL out-param, written once the call has succeeded.
pub(crate) struct Out<T>(NonNull<T>);

/// Checks an out-param for NULL.
///
/// # Safety
/// `ptr` is NULL or valid for writing one `T` for the rest of the call.
pub(crate) unsafe fn out_arg<T>(ptr: *mut T, name: &str) -> Result<Out<T>, Failure> {
    NonNull::new(ptr).map(Out).ok_or_else(|| null_arg(name))
}

/// An optional out-param: NULL means the caller does not want the value.
///
/// # Safety
/// As [`out_arg`].
pub(crate) unsafe fn opt_out_arg<T>(ptr: *mut T) -> Option<Out<T>> {
    NonNull::new(ptr).map(Out)
}

impl<T> Out<T> {
    pub(crate) fn write(self, value: T) {
        // SAFETY: checked non-NULL and promised writable by the caller of `out_arg`. The
        // old contents may be uninitialised, so they are overwritten without a drop.
        unsafe { self.0.as_ptr().write(value) }
    }
}

/// A checked `char out_id[33]`.
pub(crate) struct OutId(NonNull<c_char>);

/// Checks an id out-param for NULL.
///
/// # Safety
/// `ptr` is NULL or valid for writing 33 bytes for the rest of the call.
pub(crate) unsafe fn out_id_arg(ptr: *mut c_char, name: &str) -> Result<OutId, Failure> {
    NonNull::new(ptr).map(OutId).ok_or_else(|| null_arg(name))
}

impl OutId {
    /// Writes the 32 lowercase hex characters and a NUL.
    pub(crate) fn write(self, id: Id) {
        let mut buf = [0u8; 33];
        buf[..32].copy_from_slice(id.hex().as_bytes());
        // SAFETY: checked non-NULL and promised writable for 33 bytes by the caller of
        // `out_id_arg`; `buf` is a separate local.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), self.0.as_ptr().cast::<u8>(), 33) }
    }
}

/// A string for C, allocated here and freed by `claimdag_string_free`.
pub(crate) fn c_string(text: String) -> Result<CString, Failure> {
    CString::new(text).map_err(|_| Failure::internal("output text contains a NUL byte"))
}
