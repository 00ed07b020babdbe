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

/// Adds between two checks of the stop flag, unrolled: an event is its
/// atomic add and a sixteenth of the loop's count, compare and jump.
/// Upstream's loop, which never stops, is the add and a jump, 2
/// instructions; one check an add made it 4 (count-global 4.0 instructions
/// an event against upstream's 2.0, count-local 4.0 against 3.0, measured
/// on 6.1 by scripts/bench/upstream-bench.sh).
const UNROLL: u64 = 16;

/// The producer body: an atomic add a event to the shared counter, or to
/// the producer's own count (its slot of the sampler, a line of its own,
/// as upstream's per-producer counters), with `spins` of injected work
/// before each.
pub fn producer(shared: bool, spins: u32) -> Body {
    match (shared, spins) {
        (true, 0) => Arc::new(|count, stop| {
            sampler::produce(count, stop, BATCH / UNROLL, UNROLL, || adds(&SHARED.0))
        }),
        (false, 0) => Arc::new(|count, stop| {
            while !stop.load(Ordering::Relaxed) {
                adds(count);
            }
        }),
        (true, _) => Arc::new(move |count, stop| {
            sampler::produce(count, stop, BATCH, 1, || {
                sampler::spin(spins);
                SHARED.0.fetch_add(1, Ordering::Relaxed);
            })
        }),
        (false, _) => Arc::new(move |count, stop| {
            sampler::produce(count, stop, 1, 1, || sampler::spin(spins))
        }),
    }
}

/// [`UNROLL`] adds of one to `counter`, each an event.
#[inline(always)]
fn adds(counter: &AtomicU64) {
    for _ in 0..UNROLL {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
