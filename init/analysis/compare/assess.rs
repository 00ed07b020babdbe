//! Judging one benchmark: its metrics' evidence weighed against the
//! limits, the p-values adjusted across the whole comparison, and the
//! benchmark's verdict settled from its metrics'.

use super::evidence::{self, values, Evidence, Observations};
use super::seen::Observed;
use super::{
    counted_verdict, entries_verdict, movers, verdict, BenchComparison, Limits, Metric,
    MetricComparison, Settings, SideStats, TestKind, Verdict,
};
use trig_schema::stats;
use trig_schema::{Meter, Status};

/// Why a side has no figures: unsupported when every result says so.
fn not_ok(side: &str, rs: &Observed) -> Option<(Verdict, String)> {
    if rs.iter().any(|o| o.result.status == Status::Ok) {
        return None;
    }
    let first = rs.first()?.result;
    let unsupported = rs.iter().all(|o| o.result.status == Status::Unsupported);
    let verdict = if unsupported {
        Verdict::Unsupported
    } else {
        Verdict::Failed
    };
    let why = rs
        .iter()
        .map(|o| o.result)
        .find(|r| r.status != Status::Unsupported || unsupported)
        .and_then(|r| r.reason.clone())
        .unwrap_or_else(|| first.status.as_str().into());
    Some((verdict, format!("{side}: {why}")))
}

/// A benchmark judged without figures: `verdict`, and why.
fn without_figures(name: &str, verdict: Verdict, why: String) -> BenchComparison {
    BenchComparison {
        name: name.into(),
        verdict,
        basis: Vec::new(),
        reason: Some(why),
        metrics: Vec::new(),
        movers: None,
    }
}

/// A benchmark that one side lacks, or that failed or is unsupported on
/// either: judged so, without figures.
fn unmeasured(name: &str, base: &Observed, new: &Observed) -> Option<BenchComparison> {
    if base.is_empty() {
        return Some(without_figures(
            name,
            Verdict::Missing,
            "not in BASE".into(),
        ));
    }
    if new.is_empty() {
        return Some(without_figures(name, Verdict::Missing, "not in NEW".into()));
    }
    let mut problems: Vec<(Verdict, String)> = [not_ok("BASE", base), not_ok("NEW", new)]
        .into_iter()
        .flatten()
        .collect();
    // NEW's kernel lost what BASE's attached to: its figure went missing
    if let [(v @ Verdict::Unsupported, why)] = problems.as_mut_slice() {
        if why.starts_with("NEW") {
            *v = Verdict::Missing;
            why.push_str(" (BASE measured it)");
        }
    }
    let verdict = problems.iter().map(|(v, _)| *v).min()?;
    let why: Vec<String> = problems.into_iter().map(|(_, r)| r).collect();
    Some(without_figures(name, verdict, why.join("; ")))
}

/// What every verdict of one comparison is judged with.
pub(super) struct Assessor<'a> {
    pub(super) s: &'a Settings,
    pub(super) limits: Limits,
    pub(super) meter: Meter,
}

impl Assessor<'_> {
    pub(super) fn bench(
        &self,
        name: &str,
        base: &Observed,
        new: &Observed,
        seed: u64,
    ) -> BenchComparison {
        if let Some(unmeasured) = unmeasured(name, base, new) {
            return unmeasured;
        }
        let metrics: Vec<MetricComparison> = self
            .s
            .metrics
            .iter()
            .filter_map(|&m| self.metric(m, base, new, seed))
            .collect();
        // nothing compared, though one side had a figure: not `no-change`
        if metrics.is_empty() {
            let one_sided = self.s.metrics.iter().find_map(|&m| {
                match (values(m, base).is_empty(), values(m, new).is_empty()) {
                    (true, false) => Some((m, "BASE")),
                    (false, true) => Some((m, "NEW")),
                    _ => None,
                }
            });
            if let Some((m, side)) = one_sided {
                let why = format!("no {} figure in {side}", m.as_str());
                return without_figures(name, Verdict::Missing, why);
            }
        }
        let mut b = BenchComparison {
            name: name.into(),
            verdict: Verdict::NoChange,
            basis: Vec::new(),
            reason: None,
            metrics,
            movers: movers::of(base.iter().map(|o| o.result), new.iter().map(|o| o.result)),
        };
        settle(&mut b);
        b
    }

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
        let better = metric.better(base[0].result.better);
        let (bs, ns) = (SideStats::of(bv), SideStats::of(nv));
        let e = self.evidence(metric, base, new, (&bs, &ns), seed);
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
            threshold_pct: self.limits.threshold_pct,
            threshold_entries: metric.is_count().then_some(self.s.threshold_entries),
            verdict: Verdict::NoChange,
        };
        m.verdict = self.decide(&m);
        Some(m)
    }

    /// The evidence of a change in `metric`: counted under icount, tested
    /// under time; none for a cost at or below zero (noise around a free
    /// path), which has no ratio.
    fn evidence(
        &self,
        metric: Metric,
        base: &Observed,
        new: &Observed,
        (bs, ns): (&SideStats, &SideStats),
        seed: u64,
    ) -> Evidence {
        let figures = Observations {
            metric,
            base,
            new,
            bs,
            ns,
        };
        if !(bs.median > 0.0 && ns.median > 0.0) {
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
            evidence::counted(self.s, figures)
        } else {
            evidence::tested(self.s, figures, seed)
        }
    }

    /// Decides every tested metric again on its p adjusted across the
    /// whole comparison (Benjamini–Hochberg): the matrix makes some 90
    /// tests a compare, and at --alpha each an unchanged kernel would
    /// flag a few of them by chance. The icount meter has no p.
    pub(super) fn adjust(&self, benches: &mut [BenchComparison]) {
        let tested: Vec<&mut MetricComparison> = benches
            .iter_mut()
            .flat_map(|b| b.metrics.iter_mut())
            .filter(|m| m.p.is_some())
            .collect();
        let ps: Vec<f64> = tested.iter().filter_map(|m| m.p).collect();
        // the level a lone change must reach after the adjustment
        let bar = self.s.alpha / ps.len().max(1) as f64;
        for (m, q) in tested.into_iter().zip(stats::benjamini_hochberg(&ps)) {
            m.q = Some(q);
            // a count from the raw alpha falls short of the adjusted level
            if let Some(k) = boots_needed(m, bar).filter(|_| q >= self.s.alpha) {
                m.boots_needed = Some(k);
            }
            m.verdict = self.decide(m);
        }
        benches
            .iter_mut()
            .filter(|b| !b.metrics.is_empty())
            .for_each(settle);
    }

    /// A metric's verdict from its evidence, significance on `q`.
    fn decide(&self, m: &MetricComparison) -> Verdict {
        let limits = Limits {
            threshold_pct: m.threshold_pct,
            ..self.limits
        };
        if let Some(t) = m.threshold_entries {
            entries_verdict(m.per_event_change(), t, m.better)
        } else if m.boots_needed.is_some() {
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

/// With too few boots for a rank test to reach `bar` whatever the data:
/// how many pairs (or boots a side) would.
fn boots_needed(m: &MetricComparison, bar: f64) -> Option<usize> {
    match m.test {
        TestKind::WilcoxonPaired if stats::wilcoxon_min_p(m.pairs) >= bar => {
            (m.pairs..64).find(|&k| stats::wilcoxon_min_p(k) < bar)
        }
        TestKind::MannWhitney
            if stats::mann_whitney_min_p(m.base.values.len(), m.new.values.len()) >= bar =>
        {
            (2..64).find(|&k| stats::mann_whitney_min_p(k, k) < bar)
        }
        _ => None,
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
