//! `trig-init sweep plan|merge|report|next`: the Rust side of
//! scripts/sweep.sh.

use crate::cli::{SweepCmd, SweepPlanCmd, SweepReportCmd, SweepSub};
use std::path::PathBuf;
use std::process::ExitCode;
use trig_analysis::compare;
use trig_analysis::sweep::{self, range, search};
use trig_export::sweep::SweepFormat;
use trig_schema::error::{input, usage, Error};
use trig_schema::files;

pub fn sweep(SweepCmd { cmd }: SweepCmd) -> Result<ExitCode, Error> {
    match cmd {
        SweepSub::Plan(c) => plan(c),
        SweepSub::Merge(c) => {
            let dirs: Vec<PathBuf> = c.dirs.iter().map(PathBuf::from).collect();
            let missing = range::merge(c.out.as_ref(), &dirs)?;
            if !missing.is_empty() {
                trig_schema::stderrln!(
                    "trig-init sweep: warning: no slice took {} of the range's commits (indices {:?}); the report names them",
                    missing.len(),
                    missing
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        SweepSub::Next(c) => {
            if c.runners == 0 {
                return Err(usage("--runners must be at least 1"));
            }
            let settings = settings(c.threshold)?;
            for (commit, stem) in search::next_in(c.dir.as_ref(), c.runners, &settings)? {
                trig_schema::stdoutln!("{commit} {stem}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        SweepSub::Report(c) => report(c),
    }
}

/// `sweep plan`: the commits of a slice (or a search's first), a line each.
fn plan(c: SweepPlanCmd) -> Result<ExitCode, Error> {
    let slice = match (&c.slice, c.search) {
        (Some(_), true) => {
            return Err(usage(
                "--search takes no --slice: a search measures what `sweep next` asks for",
            ))
        }
        (None, true) => None,
        (s, false) => Some(range::Slice::parse(s.as_deref().unwrap_or("1/1"))?),
    };
    let plan = range::plan(c.tree.as_ref(), &c.range, slice, c.out.as_ref())?;
    for (commit, stem) in plan {
        trig_schema::stdoutln!("{commit} {stem}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `sweep report`: the steps on stdout and into every file asked for.
fn report(c: SweepReportCmd) -> Result<ExitCode, Error> {
    let settings = compare::Settings {
        metrics: c.metric.0.clone(),
        threshold_entries: super::threshold_entries(c.threshold_entries)?,
        ..settings(c.threshold)?
    };
    let stdout = c.format.exporter();
    let mut files = Vec::new();
    for (format, path) in [
        (c.format, &c.output),
        (SweepFormat::Json, &c.export_json),
        (SweepFormat::Markdown, &c.export_markdown),
        (SweepFormat::Html, &c.export_html),
    ] {
        if let Some(path) = path {
            files.push((format.exporter(), path));
        }
    }
    files::check_outputs(files.iter().map(|(_, p)| std::path::Path::new(p.as_str())))?;
    let s = sweep::analyse(c.dir.as_ref(), &settings)?;
    // the files are written even where stdout cannot be
    let printed = trig_schema::out::stdout(&stdout.export(&s));
    for (exporter, path) in files {
        files::write(path, exporter.export(&s))?;
    }
    printed?;
    // every build failed, say: "0 steps" would read as a pass
    if s.measured() < 2 {
        return Err(input(format!(
            "{}: nothing compared: a step needs two measured commits, and {} of the {} were measured",
            c.dir,
            s.measured(),
            s.outcomes.len()
        )));
    }
    Ok(ExitCode::from(s.tally().status()))
}

/// compare's settings at `--threshold`.
fn settings(threshold: Option<f64>) -> Result<compare::Settings, Error> {
    if threshold.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
        return Err(usage("--threshold must be positive"));
    }
    Ok(compare::Settings {
        threshold_pct: threshold,
        ..compare::Settings::default()
    })
}
