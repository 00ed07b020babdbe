//! One series per benchmark and metric: its figure on each result.

use super::Point;
use crate::compare::{unmeasured, Metric};
use serde::Serialize;
use trig_schema::stats;
use trig_schema::{Better, RunSet};

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

/// Why the history has no figure of any of `metrics` though some result
/// is ok (`compare::unmeasured`): it would find no change point and say
/// nothing moved.
pub fn no_figures(entries: &[(Point, Vec<RunSet>)], metrics: &[Metric]) -> Option<String> {
    let boots: Vec<&[_]> = entries
        .iter()
        .flat_map(|(_, sets)| sets)
        .flat_map(|s| &s.runs)
        .filter_map(|r| r.report.as_ref())
        .map(|r| r.results.as_slice())
        .collect();
    unmeasured(metrics, &boots)
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
                            let b = r.results.iter().find(|b| b.name == name)?;
                            metric.value(b, &r.results)
                        })
                        .collect()
                })
                .collect();
            if per_point.iter().all(Vec::is_empty) {
                continue;
            }
            out.push(Series {
                bench: name.clone(),
                metric,
                better: metric.better(better),
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
