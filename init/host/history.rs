//! `trig-init history DIR`: change points over a directory of nightly
//! results, per benchmark and metric (see `changepoint`), with what moved
//! together at each.

use super::compare::{input, Metric};
use crate::changepoint::{self, ChangePoint};
use crate::report::{Better, RunSet, Status};
use crate::stats;
use serde::Serialize;
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
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangePointOut {
    pub before: f64,
    pub after: f64,
    pub change_pct: f64,
    pub ci_pct: (f64, f64),
    pub p: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub dir: String,
    pub points: Vec<Point>,
    pub series: Vec<Series>,
    pub found: Vec<Found>,
    /// Change points in the newest this-many results count as new.
    pub new_window: usize,
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
            .ok_or_else(|| {
                format!(
                    "{}: no kernel commit of {} in the tree's history",
                    f.display(),
                    tree.display()
                )
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
    let n = entries.len();
    let mut found: Vec<Found> = Vec::new();
    for sr in &series {
        let (idx, xs): (Vec<usize>, Vec<f64>) = sr
            .medians
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .unzip();
        if sr.metric == Metric::Overhead && xs.iter().any(|x| *x <= 0.0) {
            // a cost around zero has no relative change
            continue;
        }
        for cp in changepoint::detect(&xs, s) {
            let ChangePoint {
                index,
                p,
                before,
                after,
                change_pct,
                ci_pct,
            } = cp;
            let at = idx[index];
            found.push(Found {
                bench: sr.bench.clone(),
                metric: sr.metric,
                at,
                regression: match sr.better {
                    Better::Higher => change_pct < 0.0,
                    Better::Lower => change_pct > 0.0,
                },
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
            });
        }
    }
    found.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.bench.cmp(&b.bench)));
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
    let points: Vec<Point> = entries.into_iter().map(|(p, _)| p).collect();
    for f in &mut found {
        let commit = |i: usize| points.get(i).and_then(|p| p.commit.clone());
        f.bisect = f.at.checked_sub(1).and_then(commit).zip(commit(f.at));
    }
    History {
        dir: dir.into(),
        points,
        series,
        found,
        new_window,
    }
}

pub fn render(h: &History, markdown: bool) -> String {
    let mut out = String::new();
    let span = match (h.points.first(), h.points.last()) {
        (Some(a), Some(b)) => format!("{} .. {}", a.label(), b.label()),
        _ => String::new(),
    };
    if markdown {
        let _ = writeln!(
            out,
            "### trig-init history\n\n- {}: {} results, {span}\n",
            h.dir,
            h.points.len()
        );
        let _ = writeln!(out, "| first result after | benchmark | metric | before | after | change [95% CI] | p | new | moved with |\n|:--|:--|:--|--:|--:|--:|--:|:--|:--|");
    } else {
        let _ = writeln!(out, "{}: {} results, {span}", h.dir, h.points.len());
        let _ = writeln!(
            out,
            "{} change point(s); new = in the newest {} results\n",
            h.found.len(),
            h.new_window
        );
        let _ = writeln!(
            out,
            "{:<44} {:<26} {:<8} {:>10} {:>10} {:>24} {:>6} {:<4} MOVED WITH",
            "FIRST RESULT AFTER",
            "BENCHMARK",
            "METRIC",
            "BEFORE",
            "AFTER",
            "CHANGE [95% CI]",
            "p",
            "NEW"
        );
    }
    for f in &h.found {
        let c = &f.change;
        let change = format!(
            "{:+.1}% [{:+.1},{:+.1}]{}",
            c.change_pct,
            c.ci_pct.0,
            c.ci_pct.1,
            if f.regression { " worse" } else { " better" }
        );
        let at = format!("#{} {}", f.at + 1, h.points[f.at].label());
        let new = if f.new { "new" } else { "" };
        let with = f.moved_with.join(", ");
        if markdown {
            let _ = writeln!(
                out,
                "| {at} | {} | {} | {:.3} | {:.3} | {change} | {:.3} | {new} | {with} |",
                f.bench,
                f.metric.as_str(),
                c.before,
                c.after,
                c.p
            );
        } else {
            let _ = writeln!(
                out,
                "{at:<44} {:<26} {:<8} {:>10.3} {:>10.3} {change:>24} {:>6.3} {new:<4} {with}",
                f.bench,
                f.metric.as_str(),
                c.before,
                c.after,
                c.p
            );
        }
    }
    if h.found.is_empty() {
        out.push_str("no change points\n");
    }
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
        (0..n)
            .map(|i| {
                let w = wobble[i % wobble.len()];
                let slow = if i >= step { 0.85 } else { 1.0 };
                let results: Vec<BenchResult> = [("trig-base", 2.0 * w), ("trig-kprobe", 0.8 * w * slow), ("trig-kretprobe", 0.5 * w * slow)]
                    .iter()
                    .map(|(name, mean)| BenchResult {
                        summary: Some(Summary { mean: *mean, stddev: 0.0, per_producer: *mean, cv: 0.0, samples: 5 }),
                        ..BenchResult::new(name, name, "trigger", 1, Better::Higher)
                    })
                    .collect();
                let json = serde_json::json!({
                    "schema_version": 1, "created": format!("202611{:02}T000000Z", i + 1),
                    "kernel": {"spec": "x", "path": "", "release": format!("6.1.{i}"), "commit": format!("{i:02}{}", "ab".repeat(19))},
                    "vm": {"arch": "x86_64", "accel": "tcg", "cpus": 2, "memory": "1G", "append": ""},
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
