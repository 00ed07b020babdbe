//! `trig-init compare`: NEW against BASE, written through the exporters.

use super::threshold_entries;
use crate::cli::CompareCmd;
use std::process::ExitCode;
use trig_analysis::{compare, input};
use trig_export::machines::kcidb::{self, Kcidb};
use trig_export::ComparisonFormat;
use trig_schema::error::{usage, Error};
use trig_schema::files;

pub fn compare(cmd: CompareCmd) -> Result<ExitCode, Error> {
    let (base, new) = match (&cmd.previous, cmd.paths.as_slice()) {
        (Some(dir), []) => input::previous(dir.as_ref())?,
        (None, [base, new]) => (input::load(&[base.into()])?, input::load(&[new.into()])?),
        _ => return Err(usage("give BASE and NEW, or --previous DIR")),
    };
    if !(cmd.alpha > 0.0 && cmd.alpha < 1.0)
        || cmd.threshold.is_some_and(|t| !(t > 0.0 && t.is_finite()))
        || cmd.cv_limit.is_some_and(|c| c.is_nan() || c <= 0.0)
    {
        return Err(usage(
            "--alpha must be in (0,1), --threshold and --cv-limit positive",
        ));
    }
    let settings = compare::Settings {
        threshold_pct: cmd.threshold,
        threshold_entries: threshold_entries(cmd.threshold_entries)?,
        alpha: cmd.alpha,
        cv_limit: cmd.cv_limit.map(|c| c / 100.0),
        metrics: cmd.metric.0.clone(),
        force: cmd.force,
        unpaired: cmd.unpaired,
        ..compare::Settings::default()
    };
    let stdout = cmd.format.exporter(cmd.color.on());
    let mut files = Vec::new();
    for (format, path) in [
        (cmd.format, &cmd.output),
        (ComparisonFormat::Json, &cmd.export_json),
        (ComparisonFormat::Markdown, &cmd.export_markdown),
        (ComparisonFormat::Table, &cmd.export_table),
        (ComparisonFormat::Bmf, &cmd.export_bmf),
    ] {
        if let Some(path) = path {
            files.push((format.exporter(false), path));
        }
    }
    if let Some(path) = &cmd.export_kcidb {
        let options = kcidb::KcidbOptions::from_env()?;
        files.push((Box::new(Kcidb(options)), path));
    }
    files::check_outputs(files.iter().map(|(_, p)| std::path::Path::new(p.as_str())))?;
    let c = compare::compare(&base, &new, &settings)?;
    // the files are written even where stdout cannot be
    let printed = trig_schema::out::stdout(&stdout.export(&c));
    for (exporter, path) in files {
        files::write(path, exporter.export(&c))?;
    }
    printed?;
    Ok(ExitCode::from(c.tally().status()))
}
