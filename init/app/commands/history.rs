//! `trig-init history`: change points over a history directory.

use crate::cli::HistoryCmd;
use std::path::Path;
use std::process::ExitCode;
use trig_analysis::changepoint;
use trig_analysis::history;
use trig_export::machines::kcidb::{self, HistoryRuns, Kcidb};
use trig_export::outside::text::line;
use trig_export::Exporter;
use trig_schema::error::{usage, Error};
use trig_schema::files;

pub fn history(cmd: HistoryCmd) -> Result<ExitCode, Error> {
    if !(cmd.alpha > 0.0 && cmd.alpha < 1.0)
        || cmd.min_change.is_some_and(|m| !(m > 0.0 && m.is_finite()))
    {
        return Err(usage("--alpha must be in (0,1) and --min-change positive"));
    }
    let metrics = cmd.metric.0.clone();
    let kcidb = match &cmd.export_kcidb {
        Some(path) => Some((Kcidb(kcidb::KcidbOptions::from_env()?), path)),
        None => None,
    };
    files::check_outputs(kcidb.as_ref().map(|(_, p)| Path::new(p.as_str())))?;
    let dir: &Path = cmd.dir.as_ref();
    let (entries, warning) = history::read(dir, cmd.git.as_deref().map(AsRef::as_ref), &metrics)?;
    if let Some(w) = warning {
        trig_schema::stderrln!("trig-init: warning: {}", line(&w));
    }
    let settings = changepoint::Detection {
        alpha: cmd.alpha,
        min_entries: super::threshold_entries(cmd.threshold_entries)?,
        ..history::detection(&entries, cmd.min_change)
    };
    // KCIDB exports every result, which analyse consumes
    let kept = kcidb.as_ref().map(|_| entries.clone());
    let mut h = history::analyse(&cmd.dir, entries, &metrics, &settings, cmd.new);
    let recorded = if cmd.alert {
        history::load_alerts(dir)?
    } else {
        Vec::new()
    };
    let fresh = if cmd.alert {
        history::match_alerts(&mut h, &recorded)
    } else {
        Vec::new()
    };
    // the files are written even where stdout cannot be
    let printed = trig_schema::out::stdout(&cmd.format.exporter().export(&h));
    if let (Some((exporter, path)), Some(entries)) = (&kcidb, &kept) {
        let doc = HistoryRuns {
            entries,
            history: &h,
        };
        files::write(path, exporter.export(&doc))?;
    }
    // the alerts are remembered only once said
    printed?;
    if !cmd.alert {
        let new = h.found.iter().filter(|f| f.new && !f.pending);
        return Ok(ExitCode::from(h.tally(new.map(|f| f.regression)).status()));
    }
    if !fresh.is_empty() {
        history::save_alerts(dir, &[recorded, fresh.clone()].concat())?;
    }
    Ok(ExitCode::from(
        h.tally(fresh.iter().map(|a| a.regression)).status(),
    ))
}
