//! The adaptive sweep (`trig-init sweep next`, `scripts/sweep.sh
//! --search`): every step of a range found in about S·log2(N) boots for
//! S steps among N commits, where the exhaustive sweep boots all N.
//!
//! Under icount one boot gives a commit's exact figures, so two commits
//! whose figures agree within compare's threshold on every benchmark are
//! taken to hold no step between them. That is the search's one
//! assumption: a change and its exact reversal inside an interval whose
//! ends agree go unseen. The rules, over the commits measured so far:
//! - measure BASE and TIP (a skipped end, one that does not build or
//!   boot, moves the end inward to the nearest commit not yet tried);
//! - an interval between neighbouring measured commits whose ends differ
//!   on any benchmark, with commits inside not yet tried, is split: its
//!   untried commits are spread into as few parts as keep the whole
//!   search within one round more than `runners` + 1 parts a round would
//!   need ([`width`]: that round buys back most of the boots), and into
//!   more when runners would be idle (they share the round's intervals);
//! - an interval whose ends agree is left; a skipped commit is stepped
//!   over, as `git bisect skip` does;
//! - done when no interval is left to split. A step is then a pair of
//!   neighbouring measured commits (with only skipped ones between) that
//!   differ: `sweep report` finds it as in an exhaustive sweep. A drift
//!   (small changes that add up beyond the threshold, no single one
//!   does) is found by [`drifts`], for any sweep.

use super::range::{self, CommitOutcome, Manifest, Moved};
use crate::compare::{self, Settings};
use crate::input::Side;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use trig_schema::error::{self, Error};

/// What the search knows of one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    Untried,
    /// Does not build or boot.
    Skipped,
    Measured,
}

impl From<&CommitOutcome> for Known {
    fn from(o: &CommitOutcome) -> Known {
        match o {
            CommitOutcome::Measured(_) => Known::Measured,
            CommitOutcome::Skipped(_) => Known::Skipped,
            CommitOutcome::Missing => Known::Untried,
        }
    }
}

/// The benchmarks whose figures differ beyond the threshold between two
/// measured commits (by index, the older first).
pub trait Moves {
    fn moved(&mut self, a: usize, b: usize) -> Result<BTreeSet<String>, Error>;

    /// Only the commits in `keep` will be compared from now on.
    fn keep(&mut self, _keep: &BTreeSet<usize>) {}
}

impl<F: FnMut(usize, usize) -> Result<BTreeSet<String>, Error>> Moves for F {
    fn moved(&mut self, a: usize, b: usize) -> Result<BTreeSet<String>, Error> {
        self(a, b)
    }
}

/// The rounds that split `untried` commits into `k` + 1 parts each,
/// until every part is one commit.
fn rounds(untried: usize, k: usize) -> u32 {
    let need = untried as u128 + 1;
    (1..)
        .find(|&r| (k.max(1) as u128 + 1).saturating_pow(r) >= need)
        .unwrap()
}

/// The fewest commits a round that split `untried` commits down to
/// single ones in `rounds` rounds.
fn fewest(untried: usize, rounds: u32) -> usize {
    let need = untried as u128 + 1;
    (1..=untried)
        .find(|&k| (k as u128 + 1).saturating_pow(rounds) >= need)
        .unwrap_or(untried)
}

/// The most commits a round measures in one interval of a range whose
/// ends hold `untried` commits between them: the fewest that split it in
/// one round more than `runners` commits a round would. A step costs
/// about rounds × width boots, so that round saves many: 12,000 commits
/// on 16 runners take 6 a round in 5 rounds, not 10 in 4.
pub fn width(untried: usize, runners: usize) -> usize {
    fewest(untried, rounds(untried, runners) + 1)
}

/// How many commits to measure in an interval of `untried` commits not
/// yet tried: the fewest that finish it in as many rounds as `width`
/// commits a round would.
pub fn points(untried: usize, width: usize) -> usize {
    fewest(untried, rounds(untried, width))
}

/// `k` of `untried` spread evenly, as the ends of k + 1 equal parts.
fn spread(untried: &[usize], k: usize) -> impl Iterator<Item = usize> + '_ {
    (1..=k).map(move |j| untried[j * (untried.len() + 1) / (k + 1) - 1])
}

/// The commits to measure next (indices, in order); none when the search
/// is done.
pub fn next(known: &[Known], runners: usize, f: &mut dyn Moves) -> Result<Vec<usize>, Error> {
    // the ends: the outermost commits that are not skipped
    let (Some(lo), Some(hi)) = (
        known.iter().position(|k| *k != Known::Skipped),
        known.iter().rposition(|k| *k != Known::Skipped),
    ) else {
        return Ok(Vec::new());
    };
    let ends: Vec<usize> = BTreeSet::from([lo, hi])
        .into_iter()
        .filter(|&i| known[i] == Known::Untried)
        .collect();
    if !ends.is_empty() {
        return Ok(ends);
    }
    let measured: Vec<usize> = (lo..=hi).filter(|&i| known[i] == Known::Measured).collect();
    // the untried commits of each interval whose ends differ
    let mut open = Vec::new();
    for w in measured.windows(2) {
        let untried: Vec<usize> = (w[0] + 1..w[1])
            .filter(|&i| known[i] == Known::Untried)
            .collect();
        if !untried.is_empty() && !f.moved(w[0], w[1])?.is_empty() {
            open.push(untried);
        }
    }
    let width = width(hi - lo - 1, runners);
    // runners that the intervals' points would leave idle take a share
    let share = runners / open.len().max(1);
    Ok(open
        .iter()
        .flat_map(|u| spread(u, points(u.len(), width).max(share.min(u.len()))))
        .collect())
}

/// Small changes of one benchmark that add up: from `from` to `to`
/// (measured commits) it moved beyond the threshold, though no pair of
/// neighbouring measured commits between them did.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    pub from: usize,
    pub to: usize,
    pub benches: BTreeSet<String>,
}

/// The drifts of a series of measured commits (indices, in order): for
/// each benchmark, from the first commit or its last step or drift, the
/// first commit that differs from there beyond the threshold without a
/// step from its neighbour. Each drift restarts the benchmark's level, so
/// a drift that goes on is named again each time it adds up anew.
pub fn drifts(measured: &[usize], f: &mut dyn Moves) -> Result<Vec<Drift>, Error> {
    let Some(&first) = measured.first() else {
        return Ok(Vec::new());
    };
    // each benchmark's level, where it is not the first commit
    let mut level: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for w in measured.windows(2) {
        let (p, c) = (w[0], w[1]);
        let stepped = f.moved(p, c)?;
        let levels: BTreeSet<usize> = std::iter::once(first)
            .chain(level.values().copied())
            .filter(|&l| l != p)
            .collect();
        for l in levels {
            let benches: BTreeSet<String> = f
                .moved(l, c)?
                .into_iter()
                .filter(|b| !stepped.contains(b) && level.get(b).copied().unwrap_or(first) == l)
                .collect();
            for b in &benches {
                level.insert(b.clone(), c);
            }
            if !benches.is_empty() {
                out.push(Drift {
                    from: l,
                    to: c,
                    benches,
                });
            }
        }
        for b in stepped {
            level.insert(b, c);
        }
        f.keep(
            &std::iter::once(first)
                .chain(level.values().copied())
                .chain([c])
                .collect(),
        );
    }
    out.sort_by_key(|d| (d.to, d.from));
    Ok(out)
}

/// The measured commits of a sweep directory, loaded as they are
/// compared (and kept: a search loads a few hundred).
pub struct MeasuredCommits<'a> {
    paths: BTreeMap<usize, PathBuf>,
    sides: HashMap<usize, Side>,
    manifest: &'a Manifest,
    settings: &'a Settings,
}

impl<'a> MeasuredCommits<'a> {
    pub fn new(manifest: &'a Manifest, outcomes: &[CommitOutcome], settings: &'a Settings) -> Self {
        let paths = outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| match o {
                CommitOutcome::Measured(p) => Some((i, p.clone())),
                _ => None,
            })
            .collect();
        MeasuredCommits {
            paths,
            sides: HashMap::new(),
            manifest,
            settings,
        }
    }

    pub fn indices(&self) -> Vec<usize> {
        self.paths.keys().copied().collect()
    }

    fn side(&mut self, i: usize) -> Result<&Side, Error> {
        if !self.sides.contains_key(&i) {
            let side = range::load(&self.paths[&i])?;
            self.sides.insert(i, side);
        }
        Ok(&self.sides[&i])
    }

    /// What moved from commit `a` to `b`, as `sweep report` names it.
    pub fn compare(&mut self, a: usize, b: usize) -> Result<Vec<Moved>, Error> {
        self.side(a)?;
        self.side(b)?;
        let c = compare::compare(&self.sides[&a], &self.sides[&b], self.settings).map_err(|e| {
            e.context(format!(
                "{} against {}",
                self.manifest.stem(b),
                self.manifest.stem(a)
            ))
        })?;
        Ok(range::moved(&c))
    }
}

impl Moves for MeasuredCommits<'_> {
    fn moved(&mut self, a: usize, b: usize) -> Result<BTreeSet<String>, Error> {
        Ok(self.compare(a, b)?.into_iter().map(|m| m.bench).collect())
    }

    fn keep(&mut self, keep: &BTreeSet<usize>) {
        self.sides.retain(|i, _| keep.contains(i));
    }
}

/// A drift as `sweep report` names it: what moved from `from` to `to`.
#[derive(Debug, Clone)]
pub struct DriftStep {
    pub from: usize,
    pub to: usize,
    pub moved: Vec<Moved>,
}

/// The drifts of a sweep directory's measured commits ([`drifts`]).
pub fn drifts_of(
    manifest: &Manifest,
    outcomes: &[CommitOutcome],
    settings: &Settings,
) -> Result<Vec<DriftStep>, Error> {
    let mut figures = MeasuredCommits::new(manifest, outcomes, settings);
    drifts(&figures.indices(), &mut figures)?
        .into_iter()
        .map(|d| {
            let mut moved = figures.compare(d.from, d.to)?;
            moved.retain(|m| d.benches.contains(&m.bench));
            Ok(DriftStep {
                from: d.from,
                to: d.to,
                moved,
            })
        })
        .collect()
}

/// `sweep next`: the commits of the search in `dir` to measure next, as
/// `(commit, stem)` in the range's order.
pub fn next_in(
    dir: &Path,
    runners: usize,
    settings: &Settings,
) -> Result<Vec<(String, String)>, Error> {
    let manifest = Manifest::read(dir)?;
    if !manifest.search {
        return Err(error::input(format!(
            "{}: a sweep of slices, not a search (`sweep plan --search` starts one)",
            dir.display()
        )));
    }
    let outcomes = range::outcomes(dir, &manifest)?;
    let known: Vec<Known> = outcomes.iter().map(Known::from).collect();
    let mut figures = MeasuredCommits::new(&manifest, &outcomes, settings);
    Ok(next(&known, runners, &mut figures)?
        .into_iter()
        .map(|i| (manifest.commits[i].commit.clone(), manifest.stem(i)))
        .collect())
}

/// The runs of commits a search did not measure (first, last: indices),
/// each between two measured commits that agree, or at an end beyond
/// skipped ones.
pub fn unmeasured_runs(outcomes: &[CommitOutcome]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, o) in outcomes.iter().enumerate() {
        if *o != CommitOutcome::Missing {
            continue;
        }
        match runs.last_mut() {
            Some(r) if r.1 + 1 == i => r.1 = i,
            _ => runs.push((i, i)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures of one benchmark a commit, moved beyond 0.25%.
    fn levels(x: &[f64]) -> impl FnMut(usize, usize) -> Result<BTreeSet<String>, Error> + '_ {
        move |a, b| {
            Ok(((x[b] / x[a] - 1.0).abs() > 0.0025)
                .then(|| "b".to_string())
                .into_iter()
                .collect())
        }
    }

    /// Runs the search to its end: the rounds it asked for.
    fn search(x: &[f64], skip: &[usize], runners: usize) -> Vec<Vec<usize>> {
        let mut known = vec![Known::Untried; x.len()];
        let mut f = levels(x);
        let mut rounds = Vec::new();
        loop {
            let ask = next(&known, runners, &mut f).unwrap();
            if ask.is_empty() {
                return rounds;
            }
            for &i in &ask {
                assert_eq!(known[i], Known::Untried, "asked twice for {i}");
                known[i] = if skip.contains(&i) {
                    Known::Skipped
                } else {
                    Known::Measured
                };
            }
            rounds.push(ask);
        }
    }

    #[test]
    fn one_step_is_bisected_and_a_flat_range_costs_two_boots() {
        let mut x = vec![1.0; 17];
        assert_eq!(search(&x, &[], 1), [vec![0, 16]]);
        for v in &mut x[11..] {
            *v = 0.99;
        }
        let rounds = search(&x, &[], 1);
        assert_eq!(rounds, [vec![0, 16], vec![8], vec![12], vec![10], vec![11]]);
        // with 16 runners: every commit between the ends, in one round
        assert_eq!(search(&x, &[], 16).len(), 2);
    }

    #[test]
    fn a_skipped_commit_is_stepped_over_as_bisect_skips() {
        let mut x = vec![1.0; 9];
        for v in &mut x[4..] {
            *v = 1.01;
        }
        // the middle, the step's own commit and BASE do not build
        let rounds = search(&x, &[0, 4], 1);
        assert_eq!(rounds[0], [0, 8]);
        assert_eq!(rounds[1], [1], "BASE skipped: the next commit is the end");
        let measured: Vec<usize> = rounds.concat();
        // the step lies between 3 and 5, across the skipped 4
        assert!(measured.contains(&3) && measured.contains(&5), "{rounds:?}");
    }

    /// Random ranges, steps, skips and runners: once done, every step lies
    /// between neighbouring measured commits (only skipped ones between)
    /// that differ, and every such pair holds a step.
    #[test]
    fn a_finished_search_leaves_every_step_between_neighbours() {
        let mut rng = fastrand::Rng::with_seed(34);
        for _ in 0..300 {
            let n = rng.usize(2..200);
            let steps: BTreeSet<usize> = (0..rng.usize(0..6)).map(|_| rng.usize(1..n)).collect();
            let skip: Vec<usize> = (0..rng.usize(0..n / 4 + 1))
                .map(|_| rng.usize(0..n))
                .collect();
            let runners = rng.usize(1..18);
            let mut x = vec![1.0; n];
            for &at in &steps {
                for v in &mut x[at..] {
                    *v *= 1.01;
                }
            }
            let rounds = search(&x, &skip, runners);
            let mut known = vec![Known::Untried; n];
            for i in rounds.concat() {
                known[i] = if skip.contains(&i) {
                    Known::Skipped
                } else {
                    Known::Measured
                };
            }
            let measured: Vec<usize> = (0..n).filter(|&i| known[i] == Known::Measured).collect();
            for w in measured.windows(2) {
                let inside = steps.range(w[0] + 1..=w[1]).count();
                let untried = (w[0] + 1..w[1]).any(|i| known[i] == Known::Untried);
                assert!(
                    inside == 0 || !untried,
                    "n {n}, steps {steps:?}, skip {skip:?}, runners {runners}: {w:?} holds a step and untried commits"
                );
            }
            // outside the measured ends only skipped commits
            let (lo, hi) = (
                measured.first().copied().unwrap_or(n),
                measured.last().copied().unwrap_or(0),
            );
            assert!(
                (0..lo).chain(hi + 1..n).all(|i| known[i] == Known::Skipped),
                "{known:?}"
            );
        }
    }

    #[test]
    fn points_keep_the_rounds_of_the_width() {
        assert_eq!(points(1, 1), 1);
        assert_eq!(points(100, 1), 1);
        assert_eq!(points(5, 16), 5);
        // 12,000 commits in 4 rounds of 17 parts, or of 11
        assert_eq!(points(11_999, 16), 10);
        assert_eq!(points(1000, 4), 3);
        // 5 rounds of 7 parts: 1,714 commits left in each, 4 rounds of 7
        assert_eq!(points(1_714, 6), 6);
        assert_eq!(points(35, 6), 5);
    }

    #[test]
    fn the_width_takes_one_round_more_than_runners_plus_one_parts() {
        assert_eq!(width(11_998, 1), 1);
        // 4 rounds of 17 parts, or 5 of 7
        assert_eq!(width(11_998, 16), 6);
        // 6 rounds of 5 parts, or 7 of 4
        assert_eq!(width(11_998, 4), 3);
        assert_eq!(width(3, 16), 1);
    }

    #[test]
    fn small_changes_that_add_up_are_a_drift_between_measured_commits() {
        // four increments of 0.1%, then a step
        let mut x = vec![1.0; 12];
        for (k, v) in x.iter_mut().enumerate() {
            *v *= 1.0 + 0.001 * (k.clamp(3, 7) - 3) as f64;
        }
        x[10] *= 1.02;
        x[11] *= 1.02;
        let all: Vec<usize> = (0..12).collect();
        let d = drifts(&all, &mut levels(&x)).unwrap();
        // 0.3% from commit 0 at commit 6; then 0.1% more is no drift yet
        assert_eq!(
            d,
            [Drift {
                from: 0,
                to: 6,
                benches: ["b".to_string()].into()
            }]
        );
        // measured sparsely, the drift is between the commits that were
        let d = drifts(&[0, 5, 8, 10], &mut levels(&x)).unwrap();
        assert_eq!((d[0].from, d[0].to), (0, 8), "{d:?}");
        // a step is no drift
        assert_eq!(drifts(&[9, 10, 11], &mut levels(&x)).unwrap(), []);
    }
}
