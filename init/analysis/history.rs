//! `trig-init history DIR`: change points over a directory of nightly
//! results, per benchmark and metric (see `changepoint`), with what moved
//! together at each.

use crate::analysis::changepoint::{self, ChangePoint};
use crate::analysis::compare::{differences, input, Metric, Side};
use crate::report::{Better, Meter, RunSet, Status};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// One results file of the history: one point of every series.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub file: String,
    pub created: Option<String>,
    pub release: String,
    pub commit: Option<String>,
}

impl Point {
    pub fn label(&self) -> String {
        let mut s = self.release.clone();
        if let Some(c) = &self.commit {
            let _ = write!(s, " @{}", &c[..c.len().min(12)]);
        }
        if let Some(t) = &self.created {
            let _ = write!(s, " {t}");
        }
        s
    }
}

/// One benchmark's figure (median over the boots of each result) across
/// the history; None where it did not run.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub bench: String,
    pub metric: Metric,
    pub better: Better,
    pub medians: Vec<Option<f64>>,
    /// Lowest and highest boot of each result.
    pub spread: Vec<Option<(f64, f64)>>,
}

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
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangePointOut {
    pub before: f64,
    pub after: f64,
    pub change_pct: f64,
    pub ci_pct: (f64, f64),
    pub p: f64,
}

/// A result that cannot be compared with the one before it, by
/// compare's rules (another architecture, accelerator, meter, CPU count,
/// schema or parameter set): every series is split there.
#[derive(Debug, Clone, Serialize)]
pub struct Break {
    /// Index into `History::points` of the first result after it.
    pub at: usize,
    pub why: Vec<String>,
}

/// Where consecutive results of the history are not comparable.
pub fn breaks(entries: &[(Point, Vec<RunSet>)]) -> Vec<Break> {
    let side = |(p, sets): &(Point, Vec<RunSet>)| Side::of_file(p.file.as_ref(), sets.clone());
    (1..entries.len())
        .filter_map(|at| {
            let why = differences(&side(&entries[at - 1]), &side(&entries[at]));
            (!why.is_empty()).then_some(Break { at, why })
        })
        .collect()
}

/// The stretches of a series (ranges of positions into `idx`, the
/// results it has figures for) that no break falls inside.
fn stretches(idx: &[usize], breaks: &[Break]) -> Vec<std::ops::Range<usize>> {
    let mut cuts = vec![0];
    cuts.extend(breaks.iter().map(|b| idx.partition_point(|&i| i < b.at)));
    cuts.push(idx.len());
    cuts.dedup();
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub dir: String,
    pub points: Vec<Point>,
    pub series: Vec<Series>,
    pub found: Vec<Found>,
    /// Where the results stop being comparable; no change point spans one.
    pub breaks: Vec<Break>,
    /// Change points in the newest this-many results count as new.
    pub new_window: usize,
    /// Time, or icount when every result was counted by instructions.
    pub meter: Meter,
    /// The smallest step reported, in percent.
    pub min_change_pct: f64,
    /// The fewest results in which a change point can be found at all
    /// (`changepoint::min_points`), and the fewest after a step.
    pub needs: usize,
    pub needs_after: usize,
    /// Whether change points are matched against DIR/alerts.json.
    pub alerting: bool,
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

/// Where `history --alert` remembers the change points it alerted on.
pub const ALERTS_FILE: &str = "alerts.json";

/// A change point alerted on, as DIR/alerts.json records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Alert {
    pub bench: String,
    pub metric: String,
    pub regression: bool,
    /// The results file (its name) and commit of the first result after
    /// the change.
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub change_pct: f64,
    /// The newest result when it was alerted.
    pub night: String,
}

/// How many results a change point may move and still be the one alerted
/// on: as nights are added, the split of a noisy step can shift.
const SAME_WITHIN: usize = 2;

fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(path)
}

/// DIR/alerts.json, or nothing before the first alert.
pub fn load_alerts(dir: &Path) -> Result<Vec<Alert>, String> {
    let path = dir.join(ALERTS_FILE);
    match std::fs::read_to_string(&path) {
        // what an older trig-init left when the disk filled: start afresh
        Ok(text) if text.trim().is_empty() => {
            eprintln!(
                "trig-init: warning: {} is empty; the alerts already sent are forgotten",
                path.display()
            );
            Ok(Vec::new())
        }
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

pub fn save_alerts(dir: &Path, alerts: &[Alert]) -> Result<(), String> {
    let path = dir.join(ALERTS_FILE);
    let text = serde_json::to_string_pretty(alerts).expect("alerts serialize") + "\n";
    crate::files::replace(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Marks the change points alerted on before (`Found::alerted`): same
/// benchmark, metric and direction, within `SAME_WITHIN` results of the
/// recorded one; returns the records of the others, which are alerted now.
pub fn match_alerts(h: &mut History, alerts: &[Alert]) -> Vec<Alert> {
    h.alerting = true;
    let positions: Vec<Option<usize>> = alerts
        .iter()
        .map(|a| {
            h.points.iter().position(|p| {
                file_name(&p.file) == a.file || (a.commit.is_some() && p.commit == a.commit)
            })
        })
        .collect();
    let night = h.points.last().map_or_else(String::new, Point::label);
    let mut fresh = Vec::new();
    for f in &mut h.found {
        let earlier = alerts.iter().zip(&positions).find(|(a, at)| {
            a.bench == f.bench
                && a.metric == f.metric.as_str()
                && a.regression == f.regression
                && at.is_some_and(|at| at.abs_diff(f.at) <= SAME_WITHIN)
        });
        match earlier {
            Some((a, _)) => f.alerted = Some(a.night.clone()),
            None => {
                let p = &h.points[f.at];
                fresh.push(Alert {
                    bench: f.bench.clone(),
                    metric: f.metric.as_str().into(),
                    regression: f.regression,
                    file: file_name(&p.file).into(),
                    commit: p.commit.clone(),
                    change_pct: f.change.change_pct,
                    night: night.clone(),
                });
            }
        }
    }
    fresh
}

/// Orders the history by the commits' order in a git tree (`git
/// rev-list --reverse`), when asked; results without a known commit are
/// an error then.
fn order_by_git(
    entries: &mut [(std::path::PathBuf, Vec<RunSet>)],
    tree: &Path,
) -> Result<(), String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(["rev-list", "--reverse", "--topo-order", "HEAD"])
        .output()
        .map_err(|e| format!("git rev-list in {}: {e}", tree.display()))?;
    if !out.status.success() {
        return Err(format!(
            "git rev-list in {}: {}",
            tree.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let order: BTreeMap<String, usize> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .enumerate()
        .map(|(i, c)| (c.to_string(), i))
        .collect();
    let mut keyed = Vec::new();
    for (f, sets) in entries.iter() {
        let commit = sets.iter().find_map(|s| s.kernel.commit.clone());
        let pos = commit
            .as_ref()
            .and_then(|c| {
                order
                    .iter()
                    .find(|(full, _)| full.starts_with(c.as_str()))
                    .map(|(_, i)| *i)
            })
            .ok_or_else(|| match &commit {
                None => format!(
                    "{}: no kernel commit recorded (vm --commit SHA records it), so --git cannot place it",
                    f.display()
                ),
                Some(c) => format!(
                    "{}: kernel commit {c} is not in the history of {}",
                    f.display(),
                    tree.display()
                ),
            })?;
        keyed.push(pos);
    }
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by_key(|&i| keyed[i]);
    let sorted: Vec<_> = idx.iter().map(|&i| entries[i].clone()).collect();
    entries.clone_from_slice(&sorted);
    Ok(())
}

pub fn load(dir: &Path, git: Option<&Path>) -> Result<Vec<(Point, Vec<RunSet>)>, String> {
    let mut entries = input::history(dir)?;
    if let Some(tree) = git {
        order_by_git(&mut entries, tree)?;
    }
    Ok(entries
        .into_iter()
        .map(|(f, sets)| {
            let point = Point {
                file: f.display().to_string(),
                created: sets.iter().find_map(|s| s.created.clone()),
                release: sets
                    .first()
                    .map_or_else(String::new, |s| s.kernel.release.clone()),
                commit: sets.iter().find_map(|s| s.kernel.commit.clone()),
            };
            (point, sets)
        })
        .collect())
}

/// Every benchmark and metric's series over the history.
pub fn series(entries: &[(Point, Vec<RunSet>)], metrics: &[Metric]) -> Vec<Series> {
    let mut names: Vec<(String, Better)> = Vec::new();
    for (_, sets) in entries {
        for r in sets
            .iter()
            .flat_map(|s| &s.runs)
            .filter_map(|r| r.report.as_ref())
        {
            for b in &r.results {
                if !names.iter().any(|(n, _)| *n == b.name) {
                    names.push((b.name.clone(), b.better));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (name, better) in names {
        for &metric in metrics {
            let per_point: Vec<Vec<f64>> = entries
                .iter()
                .map(|(_, sets)| {
                    sets.iter()
                        .flat_map(|s| &s.runs)
                        .filter_map(|r| r.report.as_ref())
                        .filter_map(|r| {
                            r.results
                                .iter()
                                .find(|b| b.name == name && b.status == Status::Ok)
                        })
                        .filter_map(|b| metric.value(b))
                        .collect()
                })
                .collect();
            if per_point.iter().all(Vec::is_empty) {
                continue;
            }
            let better = match metric {
                Metric::Rate => better,
                Metric::Overhead => Better::Lower,
            };
            out.push(Series {
                bench: name.clone(),
                metric,
                better,
                medians: per_point
                    .iter()
                    .map(|v| (!v.is_empty()).then(|| stats::median(v)))
                    .collect(),
                spread: per_point
                    .iter()
                    .map(|v| {
                        (!v.is_empty()).then(|| {
                            (
                                v.iter().copied().fold(f64::INFINITY, f64::min),
                                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                            )
                        })
                    })
                    .collect(),
            });
        }
    }
    out
}

/// The change points of one series, each stretch between breaks searched
/// alone; `None` when the series cannot have any.
fn found_in(
    sr: &Series,
    breaks: &[Break],
    s: &changepoint::Settings,
    new_window: usize,
    n: usize,
) -> Option<Vec<Found>> {
    let (idx, xs): (Vec<usize>, Vec<f64>) = sr
        .medians
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .unzip();
    if sr.metric == Metric::Overhead && xs.iter().any(|x| *x <= 0.0) {
        // a cost around zero has no relative change
        return None;
    }
    let detected = stretches(&idx, breaks).into_iter().flat_map(|r| {
        let from = r.start;
        changepoint::detect(&xs[r], s)
            .into_iter()
            .map(move |cp| ChangePoint {
                index: cp.index + from,
                ..cp
            })
    });
    let found = detected.map(|cp| {
        let ChangePoint {
            index,
            p,
            before,
            after,
            change_pct,
            ci_pct,
        } = cp;
        let at = idx[index];
        Found {
            bench: sr.bench.clone(),
            metric: sr.metric,
            at,
            regression: sr.better.is_worse(change_pct),
            new: at + new_window >= n,
            change: ChangePointOut {
                before,
                after,
                change_pct,
                ci_pct,
                p,
            },
            moved_with: Vec::new(),
            bisect: None,
            alerted: None,
        }
    });
    Some(found.collect())
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
    s: &changepoint::Settings,
    new_window: usize,
) -> History {
    let series = series(&entries, metrics);
    let breaks = breaks(&entries);
    let n = entries.len();
    let meter = meter_of(&entries);
    let mut found: Vec<Found> = series
        .iter()
        .filter_map(|sr| found_in(sr, &breaks, s, new_window, n))
        .flatten()
        .collect();
    found.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.bench.cmp(&b.bench)));
    link_moved_with(&mut found);
    let points: Vec<Point> = entries.into_iter().map(|(p, _)| p).collect();
    for f in &mut found {
        let commit = |i: usize| points.get(i).and_then(|p| p.commit.clone());
        f.bisect = f.at.checked_sub(1).and_then(commit).zip(commit(f.at));
    }
    History {
        dir: dir.into(),
        meter,
        points,
        series,
        found,
        breaks,
        new_window,
        min_change_pct: s.min_change * 100.0,
        needs: changepoint::min_points(s),
        needs_after: s.min_size,
        alerting: false,
    }
}

/// What a change point takes: its size, and how many results.
pub fn needs(h: &History) -> String {
    format!(
        "steps of {}% and more ({} meter) show from {} results on, {} of them after the step",
        h.min_change_pct,
        h.meter.as_str(),
        h.needs,
        h.needs_after
    )
}

/// Why a history shows no change point, when it cannot show one.
pub fn no_change_points(h: &History) -> String {
    if h.points.len() < h.needs {
        format!(
            "no change points: {} results, and a change point needs at least {} ({} after the step; with fewer, even a clean step cannot pass the permutation test)",
            h.points.len(),
            h.needs,
            h.needs_after
        )
    } else {
        format!("no change points of {}% or more", h.min_change_pct)
    }
}

/// One sentence for an alert: what moved, by how much, where, and the
/// bisect range.
fn alert_line(h: &History, f: &Found) -> String {
    let mut s = format!(
        "{} {} {:+.1}% ({}) from #{} {}",
        f.bench,
        f.metric.as_str(),
        f.change.change_pct,
        if f.regression { "worse" } else { "better" },
        f.at + 1,
        h.points[f.at].label()
    );
    if let Some((good, bad)) = &f.bisect {
        let _ = write!(s, "; git bisect start {bad} {good}");
    }
    s
}

/// The summary lines, alerts and table header, in Markdown or plain text.
fn render_head(out: &mut String, h: &History, markdown: bool) {
    let span = match (h.points.first(), h.points.last()) {
        (Some(a), Some(b)) => format!("{} .. {}", a.label(), b.label()),
        _ => String::new(),
    };
    let needs = needs(h);
    let alerts: Vec<&Found> = h
        .found
        .iter()
        .filter(|f| h.alerting && f.alerted.is_none())
        .collect();
    let new_column = if h.alerting { "alert" } else { "new" };
    if markdown {
        let _ = writeln!(
            out,
            "### trig-init history\n\n- {}: {} results, {span}\n- {needs}\n",
            h.dir,
            h.points.len()
        );
        for f in &alerts {
            let _ = writeln!(out, "**ALERT**: {}\n", alert_line(h, f));
        }
        let _ = writeln!(out, "| first result after | benchmark | metric | before | after | change [95% CI] | p | {new_column} | moved with |\n|:--|:--|:--|--:|--:|--:|--:|:--|:--|");
    } else {
        let _ = writeln!(out, "{}: {} results, {span}", h.dir, h.points.len());
        let _ = writeln!(
            out,
            "{} change point(s); new = in the newest {} results; {needs}",
            h.found.len(),
            h.new_window
        );
        for f in &alerts {
            let _ = writeln!(out, "ALERT: {}", alert_line(h, f));
        }
        let _ = writeln!(
            out,
            "\n{:<44} {:<26} {:<8} {:>10} {:>10} {:>24} {:>6} {:<7} MOVED WITH",
            "FIRST RESULT AFTER",
            "BENCHMARK",
            "METRIC",
            "BEFORE",
            "AFTER",
            "CHANGE [95% CI]",
            "p",
            new_column.to_uppercase()
        );
    }
}

/// One change point's table row.
fn found_row(out: &mut String, h: &History, f: &Found, markdown: bool) {
    let c = &f.change;
    let change = format!(
        "{:+.1}% [{:+.1},{:+.1}]{}",
        c.change_pct,
        c.ci_pct.0,
        c.ci_pct.1,
        if f.regression { " worse" } else { " better" }
    );
    let at = format!("#{} {}", f.at + 1, h.points[f.at].label());
    let new = match (h.alerting, &f.alerted) {
        (true, None) => "ALERT",
        (true, Some(_)) => "earlier",
        (false, _) if f.new => "new",
        _ => "",
    };
    let with = f.moved_with.join(", ");
    // one set of names for both layouts, so that they differ only in format
    let (bench, metric, before, after, p) = (&f.bench, f.metric.as_str(), c.before, c.after, c.p);
    let _ = if markdown {
        writeln!(out, "| {at} | {bench} | {metric} | {before:.3} | {after:.3} | {change} | {p:.3} | {new} | {with} |")
    } else {
        writeln!(out, "{at:<44} {bench:<26} {metric:<8} {before:>10.3} {after:>10.3} {change:>24} {p:>6.3} {new:<7} {with}")
    };
}

/// A `git bisect` line per distinct range of a new regression.
fn bisect_lines(out: &mut String, h: &History, markdown: bool) {
    let mut bisects: Vec<&(String, String)> = h
        .found
        .iter()
        .filter(|f| f.new && f.regression)
        .filter_map(|f| f.bisect.as_ref())
        .collect();
    bisects.dedup();
    for (good, bad) in bisects {
        let _ = writeln!(
            out,
            "{}to bisect: git bisect start {bad} {good} && git bisect run scripts/bisect.sh --bench ...",
            if markdown { "\n" } else { "" }
        );
    }
}

pub fn render(h: &History, markdown: bool) -> String {
    let mut out = String::new();
    render_head(&mut out, h, markdown);
    for b in &h.breaks {
        let _ = writeln!(
            out,
            "{}results from #{} {} on are not comparable with those before ({}): change points are sought on each side alone",
            if markdown { "\n" } else { "" },
            b.at + 1,
            h.points[b.at].label(),
            b.why.join("; ")
        );
    }
    for f in &h.found {
        found_row(&mut out, h, f, markdown);
    }
    if h.found.is_empty() {
        out.push_str(&no_change_points(h));
        out.push('\n');
    }
    bisect_lines(&mut out, h, markdown);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::*;

    /// A history of `n` nightly results; trig-kprobe and trig-kretprobe
    /// slow down by 15% from result `step` on, trig-base never changes.
    pub fn nights(n: usize, step: usize) -> Vec<(Point, Vec<RunSet>)> {
        let wobble = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99];
        nights_of(n, Meter::Time, |i| {
            let w = wobble[i % wobble.len()];
            let slow = if i >= step { 0.85 } else { 1.0 };
            vec![
                ("trig-base", 2.0 * w),
                ("trig-kprobe", 0.8 * w * slow),
                ("trig-kretprobe", 0.5 * w * slow),
            ]
        })
    }

    /// `n` nightly results of one boot each, with these benchmarks' rates.
    pub fn nights_of(
        n: usize,
        meter: Meter,
        rates: impl Fn(usize) -> Vec<(&'static str, f64)>,
    ) -> Vec<(Point, Vec<RunSet>)> {
        (0..n)
            .map(|i| {
                let results: Vec<BenchResult> = rates(i)
                    .iter()
                    .map(|(name, mean)| BenchResult {
                        summary: Some(Summary { mean: *mean, stddev: 0.0, per_producer: *mean, cv: 0.0, samples: 5 }),
                        ..BenchResult::new(name, name, "trigger", 1, Better::Higher)
                    })
                    .collect();
                let json = serde_json::json!({
                    "schema_version": 1, "created": format!("202611{:02}T000000Z", i + 1),
                    "kernel": {"spec": "x", "path": "", "release": format!("6.1.{i}"), "commit": format!("{i:02}{}", "ab".repeat(19))},
                    "vm": {"arch": "x86_64", "accel": "tcg", "meter": meter, "cpus": 2, "memory": "1G", "append": ""},
                    "runs": [{"index": 1, "status": "ok", "console_log": "", "wall_s": 1.0,
                        "report": {"schema_version": 1, "tool": {"name": "t", "version": "0", "git_rev": "x"},
                          "system": {"release": "r", "version": "v", "machine": "x86_64", "cmdline": "", "cpus": 2, "pid1": true},
                          "capabilities": {}, "params": serde_json::to_value(crate::options::RunOptions::default().params(1)).unwrap(),
                          "mounts": [], "results": serde_json::to_value(&results).unwrap(), "outcome": {"status": "complete"}}}]
                });
                let set: RunSet = serde_json::from_value(json).unwrap();
                let point = Point { file: format!("n{i}.json"), created: set.created.clone(), release: set.kernel.release.clone(), commit: set.kernel.commit.clone() };
                (point, vec![set])
            })
            .collect()
    }

    #[test]
    fn finds_the_step_and_what_moved_with_it() {
        let h = analyse(
            "h",
            nights(20, 12),
            &[Metric::Rate],
            &changepoint::Settings::default(),
            3,
        );
        let benches: Vec<&str> = h.found.iter().map(|f| f.bench.as_str()).collect();
        assert_eq!(
            benches,
            vec!["trig-kprobe", "trig-kretprobe"],
            "{}",
            render(&h, false)
        );
        let f = &h.found[0];
        assert_eq!(f.at, 12);
        assert!(f.regression && !f.new);
        assert_eq!(f.moved_with, vec!["trig-kretprobe rate".to_string()]);
        let (good, bad) = f.bisect.clone().unwrap();
        assert!(
            good.starts_with("11") && bad.starts_with("12"),
            "{good} {bad}"
        );
        assert!((f.change.change_pct + 15.0).abs() < 3.0);
        let table = render(&h, false);
        assert!(table.contains("#13 6.1.12 @12ababababab"), "{table}");
        assert!(render(&h, true).contains("| trig-kprobe | rate |"));
    }

    #[test]
    fn a_recent_change_is_new() {
        let h = analyse(
            "h",
            nights(15, 11),
            &[Metric::Rate],
            &changepoint::Settings::default(),
            5,
        );
        assert!(
            h.found.iter().all(|f| f.new && f.at == 11),
            "{}",
            render(&h, false)
        );
        assert!(!h.found.is_empty());
    }

    /// Runs `history --alert` night after night over `nights`: how many
    /// alerts each night raised.
    fn alerts_per_night(nights: &[(Point, Vec<RunSet>)], from: usize) -> Vec<usize> {
        let mut recorded: Vec<Alert> = Vec::new();
        (from..=nights.len())
            .map(|n| {
                let s = changepoint::Settings {
                    min_change: default_min_change_pct(&nights[..n]) / 100.0,
                    ..changepoint::Settings::default()
                };
                let mut h = analyse("h", nights[..n].to_vec(), &[Metric::Rate], &s, 3);
                let fresh = match_alerts(&mut h, &recorded);
                if !fresh.is_empty() {
                    assert!(render(&h, true).contains("**ALERT**: trig-kprobe rate"));
                }
                recorded.extend(fresh.iter().cloned());
                fresh.len()
            })
            .collect()
    }

    #[test]
    fn a_step_is_alerted_exactly_once() {
        // trig-kprobe and trig-kretprobe step at result 10 of 24
        let per_night = alerts_per_night(&nights(24, 10), 4);
        eprintln!("alerts per night, nights 4 to 24: {per_night:?}");
        assert_eq!(per_night.iter().sum::<usize>(), 2, "{per_night:?}");
        let first = per_night.iter().position(|&a| a > 0).unwrap() + 4;
        // result 10 is the first after the step: alerted once 3 follow it
        assert_eq!(first, 13, "{per_night:?}");
    }

    #[test]
    fn a_short_history_says_what_it_needs() {
        let h = analyse(
            "h",
            nights(4, 2),
            &[Metric::Rate],
            &changepoint::Settings::default(),
            3,
        );
        let t = render(&h, false);
        assert!(
            t.contains("4 results, and a change point needs at least 12 (3 after the step"),
            "{t}"
        );
    }

    #[test]
    fn icount_finds_a_half_percent_step_at_its_noise() {
        // icount's boots agree to 0.01-0.05%: a 0.5% step is far above it,
        // and far below the time meter's 5%
        for cv in [0.0001, 0.0005] {
            let mut rng = fastrand::Rng::with_seed(11);
            let jitter: Vec<f64> = (0..20)
                .map(|_| cv * 1.7 * (rng.f64() - 0.5) * 2.0)
                .collect();
            let nights = nights_of(20, Meter::Icount, |i| {
                let step = if i >= 12 { 0.995 } else { 1.0 };
                vec![
                    ("trig-base", 40.0),
                    ("trig-kprobe", 7.0 * step * (1.0 + jitter[i])),
                ]
            });
            assert_eq!(default_min_change_pct(&nights), 0.25);
            let s = changepoint::Settings {
                min_change: 0.0025,
                ..changepoint::Settings::default()
            };
            let h = analyse("h", nights, &[Metric::Rate], &s, 3);
            assert_eq!(h.meter, Meter::Icount);
            let at: Vec<(&str, usize)> = h.found.iter().map(|f| (f.bench.as_str(), f.at)).collect();
            assert_eq!(
                at,
                vec![("trig-kprobe", 12)],
                "cv {cv}: {}",
                render(&h, false)
            );
            assert!((h.found[0].change.change_pct + 0.5).abs() < 0.1);
        }
    }

    #[test]
    fn an_incomparable_result_splits_the_series() {
        let mut h = nights(20, 99);
        for (_, sets) in &mut h[10..] {
            // another machine, ten times slower
            sets[0].vm.arch = "aarch64".into();
            for r in sets[0].runs.iter_mut().filter_map(|r| r.report.as_mut()) {
                for b in &mut r.results {
                    b.summary.as_mut().unwrap().mean /= 10.0;
                }
            }
        }
        let h = analyse(
            "h",
            h,
            &[Metric::Rate],
            &changepoint::Settings::default(),
            3,
        );
        assert!(h.found.is_empty(), "{}", render(&h, false));
        assert_eq!(h.breaks.len(), 1);
        assert_eq!(h.breaks[0].at, 10);
        assert!(
            h.breaks[0].why.iter().any(|w| w.contains("architecture")),
            "{:?}",
            h.breaks
        );
        assert!(
            render(&h, false).contains("results from #11 6.1.10"),
            "{}",
            render(&h, false)
        );
    }

    #[test]
    fn a_flat_history_has_none() {
        let h = analyse(
            "h",
            nights(20, 99),
            &[Metric::Rate, Metric::Overhead],
            &changepoint::Settings::default(),
            3,
        );
        assert!(h.found.is_empty(), "{}", render(&h, false));
        assert!(render(&h, false).contains("no change points"));
    }
}
