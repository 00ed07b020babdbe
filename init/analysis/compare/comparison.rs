//! What a comparison found: per benchmark and metric, both sides'
//! figures, the change, the test and the verdict.

use super::movers::Movers;
use super::side::SideInfo;
use super::{Limits, Metric, Settings, Verdict};
use crate::gate::Tally;
use serde::Serialize;
use trig_schema::stats;
use trig_schema::{Better, Meter};

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
    pub(super) fn of(values: Vec<f64>) -> Self {
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
    /// An entry count's: the smallest change in entries per event, which
    /// it is judged on instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold_entries: Option<f64>,
    pub verdict: Verdict,
}

impl MetricComparison {
    /// NEW − BASE of the cost of one event (instructions under icount, ns
    /// under time): a cost's own figures, or a rate's through 1000/rate (a
    /// rate is events per 10^9 ns or instructions).
    pub fn per_event_change(&self) -> f64 {
        let (base, new) = (self.base.median, self.new.median);
        match self.metric {
            Metric::Rate => 1e3 / new - 1e3 / base,
            _ => new - base,
        }
    }
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
    pub movers: Option<Movers>,
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
    /// Why figures one would expect are not there (movers, overheads).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub benches: Vec<BenchComparison>,
}

impl Comparison {
    pub fn regressed(&self) -> bool {
        self.benches.iter().any(|b| b.verdict == Verdict::Regressed)
    }

    /// What the benchmarks came to, for the exit status.
    pub fn tally(&self) -> Tally {
        Tally::of(self.benches.iter().map(|b| b.verdict))
    }

    pub fn count(&self, v: Verdict) -> usize {
        self.benches.iter().filter(|b| b.verdict == v).count()
    }
}
