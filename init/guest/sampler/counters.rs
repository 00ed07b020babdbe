//! Event counters that never share a cache line between writers.

use std::sync::atomic::{AtomicU64, Ordering};

/// One producer's count, alone on a 128-byte line (two 64-byte lines, as
/// adjacent-line prefetch pairs them).
#[repr(align(128))]
#[derive(Default)]
pub struct Slot(pub AtomicU64);

/// Per-producer user-space counts.
pub struct UserSlots(Box<[Slot]>);

impl UserSlots {
    pub fn new(n: usize) -> Self {
        UserSlots((0..n).map(|_| Slot::default()).collect())
    }

    pub fn slot(&self, i: usize) -> &AtomicU64 {
        &self.0[i].0
    }

    /// Reads and resets every slot.
    pub fn take(&self) -> u64 {
        self.take_each().iter().sum()
    }

    /// Reads and resets every slot, each producer's count apart.
    pub fn take_each(&self) -> Vec<u64> {
        self.0
            .iter()
            .map(|s| s.0.swap(0, Ordering::Relaxed))
            .collect()
    }
}

/// One per-CPU array of counters in a loaded object's mmap'ed .bss.
#[derive(Clone, Copy)]
struct Array {
    first: *mut u64,
    count: usize,
    stride: usize,
}

impl Array {
    /// # Safety
    /// As [`BpfSlots::new`]'s.
    unsafe fn new<T>(slots: &mut [T]) -> Self {
        Array {
            first: slots.as_mut_ptr().cast(),
            count: slots.len(),
            stride: std::mem::size_of::<T>(),
        }
    }

    /// Reads and resets every CPU's counter.
    fn take(&self) -> u64 {
        (0..self.count)
            .map(|i| {
                // SAFETY: in bounds and aligned per `new`'s contract; BPF
                // updates the same words with atomic adds.
                let word = unsafe { AtomicU64::from_ptr(self.first.byte_add(i * self.stride)) };
                word.swap(0, Ordering::Relaxed)
            })
            .sum()
    }
}

/// The BPF side's per-CPU counters: its hits, and where a family counts
/// them apart, the operations that found nothing and the filter's false
/// positives among those (bpf/bloom.bpf.c), or the important hits among
/// the hits (bpf/local_storage.bpf.c), or the ns the program timed of
/// its own work (bpf/lpm_trie.bpf.c).
#[derive(Clone, Copy)]
pub struct BpfSlots {
    hits: Array,
    outcomes: Option<(Array, Array)>,
    important: Option<Array>,
    timed: Option<Array>,
}

/// What BPF counted since the last read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BpfCounts {
    /// Every operation: the hits and the drops.
    pub events: u64,
    /// Of them, those that found nothing (upstream's drops).
    pub drops: u64,
    /// Of the drops, lookups a Bloom filter let through.
    pub false_hits: u64,
    /// Of the hits, a local storage benchmark's gets of its first map.
    pub important: u64,
    /// What the program timed of its work, ns of its clock.
    pub timed_ns: u64,
}

// SAFETY: the slots are only touched through atomic operations, and the
// owner keeps the mapping alive while the sampler measures.
unsafe impl Send for BpfSlots {}
unsafe impl Sync for BpfSlots {}

impl BpfSlots {
    /// # Safety
    /// Each `T` must start with the u64 counter (`struct counter` of
    /// bpf/common.h) and `slots` must outlive every use of the result.
    pub unsafe fn new<T>(slots: &mut [T]) -> Self {
        BpfSlots {
            hits: Array::new(slots),
            outcomes: None,
            important: None,
            timed: None,
        }
    }

    /// With the counters of drops and false hits beside the hits.
    ///
    /// # Safety
    /// As [`BpfSlots::new`]'s, for both.
    pub unsafe fn with_outcomes<T>(self, drops: &mut [T], false_hits: &mut [T]) -> Self {
        BpfSlots {
            outcomes: Some((Array::new(drops), Array::new(false_hits))),
            ..self
        }
    }

    /// With the counter of important hits beside the hits.
    ///
    /// # Safety
    /// As [`BpfSlots::new`]'s.
    pub unsafe fn with_important<T>(self, important: &mut [T]) -> Self {
        BpfSlots {
            important: Some(Array::new(important)),
            ..self
        }
    }

    /// With the counter of the program's own timing beside the hits.
    ///
    /// # Safety
    /// As [`BpfSlots::new`]'s.
    pub unsafe fn with_timing<T>(self, timed: &mut [T]) -> Self {
        BpfSlots {
            timed: Some(Array::new(timed)),
            ..self
        }
    }

    /// Reads and resets every CPU's counters.
    pub fn take(&self) -> BpfCounts {
        let (drops, false_hits) = self.outcomes.map_or((0, 0), |(d, f)| (d.take(), f.take()));
        BpfCounts {
            events: self.hits.take() + drops,
            drops,
            false_hits,
            important: self.important.map_or(0, |i| i.take()),
            timed_ns: self.timed.map_or(0, |t| t.take()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(128))]
    struct Counter {
        value: u64,
    }

    #[test]
    fn bpf_slots_sum_and_reset() {
        let mut arr: Vec<Counter> = (0..4).map(|i| Counter { value: i * 10 }).collect();
        let slots = unsafe { BpfSlots::new(&mut arr) };
        assert_eq!(slots.take().events, 60);
        assert_eq!(slots.take(), BpfCounts::default());
    }

    #[test]
    fn drops_are_events_and_false_hits_are_drops() {
        let counters = |v: u64| -> Vec<Counter> { (0..2).map(|_| Counter { value: v }).collect() };
        let (mut hits, mut drops, mut fp) = (counters(5), counters(3), counters(1));
        let slots = unsafe { BpfSlots::new(&mut hits).with_outcomes(&mut drops, &mut fp) };
        let counts = BpfCounts {
            events: 16,
            drops: 6,
            false_hits: 2,
            ..BpfCounts::default()
        };
        assert_eq!(slots.take(), counts);
        assert_eq!(slots.take(), BpfCounts::default());
    }

    #[test]
    fn important_hits_are_among_the_hits() {
        let counters = |v: u64| -> Vec<Counter> { (0..2).map(|_| Counter { value: v }).collect() };
        let (mut hits, mut important) = (counters(7), counters(2));
        let slots = unsafe { BpfSlots::new(&mut hits).with_important(&mut important) };
        let counts = slots.take();
        assert_eq!((counts.events, counts.important), (14, 4));
        assert_eq!(slots.take(), BpfCounts::default());
    }

    #[test]
    fn user_slots_are_line_sized() {
        assert_eq!(std::mem::size_of::<Slot>(), 128);
        let s = UserSlots::new(3);
        s.slot(2).fetch_add(5, Ordering::Relaxed);
        assert_eq!(s.take(), 5);
        assert_eq!(s.take(), 0);
    }
}
