//! The verbs that read a store (get, list, next, ready, log, graph, check) and the settings
//! (config). Results come back as text the caller frees with `claimdag_string_free`: JSON,
//! except the graph (dot or Mermaid). A node is the object the CLI's `--json` prints: every
//! field of the node plus its derived `"display"` word, `"ready"` and `"why"`.

use crate::code::{claimdag_code, Failure};
use crate::ffi::{
    c_string, opt_str_arg, out_arg, out_id_arg, owned, reply_json, run, store_arg, str_arg,
};
use crate::handle::claimdag_store;
use crate::panic::ffi_boundary;
use crate::store::{into_raw, nothing_ready};
use claimdag::verbs::{self, Reply};
use claimdag::Store;
use std::ffi::c_char;

/// Writes one node as a JSON object to `*out_json` (`CLAIMDAG_NOT_FOUND` when there is no
/// such node). Free the string with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; `id` is NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_get_json(
    s: *mut claimdag_store,
    id: *const c_char,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_get_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let view = run(
            store,
            &verbs::Show {
                node: id.to_string(),
            },
        )?;
        out.write(into_raw(reply_json(&view)?));
        Ok(())
    })
}

/// Options of `claimdag_list_json_opts`, the filters of the CLI's `list`. Zero-initialise
/// it (`claimdag_list_options o = {0};`) and set what you need: a NULL pointer or a false
/// flag means "not given", and all defaults list the live unfinished nodes of the default
/// workspace, like `claimdag_list_json`. The struct only borrows its strings for the
/// duration of the call.
///
/// This layout is part of the ABI; a later version that needs more options adds a new
/// struct and function rather than changing this one.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct claimdag_list_options {
    /// The workspace to list. NULL: `$CLAIMDAG_WORKSPACE`, else "".
    pub workspace: *const c_char,
    /// Only nodes with this stored status or display word: todo, ready, blocked, claimed,
    /// expired, done, failed, cancelled. NULL: any.
    pub status: *const c_char,
    /// Only the claims of this actor (32 hex characters). NULL: any.
    pub holder: *const c_char,
    /// Also show finished live nodes (`list --terminal`).
    pub terminal: bool,
    /// Also show archived nodes; with `terminal`, everything (`list --all`).
    pub archived: bool,
    /// Show archived nodes only (`list --archived`).
    pub only_archived: bool,
}

impl claimdag_list_options {
    const DEFAULT: claimdag_list_options = claimdag_list_options {
        workspace: std::ptr::null(),
        status: std::ptr::null(),
        holder: std::ptr::null(),
        terminal: false,
        archived: false,
        only_archived: false,
    };
}

/// Writes the live unfinished nodes of the default workspace, in creation order, to
/// `*out_json` as a JSON array of node objects. Free it with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_list_json(
    s: *mut claimdag_store,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    let options = claimdag_list_options::DEFAULT;
    // SAFETY: forwarded from this function's contract; `options` holds no pointers.
    unsafe { list(s, &options, "", out_json, "claimdag_list_json") }
}

/// `claimdag_list_json` with the CLI's filters: `workspace` (NULL: `$CLAIMDAG_WORKSPACE`,
/// else ""), `status` (NULL: any; else a stored status or a display word: todo, ready,
/// blocked, claimed, expired, done, failed, cancelled), `holder` (NULL: any; else an actor
/// whose claims to show) and `include_terminal` (also show finished nodes). Archived nodes
/// are left out; `claimdag_list_json_opts` can show them.
///
/// # Safety
/// As `claimdag_list_json`; strings are NUL-terminated or NULL.
#[no_mangle]
pub unsafe extern "C" fn claimdag_list_json_ex(
    s: *mut claimdag_store,
    workspace: *const c_char,
    status: *const c_char,
    holder: *const c_char,
    include_terminal: bool,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    let options = claimdag_list_options {
        workspace,
        status,
        holder,
        terminal: include_terminal,
        ..claimdag_list_options::DEFAULT
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { list(s, &options, "", out_json, "claimdag_list_json_ex") }
}

/// `claimdag_list_json` with every filter of the CLI's `list`, archived nodes included (see
/// `claimdag_list_options`). `options` NULL is all defaults (the same as
/// `claimdag_list_json`). Archived nodes carry `"archived": true` and come after the live
/// ones, each group in creation order.
///
/// # Safety
/// `s` is a live handle or NULL; `options` is NULL or a readable struct whose strings are
/// NUL-terminated or NULL; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_list_json_opts(
    s: *mut claimdag_store,
    options: *const claimdag_list_options,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    // SAFETY: NULL or a readable struct, as the caller promises.
    let options = unsafe { options.as_ref() }.unwrap_or(&claimdag_list_options::DEFAULT);
    // SAFETY: forwarded from this function's contract.
    unsafe { list(s, options, "options.", out_json, "claimdag_list_json_opts") }
}

/// # Safety
/// `s` and `out_json` as in the exported list functions; the strings in `o` are
/// NUL-terminated or NULL. `prefix` names the fields in messages.
unsafe fn list(
    s: *mut claimdag_store,
    o: &claimdag_list_options,
    prefix: &str,
    out_json: *mut *mut c_char,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the exported function's contract.
        let store = unsafe { store_arg(s) }?;
        let ws = unsafe { opt_str_arg(o.workspace, &format!("{prefix}workspace")) }?;
        let status = unsafe { opt_str_arg(o.status, &format!("{prefix}status")) }?;
        let holder = unsafe { opt_str_arg(o.holder, &format!("{prefix}holder")) }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = verbs::List {
            status: owned(status),
            holder: owned(holder),
            terminal: o.terminal,
            archived: o.only_archived,
            with_archived: o.archived,
            workspace: owned(ws),
            ..verbs::List::default()
        };
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

/// Writes the id of the ready node `claimdag_claim_next` would pick to `out_id`, without
/// claiming it. `workspace` NULL: `$CLAIMDAG_WORKSPACE`, else ""; `role` as in
/// `claimdag_claim_next_ex`. `CLAIMDAG_NOT_FOUND` when no node is ready.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_id` is NULL or
/// has room for 33 bytes.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_next(
    s: *mut claimdag_store,
    workspace: *const c_char,
    role: *const c_char,
    out_id: *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_next", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let ws = unsafe { opt_str_arg(workspace, "workspace") }?;
        let role = unsafe { opt_str_arg(role, "role") }?;
        let out_id = unsafe { out_id_arg(out_id, "out_id") }?;
        let req = verbs::Next {
            role: owned(role),
            workspace: owned(ws),
        };
        match run(store, &req)?.0 {
            Some(pick) => {
                out_id.write(pick.id);
                Ok(())
            }
            None => Err(nothing_ready(ws, role)),
        }
    })
}

/// Writes the ready nodes in the order `claimdag_next` picks them to `*out_json`, as a JSON
/// array of `{"id", "critical", "path", "summary"}`: `critical` is the node's critical path
/// (the largest sum of estimates along a chain of unfinished nodes waiting on it, its own
/// included) and `path` that chain, this node first. Arguments as in `claimdag_next`.
/// Free the string with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_ready_json(
    s: *mut claimdag_store,
    workspace: *const c_char,
    role: *const c_char,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_ready_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let ws = unsafe { opt_str_arg(workspace, "workspace") }?;
        let role = unsafe { opt_str_arg(role, "role") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = verbs::Ready {
            role: owned(role),
            workspace: owned(ws),
        };
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

/// Writes the history, oldest first, to `*out_json` as a JSON array of transitions
/// (`{"seq", "at", "verb", "node", "actor", "generation", "detail"}`, absent fields left
/// out). `id` NULL: the whole store's history; otherwise only that node's. Free the string
/// with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; `id` is NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_log_json(
    s: *mut claimdag_store,
    id: *const c_char,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_log_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { opt_str_arg(id, "id") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = verbs::Log {
            node: owned(id),
            ..verbs::Log::default()
        };
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

/// Writes the DAG of `workspace` (NULL: `$CLAIMDAG_WORKSPACE`, else "") to `*out_text` as
/// the CLI's `graph` prints it: `format` "dot" (Graphviz, also when NULL), "mermaid", or
/// "json" (the nodes and links, each marked when on the critical path), nodes coloured by
/// their display word, hard links solid, soft links dashed, the longest
/// critical path drawn thick. Finished nodes are left out unless `all`; archived nodes are
/// never drawn. Free the text with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_text` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_graph(
    s: *mut claimdag_store,
    workspace: *const c_char,
    format: *const c_char,
    all: bool,
    out_text: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_graph", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let ws = unsafe { opt_str_arg(workspace, "workspace") }?;
        let format = unsafe { opt_str_arg(format, "format") }?;
        let out = unsafe { out_arg(out_text, "out_text") }?;
        let req = verbs::Graph {
            format: owned(format),
            all,
            workspace: owned(ws),
        };
        out.write(into_raw(c_string(run(store, &req)?.graph)?));
        Ok(())
    })
}

/// Writes one setting, as the CLI's `config KEY` prints it, to `*out_value`:
/// `default_ttl` (a duration such as "15m"), `max_held` (a whole number, 0 = no limit) or
/// `max_attempts` (a whole number, or "none"). Free the string with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; `key` is NUL-terminated or NULL; `out_value` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_config_get(
    s: *mut claimdag_store,
    key: *const c_char,
    out_value: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_config_get", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let key = unsafe { str_arg(key, "key") }?;
        let out = unsafe { out_arg(out_value, "out_value") }?;
        let req = verbs::Config {
            key: Some(key.to_string()),
            value: None,
        };
        let text = run(store, &req)?.text();
        out.write(into_raw(c_string(text.trim_end_matches('\n').to_string())?));
        Ok(())
    })
}

/// Changes one setting, written as for the CLI's `config KEY VALUE`: `default_ttl` takes a
/// duration (`500ms`, `30s`, `15m`, `2h`, `1d`; a bare number is seconds), `max_held` a
/// whole number (0 = no limit), `max_attempts` a whole number or "none".
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL.
#[no_mangle]
pub unsafe extern "C" fn claimdag_config_set(
    s: *mut claimdag_store,
    key: *const c_char,
    value: *const c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_config_set", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let key = unsafe { str_arg(key, "key") }?;
        let value = unsafe { str_arg(value, "value") }?;
        // One locked write: a concurrent change of another setting is not lost.
        let req = verbs::Config {
            key: Some(key.to_string()),
            value: Some(value.to_string()),
        };
        run(store, &req)?;
        Ok(())
    })
}

/// Writes every setting to `*out_json` as
/// `{"default_ttl_ms": <ms>, "max_held": <n>, "max_attempts": <n or null>}`. Free the
/// string with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_config_json(
    s: *mut claimdag_store,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_config_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = verbs::Config::default();
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

/// Verifies the store: reads every file afresh (formats, checksums) and checks the DAG's
/// invariants. When all is well, writes
/// `{"ok": true, "nodes": <n>, "archived": <n>, "events": <n>, "problems": []}` to
/// `*out_json` (free it with `claimdag_string_free`). A damaged file, or an invariant that
/// does not hold, is `CLAIMDAG_CORRUPT` (the message lists the problems, `*out_json` is
/// not written), as the CLI's `check` exits 6.
///
/// # Safety
/// `s` is a live handle or NULL; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_check(
    s: *mut claimdag_store,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_check", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let report = check(store)?;
        out.write(into_raw(reply_json(&report)?));
        Ok(())
    })
}

fn check(store: &Store) -> Result<verbs::CheckReport, Failure> {
    let r = run(store, &verbs::Check {})?;
    if !r.ok {
        let detail = format!("{} problem(s): {}", r.problems.len(), r.problems.join("; "));
        return Err(
            claimdag::Error::corrupt(std::path::Path::new(&store.location()), detail).into(),
        );
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{claimdag_close, claimdag_open, claimdag_string_free};
    use claimdag::Settings;
    use std::ffi::{CStr, CString};

    /// `claimdag_config_get` shows every setting the core knows, as the core shows it.
    #[test]
    fn config_get_shows_every_core_setting() {
        // Reading a store that does not exist shows the defaults and creates nothing.
        let dir = std::env::temp_dir().join(format!("claimdag-capi-config-{}", std::process::id()));
        let c_dir = CString::new(dir.to_str().unwrap()).unwrap();
        let mut s = std::ptr::null_mut();
        assert_eq!(
            unsafe { claimdag_open(c_dir.as_ptr(), &mut s) },
            claimdag_code::CLAIMDAG_OK
        );
        let entries = Settings::default().entries();
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, Settings::KEYS);
        for (key, want) in entries {
            let c_key = CString::new(key.as_str()).unwrap();
            let mut out = std::ptr::null_mut();
            let code = unsafe { claimdag_config_get(s, c_key.as_ptr(), &mut out) };
            assert_eq!(code, claimdag_code::CLAIMDAG_OK, "{key}");
            assert_eq!(unsafe { CStr::from_ptr(out) }.to_str().unwrap(), want);
            unsafe { claimdag_string_free(out) };
        }
        let mut out = std::ptr::null_mut();
        let code = unsafe { claimdag_config_get(s, c"colour".as_ptr(), &mut out) };
        assert_eq!(code, claimdag_code::CLAIMDAG_INVALID_INPUT);
        assert!(out.is_null());
        unsafe { claimdag_close(s) };
        assert!(!dir.exists());
    }
}
