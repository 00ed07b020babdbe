//! Kernel capability probing: what the running kernel can attach, decided
//! from files and kernel symbols before anything is loaded.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use trig_schema::Capability;

/// A kernel feature a benchmark needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    None,
    Tracepoints,
    Kprobes,
    /// kprobe.multi links (5.18, CONFIG_FPROBE).
    KprobeMulti,
    /// fentry/fexit/fmod_ret trampolines.
    Trampolines,
    /// fmod_ret on a syscall (CONFIG_FUNCTION_ERROR_INJECTION).
    ErrorInjection,
    /// BPF_PROG_TEST_RUN of raw_tp programs (5.10).
    TestRun,
    /// bpf_modify_return_test_tp and bpf_trigger_tp (6.10).
    TestKfunc,
    Uprobes,
    /// uprobe.multi links (6.6).
    UprobeMulti,
    /// bpf_strncmp() (5.17).
    StrncmpHelper,
    /// The bpf_loop() helper (5.17).
    BpfLoop,
    /// Open-coded iterators, bpf_for() (6.4).
    OpenCodedIterators,
    /// The Bloom filter map (5.16).
    BloomFilter,
    /// Task local storage (5.11) gotten in a bpf_loop() (5.17).
    TaskStorage,
    /// The resizable hash map, BPF_MAP_TYPE_RHASH (7.2).
    ResizableHash,
    /// A hash map's memory read from a memory cgroup (CONFIG_MEMCG) and
    /// bpf_loop() (5.17).
    MemoryCgroup,
    /// Both: rhtab-mem.
    ResizableHashMemory,
    /// The may_goto instruction (6.9), upstream's can_loop: no symbol
    /// marks it, the runner asks the kernel's version.
    MayGoto,
}

impl Feature {
    pub fn as_str(self) -> &'static str {
        match self {
            Feature::None => "none",
            Feature::Tracepoints => "tracepoints",
            Feature::Kprobes => "kprobes",
            Feature::KprobeMulti => "kprobe_multi",
            Feature::Trampolines => "trampolines",
            Feature::ErrorInjection => "error_injection",
            Feature::TestRun => "test_run",
            Feature::TestKfunc => "test_kfunc",
            Feature::Uprobes => "uprobes",
            Feature::UprobeMulti => "uprobe_multi",
            Feature::StrncmpHelper => "strncmp_helper",
            Feature::BpfLoop => "bpf_loop",
            Feature::OpenCodedIterators => "open_coded_iterators",
            Feature::BloomFilter => "bloom_filter",
            Feature::TaskStorage => "task_storage",
            Feature::ResizableHash => "resizable_hash",
            Feature::MemoryCgroup => "memory_cgroup",
            Feature::ResizableHashMemory => "resizable_hash_memory",
            Feature::MayGoto => "may_goto",
        }
    }

    /// What a kernel needs for this feature, for messages and `list`.
    pub fn needs(self) -> &'static str {
        match self {
            Feature::None => "-",
            Feature::Tracepoints => "CONFIG_BPF_EVENTS",
            Feature::Kprobes => "CONFIG_KPROBES, CONFIG_KPROBE_EVENTS",
            Feature::KprobeMulti => "5.18+, CONFIG_FPROBE",
            Feature::Trampolines => "BTF, trampolines (x86 5.5+, arm64 6.4+)",
            Feature::ErrorInjection => {
                "CONFIG_FUNCTION_ERROR_INJECTION and trampolines (x86 5.5+, arm64 6.4+)"
            }
            Feature::TestRun => "5.10+ (raw_tp test_run)",
            Feature::TestKfunc => "6.10+ (bpf_modify_return_test_tp)",
            Feature::Uprobes => "CONFIG_UPROBES, CONFIG_UPROBE_EVENTS",
            Feature::UprobeMulti => "6.6+ (uprobe_multi link)",
            Feature::StrncmpHelper => "5.17+ (bpf_strncmp)",
            Feature::BpfLoop => "5.17+ (bpf_loop)",
            Feature::OpenCodedIterators => "6.4+, open-coded iterators: bpf_iter_num_new",
            Feature::BloomFilter => "5.16+ (BPF_MAP_TYPE_BLOOM_FILTER)",
            Feature::TaskStorage => "5.17+ (BPF_MAP_TYPE_TASK_STORAGE, bpf_loop)",
            Feature::ResizableHash => "7.2+ (BPF_MAP_TYPE_RHASH)",
            Feature::MemoryCgroup => "CONFIG_MEMCG (a memory cgroup) and 5.17+ (bpf_loop)",
            Feature::ResizableHashMemory => "7.2+ (BPF_MAP_TYPE_RHASH) and CONFIG_MEMCG",
            Feature::MayGoto => "6.9+ (the may_goto instruction, upstream's can_loop)",
        }
    }
}

/// Kernel symbols whose presence marks a feature.
const SYMBOLS: &[(Feature, &str)] = &[
    (Feature::KprobeMulti, "register_fprobe"),
    (Feature::Trampolines, "bpf_trampoline_link_prog"),
    (Feature::ErrorInjection, "within_error_injection_list"),
    (Feature::TestRun, "bpf_prog_test_run_raw_tp"),
    (Feature::TestKfunc, "bpf_modify_return_test_tp"),
    (Feature::UprobeMulti, "bpf_uprobe_multi_link_attach"),
    (Feature::StrncmpHelper, "bpf_strncmp"),
    (Feature::BpfLoop, "bpf_loop"),
    (Feature::OpenCodedIterators, "bpf_iter_num_new"),
    (Feature::BloomFilter, "bloom_map_alloc"),
    (Feature::TaskStorage, "task_storage_map_alloc"),
    (Feature::ResizableHash, "rhtab_map_alloc"),
    (Feature::MemoryCgroup, "mem_cgroup_css_alloc"),
];

fn kallsyms_with(wanted: &[&str]) -> Option<HashSet<String>> {
    let f = std::fs::File::open("/proc/kallsyms").ok()?;
    let mut found = HashSet::new();
    for line in BufReader::new(f).lines().map_while(Result::ok) {
        // "ffffffff81000000 T name [module]"
        if let Some(name) = line.split_whitespace().nth(2) {
            if wanted.contains(&name) {
                found.insert(name.to_string());
            }
        }
    }
    Some(found)
}

fn file_cap(path: &str) -> Capability {
    Capability {
        supported: Path::new(path).exists(),
        detail: path.to_string(),
    }
}

/// Probes the running kernel. Keys are [`Feature::as_str`] plus `btf`.
pub fn probe() -> BTreeMap<String, Capability> {
    let mut caps = BTreeMap::new();
    caps.insert("btf".into(), file_cap("/sys/kernel/btf/vmlinux"));
    caps.insert(
        Feature::Kprobes.as_str().into(),
        file_cap("/sys/bus/event_source/devices/kprobe"),
    );
    caps.insert(
        Feature::Uprobes.as_str().into(),
        file_cap("/sys/bus/event_source/devices/uprobe"),
    );
    caps.insert(
        Feature::Tracepoints.as_str().into(),
        file_cap("/sys/kernel/tracing/events/syscalls"),
    );
    let names: Vec<&str> = SYMBOLS.iter().map(|(_, s)| *s).collect();
    let syms = kallsyms_with(&names);
    for (feature, sym) in SYMBOLS {
        caps.insert(
            feature.as_str().into(),
            match &syms {
                Some(found) => Capability {
                    supported: found.contains(*sym),
                    detail: format!("kallsyms {sym}"),
                },
                None => Capability {
                    supported: false,
                    detail: "/proc/kallsyms unreadable".into(),
                },
            },
        );
    }
    // rhtab-mem needs both
    let both = has(&caps, Feature::ResizableHash) && has(&caps, Feature::MemoryCgroup);
    caps.insert(
        Feature::ResizableHashMemory.as_str().into(),
        Capability {
            supported: both,
            detail: "resizable_hash and memory_cgroup".into(),
        },
    );
    caps
}

/// Whether the probe found `feature`; unknown features count as present so
/// that the attempt itself decides.
pub fn has(caps: &BTreeMap<String, Capability>, feature: Feature) -> bool {
    caps.get(feature.as_str()).is_none_or(|c| c.supported)
}
