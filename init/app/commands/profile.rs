//! `trig-init profile --lines FUNC BASE NEW`: one function's source
//! lines on both sides, as an annotated diff (init/export/people/source_line_diff.rs).

use crate::cli::ProfileCmd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use trig_analysis::compare::source_lines;
use trig_analysis::input;
use trig_export::people::source_line_diff;
use trig_schema::error::{input as bad_input, usage, Error};
use trig_schema::RunSet;

/// The benchmarks of `sets` whose profiles list `function`, in order.
fn benches_with(sets: &[RunSet], function: &str) -> Vec<String> {
    let mut names: Vec<String> = sets
        .iter()
        .flat_map(|s| &s.runs)
        .filter_map(|r| r.report.as_ref())
        .flat_map(|r| &r.results)
        .filter(|r| {
            r.profile
                .as_ref()
                .is_some_and(|p| p.functions.iter().any(|f| f.name == function))
        })
        .map(|r| r.name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Line `n` (from 1) of `file` under `root`, if it can be read.
fn source_line(root: Option<&Path>, file: &str, n: u32) -> Option<String> {
    let path = root?.join(file);
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .nth(n.checked_sub(1)? as usize)
        .map(str::to_string)
}

pub fn profile(cmd: ProfileCmd) -> Result<ExitCode, Error> {
    let [base, new] = cmd.paths.as_slice() else {
        return Err(usage("give BASE and NEW results (files or directories)"));
    };
    let (base, new) = (input::load(&[base.into()])?, input::load(&[new.into()])?);
    let benches = match &cmd.bench {
        Some(b) => vec![b.clone()],
        None => {
            let mut all = benches_with(&base.sets, &cmd.lines);
            all.extend(benches_with(&new.sets, &cmd.lines));
            all.sort();
            all.dedup();
            all
        }
    };
    if benches.is_empty() {
        return Err(bad_input(format!(
            "no profiled benchmark of either side has a function {}",
            trig_export::outside::text::line(&cmd.lines)
        )));
    }
    let roots = [&cmd.base_source, &cmd.source].map(|r| r.as_ref().map(PathBuf::from));
    let text = |file: &str, n: u32, new: bool| source_line(roots[new as usize].as_deref(), file, n);
    for bench in &benches {
        let Some(lines) = source_lines::of_bench(&base.sets, &new.sets, bench, &cmd.lines) else {
            return Err(bad_input(format!(
                "{} is not profiled on both sides (vm/ab --profile)",
                trig_export::outside::text::line(bench)
            )));
        };
        trig_schema::out::stdout(&source_line_diff::render(bench, &cmd.lines, &lines, &text))?;
    }
    Ok(ExitCode::SUCCESS)
}
