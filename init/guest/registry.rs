//! The benchmark registry: one row per family and one per benchmark, and
//! the points a selection expands to. A new benchmark is one row here plus
//! its program in `bpf/`; a new family is its BPF file, its row in
//! [`FAMILIES`] and its runner in `matrix/`. `list`, filtering, capability
//! checks, baselines, attach points (from the programs' sections) and the
//! JSON names all come from these tables. Data only: the runners use it,
//! not the other way round, so that the host can plan without them.

use crate::caps::Feature;
use trig_schema::error::{infra, usage, Error};
use trig_schema::{BenchResult, Better, NAME_WIDTH};

/// `SECTIONS`, the ELF section of every BPF program as compiled, written by
/// build.rs beside the skeletons but apart from them: the registry is data
/// and imports nothing of the loader (bpf.rs), which imports it.
mod sections {
    include!(concat!(env!("OUT_DIR"), "/sections.rs"));
}
use sections::SECTIONS;

/// A family of benchmarks: its BPF object and runner, and the rules its
/// benchmarks share.
#[derive(Debug)]
pub struct Family {
    /// The group in reports, and the BPF object `bpf/NAME.bpf.c` where
    /// `object` says it has one.
    pub name: &'static str,
    /// Whether its programs are in `bpf/NAME.bpf.c` (count's benchmarks
    /// run none: they measure the harness's own ceiling).
    pub object: bool,
    /// What the name of each of its benchmarks starts with: one of these
    /// (upstream's names of one family need not share a prefix).
    pub prefixes: &'static [&'static str],
    pub runner: Runner,
    /// Parameters swept besides the producer count.
    pub sweep: Sweep,
    pub producers: Producers,
    /// What its benchmarks' overheads are measured against.
    pub baseline: Baseline,
    /// How upstream's bench prints its benchmarks' figures, but where a
    /// benchmark's row says otherwise ([`Bench::reporter`]).
    pub reporter: Reporter,
    /// The long options of its own in upstream's bench, which parses the
    /// command line again with the chosen benchmark's parser alone: one
    /// that another family's parser takes is refused there. None: upstream
    /// has no parser for it, and takes any family's.
    pub knobs: Option<&'static [&'static str]>,
}

/// Upstream's report functions (bench.c), by what they name the rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reporter {
    /// hits, drops and total operations (`hits_drops_report_*`).
    Hits,
    /// throughput and latency (`ops_report_*`).
    Ops,
    /// a Bloom filter's false hits of all its lookups
    /// (`false_hits_report_*`).
    FalseHits,
    /// Each CPU's updates a second, from the program's timing of its last
    /// run (bpf-hashmap-full-update's report; no `Iter` lines).
    FullUpdate,
    /// Each CPU's lookups a second, the mean and twice the deviation of
    /// the program's last 32 timed runs (bpf-hashmap-lookup's report; no
    /// `Iter` lines).
    Lookup,
    /// hits, their latency and the important hits
    /// (`local_storage_report_*`).
    LocalStorage,
    /// throughput and latency of what the program timed of its runs, not
    /// of the interval (the LPM trie's insert and delete,
    /// `frac_second_report_*`).
    TimedOps,
    /// the same of frees, thousands a second and ms each (lpm-trie-free's
    /// `free_ops_report_*`).
    TimedFrees,
    /// each producer's operations, k/s, and the memory cgroup's memory
    /// (htab-mem's `htab_mem_report_*`).
    HtabMem,
    /// the median, deviation and 99th percentile of what the program
    /// timed of its runs, ns an iteration (`bpf_bench_timing_report`); no
    /// `Iter` lines.
    Timing,
}

impl Family {
    /// Whether `name` is one of its benchmarks' by its prefixes.
    pub fn names(&self, name: &str) -> bool {
        self.prefixes.iter().any(|p| name.starts_with(p))
    }
}

impl PartialEq for Family {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// Which runner of `matrix/` opens the family's object and measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    Trigger,
    Rename,
    Strncmp,
    Count,
    Loop,
    Bloom,
    Hashmap,
    LocalStorage,
    LpmTrie,
    HtabMem,
    Nop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// One point per producer count.
    None,
    /// Also one per `--cmp-str-len` (named `/len=N`, recorded as
    /// `cmp_str_len`).
    CmpStrLen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Producers {
    /// One point per `-p` count.
    Any,
    /// Exactly one, as upstream's (a point with more fails), on a worker or
    /// the main thread as `--rename-thread` says (recorded as
    /// `rename_thread`).
    One,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The family's benchmark that attaches nothing under the same kind of
    /// trigger (trig-kprobe: trig-base; trig-uprobe-nop:
    /// trig-usermode-count; trig-batch-fentry: trig-kernel-count).
    SameTrigger,
    /// This benchmark.
    Named(&'static str),
    /// None: the figures stand alone (an iteration of a loop inside one
    /// program run has no event without it to be measured against).
    Alone,
}

pub static TRIGGER: Family = Family {
    name: "trigger",
    object: true,
    prefixes: &["trig-"],
    runner: Runner::Trigger,
    sweep: Sweep::None,
    producers: Producers::Any,
    baseline: Baseline::SameTrigger,
    reporter: Reporter::Hits,
    knobs: Some(&["trig-batch-iters"]),
};

pub static RENAME: Family = Family {
    name: "rename",
    object: true,
    prefixes: &["rename-"],
    runner: Runner::Rename,
    sweep: Sweep::None,
    producers: Producers::One,
    baseline: Baseline::SameTrigger,
    reporter: Reporter::Hits,
    knobs: None,
};

pub static STRNCMP: Family = Family {
    name: "strncmp",
    object: true,
    prefixes: &["strncmp-"],
    runner: Runner::Strncmp,
    sweep: Sweep::CmpStrLen,
    producers: Producers::Any,
    // does all but the comparison
    baseline: Baseline::Named("strncmp-baseline"),
    reporter: Reporter::Hits,
    knobs: Some(&["cmp-str-len"]),
};

/// Upstream's bench_count.c: producers that only count, on one shared
/// counter or each on its own line.
pub static COUNT: Family = Family {
    name: "count",
    object: false,
    prefixes: &["count-"],
    runner: Runner::Count,
    sweep: Sweep::None,
    producers: Producers::Any,
    // what sharing the counter's line costs
    baseline: Baseline::Named("count-local"),
    reporter: Reporter::Hits,
    knobs: None,
};

/// bpf_loop() and the open-coded loop, `--nr_loops` iterations of an
/// empty body per call (upstream's bench_bpf_loop.c, bench_bpf_for.c).
pub static LOOP: Family = Family {
    name: "loops",
    object: true,
    prefixes: &["bpf-loop", "bpf-for"],
    runner: Runner::Loop,
    sweep: Sweep::None,
    producers: Producers::Any,
    baseline: Baseline::Alone,
    reporter: Reporter::Ops,
    knobs: Some(&["nr_loops"]),
};

/// Bloom filter maps, and a hash map with one in front and without
/// (upstream's bench_bloom_filter_map.c).
pub static BLOOM: Family = Family {
    name: "bloom",
    object: true,
    prefixes: &["bloom-", "hashmap-with-bloom", "hashmap-without-bloom"],
    runner: Runner::Bloom,
    sweep: Sweep::None,
    producers: Producers::Any,
    // a hash map's lookup alone, what a filter in front of it saves
    baseline: Baseline::Named("hashmap-without-bloom"),
    reporter: Reporter::Hits,
    knobs: Some(&["nr_entries", "nr_hash_funcs", "value_size"]),
};

/// A hash map's update when full, and its lookup, timed by the program
/// (upstream's bench_bpf_hashmap_full_update.c and
/// bench_bpf_hashmap_lookup.c).
pub static HASHMAP: Family = Family {
    name: "hashmap",
    object: true,
    prefixes: &["bpf-hashmap-", "bpf-rhashmap-"],
    runner: Runner::Hashmap,
    sweep: Sweep::None,
    producers: Producers::Any,
    baseline: Baseline::Alone,
    reporter: Reporter::FullUpdate,
    knobs: Some(&[
        "key_size",
        "map_flags",
        "max_entries",
        "nr_entries",
        "nr_loops",
    ]),
};

/// Task local storage's cache, against a hash map's lookup (upstream's
/// bench_local_storage.c).
pub static LOCAL_STORAGE: Family = Family {
    name: "local_storage",
    object: true,
    prefixes: &["local-storage-cache-"],
    runner: Runner::LocalStorage,
    sweep: Sweep::None,
    // upstream's validate(): "benchmark doesn't support multi-producer!"
    producers: Producers::One,
    // a hash map's lookup for each get, upstream's control
    baseline: Baseline::Named("local-storage-cache-hashmap-control"),
    reporter: Reporter::LocalStorage,
    knobs: Some(&["nr_maps", "hashmap_nr_keys_used"]),
};

/// The LPM trie's operations, each a BPF_PROG_TEST_RUN's run of them
/// (upstream's bench_lpm_trie_map.c).
pub static LPM_TRIE: Family = Family {
    name: "lpm_trie",
    object: true,
    prefixes: &["lpm-trie-"],
    runner: Runner::LpmTrie,
    sweep: Sweep::None,
    // insert and delete refuse more (lpm_trie::Trie::check), as upstream's
    producers: Producers::Any,
    // the run's loop and its keys, without the trie
    baseline: Baseline::Named("lpm-trie-baseline"),
    reporter: Reporter::Ops,
    knobs: Some(&["nr_entries", "prefix_len", "random"]),
};

/// A hash map's memory under churn, read from a memory cgroup
/// (upstream's bench_htab_mem.c).
pub static HTAB_MEM: Family = Family {
    name: "htab_mem",
    object: true,
    prefixes: &["htab-mem", "rhtab-mem"],
    runner: Runner::HtabMem,
    sweep: Sweep::None,
    // add_del_on_diff_cpu refuses an odd count (htab_mem::check)
    producers: Producers::Any,
    baseline: Baseline::Alone,
    reporter: Reporter::HtabMem,
    knobs: Some(&["value-size", "use-case", "preallocated"]),
};

/// An empty loop's iteration, timed by the program (upstream's
/// bench_bpf_nop.c).
pub static BPF_NOP: Family = Family {
    name: "bpf_nop",
    object: true,
    prefixes: &["bpf-nop"],
    runner: Runner::Nop,
    sweep: Sweep::None,
    producers: Producers::Any,
    baseline: Baseline::Alone,
    reporter: Reporter::Timing,
    // no parser upstream: it takes any family's options
    knobs: None,
};

pub static FAMILIES: &[&Family] = &[
    &TRIGGER,
    &RENAME,
    &STRNCMP,
    &COUNT,
    &LOOP,
    &BLOOM,
    &HASHMAP,
    &LOCAL_STORAGE,
    &LPM_TRIE,
    &HTAB_MEM,
    &BPF_NOP,
];

/// Non-inlined functions in this binary that uprobes attach to, each named
/// `trig_uprobe_target_<variant>`; see `matrix::utarget` for why each
/// starts as it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UTarget {
    Nop,
    Push,
    Ret,
    /// x86-64 only: a 5-byte nop, which 6.18 to 7.1 optimise.
    Nop5,
    /// x86-64 only: the 10-byte nop (`66 2e 0f 1f 84 00..`) that 7.2
    /// optimises instead.
    Nop10,
    /// A USDT probe (a nop and its ELF note) inside the function.
    Usdt,
    /// x86-64 only: a USDT probe on a nop followed by a nop5, upstream's
    /// form, which libbpf moves onto the nop5 where the kernel has the
    /// uprobe syscall (6.18+).
    UsdtNop5,
    /// x86-64 only: a USDT probe on a 10-byte nop.
    UsdtNop10,
}

/// How producers generate events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Loop the getpgid() syscall.
    Getpgid,
    /// BPF_PROG_TEST_RUN of this never-attached raw_tp program, which loops
    /// `batch_iters` times over the attach point.
    TestRun(&'static str),
    /// Call a target function in this binary.
    Call(UTarget),
    /// Write a name to /proc/self/comm.
    Rename,
    /// Add one to a counter in user space: one that every producer shares,
    /// or each producer's own.
    Count { shared: bool },
    /// BPF_PROG_TEST_RUN of this XDP program on an empty frame: a run of
    /// operations, which the program returns (the family's runner makes
    /// the producers).
    Packet(&'static str),
    /// BPF_PROG_TEST_RUN of this syscall program, a run of iterations the
    /// family's runner sets (and makes the producers).
    Run(&'static str),
    /// Make an LPM trie, fill it and close it, which the kernel then frees
    /// (the family's runner makes the producers).
    MapFree,
}

impl UTarget {
    /// What a kernel that refuses to probe the target lacks, beyond the
    /// benchmark's feature.
    pub fn needs(self) -> Option<&'static str> {
        matches!(self, UTarget::Nop10 | UTarget::UsdtNop10)
            .then_some("7.2+ to probe the 10-byte nop: older x86 uprobes refuse its CS prefix")
    }
}

impl Trigger {
    /// What the producers do, for `list`.
    pub fn describe(self) -> String {
        match self {
            Trigger::Getpgid => "getpgid() loop".into(),
            Trigger::TestRun(p) => format!("test_run {p}"),
            Trigger::Call(t) => format!("call {t:?} target").to_lowercase(),
            Trigger::Rename => "write /proc/self/comm".into(),
            Trigger::Count { shared: true } => "atomic add, one shared counter".into(),
            Trigger::Count { shared: false } => "atomic add, a counter each".into(),
            Trigger::Packet(p) => format!("test_run {p} on a frame"),
            Trigger::Run(p) => format!("test_run {p}"),
            Trigger::MapFree => "make, fill and close an LPM trie".into(),
        }
    }

    fn same_kind(self, other: Trigger) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// How the program under test is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// Nothing is attached.
    None,
    /// libbpf attaches by the program's section name.
    Section,
    /// To the trigger's target function, by file offset in /proc/self/exe.
    Uprobe { ret: bool, multi: bool },
    /// By its section, and `empty`, a program that counts nothing, on
    /// every other function the kernel can trace, in one kprobe_multi link
    /// (upstream's `-all` benchmarks).
    AlsoEverywhere { empty: &'static str },
}

/// Where a benchmark runs: anywhere, or only on x86-64 (not the host's
/// `boot::kernel::Arch`, which names a guest's architecture).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchSupport {
    Any,
    X86_64,
}

/// A kernel version, (major, minor).
pub type Version = (u32, u32);

/// What upstream's bench calls one of our benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Up {
    /// Our name.
    Same,
    As(&'static str),
    /// Upstream's bench has no such benchmark.
    Absent,
}

/// Upstream's name for a benchmark in the bench of each kernel tree, from
/// a version on until the next entry's.
pub type Upstream = &'static [(Version, Up)];

#[derive(Debug, Clone, Copy)]
pub struct Bench {
    pub name: &'static str,
    pub family: &'static Family,
    /// The BPF program under test (also the counting one), if any.
    pub prog: Option<&'static str>,
    pub attach: Attach,
    pub trigger: Trigger,
    pub feature: Feature,
    pub upstream: Upstream,
    pub arch: ArchSupport,
    /// Which way the rate improves (events per second: higher, for all
    /// benchmarks so far).
    pub better: Better,
    /// How upstream's bench prints its figures (its family's, but
    /// bloom-false-positive's and bpf-hashmap-lookup's).
    pub reporter: Reporter,
    /// Its family's own long options in upstream's bench (its family's,
    /// but where upstream gives the benchmark no parser: None, it takes
    /// any, as bpf-hashmap-full-update).
    pub knobs: Option<&'static [&'static str]>,
}

impl Bench {
    /// Events are counted by BPF when a program runs, else by the producers.
    pub fn counts_in_bpf(&self) -> bool {
        self.prog.is_some()
    }

    pub fn runs_here(&self) -> bool {
        self.runs_on(cfg!(target_arch = "x86_64"))
    }

    /// Whether a guest binary built for x86-64 (`x86_64`) or for another
    /// architecture runs it.
    pub fn runs_on(&self, x86_64: bool) -> bool {
        match self.arch {
            ArchSupport::Any => true,
            ArchSupport::X86_64 => x86_64,
        }
    }

    /// The benchmark whose rate this one's overhead is measured against,
    /// by its family's rule.
    pub fn baseline(&self) -> Option<&'static Bench> {
        let base = match self.family.baseline {
            Baseline::Named(name) => BENCHES.iter().find(|b| b.name == name),
            Baseline::Alone => None,
            Baseline::SameTrigger => BENCHES.iter().find(|b| {
                b.family == self.family
                    && b.attach == Attach::None
                    && b.trigger.same_kind(self.trigger)
            }),
        }?;
        (base.name != self.name).then_some(base)
    }

    /// The program under test in a run with `--stacktrace` or without: its
    /// twin that walks the stack (`NAME_stack`, bpf/trigger.bpf.c) where
    /// it has one.
    pub fn program(&self, stacktrace: bool) -> Option<&'static str> {
        let prog = self.prog?;
        let twin = stacktrace
            .then(|| {
                SECTIONS.iter().find(|(obj, p, _)| {
                    *obj == self.family.name && p.strip_suffix("_stack") == Some(prog)
                })
            })
            .flatten();
        Some(twin.map_or(prog, |(_, p, _)| *p))
    }

    /// The programs the benchmark loads, each once: the one under test (or
    /// its stack-walking twin), the do-nothing one of the `-all`
    /// benchmarks, the test_run driver.
    pub fn programs(&self, stacktrace: bool) -> Vec<&'static str> {
        let mut progs: Vec<&'static str> = self.program(stacktrace).into_iter().collect();
        if let Attach::AlsoEverywhere { empty } = self.attach {
            progs.push(empty);
        }
        if let Trigger::TestRun(driver) = self.trigger {
            progs.push(driver);
        }
        progs.dedup();
        progs
    }

    /// The section of the program under test, as compiled (without the
    /// "?" of autoload off).
    pub fn section(&self) -> Option<&'static str> {
        section_of(self.family, self.prog?)
    }

    /// Where the program attaches, for `list`: its section, and for
    /// uprobes the target function.
    pub fn attach_point(&self) -> String {
        let section = self.section().unwrap_or("?");
        match (self.attach, self.trigger) {
            (Attach::None, _) => match self.prog {
                None => "nothing (user-space count)".into(),
                Some(p) => format!("nothing (counted by {p})"),
            },
            (Attach::Uprobe { .. }, Trigger::Call(t)) => {
                format!("{section} trig_uprobe_target_{t:?}").to_lowercase()
            }
            (Attach::AlsoEverywhere { .. }, _) => format!("{section} + every function"),
            _ => section.into(),
        }
    }

    /// How the program under test attaches: the kind that its section
    /// gives libbpf (`kprobe`, `fentry`, `tp`, `raw_tp`, `uprobe.multi`,
    /// `usdt`, ...), or `none`.
    pub fn attach_kind(&self) -> &'static str {
        match self.attach {
            Attach::None => "none",
            _ => self
                .section()
                .map_or("?", |s| s.split_once('/').map_or(s, |(kind, _)| kind)),
        }
    }

    /// A result of this benchmark at point `name`, nothing measured yet,
    /// with what readers of results take from the registry: its family
    /// (`group`), baseline, attach kind and better direction.
    pub fn result(&self, name: &str, producers: usize) -> BenchResult {
        BenchResult {
            baseline: self.baseline().map(|b| b.name.into()),
            attach: Some(self.attach_kind().into()),
            ..BenchResult::new(name, self.name, self.family.name, producers, self.better)
        }
    }

    /// Upstream's name for this benchmark in the bench of kernel `version`.
    pub fn upstream_name(&self, version: Version) -> Option<&'static str> {
        let (_, up) = self.upstream.iter().rev().find(|(v, _)| *v <= version)?;
        match up {
            Up::Same => Some(self.name),
            Up::As(name) => Some(name),
            Up::Absent => None,
        }
    }
}

/// The section of program `prog` in `family`'s object, as compiled.
pub(crate) fn section_of(family: &Family, prog: &str) -> Option<&'static str> {
    SECTIONS
        .iter()
        .find(|(obj, p, _)| *obj == family.name && *p == prog)
        .map(|(_, _, section)| *section)
}

/// The (major, minor) of a kernel release such as `6.12.117+deb12-amd64`.
pub fn version_of(release: &str) -> Option<Version> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The version of the running kernel.
pub fn running_version() -> Result<Version, Error> {
    let uts = nix::sys::utsname::uname().map_err(|e| infra(format!("uname: {e}")))?;
    let release = uts.release().to_string_lossy();
    version_of(&release).ok_or_else(|| infra(format!("kernel release {release}: no version in it")))
}

/// Shorthand constructor keeping the table one line per benchmark.
const fn b(
    name: &'static str,
    family: &'static Family,
    prog: Option<&'static str>,
    attach: Attach,
    trigger: Trigger,
    feature: Feature,
    upstream: Upstream,
) -> Bench {
    Bench {
        name,
        family,
        prog,
        attach,
        trigger,
        feature,
        upstream,
        arch: ArchSupport::Any,
        better: Better::Higher,
        reporter: family.reporter,
        knobs: family.knobs,
    }
}

const fn x86(mut bench: Bench) -> Bench {
    bench.arch = ArchSupport::X86_64;
    bench
}

const fn reports(mut bench: Bench, reporter: Reporter) -> Bench {
    bench.reporter = reporter;
    bench
}

/// A benchmark upstream gives no parser of its own: it takes any family's
/// options.
const fn any_knobs(mut bench: Bench) -> Bench {
    bench.knobs = None;
    bench
}

use Attach::{None as Nothing, Section, Uprobe};
use Feature as F;
use Trigger::{Call, Count, Getpgid, Rename, TestRun};
use Up::{Absent, As, Same};

const DRV: Trigger = TestRun("trig_driver");
const KFN: Trigger = TestRun("trig_driver_kfunc");
const UP: Attach = Uprobe {
    ret: false,
    multi: false,
};
const URET: Attach = Uprobe {
    ret: true,
    multi: false,
};
const UPM: Attach = Uprobe {
    ret: false,
    multi: true,
};
const URETM: Attach = Uprobe {
    ret: true,
    multi: true,
};
const KPM_ALL: Attach = Attach::AlsoEverywhere {
    empty: "trig_kprobe_multi_empty",
};
const KRETPM_ALL: Attach = Attach::AlsoEverywhere {
    empty: "trig_kretprobe_multi_empty",
};
const T: &Family = &TRIGGER;
const R: &Family = &RENAME;
const S: &Family = &STRNCMP;
const C: &Family = &COUNT;
const L: &Family = &LOOP;
const BF: &Family = &BLOOM;
const H: &Family = &HASHMAP;
const LS: &Family = &LOCAL_STORAGE;
const HM: &Family = &HTAB_MEM;
const NOP: &Family = &BPF_NOP;
const LPM: &Family = &LPM_TRIE;
const XDP: Trigger = Trigger::Packet("run_bench");

// Upstream's bench by kernel tree, as read from its sources: 6.1 (uprobe
// targets "with-nop" and "without-nop", a bare ret; uprobe-base the
// unprobed loop), 6.9 (more attach types, uprobe-{nop,push,ret}), 6.10
// (the batched design takes over trig-kprobe and the other names of the
// syscall-driven benchmarks, whose baseline is now trig-syscall-count; the
// rest of that design is dropped). Multi-uprobes are taken from 6.10 and
// the x86 nop5 targets (uprobe_multi ones too) and the -all benchmarks
// from 6.18 (when the nop5 optimisation came); the USDT benchmarks from
// 7.1. The nop10 ones are ours: 7.2's bench still has only nop5 targets,
// which 7.2 no longer optimises.
const V0: Version = (0, 0);
const V6_9: Version = (6, 9);
const V6_10: Version = (6, 10);
const ALWAYS: Upstream = &[(V0, Same)];
const SINCE_5_16: Upstream = &[(V0, Absent), ((5, 16), Same)];
const SINCE_5_17: Upstream = &[(V0, Absent), ((5, 17), Same)];
const OURS: Upstream = &[(V0, Absent)];
const UNTIL_6_10: Upstream = &[(V0, Same), (V6_10, Absent)];
const ONLY_6_9: Upstream = &[(V0, Absent), (V6_9, Same), (V6_10, Absent)];
const SINCE_6_9: Upstream = &[(V0, Absent), (V6_9, Same)];
const SINCE_6_10: Upstream = &[(V0, Absent), (V6_10, Same)];
const NOP5: Upstream = &[(V0, Absent), ((6, 18), Same)];
const SINCE_6_18: Upstream = NOP5;
const SINCE_7_1: Upstream = &[(V0, Absent), ((7, 1), Same)];
const SINCE_6_0: Upstream = &[(V0, Absent), ((6, 0), Same)];
const SINCE_6_3: Upstream = &[(V0, Absent), ((6, 3), Same)];
/// Cloudflare's, 2025: in 7.2's tree, not in 6.12's (its first release
/// not read).
const LPM_BENCH: Upstream = &[(V0, Absent), ((6, 17), Same)];
/// Named with a typo when it came (6.0), mended with the lookup's (6.3).
const FULL_UPDATE: Upstream = &[
    (V0, Absent),
    ((6, 0), As("bpf-hashmap-ful-update")),
    ((6, 3), Same),
];
/// Hou Tao's, 2023: absent from 6.1's tree, in 7.2's (6.6 as far as
/// read).
const HTAB_MEM_BENCH: Upstream = &[(V0, Absent), ((6, 6), Same)];
/// In 7.2's tree (Debian's linux-source-7.2), 7.1's not read: the
/// resizable hash map's twins of the hash map's benchmarks, rhtab-mem and
/// bpf-nop.
const SINCE_7_2: Upstream = &[(V0, Absent), ((7, 2), Same)];
/// In torvalds' tree after 7.2 (Debian's linux-source-7.2 has no
/// bench_bpf_for.c): the next release's.
const BPF_FOR: Upstream = &[(V0, Absent), ((7, 3), Same)];
/// `6.10: NAME`: upstream's NAME from 6.10 on; `old: NAME`: upstream's
/// NAME before 6.9, ours from then on.
macro_rules! up {
    (6.10: $name:literal) => {
        &[(V0, Absent), (V6_10, As($name))]
    };
    (old: $old:literal) => {
        &[(V0, As($old)), (V6_9, Same)]
    };
}

#[rustfmt::skip]
pub static BENCHES: &[Bench] = &[
    // syscall-driven trigger benchmarks (the original upstream design)
    b("trig-base", T, None, Nothing, Getpgid, F::None, &[(V0, Same), (V6_10, As("trig-syscall-count"))]),
    b("trig-tp", T, Some("trig_tp"), Section, Getpgid, F::Tracepoints, UNTIL_6_10),
    b("trig-rawtp", T, Some("trig_rawtp"), Section, Getpgid, F::Tracepoints, UNTIL_6_10),
    b("trig-kprobe", T, Some("trig_kprobe"), Section, Getpgid, F::Kprobes, UNTIL_6_10),
    b("trig-kretprobe", T, Some("trig_kretprobe"), Section, Getpgid, F::Kprobes, ONLY_6_9),
    b("trig-kprobe-multi", T, Some("trig_kprobe_multi"), Section, Getpgid, F::KprobeMulti, ONLY_6_9),
    b("trig-kretprobe-multi", T, Some("trig_kretprobe_multi"), Section, Getpgid, F::KprobeMulti, ONLY_6_9),
    b("trig-fentry", T, Some("trig_fentry"), Section, Getpgid, F::Trampolines, UNTIL_6_10),
    b("trig-fexit", T, Some("trig_fexit"), Section, Getpgid, F::Trampolines, ONLY_6_9),
    b("trig-fmodret", T, Some("trig_fmodret"), Section, Getpgid, F::ErrorInjection, UNTIL_6_10),
    b("trig-fentry-sleep", T, Some("trig_fentry_sleep"), Section, Getpgid, F::ErrorInjection, UNTIL_6_10),
    // batched in-kernel trigger benchmarks (upstream since 6.10)
    b("trig-kernel-count", T, Some("trig_kernel_count"), Nothing, TestRun("trig_kernel_count"), F::TestRun, SINCE_6_10),
    b("trig-batch-kprobe", T, Some("trig_batch_kprobe"), Section, DRV, F::Kprobes, up!(6.10: "trig-kprobe")),
    b("trig-batch-kretprobe", T, Some("trig_batch_kretprobe"), Section, DRV, F::Kprobes, up!(6.10: "trig-kretprobe")),
    b("trig-batch-kprobe-multi", T, Some("trig_batch_kprobe_multi"), Section, DRV, F::KprobeMulti, up!(6.10: "trig-kprobe-multi")),
    b("trig-batch-kretprobe-multi", T, Some("trig_batch_kretprobe_multi"), Section, DRV, F::KprobeMulti, up!(6.10: "trig-kretprobe-multi")),
    b("trig-kprobe-multi-all", T, Some("trig_batch_kprobe_multi"), KPM_ALL, DRV, F::KprobeMulti, SINCE_6_18),
    b("trig-kretprobe-multi-all", T, Some("trig_batch_kretprobe_multi"), KRETPM_ALL, DRV, F::KprobeMulti, SINCE_6_18),
    b("trig-batch-fentry", T, Some("trig_batch_fentry"), Section, DRV, F::Trampolines, up!(6.10: "trig-fentry")),
    b("trig-batch-fexit", T, Some("trig_batch_fexit"), Section, DRV, F::Trampolines, up!(6.10: "trig-fexit")),
    b("trig-batch-fmodret", T, Some("trig_batch_fmodret"), Section, KFN, F::TestKfunc, up!(6.10: "trig-fmodret")),
    b("trig-batch-tp", T, Some("trig_batch_tp"), Section, KFN, F::TestKfunc, up!(6.10: "trig-tp")),
    b("trig-batch-rawtp", T, Some("trig_batch_rawtp"), Section, KFN, F::TestKfunc, up!(6.10: "trig-rawtp")),
    // user-space probes on functions of this binary
    b("trig-usermode-count", T, None, Nothing, Call(UTarget::Nop), F::None, up!(old: "trig-uprobe-base")),
    b("trig-uprobe-nop", T, Some("trig_uprobe"), UP, Call(UTarget::Nop), F::Uprobes, up!(old: "trig-uprobe-with-nop")),
    b("trig-uprobe-push", T, Some("trig_uprobe"), UP, Call(UTarget::Push), F::Uprobes, SINCE_6_9),
    b("trig-uprobe-ret", T, Some("trig_uprobe"), UP, Call(UTarget::Ret), F::Uprobes, up!(old: "trig-uprobe-without-nop")),
    x86(b("trig-uprobe-nop5", T, Some("trig_uprobe"), UP, Call(UTarget::Nop5), F::Uprobes, NOP5)),
    b("trig-uretprobe-nop", T, Some("trig_uretprobe"), URET, Call(UTarget::Nop), F::Uprobes, up!(old: "trig-uretprobe-with-nop")),
    b("trig-uretprobe-push", T, Some("trig_uretprobe"), URET, Call(UTarget::Push), F::Uprobes, SINCE_6_9),
    b("trig-uretprobe-ret", T, Some("trig_uretprobe"), URET, Call(UTarget::Ret), F::Uprobes, up!(old: "trig-uretprobe-without-nop")),
    x86(b("trig-uretprobe-nop5", T, Some("trig_uretprobe"), URET, Call(UTarget::Nop5), F::Uprobes, NOP5)),
    x86(b("trig-uprobe-nop10", T, Some("trig_uprobe"), UP, Call(UTarget::Nop10), F::Uprobes, OURS)),
    x86(b("trig-uretprobe-nop10", T, Some("trig_uretprobe"), URET, Call(UTarget::Nop10), F::Uprobes, OURS)),
    b("trig-uprobe-multi-nop", T, Some("trig_uprobe_multi"), UPM, Call(UTarget::Nop), F::UprobeMulti, SINCE_6_10),
    b("trig-uprobe-multi-push", T, Some("trig_uprobe_multi"), UPM, Call(UTarget::Push), F::UprobeMulti, SINCE_6_10),
    b("trig-uprobe-multi-ret", T, Some("trig_uprobe_multi"), UPM, Call(UTarget::Ret), F::UprobeMulti, SINCE_6_10),
    b("trig-uretprobe-multi-nop", T, Some("trig_uretprobe_multi"), URETM, Call(UTarget::Nop), F::UprobeMulti, SINCE_6_10),
    b("trig-uretprobe-multi-push", T, Some("trig_uretprobe_multi"), URETM, Call(UTarget::Push), F::UprobeMulti, SINCE_6_10),
    b("trig-uretprobe-multi-ret", T, Some("trig_uretprobe_multi"), URETM, Call(UTarget::Ret), F::UprobeMulti, SINCE_6_10),
    x86(b("trig-uprobe-multi-nop5", T, Some("trig_uprobe_multi"), UPM, Call(UTarget::Nop5), F::UprobeMulti, NOP5)),
    x86(b("trig-uretprobe-multi-nop5", T, Some("trig_uretprobe_multi"), URETM, Call(UTarget::Nop5), F::UprobeMulti, NOP5)),
    x86(b("trig-uprobe-multi-nop10", T, Some("trig_uprobe_multi"), UPM, Call(UTarget::Nop10), F::UprobeMulti, OURS)),
    x86(b("trig-uretprobe-multi-nop10", T, Some("trig_uretprobe_multi"), URETM, Call(UTarget::Nop10), F::UprobeMulti, OURS)),
    b("trig-usdt", T, Some("trig_usdt"), Section, Call(UTarget::Usdt), F::Uprobes, &[(V0, Absent), ((7, 1), As("trig-usdt-nop"))]),
    x86(b("trig-usdt-nop5", T, Some("trig_usdt_nop5"), Section, Call(UTarget::UsdtNop5), F::Uprobes, SINCE_7_1)),
    x86(b("trig-usdt-nop10", T, Some("trig_usdt_nop10"), Section, Call(UTarget::UsdtNop10), F::Uprobes, OURS)),
    // task-rename overhead: __set_task_comm() through /proc/self/comm
    b("rename-base", R, None, Nothing, Rename, F::None, ALWAYS),
    b("rename-kprobe", R, Some("rename_kprobe"), Section, Rename, F::Kprobes, ALWAYS),
    b("rename-kretprobe", R, Some("rename_kretprobe"), Section, Rename, F::Kprobes, ALWAYS),
    b("rename-rawtp", R, Some("rename_rawtp"), Section, Rename, F::Tracepoints, ALWAYS),
    b("rename-fentry", R, Some("rename_fentry"), Section, Rename, F::Trampolines, ALWAYS),
    b("rename-fexit", R, Some("rename_fexit"), Section, Rename, F::Trampolines, ALWAYS),
    // bpf_strncmp() against a bounded loop, on tp syscalls/sys_enter_getpgid
    b("strncmp-baseline", S, Some("strncmp_baseline"), Section, Getpgid, F::Tracepoints, OURS),
    b("strncmp-no-helper", S, Some("strncmp_no_helper"), Section, Getpgid, F::Tracepoints, SINCE_5_17),
    b("strncmp-helper", S, Some("strncmp_helper"), Section, Getpgid, F::StrncmpHelper, SINCE_5_17),
    // the harness's own ceiling: producers that only count
    b("count-global", C, None, Nothing, Count { shared: true }, F::None, ALWAYS),
    b("count-local", C, None, Nothing, Count { shared: false }, F::None, ALWAYS),
    // an empty loop body, --nr_loops times a call, 1000 calls a getpgid()
    b("bpf-loop", L, Some("bpf_loop_bench"), Section, Getpgid, F::BpfLoop, SINCE_5_17),
    b("bpf-for", L, Some("bpf_for_bench"), Section, Getpgid, F::OpenCodedIterators, BPF_FOR),
    // a Bloom filter's every entry a getpgid(), or 1024 random lookups of a hash map
    b("bloom-lookup", BF, Some("bloom_lookup"), Section, Getpgid, F::BloomFilter, SINCE_5_16),
    b("bloom-update", BF, Some("bloom_update"), Section, Getpgid, F::BloomFilter, SINCE_5_16),
    reports(b("bloom-false-positive", BF, Some("bloom_hashmap_lookup"), Section, Getpgid, F::BloomFilter, SINCE_5_16), Reporter::FalseHits),
    b("hashmap-without-bloom", BF, Some("bloom_hashmap_lookup"), Section, Getpgid, F::BloomFilter, SINCE_5_16),
    b("hashmap-with-bloom", BF, Some("bloom_hashmap_lookup"), Section, Getpgid, F::BloomFilter, SINCE_5_16),
    // a full hash map's failing update, and a lookup, in bpf_loop() runs the program times
    any_knobs(b("bpf-hashmap-full-update", H, Some("full_update"), Section, Getpgid, F::BpfLoop, FULL_UPDATE)),
    reports(b("bpf-hashmap-lookup", H, Some("lookup"), Section, Getpgid, F::BpfLoop, SINCE_6_3), Reporter::Lookup),
    any_knobs(b("bpf-rhashmap-full-update", H, Some("full_update"), Section, Getpgid, F::ResizableHash, SINCE_7_2)),
    reports(b("bpf-rhashmap-lookup", H, Some("lookup"), Section, Getpgid, F::ResizableHash, SINCE_7_2), Reporter::Lookup),
    // 10,000 gets of --nr_maps task storages (or a hash map's random keys) a getpgid()
    b("local-storage-cache-seq-get", LS, Some("get_local"), Section, Getpgid, F::TaskStorage, SINCE_6_0),
    b("local-storage-cache-int-get", LS, Some("get_local"), Section, Getpgid, F::TaskStorage, SINCE_6_0),
    b("local-storage-cache-hashmap-control", LS, Some("get_local"), Section, Getpgid, F::TaskStorage, SINCE_6_0),
    // a test run's bpf_loop() of --nr_entries keys of --prefix_len bits, in turn or --random
    b("lpm-trie-noop", LPM, Some("run_bench"), Nothing, XDP, F::BpfLoop, LPM_BENCH),
    b("lpm-trie-baseline", LPM, Some("run_bench"), Nothing, XDP, F::BpfLoop, LPM_BENCH),
    b("lpm-trie-lookup", LPM, Some("run_bench"), Nothing, XDP, F::BpfLoop, LPM_BENCH),
    reports(b("lpm-trie-insert", LPM, Some("run_bench"), Nothing, XDP, F::BpfLoop, LPM_BENCH), Reporter::TimedOps),
    b("lpm-trie-update", LPM, Some("run_bench"), Nothing, XDP, F::BpfLoop, LPM_BENCH),
    reports(b("lpm-trie-delete", LPM, Some("run_bench"), Nothing, XDP, F::BpfLoop, LPM_BENCH), Reporter::TimedOps),
    // a trie of --nr_entries keys made, filled and closed; its free timed by fentry and fexit
    reports(b("lpm-trie-free", LPM, Some("trie_free_entry"), Section, Trigger::MapFree, F::Trampolines, LPM_BENCH), Reporter::TimedFrees),
    // OP_BATCH (64) writes or deletes of a hash map a getpgid(), its memory cgroup read
    b("htab-mem", HM, Some("overwrite"), Section, Getpgid, F::MemoryCgroup, HTAB_MEM_BENCH),
    b("rhtab-mem", HM, Some("overwrite"), Section, Getpgid, F::ResizableHashMemory, SINCE_7_2),
    // a test run's empty may_goto loop, timed
    b("bpf-nop", NOP, Some("bench_nop"), Nothing, Trigger::Run("bench_nop"), F::MayGoto, SINCE_7_2),
];

/// The benchmarks this build can run on its architecture.
pub fn all() -> impl Iterator<Item = &'static Bench> {
    BENCHES.iter().filter(|b| b.runs_here())
}

pub fn find(name: &str) -> Option<&'static Bench> {
    all().find(|b| b.name == name)
}

/// The benchmark that upstream's bench of kernel `version` runs for
/// `name`: its name there first (6.10 gave the batched benchmarks the
/// syscall-driven ones' names), then its name in any other version's bench
/// (`trig-syscall-count`, `trig-uprobe-with-nop`), then ours.
pub fn by_upstream_name(name: &str, version: Version) -> Option<&'static Bench> {
    let any_version = |b: &&Bench| {
        b.upstream
            .iter()
            .any(|(v, _)| b.upstream_name(*v) == Some(name))
    };
    all()
        .find(|b| b.upstream_name(version) == Some(name))
        .or_else(|| all().find(any_version))
        .or_else(|| find(name))
}

/// The names `bench --list` shows for kernel `version`: each benchmark by
/// the name that [`by_upstream_name`] resolves to it, in table order.
pub fn upstream_names(version: Version) -> Vec<&'static str> {
    all()
        .filter_map(|b| {
            let name = b.upstream_name(version).unwrap_or(b.name);
            let reaches = by_upstream_name(name, version).is_some_and(|r| r.name == b.name);
            reaches.then_some(name)
        })
        .collect()
}

/// One run of one benchmark.
#[derive(Debug, Clone)]
pub struct RunPoint {
    pub bench: &'static Bench,
    pub producers: usize,
    pub str_len: Option<u32>,
    /// Name in the report: the benchmark plus its parameters.
    pub name: String,
}

/// Every point of `benches`: one per producer count (named `/p=N` when
/// several are asked for) and per value of the family's sweep (string
/// lengths `cmp_str_lens`).
pub fn points(
    benches: &[&'static Bench],
    producers: &[usize],
    cmp_str_lens: &[u32],
) -> Vec<RunPoint> {
    let mut out = Vec::new();
    for &bench in benches {
        let lens: Vec<Option<u32>> = match bench.family.sweep {
            Sweep::CmpStrLen => cmp_str_lens.iter().copied().map(Some).collect(),
            Sweep::None => vec![None],
        };
        for &p in producers {
            for &str_len in &lens {
                let mut name = bench.name.to_string();
                if producers.len() > 1 {
                    name.push_str(&format!("/p={p}"));
                }
                if let Some(len) = str_len {
                    name.push_str(&format!("/len={len}"));
                }
                out.push(RunPoint {
                    bench,
                    producers: p,
                    str_len,
                    name,
                });
            }
        }
    }
    out
}

/// Shell-style glob with `*` and `?`.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// The benchmarks matching any of `filters` (all when empty), in table
/// order. A filter that matches nothing is an error listing valid names.
pub fn select(filters: &[String]) -> Result<Vec<&'static Bench>, Error> {
    if filters.is_empty() {
        return Ok(all().collect());
    }
    for f in filters {
        if !all().any(|b| glob_match(f, b.name)) {
            let names: Vec<&str> = all().map(|b| b.name).collect();
            return Err(usage(format!(
                "no benchmark matches '{f}'; valid names: {}",
                names.join(", ")
            )));
        }
    }
    let chosen: Vec<&Bench> = all()
        .filter(|b| filters.iter().any(|f| glob_match(f, b.name)))
        .collect();
    // an overhead is over the baseline measured in the same boot: a
    // benchmark chosen brings its baseline along, as it would be expected
    Ok(all()
        .filter(|b| {
            chosen
                .iter()
                .any(|c| c.name == b.name || c.baseline().is_some_and(|base| base.name == b.name))
        })
        .collect())
}

/// The `list` table: every benchmark this build runs, with upstream's name
/// for it in the bench of kernel `version`.
pub fn listing(version: Version) -> String {
    let upstream = format!("UPSTREAM {}.{}", version.0, version.1);
    let mut out = format!(
        "{:<w$} {:<w$} {:<13} {:<40} {:<30} NEEDS\n",
        "BENCHMARK",
        upstream,
        "GROUP",
        "ATTACHES TO",
        "TRIGGER",
        w = NAME_WIDTH
    );
    for b in all() {
        out.push_str(&format!(
            "{:<w$} {:<w$} {:<13} {:<40} {:<30} {}\n",
            b.name,
            b.upstream_name(version).unwrap_or("-"),
            b.family.name,
            b.attach_point(),
            b.trigger.describe(),
            b.feature.needs(),
            w = NAME_WIDTH
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_name_fits_the_tables_column() {
        for b in super::BENCHES {
            assert!(b.name.len() < super::NAME_WIDTH, "{}", b.name);
            assert!(b.family.name.len() <= 13, "{}", b.family.name);
        }
    }

    #[test]
    fn a_benchmark_chosen_brings_its_baseline() {
        let names = |f: &[&str]| -> Vec<&str> {
            let f: Vec<String> = f.iter().map(|s| s.to_string()).collect();
            select(&f).unwrap().iter().map(|b| b.name).collect()
        };
        assert_eq!(names(&["trig-kprobe"]), ["trig-base", "trig-kprobe"]);
        assert_eq!(names(&["trig-base"]), ["trig-base"]);
        assert!(names(&["rename-fexit"]).contains(&"rename-base"));
    }

    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_family_has_its_object_and_every_program_is_in_it() {
        for family in FAMILIES {
            assert_eq!(
                SECTIONS.iter().any(|(obj, ..)| obj == &family.name),
                family.object,
                "bpf/{}.bpf.c",
                family.name
            );
        }
        for bench in BENCHES {
            assert!(FAMILIES.contains(&bench.family), "{}", bench.name);
            let driver = match bench.trigger {
                Trigger::TestRun(d) => Some(d),
                _ => None,
            };
            for p in bench.prog.into_iter().chain(driver) {
                assert!(
                    section_of(bench.family, p).is_some(),
                    "{}: no program {p}",
                    bench.name
                );
            }
        }
    }

    #[test]
    fn attach_points_come_from_the_sections() {
        for bench in BENCHES {
            let point = bench.attach_point();
            match bench.attach {
                Attach::None => assert!(point.starts_with("nothing"), "{}", bench.name),
                Attach::Section => {
                    assert_eq!(Some(point.as_str()), bench.section(), "{}", bench.name);
                    // libbpf attaches by it: it must name the point
                    assert!(point.contains('/'), "{}: {point}", bench.name);
                }
                Attach::AlsoEverywhere { empty } => {
                    // the empty program is of the same kind, probing entry
                    // or return as the program under test does
                    let section = bench.section().unwrap();
                    assert_eq!(section_of(bench.family, empty), Some(section));
                    assert!(point.starts_with(section), "{point}");
                }
                Attach::Uprobe { ret, multi } => {
                    let kind = if ret { "uretprobe" } else { "uprobe" };
                    let section = bench.section().unwrap();
                    assert!(section.starts_with(kind), "{}", bench.name);
                    assert_eq!(section.ends_with(".multi"), multi, "{}", bench.name);
                    assert!(point.contains("trig_uprobe_target_"), "{point}");
                }
            }
        }
        assert_eq!(
            find("trig-kprobe").unwrap().attach_point(),
            if cfg!(target_arch = "aarch64") {
                "kprobe/__arm64_sys_getpgid"
            } else {
                "kprobe/__x64_sys_getpgid"
            }
        );
    }

    #[test]
    fn names_and_baselines_follow_the_families() {
        let mut seen = HashSet::new();
        for bench in BENCHES {
            assert!(seen.insert(bench.name), "duplicate {}", bench.name);
            assert!(bench.family.names(bench.name), "{}", bench.name);
            // a family without an object runs no program
            assert!(
                bench.family.object || bench.prog.is_none(),
                "{}",
                bench.name
            );
            // something must count every event
            assert!(bench.prog.is_some() || bench.attach == Attach::None);
            // uprobes need a user-space call to attach to
            if let Attach::Uprobe { .. } = bench.attach {
                assert!(matches!(bench.trigger, Trigger::Call(_)), "{}", bench.name);
            }
            match bench.baseline() {
                Some(base) => {
                    assert_eq!(base.family, bench.family, "{}", bench.name);
                    assert!(base.baseline().is_none(), "{}", bench.name);
                    assert_eq!(base.arch, ArchSupport::Any, "{}", bench.name);
                }
                // only a baseline has none, where its family has them
                None => assert!(
                    bench.family.baseline == Baseline::Alone
                        || BENCHES
                            .iter()
                            .any(|b| b.baseline().is_some_and(|x| x.name == bench.name)),
                    "{} has no baseline and is none",
                    bench.name
                ),
            }
        }
        // one baseline per kind of trigger where the family derives them
        for family in FAMILIES
            .iter()
            .filter(|f| f.baseline == Baseline::SameTrigger)
        {
            let bases: Vec<&Bench> = BENCHES
                .iter()
                .filter(|b| b.family == *family && b.attach == Attach::None)
                .collect();
            for (i, a) in bases.iter().enumerate() {
                for b in &bases[i + 1..] {
                    assert!(!a.trigger.same_kind(b.trigger), "{} and {}", a.name, b.name);
                }
            }
        }
    }

    #[test]
    fn upstream_names_resolve_as_the_bench_of_each_kernel() {
        let on = |name, v| by_upstream_name(name, v).map(|b| b.name);
        // 6.10 moved the names to the batched design
        assert_eq!(on("trig-kprobe", (6, 1)), Some("trig-kprobe"));
        assert_eq!(on("trig-kprobe", (6, 12)), Some("trig-batch-kprobe"));
        assert_eq!(on("trig-syscall-count", (6, 12)), Some("trig-base"));
        // another version's name, and ours, still reach a benchmark
        assert_eq!(on("trig-syscall-count", (6, 1)), Some("trig-base"));
        assert_eq!(on("trig-uprobe-with-nop", (6, 12)), Some("trig-uprobe-nop"));
        assert_eq!(on("trig-base", (6, 12)), Some("trig-base"));
        assert_eq!(on("trig-batch-fentry", (6, 1)), Some("trig-batch-fentry"));
        assert_eq!(
            on("trig-uprobe-multi-nop", (6, 18)),
            Some("trig-uprobe-multi-nop")
        );
        assert_eq!(on("trig-nosuch", (6, 12)), None);
        // every name listed resolves to a benchmark of its own
        for v in [(6, 1), (6, 12), (7, 2)] {
            let names = upstream_names(v);
            let mut benches: Vec<&str> = names.iter().filter_map(|n| on(n, v)).collect();
            assert_eq!(benches.len(), names.len(), "{v:?}");
            benches.dedup();
            assert_eq!(benches.len(), names.len(), "{v:?}");
        }
        // listed by upstream's names, once each: 6.12's trig-kprobe is the
        // batched one, and the syscall-driven one is not reachable there
        let names = upstream_names((6, 12));
        assert!(!names.contains(&"trig-base") && names.contains(&"trig-syscall-count"));
        assert_eq!(names.iter().filter(|n| **n == "trig-kprobe").count(), 1);
    }

    #[test]
    fn upstream_names_are_unique_per_version() {
        let mut versions: Vec<Version> = BENCHES
            .iter()
            .flat_map(|b| b.upstream.iter().map(|(v, _)| *v))
            .collect();
        versions.sort();
        versions.dedup();
        for v in versions {
            let mut seen = HashSet::new();
            for b in BENCHES {
                if let Some(up) = b.upstream_name(v) {
                    assert!(seen.insert(up), "{up} twice at {v:?}");
                    assert!(b.family.names(up), "{up}");
                }
            }
        }
        for b in BENCHES {
            assert!(b.upstream.windows(2).all(|w| w[0].0 < w[1].0), "{}", b.name);
        }
        let name = |bench, v| find(bench).unwrap().upstream_name(v);
        assert_eq!(name("trig-base", (6, 1)), Some("trig-base"));
        assert_eq!(name("trig-base", (6, 12)), Some("trig-syscall-count"));
        assert_eq!(name("trig-kprobe", (6, 12)), None);
        assert_eq!(name("trig-batch-kprobe", (6, 12)), Some("trig-kprobe"));
        assert_eq!(name("trig-batch-kprobe", (6, 1)), None);
        assert_eq!(name("trig-usdt", (7, 2)), Some("trig-usdt-nop"));
        assert_eq!(name("trig-kprobe-multi-all", (6, 12)), None);
        assert_eq!(
            name("trig-kretprobe-multi-all", (7, 2)),
            Some("trig-kretprobe-multi-all")
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(name("trig-usdt-nop5", (7, 1)), Some("trig-usdt-nop5"));
            assert_eq!(
                name("trig-uretprobe-multi-nop5", (6, 18)),
                Some("trig-uretprobe-multi-nop5")
            );
            // 7.2's bench has no nop10 target
            assert_eq!(name("trig-uprobe-nop10", (7, 2)), None);
        }
    }

    #[test]
    fn stacktrace_picks_the_twin_that_walks_the_stack() {
        let prog = |bench, st| find(bench).unwrap().program(st);
        assert_eq!(prog("trig-kprobe", false), Some("trig_kprobe"));
        assert_eq!(prog("trig-kprobe", true), Some("trig_kprobe_stack"));
        assert_eq!(
            prog("trig-batch-fmodret", true),
            Some("trig_batch_fmodret_stack")
        );
        // upstream's list: kprobe, kretprobe, multi, fentry, fexit, fmodret,
        // tp and rawtp, in both designs; uprobes and the rest do not walk
        let walking: Vec<&str> = BENCHES
            .iter()
            .filter(|b| b.program(true) != b.program(false))
            .map(|b| b.name)
            .collect();
        assert_eq!(walking.len(), 20, "{walking:?}");
        for b in &walking {
            assert!(!b.contains("uprobe") && !b.contains("usdt"), "{b}");
        }
        assert!(walking.contains(&"trig-kprobe-multi-all"));
        assert_eq!(prog("trig-uprobe-nop", true), Some("trig_uprobe"));
        assert_eq!(prog("trig-base", true), None);
        assert_eq!(prog("rename-kprobe", true), Some("rename_kprobe"));
    }

    #[test]
    fn only_the_nop10_targets_need_a_newer_kernel_than_their_feature() {
        let needing: Vec<&str> = BENCHES
            .iter()
            .filter(|b| matches!(b.trigger, Trigger::Call(t) if t.needs().is_some()))
            .map(|b| b.name)
            .collect();
        assert_eq!(needing.len(), 5, "{needing:?}");
        assert!(needing.iter().all(|n| n.ends_with("-nop10")), "{needing:?}");
    }

    /// A result of an older file reads as one of today's guest: schema
    /// 4's table was transcribed from these rows (all 46 of them then;
    /// benchmarks added since are in no older file).
    #[test]
    fn older_results_get_what_the_guest_records() {
        let mut known = 0;
        for bench in BENCHES {
            let mut old =
                BenchResult::new(bench.name, bench.name, bench.family.name, 1, bench.better);
            trig_schema::upgrade::fill(&mut old);
            if old.attach.is_some() {
                assert_eq!(old, bench.result(bench.name, 1), "{}", bench.name);
                known += 1;
            }
        }
        assert_eq!(known, 46);
    }

    #[test]
    fn points_expand_producers_and_lengths() {
        let sel = [find("trig-base").unwrap(), find("strncmp-helper").unwrap()];
        let names: Vec<String> = points(&sel, &[1, 4], &[8, 64])
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(
            names,
            [
                "trig-base/p=1",
                "trig-base/p=4",
                "strncmp-helper/p=1/len=8",
                "strncmp-helper/p=1/len=64",
                "strncmp-helper/p=4/len=8",
                "strncmp-helper/p=4/len=64"
            ]
        );
        let one = points(&[find("trig-base").unwrap()], &[1], &[8]);
        assert_eq!(one[0].name, "trig-base");
    }

    #[test]
    fn kernel_versions() {
        assert_eq!(version_of("6.12.117+deb12-amd64"), Some((6, 12)));
        assert_eq!(version_of("6.1.0-57-amd64"), Some((6, 1)));
        assert_eq!(version_of("6.10"), Some((6, 10)));
        assert_eq!(version_of("six"), None);
    }

    #[test]
    fn the_listing_has_one_line_per_benchmark() {
        let listing = listing((6, 12));
        assert_eq!(listing.lines().count(), all().count() + 1);
        assert!(listing.starts_with("BENCHMARK") && listing.contains("UPSTREAM 6.12"));
        assert!(listing
            .lines()
            .any(|l| l.starts_with("trig-base ") && l.contains(" trig-syscall-count ")));
    }

    #[test]
    fn the_architecture_decides_what_runs() {
        for bench in BENCHES {
            assert_eq!(
                find(bench.name).is_some(),
                bench.runs_here(),
                "{}",
                bench.name
            );
        }
    }

    #[test]
    fn globs_and_unknown_names() {
        assert!(glob_match("trig-*probe*", "trig-batch-kretprobe-multi"));
        assert!(!glob_match("trig-*kprobe*", "trig-kretprobe"));
        assert!(glob_match("trig-?probe", "trig-kprobe"));
        assert!(!glob_match("trig-?probe", "trig-kretprobe"));
        for family in FAMILIES {
            let globs: Vec<String> = family.prefixes.iter().map(|p| format!("{p}*")).collect();
            let sel = select(&globs).unwrap();
            assert_eq!(sel.len(), all().filter(|b| b.family == *family).count());
        }
        let err = select(&["trig-nosuch".into()]).unwrap_err();
        assert!(
            err.message.contains("no benchmark matches 'trig-nosuch'")
                && err.message.contains("trig-base")
        );
    }
}
