//! What a metric's figures show: the change between the sides, its
//! interval, and the test that fits the meter and the boots (counted
//! under icount; paired, rank or per-second tests under time).

use super::seen::Observed;
use super::{Metric, Settings, SideStats, TestKind, ICOUNT_AA_PCT};
use trig_schema::stats;
use trig_schema::Status;

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

/// The figures of one side for `metric`, one per boot.
pub(super) fn values(metric: Metric, rs: &Observed) -> Vec<f64> {
    rs.iter().filter_map(|o| o.value(metric)).collect()
}

/// The measured per-sample rates of one side's boots.
fn seconds(rs: &Observed) -> Vec<Vec<f64>> {
    rs.iter()
        .map(|o| o.result)
        .filter(|r| r.status == Status::Ok)
        .map(|r| {
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
        .filter_map(|b| {
            let key = b.key.as_ref()?;
            let n = new.iter().find(|n| n.key.as_ref() == Some(key))?;
            Some(n.value(metric)? / b.value(metric)?)
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
pub(super) struct Observations<'r, 'a> {
    pub(super) metric: Metric,
    pub(super) base: &'r Observed<'a>,
    pub(super) new: &'r Observed<'a>,
    pub(super) bs: &'r SideStats,
    pub(super) ns: &'r SideStats,
}

/// What a metric's test found.
pub(super) struct Evidence {
    pub(super) change_pct: f64,
    pub(super) ci: (f64, f64),
    pub(super) test: TestKind,
    pub(super) p: Option<f64>,
    pub(super) pairs: usize,
    pub(super) noise_cv: f64,
    /// Set when the test could not reach alpha with these sample sizes.
    pub(super) boots_needed: Option<usize>,
}

/// Under icount a boot's figure repeats to within [`ICOUNT_AA_PCT`],
/// so one boot a side decides: the change against the threshold, with
/// an interval of the A/A bound or the spread seen, whichever is wider.
pub(super) fn counted(s: &Settings, f: Observations) -> Evidence {
    let ratios = paired_ratios(f.metric, f.base, f.new);
    let paired = ratios.len() >= 2 && !s.unpaired;
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
pub(super) fn tested(s: &Settings, f: Observations, seed: u64) -> Evidence {
    let (alpha, n) = (s.alpha, (f.bs.values.len(), f.ns.values.len()));
    let ratios = paired_ratios(f.metric, f.base, f.new);
    if ratios.len() >= 2 && !s.unpaired {
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
