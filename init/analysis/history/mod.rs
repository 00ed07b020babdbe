//! `trig-init history DIR`: change points over a directory of nightly
//! results, per benchmark and metric (see `changepoint`), with what moved
//! together at each. Loading and ordering the results (`load`), one series
//! per benchmark and metric (`series`), finding the change points
//! (`analysis`) and remembering which were alerted on (`alerts`) each
//! have their own file; [`read`] and [`detection`] are the way in that
//! `history` and `report` share.

mod alerts;
mod analysis;
mod load;
mod series;

pub use alerts::{load_alerts, match_alerts, save_alerts, Alert, ALERTS_FILE};
pub use analysis::{analyse, default_min_change_pct, Break, ChangePointOut, Found};
pub use load::{load, Point};
pub use series::{no_figures, series, Series};

use crate::changepoint::Detection;
use crate::compare::{BenchComparison, Metric};
use crate::gate::Tally;
use serde::Serialize;
use std::path::Path;
use trig_schema::error::{self, Error};
use trig_schema::{Meter, RunSet};

/// A history's results files, each with its point, in order.
pub type HistoryFiles = Vec<(Point, Vec<RunSet>)>;

/// The results of a history directory `dir`, in order (by commit in the
/// kernel tree `git`, else by date), refused when none has a figure of
/// `metrics`; with a warning when the newest has none, as a nightly that
/// stopped profiling would end the kernel's series unseen.
pub fn read(
    dir: &Path,
    git: Option<&Path>,
    metrics: &[Metric],
) -> Result<(HistoryFiles, Option<String>), Error> {
    let entries = load(dir, git)?;
    if let Some(why) = no_figures(&entries, metrics) {
        return Err(error::input(format!("{} {why}", dir.display())));
    }
    let warning = entries.last().and_then(|last| {
        let why = no_figures(std::slice::from_ref(last), metrics)?;
        Some(format!(
            "the newest result, #{} {}, {why}; its series end before it",
            entries.len(),
            last.0.label()
        ))
    });
    Ok((entries, warning))
}

/// The change-point detection for `entries`: steps of `min_change_pct`
/// or more, by default the meter's ([`default_min_change_pct`]).
pub fn detection(entries: &[(Point, Vec<RunSet>)], min_change_pct: Option<f64>) -> Detection {
    let pct = min_change_pct.unwrap_or_else(|| default_min_change_pct(entries));
    Detection {
        min_change: pct / 100.0,
        ..Detection::default()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub dir: String,
    /// The benchmarks the newest result failed, or has no figure of that
    /// the previous result of its kind had.
    pub newest: Vec<BenchComparison>,
    /// The series with figures on two results of one kind.
    pub compared: usize,
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
    /// (`changepoint::min_points` under time, 2 under icount), and the
    /// fewest after a step.
    pub needs: usize,
    pub needs_after: usize,
    /// Whether change points are matched against DIR/alerts.json.
    pub alerting: bool,
}

impl History {
    /// What the gate counts: the change points for the worse that are
    /// `alerted` now (with `--alert`, those not alerted before; without,
    /// the new ones), the newest result's failures and missing benchmarks,
    /// and every series compared across two results of a kind as decided.
    pub fn tally(&self, alerted: impl Iterator<Item = bool>) -> Tally {
        let mut t = Tally::of(self.newest.iter().map(|b| b.verdict));
        t.regressed = alerted.filter(|&regression| regression).count();
        t.decided = self.compared;
        t.pending = self.found.iter().filter(|f| f.pending).count();
        t
    }
}
