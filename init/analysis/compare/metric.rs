//! What is compared of a benchmark: its rate, its per-event overhead, or
//! the kernel's instructions per event, in all or over the baseline, its
//! entries, or what the simulated caches of `--cache` counted.

use serde::Serialize;
use trig_schema::error::{self, Error};
use trig_schema::{
    BenchResult, Better, ContentionKind, EntryKind, FigureKind, MemKind, Meter, Status,
};

/// What is compared: the raw rate or the per-event overhead over the
/// benchmark's baseline in the same boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Rate,
    Overhead,
    /// The kernel's instructions per event (`--profile`, icount): the
    /// producers' own code is not in it, so it does not depend on
    /// trig-init's build.
    Kernel,
    /// The kernel's instructions per event less its baseline's in the
    /// same boot: what attaching adds in the kernel, build-independent
    /// as `Kernel` is.
    KernelOverhead,
    /// Entries into the kernel of a kind per event (`--profile`): traps,
    /// syscalls or interrupts, exact counts judged on an absolute
    /// threshold.
    Entries(EntryKind),
    /// Those entries less the baseline's in the same boot.
    EntriesOverhead(EntryKind),
    /// The kernel's accesses or simulated misses per event, or the
    /// event's estimated cycles (`--cache`): exact counts of a model.
    Memory(MemKind),
    /// Several producers' coherence misses or HITMs per event, or the
    /// modelled throughput per producer (`-p N` under icount): a model's.
    Contention(ContentionKind),
    /// A family's own figure (a Bloom filter's false positives a lookup):
    /// a ratio of counts, under either meter.
    Figure(FigureKind),
}

const CHOICES: &str =
    "rate, overhead, both, kernel, kernel-overhead, traps, syscalls, interrupts, \
     traps-overhead, syscalls-overhead, interrupts-overhead, loads, stores, \
     l1i-misses, l1d-misses, ll-misses, cycles, coherence-misses, hitm, modelled-rate, \
     false-positives, timed-per-op, important-hits, memory or peak-memory";

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Metric {
    /// Every metric, in the order the outputs show them.
    pub const ALL: [Metric; 24] = [
        Metric::Rate,
        Metric::Overhead,
        Metric::Kernel,
        Metric::KernelOverhead,
        Metric::Entries(EntryKind::Trap),
        Metric::EntriesOverhead(EntryKind::Trap),
        Metric::Entries(EntryKind::Syscall),
        Metric::EntriesOverhead(EntryKind::Syscall),
        Metric::Entries(EntryKind::Interrupt),
        Metric::EntriesOverhead(EntryKind::Interrupt),
        Metric::Memory(MemKind::Loads),
        Metric::Memory(MemKind::Stores),
        Metric::Memory(MemKind::L1iMisses),
        Metric::Memory(MemKind::L1dMisses),
        Metric::Memory(MemKind::LlMisses),
        Metric::Memory(MemKind::Cycles),
        Metric::Contention(ContentionKind::Misses),
        Metric::Contention(ContentionKind::Hitm),
        Metric::Contention(ContentionKind::Rate),
        Metric::Figure(FigureKind::FalsePositives),
        Metric::Figure(FigureKind::TimedPerOp),
        Metric::Figure(FigureKind::ImportantHits),
        Metric::Figure(FigureKind::Memory),
        Metric::Figure(FigureKind::PeakMemory),
    ];

    pub fn parse_choice(s: &str) -> Result<Vec<Metric>, Error> {
        match s {
            "both" => Ok(vec![Metric::Rate, Metric::Overhead]),
            _ => Metric::ALL
                .into_iter()
                .find(|m| m.as_str() == s)
                .map(|m| vec![m])
                .ok_or_else(|| error::usage(format!("--metric must be {CHOICES}, not '{s}'"))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Rate => "rate",
            Metric::Overhead => "overhead",
            Metric::Kernel => "kernel",
            Metric::KernelOverhead => "kernel-overhead",
            Metric::Entries(EntryKind::Trap) => "traps",
            Metric::Entries(EntryKind::Syscall) => "syscalls",
            Metric::Entries(EntryKind::Interrupt) => "interrupts",
            Metric::EntriesOverhead(EntryKind::Trap) => "traps-overhead",
            Metric::EntriesOverhead(EntryKind::Syscall) => "syscalls-overhead",
            Metric::EntriesOverhead(EntryKind::Interrupt) => "interrupts-overhead",
            Metric::Memory(MemKind::Loads) => "loads",
            Metric::Memory(MemKind::Stores) => "stores",
            Metric::Memory(MemKind::L1iMisses) => "l1i-misses",
            Metric::Memory(MemKind::L1dMisses) => "l1d-misses",
            Metric::Memory(MemKind::LlMisses) => "ll-misses",
            Metric::Memory(MemKind::Cycles) => "cycles",
            Metric::Contention(ContentionKind::Misses) => "coherence-misses",
            Metric::Contention(ContentionKind::Hitm) => "hitm",
            Metric::Contention(ContentionKind::Rate) => "modelled-rate",
            Metric::Figure(FigureKind::FalsePositives) => "false-positives",
            Metric::Figure(FigureKind::TimedPerOp) => "timed-per-op",
            Metric::Figure(FigureKind::ImportantHits) => "important-hits",
            Metric::Figure(FigureKind::Memory) => "memory",
            Metric::Figure(FigureKind::PeakMemory) => "peak-memory",
        }
    }

    /// The unit of the metric's figures under `meter`.
    pub fn unit(self, meter: Meter) -> &'static str {
        match self {
            Metric::Rate => meter.rate_unit(),
            Metric::Overhead => meter.cost_unit(),
            Metric::Kernel => "kernel insn/event",
            Metric::KernelOverhead => "kernel insn/event over baseline",
            Metric::Entries(EntryKind::Trap) => "traps/event",
            Metric::Entries(EntryKind::Syscall) => "syscalls/event",
            Metric::Entries(EntryKind::Interrupt) => "interrupts/event",
            Metric::EntriesOverhead(EntryKind::Trap) => "traps/event over baseline",
            Metric::EntriesOverhead(EntryKind::Syscall) => "syscalls/event over baseline",
            Metric::EntriesOverhead(EntryKind::Interrupt) => "interrupts/event over baseline",
            Metric::Memory(MemKind::Loads) => "kernel loads/event",
            Metric::Memory(MemKind::Stores) => "kernel stores/event",
            Metric::Memory(MemKind::L1iMisses) => "kernel L1i misses/event",
            Metric::Memory(MemKind::L1dMisses) => "kernel L1d misses/event",
            Metric::Memory(MemKind::LlMisses) => "kernel LL misses/event",
            Metric::Memory(MemKind::Cycles) => "est. cycles/event (model)",
            Metric::Contention(ContentionKind::Misses) => "coherence misses/event (model)",
            Metric::Contention(ContentionKind::Hitm) => "HITM/event (model)",
            Metric::Contention(ContentionKind::Rate) => "M/Gcycle per producer (model)",
            Metric::Figure(FigureKind::FalsePositives) => "false positives/lookup",
            Metric::Figure(FigureKind::TimedPerOp) => match meter {
                Meter::Time => "ns/op (BPF-timed)",
                Meter::Icount => "insn/op (BPF-timed)",
            },
            Metric::Figure(FigureKind::ImportantHits) => match meter {
                Meter::Time => "M important hits/s",
                Meter::Icount => "M important hits/Ginsn",
            },
            Metric::Figure(FigureKind::Memory) => "MiB charged (memory cgroup, mean)",
            Metric::Figure(FigureKind::PeakMemory) => "MiB charged at most (memory cgroup)",
        }
    }

    /// Whether results of different trig-init builds compare on it: not
    /// the misses, which the producers' code evicting the kernel's lines
    /// moves, nor the cycles, which count that code.
    pub fn build_independent(self) -> bool {
        matches!(
            self,
            Metric::Figure(FigureKind::FalsePositives | FigureKind::TimedPerOp)
        ) || self.needs_profile()
            && !matches!(
                self,
                Metric::Memory(
                    MemKind::L1iMisses | MemKind::L1dMisses | MemKind::LlMisses | MemKind::Cycles
                ) | Metric::Contention(_)
            )
    }

    /// Whether its figures are counted by `--cache` alone.
    pub fn needs_cache(self) -> bool {
        matches!(self, Metric::Memory(_))
    }

    /// Whether its figures are counted by `--profile` alone.
    pub fn needs_profile(self) -> bool {
        !matches!(self, Metric::Rate | Metric::Overhead | Metric::Figure(_))
    }

    /// Whether it is a cost over the baseline, which can be about zero
    /// and then has no relative change.
    pub fn over_baseline(self) -> bool {
        matches!(
            self,
            Metric::Overhead | Metric::KernelOverhead | Metric::EntriesOverhead(_)
        )
    }

    /// Whether its figures are exact counts per event (entries, and the
    /// accesses and misses of `--cache`), judged by how many an event
    /// gained or lost (`--threshold-entries`): one trap or miss more from
    /// none has no relative change, and a thousandth of a miss more from
    /// a thousandth is no change.
    pub fn is_count(self) -> bool {
        match self {
            Metric::Entries(_) | Metric::EntriesOverhead(_) => true,
            Metric::Memory(kind) => kind != MemKind::Cycles,
            Metric::Contention(kind) => kind != ContentionKind::Rate,
            _ => false,
        }
    }

    /// The figure of `r`, one of the results of `boot`, where its
    /// baseline is found.
    pub fn value(self, r: &BenchResult, boot: &[BenchResult]) -> Option<f64> {
        if r.status != Status::Ok {
            return None;
        }
        let over = |per_event: Metric| {
            // the baseline the overhead was measured against
            let name = &r.overhead_ns.as_ref()?.baseline;
            let base = boot.iter().find(|b| &b.name == name)?;
            Some(per_event.value(r, boot)? - per_event.value(base, boot)?)
        };
        match self {
            Metric::Rate => r.summary.as_ref().map(|s| s.mean),
            Metric::Overhead => r.overhead_ns.as_ref().map(|o| o.ns_per_event),
            Metric::Kernel => r.profile.as_ref().map(|p| p.kernel),
            Metric::Entries(kind) => Some(r.profile.as_ref()?.entries?.of(kind)),
            Metric::KernelOverhead => over(Metric::Kernel),
            Metric::EntriesOverhead(kind) => over(Metric::Entries(kind)),
            Metric::Memory(kind) => Some(r.profile.as_ref()?.memory?.of(kind)),
            Metric::Contention(kind) => Some(kind.of(r.profile.as_ref()?.contention.as_ref()?)),
            Metric::Figure(kind) => r.figures.as_ref()?.of(kind),
        }
    }

    /// What results need for a figure of it.
    fn needs(self) -> &'static str {
        match self {
            Metric::Rate => "an ok result",
            Metric::Overhead => "a benchmark and its baseline ok in one boot",
            Metric::Kernel => "results booted with --profile (the icount meter)",
            Metric::KernelOverhead => {
                "results booted with --profile (the icount meter), a benchmark and its baseline ok in one boot"
            }
            Metric::Entries(_) => {
                "results booted with --profile by a trig-init that counts entries"
            }
            Metric::EntriesOverhead(_) => {
                "results booted with --profile by a trig-init that counts entries, a benchmark and its baseline ok in one boot"
            }
            Metric::Memory(_) => "results booted with --cache",
            Metric::Contention(_) => "results booted with -p above 1 under the icount meter",
            Metric::Figure(FigureKind::FalsePositives) => "bloom-false-positive results",
            Metric::Figure(FigureKind::TimedPerOp) => "bpf-hashmap-* or lpm-trie-* results",
            Metric::Figure(FigureKind::ImportantHits) => "local-storage-cache-* results",
            Metric::Figure(FigureKind::Memory | FigureKind::PeakMemory) => {
                "htab-mem or rhtab-mem results"
            }
        }
    }

    /// The rate improves as the benchmark says (`rate`); a cost always
    /// downwards.
    pub fn better(self, rate: Better) -> Better {
        match self {
            Metric::Rate => rate,
            Metric::Contention(ContentionKind::Rate)
            | Metric::Figure(FigureKind::ImportantHits) => Better::Higher,
            _ => Better::Lower,
        }
    }
}

/// Why `boots` (each one boot's results) give no figure of any of
/// `metrics` though some result is ok: asked for figures that results
/// cannot have (the kernel's of results not profiled), a comparison or
/// a history would find nothing and say nothing moved. None when a
/// figure is there, or no result is ok (its verdicts say why).
pub fn unmeasured(metrics: &[Metric], boots: &[&[BenchResult]]) -> Option<String> {
    let any_ok = boots
        .iter()
        .flat_map(|b| b.iter())
        .any(|r| r.status == Status::Ok);
    let measured = boots.iter().any(|b| {
        b.iter()
            .any(|r| metrics.iter().any(|m| m.value(r, b).is_some()))
    });
    (any_ok && !measured).then(|| {
        let names: Vec<&str> = metrics.iter().map(|m| m.as_str()).collect();
        let needs: Vec<String> = metrics
            .iter()
            .map(|m| format!("{} needs {}", m.as_str(), m.needs()))
            .collect();
        format!("has no {} figure: {}", names.join(" or "), needs.join("; "))
    })
}

/// `--metric`, parsed once by argh: `both` (rate and overhead) or one
/// metric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricChoice(pub Vec<Metric>);

impl Default for MetricChoice {
    fn default() -> Self {
        MetricChoice(vec![Metric::Rate, Metric::Overhead])
    }
}

impl std::str::FromStr for MetricChoice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Metric::parse_choice(s).map(MetricChoice)
    }
}

impl std::fmt::Display for MetricChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [m] => f.write_str(m.as_str()),
            _ => f.write_str("both"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_schema::{Overhead, Profile, Summary};

    fn profiled(name: &str, kernel: Option<f64>) -> BenchResult {
        let mut r = BenchResult::new(name, name, "trig", 1, Better::Higher);
        r.summary = Some(Summary {
            mean: 1.0,
            stddev: 0.0,
            per_producer: 1.0,
            cv: 0.0,
            samples: 4,
        });
        r.profile = kernel.map(|kernel| Profile {
            total: 1000.0,
            kernel,
            functions: Vec::new(),
            entries: None,
            memory: None,
            contention: None,
            source: None,
        });
        r
    }

    /// trig-kprobe's kernel instructions over trig-base's in one boot.
    fn boot(base_kernel: Option<f64>) -> Vec<BenchResult> {
        let mut kprobe = profiled("trig-kprobe", Some(653.5));
        kprobe.overhead_ns = Some(Overhead {
            baseline: "trig-base".into(),
            ns_per_event: 400.0,
        });
        vec![profiled("trig-base", base_kernel), kprobe]
    }

    #[test]
    fn kernel_overhead_is_the_kernel_count_over_the_baseline_s() {
        let boot = boot(Some(300.25));
        let m = Metric::KernelOverhead;
        assert_eq!(m.value(&boot[1], &boot), Some(353.25));
        assert_eq!(m.better(boot[1].better), Better::Lower);
        // a baseline has no baseline
        assert_eq!(m.value(&boot[0], &boot), None);
    }

    #[test]
    fn kernel_overhead_is_missing_without_a_profiled_baseline() {
        let unprofiled = boot(None);
        assert_eq!(
            Metric::KernelOverhead.value(&unprofiled[1], &unprofiled),
            None
        );
        let alone = &boot(Some(300.0))[1..];
        assert_eq!(Metric::KernelOverhead.value(&alone[0], alone), None);
        // nor when the benchmark itself was not profiled
        let mut b = boot(Some(300.0));
        b[1].profile = None;
        assert_eq!(Metric::KernelOverhead.value(&b[1], &b), None);
    }

    #[test]
    fn choices_parse_and_name_themselves() {
        for m in Metric::ALL {
            assert_eq!(Metric::parse_choice(m.as_str()), Ok(vec![m]));
            assert_eq!(
                serde_json::to_value(m).unwrap(),
                serde_json::json!(m.as_str())
            );
        }
        let e = Metric::parse_choice("kernel-total").unwrap_err();
        assert!(
            e.message.contains("kernel-overhead") && e.message.contains("'kernel-total'"),
            "{e}"
        );
        assert!(Metric::KernelOverhead.build_independent());
        assert!(!Metric::Overhead.build_independent());
    }

    #[test]
    fn contention_is_a_model_s_count_and_rate() {
        use trig_schema::contention::{CoherenceMisses as Misses, Weights, MODEL};
        let mut boot = boot(Some(300.0));
        assert_eq!(
            Metric::Contention(ContentionKind::Misses).value(&boot[0], &boot),
            None
        );
        let c = trig_schema::Contention {
            model: MODEL.into(),
            weights: Weights::MODEL,
            producers: 4,
            kernel: Misses {
                misses: 2.0,
                hitm: 1.5,
            },
            user: Misses {
                misses: 0.5,
                hitm: 0.0,
            },
            insn: 1000.0,
            spin: 0.0,
            cycles: 1180.0,
            rate: 3.39,
            per_producer: 0.8475,
            bound_by: None,
            lines: Vec::new(),
        };
        boot[0].profile.as_mut().unwrap().contention = Some(c);
        let of = |k| Metric::Contention(k).value(&boot[0], &boot);
        assert_eq!(of(ContentionKind::Misses), Some(2.5));
        assert_eq!(of(ContentionKind::Hitm), Some(1.5));
        assert_eq!(of(ContentionKind::Rate), Some(0.8475));
        let rate = Metric::Contention(ContentionKind::Rate);
        assert_eq!(rate.better(Better::Lower), Better::Higher);
        assert!(Metric::Contention(ContentionKind::Hitm).is_count() && !rate.is_count());
        // the producers' own code is in the user misses
        assert!(!rate.build_independent());
    }
}
