//! The change points of every series, with what moved together at each
//! and where the results stop being comparable.

use super::{series, History, Point, Series};
use crate::changepoint;
use crate::compare::{self, differences, BenchComparison, Metric, Settings, Verdict};
use crate::input::{Side, Standing};
use crate::steps;
use serde::Serialize;
use trig_schema::{Meter, RunSet};

#[derive(Debug, Clone, Serialize)]
pub struct Found {
    pub bench: String,
    pub metric: Metric,
    /// Index into `History::points` of the first result after the change.
    pub at: usize,
    pub change: ChangePointOut,
    pub regression: bool,
    /// Whether `at` is among the newest results (see `History::new_window`).
    pub new: bool,
    /// Other benchmarks (and metrics) with a change point at the same result.
    pub moved_with: Vec<String>,
    /// The kernel commits of the last result before the change and of the
    /// first after it, when recorded: GOOD and BAD for scripts/bisect.sh.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisect: Option<(String, String)>,
    /// With `--alert`: the newest result when this change point was first
    /// alerted on, if on an earlier run; None means it is alerted now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alerted: Option<String>,
    /// An icount step at the newest result, which the next one confirms
    /// or drops (`steps`): shown, never alerted.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// Icount steps each under `--min-change` that added up to more.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub drift: bool,
}

impl Found {
    /// Its size: relative, but for a count of entries, whose steps are
    /// absolute and may start from none (+1.00/event, not +inf%).
    pub fn size(&self) -> String {
        let c = &self.change;
        if self.metric.is_count() {
            format!("{:+.2}/event", c.after - c.before)
        } else {
            format!("{:+.1}%", c.change_pct)
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangePointOut {
    pub before: f64,
    pub after: f64,
    pub change_pct: f64,
    /// A bootstrap interval under time; under icount, where the figures
    /// are exact, the range of every figure after over every one before.
    pub ci_pct: (f64, f64),
    /// The permutation test's, under time; icount's steps have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
}

impl ChangePointOut {
    /// p to three places, or "-" where there is none.
    pub fn p_text(&self) -> String {
        self.p.map_or_else(|| "-".into(), |p| format!("{p:.3}"))
    }
}

/// A result that cannot be compared with the one before it, by
/// compare's rules (another architecture, accelerator, meter, CPU count,
/// schema or parameter set): every series is split there.
#[derive(Debug, Clone, Serialize)]
pub struct Break {
    /// Index into `History::points` of the first result after it.
    pub at: usize,
    pub why: Vec<String>,
    /// Only trig-init's build changed: series of a build-independent
    /// metric (the kernel's instructions) continue across it.
    pub build_only: bool,
}

/// Where consecutive results of the history are not comparable.
fn breaks(sides: &[Side]) -> Vec<Break> {
    (1..sides.len())
        .filter_map(|at| {
            let (a, b) = (&sides[at - 1], &sides[at]);
            let why = differences(a, b, &[]);
            let build_only = differences(a, b, &[Metric::Kernel]).is_empty();
            (!why.is_empty()).then_some(Break {
                at,
                why,
                build_only,
            })
        })
        .collect()
}

/// Each result's lineage: the results of one identity (compare's rules;
/// trig-init's build left out when `build_free`), numbered in the order
/// they first appear. A series is followed within each lineage, so that a
/// result of another machine or benchmark set in between is passed over,
/// never a wall that hides the step across it.
fn lineages(sides: &[Side], build_free: bool) -> Vec<usize> {
    let metrics: &[Metric] = if build_free { &[Metric::Kernel] } else { &[] };
    // the newest member of each lineage so far
    let mut last: Vec<usize> = Vec::new();
    let mut of = Vec::with_capacity(sides.len());
    for (i, new) in sides.iter().enumerate() {
        let kin = last
            .iter()
            .position(|&j| differences(&sides[j], new, metrics).is_empty());
        let l = kin.unwrap_or_else(|| {
            last.push(i);
            last.len() - 1
        });
        last[l] = i;
        of.push(l);
    }
    of
}

/// The smallest step `history` reports when not told: 5% is far below
/// the time meter's boot-to-boot spread of medians and far above the
/// icount meter's (its boots agree to 0.05%), where 0.25% is five times
/// that noise, as compare's icount threshold.
pub fn default_min_change_pct(entries: &[(Point, Vec<RunSet>)]) -> f64 {
    match meter_of(entries) {
        Meter::Time => 5.0,
        Meter::Icount => 0.25,
    }
}

/// Icount when every result was counted by instructions, else time.
fn meter_of(entries: &[(Point, Vec<RunSet>)]) -> Meter {
    let mut sets = entries.iter().flat_map(|(_, s)| s).peekable();
    if sets.peek().is_some() && sets.all(|s| s.vm.meter == Meter::Icount) {
        Meter::Icount
    } else {
        Meter::Time
    }
}

/// A change point of one stretch of a series, positions into it.
struct Detected {
    index: usize,
    /// The point it is measured from (GOOD for a bisect).
    from: usize,
    change: ChangePointOut,
    pending: bool,
    drift: bool,
}

/// The change points of one stretch of a series by the meter's rule:
/// exact steps under icount, E-divisive under time. `open` when no break
/// follows it.
fn detect(
    meter: Meter,
    metric: Metric,
    xs: &[f64],
    s: &changepoint::Detection,
    open: bool,
) -> Vec<Detected> {
    let threshold = if metric.is_count() {
        steps::Threshold::Absolute(s.min_entries)
    } else {
        steps::Threshold::Relative(s.min_change)
    };
    match meter {
        Meter::Icount => steps::detect(xs, threshold, open)
            .into_iter()
            .map(|st| Detected {
                index: st.index,
                from: st.from,
                change: ChangePointOut {
                    before: st.before,
                    after: st.after,
                    change_pct: st.change_pct,
                    ci_pct: st.range_pct,
                    p: None,
                },
                pending: st.pending,
                drift: st.drift,
            })
            .collect(),
        Meter::Time => changepoint::detect(xs, s)
            .into_iter()
            .map(|cp| Detected {
                index: cp.index,
                from: cp.index - 1,
                change: ChangePointOut {
                    before: cp.before,
                    after: cp.after,
                    change_pct: cp.change_pct,
                    ci_pct: cp.ci_pct,
                    p: Some(cp.p),
                },
                pending: false,
                drift: false,
            })
            .collect(),
    }
}

/// What the newest result did not measure that was asked for: its
/// benchmarks that failed, and those the previous result of its kind
/// measured that it has no figure of, as compare judges the two (against
/// itself when it is the first of its kind, which leaves only failures).
fn newest_unmeasured(sides: &[Side], kinds: &[usize]) -> Vec<BenchComparison> {
    let Some(n) = sides.len().checked_sub(1) else {
        return Vec::new();
    };
    let before = (0..n).rev().find(|&j| kinds[j] == kinds[n]).unwrap_or(n);
    let (base, new) = (&sides[before], &sides[n]);
    let settings = Settings {
        force: true,
        ..Settings::default()
    };
    // the newest result's own shortcomings (docs/faults.md): what it
    // failed, what it has no result of that the result before had, and an
    // attach point it lost (unsupported where the result before measured);
    // a failure before it that it recovered from, or turned unsupported
    // after, or a benchmark new to it, is none
    let (was, now) = (base.standing(), new.standing());
    let (had, has) = (base.names(), new.names());
    let its_own = |name: &str| match now.get(name) {
        Some(Standing::Measured) => false,
        Some(Standing::Failed(_)) => true,
        None if has.contains(name) => was.get(name) == Some(&Standing::Measured),
        None => had.contains(name),
    };
    match compare::compare(base, new, &settings) {
        Ok(c) => c
            .benches
            .into_iter()
            .filter(|b| matches!(b.verdict, Verdict::Failed | Verdict::Missing))
            .filter(|b| its_own(&b.name))
            .collect(),
        // no boot of it left a report
        Err(why) => vec![BenchComparison {
            name: "every benchmark".into(),
            verdict: Verdict::Failed,
            basis: Vec::new(),
            reason: Some(why.to_string()),
            metrics: Vec::new(),
            movers: None,
        }],
    }
}

/// Whether a series has figures on two results of one kind: something
/// compared.
fn compared_within_a_kind(sr: &Series, kinds: &Kinds) -> bool {
    let of = kinds.of(sr.metric);
    let mut seen = std::collections::BTreeSet::new();
    sr.medians
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_some())
        .any(|(i, _)| !seen.insert(of[i]))
}

/// Every result's lineage, with and without trig-init's build.
struct Kinds {
    strict: Vec<usize>,
    build_free: Vec<usize>,
}

impl Kinds {
    /// The lineages a series of `metric` follows.
    fn of(&self, metric: Metric) -> &[usize] {
        if metric.build_independent() {
            &self.build_free
        } else {
            &self.strict
        }
    }
}

/// The change points of one series, each lineage (`lineages`) searched
/// alone; `None` when the series cannot have any. `commits` are every
/// result's, for the bisect range.
fn found_in(
    sr: &Series,
    kinds: &Kinds,
    s: &changepoint::Detection,
    meter: Meter,
    new_window: usize,
    commits: &[Option<String>],
) -> Option<Vec<Found>> {
    let (idx, xs): (Vec<usize>, Vec<f64>) = sr
        .medians
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .unzip();
    if sr.metric.over_baseline() && !sr.metric.is_count() && xs.iter().any(|x| *x <= 0.0) {
        // a cost around zero has no relative change
        return None;
    }
    let mut found = Vec::new();
    let of = kinds.of(sr.metric);
    for l in 0..=of.iter().copied().max().unwrap_or(0) {
        let at: Vec<usize> = (0..idx.len()).filter(|&k| of[idx[k]] == l).collect();
        // a step at a lineage's last result waits for the next of its kind,
        // which a result of another kind is not
        let ys: Vec<f64> = at.iter().map(|&k| xs[k]).collect();
        for d in detect(meter, sr.metric, &ys, s, true) {
            let (at, good) = (idx[at[d.index]], idx[at[d.from]]);
            found.push(Found {
                bench: sr.bench.clone(),
                metric: sr.metric,
                at,
                regression: sr.better.is_worse(d.change.change_pct),
                new: at + new_window >= commits.len(),
                change: d.change,
                moved_with: Vec::new(),
                bisect: commits[good].clone().zip(commits[at].clone()),
                alerted: None,
                pending: d.pending,
                drift: d.drift,
            });
        }
    }
    Some(found)
}

/// Each change point's `moved_with`: the other series that changed at the
/// same result.
fn link_moved_with(found: &mut [Found]) {
    let keys: Vec<(usize, String)> = found
        .iter()
        .map(|f| (f.at, format!("{} {}", f.bench, f.metric.as_str())))
        .collect();
    for (i, f) in found.iter_mut().enumerate() {
        f.moved_with = keys
            .iter()
            .enumerate()
            .filter(|(j, (at, _))| *j != i && *at == f.at)
            .map(|(_, (_, k))| k.clone())
            .collect();
    }
}

/// Change points of every series, positions mapped back to the history
/// (series skip results where the benchmark did not run).
pub fn analyse(
    dir: &str,
    entries: Vec<(Point, Vec<RunSet>)>,
    metrics: &[Metric],
    s: &changepoint::Detection,
    new_window: usize,
) -> History {
    let series = series(&entries, metrics);
    let sides: Vec<Side> = entries
        .iter()
        .map(|(p, sets)| Side::of_file(p.file.as_ref(), sets.clone()))
        .collect();
    let breaks = breaks(&sides);
    let kinds = Kinds {
        strict: lineages(&sides, false),
        build_free: lineages(&sides, true),
    };
    let newest = newest_unmeasured(&sides, &kinds.strict);
    let compared = series
        .iter()
        .filter(|sr| compared_within_a_kind(sr, &kinds))
        .count();
    let meter = meter_of(&entries);
    let points: Vec<Point> = entries.into_iter().map(|(p, _)| p).collect();
    let commits: Vec<Option<String>> = points.iter().map(|p| p.commit.clone()).collect();
    let mut found: Vec<Found> = series
        .iter()
        .filter_map(|sr| found_in(sr, &kinds, s, meter, new_window, &commits))
        .flatten()
        .collect();
    found.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.bench.cmp(&b.bench)));
    link_moved_with(&mut found);
    History {
        dir: dir.into(),
        newest,
        compared,
        meter,
        points,
        series,
        found,
        breaks,
        new_window,
        min_change_pct: s.min_change * 100.0,
        // icount: a step shows on the first result after it
        needs: match meter {
            Meter::Time => changepoint::min_points(s),
            Meter::Icount => 2,
        },
        needs_after: match meter {
            Meter::Time => s.min_size,
            Meter::Icount => 1,
        },
        alerting: false,
    }
}
