//! `trig-init compare`: judges NEW against BASE benchmark by benchmark,
//! from the per-boot figures of `trig-init vm` results.
//!
//! One figure per boot and metric (the mean of its measured seconds, or
//! its per-event overhead); across boots the median; the change of the
//! median with a bootstrap interval; a rank test for significance, its p
//! adjusted across every test of the comparison (Benjamini–Hochberg).
//! Boots that `ab` interleaved are paired by round, which cancels slow
//! drift of the host.

mod assess;
pub mod cache_lines;
mod comparison;
mod evidence;
mod metric;
pub mod movers;
mod notes;
mod seen;
mod side;
pub mod source_lines;
mod verdict;

pub use comparison::{BenchComparison, Comparison, MetricComparison, SideStats, TestKind};
pub use metric::{unmeasured, Metric, MetricChoice};
pub use side::{differences, SideInfo};

pub use crate::assessment::{Verdict, DEFAULT_THRESHOLD_ENTRIES};
use movers::overhead_movers;
use notes::notes;
use side::{bench_names, comparable, results};
use trig_schema::error::Error;
pub use verdict::{counted_verdict, entries_verdict, verdict, Limits, ICOUNT_AA_PCT};

use crate::input::Side;
use assess::Assessor;

/// Smaller changes (instructions, calls, misses per event, of a function,
/// a source line or a shared line) are not listed among the movers: two
/// boots of one kernel move none by more than this (docs/profile.md, the
/// A/A of `scripts/proofs/profile-proof.sh`).
pub const MIN_MOVE: f64 = 0.05;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Smallest change, in percent, that counts as a regression; None:
    /// the meter's ([`Limits::of`]).
    pub threshold_pct: Option<f64>,
    /// Smallest change of an entry count (traps, syscalls, interrupts),
    /// in entries per event, that counts: these are exact counts, and one
    /// trap more from none has no relative change.
    pub threshold_entries: f64,
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
            threshold_entries: DEFAULT_THRESHOLD_ENTRIES,
            alpha: 0.05,
            cv_limit: None,
            metrics: vec![Metric::Rate, Metric::Overhead],
            force: false,
            seed: 0x7419,
            unpaired: false,
        }
    }
}

/// Compares two sides; an error names what makes them incomparable
/// unless `settings.force`.
pub fn compare(base: &Side, new: &Side, settings: &Settings) -> Result<Comparison, Error> {
    let (bi, ni) = (base.info(), new.info());
    let diffs = comparable(base, new, (&bi, &ni), (settings.force, &settings.metrics))?;
    let meter = ni.meter.last().copied().unwrap_or_default();
    let limits = Limits::of(meter, settings);
    let assessor = Assessor {
        s: settings,
        limits,
        meter,
    };
    let mut paired = false;
    let mut benches: Vec<BenchComparison> = bench_names(base, new)
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (b, n) = (results(base, name), results(new, name));
            let mut c = assessor.bench(name, &b, &n, settings.seed.wrapping_add(i as u64));
            if c.movers.is_some() {
                c.movers = overhead_movers(base, new, &b, &n).or(c.movers);
            }
            paired |= c.metrics.iter().any(|m| m.pairs > 0);
            c
        })
        .collect();
    assessor.adjust(&mut benches);
    Ok(Comparison {
        base: bi,
        new: ni,
        settings: settings.clone(),
        meter,
        limits,
        differences: diffs,
        paired,
        notes: notes(base, new),
        benches,
    })
}
