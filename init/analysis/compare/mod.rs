//! `trig-init compare`: judges NEW against BASE benchmark by benchmark,
//! from the per-boot figures of `trig-init vm` results.
//!
//! One figure per boot and metric (the mean of its measured seconds, or
//! its per-event overhead); across boots the median; the change of the
//! median with a bootstrap interval; a rank test for significance, its p
//! adjusted across every test of the comparison (Benjamini–Hochberg).
//! Boots that `ab` interleaved are paired by round, which cancels slow
//! drift of the host.

pub mod input;
pub mod movers;

use crate::registry::{self, Trigger};
use crate::report::identity::Identity;
use crate::report::{BenchResult, Better, Meter, RunRecord, RunSet, Status};
use crate::stats;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Smallest change, in percent, that counts as a regression; None:
    /// the meter's ([`Limits::of`]).
    pub threshold_pct: Option<f64>,
    pub alpha: f64,
    /// Above this coefficient of variation a benchmark is `unstable`;
    /// None: the meter's.
    pub cv_limit: Option<f64>,
    pub metrics: Vec<Metric>,
    /// Compare even when parameters or machines differ.
    pub force: bool,
    /// Seed of the bootstrap, for reproducible intervals.
    pub seed: u64,
    /// Ignore the pairing of interleaved boots (to see what it buys).
    pub unpaired: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            threshold_pct: None,
            alpha: 0.05,
            cv_limit: None,
            metrics: vec![Metric::Rate, Metric::Overhead],
            force: false,
            seed: 0x7419,
            unpaired: false,
        }
    }
}

/// The largest difference between two boots of one kernel under the
/// icount meter, in percent, over every `ok` benchmark of the whole matrix
/// (x86-64 Debian 6.1 and 6.12, arm64 Debian 6.1; README): the noise that
/// its verdicts are sized from.
pub const ICOUNT_AA_PCT: f64 = 0.05;

/// Under icount the uprobe benchmarks' counts move with the layout of the
/// producer's address space: an option that changed nothing in their
/// loop (injecting a spin into other benchmarks) moved them by up to 4.6%,
/// where every other benchmark stayed within 0.01% (README). They are
/// judged at this threshold at least.
pub const ICOUNT_LAYOUT_PCT: f64 = 5.0;

/// The thresholds a verdict uses, fit for the meter's noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limits {
    pub threshold_pct: f64,
    pub cv_limit: f64,
}

impl Limits {
    /// Under time, 3% and a CV of 10% (TCG's boot-to-boot spread is 4 to
    /// 29%); under icount, five times the measured A/A bound, and a spread
    /// of twice that bound marks a benchmark as not deterministic.
    pub fn of(meter: Meter, s: &Settings) -> Limits {
        let (threshold_pct, cv_limit) = match meter {
            Meter::Time => (3.0, 0.10),
            Meter::Icount => (5.0 * ICOUNT_AA_PCT, 2.0 * ICOUNT_AA_PCT / 100.0),
        };
        Limits {
            threshold_pct: s.threshold_pct.unwrap_or(threshold_pct),
            cv_limit: s.cv_limit.unwrap_or(cv_limit),
        }
    }
}

/// What is compared: the raw rate or the per-event overhead over the
/// benchmark's baseline in the same boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Rate,
    Overhead,
}

impl Metric {
    pub fn parse_choice(s: &str) -> Result<Vec<Metric>, String> {
        match s {
            "rate" => Ok(vec![Metric::Rate]),
            "overhead" => Ok(vec![Metric::Overhead]),
            "both" => Ok(vec![Metric::Rate, Metric::Overhead]),
            _ => Err(format!(
                "--metric must be rate, overhead or both, not '{s}'"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Rate => "rate",
            Metric::Overhead => "overhead",
        }
    }

    pub fn value(self, r: &BenchResult) -> Option<f64> {
        if r.status != Status::Ok {
            return None;
        }
        match self {
            Metric::Rate => r.summary.as_ref().map(|s| s.mean),
            Metric::Overhead => r.overhead_ns.as_ref().map(|o| o.ns_per_event),
        }
    }

    /// The rate improves as the benchmark says; a cost always downwards.
    pub fn better(self, r: &BenchResult) -> Better {
        match self {
            Metric::Rate => r.better,
            Metric::Overhead => Better::Lower,
        }
    }
}

/// Most severe first: a benchmark's verdict is the most severe of its
/// metrics'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Failed,
    Missing,
    Unsupported,
    Regressed,
    Improved,
    Unstable,
    /// The test could not have reached significance with so few boots,
    /// whatever the data: neither a change nor its absence is shown.
    Inconclusive,
    WithinNoise,
    NoChange,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Failed => "failed",
            Verdict::Missing => "missing",
            Verdict::Unsupported => "unsupported",
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Unstable => "unstable",
            Verdict::Inconclusive => "inconclusive",
            Verdict::WithinNoise => "within-noise",
            Verdict::NoChange => "no-change",
        }
    }
}

/// One side's figures for one benchmark and metric, one per boot.
#[derive(Debug, Clone, Serialize)]
pub struct SideStats {
    pub values: Vec<f64>,
    pub median: f64,
    pub mean: f64,
    pub stddev: f64,
    pub cv: f64,
}

impl SideStats {
    fn of(values: Vec<f64>) -> Self {
        let s = stats::summarize(&values);
        SideStats {
            median: s.median,
            mean: s.mean,
            stddev: s.stddev,
            cv: s.cv,
            values,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    /// Wilcoxon signed-rank on the log-ratios of paired boots.
    WilcoxonPaired,
    /// Mann-Whitney U between the per-boot figures.
    MannWhitney,
    /// Welch's t between the per-second samples of single boots: weaker
    /// evidence, since seconds of one boot share its drift.
    WelchPerSecond,
    /// The icount meter: one figure per boot that repeats to within
    /// [`ICOUNT_AA_PCT`]; the change decides against the threshold, and
    /// the spread of boots and samples against the CV limit.
    Counted,
    /// Not enough data for a test.
    None,
}

impl TestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TestKind::WilcoxonPaired => "wilcoxon-paired",
            TestKind::MannWhitney => "mann-whitney",
            TestKind::WelchPerSecond => "welch-per-second (weak)",
            TestKind::Counted => "icount threshold",
            TestKind::None => "none",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricComparison {
    pub metric: Metric,
    pub better: Better,
    pub base: SideStats,
    pub new: SideStats,
    /// Change of NEW against BASE in percent: of the medians, or the
    /// median of paired ratios.
    pub change_pct: f64,
    /// Bootstrap 95% (1 - alpha) interval of the change, in percent.
    pub ci_pct: (f64, f64),
    pub test: TestKind,
    /// The test's own p-value.
    pub p: Option<f64>,
    /// p adjusted across every test of the comparison (Benjamini–Hochberg):
    /// what significance is decided on.
    pub q: Option<f64>,
    /// Boot pairs used (paired path only).
    pub pairs: usize,
    /// The noise the verdict weighed: CV of the paired ratios, else the
    /// larger CV of the two sides (icount: the larger relative spread of
    /// boots or of one boot's samples).
    pub noise_cv: f64,
    /// With too few boots for the test: how many (per side, or pairs)
    /// would let it decide at alpha.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boots_needed: Option<usize>,
    /// The smallest change, in percent, this metric was judged to need.
    pub threshold_pct: f64,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchComparison {
    pub name: String,
    pub verdict: Verdict,
    /// The metrics the verdict rests on.
    pub basis: Vec<Metric>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub metrics: Vec<MetricComparison>,
    /// Per-function changes, when both sides were profiled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub movers: Option<movers::Movers>,
}

/// What one side of the comparison was.
#[derive(Debug, Clone, Serialize)]
pub struct SideInfo {
    pub files: Vec<String>,
    pub releases: Vec<String>,
    pub commits: Vec<String>,
    /// The Debian packages the kernels came from, where they did.
    pub packages: Vec<String>,
    pub arch: Vec<String>,
    pub accel: Vec<String>,
    pub meter: Vec<Meter>,
    pub cpus: Vec<usize>,
    /// Boots with a report.
    pub runs: usize,
    /// Deliberate slowdowns in these boots (validation runs).
    pub inject: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub base: SideInfo,
    pub new: SideInfo,
    pub settings: Settings,
    /// What the figures are per (NEW's, when forced across meters).
    pub meter: Meter,
    /// The thresholds used: the settings', else the meter's.
    pub limits: Limits,
    /// What makes the sides not comparable (only with `force`).
    pub differences: Vec<String>,
    pub paired: bool,
    pub benches: Vec<BenchComparison>,
    /// Why figures one would expect are not there (movers, overheads).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Comparison {
    pub fn regressed(&self) -> bool {
        self.benches.iter().any(|b| b.verdict == Verdict::Regressed)
    }

    pub fn count(&self, v: Verdict) -> usize {
        self.benches.iter().filter(|b| b.verdict == v).count()
    }
}

/// One side: every boot of every results file given for it.
pub struct Side {
    pub files: Vec<String>,
    pub sets: Vec<RunSet>,
}

impl Side {
    /// The side of one results file.
    pub fn of_file(file: &Path, sets: Vec<RunSet>) -> Side {
        Side {
            files: vec![file.display().to_string()],
            sets,
        }
    }

    fn runs(&self) -> impl Iterator<Item = &RunRecord> {
        self.sets
            .iter()
            .flat_map(|s| s.runs.iter())
            .filter(|r| r.report.is_some())
    }

    fn info(&self) -> SideInfo {
        fn distinct<T: Ord + Clone>(xs: impl Iterator<Item = T>) -> Vec<T> {
            xs.collect::<BTreeSet<T>>().into_iter().collect()
        }
        SideInfo {
            files: self.files.clone(),
            releases: distinct(self.sets.iter().map(|s| s.kernel.release.clone())),
            commits: distinct(self.sets.iter().filter_map(|s| s.kernel.commit.clone())),
            packages: distinct(self.sets.iter().filter_map(|s| s.kernel.package.clone())),
            arch: distinct(self.sets.iter().map(|s| s.vm.arch.clone())),
            accel: distinct(self.sets.iter().map(|s| s.vm.accel.clone())),
            meter: distinct(self.sets.iter().map(|s| s.vm.meter.as_str()))
                .into_iter()
                .map(|m| {
                    if m == "icount" {
                        Meter::Icount
                    } else {
                        Meter::Time
                    }
                })
                .collect(),
            cpus: distinct(self.sets.iter().map(|s| s.vm.cpus)),
            runs: self.runs().count(),
            inject: distinct(
                self.runs()
                    .filter_map(|r| r.report.as_ref()?.params.inject.clone()),
            ),
        }
    }

    fn identity(&self) -> Identity {
        Identity::of(&self.sets)
    }
}

/// Why BASE and NEW cannot be compared: each field of their identity
/// (`report::identity`) on which they differ, or which varies within one
/// side.
pub fn differences(base: &Side, new: &Side) -> Vec<String> {
    let (a, b) = (base.identity(), new.identity());
    let mut out: Vec<String> = [("BASE", &a), ("NEW", &b)]
        .iter()
        .flat_map(|(side, id)| {
            id.mixed()
                .map(move |(f, v)| format!("{side} mixes {f}: {}", v.join(" | ")))
        })
        .collect();
    out.extend(a.mismatches(&b).iter().map(|m| m.describe("BASE", "NEW")));
    out
}

/// The results of every boot for `name` on one side, with the boot's
/// pairing key.
fn results<'a>(side: &'a Side, name: &str) -> Vec<(Option<(String, usize)>, &'a BenchResult)> {
    side.runs()
        .filter_map(|run| {
            let key = run.pairing.as_ref().map(|p| (p.session.clone(), p.round));
            let r = run
                .report
                .as_ref()?
                .results
                .iter()
                .find(|b| b.name == name)?;
            Some((key, r))
        })
        .collect()
}

/// Compares two sides; an error names what makes them incomparable
/// unless `settings.force`.
pub fn compare(base: &Side, new: &Side, settings: &Settings) -> Result<Comparison, String> {
    let (bi, ni) = (base.info(), new.info());
    if bi.runs == 0 || ni.runs == 0 {
        let which = if bi.runs == 0 { "BASE" } else { "NEW" };
        return Err(format!(
            "{which} has no boot with a report: nothing to compare"
        ));
    }
    // a directory vm's default --out filled with several kernels: pooled,
    // their boots would read as one kernel's noise
    for (which, info) in [("BASE", &bi), ("NEW", &ni)] {
        for (what, kernels) in [("kernels", &info.releases), ("commits", &info.commits)] {
            if kernels.len() > 1 {
                return Err(format!(
                    "{which} holds the results of {} {what} ({}): a side is one kernel; \
                     name its files, or give each kernel its own --out directory",
                    kernels.len(),
                    kernels.join(", ")
                ));
            }
        }
    }
    let diffs = differences(base, new);
    if !diffs.is_empty() && !settings.force {
        return Err(format!(
            "results are not comparable (--force compares anyway):\n  {}",
            diffs.join("\n  ")
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for side in [base, new] {
        for run in side.runs() {
            for r in &run.report.as_ref().expect("runs() has reports").results {
                if !names.contains(&r.name) {
                    names.push(r.name.clone());
                }
            }
        }
    }
    let meter = ni.meter.last().copied().unwrap_or_default();
    let limits = Limits::of(meter, settings);
    let judge = Judge {
        s: settings,
        limits,
        meter,
    };
    let mut paired = false;
    let mut benches: Vec<BenchComparison> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (b, n) = (results(base, name), results(new, name));
            let mut c = judge.bench(name, &b, &n, settings.seed.wrapping_add(i as u64));
            if c.movers.is_some() {
                c.movers = overhead_movers(base, new, &b, &n).or(c.movers);
            }
            paired |= c.metrics.iter().any(|m| m.pairs > 0);
            c
        })
        .collect();
    judge.adjust(&mut benches);
    Ok(Comparison {
        base: bi,
        new: ni,
        settings: settings.clone(),
        meter,
        limits,
        differences: diffs,
        paired,
        notes: [profiled_note(base, new)]
            .into_iter()
            .flatten()
            .chain(
                [("BASE", base), ("NEW", new)]
                    .iter()
                    .filter_map(|(w, s)| no_overhead(w, s)),
            )
            .collect(),
        benches,
    })
}

/// Why no movers are listed when only one side was profiled.
fn profiled_note(base: &Side, new: &Side) -> Option<String> {
    let profiled = |s: &Side| {
        s.runs()
            .filter_map(|r| r.report.as_ref())
            .any(|r| r.results.iter().any(|b| b.profile.is_some()))
    };
    let (b, n) = (profiled(base), profiled(new));
    (b != n).then(|| {
        let (with, without) = if b { ("BASE", "NEW") } else { ("NEW", "BASE") };
        format!(
            "no movers: {with} was profiled (--profile) and {without} was not; \
             profile both to see where the instructions went"
        )
    })
}

/// The benchmarks of a side that have no overhead because their baseline
/// did not run in their boots.
fn no_overhead(which: &str, side: &Side) -> Option<String> {
    let mut missing: Vec<String> = Vec::new();
    for r in side.runs().filter_map(|r| r.report.as_ref()) {
        for b in r.results.iter().filter(|b| b.status == Status::Ok) {
            let Some(base) = registry::find(&b.bench).and_then(|x| x.baseline()) else {
                continue;
            };
            let ran = r
                .results
                .iter()
                .any(|x| x.bench == base.name && x.status == Status::Ok);
            let line = format!("{} (no {})", b.name, base.name);
            if b.overhead_ns.is_none() && !ran && !missing.contains(&line) {
                missing.push(line);
            }
        }
    }
    (!missing.is_empty()).then(|| {
        format!(
            "no overhead in {which} for {}: the baseline did not run (ok) in the same boot",
            missing.join(", ")
        )
    })
}

type Observed<'a> = [(Option<(String, usize)>, &'a BenchResult)];

/// A benchmark's movers against its baseline's profile in the same boots,
/// when it has a baseline (see `movers::of_overhead`).
fn overhead_movers<'a>(
    base: &'a Side,
    new: &'a Side,
    b: &Observed<'a>,
    n: &Observed<'a>,
) -> Option<movers::Movers> {
    let baseline = &b
        .iter()
        .chain(n)
        .find_map(|o| o.1.overhead_ns.as_ref())?
        .baseline;
    let (bb, nb) = (results(base, baseline), results(new, baseline));
    fn of<'a>(o: &Observed<'a>) -> Vec<&'a BenchResult> {
        o.iter().map(|o| o.1).collect()
    }
    movers::of_overhead(baseline, [of(b), of(&bb)], [of(n), of(&nb)])
}

/// Why a side has no figures: unsupported when every result says so.
fn not_ok(side: &str, rs: &Observed) -> Option<(Verdict, String)> {
    if rs.iter().any(|(_, r)| r.status == Status::Ok) {
        return None;
    }
    let first = rs.first().map(|(_, r)| r)?;
    let unsupported = rs.iter().all(|(_, r)| r.status == Status::Unsupported);
    let verdict = if unsupported {
        Verdict::Unsupported
    } else {
        Verdict::Failed
    };
    let why = rs
        .iter()
        .find(|(_, r)| r.status != Status::Unsupported || unsupported)
        .and_then(|(_, r)| r.reason.clone())
        .unwrap_or_else(|| first.status.as_str().into());
    Some((verdict, format!("{side}: {why}")))
}

fn pct(ratio: f64) -> f64 {
    (ratio - 1.0) * 100.0
}

/// Bootstrap interval of stat(new) / stat(base), as a change in percent.
fn ratio_ci(
    base: &[f64],
    new: &[f64],
    stat: fn(&[f64]) -> f64,
    alpha: f64,
    seed: u64,
) -> (f64, f64) {
    let (lo, hi) = stats::bootstrap_ci(&[base, new], |d| stat(&d[1]) / stat(&d[0]), alpha, seed);
    (pct(lo), pct(hi))
}

/// What every verdict of one comparison is judged with.
struct Judge<'a> {
    s: &'a Settings,
    limits: Limits,
    meter: Meter,
}

impl Judge<'_> {
    fn bench(&self, name: &str, base: &Observed, new: &Observed, seed: u64) -> BenchComparison {
        let missing = |side: &str| BenchComparison {
            name: name.into(),
            verdict: Verdict::Missing,
            basis: Vec::new(),
            reason: Some(format!("not in {side}")),
            metrics: Vec::new(),
            movers: None,
        };
        if base.is_empty() {
            return missing("BASE");
        }
        if new.is_empty() {
            return missing("NEW");
        }
        let problems: Vec<(Verdict, String)> = [not_ok("BASE", base), not_ok("NEW", new)]
            .into_iter()
            .flatten()
            .collect();
        if let Some(verdict) = problems.iter().map(|(v, _)| *v).min() {
            return BenchComparison {
                name: name.into(),
                verdict,
                basis: Vec::new(),
                reason: Some(
                    problems
                        .into_iter()
                        .map(|(_, r)| r)
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                metrics: Vec::new(),
                movers: None,
            };
        }
        let metrics: Vec<MetricComparison> = self
            .s
            .metrics
            .iter()
            .filter_map(|&m| self.metric(m, base, new, seed))
            .collect();
        let mut b = BenchComparison {
            name: name.into(),
            verdict: Verdict::NoChange,
            basis: Vec::new(),
            reason: None,
            metrics,
            movers: movers::of(base.iter().map(|o| o.1), new.iter().map(|o| o.1)),
        };
        settle(&mut b);
        b
    }

    /// Decides every tested metric again on its p adjusted across the
    /// whole comparison (Benjamini–Hochberg): the matrix makes some 90
    /// tests a compare, and at --alpha each an unchanged kernel would
    /// flag a few of them by chance. The icount meter has no p.
    fn adjust(&self, benches: &mut [BenchComparison]) {
        let tested: Vec<&mut MetricComparison> = benches
            .iter_mut()
            .flat_map(|b| b.metrics.iter_mut())
            .filter(|m| m.p.is_some())
            .collect();
        let ps: Vec<f64> = tested.iter().filter_map(|m| m.p).collect();
        for (m, q) in tested.into_iter().zip(stats::benjamini_hochberg(&ps)) {
            m.q = Some(q);
            m.verdict = self.decide(m);
        }
        benches
            .iter_mut()
            .filter(|b| !b.metrics.is_empty())
            .for_each(settle);
    }

    /// A metric's verdict from its evidence, significance on `q`.
    /// The threshold `bench` is judged at: the comparison's, or under
    /// icount at least [`ICOUNT_LAYOUT_PCT`] for the uprobe family.
    fn threshold(&self, bench: &str) -> f64 {
        let layout = self.meter == Meter::Icount
            && registry::find(bench).is_some_and(|b| matches!(b.trigger, Trigger::Call(_)));
        if layout {
            self.limits.threshold_pct.max(ICOUNT_LAYOUT_PCT)
        } else {
            self.limits.threshold_pct
        }
    }

    fn decide(&self, m: &MetricComparison) -> Verdict {
        let limits = Limits {
            threshold_pct: m.threshold_pct,
            ..self.limits
        };
        if m.boots_needed.is_some() {
            Verdict::Inconclusive
        } else if m.test == TestKind::Counted {
            counted_verdict(m.change_pct, m.noise_cv, m.better, limits)
        } else {
            verdict(
                m.change_pct,
                m.ci_pct,
                m.q,
                m.noise_cv,
                m.better,
                limits,
                self.s.alpha,
            )
        }
    }
}

/// A benchmark's verdict: the most severe of its metrics', resting on
/// those that have it.
fn settle(b: &mut BenchComparison) {
    b.verdict = b
        .metrics
        .iter()
        .map(|m| m.verdict)
        .min()
        .unwrap_or(Verdict::NoChange);
    b.basis = b
        .metrics
        .iter()
        .filter(|m| m.verdict == b.verdict)
        .map(|m| m.metric)
        .collect();
}

/// The figures of one side for `metric`, one per boot.
fn values(metric: Metric, rs: &Observed) -> Vec<f64> {
    rs.iter().filter_map(|(_, r)| metric.value(r)).collect()
}

/// The measured per-sample rates of one side's boots.
fn seconds(rs: &Observed) -> Vec<Vec<f64>> {
    rs.iter()
        .filter(|(_, r)| r.status == Status::Ok)
        .map(|(_, r)| {
            r.samples
                .iter()
                .filter(|x| !x.warmup)
                .map(|x| x.mps)
                .collect()
        })
        .collect()
}

/// Ratios NEW/BASE of the boots of one round, when the runs were
/// interleaved.
fn paired_ratios(metric: Metric, base: &Observed, new: &Observed) -> Vec<f64> {
    base.iter()
        .filter_map(|(key, b)| {
            let key = key.as_ref()?;
            let n = new.iter().find(|(k, _)| k.as_ref() == Some(key))?.1;
            Some(metric.value(n)? / metric.value(b)?)
        })
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect()
}

/// The relative spread, (max - min) / |median|, of figures that should
/// repeat exactly.
fn spread(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    (hi - lo) / stats::median(xs).abs()
}

/// One metric's figures on both sides and their statistics: what a test
/// is run on.
#[derive(Clone, Copy)]
struct Figures<'r, 'a> {
    metric: Metric,
    base: &'r Observed<'a>,
    new: &'r Observed<'a>,
    bs: &'r SideStats,
    ns: &'r SideStats,
}

/// What a metric's test found.
struct Evidence {
    change_pct: f64,
    ci: (f64, f64),
    test: TestKind,
    p: Option<f64>,
    pairs: usize,
    noise_cv: f64,
    /// Set when the test could not reach alpha with these sample sizes.
    boots_needed: Option<usize>,
}

impl Judge<'_> {
    fn metric(
        &self,
        metric: Metric,
        base: &Observed,
        new: &Observed,
        seed: u64,
    ) -> Option<MetricComparison> {
        let (bv, nv) = (values(metric, base), values(metric, new));
        if bv.is_empty() || nv.is_empty() {
            return None;
        }
        let better = metric.better(base[0].1);
        let (bs, ns) = (SideStats::of(bv), SideStats::of(nv));
        let e = if !(bs.median > 0.0 && ns.median > 0.0) {
            // a cost at or below zero (noise around a free path) has no ratio
            Evidence {
                change_pct: f64::NAN,
                ci: (f64::NAN, f64::NAN),
                test: TestKind::None,
                p: None,
                pairs: 0,
                noise_cv: bs.cv.max(ns.cv),
                boots_needed: None,
            }
        } else if self.meter == Meter::Icount {
            self.counted(Figures {
                metric,
                base,
                new,
                bs: &bs,
                ns: &ns,
            })
        } else {
            self.tested(
                Figures {
                    metric,
                    base,
                    new,
                    bs: &bs,
                    ns: &ns,
                },
                seed,
            )
        };
        let mut m = MetricComparison {
            metric,
            better,
            base: bs,
            new: ns,
            change_pct: e.change_pct,
            ci_pct: e.ci,
            test: e.test,
            p: e.p,
            // a family of one until `adjust` knows the whole comparison
            q: e.p,
            pairs: e.pairs,
            noise_cv: e.noise_cv,
            boots_needed: e.boots_needed,
            threshold_pct: self.threshold(&base[0].1.bench),
            verdict: Verdict::NoChange,
        };
        m.verdict = self.decide(&m);
        Some(m)
    }

    /// Under icount a boot's figure repeats to within [`ICOUNT_AA_PCT`],
    /// so one boot a side decides: the change against the threshold, with
    /// an interval of the A/A bound or the spread seen, whichever is wider.
    fn counted(&self, f: Figures) -> Evidence {
        let ratios = paired_ratios(f.metric, f.base, f.new);
        let paired = ratios.len() >= 2 && !self.s.unpaired;
        let change_pct = if paired {
            pct(stats::median(&ratios))
        } else {
            pct(f.ns.median / f.bs.median)
        };
        // the rate's samples within a boot show a guest that is not
        // deterministic (a calibration or a timer landing in one boot)
        let samples = seconds(f.base)
            .iter()
            .chain(&seconds(f.new))
            .map(|x| stats::cv(x))
            .filter(|c| c.is_finite())
            .fold(0.0, f64::max);
        let noise_cv = spread(&f.bs.values).max(spread(&f.ns.values)).max(samples);
        let half = (ICOUNT_AA_PCT / 100.0).max(noise_cv) * 100.0;
        Evidence {
            change_pct,
            ci: (change_pct - half, change_pct + half),
            test: TestKind::Counted,
            p: None,
            pairs: if paired { ratios.len() } else { 0 },
            noise_cv,
            boots_needed: None,
        }
    }

    /// Under the time meter: a rank test across boots (paired when
    /// interleaved), else Welch on the seconds of single boots.
    fn tested(&self, f: Figures, seed: u64) -> Evidence {
        let (alpha, n) = (self.s.alpha, (f.bs.values.len(), f.ns.values.len()));
        let ratios = paired_ratios(f.metric, f.base, f.new);
        if ratios.len() >= 2 && !self.s.unpaired {
            let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
            let (lo, hi) = stats::bootstrap_ci(&[&ratios], |d| stats::median(&d[0]), alpha, seed);
            return Evidence {
                change_pct: pct(stats::median(&ratios)),
                ci: (pct(lo), pct(hi)),
                test: TestKind::WilcoxonPaired,
                p: Some(stats::wilcoxon_signed_rank(&logs).p),
                pairs: ratios.len(),
                noise_cv: stats::cv(&ratios),
                boots_needed: (stats::wilcoxon_min_p(ratios.len()) >= alpha)
                    .then(|| (1..64).find(|&k| stats::wilcoxon_min_p(k) < alpha))
                    .flatten(),
            };
        }
        let change_pct = pct(f.ns.median / f.bs.median);
        if n.0 >= 2 && n.1 >= 2 {
            return Evidence {
                change_pct,
                ci: ratio_ci(&f.bs.values, &f.ns.values, stats::median, alpha, seed),
                test: TestKind::MannWhitney,
                p: Some(stats::mann_whitney(&f.bs.values, &f.ns.values).p),
                pairs: 0,
                noise_cv: f.bs.cv.max(f.ns.cv),
                boots_needed: (stats::mann_whitney_min_p(n.0, n.1) >= alpha)
                    .then(|| (2..64).find(|&k| stats::mann_whitney_min_p(k, k) < alpha))
                    .flatten(),
            };
        }
        if f.metric == Metric::Rate && n == (1, 1) {
            let (bsec, nsec) = (seconds(f.base).concat(), seconds(f.new).concat());
            return Evidence {
                change_pct,
                ci: ratio_ci(&bsec, &nsec, stats::mean, alpha, seed),
                test: TestKind::WelchPerSecond,
                p: Some(stats::welch(&bsec, &nsec).p),
                pairs: 0,
                noise_cv: stats::cv(&bsec).max(stats::cv(&nsec)),
                boots_needed: None,
            };
        }
        // one boot against several, or an overhead of single boots: no
        // test applies; a rank test would need this many a side
        Evidence {
            change_pct,
            ci: (f64::NAN, f64::NAN),
            test: TestKind::None,
            p: None,
            pairs: 0,
            noise_cv: f.bs.cv.max(f.ns.cv),
            boots_needed: (2..64).find(|&k| stats::mann_whitney_min_p(k, k) < alpha),
        }
    }
}

/// The icount verdict: a spread beyond the CV limit means the guest was
/// not deterministic, unless the change clears the threshold by more than
/// that spread.
pub fn counted_verdict(change_pct: f64, noise_cv: f64, better: Better, l: Limits) -> Verdict {
    if change_pct.is_nan() {
        return Verdict::NoChange;
    }
    let noise_pct = noise_cv * 100.0;
    if noise_cv > l.cv_limit && change_pct.abs() < l.threshold_pct + noise_pct {
        return Verdict::Unstable;
    }
    if change_pct.abs() < l.threshold_pct {
        return Verdict::NoChange;
    }
    direction(change_pct, better)
}

fn direction(change_pct: f64, better: Better) -> Verdict {
    if better.is_worse(change_pct) {
        Verdict::Regressed
    } else {
        Verdict::Improved
    }
}

/// The verdict of one metric, significant when `q` (the test's p,
/// adjusted) is below alpha. Noise above the CV limit makes it `unstable`
/// unless the whole interval lies beyond the threshold.
pub fn verdict(
    change_pct: f64,
    (lo, hi): (f64, f64),
    q: Option<f64>,
    noise_cv: f64,
    better: Better,
    l: Limits,
    alpha: f64,
) -> Verdict {
    let t = l.threshold_pct;
    let significant = q.is_some_and(|q| q < alpha);
    let clear = significant && (lo >= t || hi <= -t);
    if noise_cv > l.cv_limit && !clear {
        return Verdict::Unstable;
    }
    if !significant || change_pct.is_nan() {
        return Verdict::NoChange;
    }
    if change_pct.abs() < t {
        return Verdict::WithinNoise;
    }
    direction(change_pct, better)
}

#[cfg(test)]
mod tests;
