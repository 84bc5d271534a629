//! The store handle: open, close, resolving node arguments, and freeing returned strings.

use crate::code::{claimdag_code, Failure};
use crate::ffi::{c_string, opt_str_arg, out_arg, out_id_arg, store_arg, str_arg};
use crate::handle::claimdag_store;
use crate::panic::{ffi_boundary, ffi_boundary_or};
use claimdag::verbs;
use claimdag::Store;
use std::ffi::{c_char, CStr, CString};
use std::path::Path;

/// Opens the store in directory `dir` and writes a new handle to `*out`.
///
/// `dir` NULL or "" means the default directory: `$CLAIMDAG_DIR`, else
/// `$XDG_STATE_HOME/claimdag`, else `~/.local/state/claimdag`. Nothing is read or created
/// on disk until the first call that needs the store: reading a store that does not exist
/// shows an empty DAG, the first write creates it.
///
/// On `CLAIMDAG_OK`, `*out` is a handle the caller owns and must pass to `claimdag_close`;
/// on failure `*out` is left unchanged. `out` must not be NULL. `dir` must be UTF-8.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_open(
    dir: *const c_char,
    out: *mut *mut claimdag_store,
) -> claimdag_code {
    ffi_boundary("claimdag_open", || {
        // SAFETY: forwarded from this function's contract.
        let dir = unsafe { opt_str_arg(dir, "dir") }?;
        let out = unsafe { out_arg(out, "out") }?;
        let store = Store::open(dir.map(Path::new))?.through("c");
        let handle = Box::new(claimdag_store { store });
        out.write(Box::into_raw(handle));
        Ok(())
    })
}

/// Closes a handle and frees it. NULL is a no-op. The handle must not be used afterwards,
/// and no other thread may be using it during the call. Everything a call committed is
/// already on disk; closing loses nothing.
///
/// # Safety
/// `store` is NULL or a handle from `claimdag_open` not yet closed.
#[no_mangle]
pub unsafe extern "C" fn claimdag_close(store: *mut claimdag_store) {
    ffi_boundary_or("claimdag_close", (), || {
        if !store.is_null() {
            // SAFETY: the caller gives back ownership of a handle from `claimdag_open`.
            drop(unsafe { Box::from_raw(store) });
        }
    })
}

/// Resolves a node argument to its full id and writes it (32 lowercase hex characters
/// and a NUL) to `out_id`.
///
/// Every function that takes a node accepts the same forms as the CLI: a full id (either
/// case), a unique prefix of at least 8 hex characters, or the `092dca29...` form that
/// lists print. `CLAIMDAG_NOT_FOUND` when nothing matches, `CLAIMDAG_INVALID_INPUT` when
/// the text is malformed or the prefix is ambiguous.
///
/// # Safety
/// `s` is a live handle or NULL; `text` a NUL-terminated string or NULL; `out_id` is
/// NULL or has room for 33 bytes.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_resolve(
    s: *mut claimdag_store,
    text: *const c_char,
    out_id: *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_resolve", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let text = unsafe { str_arg(text, "text") }?;
        let out_id = unsafe { out_id_arg(out_id, "out_id") }?;
        out_id.write(store.resolve(text)?);
        Ok(())
    })
}

/// Frees a string returned by this library (the `char **out_json` and `char **out_value`
/// out-params). NULL is a no-op. Free each string exactly once, and only with this
/// function (never with `free()`).
///
/// # Safety
/// `s` is NULL or a string this library returned and that was not freed yet.
#[no_mangle]
pub unsafe extern "C" fn claimdag_string_free(s: *mut c_char) {
    ffi_boundary_or("claimdag_string_free", (), || {
        if !s.is_null() {
            // SAFETY: the caller gives back a string made by `CString::into_raw` here.
            drop(unsafe { CString::from_raw(s) });
        }
    })
}

/// The version of this library, e.g. "0.1.0". Static text: never free it.
#[no_mangle]
pub extern "C" fn claimdag_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    ffi_boundary_or("claimdag_version", c"".as_ptr(), || {
        VERSION.as_ptr().cast::<c_char>()
    })
}

/// Turns a finished string into the raw pointer handed to C.
pub(crate) fn into_raw(s: CString) -> *mut c_char {
    s.into_raw()
}

/// The failure for "nothing ready" (claim-next and next found no node).
pub(crate) fn nothing_ready(workspace: Option<&str>, role: Option<&str>) -> Failure {
    let ws = match workspace {
        Some(w) => w.to_string(),
        None => claimdag::store::default_workspace().unwrap_or_default(),
    };
    claimdag::Error::NotFound {
        what: format!(
            "a ready node in workspace {ws:?} for role {:?}",
            role.unwrap_or("")
        ),
        node: None,
    }
    .into()
}

/// A word of the core (a status) as static C text, made once per word.
pub(crate) fn static_text(word: &'static str) -> &'static CStr {
    static WORDS: std::sync::Mutex<Vec<(&'static str, &'static CStr)>> =
        std::sync::Mutex::new(Vec::new());
    let mut words = WORDS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, c)) = words.iter().find(|(w, _)| *w == word) {
        return c;
    }
    let c: &'static CStr = Box::leak(CString::new(word).unwrap_or_default().into_boxed_c_str());
    words.push((word, c));
    c
}

/// Runs any verb by name with JSON arguments, as the CLI's `--json` would, and writes its
/// reply to `*out_json` (free it with `claimdag_string_free`): the one door to every verb.
///
/// `verb` is a verb's name (`claim_next` or `claim-next`, `upsert`, `list`, ...;
/// docs/reference.md lists them) and `args_json` a JSON object of its arguments, named as
/// the CLI's long options with `_` for `-` (`{"node": "092dca29", "assignee":
/// "name:codex-1", "ttl": "10m"}`); NULL or "" is `{}`. Nodes, actors (`name:NAME` too),
/// durations and status words are read as everywhere. The reply is the JSON the CLI
/// prints with `--json`: `null` when `next` or `claim_next` found nothing ready (the call
/// still returns `CLAIMDAG_OK`). An unknown verb, an unknown or mistyped argument is
/// `CLAIMDAG_INVALID_INPUT` naming it. `claimdag_last_error_json` gives a refusal's body.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_call_json(
    s: *mut claimdag_store,
    verb: *const c_char,
    args_json: *const c_char,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_call_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let verb = unsafe { str_arg(verb, "verb") }?;
        let args = unsafe { opt_str_arg(args_json, "args_json") }?.unwrap_or("");
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let args: serde_json::Value = match args.trim() {
            "" => serde_json::Value::Null,
            text => serde_json::from_str(text)
                .map_err(|e| Failure::invalid(format!("args_json is not valid JSON: {e}")))?,
        };
        let cx = verbs::Ctx::from_env(store, None)?;
        let answer = verbs::call(&cx, verb, args)?;
        out.write(into_raw(c_string(answer.json.to_string())?));
        Ok(())
    })
}

/// Writes the actor a name stands for (docs/reference.md, "The actor recipe": the first 16 bytes of SHA-256 over
/// `claimdag-actor-v1` and `name`, each as its byte length, 8 bytes big endian, and its
/// bytes) to `out_id` as 32 lowercase hex characters and a NUL. Every function that takes
/// an actor also takes `name:NAME` for it. `CLAIMDAG_INVALID_INPUT` unless `name` is 1-64
/// characters of `[A-Za-z0-9._@-]`.
///
/// # Safety
/// `name` is NUL-terminated or NULL; `out_id` is NULL or has room for 33 bytes.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_actor(name: *const c_char, out_id: *mut c_char) -> claimdag_code {
    ffi_boundary("claimdag_actor", || {
        // SAFETY: forwarded from this function's contract.
        let name = unsafe { str_arg(name, "name") }?;
        let out_id = unsafe { out_id_arg(out_id, "out_id") }?;
        out_id.write(claimdag::Actor::from_name(name)?);
        Ok(())
    })
}
