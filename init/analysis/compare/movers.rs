//! Where a change went: for a benchmark profiled on both sides
//! (`vm --profile`), the change of its instructions per event function by
//! function, largest first. A benchmark measured against a baseline (its
//! overhead) is attributed against the baseline's profile of the same
//! boots: what the two share (the syscall path) drops out, and the attach
//! path's own movers show. Beside its instructions, each function's
//! calls per event: a function entered once more per event names itself;
//! with `--cache`, its simulated misses per event, and the movers are
//! ranked by what they add to the cycle estimate, so that a function
//! that gained a miss and no instruction still names itself; with several
//! producers, its coherence misses per event too, and the shared lines
//! whose misses moved (compare/cache_lines.rs).

use super::cache_lines::{self, CacheLineMove, MeanCacheLines};
use super::seen::Observed;
use super::side::results;
use super::source_lines::{self, MeanSourceLines, SourceLineMove};
use super::MIN_MOVE;
use crate::input::Side;
use serde::Serialize;
use std::collections::BTreeMap;
use trig_schema::contention::Weights;
use trig_schema::{BenchResult, CycleWeights, Profile};

/// Functions shown per benchmark.
pub const TOP: usize = 8;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Movers {
    /// The baseline whose profile was taken off each side's, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
    /// NEW − BASE of every instruction per event: the measured change.
    pub total: f64,
    /// Of which in the kernel (BPF programs included).
    pub kernel: f64,
    /// The functions that moved by [`MIN_MOVE`] or more, largest change
    /// first, at most [`TOP`].
    pub functions: Vec<FunctionMove>,
    /// With several producers: the shared lines whose coherence misses
    /// per event moved most.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<CacheLineMove>,
    /// Why the functions have no source lines, when a side has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_lines: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FunctionMove {
    pub name: String,
    pub base: f64,
    pub new: f64,
    pub change: f64,
    /// NEW − BASE of its calls per event.
    #[serde(skip_serializing_if = "is_zero")]
    pub calls: f64,
    /// NEW − BASE of its L1 (instruction and data) misses per event.
    #[serde(skip_serializing_if = "is_zero")]
    pub l1_misses: f64,
    /// NEW − BASE of its last-level misses per event.
    #[serde(skip_serializing_if = "is_zero")]
    pub ll_misses: f64,
    /// NEW − BASE of its coherence misses per event (`-p N` under icount).
    #[serde(skip_serializing_if = "is_zero")]
    pub coherence: f64,
    /// Its source lines that moved most (compare/source_lines.rs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<SourceLineMove>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl FunctionMove {
    /// What it moved the cycle estimate by (its instructions alone
    /// without `--cache`): the order movers are listed in.
    fn cycles(&self) -> f64 {
        let w = CycleWeights::MODEL;
        self.change
            + w.l1_miss * self.l1_misses
            + w.ll_miss * self.ll_misses
            + Weights::MODEL.miss_cycles * self.coherence
    }
}

impl Movers {
    /// The listed functions' changes together.
    pub fn listed(&self) -> f64 {
        self.functions.iter().map(|f| f.change).sum()
    }
}

/// One side's profile: the mean over boots of each figure (a function a
/// boot does not list costs it nothing there).
struct Mean {
    total: f64,
    kernel: f64,
    functions: BTreeMap<String, FunctionMean>,
    lines: MeanSourceLines,
    shared: MeanCacheLines,
    /// Why its profiles have no source lines, if they have none.
    no_lines: Option<String>,
}

/// A function's figures per event: instructions, calls, L1,
/// last-level and coherence misses.
#[derive(Debug, Clone, Copy, Default)]
struct FunctionMean {
    insn: f64,
    calls: f64,
    l1: f64,
    ll: f64,
    coherence: f64,
}

impl FunctionMean {
    /// `self + k * o`.
    fn add(&mut self, o: &FunctionMean, k: f64) {
        self.insn += k * o.insn;
        self.calls += k * o.calls;
        self.l1 += k * o.l1;
        self.ll += k * o.ll;
        self.coherence += k * o.coherence;
    }
}

/// The mean profile of `rs`, when every one is profiled.
fn mean<'a>(rs: impl IntoIterator<Item = &'a BenchResult>) -> Option<Mean> {
    let ps: Vec<&Profile> = rs
        .into_iter()
        .map(|r| r.profile.as_ref())
        .collect::<Option<_>>()?;
    if ps.is_empty() {
        return None;
    }
    let n = ps.len() as f64;
    let mut functions: BTreeMap<String, FunctionMean> = BTreeMap::new();
    for p in &ps {
        for f in &p.functions {
            let a = f.memory.unwrap_or_default();
            let one = FunctionMean {
                insn: f.insn,
                calls: f.calls,
                l1: a.l1i_misses + a.l1d_misses,
                ll: a.ll_misses,
                coherence: f.coherence.map_or(0.0, |c| c.misses),
            };
            functions
                .entry(f.name.clone())
                .or_default()
                .add(&one, 1.0 / n);
        }
    }
    let avg = |get: fn(&Profile) -> f64| ps.iter().map(|p| get(p)).sum::<f64>() / n;
    Some(Mean {
        total: avg(|p| p.total),
        kernel: avg(|p| p.kernel),
        functions,
        lines: MeanSourceLines::of(&ps),
        shared: MeanCacheLines::of(&ps),
        no_lines: source_lines::missing(&ps),
    })
}

impl Mean {
    /// This profile less `base`'s: what the benchmark adds to its baseline.
    fn over(mut self, base: &Mean) -> Mean {
        self.total -= base.total;
        self.kernel -= base.kernel;
        for (name, f) in &base.functions {
            self.functions.entry(name.clone()).or_default().add(f, -1.0);
        }
        self.lines = self.lines.over(&base.lines);
        // the shared lines stay the benchmark's own: a baseline's (a
        // timer tick's) would show as the benchmark's, negative
        self.no_lines = self.no_lines.or_else(|| base.no_lines.clone());
        self
    }
}

/// The movers of NEW against BASE, when every result of both is profiled.
pub fn of<'a>(
    base: impl IntoIterator<Item = &'a BenchResult>,
    new: impl IntoIterator<Item = &'a BenchResult>,
) -> Option<Movers> {
    Some(between(mean(base)?, mean(new)?, None))
}

/// The movers of an overhead: each side's profile less its baseline's
/// (`baseline` names it), when all four are profiled.
pub fn of_overhead<'a>(
    baseline: &str,
    base: [impl IntoIterator<Item = &'a BenchResult>; 2],
    new: [impl IntoIterator<Item = &'a BenchResult>; 2],
) -> Option<Movers> {
    let [b, bb] = base;
    let [n, nb] = new;
    Some(between(
        mean(b)?.over(&mean(bb)?),
        mean(n)?.over(&mean(nb)?),
        Some(baseline.to_string()),
    ))
}

fn between(base: Mean, new: Mean, against: Option<String>) -> Movers {
    let no_lines = [("BASE", &base.no_lines), ("NEW", &new.no_lines)]
        .iter()
        .filter_map(|(side, why)| why.as_ref().map(|w| format!("{side}: {w}")))
        .reduce(|a, b| format!("{a}; {b}"));
    let (bl, nl) = (&base.lines, &new.lines);
    let (bt, bk, bf) = (base.total, base.kernel, &base.functions);
    let (nt, nk, nf) = (new.total, new.kernel, &new.functions);
    let names: std::collections::BTreeSet<&String> = bf.keys().chain(nf.keys()).collect();
    let mut functions: Vec<FunctionMove> = names
        .into_iter()
        .map(|name| {
            let b = bf.get(name).copied().unwrap_or_default();
            let n = nf.get(name).copied().unwrap_or_default();
            FunctionMove {
                name: name.clone(),
                base: b.insn,
                new: n.insn,
                change: n.insn - b.insn,
                calls: n.calls - b.calls,
                l1_misses: n.l1 - b.l1,
                ll_misses: n.ll - b.ll,
                coherence: n.coherence - b.coherence,
                lines: Vec::new(),
            }
        })
        .filter(|f| {
            [f.change, f.calls, f.l1_misses, f.ll_misses, f.coherence]
                .iter()
                .any(|x| x.abs() >= MIN_MOVE)
        })
        .collect();
    functions.sort_by(|a, b| {
        b.cycles()
            .abs()
            .total_cmp(&a.cycles().abs())
            .then(a.name.cmp(&b.name))
    });
    functions.truncate(TOP);
    // lines of one side alone would all look moved
    for f in functions.iter_mut().filter(|_| no_lines.is_none()) {
        f.lines = source_lines::top(bl, nl, &f.name);
    }
    Movers {
        against,
        total: nt - bt,
        kernel: nk - bk,
        functions,
        shared: cache_lines::top(&base.shared, &new.shared),
        no_lines,
    }
}

/// A benchmark's movers against its baseline's profile in the same boots,
/// when it has a baseline (see `of_overhead`).
pub(super) fn overhead_movers<'a>(
    base: &'a Side,
    new: &'a Side,
    b: &Observed<'a>,
    n: &Observed<'a>,
) -> Option<Movers> {
    let baseline = &b
        .iter()
        .chain(n)
        .find_map(|o| o.result.overhead_ns.as_ref())?
        .baseline;
    let (bb, nb) = (results(base, baseline), results(new, baseline));
    fn of<'a>(o: &Observed<'a>) -> Vec<&'a BenchResult> {
        o.iter().map(|o| o.result).collect()
    }
    of_overhead(baseline, [of(b), of(&bb)], [of(n), of(&nb)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_schema::{Better, FunctionCost};

    fn profiled(total: f64, fns: &[(&str, f64)]) -> BenchResult {
        let mut r = BenchResult::new("rename-base", "rename-base", "rename", 1, Better::Higher);
        let functions: Vec<FunctionCost> = fns
            .iter()
            .map(|&(name, insn)| FunctionCost {
                name: name.into(),
                insn,
                calls: 0.0,
                memory: None,
                coherence: None,
                lines: Vec::new(),
            })
            .collect();
        r.profile = Some(Profile {
            total,
            kernel: functions.iter().map(|f| f.insn).sum(),
            functions,
            entries: None,
            memory: None,
            contention: None,
            source: None,
        });
        r
    }

    #[test]
    fn a_function_that_gained_coherence_misses_names_itself() {
        let base = profiled(1000.0, &[("do_syscall_64", 20.0)]);
        let mut new = profiled(1001.0, &[("do_syscall_64", 21.0)]);
        let f = &mut new.profile.as_mut().unwrap().functions[0];
        f.coherence = Some(trig_schema::contention::CoherenceMisses {
            misses: 0.9,
            hitm: 0.9,
        });
        let m = of([&base], [&new]).unwrap();
        assert_eq!(m.functions[0].name, "do_syscall_64");
        assert_eq!(m.functions[0].coherence, 0.9);
        // one instruction and 0.9 misses of 60 cycles
        assert!((m.functions[0].cycles() - 55.0).abs() < 1e-9);
    }

    #[test]
    fn largest_moves_first_and_small_ones_left_out() {
        let base = profiled(
            1060.0,
            &[
                ("strscpy", 46.0),
                ("__fget_light", 52.0),
                ("vfs_write", 103.0),
            ],
        );
        let new = profiled(
            1180.0,
            &[
                ("sized_strscpy", 81.0),
                ("strnlen", 79.0),
                ("vfs_write", 103.01),
                ("fdget_pos", 64.0),
            ],
        );
        let m = of([&base], [&new]).unwrap();
        assert_eq!(m.total, 120.0);
        let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sized_strscpy",
                "strnlen",
                "fdget_pos",
                "__fget_light",
                "strscpy"
            ]
        );
        assert!(
            (m.listed() - m.kernel).abs() < 0.02,
            "{} vs {}",
            m.listed(),
            m.kernel
        );
        assert_eq!(m.functions[0].change, 81.0);
    }

    #[test]
    fn unprofiled_sides_have_no_movers() {
        let plain = BenchResult::new("trig-base", "trig-base", "trigger", 1, Better::Higher);
        let p = profiled(300.0, &[]);
        assert!(of([&plain], [&p]).is_none());
        assert!(of([&p], []).is_none());
        assert_eq!(of([&p], [&p]).unwrap().functions.len(), 0);
    }

    #[test]
    fn an_overhead_is_attributed_against_its_baselines_profile() {
        // the syscall path reshuffles alike in both; the attach path moves
        let syscall_base = [("do_syscall_64", 100.0), ("getpgid", 50.0)];
        let syscall_new = [("do_syscall_64", 90.0), ("getpgid", 70.0)];
        let with = |sys: &[(&'static str, f64)], attach: &[(&'static str, f64)]| {
            let fns: Vec<(&str, f64)> = sys.iter().chain(attach).copied().collect();
            profiled(fns.iter().map(|f| f.1).sum(), &fns)
        };
        let (base_b, new_b) = (with(&syscall_base, &[]), with(&syscall_new, &[]));
        let base_k = with(&syscall_base, &[("kprobe_ftrace_handler", 20.0)]);
        let new_k = with(
            &syscall_new,
            &[("kprobe_ftrace_handler", 24.0), ("[jit]", 7.0)],
        );
        let plain = of([&base_k], [&new_k]).unwrap();
        assert!(plain.functions.iter().any(|f| f.name == "getpgid"));
        let m = of_overhead("trig-base", [[&base_k], [&base_b]], [[&new_k], [&new_b]]).unwrap();
        let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["[jit]", "kprobe_ftrace_handler"]);
        assert!((m.total - 11.0).abs() < 1e-9, "{m:?}");
        assert_eq!(m.against.as_deref(), Some("trig-base"));
    }
}
