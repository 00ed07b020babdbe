//! One kernel's matrix split over several boots side by side (`vm
//! --split`): which benchmarks each part runs. The host plans it (to
//! launch, record and merge the parts) and each guest plans it again from
//! its `trig.part=I/N` and runs its own part, so both always agree.
//!
//! The plan is deterministic, from the selection and the run options
//! alone: the same selection splits the same way on every run, and a
//! benchmark's figures do not depend on the host's load.

pub use crate::part::{Part, MAX_PARTS};

use crate::options::RunOptions;
use crate::registry::{self, Bench};

/// Whether `set` holds `b`.
fn has(set: &[&'static Bench], b: &Bench) -> bool {
    set.iter().any(|x| x.name == b.name)
}

/// A point's cost in a boot, in units of a typical one's (about 0.6 s of
/// the host's time under icount: load, attach, warm-up and window). The
/// exceptions were measured on Debian 6.1 (docs/meter.md): uprobes on a
/// `ret` or a 5-byte nop are emulated, not optimized, and trap into the
/// kernel at every event, which TCG runs three to four times slower; the
/// `-all` benchmarks attach to every traceable function, which takes
/// longer the more a kernel has: 1.5 and 0.8 s on 6.1, 9.5 and 8.7 s on
/// 7.2 (measured: typical points 0.4 s there). The heaviest go first,
/// one a part: the two in one part left 7.2's other part idle for 18 s.
fn cost(b: &Bench) -> usize {
    match b.name {
        "trig-kprobe-multi-all" | "trig-kretprobe-multi-all" => 6,
        "trig-uprobe-ret" | "trig-uprobe-nop5" => 4,
        "trig-uretprobe-ret" | "trig-uretprobe-nop5" => 3,
        _ => 1,
    }
}

/// A benchmark's cost over all its points under `opts`.
fn weight(b: &'static Bench, opts: &RunOptions) -> usize {
    cost(b) * registry::points(&[b], &opts.producers, &opts.cmp_str_lens).len()
}

/// Below this weight a part is not worth its own boot: the kernel's boot
/// and trig-init's start (about 10 s of the host's time under icount)
/// would cost more than the benchmarks it takes off the others.
pub const MIN_PART_WEIGHT: usize = 16;

/// How the selection splits into parts.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What each part runs, in table order: its own benchmarks and the
    /// baselines they are measured against (an overhead is over the
    /// baseline measured in the same boot).
    pub runs: Vec<Vec<&'static Bench>>,
    /// Whose results each part gives the merged run: its own benchmarks,
    /// and a baseline that several parts run goes to the first of them.
    pub owns: Vec<Vec<&'static Bench>>,
}

/// The parts worth splitting `selection` into with `slots` boots free to
/// run it: at most one a slot and one per [`MIN_PART_WEIGHT`], at least 1.
pub fn worth(selection: &[&'static Bench], opts: &RunOptions, slots: usize) -> usize {
    let total: usize = selection.iter().map(|b| weight(b, opts)).sum();
    (total / MIN_PART_WEIGHT).min(slots).clamp(1, MAX_PARTS)
}

/// Splits `selection` (as [`registry::select`] gives it, baselines in)
/// into at most `n` parts of about equal weight: the heaviest benchmark
/// first, each into the part it leaves lightest, counting its baseline
/// where that part does not run it yet (ties: the first part). Fewer
/// parts when the selection has fewer benchmarks to spread.
pub fn plan(selection: &[&'static Bench], opts: &RunOptions, n: usize) -> Plan {
    let is_base = |b: &Bench| {
        selection
            .iter()
            .any(|d| d.baseline().is_some_and(|x| x.name == b.name))
    };
    let mut members: Vec<&'static Bench> =
        selection.iter().copied().filter(|b| !is_base(b)).collect();
    let n = n.clamp(1, members.len().max(1));
    // stable: equal weights keep table order
    members.sort_by_key(|b| std::cmp::Reverse(weight(b, opts)));
    let mut runs: Vec<Vec<&'static Bench>> = vec![Vec::new(); n];
    let mut load = vec![0; n];
    for m in members {
        let base = m.baseline().filter(|b| has(selection, b));
        let after = |p: usize| {
            let base_cost = base.filter(|b| !has(&runs[p], b)).map(|b| weight(b, opts));
            load[p] + weight(m, opts) + base_cost.unwrap_or(0)
        };
        let p = (0..n).min_by_key(|&p| after(p)).expect("at least one part");
        load[p] = after(p);
        runs[p].push(m);
        if let Some(b) = base.filter(|b| !has(&runs[p], b)) {
            runs[p].push(b);
        }
    }
    let in_table = |set: &Vec<&'static Bench>| -> Vec<&'static Bench> {
        selection.iter().copied().filter(|b| has(set, b)).collect()
    };
    let runs: Vec<Vec<&'static Bench>> = runs.iter().map(in_table).collect();
    let owns = (0..n)
        .map(|p| {
            let first = |b: &&'static Bench| runs.iter().position(|r| has(r, b)) == Some(p);
            runs[p].iter().copied().filter(first).collect()
        })
        .collect();
    Plan { runs, owns }
}

/// What `part` of the selection runs: all of it for the whole.
pub fn part_of(
    selection: Vec<&'static Bench>,
    opts: &RunOptions,
    part: Part,
) -> Vec<&'static Bench> {
    if part.of == 1 {
        return selection;
    }
    let mut plan = plan(&selection, opts, part.of);
    // a part past the plan's (a selection smaller than the split) runs nothing
    plan.runs
        .get_mut(part.index - 1)
        .map(std::mem::take)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{all, find, select};

    fn names(v: &[&'static Bench]) -> Vec<&'static str> {
        v.iter().map(|b| b.name).collect()
    }

    #[test]
    fn parts_read_and_write_as_i_of_n() {
        assert_eq!(Part::parse("2/3"), Ok(Part { index: 2, of: 3 }));
        assert_eq!(Part::parse("2/3").unwrap().to_string(), "2/3");
        for bad in ["0/2", "3/2", "1", "a/b", "1/65", "/2"] {
            assert!(Part::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_benchmark_is_owned_once_and_runs_with_its_baseline() {
        let opts = RunOptions::default();
        let sel = select(&[]).unwrap();
        for n in 1..=6 {
            let plan = plan(&sel, &opts, n);
            assert_eq!(plan.runs.len(), n);
            let mut owned: Vec<&str> = plan.owns.iter().flat_map(|o| names(o)).collect();
            owned.sort();
            let mut all_names = names(&sel);
            all_names.sort();
            assert_eq!(owned, all_names, "{n} parts");
            for (runs, owns) in plan.runs.iter().zip(&plan.owns) {
                assert!(owns.iter().all(|b| has(runs, b)));
                for b in runs {
                    if let Some(base) = b.baseline() {
                        assert!(has(runs, base), "{} without {}", b.name, base.name);
                    }
                }
                // in table order, as the whole boot runs them
                let order: Vec<usize> = runs
                    .iter()
                    .map(|b| all().position(|a| a.name == b.name).unwrap())
                    .collect();
                assert!(order.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }

    #[test]
    fn the_whole_matrix_splits_evenly_and_the_same_every_time() {
        let opts = RunOptions::default();
        let sel = select(&[]).unwrap();
        let a = plan(&sel, &opts, 2);
        let again = plan(&sel, &opts, 2);
        assert!((0..2).all(|p| names(&a.runs[p]) == names(&again.runs[p])));
        let load = |p: &Vec<&'static Bench>| -> usize { p.iter().map(|b| weight(b, &opts)).sum() };
        let (l0, l1) = (load(&a.runs[0]), load(&a.runs[1]));
        let total: usize = sel.iter().map(|b| weight(b, &opts)).sum();
        assert!(l0.abs_diff(l1) <= 4, "{l0} vs {l1}");
        // few baselines run twice: at most each family's in both parts
        // (strncmp's at each length)
        assert!(l0 + l1 <= total + 16, "{l0} + {l1} of {total}");
    }

    #[test]
    fn a_small_selection_is_not_split_and_a_part_gets_its_share() {
        let opts = RunOptions::default();
        let two = select(&["trig-kprobe".into(), "trig-fentry".into()]).unwrap();
        assert_eq!(worth(&two, &opts, 8), 1);
        assert!(worth(&select(&[]).unwrap(), &opts, 2) == 2);
        assert_eq!(worth(&select(&[]).unwrap(), &opts, 1), 1);
        // two benchmarks into at most two parts, each with trig-base
        let p = plan(&two, &opts, 5);
        assert_eq!(p.runs.len(), 2);
        assert_eq!(names(&p.runs[0]), ["trig-base", "trig-kprobe"]);
        assert_eq!(names(&p.runs[1]), ["trig-base", "trig-fentry"]);
        assert_eq!(names(&p.owns[1]), ["trig-fentry"]);
        let whole = part_of(two.clone(), &opts, Part::WHOLE);
        assert_eq!(names(&whole), names(&two));
        let second = part_of(two.clone(), &opts, Part { index: 2, of: 2 });
        assert_eq!(names(&second), ["trig-base", "trig-fentry"]);
        assert!(part_of(two, &opts, Part { index: 5, of: 5 }).is_empty());
        // a baseline alone is its own member
        let base = select(&["trig-base".into()]).unwrap();
        let owns = plan(&base, &opts, 3).owns;
        assert_eq!(
            (owns.len(), names(&owns[0])),
            (1, vec![find("trig-base").unwrap().name])
        );
    }
}
