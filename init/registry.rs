//! The benchmark registry: one row per benchmark. A new benchmark is one row
//! here plus its program in `bpf/`; `list`, filtering, capability checks and
//! the JSON names all come from this table.

use crate::caps::Feature;
use crate::report::Better;

/// Which matrix (and so which BPF object and runner) a benchmark is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Trigger,
    Rename,
    Strncmp,
}

impl Group {
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Trigger => "trigger",
            Group::Rename => "rename",
            Group::Strncmp => "strncmp",
        }
    }
}

/// Non-inlined functions in this binary that uprobes attach to; see
/// `matrix::utarget` for why each starts as it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UTarget {
    Nop,
    Push,
    Ret,
    /// x86-64 only: a 5-byte nop, which newer kernels optimise.
    Nop5,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    Any,
    X86_64,
}

#[derive(Debug, Clone, Copy)]
pub struct Bench {
    pub name: &'static str,
    pub group: Group,
    /// The BPF program under test (also the counting one), if any.
    pub prog: Option<&'static str>,
    pub attach: Attach,
    /// Human description of the attach point, for `list`.
    pub point: &'static str,
    pub trigger: Trigger,
    pub feature: Feature,
    /// The benchmark whose rate this one's overhead is measured against.
    pub baseline: Option<&'static str>,
    pub arch: Arch,
    /// Which way the rate improves (events per second: higher, for all
    /// benchmarks so far).
    pub better: Better,
}

impl Bench {
    /// Events are counted by BPF when a program runs, else by the producers.
    pub fn counts_in_bpf(&self) -> bool {
        self.prog.is_some()
    }

    pub fn runs_here(&self) -> bool {
        match self.arch {
            Arch::Any => true,
            Arch::X86_64 => cfg!(target_arch = "x86_64"),
        }
    }
}

/// Shorthand constructor keeping the table one line per benchmark.
#[allow(clippy::too_many_arguments)]
const fn b(
    name: &'static str,
    group: Group,
    prog: Option<&'static str>,
    attach: Attach,
    point: &'static str,
    trigger: Trigger,
    feature: Feature,
    baseline: Option<&'static str>,
) -> Bench {
    Bench {
        name,
        group,
        prog,
        attach,
        point,
        trigger,
        feature,
        baseline,
        arch: Arch::Any,
        better: Better::Higher,
    }
}

const fn x86(mut bench: Bench) -> Bench {
    bench.arch = Arch::X86_64;
    bench
}

use Attach::{None as Nothing, Section, Uprobe};
use Feature as F;
use Group::{Rename as R, Strncmp as S, Trigger as T};
use Trigger::{Call, Getpgid, Rename, TestRun};

/// `KIND` and the getpgid syscall entry function of the target.
macro_rules! sys {
    ($kind:literal) => {
        if cfg!(target_arch = "aarch64") {
            concat!($kind, " __arm64_sys_getpgid")
        } else {
            concat!($kind, " __x64_sys_getpgid")
        }
    };
}
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
const BASE: Option<&str> = Some("trig-base");
const KC: Option<&str> = Some("trig-kernel-count");
const UC: Option<&str> = Some("trig-usermode-count");
const RB: Option<&str> = Some("rename-base");
const SB: Option<&str> = Some("strncmp-baseline");

#[rustfmt::skip]
pub static BENCHES: &[Bench] = &[
    // syscall-driven trigger benchmarks (the original upstream design)
    b("trig-base", T, None, Nothing, "nothing (user-space count)", Getpgid, F::None, None),
    b("trig-tp", T, Some("trig_tp"), Section, "tp syscalls/sys_enter_getpgid", Getpgid, F::Tracepoints, BASE),
    b("trig-rawtp", T, Some("trig_rawtp"), Section, "raw_tp sys_enter (getpgid only)", Getpgid, F::Tracepoints, BASE),
    b("trig-kprobe", T, Some("trig_kprobe"), Section, sys!("kprobe"), Getpgid, F::Kprobes, BASE),
    b("trig-kretprobe", T, Some("trig_kretprobe"), Section, sys!("kretprobe"), Getpgid, F::Kprobes, BASE),
    b("trig-kprobe-multi", T, Some("trig_kprobe_multi"), Section, sys!("kprobe.multi"), Getpgid, F::KprobeMulti, BASE),
    b("trig-kretprobe-multi", T, Some("trig_kretprobe_multi"), Section, sys!("kretprobe.multi"), Getpgid, F::KprobeMulti, BASE),
    b("trig-fentry", T, Some("trig_fentry"), Section, sys!("fentry"), Getpgid, F::Trampolines, BASE),
    b("trig-fexit", T, Some("trig_fexit"), Section, sys!("fexit"), Getpgid, F::Trampolines, BASE),
    b("trig-fmodret", T, Some("trig_fmodret"), Section, sys!("fmod_ret"), Getpgid, F::ErrorInjection, BASE),
    // batched in-kernel trigger benchmarks (upstream since 6.10)
    b("trig-kernel-count", T, Some("trig_kernel_count"), Nothing, "nothing (driver loop count)", TestRun("trig_kernel_count"), F::TestRun, None),
    b("trig-batch-kprobe", T, Some("trig_batch_kprobe"), Section, "kprobe bpf_get_numa_node_id", DRV, F::Kprobes, KC),
    b("trig-batch-kretprobe", T, Some("trig_batch_kretprobe"), Section, "kretprobe bpf_get_numa_node_id", DRV, F::Kprobes, KC),
    b("trig-batch-kprobe-multi", T, Some("trig_batch_kprobe_multi"), Section, "kprobe.multi bpf_get_numa_node_id", DRV, F::KprobeMulti, KC),
    b("trig-batch-kretprobe-multi", T, Some("trig_batch_kretprobe_multi"), Section, "kretprobe.multi bpf_get_numa_node_id", DRV, F::KprobeMulti, KC),
    b("trig-batch-fentry", T, Some("trig_batch_fentry"), Section, "fentry bpf_get_numa_node_id", DRV, F::Trampolines, KC),
    b("trig-batch-fexit", T, Some("trig_batch_fexit"), Section, "fexit bpf_get_numa_node_id", DRV, F::Trampolines, KC),
    b("trig-batch-fmodret", T, Some("trig_batch_fmodret"), Section, "kfunc bpf_modify_return_test_tp", KFN, F::TestKfunc, KC),
    b("trig-batch-tp", T, Some("trig_batch_tp"), Section, "tp bpf_test_run/bpf_trigger_tp", KFN, F::TestKfunc, KC),
    b("trig-batch-rawtp", T, Some("trig_batch_rawtp"), Section, "raw_tp bpf_trigger_tp", KFN, F::TestKfunc, KC),
    // user-space probes on functions of this binary
    b("trig-usermode-count", T, None, Nothing, "nothing (user-space call loop)", Call(UTarget::Nop), F::None, None),
    b("trig-uprobe-nop", T, Some("trig_uprobe"), UP, "trig_uprobe_target_nop (starts with nop)", Call(UTarget::Nop), F::Uprobes, UC),
    b("trig-uprobe-push", T, Some("trig_uprobe"), UP, "trig_uprobe_target_push (starts with push)", Call(UTarget::Push), F::Uprobes, UC),
    b("trig-uprobe-ret", T, Some("trig_uprobe"), UP, "trig_uprobe_target_ret (a bare ret)", Call(UTarget::Ret), F::Uprobes, UC),
    x86(b("trig-uprobe-nop5", T, Some("trig_uprobe"), UP, "trig_uprobe_target_nop5 (5-byte nop)", Call(UTarget::Nop5), F::Uprobes, UC)),
    b("trig-uretprobe-nop", T, Some("trig_uretprobe"), URET, "trig_uprobe_target_nop (starts with nop)", Call(UTarget::Nop), F::Uprobes, UC),
    b("trig-uretprobe-push", T, Some("trig_uretprobe"), URET, "trig_uprobe_target_push (starts with push)", Call(UTarget::Push), F::Uprobes, UC),
    b("trig-uretprobe-ret", T, Some("trig_uretprobe"), URET, "trig_uprobe_target_ret (a bare ret)", Call(UTarget::Ret), F::Uprobes, UC),
    x86(b("trig-uretprobe-nop5", T, Some("trig_uretprobe"), URET, "trig_uprobe_target_nop5 (5-byte nop)", Call(UTarget::Nop5), F::Uprobes, UC)),
    b("trig-uprobe-multi-nop", T, Some("trig_uprobe_multi"), UPM, "trig_uprobe_target_nop (starts with nop)", Call(UTarget::Nop), F::UprobeMulti, UC),
    b("trig-uprobe-multi-push", T, Some("trig_uprobe_multi"), UPM, "trig_uprobe_target_push (starts with push)", Call(UTarget::Push), F::UprobeMulti, UC),
    b("trig-uprobe-multi-ret", T, Some("trig_uprobe_multi"), UPM, "trig_uprobe_target_ret (a bare ret)", Call(UTarget::Ret), F::UprobeMulti, UC),
    b("trig-uretprobe-multi-nop", T, Some("trig_uretprobe_multi"), URETM, "trig_uprobe_target_nop (starts with nop)", Call(UTarget::Nop), F::UprobeMulti, UC),
    b("trig-uretprobe-multi-push", T, Some("trig_uretprobe_multi"), URETM, "trig_uprobe_target_push (starts with push)", Call(UTarget::Push), F::UprobeMulti, UC),
    b("trig-uretprobe-multi-ret", T, Some("trig_uretprobe_multi"), URETM, "trig_uprobe_target_ret (a bare ret)", Call(UTarget::Ret), F::UprobeMulti, UC),
    // task-rename overhead: __set_task_comm() through /proc/self/comm
    b("rename-base", R, None, Nothing, "nothing (user-space count)", Rename, F::None, None),
    b("rename-kprobe", R, Some("rename_kprobe"), Section, "kprobe __set_task_comm", Rename, F::Kprobes, RB),
    b("rename-kretprobe", R, Some("rename_kretprobe"), Section, "kretprobe __set_task_comm", Rename, F::Kprobes, RB),
    b("rename-rawtp", R, Some("rename_rawtp"), Section, "raw_tp task_rename", Rename, F::Tracepoints, RB),
    b("rename-fentry", R, Some("rename_fentry"), Section, "fentry __set_task_comm", Rename, F::Trampolines, RB),
    b("rename-fexit", R, Some("rename_fexit"), Section, "fexit __set_task_comm", Rename, F::Trampolines, RB),
    // bpf_strncmp() against a bounded loop, on tp syscalls/sys_enter_getpgid
    b("strncmp-baseline", S, Some("strncmp_baseline"), Section, "tp sys_enter_getpgid, no comparison", Getpgid, F::Tracepoints, None),
    b("strncmp-no-helper", S, Some("strncmp_no_helper"), Section, "tp sys_enter_getpgid, loop in BPF", Getpgid, F::Tracepoints, SB),
    b("strncmp-helper", S, Some("strncmp_helper"), Section, "tp sys_enter_getpgid, bpf_strncmp()", Getpgid, F::StrncmpHelper, SB),
];

/// The benchmarks this build can run on its architecture.
pub fn all() -> impl Iterator<Item = &'static Bench> {
    BENCHES.iter().filter(|b| b.runs_here())
}

pub fn find(name: &str) -> Option<&'static Bench> {
    all().find(|b| b.name == name)
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
pub fn select(filters: &[String]) -> Result<Vec<&'static Bench>, String> {
    if filters.is_empty() {
        return Ok(all().collect());
    }
    for f in filters {
        if !all().any(|b| glob_match(f, b.name)) {
            let names: Vec<&str> = all().map(|b| b.name).collect();
            return Err(format!(
                "no benchmark matches '{f}'; valid names: {}",
                names.join(", ")
            ));
        }
    }
    Ok(all()
        .filter(|b| filters.iter().any(|f| glob_match(f, b.name)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn programs_in(src: &str) -> HashSet<String> {
        // "int NAME(" lines that follow a SEC() line
        let mut names = HashSet::new();
        let mut after_sec = false;
        for line in src.lines() {
            if line.starts_with("SEC(") {
                after_sec = true;
            } else if after_sec {
                if let Some(rest) = line.strip_prefix("int ") {
                    names.insert(rest.split('(').next().unwrap().to_string());
                }
                after_sec = false;
            }
        }
        names
    }

    #[test]
    fn every_program_exists_in_its_object() {
        let objs = [
            (Group::Trigger, include_str!("../bpf/trigger.bpf.c")),
            (Group::Rename, include_str!("../bpf/rename.bpf.c")),
            (Group::Strncmp, include_str!("../bpf/strncmp.bpf.c")),
        ];
        for (group, src) in objs {
            let progs = programs_in(src);
            for bench in BENCHES.iter().filter(|b| b.group == group) {
                for p in bench.prog.into_iter().chain(match bench.trigger {
                    Trigger::TestRun(d) => Some(d),
                    _ => None,
                }) {
                    assert!(progs.contains(p), "{}: no program {p}", bench.name);
                }
            }
        }
    }

    #[test]
    fn names_unique_and_baselines_valid() {
        let mut seen = HashSet::new();
        for bench in BENCHES {
            assert!(seen.insert(bench.name), "duplicate {}", bench.name);
            assert!(bench.name.starts_with(match bench.group {
                Group::Trigger => "trig-",
                Group::Rename => "rename-",
                Group::Strncmp => "strncmp-",
            }));
            if let Some(base) = bench.baseline {
                let b = BENCHES.iter().find(|b| b.name == base).expect(base);
                assert_eq!(b.group, bench.group, "{}", bench.name);
                assert!(b.baseline.is_none());
            }
            // something must count every event
            assert!(bench.prog.is_some() || bench.attach == Attach::None);
            // uprobes need a user-space call to attach to
            if let Attach::Uprobe { .. } = bench.attach {
                assert!(matches!(bench.trigger, Trigger::Call(_)), "{}", bench.name);
            }
        }
    }

    #[test]
    fn the_whole_upstream_matrix_is_listed() {
        for name in [
            "trig-base",
            "trig-tp",
            "trig-rawtp",
            "trig-kprobe",
            "trig-kretprobe",
            "trig-kprobe-multi",
            "trig-kretprobe-multi",
            "trig-fentry",
            "trig-fexit",
            "trig-fmodret",
            "trig-kernel-count",
            "trig-batch-kprobe",
            "trig-batch-kretprobe",
            "trig-batch-kprobe-multi",
            "trig-batch-kretprobe-multi",
            "trig-batch-fentry",
            "trig-batch-fexit",
            "trig-batch-fmodret",
            "trig-batch-tp",
            "trig-batch-rawtp",
            "trig-usermode-count",
            "trig-uprobe-nop",
            "trig-uprobe-push",
            "trig-uprobe-ret",
            "trig-uretprobe-nop",
            "trig-uretprobe-push",
            "trig-uretprobe-ret",
            "trig-uprobe-multi-nop",
            "trig-uprobe-multi-push",
            "trig-uprobe-multi-ret",
            "trig-uretprobe-multi-nop",
            "trig-uretprobe-multi-push",
            "trig-uretprobe-multi-ret",
            "rename-base",
            "rename-kprobe",
            "rename-kretprobe",
            "rename-rawtp",
            "rename-fentry",
            "rename-fexit",
            "strncmp-baseline",
            "strncmp-no-helper",
            "strncmp-helper",
        ] {
            assert!(find(name).is_some(), "{name} missing");
        }
        assert_eq!(
            find("trig-uprobe-nop5").is_some(),
            cfg!(target_arch = "x86_64")
        );
    }

    #[test]
    fn globs_and_unknown_names() {
        assert!(glob_match("trig-*probe*", "trig-batch-kretprobe-multi"));
        assert!(!glob_match("trig-*kprobe*", "trig-kretprobe"));
        assert!(glob_match("trig-?probe", "trig-kprobe"));
        assert!(!glob_match("trig-?probe", "trig-kretprobe"));
        let sel = select(&["rename-*".into()]).unwrap();
        assert_eq!(sel.len(), 6);
        let err = select(&["trig-nosuch".into()]).unwrap_err();
        assert!(err.contains("no benchmark matches 'trig-nosuch'") && err.contains("trig-base"));
    }
}
