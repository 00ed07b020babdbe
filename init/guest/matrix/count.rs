//! The harness's own ceiling (upstream's bench_count.c): producers that do
//! nothing but count, on one counter they all share (its line moves
//! between CPUs at every event) or each on its own line.

use crate::sampler::{self, counters::Slot, Body};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// count-global's counter, alone on its line as upstream's.
static SHARED: Slot = Slot(AtomicU64::new(0));

/// Events between two updates of a count-global producer's own count,
/// which the sampler reads.
pub const BATCH: u64 = 1024;

/// The producer body: an atomic add a event to the shared counter, or to
/// the producer's own count (its slot of the sampler, a line of its own,
/// as upstream's per-producer counters), with `spins` of injected work
/// before each.
pub fn producer(shared: bool, spins: u32) -> Body {
    match shared {
        true => Arc::new(move |count, stop| {
            sampler::produce(count, stop, BATCH, 1, || {
                sampler::spin(spins);
                SHARED.0.fetch_add(1, Ordering::Relaxed);
            })
        }),
        false => Arc::new(move |count, stop| {
            sampler::produce(count, stop, 1, 1, || sampler::spin(spins))
        }),
    }
}
