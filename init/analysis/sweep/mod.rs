//! A sweep of a commit range (`scripts/sweep.sh`, `trig-init sweep`):
//! every commit of BASE..TIP built and booted once, split into slices
//! that runners measure apart, merged into one range (the directory:
//! [`range`]); and the steps between consecutive measured commits,
//! each a comparison of the two (under icount a figure repeats from boot
//! to boot, so a step beyond compare's threshold is the commit's own, no
//! change point to guess).

pub mod range;
pub mod search;

use crate::compare::{self, Comparison, Settings, Verdict};
use crate::gate::Tally;
use crate::input::{Side, Standing};
use range::{load, moved, outcomes, CommitOutcome, Manifest, Moved};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use trig_schema::error::Error;
use trig_schema::Meter;

/// A commit where a benchmark stepped against the previous measured one.
#[derive(Debug, Clone)]
pub struct CommitStep {
    /// Indices in the manifest.
    pub at: usize,
    pub from: usize,
    pub comparison: Comparison,
    pub moved: Vec<Moved>,
}

impl CommitStep {
    /// The commits between `from` and `at` that were not measured: the
    /// step may be theirs.
    pub fn across(&self) -> std::ops::Range<usize> {
        self.from + 1..self.at
    }

    pub fn regressed(&self) -> bool {
        self.comparison.regressed()
    }
}

/// A benchmark a measured commit has no figure of: it failed there, or
/// the commit before it with a figure had one and this one has none.
#[derive(Debug, Clone, Serialize)]
pub struct Broken {
    /// Index in the manifest.
    pub at: usize,
    pub bench: String,
    /// `failed` or `missing`.
    pub verdict: Verdict,
    pub why: String,
}

/// A measured range and where it stepped.
#[derive(Debug, Clone)]
pub struct SweepReport {
    pub dir: String,
    pub manifest: Manifest,
    pub outcomes: Vec<CommitOutcome>,
    pub steps: Vec<CommitStep>,
    /// Each commit's benchmarks without a figure, in commit order.
    pub broken: Vec<Broken>,
    /// Small changes that add up beyond the threshold (`search::drifts`).
    pub drifts: Vec<search::DriftStep>,
    pub meter: Option<Meter>,
    /// Consecutive measured pairs compared.
    pub compared: usize,
}

impl SweepReport {
    pub fn regressed(&self) -> bool {
        self.steps.iter().any(CommitStep::regressed)
    }

    /// What the gate counts: each regressed step, each benchmark broken
    /// at a commit, and the pairs compared as decided.
    pub fn tally(&self) -> Tally {
        let mut t = Tally::of(self.broken.iter().map(|b| b.verdict));
        t.regressed = self.steps.iter().filter(|s| s.regressed()).count();
        t.decided = self.compared;
        t
    }

    /// The commits measured.
    pub fn measured(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| matches!(o, CommitOutcome::Measured(_)))
            .count()
    }

    pub fn short(&self, index: usize) -> &str {
        trig_schema::abbrev(&self.manifest.commits[index].commit, 12)
    }
}

/// The benchmarks broken at commit `at`: each that had a figure before and
/// has none here, and each that failed here.
fn broken_at(
    at: usize,
    now: &BTreeMap<String, Standing>,
    last: &BTreeMap<String, usize>,
    manifest: &Manifest,
) -> Vec<Broken> {
    let missing = last
        .iter()
        .filter(|(bench, _)| !now.contains_key(*bench))
        .map(|(bench, from)| Broken {
            at,
            bench: bench.clone(),
            verdict: Verdict::Missing,
            why: format!("no figure, and {} had one", manifest.stem(*from)),
        });
    let failed = now.iter().filter_map(|(bench, s)| match s {
        Standing::Failed(why) => Some(Broken {
            at,
            bench: bench.clone(),
            verdict: Verdict::Failed,
            why: why.clone(),
        }),
        Standing::Measured => None,
    });
    missing.chain(failed).collect()
}

/// The benchmarks with a figure here, by the commit they are measured
/// against (each one's last commit with a figure).
fn measured_against<'a>(
    now: &'a BTreeMap<String, Standing>,
    last: &BTreeMap<String, usize>,
) -> BTreeMap<usize, Vec<&'a String>> {
    let mut against: BTreeMap<usize, Vec<&String>> = BTreeMap::new();
    for bench in now
        .iter()
        .filter(|(_, s)| **s == Standing::Measured)
        .map(|(b, _)| b)
    {
        if let Some(&from) = last.get(bench) {
            against.entry(from).or_default().push(bench);
        }
    }
    against
}

/// `sweep report`: each benchmark's series over the measured commits,
/// each commit compared with the last one before it that had a figure of
/// the benchmark (the previous measured commit, unless the benchmark
/// failed there); keeps the steps where one regressed or improved, and
/// names every commit where a benchmark failed or lost its figure.
pub fn analyse(dir: &Path, settings: &Settings) -> Result<SweepReport, Error> {
    let manifest = Manifest::read(dir)?;
    let outcomes = outcomes(dir, &manifest)?;
    let (mut steps, mut broken) = (Vec::new(), Vec::new());
    // each benchmark's last commit with a figure, and those commits' sides
    let mut last: BTreeMap<String, usize> = BTreeMap::new();
    let mut sides: BTreeMap<usize, Side> = BTreeMap::new();
    let mut compared = 0;
    let mut meter = None;
    for (i, o) in outcomes.iter().enumerate() {
        let CommitOutcome::Measured(path) = o else {
            continue;
        };
        let side = load(path)?;
        let now = side.standing();
        broken.extend(broken_at(i, &now, &last, &manifest));
        for (from, benches) in measured_against(&now, &last) {
            let mut c = compare::compare(&sides[&from], &side, settings).map_err(|e| {
                e.context(format!(
                    "{} against {}",
                    manifest.stem(i),
                    manifest.stem(from)
                ))
            })?;
            c.benches.retain(|b| benches.contains(&&b.name));
            compared += 1;
            meter = Some(c.meter);
            let moved = moved(&c);
            if !moved.is_empty() {
                steps.push(CommitStep {
                    at: i,
                    from,
                    comparison: c,
                    moved,
                });
            }
        }
        for (bench, _) in now.iter().filter(|(_, s)| **s == Standing::Measured) {
            last.insert(bench.clone(), i);
        }
        sides.insert(i, side);
        // a side no benchmark is measured against any more is dropped
        sides.retain(|k, _| last.values().any(|v| v == k));
    }
    let drifts = search::drifts_of(&manifest, &outcomes, settings)?;
    Ok(SweepReport {
        dir: dir.display().to_string(),
        manifest,
        outcomes,
        steps,
        broken,
        drifts,
        meter,
        compared,
    })
}
