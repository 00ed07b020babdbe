//! `history --alert`: which change points were alerted on before, as
//! DIR/alerts.json records them.

use super::{History, Point};
use serde::{Deserialize, Serialize};
use std::path::Path;
use trig_schema::error::{self, Error};
use trig_schema::Meter;

pub use crate::input::ALERTS_FILE;

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
/// on: as nights are added, the split of a noisy step can shift (under
/// time). An icount step is exact and never moves: a step two results on
/// is another step.
fn same_within(meter: Meter) -> usize {
    match meter {
        Meter::Time => 2,
        Meter::Icount => 0,
    }
}

fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(path)
}

/// DIR/alerts.json, or nothing before the first alert.
pub fn load_alerts(dir: &Path) -> Result<Vec<Alert>, Error> {
    let path = dir.join(ALERTS_FILE);
    match std::fs::read_to_string(&path) {
        // what an older trig-init left when the disk filled: start afresh
        Ok(text) if text.trim().is_empty() => {
            error::warn(format_args!(
                "{} is empty; the alerts already sent are forgotten",
                path.display()
            ));
            Ok(Vec::new())
        }
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| error::input(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(error::input(format!("{}: {e}", path.display()))),
    }
}

pub fn save_alerts(dir: &Path, alerts: &[Alert]) -> Result<(), Error> {
    let path = dir.join(ALERTS_FILE);
    let text = serde_json::to_string_pretty(alerts).expect("alerts serialize") + "\n";
    trig_schema::files::write(&path, text)
}

/// Marks the change points alerted on before (`Found::alerted`): same
/// benchmark, metric and direction, within `same_within` results of the
/// recorded one; returns the records of the others but pending ones,
/// which are alerted now.
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
    let within = same_within(h.meter);
    let mut fresh = Vec::new();
    // a pending step waits for the result that confirms it
    for f in h.found.iter_mut().filter(|f| !f.pending) {
        let earlier = alerts.iter().zip(&positions).find(|(a, at)| {
            a.bench == f.bench
                && a.metric == f.metric.as_str()
                && a.regression == f.regression
                && at.is_some_and(|at| at.abs_diff(f.at) <= within)
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
