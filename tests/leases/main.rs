//! Leases, expiry and the fence: claims against a clock (steady, jumping, going backwards),
//! concurrent workers and interleaved handles on one store.

#[path = "../common/mod.rs"]
mod common;

mod clock_backwards_check;
mod clocks;
mod expired_holder;
mod interleavings;
mod leases;
mod race;
