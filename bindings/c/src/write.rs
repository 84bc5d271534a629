//! The verbs that shape the DAG: upsert, link, unlink, import, archive, unarchive (the
//! claims are in `claims.rs`). Each one is a single committed write: when it returns
//! `CLAIMDAG_OK` the change is durable, and a refused call changed nothing.

use crate::code::{claimdag_code, Failure};
use crate::ffi::{
    given, opt_out_arg, opt_str_arg, out_arg, out_id_arg, owned, reply_json, run, store_arg,
    str_arg, str_array_arg,
};
use crate::handle::claimdag_store;
use crate::panic::ffi_boundary;
use crate::store::{into_raw, static_text};
use claimdag::verbs::{self, Dur};
use std::ffi::c_char;

/// Options of `claimdag_upsert_ex`. Zero-initialise it (`claimdag_upsert_options o = {0};`)
/// and set what you need: a NULL pointer, a zero number or a false `has_priority` means
/// "not given". On an existing node, fields not given are left as they are. The struct
/// only borrows its strings for the duration of the call.
///
/// This layout is part of the ABI; a later version that needs more options adds a new
/// struct and function rather than changing this one.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct claimdag_upsert_options {
    /// The workspace (part of the node's id). NULL: `$CLAIMDAG_WORKSPACE`, else "".
    pub workspace: *const c_char,
    /// 1-32 characters of [a-z0-9_-] (part of the node's id). NULL: "task".
    pub kind: *const c_char,
    /// The parent node, hierarchy only, never a dependency (part of the node's id): an id
    /// or unique prefix. NULL: none.
    pub parent: *const c_char,
    /// Only workers asking for this role get the node; "" is any worker. NULL: not given.
    pub role: *const c_char,
    /// Whether `priority` is given.
    pub has_priority: bool,
    /// Higher first when critical paths tie.
    pub priority: i64,
    /// A positive size used for critical paths. 0: not given (a new node gets 1).
    pub estimate: u64,
    /// `labels_len` label strings. `labels_len` 0: not given (`labels` may be NULL).
    pub labels: *const *const c_char,
    /// The number of strings in `labels`.
    pub labels_len: usize,
    /// `resources_len` resource strings (`src/parser/`, `db:users`); live claims whose
    /// resources overlap exclude each other. `resources_len` 0: not given.
    pub resources: *const *const c_char,
    /// The number of strings in `resources`.
    pub resources_len: usize,
    /// An external ticket reference. NULL: not given.
    pub ticket_ref: *const c_char,
    /// How many claims the node allows. 0: not given (the store's `max_attempts` applies).
    pub max_attempts: u32,
}

/// Creates a node, or finds the node with the same identity, and writes its id (32
/// lowercase hex characters and a NUL) to `out_id`.
///
/// The id is minted from workspace, kind, parent and the trimmed summary, so upserting the
/// same fields again returns the same node and never duplicates work. `kind` NULL is
/// "task"; `parent` NULL is none (an id or unique prefix otherwise). The workspace is the
/// default one (`$CLAIMDAG_WORKSPACE`, else ""); see `claimdag_upsert_ex` for the rest.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_id` is NULL or
/// has room for 33 bytes.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_upsert(
    s: *mut claimdag_store,
    summary: *const c_char,
    kind: *const c_char,
    parent: *const c_char,
    out_id: *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_upsert", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let summary = unsafe { str_arg(summary, "summary") }?;
        let kind = unsafe { opt_str_arg(kind, "kind") }?;
        let parent = unsafe { opt_str_arg(parent, "parent") }?;
        let out_id = unsafe { out_id_arg(out_id, "out_id") }?;
        let req = verbs::Upsert {
            summary: summary.to_string(),
            kind: owned(kind),
            parent: owned(parent),
            ..verbs::Upsert::default()
        };
        out_id.write(run(store, &req)?.id);
        Ok(())
    })
}

/// `claimdag_upsert` with every field the CLI's `upsert` takes. `options` NULL is all
/// defaults (the same as `claimdag_upsert(s, summary, NULL, NULL, out_id)`).
///
/// # Safety
/// `s` is a live handle or NULL; `summary` is NUL-terminated or NULL; `options` is NULL or
/// a readable struct whose pointers follow the same rules (each array with at least its
/// `_len` elements); `out_id` is NULL or has room for 33 bytes.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_upsert_ex(
    s: *mut claimdag_store,
    summary: *const c_char,
    options: *const claimdag_upsert_options,
    out_id: *mut c_char,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe { upsert_at(s, summary, options, 0, out_id, "claimdag_upsert_ex") }
}

/// `claimdag_upsert_ex` with a time: the node is not granted before `not_before_ms`
/// (milliseconds since the Unix epoch, UTC; 0: not given, the node's `not_before` is left
/// as it is). Until then a node that would be ready displays `scheduled`;
/// `claimdag_get_json` shows the time as `"not_before"`. On an existing node it moves the
/// time (an earlier one makes the node ready at once). `claimdag_upsert_options` is left
/// as it was: its layout is part of the ABI.
///
/// # Safety
/// As `claimdag_upsert_ex`.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_upsert_not_before(
    s: *mut claimdag_store,
    summary: *const c_char,
    options: *const claimdag_upsert_options,
    not_before_ms: u64,
    out_id: *mut c_char,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        upsert_at(
            s,
            summary,
            options,
            not_before_ms,
            out_id,
            "claimdag_upsert_not_before",
        )
    }
}

/// `claimdag_upsert_ex` and `claimdag_upsert_not_before` (`not_before_ms` 0: not given).
///
/// # Safety
/// As `claimdag_upsert_ex`.
unsafe fn upsert_at(
    s: *mut claimdag_store,
    summary: *const c_char,
    options: *const claimdag_upsert_options,
    not_before_ms: u64,
    out_id: *mut c_char,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the caller's contract.
        let store = unsafe { store_arg(s) }?;
        let summary = unsafe { str_arg(summary, "summary") }?;
        let out_id = unsafe { out_id_arg(out_id, "out_id") }?;
        // SAFETY: NULL or a readable struct, as the caller promises.
        let mut req = match unsafe { options.as_ref() } {
            Some(o) => unsafe { upsert_fields(o) }?,
            None => verbs::Upsert::default(),
        };
        req.summary = summary.to_string();
        req.not_before = given(not_before_ms).map(claimdag::format_time);
        out_id.write(run(store, &req)?.id);
        Ok(())
    })
}

/// # Safety
/// The pointers in `o` follow the rules of `claimdag_upsert_ex`.
unsafe fn upsert_fields(o: &claimdag_upsert_options) -> Result<verbs::Upsert, Failure> {
    // SAFETY (every block): the caller vouches for the pointers inside `o`.
    let ws = unsafe { opt_str_arg(o.workspace, "options.workspace") }?;
    let kind = unsafe { opt_str_arg(o.kind, "options.kind") }?;
    let parent = unsafe { opt_str_arg(o.parent, "options.parent") }?;
    let role = unsafe { opt_str_arg(o.role, "options.role") }?;
    let labels = unsafe { str_array_arg(o.labels, o.labels_len, "options.labels") }?;
    let resources = unsafe { str_array_arg(o.resources, o.resources_len, "options.resources") }?;
    let ticket_ref = unsafe { opt_str_arg(o.ticket_ref, "options.ticket_ref") }?;
    Ok(verbs::Upsert {
        workspace: owned(ws),
        kind: owned(kind),
        summary: String::new(),
        parent: owned(parent),
        role: owned(role),
        priority: o.has_priority.then_some(o.priority),
        estimate: given(o.estimate),
        labels,
        resources,
        ref_: owned(ticket_ref),
        max_attempts: (o.max_attempts != 0).then_some(o.max_attempts),
        not_before: None,
        deadline: None,
        budget: None,
    })
}

/// Makes `child` wait on `parent` (a hard link: satisfied when `parent` is done). Linking
/// twice is a no-op; a link that would close a cycle is `CLAIMDAG_CYCLE`; a claimed or
/// finished child cannot gain a prerequisite.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL.
#[no_mangle]
pub unsafe extern "C" fn claimdag_link(
    s: *mut claimdag_store,
    parent: *const c_char,
    child: *const c_char,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe { link(s, parent, child, false, "claimdag_link") }
}

/// `claimdag_link` with a choice: `soft` true makes a soft link, satisfied when `parent`
/// finishes in any status (done, failed or cancelled).
///
/// # Safety
/// As `claimdag_link`.
#[no_mangle]
pub unsafe extern "C" fn claimdag_link_ex(
    s: *mut claimdag_store,
    parent: *const c_char,
    child: *const c_char,
    soft: bool,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe { link(s, parent, child, soft, "claimdag_link_ex") }
}

unsafe fn link(
    s: *mut claimdag_store,
    parent: *const c_char,
    child: *const c_char,
    soft: bool,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the exported function's contract.
        let store = unsafe { store_arg(s) }?;
        let parent = unsafe { str_arg(parent, "parent") }?;
        let child = unsafe { str_arg(child, "child") }?;
        let (parent, child) = (parent.to_string(), child.to_string());
        run(
            store,
            &verbs::Link {
                parent,
                child,
                soft,
            },
        )?;
        Ok(())
    })
}

/// Removes the link that makes `child` wait on `parent` (hard or soft).
/// `CLAIMDAG_NOT_FOUND` when there is no such link.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL.
#[no_mangle]
pub unsafe extern "C" fn claimdag_unlink(
    s: *mut claimdag_store,
    parent: *const c_char,
    child: *const c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_unlink", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let parent = unsafe { str_arg(parent, "parent") }?;
        let child = unsafe { str_arg(child, "child") }?;
        let (parent, child) = (parent.to_string(), child.to_string());
        run(store, &verbs::Unlink { parent, child })?;
        Ok(())
    })
}

/// Creates or merges every node of a plan, with its links, as one atomic write, and writes
/// the nodes to `*out_json` in plan order as a JSON array of `{"id": "<32 hex>", "key":
/// "<the plan's key>"}`. Free it with `claimdag_string_free`.
///
/// `plan_json` is the plan the CLI's `import` reads (docs/reference.md, "Plans"):
/// `{"nodes": [{"key", "summary", "kind", "parent", "deps", "soft_deps", "role",
/// "priority", "estimate", "labels", "resources", "ref", "max_attempts"}]}`, where `parent`
/// and the deps name a key of the plan or an existing node. `workspace` NULL:
/// `$CLAIMDAG_WORKSPACE`, else "". The plan is checked whole: malformed JSON, an unknown
/// field, a bad value or a duplicate key is `CLAIMDAG_INVALID_INPUT`, an unknown reference
/// `CLAIMDAG_NOT_FOUND`, a cycle `CLAIMDAG_CYCLE`, each with a message naming the key, and
/// then nothing is written. Importing the same plan again changes nothing and returns the
/// same ids.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_import_json(
    s: *mut claimdag_store,
    workspace: *const c_char,
    plan_json: *const c_char,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_import_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let ws = unsafe { opt_str_arg(workspace, "workspace") }?;
        let plan = unsafe { str_arg(plan_json, "plan_json") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = verbs::Import::from_bytes(plan.as_bytes(), owned(ws))?;
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

/// `older_than_ms` value of `claimdag_archive` meaning "not given", as the CLI's `archive`
/// without `--older-than`. Every other value, 0 included, is an age.
pub const CLAIMDAG_NO_OLDER_THAN: u64 = 0xFFFF_FFFF_FFFF_FFFF;

/// Moves finished nodes (done, failed or cancelled) out of the live state, as the CLI's
/// `archive [ID...] [--older-than DUR]`, and writes how many moved to `*out_count`.
///
/// - `ids`, `n_ids`: the nodes to archive (ids or unique prefixes). `n_ids` 0 gives none,
///   and `ids` may then be NULL. A node that is not finished refuses the whole call with
///   `CLAIMDAG_INVALID_INPUT`; one archived already is skipped.
/// - `older_than_ms`: also archive every finished node of `workspace` last updated at
///   least that many milliseconds ago; 0 archives every finished node of the workspace.
///   `CLAIMDAG_NO_OLDER_THAN`: not given.
/// - With no ids and `CLAIMDAG_NO_OLDER_THAN`, every finished node of `workspace` is
///   archived, as `archive` with no arguments.
///
/// `workspace` NULL: `$CLAIMDAG_WORKSPACE`, else "". The ids are found in any workspace.
/// A node waiting on an archived node still sees how it ended; `claimdag_get_json`,
/// `claimdag_log_json` and `claimdag_list_json_opts` still find archived nodes, and
/// `claimdag_unarchive` brings one back. The generation does not change.
///
/// # Safety
/// `s` is a live handle or NULL; `workspace` is NUL-terminated or NULL; when `n_ids > 0`,
/// `ids` is NULL or points to `n_ids` pointers, each NUL-terminated or NULL; `out_count` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_archive(
    s: *mut claimdag_store,
    workspace: *const c_char,
    ids: *const *const c_char,
    n_ids: usize,
    older_than_ms: u64,
    out_count: *mut usize,
) -> claimdag_code {
    ffi_boundary("claimdag_archive", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let ws = unsafe { opt_str_arg(workspace, "workspace") }?;
        let ids = unsafe { str_array_arg(ids, n_ids, "ids") }?.unwrap_or_default();
        let out = unsafe { out_arg(out_count, "out_count") }?;
        let req = verbs::Archive {
            nodes: ids,
            older_than: (older_than_ms != CLAIMDAG_NO_OLDER_THAN).then_some(Dur::Ms(older_than_ms)),
            workspace: owned(ws),
        };
        out.write(run(store, &req)?.archived);
        Ok(())
    })
}

/// Brings the archived node `id` back into the live state, as the CLI's `unarchive`. Its
/// status and generation are the ones it was archived with. When `out_status` is not NULL,
/// the status ("done", "failed" or "cancelled") is written to `*out_status` as static text:
/// never free it.
///
/// `CLAIMDAG_NOT_FOUND` when there is no such node, `CLAIMDAG_INVALID_INPUT` when the node
/// is live (not archived).
///
/// # Safety
/// `s` is a live handle or NULL; `id` is NUL-terminated or NULL; `out_status` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_unarchive(
    s: *mut claimdag_store,
    id: *const c_char,
    out_status: *mut *const c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_unarchive", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        // SAFETY: NULL (not wanted) or writable, as the caller promises.
        let out = unsafe { opt_out_arg(out_status) };
        let reply = run(
            store,
            &verbs::Unarchive {
                node: id.to_string(),
            },
        )?;
        if let Some(out) = out {
            out.write(static_text(reply.status.as_str()).as_ptr());
        }
        Ok(())
    })
}
