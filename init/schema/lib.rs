//! The report schema: one JSON document per boot, shared by the guest that
//! writes it and the host that reads, stores and compares it; and the
//! results file `vm` keeps a kernel's boots in ([`runs`]).
//!
//! Bump [`SCHEMA_VERSION`] on any change that an older reader would
//! misinterpret; added optional fields do not need a bump, unless this
//! reader fills them in for older files ([`upgrade`]).
//!
//! Beside it, what guest and host both need around the report: the exit
//! statuses ([`exit`]), a sample's statistics ([`stats`]), files written
//! whole ([`files`]), the classes of a command's errors ([`error`]) and
//! the standard streams written without a panic ([`out`]).

pub mod contention;
pub mod error;
pub mod exit;
pub mod figures;
pub mod files;
pub mod frame;
pub mod identity;
pub mod memory;
pub mod out;
pub mod params;
pub mod runs;
pub mod stats;
pub mod upgrade;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use contention::{Contention, ContentionKind};
pub use figures::{FigureKind, Figures, TimedRuns};
pub use memory::{Accesses, CycleWeights, MemKind, Memory};
pub use runs::{
    abbrev, is_object_name, is_timestamp, BootStatus, KernelInfo, Meter, Pairing, PartRecord,
    RunRecord, RunSet, Timeline, VmInfo,
};

/// 2: fractional `warmup_s`/`duration_s`, and `vm.meter` (an icount rate
/// is events per 10^9 instructions, which a version-1 reader would take
/// for events per second).
/// 3: per-function `profile` of each result (`--profile`).
/// 4: the emulated machine (`vm.qemu`, `vm.machine`, `vm.cpu`,
/// `system.cpu`), part of an icount result's identity: a version-3 reader
/// would mix results of different machines without a word.
/// 5: each result's `attach` and `baseline`, recorded by the guest. A
/// version-4 reader would read them right, but the version tells this
/// one which results to fill in from schema 4's tables ([`upgrade`]).
/// 6: `vm.icount_shift`, part of an icount result's identity: a version-5
/// reader would take a shifted result for an unshifted one.
/// 7: a split run's report records the parameters its guests ran with
/// (before, the command line's: 1 s and 5 s where the icount meter's
/// guests ran 0.02 s and 0.1 s); an older one is read with its parts'
/// console logs, or refused (`analysis::split_params`).
pub const SCHEMA_VERSION: u32 = 7;

/// The column a benchmark's name takes in the tables: every registry
/// name is shorter (local-storage-cache-hashmap-control is 35).
pub const NAME_WIDTH: usize = 36;

/// Everything one boot (or one plain run) measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    pub system: System,
    /// Kernel features probed before running, by name.
    pub capabilities: BTreeMap<String, Capability>,
    pub params: Params,
    pub mounts: Vec<MountOutcome>,
    pub results: Vec<BenchResult>,
    /// trig-base against a bare loop, when asked for (`trig.harness=1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<Harness>,
    pub outcome: Outcome,
}

/// The cost of counting: trig-base's rate over a getpgid loop that counts
/// nothing, timed right after it in the same kernel.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Harness {
    pub base_mps: f64,
    pub bare_mps: f64,
    /// base / bare; 1.0 means counting is free.
    pub ratio: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub git_rev: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct System {
    pub release: String,
    pub version: String,
    pub machine: String,
    pub cmdline: String,
    pub cpus: usize,
    /// Whether trig-init ran as PID 1 of an initramfs.
    pub pid1: bool,
    /// The CPU as the guest saw it; absent before schema 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
}

/// The guest's CPU: what steers the kernel's alternatives, and so part of
/// an icount figure's identity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cpu {
    /// /proc/cpuinfo's model name (arm64: its CPU part).
    pub model: String,
    /// /proc/cpuinfo's flags (arm64: Features), sorted: the kernel's view,
    /// which also depends on the flags that kernel knows.
    pub flags: Vec<String>,
    /// x86-64: the CPUID feature words as the CPU gives them to any
    /// kernel, `LEAF.SUB:EAX,EBX,ECX,EDX` in hex; what [`identity`]
    /// compares, since `flags` differ between two kernels on one CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuid: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Capability {
    pub supported: bool,
    /// How it was decided (the file or symbol looked at).
    pub detail: String,
}

pub use params::Params;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MountOutcome {
    pub target: String,
    pub fstype: String,
    /// `mounted`, `present` (already there) or `failed`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Unsupported,
    Failed,
    Timeout,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unsupported => "unsupported",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
        }
    }
}

/// The direction in which a figure improves.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    #[default]
    Higher,
    Lower,
}

impl Better {
    /// Whether a change of `change_pct` (NEW against BASE) is for the worse.
    pub fn is_worse(self, change_pct: f64) -> bool {
        match self {
            Better::Higher => change_pct < 0.0,
            Better::Lower => change_pct > 0.0,
        }
    }
}

/// One benchmark at one parameter point (producer count, string length).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchResult {
    /// Unique within a report: the registry name plus `/p=N`, `/len=N`.
    pub name: String,
    /// The registry entry this came from.
    pub bench: String,
    /// Its family in the registry (`trigger`, `rename`, `strncmp`): the
    /// BPF object it runs from.
    pub group: String,
    /// How its program attaches (`kprobe`, `fentry`, `tp`, `raw_tp`,
    /// `uprobe`, `usdt`, ..., or `none`), as the registry knows it; absent
    /// only for a benchmark of an old file that this build does not know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach: Option<String>,
    /// The benchmark its overhead is measured against (a registry name),
    /// absent for a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    pub producers: usize,
    /// Which way the rate improves; `compare` judges by it.
    #[serde(default)]
    pub better: Better,
    pub status: Status,
    /// Why it is unsupported, failed or timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Extra parameters of this point (`cmp_str_len`, `rename_thread`,
    /// `oversubscribed`, and `upstream`: the name in upstream's bench of
    /// the kernel it ran on).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, String>,
    pub samples: Vec<Sample>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<HitCheck>,
    /// Per-event cost added over the baseline, in ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_ns: Option<Overhead>,
    /// The profiled window of the measured samples (`trig.profile=1`),
    /// numbered from 0 in the order the guest ran them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    /// With several producers: the events each counted in the measured
    /// samples, and the CPU each ran on when it stopped (pinned or not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub producer_events: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub producer_cpus: Vec<usize>,
    /// Where the window's instructions went, per event; the host fills it
    /// in from the plugin's counts and the guest's symbols.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// The family's own figures of the measured samples (a Bloom filter's
    /// false positives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
}

/// Instructions per event of a profiled window (icount meter only).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Profile {
    /// Every instruction of the window (the guest clock), per event.
    pub total: f64,
    /// Those the kernel executed (including BPF programs), per event.
    pub kernel: f64,
    /// Kernel functions at or above [`Profile::FLOOR`], costliest first;
    /// `[jit]` is code outside the kernel image (BPF programs,
    /// trampolines, kprobe slots).
    pub functions: Vec<FunctionCost>,
    /// Entries per event into the kernel's trap, syscall and interrupt
    /// entry points; absent in results profiled before they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Entries>,
    /// Accesses, simulated misses and estimated cycles per event
    /// (`vm --cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Memory>,
    /// Coherence misses and the modelled throughput of several producers
    /// (`-p N` under icount).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<Contention>,
    /// Where the functions' source lines came from, or why they have
    /// none; absent in results profiled before lines were resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLinesFrom>,
}

/// The debug info a profile's source lines were resolved with, or why
/// there are none (docs/profile.md).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SourceLinesFrom {
    /// The vmlinux whose DWARF was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debuginfo: Option<String>,
    /// Its GNU build id (hex), which the booted image's matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// Why the lines are missing (no debug info, a mismatch, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// One source line's instructions per event in a function: where an
/// instruction was inlined, the line of the call in the function that
/// kallsyms names (what a reader of that function sees).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceLineCost {
    /// The source file, relative to the kernel's source tree where the
    /// DWARF allows (outside text: escaped where shown).
    pub file: String,
    pub line: u32,
    /// Instructions per event.
    pub insn: f64,
}

/// How often per event the kernel was entered through each kind of entry
/// point (the executions of the entry point's first block).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Entries {
    /// Exceptions: breakpoints (a uprobe's int3 or BRK), debug and page
    /// faults.
    pub traps: f64,
    pub syscalls: f64,
    /// Device interrupts and system vectors (timer, IPIs).
    pub interrupts: f64,
}

/// A kind of entry into the kernel, counted in [`Entries`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Trap,
    Syscall,
    Interrupt,
}

impl Entries {
    pub fn of(&self, kind: EntryKind) -> f64 {
        match kind {
            EntryKind::Trap => self.traps,
            EntryKind::Syscall => self.syscalls,
            EntryKind::Interrupt => self.interrupts,
        }
    }

    pub fn of_mut(&mut self, kind: EntryKind) -> &mut f64 {
        match kind {
            EntryKind::Trap => &mut self.traps,
            EntryKind::Syscall => &mut self.syscalls,
            EntryKind::Interrupt => &mut self.interrupts,
        }
    }
}

impl Profile {
    /// Functions cheaper than this (instructions per event) are left out
    /// of `functions`, but still in `kernel`.
    pub const FLOOR: f64 = 0.005;

    /// The kernel's cost outside the listed functions.
    pub fn kernel_rest(&self) -> f64 {
        self.kernel - self.functions.iter().map(|f| f.insn).sum::<f64>()
    }

    /// The cost of one function, 0 when it is not listed.
    pub fn of(&self, name: &str) -> f64 {
        self.functions
            .iter()
            .find(|f| f.name == name)
            .map_or(0.0, |f| f.insn)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FunctionCost {
    pub name: String,
    /// Instructions per event.
    pub insn: f64,
    /// Entries per event (0 in results profiled before they were counted).
    #[serde(default)]
    pub calls: f64,
    /// Its accesses and misses per event (`vm --cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Accesses>,
    /// Its coherence misses per event (`-p N` under icount).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence: Option<contention::CoherenceMisses>,
    /// Its source lines at or above [`Profile::FLOOR`], in file and line
    /// order (`--profile` with debug info: [`Profile::source`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<SourceLineCost>,
}

/// The guest kernel's text symbols, for the host to name the plugin's
/// addresses: sorted, delta-encoded to keep the console frame small.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KernelSymbols {
    /// The first symbol's address; each delta is from the previous one.
    pub base: u64,
    pub deltas: Vec<u64>,
    pub names: Vec<String>,
    /// The end of the kernel image (`_end`): addresses past it, or before
    /// the first symbol, are `[jit]`.
    pub end: u64,
}

/// One read-and-reset of the counters, about a second apart.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Seconds since the benchmark's producers started.
    pub t_s: f64,
    /// The real length of this interval (upstream divides by 1 s).
    pub interval_s: f64,
    /// Of it, the time the sampler itself ran on the producers' one CPU
    /// (under icount its instructions), which `mps` leaves out: a cost of
    /// each sample, not of the events, so that a shorter window does not
    /// lower the rate. Zero with more CPUs, and in older files.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sampler_s: f64,
    pub warmup: bool,
    /// Events counted by BPF programs in the interval.
    pub bpf: u64,
    /// Events counted by the producers in user space in the interval.
    pub user: u64,
    /// The benchmark's counted events per second, in millions.
    pub mps: f64,
    /// Of the events BPF counted, the operations that found nothing
    /// (upstream's drops: a hash map's lookups of absent keys).
    #[serde(default, skip_serializing_if = "is_none")]
    pub drops: u64,
    /// Of the drops, the lookups a Bloom filter let through (its false
    /// positives).
    #[serde(default, skip_serializing_if = "is_none")]
    pub false_hits: u64,
    /// Of the events, a local storage benchmark's gets of its first map
    /// (upstream's important hits).
    #[serde(default, skip_serializing_if = "is_none")]
    pub important_hits: u64,
    /// What the program timed of its own work in the interval (the LPM
    /// trie's runs), in the meter's seconds: under icount the guest's
    /// clock less the shift's stretch.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timed_s: f64,
    /// The memory charged to the benchmark's memory cgroup when the
    /// sample was taken, in bytes (htab-mem's memory.current).
    #[serde(default, skip_serializing_if = "is_none")]
    pub memory_bytes: u64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_none(n: &u64) -> bool {
    *n == 0
}

impl Sample {
    /// The events its rate counted: its rate over the interval less the
    /// sampler's own time.
    pub fn events(&self) -> f64 {
        (self.mps * (self.interval_s - self.sampler_s) * 1e6).round()
    }

    /// The events a second of what the program timed of its own work (M;
    /// nothing timed: 0).
    pub fn timed_mps(&self) -> f64 {
        match self.timed_s {
            t if t > 0.0 => self.bpf as f64 / 1e6 / t,
            _ => 0.0,
        }
    }

    /// The rate of `part` of the events BPF counted: the events' rate by
    /// its share (drops, important hits).
    pub fn share_mps(&self, part: u64) -> f64 {
        match self.bpf {
            0 => 0.0,
            events => self.mps * part as f64 / events as f64,
        }
    }

    /// The rate of the important hits.
    pub fn important_mps(&self) -> f64 {
        self.share_mps(self.important_hits)
    }
}

/// Statistics over the measured (non-warm-up) samples.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Mean rate, M events/s.
    pub mean: f64,
    /// Sample standard deviation (n-1), M/s.
    pub stddev: f64,
    /// Mean rate per producer, M/s.
    pub per_producer: f64,
    /// Coefficient of variation, stddev / mean.
    pub cv: f64,
    pub samples: usize,
}

/// Totals of both counters over the whole benchmark, checked for agreement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HitCheck {
    pub bpf: u64,
    pub user: u64,
    /// Whether bpf and user agree within 1%.
    pub agree: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Overhead {
    pub baseline: String,
    pub ns_per_event: f64,
}

/// How a guest run ended (`Outcome.status`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunEnd {
    /// Still going: the header frame's outcome.
    Running,
    Complete,
    /// The guest's watchdog ended the run.
    Watchdog,
    /// trig-init panicked.
    Panic,
    /// The run could not start (a bad command line, say).
    Error,
    /// A signal ended the run.
    Interrupted,
    /// Set on the host: the guest stopped before its final report.
    Incomplete,
}

impl RunEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            RunEnd::Running => "running",
            RunEnd::Complete => "complete",
            RunEnd::Watchdog => "watchdog",
            RunEnd::Panic => "panic",
            RunEnd::Error => "error",
            RunEnd::Interrupted => "interrupted",
            RunEnd::Incomplete => "incomplete",
        }
    }
}

impl std::fmt::Display for RunEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the run ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Outcome {
    pub status: RunEnd,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl BenchResult {
    /// An `ok` result with nothing measured yet.
    pub fn new(name: &str, bench: &str, group: &str, producers: usize, better: Better) -> Self {
        BenchResult {
            name: name.into(),
            bench: bench.into(),
            group: group.into(),
            attach: None,
            baseline: None,
            producers,
            better,
            status: Status::Ok,
            reason: None,
            extra: BTreeMap::new(),
            samples: Vec::new(),
            summary: None,
            hits: None,
            overhead_ns: None,
            window: None,
            producer_events: Vec::new(),
            producer_cpus: Vec::new(),
            profile: None,
            figures: None,
        }
    }
}

impl Report {
    /// Whether every result ran or was cleanly unsupported.
    pub fn all_ok(&self) -> bool {
        self.outcome.status == RunEnd::Complete
            && self
                .results
                .iter()
                .all(|r| matches!(r.status, Status::Ok | Status::Unsupported))
    }
}

/// Fills in each result's per-event overhead against its baseline at the
/// same parameters, from the same run: 1e3/rate - 1e3/baseline rate, in ns
/// with rates in M/s.
pub fn add_overheads(results: &mut [BenchResult]) {
    let rates: BTreeMap<String, f64> = results
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| Some((r.name.clone(), r.summary.as_ref()?.mean)))
        .collect();
    for r in results.iter_mut().filter(|r| r.status == Status::Ok) {
        let Some(base) = &r.baseline else {
            continue;
        };
        let base_name = r.name.replacen(&r.bench, base, 1);
        if let (Some(&base_rate), Some(s)) = (rates.get(&base_name), &r.summary) {
            if base_rate > 0.0 && s.mean > 0.0 {
                r.overhead_ns = Some(Overhead {
                    baseline: base_name,
                    ns_per_event: 1e3 / s.mean - 1e3 / base_rate,
                });
            }
        }
    }
}

#[cfg(test)]
mod status_tests {
    use super::{BootStatus, RunEnd};

    /// Each of `all` writes as its name and reads back.
    fn round_trip<T>(all: &[T])
    where
        T: serde::Serialize
            + serde::de::DeserializeOwned
            + std::fmt::Display
            + PartialEq
            + std::fmt::Debug,
    {
        for s in all {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), s);
        }
    }

    /// The JSON spelling is the one results files have always had.
    #[test]
    fn statuses_read_and_write_as_their_names() {
        use BootStatus as B;
        round_trip(&[
            B::Ok,
            B::Failed,
            B::Interrupted,
            B::Crashed,
            B::Hung,
            B::NoBoot,
            B::BadOutput,
        ]);
        use RunEnd as E;
        round_trip(&[
            E::Running,
            E::Complete,
            E::Watchdog,
            E::Panic,
            E::Error,
            E::Interrupted,
            E::Incomplete,
        ]);
    }
}
