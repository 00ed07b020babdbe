//! The end of a command: the summary, the JSON document and the exit
//! status.

use super::session::Session;
use super::{infra, Done, Error};
use crate::judge::exit_status;
use crate::results::Target;
use crate::signals;
use crate::ui;
use nix::sys::signal::Signal;
use trig_schema::exit;
use trig_schema::files;
use trig_schema::RunSet;

impl<'a> Session<'a> {
    /// The summary, the JSON document and the exit status.
    pub(super) fn finish(
        &self,
        targets: &[Target],
        interrupted: Option<Signal>,
    ) -> Result<Done, Error> {
        let opts = self.opts;
        let sets: Vec<RunSet> = targets.iter().map(|t| t.set.clone()).collect();
        let shown: Vec<_> = targets
            .iter()
            .map(|t| (&t.set, t.path.as_ref().map(|(p, _)| p)))
            .collect();
        // figures that could not be kept are at least shown
        let tables = opts.tables || self.unsaved.is_some();
        ui::summary(
            opts.quiet && self.unsaved.is_none(),
            tables.then_some(opts.table),
            &shown,
        );
        if let Some(dest) = &opts.json {
            write_json(dest, &sets)?;
        }
        if !opts.quiet && self.debug.iter().any(Result::is_ok) {
            trig_schema::stderrln!("trig-init: {}", self.lines_cost.said(&sets));
        }
        if let Some(e) = &self.unsaved {
            return Err(infra(format!(
                "results not written: {e}; the figures above are all that is left of the last boot"
            )));
        }
        if let Some(sig) = interrupted {
            trig_schema::stderrln!(
                "trig-init: interrupted by {sig}; the boots that finished are in the results file"
            );
        }
        Ok(Done {
            status: interrupted.map_or_else(
                || sets.iter().map(exit_status).fold(exit::OK, exit::gravest),
                signals::exit_status,
            ),
            files: targets
                .iter()
                .filter_map(|t| t.path.as_ref().map(|(p, _)| p.clone()))
                .collect(),
            sets,
        })
    }
}

/// The results document (one kernel) or an array of them (several) to
/// `dest`, "-" for stdout.
fn write_json(dest: &str, sets: &[RunSet]) -> Result<(), Error> {
    let json = if sets.len() > 1 {
        serde_json::to_string_pretty(&sets)
    } else {
        serde_json::to_string_pretty(&sets[0])
    }
    .expect("results serialize")
        + "\n";
    if dest == "-" {
        trig_schema::out::stdout(&json)
    } else {
        files::write(dest, json)
    }
}
