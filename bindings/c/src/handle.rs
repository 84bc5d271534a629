//! The store handle C holds: the type only, so argument checks and the functions that open
//! and close it can both name it.

use claimdag::Store;

/// A handle on one store directory. Opaque: create it with `claimdag_open`, destroy it with
/// `claimdag_close`. One handle may be used from several threads at once; calls on it are
/// serialised by the store's lock, and other processes may use the same directory.
#[allow(non_camel_case_types)]
pub struct claimdag_store {
    pub(crate) store: Store,
}

// C threads share one handle, so the store behind it must stay Send + Sync.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<claimdag_store>();
};
