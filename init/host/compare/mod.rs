//! `trig-init compare`: judges NEW against BASE benchmark by benchmark,
//! from the per-boot figures of `trig-init vm` results.
//!
//! One figure per boot and metric (the mean of its measured seconds, or
//! its per-event overhead); across boots the median; the change of the
//! median with a bootstrap interval; a rank test for significance. Boots
//! that `ab` interleaved are paired by round, which cancels slow drift of
//! the host.

pub mod input;
pub mod render;

use crate::report::{BenchResult, Better, RunRecord, RunSet, Status};
use crate::stats;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Smallest change, in percent, that counts as a regression.
    pub threshold_pct: f64,
    pub alpha: f64,
    /// Above this coefficient of variation a benchmark is `unstable`.
    pub cv_limit: f64,
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
            threshold_pct: 3.0,
            alpha: 0.05,
            cv_limit: 0.10,
            metrics: vec![Metric::Rate, Metric::Overhead],
            force: false,
            seed: 0x7419,
            unpaired: false,
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
        SideStats {
            median: stats::median(&values),
            mean: stats::mean(&values),
            stddev: stats::stddev(&values),
            cv: stats::cv(&values),
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
    /// Not enough data for a test.
    None,
}

impl TestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TestKind::WilcoxonPaired => "wilcoxon-paired",
            TestKind::MannWhitney => "mann-whitney",
            TestKind::WelchPerSecond => "welch-per-second (weak)",
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
    pub p: Option<f64>,
    /// Boot pairs used (paired path only).
    pub pairs: usize,
    /// The noise the verdict weighed: CV of the paired ratios, else the
    /// larger CV of the two sides.
    pub noise_cv: f64,
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
}

/// What one side of the comparison was.
#[derive(Debug, Clone, Serialize)]
pub struct SideInfo {
    pub files: Vec<String>,
    pub releases: Vec<String>,
    pub commits: Vec<String>,
    pub arch: Vec<String>,
    pub accel: Vec<String>,
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
    /// What makes the sides not comparable (only with `force`).
    pub differences: Vec<String>,
    pub paired: bool,
    pub benches: Vec<BenchComparison>,
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
            arch: distinct(self.sets.iter().map(|s| s.vm.arch.clone())),
            accel: distinct(self.sets.iter().map(|s| s.vm.accel.clone())),
            cpus: distinct(self.sets.iter().map(|s| s.vm.cpus)),
            runs: self.runs().count(),
            inject: distinct(
                self.runs()
                    .filter_map(|r| r.report.as_ref()?.params.inject.clone()),
            ),
        }
    }

    /// What must match for figures to be comparable: (kind, value).
    fn signature(&self) -> BTreeSet<(&'static str, String)> {
        let mut sig = BTreeSet::new();
        for s in &self.sets {
            sig.insert(("results schema version", s.schema_version.to_string()));
            sig.insert(("architecture", s.vm.arch.clone()));
            sig.insert(("accelerator", s.vm.accel.clone()));
            sig.insert(("CPUs", s.vm.cpus.to_string()));
        }
        for r in self.runs().filter_map(|r| r.report.as_ref()) {
            let p = &r.params;
            sig.insert(("report schema version", r.schema_version.to_string()));
            sig.insert((
                "parameters",
                format!(
                    "warmup {} s, duration {} s, producers {:?}, affinity {}, batch iters {}, string lengths {:?}, rename thread {}",
                    p.warmup_s, p.duration_s, p.producers, p.affinity, p.batch_iters, p.cmp_str_lens, p.rename_thread
                ),
            ));
        }
        sig
    }
}

/// Why BASE and NEW cannot be compared: each kind of setting on which
/// they differ, or which varies within one side.
pub fn differences(base: &Side, new: &Side) -> Vec<String> {
    let (a, b) = (base.signature(), new.signature());
    let kinds: BTreeSet<&str> = a.iter().chain(&b).map(|(k, _)| *k).collect();
    let values = |sig: &BTreeSet<(&str, String)>, kind: &str| -> Vec<String> {
        sig.iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let mut out = Vec::new();
    for kind in kinds {
        let (va, vb) = (values(&a, kind), values(&b, kind));
        for (side, v) in [("BASE", &va), ("NEW", &vb)] {
            if v.len() > 1 {
                out.push(format!("{side} mixes {kind}: {}", v.join(" | ")));
            }
        }
        if va != vb {
            out.push(format!(
                "{kind}: BASE {} vs NEW {}",
                va.join(" | "),
                vb.join(" | ")
            ));
        }
    }
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
    let mut paired = false;
    let benches = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (b, n) = (results(base, name), results(new, name));
            let c = judge_bench(name, &b, &n, settings, settings.seed.wrapping_add(i as u64));
            paired |= c.metrics.iter().any(|m| m.pairs > 0);
            c
        })
        .collect();
    Ok(Comparison {
        base: bi,
        new: ni,
        settings: settings.clone(),
        differences: diffs,
        paired,
        benches,
    })
}

type Observed<'a> = [(Option<(String, usize)>, &'a BenchResult)];

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

fn judge_bench(
    name: &str,
    base: &Observed,
    new: &Observed,
    s: &Settings,
    seed: u64,
) -> BenchComparison {
    let missing = |side: &str| BenchComparison {
        name: name.into(),
        verdict: Verdict::Missing,
        basis: Vec::new(),
        reason: Some(format!("not in {side}")),
        metrics: Vec::new(),
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
        };
    }
    let metrics: Vec<MetricComparison> = s
        .metrics
        .iter()
        .filter_map(|&m| judge_metric(m, base, new, s, seed))
        .collect();
    let verdict = metrics
        .iter()
        .map(|m| m.verdict)
        .min()
        .unwrap_or(Verdict::NoChange);
    BenchComparison {
        name: name.into(),
        verdict,
        basis: metrics
            .iter()
            .filter(|m| m.verdict == verdict)
            .map(|m| m.metric)
            .collect(),
        reason: None,
        metrics,
    }
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

fn judge_metric(
    metric: Metric,
    base: &Observed,
    new: &Observed,
    s: &Settings,
    seed: u64,
) -> Option<MetricComparison> {
    let values =
        |rs: &Observed| -> Vec<f64> { rs.iter().filter_map(|(_, r)| metric.value(r)).collect() };
    let (bv, nv) = (values(base), values(new));
    if bv.is_empty() || nv.is_empty() {
        return None;
    }
    let better = metric.better(base[0].1);
    let (bs, ns) = (SideStats::of(bv), SideStats::of(nv));
    // ratios of the boots of one round, when the runs were interleaved
    let ratios: Vec<f64> = base
        .iter()
        .filter_map(|(key, b)| {
            let key = key.as_ref()?;
            let n = new.iter().find(|(k, _)| k.as_ref() == Some(key))?.1;
            Some(metric.value(n)? / metric.value(b)?)
        })
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    let positive = bs.median > 0.0 && ns.median > 0.0;
    let (change_pct, ci, test, p, pairs, noise_cv) = if !positive {
        // a cost at or below zero (noise around a free path) has no ratio
        (
            f64::NAN,
            (f64::NAN, f64::NAN),
            TestKind::None,
            None,
            0,
            bs.cv.max(ns.cv),
        )
    } else if ratios.len() >= 2 && !s.unpaired {
        let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
        let (lo, hi) = stats::bootstrap_ci(&[&ratios], |d| stats::median(&d[0]), s.alpha, seed);
        (
            pct(stats::median(&ratios)),
            (pct(lo), pct(hi)),
            TestKind::WilcoxonPaired,
            Some(stats::wilcoxon_signed_rank(&logs).p),
            ratios.len(),
            stats::cv(&ratios),
        )
    } else if bs.values.len() >= 2 && ns.values.len() >= 2 {
        (
            pct(ns.median / bs.median),
            ratio_ci(&bs.values, &ns.values, stats::median, s.alpha, seed),
            TestKind::MannWhitney,
            Some(stats::mann_whitney(&bs.values, &ns.values).p),
            0,
            bs.cv.max(ns.cv),
        )
    } else if metric == Metric::Rate && bs.values.len() == 1 && ns.values.len() == 1 {
        let seconds = |rs: &Observed| -> Vec<f64> {
            rs.iter()
                .filter(|(_, r)| r.status == Status::Ok)
                .flat_map(|(_, r)| r.samples.iter().filter(|x| !x.warmup).map(|x| x.mps))
                .collect()
        };
        let (bsec, nsec) = (seconds(base), seconds(new));
        (
            pct(ns.median / bs.median),
            ratio_ci(&bsec, &nsec, stats::mean, s.alpha, seed),
            TestKind::WelchPerSecond,
            Some(stats::welch(&bsec, &nsec).p),
            0,
            stats::cv(&bsec).max(stats::cv(&nsec)),
        )
    } else {
        (
            pct(ns.median / bs.median),
            (f64::NAN, f64::NAN),
            TestKind::None,
            None,
            0,
            bs.cv.max(ns.cv),
        )
    };
    let verdict = verdict(change_pct, ci, p, noise_cv, better, s);
    Some(MetricComparison {
        metric,
        better,
        base: bs,
        new: ns,
        change_pct,
        ci_pct: ci,
        test,
        p,
        pairs,
        noise_cv,
        verdict,
    })
}

/// The verdict of one metric. Noise above the CV limit makes it
/// `unstable` unless the whole interval lies beyond the threshold.
pub fn verdict(
    change_pct: f64,
    (lo, hi): (f64, f64),
    p: Option<f64>,
    noise_cv: f64,
    better: Better,
    s: &Settings,
) -> Verdict {
    let t = s.threshold_pct;
    let significant = p.is_some_and(|p| p < s.alpha);
    let clear = significant && (lo >= t || hi <= -t);
    if noise_cv > s.cv_limit && !clear {
        return Verdict::Unstable;
    }
    if !significant || change_pct.is_nan() {
        return Verdict::NoChange;
    }
    if change_pct.abs() < t {
        return Verdict::WithinNoise;
    }
    let worse = match better {
        Better::Higher => change_pct < 0.0,
        Better::Lower => change_pct > 0.0,
    };
    if worse {
        Verdict::Regressed
    } else {
        Verdict::Improved
    }
}

#[cfg(test)]
mod tests;
