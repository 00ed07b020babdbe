//! What several producers under icount add to a profile: the coherence
//! misses the directory model counted per event (init/boot/profiling/coherence.rs),
//! where the shared lines are, and a modelled throughput: a model, never
//! a time.

use serde::{Deserialize, Serialize};

/// The model's name and version, recorded with every figure of it: two
/// versions' figures do not compare.
pub const MODEL: &str = "coherence-directory/2";

/// Coherence misses per event, and of them those that found the line
/// modified in another vCPU's cache (HITM).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CoherenceMisses {
    pub misses: f64,
    pub hitm: f64,
}

/// The cycles the throughput model charges: an instruction one cycle, a
/// coherence miss `miss_cycles`, one that finds the line modified
/// elsewhere `hitm_cycles`; a line is busy that long per transfer, so
/// transfers of one line queue.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Weights {
    pub miss_cycles: f64,
    pub hitm_cycles: f64,
}

impl Weights {
    /// A clean transfer from another core about 60 cycles, from a core
    /// that holds it modified about 100: the order of what perf c2c and
    /// the vendors' latency tables show for a two-socket-free server
    /// part; the model's shape, not its weights, is what it shows.
    pub const MODEL: Weights = Weights {
        miss_cycles: 60.0,
        hitm_cycles: 100.0,
    };

    /// The cycles `m` misses cost (or keep a line busy).
    pub fn cycles(&self, m: &CoherenceMisses) -> f64 {
        (m.misses - m.hitm) * self.miss_cycles + m.hitm * self.hitm_cycles
    }
}

/// A cache line that moved between vCPUs in the window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SharedCacheLine {
    /// `symbol+0xOFF` of a static kernel line, else what kind of memory.
    pub name: String,
    /// `static` (a kernel data symbol), `dynamic` (slab, page or per-CPU
    /// memory: no symbol) or `user`.
    pub kind: String,
    #[serde(flatten)]
    pub misses: CoherenceMisses,
    /// The functions whose loads missed on it, misses per event.
    pub readers: Vec<(String, f64)>,
    /// The functions whose stores missed on it.
    pub writers: Vec<(String, f64)>,
}

/// Several producers' contention, per event of the benchmark.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Contention {
    /// [`MODEL`] when counted.
    pub model: String,
    pub weights: Weights,
    pub producers: usize,
    pub kernel: CoherenceMisses,
    pub user: CoherenceMisses,
    /// Instructions per event on the producers' vCPUs, spin-waiting left
    /// out.
    pub insn: f64,
    /// Instructions per event spent spinning for a lock (the slow paths,
    /// named functions): a vCPU whose turn ended in a critical section
    /// makes the others spin, which no hardware would.
    pub spin: f64,
    /// Modelled cycles per event of one producer.
    pub cycles: f64,
    /// Modelled throughput, all producers, in M events per 10^9 cycles.
    pub rate: f64,
    pub per_producer: f64,
    /// The line whose transfers bound `rate`, if one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_by: Option<String>,
    /// The lines with the most coherence misses, most first.
    pub lines: Vec<SharedCacheLine>,
}

impl Contention {
    /// All coherence misses per event, kernel and user.
    pub fn misses(&self) -> CoherenceMisses {
        CoherenceMisses {
            misses: self.kernel.misses + self.user.misses,
            hitm: self.kernel.hitm + self.user.hitm,
        }
    }
}

/// A figure of [`Contention`], a metric of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentionKind {
    /// Coherence misses per event, kernel and user.
    Misses,
    Hitm,
    /// The modelled throughput per producer.
    Rate,
}

impl ContentionKind {
    pub fn of(self, c: &Contention) -> f64 {
        match self {
            ContentionKind::Misses => c.misses().misses,
            ContentionKind::Hitm => c.misses().hitm,
            ContentionKind::Rate => c.per_producer,
        }
    }
}
