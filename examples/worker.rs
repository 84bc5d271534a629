//! A worker loop in Rust, to copy into a harness:
//!
//!     cargo run --example worker -- DIR NAME [SEED]
//!
//! DIR is the store directory, NAME this worker's name (its actor is `name:NAME`), and
//! SEED, when given, first upserts that many demo tasks so the example has something to do.
//! Run two at once on one DIR: every task is finished once, by one of them.
//!
//! Each node is held as a `Lease`: it renews itself while the work runs and finishes with
//! the generation it was granted. When the store hands the claim to someone else meanwhile
//! (this worker stalled past its lease), the lease is lost and the result is dropped, never
//! written over somebody else's work.

use claimdag::{Actor, Status, Store, Upsert};
use std::time::Duration;

const LEASE_MS: u64 = 30_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(name)) = (args.next(), args.next()) else {
        eprintln!("usage: worker DIR NAME [SEED]");
        std::process::exit(2);
    };
    let store = Store::open(Some(std::path::Path::new(&dir)))?;
    let me = Actor::from_name(&name)?;
    if let Some(n) = args.next() {
        for i in 0..n.parse::<usize>()? {
            // Upsert is idempotent: every worker may seed the same tasks.
            store.upsert(Upsert {
                summary: format!("demo task {i}"),
                ..Upsert::default()
            })?;
        }
    }
    let (mut finished, mut lost) = (0, 0);
    while let Some(lease) = store.lease_next("", me, None, LEASE_MS)? {
        let node = store.get(lease.id())?;
        std::thread::sleep(Duration::from_millis(5)); // the real work goes here
        if lease.is_lost() {
            eprintln!(
                "{name}: lost the lease on {}: dropping the result",
                lease.id().short()
            );
            lost += 1;
            continue; // dropping the lease releases nothing: it is someone else's now
        }
        let (id, gen) = (lease.id(), lease.generation());
        match lease.complete(Status::Done, Some(&format!("done by {name}"))) {
            Ok(()) => {
                println!("{}  done  gen={gen}  {}", id.short(), node.node.summary);
                finished += 1;
            }
            Err(e) if e.code() == claimdag::Code::StaleGeneration => lost += 1,
            Err(e) => return Err(e.into()),
        }
    }
    eprintln!("{name}: {finished} finished, {lost} lost");
    Ok(())
}
