//! The verdicts and the rules that give them: the thresholds fit for each
//! meter's noise, and a metric's verdict from its change, interval,
//! significance and noise.

use super::Settings;
use crate::assessment::Verdict;
use serde::Serialize;
use trig_schema::{Better, Meter};

/// The largest difference between two boots of one kernel under the
/// icount meter, in percent, over every `ok` benchmark of the whole matrix
/// (x86-64 Debian 6.1 and 6.12, arm64 Debian 6.1; docs/meter.md,
/// "Determinism, measured"): the noise that its verdicts are sized from.
pub const ICOUNT_AA_PCT: f64 = 0.05;

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

/// The verdict of an entry count: NEW − BASE entries per event against
/// an absolute threshold (exact counts, often from none).
pub fn entries_verdict(change: f64, threshold: f64, better: Better) -> Verdict {
    if change.abs() < threshold || change.is_nan() {
        return Verdict::NoChange;
    }
    direction(change, better)
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
