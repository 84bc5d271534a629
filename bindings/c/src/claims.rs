//! The verbs of claims: claim, claim-next, renew, release, reclaim, complete, reopen. Each
//! one is a single committed write: when it returns `CLAIMDAG_OK` the change is durable, and
//! a refused call changed nothing. Generations are the fencing tokens: keep the one a claim
//! returns and pass it to renew, release and complete.

use crate::code::claimdag_code;
use crate::ffi::{
    given, opt_str_arg, out_arg, out_id_arg, owned, reply_json, run, store_arg, str_arg,
};
use crate::handle::claimdag_store;
use crate::panic::ffi_boundary;
use crate::store::{into_raw, nothing_ready};
use claimdag::verbs::{self, Dur};
use std::ffi::c_char;

/// `lease_ms` value of `claimdag_reclaim` and `claimdag_reclaim_json` meaning "no lease":
/// hand back expired claims only.
pub const CLAIMDAG_NO_LEASE: u64 = 0xFFFF_FFFF_FFFF_FFFF;

/// Claims the ready node `id` for `assignee` (32 hex characters) with the store's default
/// lease, and writes the new generation, the fencing token, to `*out_generation`. Keep it:
/// renew, release and complete need it.
///
/// A claimed node (by anyone, `assignee` included) is `CLAIMDAG_ALREADY_CLAIMED`.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_generation` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_claim(
    s: *mut claimdag_store,
    id: *const c_char,
    assignee: *const c_char,
    out_generation: *mut u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe { claim(s, id, assignee, 0, 0, out_generation, "claimdag_claim") }
}

/// `claimdag_claim` with options: `expected_generation` (0: any) refuses with
/// `CLAIMDAG_STALE_GENERATION` unless the node is at that generation; `ttl_ms` (0: the
/// store's `default_ttl`) is the lease length in milliseconds.
///
/// # Safety
/// As `claimdag_claim`.
#[no_mangle]
pub unsafe extern "C" fn claimdag_claim_ex(
    s: *mut claimdag_store,
    id: *const c_char,
    assignee: *const c_char,
    expected_generation: u64,
    ttl_ms: u64,
    out_generation: *mut u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        claim(
            s,
            id,
            assignee,
            expected_generation,
            ttl_ms,
            out_generation,
            "claimdag_claim_ex",
        )
    }
}

unsafe fn claim(
    s: *mut claimdag_store,
    id: *const c_char,
    assignee: *const c_char,
    gen: u64,
    ttl_ms: u64,
    out_generation: *mut u64,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the exported function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let assignee = unsafe { str_arg(assignee, "assignee") }?;
        let out = unsafe { out_arg(out_generation, "out_generation") }?;
        let req = claim_request(id, assignee, gen, ttl_ms);
        out.write(run(store, &req)?.generation);
        Ok(())
    })
}

/// Picks the ready node to work on next (longest critical path first, then priority, then
/// age) and claims it for `assignee` in one locked step: two workers calling this at once
/// never get the same node. Writes its id to `out_id` and its generation to
/// `*out_generation`. Uses the default workspace, nodes of no role, and the default lease.
///
/// `CLAIMDAG_NOT_FOUND` when no node is ready (nothing is written).
///
/// # Safety
/// `s` is a live handle or NULL; `assignee` is NUL-terminated or NULL; `out_id` is NULL or
/// has room for 33 bytes; `out_generation` is NULL or writable.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_claim_next(
    s: *mut claimdag_store,
    assignee: *const c_char,
    out_id: *mut c_char,
    out_generation: *mut u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        claim_next(
            s,
            assignee,
            std::ptr::null(),
            std::ptr::null(),
            0,
            0,
            out_id,
            out_generation,
            "claimdag_claim_next",
        )
    }
}

/// `claimdag_claim_next` with options: `workspace` (NULL: `$CLAIMDAG_WORKSPACE`, else
/// ""), `role` (NULL or "": only nodes of no role; otherwise nodes of that role or of no
/// role, the exact match first on ties) and `ttl_ms` (0: the store's `default_ttl`).
///
/// # Safety
/// As `claimdag_claim_next`; `workspace` and `role` are NUL-terminated or NULL.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_claim_next_ex(
    s: *mut claimdag_store,
    assignee: *const c_char,
    workspace: *const c_char,
    role: *const c_char,
    ttl_ms: u64,
    out_id: *mut c_char,
    out_generation: *mut u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        claim_next(
            s,
            assignee,
            workspace,
            role,
            ttl_ms,
            0,
            out_id,
            out_generation,
            "claimdag_claim_next_ex",
        )
    }
}

/// `claimdag_claim_next_ex` that waits: when no node is ready, blocks the calling thread
/// until one becomes ready (a write of any process or host: a prerequisite completed, a
/// node added or handed back; a claim running out; a `not_before` passing) and claims it,
/// or until `wait_ms` milliseconds have passed. `wait_ms` is the bound: the call returns
/// after at most about that long (plus the time of the final claim attempt), with
/// `CLAIMDAG_NOT_FOUND` as `claimdag_claim_next` reports "nothing ready" when nothing
/// became ready by then. `wait_ms` 0 does not wait (`claimdag_claim_next_ex`). The waiting
/// thread uses no CPU while nothing changes; other threads may use the handle meanwhile.
/// The call cannot be interrupted: a host that must stay responsive passes a bound it can
/// afford and calls again.
///
/// # Safety
/// As `claimdag_claim_next_ex`.
/// cbindgen:ptrs-as-arrays=[[out_id;33]]
#[no_mangle]
pub unsafe extern "C" fn claimdag_claim_next_wait(
    s: *mut claimdag_store,
    assignee: *const c_char,
    workspace: *const c_char,
    role: *const c_char,
    ttl_ms: u64,
    wait_ms: u64,
    out_id: *mut c_char,
    out_generation: *mut u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        claim_next(
            s,
            assignee,
            workspace,
            role,
            ttl_ms,
            wait_ms,
            out_id,
            out_generation,
            "claimdag_claim_next_wait",
        )
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn claim_next(
    s: *mut claimdag_store,
    assignee: *const c_char,
    ws: *const c_char,
    role: *const c_char,
    ttl_ms: u64,
    wait_ms: u64,
    out_id: *mut c_char,
    out_generation: *mut u64,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the exported function's contract.
        let store = unsafe { store_arg(s) }?;
        let assignee = unsafe { str_arg(assignee, "assignee") }?;
        let ws = unsafe { opt_str_arg(ws, "workspace") }?;
        let role = unsafe { opt_str_arg(role, "role") }?;
        let out_id = unsafe { out_id_arg(out_id, "out_id") }?;
        let out_gen = unsafe { out_arg(out_generation, "out_generation") }?;
        let req = next_request(assignee, ws, role, ttl_ms, wait_ms, None);
        match run(store, &req)?.into_first() {
            Some(c) => {
                out_id.write(c.id);
                out_gen.write(c.generation);
                Ok(())
            }
            None => Err(nothing_ready(ws, role)),
        }
    })
}

/// Keeps `actor`'s live claim on `id` alive: its lease restarts now. The generation is
/// unchanged. A claim that already expired is refused (`CLAIMDAG_STALE_GENERATION` once
/// it was handed back): a worker must stop when renew fails.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL.
#[no_mangle]
pub unsafe extern "C" fn claimdag_renew(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe { renew(s, id, actor, 0, 0, "claimdag_renew") }
}

/// `claimdag_renew` with options: `generation` (0: any) refuses unless the claim is at that
/// generation (pass the one the claim granted); `ttl_ms` (0: keep the claim's lease
/// length) replaces the lease length.
///
/// # Safety
/// As `claimdag_renew`.
#[no_mangle]
pub unsafe extern "C" fn claimdag_renew_ex(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
    generation: u64,
    ttl_ms: u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe { renew(s, id, actor, generation, ttl_ms, "claimdag_renew_ex") }
}

unsafe fn renew(
    s: *mut claimdag_store,
    id: *const c_char,
    who: *const c_char,
    gen: u64,
    ttl_ms: u64,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the exported function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let who = unsafe { str_arg(who, "actor") }?;
        let req = verbs::Renew {
            node: id.to_string(),
            actor: Some(who.to_string()),
            gen: given(gen),
            ttl: given(ttl_ms).map(Dur::Ms),
            progress: None,
            usage: None,
        };
        run(store, &req)?;
        Ok(())
    })
}

/// Hands `actor`'s live claim on `id` at `generation` back: the node is `todo` again and
/// its generation moves on; the new generation is written to `*out_generation`.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL; `out_generation` is
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_release(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
    generation: u64,
    out_generation: *mut u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        release_as(
            s,
            id,
            actor,
            generation,
            None,
            out_generation,
            "claimdag_release",
        )
    }
}

/// `claimdag_release` with a retry time: the node is not granted again for `retry_in_ms`
/// milliseconds (its `not_before` is now + `retry_in_ms`, and until then it displays
/// `scheduled`), in place of the store's `retry_delay` backoff. `retry_in_ms` 0 is ready
/// again at once.
///
/// # Safety
/// As `claimdag_release`.
#[no_mangle]
pub unsafe extern "C" fn claimdag_release_retry_in(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
    generation: u64,
    retry_in_ms: u64,
    out_generation: *mut u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        release_as(
            s,
            id,
            actor,
            generation,
            Some(Dur::Ms(retry_in_ms)),
            out_generation,
            "claimdag_release_retry_in",
        )
    }
}

/// Hands back every expired claim in the default workspace, and with a lease every claim
/// not renewed for `lease_ms` milliseconds or longer (0 hands back every claim), and
/// writes how many were handed back to `*out_count`. `CLAIMDAG_NO_LEASE` hands back
/// expired claims only.
///
/// # Safety
/// `s` is a live handle or NULL; `out_count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_reclaim(
    s: *mut claimdag_store,
    lease_ms: u64,
    out_count: *mut usize,
) -> claimdag_code {
    ffi_boundary("claimdag_reclaim", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let out = unsafe { out_arg(out_count, "out_count") }?;
        let req = verbs::Reclaim {
            lease: lease(lease_ms),
            workspace: None,
        };
        out.write(run(store, &req)?.0.len());
        Ok(())
    })
}

/// `claimdag_reclaim` in workspace `workspace` (NULL: `$CLAIMDAG_WORKSPACE`, else ""),
/// writing the nodes handed back to `*out_json` as a JSON array of
/// `{"id": "<32 hex>", "generation": <new generation>}`. Free it with
/// `claimdag_string_free`.
///
/// # Safety
/// `s` is a live handle or NULL; `workspace` is NUL-terminated or NULL; `out_json` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_reclaim_json(
    s: *mut claimdag_store,
    workspace: *const c_char,
    lease_ms: u64,
    out_json: *mut *mut c_char,
) -> claimdag_code {
    ffi_boundary("claimdag_reclaim_json", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let ws = unsafe { opt_str_arg(workspace, "workspace") }?;
        let out = unsafe { out_arg(out_json, "out_json") }?;
        let req = verbs::Reclaim {
            lease: lease(lease_ms),
            workspace: owned(ws),
        };
        out.write(into_raw(reply_json(&run(store, &req)?)?));
        Ok(())
    })
}

fn lease(lease_ms: u64) -> Option<Dur> {
    (lease_ms != CLAIMDAG_NO_LEASE).then_some(Dur::Ms(lease_ms))
}

/// Finishes the claimed node `id` with `status` ("done", "failed" or "cancelled") at the
/// `generation` the claim granted. A claim that was handed back meanwhile is refused with
/// `CLAIMDAG_STALE_GENERATION`: the work now belongs to someone else. A `todo` node may be
/// cancelled at its current generation without a claim.
///
/// # Safety
/// `s` is a live handle or NULL; strings are NUL-terminated or NULL.
#[no_mangle]
pub unsafe extern "C" fn claimdag_complete(
    s: *mut claimdag_store,
    id: *const c_char,
    status: *const c_char,
    generation: u64,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        complete(
            s,
            id,
            status,
            generation,
            std::ptr::null(),
            std::ptr::null(),
            "claimdag_complete",
        )
    }
}

/// `claimdag_complete` with options: `actor` (NULL: any) refuses with
/// `CLAIMDAG_NOT_HOLDER` unless it holds the claim; `note` (NULL: none) is stored on the
/// node.
///
/// # Safety
/// As `claimdag_complete`.
#[no_mangle]
pub unsafe extern "C" fn claimdag_complete_ex(
    s: *mut claimdag_store,
    id: *const c_char,
    status: *const c_char,
    generation: u64,
    actor: *const c_char,
    note: *const c_char,
) -> claimdag_code {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        complete(
            s,
            id,
            status,
            generation,
            actor,
            note,
            "claimdag_complete_ex",
        )
    }
}

unsafe fn complete(
    s: *mut claimdag_store,
    id: *const c_char,
    status: *const c_char,
    gen: u64,
    who: *const c_char,
    note: *const c_char,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the exported function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let status = unsafe { str_arg(status, "status") }?;
        let who = unsafe { opt_str_arg(who, "actor") }?;
        let note = unsafe { opt_str_arg(note, "note") }?;
        let req = verbs::Complete {
            node: id.to_string(),
            status: status.to_string(),
            gen,
            actor: owned(who),
            note: owned(note),
            output: None,
        };
        run(store, &req)?;
        Ok(())
    })
}

/// Puts the finished node `id` back to `todo`; its generation moves on and is written to
/// `*out_generation`. `generation` (0: any) refuses unless the node is at that generation.
///
/// # Safety
/// `s` is a live handle or NULL; `id` is NUL-terminated or NULL; `out_generation` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn claimdag_reopen(
    s: *mut claimdag_store,
    id: *const c_char,
    generation: u64,
    out_generation: *mut u64,
) -> claimdag_code {
    ffi_boundary("claimdag_reopen", || {
        // SAFETY: forwarded from this function's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let out = unsafe { out_arg(out_generation, "out_generation") }?;
        let req = verbs::Reopen {
            node: id.to_string(),
            gen: given(generation),
        };
        out.write(run(store, &req)?.generation);
        Ok(())
    })
}

/// `claimdag_release` and `claimdag_release_retry_in`.
///
/// # Safety
/// As `claimdag_release`.
unsafe fn release_as(
    s: *mut claimdag_store,
    id: *const c_char,
    actor: *const c_char,
    generation: u64,
    retry_in: Option<Dur>,
    out_generation: *mut u64,
    name: &'static str,
) -> claimdag_code {
    ffi_boundary(name, || {
        // SAFETY: forwarded from the caller's contract.
        let store = unsafe { store_arg(s) }?;
        let id = unsafe { str_arg(id, "id") }?;
        let who = unsafe { str_arg(actor, "actor") }?;
        let out = unsafe { out_arg(out_generation, "out_generation") }?;
        let req = verbs::Release {
            node: id.to_string(),
            actor: Some(who.to_string()),
            gen: generation,
            retry_in,
        };
        out.write(run(store, &req)?.generation);
        Ok(())
    })
}

/// The `claim_next` request of the C functions that claim the next node: `ttl_ms` and
/// `wait_ms` 0 are "not given"; `count` `None` claims one.
pub(crate) fn next_request(
    assignee: &str,
    ws: Option<&str>,
    role: Option<&str>,
    ttl_ms: u64,
    wait_ms: u64,
    count: Option<u32>,
) -> verbs::ClaimNext {
    verbs::ClaimNext {
        assignee: Some(assignee.to_string()),
        role: owned(role),
        ttl: given(ttl_ms).map(Dur::Ms),
        resume: false,
        wait: given(wait_ms).map(Dur::Ms),
        count,
        workspace: owned(ws),
    }
}

/// The `claim` request of the C functions that claim a named node: `gen` and `ttl_ms` 0
/// are "not given".
pub(crate) fn claim_request(id: &str, assignee: &str, gen: u64, ttl_ms: u64) -> verbs::Claim {
    verbs::Claim {
        node: id.to_string(),
        assignee: Some(assignee.to_string()),
        gen: given(gen),
        ttl: given(ttl_ms).map(Dur::Ms),
    }
}
