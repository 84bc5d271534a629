//! The holder and the rest talking (docs/c-api.md, "Checkpoints, cancel requests and
//! outputs"): claims that answer what they hand over (the last checkpoint, the outputs of
//! the prerequisites), renewals that leave a checkpoint and learn of a cancel request,
//! `cancel`, completions that store an output, and several completions in one write. Each
//! call is one verb-layer request, as for every front door; a refused call changed nothing.

use crate::claims::{claim_request, next_request};
use crate::code::claimdag_code;
use crate::ffi::{
    given, opt_out_arg, opt_str_arg, out_arg, owned, reply_json, run, store_arg, str_arg,
};
use crate::handle::claimdag_store;
use crate::panic::ffi_boundary;
use crate::store::{into_raw, nothing_ready};
use claimdag::verbs::{self, Dur};
use std::ffi::c_char;

/// `claimdag_claim_ex` that answers the whole grant: writes to `*out_json` the JSON object
/// `{"id", "generation", "progress", "progress_at", "inputs"}`, as the CLI's `claim --json`
/// prints it. `progress` is the last checkpoint an earlier holder left (or null) and
/// `progress_at` when (ms since the epoch, or null); `inputs` maps the id of every
/// prerequisite that is done (archived ones too) to its output (any JSON value, null when
/// it gave none). Free the string with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_claim_json(
    s: *mut claimdag_store,
    id: *const c_char,
    assignee: *const c_char,
    expected_generation: u64,
    ttl_ms: u64,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_claim_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let assignee = unsafe { str_arg(assignee, "assignee") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = claim_request(id, assignee, expected_generation, ttl_ms);
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

/// `claimdag_claim_next_wait` that answers the whole grant as `claimdag_claim_json` does
/// (the CLI's `claim-next --json`): `{"id", "generation", "progress", "progress_at",
/// "inputs"}`. `wait_ms` 0 does not wait. `CLAIMDAG_NOT_FOUND` when no node is ready (by
/// the end of the wait), and nothing is written.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL (`workspace` and `role`
/// may be NULL); `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_claim_next_json(
    s: *mut claimdag_store,
    assignee: *const c_char,
    workspace: *const c_char,
    role: *const c_char,
    ttl_ms: u64,
    wait_ms: u64,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        next_json(
            "claimdag_claim_next_json",
            (s, assignee, workspace, role),
            (ttl_ms, wait_ms, None),
            out_json,
        )
    }
}

/// Claims up to `count` ready nodes (1 to 1000) for `assignee` in one write, in pick order,
/// under the rules of one claim at a time (`max_held` counts each claim; a node whose
/// resources overlap a live claim is passed over), and answers them as a JSON list of what
/// `claimdag_claim_next_json` answers for one (the CLI's `claim-next --count N --json`).
/// `wait_ms` 0 does not wait. `CLAIMDAG_NOT_FOUND` when no node is ready (by the end of the
/// wait), and nothing is written.
///
/// # Safety
/// As `claimdag_claim_next_json`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn claimdag_claim_next_many_json(
    s: *mut claimdag_store,
    assignee: *const c_char,
    workspace: *const c_char,
    role: *const c_char,
    ttl_ms: u64,
    wait_ms: u64,
    count: u32,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        next_json(
            "claimdag_claim_next_many_json",
            (s, assignee, workspace, role),
            (ttl_ms, wait_ms, Some(count)),
            out_json,
        )
    }
}

/// The two `claim_next` calls that answer JSON: the grant, or (with a count) the list of
/// up to that many; `CLAIMDAG_NOT_FOUND` when nothing is ready.
///
/// # Safety
/// As `claimdag_claim_next_json`.
unsafe fn next_json(
    name: &'static str,
    (s, assignee, workspace, role): (
        *mut claimdag_store,
        *const c_char,
        *const c_char,
        *const c_char,
    ),
    (ttl_ms, wait_ms, count): (u64, u64, Option<u32>),
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the caller's contract.
        let store = unsafe { store_arg(s) }?;
        let assignee = unsafe { str_arg(assignee, "assignee") }?;
        let ws = unsafe { opt_str_arg(workspace, "workspace") }?;
        let role = unsafe { opt_str_arg(role, "role") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = next_request(assignee, ws, role, ttl_ms, wait_ms, count);
        let got = run(store, &req)?;
        if got.first().is_none() {
            return Err(nothing_ready(ws, role));
        }
        // One grant answers as the grant, a batch as the list (`verbs::Claimed`).
        out.write(into_raw(reply_json(&got)?));
        Ok(())
    })
}

/// `claimdag_renew_ex` that leaves a checkpoint and tells whether the holder was asked to
/// stop. `progress` (NULL: none; at most 64 KiB) replaces the node's checkpoint: the next
/// holder receives it with its claim if this one stops. When `out_cancel_requested` is not
/// NULL, `*out_cancel_requested` is set to true when someone asked the holder to stop
/// (`claimdag_cancel`): stop, and complete the node "cancelled" (or finish it).
/// `claimdag_renew_json` gives who asked and why.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL;
/// `out_cancel_requested` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_renew_progress(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
    generation: u64,
    ttl_ms: u64,
    progress: *const c_char,
    out_cancel_requested: *mut bool,
) -> claimdag_code {
    ffi_boundary("claimdag_renew_progress", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let req = unsafe { renew_request(id, actor, generation, ttl_ms, progress) }?;
        // SAFETY: NULL (not wanted) or writable, as the caller promises.
        let out = unsafe { opt_out_arg(out_cancel_requested) };
        let renewed = run(store, &req)?;
        if let Some(out) = out {
            out.write(renewed.cancel_requested.is_some());
        }
        Ok(())
    })
}

/// `claimdag_renew_progress` that answers as the CLI's `renew --json` prints it:
/// `{"ok": true, "id", "cancel_requested"}`, where `cancel_requested` is null or
/// `{"by": actor or null, "reason": text or null, "at": ms}`. Free the string with
/// `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_renew_json(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
    generation: u64,
    ttl_ms: u64,
    progress: *const c_char,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_renew_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let req = unsafe { renew_request(id, actor, generation, ttl_ms, progress) }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

/// # Safety
/// Strings are NUL-terminated or NULL.
unsafe fn renew_request(
    id: *const c_char,
    actor: *const c_char,
    generation: u64,
    ttl_ms: u64,
    progress: *const c_char,
) -> Result<verbs::Renew, crate::code::Failure> {
    // SAFETY: forwarded from the caller's contract.
    let id = unsafe { str_arg(id, "id") }?;
    let actor = unsafe { str_arg(actor, "actor") }?;
    let progress = unsafe { opt_str_arg(progress, "progress") }?;
    Ok(verbs::Renew {
        node: id.to_string(),
        actor: Some(actor.to_string()),
        gen: given(generation),
        ttl: given(ttl_ms).map(Dur::Ms),
        progress: owned(progress),
        usage: None,
    })
}

/// Cancels `id`, as the CLI's `cancel`, by anyone: a `todo` node becomes `cancelled`; the
/// holder of a claimed node is asked to stop (its generation is unchanged; the holder
/// learns it at its next renewal, `claimdag_renew_progress`). A finished node is
/// `CLAIMDAG_TERMINAL`. `actor` (NULL: nobody named) is who asks, `reason` (NULL: none; at
/// most 4096 bytes) why; `generation` (0: any) refuses with `CLAIMDAG_STALE_GENERATION`
/// unless the node is at that generation. When `out_requested` is not NULL,
/// `*out_requested` is set to true when the holder was asked to stop, false when the node
/// was cancelled.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_requested` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_cancel(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
    reason: *const c_char,
    generation: u64,
    out_requested: *mut bool,
) -> claimdag_code {
    ffi_boundary("claimdag_cancel", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let actor = unsafe { opt_str_arg(actor, "actor") }?;
        let reason = unsafe { opt_str_arg(reason, "reason") }?;
        // SAFETY: NULL (not wanted) or writable, as the caller promises.
        let out = unsafe { opt_out_arg(out_requested) };
        let req = verbs::Cancel {
            node: id.to_string(),
            reason: owned(reason),
            actor: owned(actor),
            gen: given(generation),
        };
        let reply = run(store, &req)?;
        if let Some(out) = out {
            out.write(reply.requested);
        }
        Ok(())
    })
}

/// `claimdag_complete_ex` that stores an output: `output_json` (NULL: none) is the JSON
/// text of any value, at most 64 KiB once compacted; the dependents of a `done` node
/// receive it in their grant's `inputs` (`claimdag_claim_json`). Text that is not JSON is
/// `CLAIMDAG_INVALID_INPUT`.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL.
#[no_mangle]
pub unsafe extern "C" fn claimdag_complete_output(
    s: *mut claimdag_store,
    id: *const c_char,
    status: *const c_char,
    generation: u64,
    actor: *const c_char,
    note: *const c_char,
    output_json: *const c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_complete_output", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let status = unsafe { str_arg(status, "status") }?;
        let actor = unsafe { opt_str_arg(actor, "actor") }?;
        let note = unsafe { opt_str_arg(note, "note") }?;
        let output = unsafe { opt_str_arg(output_json, "output_json") }?;
        let req = verbs::Complete {
            node: id.to_string(),
            status: status.to_string(),
            gen: generation,
            actor: owned(actor),
            note: owned(note),
            output: output.map(verbs::parse_json_arg).transpose()?,
        };
        run(store, &req)?;
        Ok(())
    })
}

/// Finishes several claims in one write, as the CLI's `complete-many`: all of them, or
/// none when one is refused (the code and `claimdag_last_error` are that one's, and nothing
/// changes). `json` is a JSON array (or `{"completions": [...]}`) of objects with the
/// fields of `claimdag_complete_output`: `{"node", "status", "gen"}` and optionally
/// `"actor"`, `"note"`, `"output"` (any JSON value). Writes to `*out_json` the array of
/// `{"id", "status"}` finished, in request order; free it with `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; `json` is NUL-terminated or NULL; `out_json` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_complete_many_json(
    s: *mut claimdag_store,
    json: *const c_char,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_complete_many_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let json = unsafe { str_arg(json, "json") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = verbs::CompleteMany::from_bytes(json.as_bytes())?;
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}
