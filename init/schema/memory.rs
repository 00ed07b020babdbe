//! What `vm --cache` adds to a profile: the memory accesses of each event
//! and their misses in simulated caches (init/model/caches.rs), and an
//! estimate of cycles from them, a model, never a time.

use serde::{Deserialize, Serialize};

/// Accesses and misses per event, of the kernel's code or of user space.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Accesses {
    pub loads: f64,
    pub stores: f64,
    /// Misses of the L1 instruction cache: lines of code fetched.
    pub l1i_misses: f64,
    pub l1d_misses: f64,
    /// Misses of the last-level cache, by code or data.
    pub ll_misses: f64,
}

/// An event's accesses, kernel and user space apart, and its estimated
/// cycles.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Memory {
    /// Of the kernel's code (BPF programs and trampolines included).
    pub kernel: Accesses,
    /// Of user space: the benchmark's own loop, build-dependent.
    pub user: Accesses,
    /// Every instruction of the event plus its weighted misses and traps
    /// (`vm.cache` names the weights).
    pub cycles: f64,
}

/// A figure of [`Memory`], a metric of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    Loads,
    Stores,
    L1iMisses,
    L1dMisses,
    LlMisses,
    Cycles,
}

impl Accesses {
    /// The sum of two.
    pub fn plus(&self, o: &Accesses) -> Accesses {
        Accesses {
            loads: self.loads + o.loads,
            stores: self.stores + o.stores,
            l1i_misses: self.l1i_misses + o.l1i_misses,
            l1d_misses: self.l1d_misses + o.l1d_misses,
            ll_misses: self.ll_misses + o.ll_misses,
        }
    }

    /// Scaled by `k` (counts to counts per event).
    pub fn times(&self, k: f64) -> Accesses {
        Accesses {
            loads: self.loads * k,
            stores: self.stores * k,
            l1i_misses: self.l1i_misses * k,
            l1d_misses: self.l1d_misses * k,
            ll_misses: self.ll_misses * k,
        }
    }
}

impl Memory {
    /// The kernel's figure of `kind`, or the event's estimated cycles.
    pub fn of(&self, kind: MemKind) -> f64 {
        let k = &self.kernel;
        match kind {
            MemKind::Loads => k.loads,
            MemKind::Stores => k.stores,
            MemKind::L1iMisses => k.l1i_misses,
            MemKind::L1dMisses => k.l1d_misses,
            MemKind::LlMisses => k.ll_misses,
            MemKind::Cycles => self.cycles,
        }
    }
}

/// The weights of the cycle estimate: cachegrind's documented model
/// (an L1 miss 10 cycles, a last-level miss 100) plus a trap's round
/// trip beyond its instructions (docs/meter.md says why 500).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CycleWeights {
    pub l1_miss: f64,
    pub ll_miss: f64,
    pub trap: f64,
}

impl CycleWeights {
    pub const MODEL: CycleWeights = CycleWeights {
        l1_miss: 10.0,
        ll_miss: 100.0,
        trap: 500.0,
    };

    /// `insns` instructions an event with `a` accesses and `traps` traps.
    pub fn cycles(&self, insns: f64, a: &Accesses, traps: f64) -> f64 {
        insns
            + self.l1_miss * (a.l1i_misses + a.l1d_misses)
            + self.ll_miss * a.ll_misses
            + self.trap * traps
    }
}

impl std::fmt::Display for CycleWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cycles = insns + {} an L1 miss + {} an LL miss + {} a trap",
            self.l1_miss, self.ll_miss, self.trap
        )
    }
}
