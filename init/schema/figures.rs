//! A family's own figures beside its rate, as upstream's bench reports
//! them besides hits: a Bloom filter's false positives, what the hash
//! map benchmarks' programs time of their own runs, the local storage
//! benchmarks' important hits and htab-mem's memory. Each is compared and
//! tracked as a metric of its own.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// Lookups a Bloom filter let through that the hash map behind it did
    /// not hold, a share of all lookups (upstream prints them in percent
    /// of the lookups and themselves, counting them twice). A ratio of
    /// counts, the same under either meter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_positives: Option<f64>,
    /// What bpf_ktime_get_ns() measured of the program's runs, per
    /// operation: ns under the time meter; under icount the guest's ns
    /// less the shift's stretch, instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_per_op: Option<f64>,
    /// Each CPU's last runs as the program timed them (at most 32, oldest
    /// first, in `timed_per_op`'s unit), what upstream's lines of the
    /// hash map benchmarks are computed from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timed_runs: Vec<TimedRuns>,
    /// The local storage benchmarks' gets of their first map, the mean
    /// of the measured samples' rates in the result's rate unit (M/s;
    /// M/Ginsn under icount).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub important_hits: Option<f64>,
    /// htab-mem's memory cgroup: the mean of what the measured samples
    /// found charged, and the most charged at once over the whole run
    /// (memory.peak), MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_mib: Option<f64>,
}

/// One CPU's timed runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TimedRuns {
    pub cpu: usize,
    pub ns: Vec<u64>,
}

/// One of [`Figures`], a metric of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureKind {
    FalsePositives,
    TimedPerOp,
    ImportantHits,
    Memory,
    PeakMemory,
}

impl Figures {
    pub fn of(&self, kind: FigureKind) -> Option<f64> {
        match kind {
            FigureKind::FalsePositives => self.false_positives,
            FigureKind::TimedPerOp => self.timed_per_op,
            FigureKind::ImportantHits => self.important_hits,
            FigureKind::Memory => self.memory_mib,
            FigureKind::PeakMemory => self.peak_memory_mib,
        }
    }

    /// Important hits at `mean` M a second (or a Ginsn).
    pub fn important(mean: f64) -> Figures {
        Figures {
            important_hits: Some(mean),
            ..Figures::default()
        }
    }

    /// A memory cgroup's figures: the mean of `samples` bytes, and the
    /// `peak` bytes, in MiB.
    pub fn memory(samples: &[u64], peak: Option<u64>) -> Figures {
        const MIB: f64 = 1_048_576.0;
        let mean = samples.iter().sum::<u64>() as f64 / samples.len().max(1) as f64;
        Figures {
            memory_mib: (!samples.is_empty()).then_some(mean / MIB),
            peak_memory_mib: peak.map(|p| p as f64 / MIB),
            ..Figures::default()
        }
    }

    /// A filter's figures: of `events` lookups, `false_hits` false
    /// positives; none where nothing was counted.
    pub fn filter(events: u64, false_hits: u64) -> Option<Figures> {
        (events > 0).then(|| Figures {
            false_positives: Some(false_hits as f64 / events as f64),
            ..Figures::default()
        })
    }

    /// Timed figures: `runs`, each of `ops` operations; none where no run
    /// was timed.
    pub fn timed(runs: Vec<TimedRuns>, ops: u64) -> Option<Figures> {
        let all: Vec<u64> = runs.iter().flat_map(|r| r.ns.iter().copied()).collect();
        (!all.is_empty() && ops > 0).then(|| Figures {
            timed_per_op: Some(all.iter().sum::<u64>() as f64 / all.len() as f64 / ops as f64),
            timed_runs: runs,
            ..Figures::default()
        })
    }
}
