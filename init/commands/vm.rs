//! `trig-init vm` and `ab`: boot kernels, then (ab) compare them.

use super::{color, strs, threshold_entries};
use crate::cli::{RunCmd, VmCmd};
use argh::FromArgs;
use std::process::ExitCode;
use trig_analysis::compare;
use trig_analysis::input::Side;
use trig_boot::kernel::Arch;
use trig_boot::vm as host_vm;
use trig_export::kcidb::{self, AbRuns, Kcidb, Runs};
use trig_export::{write_file, Exporter, Table};
use trig_schema::error::{usage, Error};
use trig_schema::exit;

/// `vm`, and `ab` (`compare_after`): boots, then compares each kernel
/// with the first.
pub fn vm(cmd: VmCmd, compare_after: bool) -> Result<ExitCode, Error> {
    let run_cmd = RunCmd::from_args(&["run"], &strs(&cmd.run_args)).map_err(|e| usage(e.output))?;
    let table = Table {
        color: color(&cmd.color)?,
    };
    let kernels = if cmd.kernel.is_empty() {
        vec!["debian".to_string()]
    } else {
        cmd.kernel
    };
    if compare_after && kernels.len() < 2 {
        return Err(usage("ab needs at least two kernels (-k A -k B)"));
    }
    let settings = match (&cmd.metric, compare_after) {
        (Some(_), false) => {
            return Err(usage(
                "--metric is ab's: vm compares nothing (trig-init compare --metric compares its results)",
            ))
        }
        (Some(m), true) => {
            let metrics = compare::Metric::parse_choice(m).map_err(usage)?;
            // the comparison would find no figure, after every boot
            if !cmd.profile && !cmd.cache && metrics.iter().any(|m| m.needs_profile()) {
                return Err(usage(format!(
                    "--metric {m} compares what only --profile counts (the kernel's instructions and entries): add --profile"
                )));
            }
            if !cmd.cache && metrics.iter().any(|m| m.needs_cache()) {
                return Err(usage(format!(
                    "--metric {m} compares what only --cache counts (accesses, simulated misses, estimated cycles): add --cache"
                )));
            }
            compare::Settings {
                metrics,
                ..compare::Settings::default()
            }
        }
        (None, _) => compare::Settings::default(),
    };
    if cmd.threshold_entries.is_some() && !compare_after {
        return Err(usage(
            "--threshold-entries is ab's: vm compares nothing (trig-init compare --threshold-entries compares its results)",
        ));
    }
    let settings = compare::Settings {
        threshold_entries: threshold_entries(cmd.threshold_entries)?,
        ..settings
    };
    // checked before booting, so that a bad setting costs no boots
    let kcidb = match &cmd.export_kcidb {
        Some(path) => Some((
            Kcidb(kcidb::KcidbOptions::from_env().map_err(usage)?),
            path.clone(),
        )),
        None => None,
    };
    let opts = host_vm::VmOptions {
        kernels,
        order: host_vm::Order::parse(&cmd.order, cmd.seed).map_err(usage)?,
        commit: cmd.commit,
        arch: cmd
            .arch
            .as_deref()
            .map_or(Ok(Arch::host()), Arch::parse)
            .map_err(usage)?,
        cpus: cmd.cpus,
        memory: cmd.memory,
        runs: cmd.runs,
        jobs: cmd.jobs,
        out: cmd.out.into(),
        accel: host_vm::AccelChoice::parse(&cmd.accel).map_err(usage)?,
        meter: host_vm::MeterChoice::parse(&cmd.meter).map_err(usage)?,
        timeout: cmd.timeout,
        init: cmd.init.map(Into::into),
        append: cmd.append,
        kaslr: cmd.kaslr,
        kernel_appends: cmd.kernel_append,
        profile: cmd.profile || cmd.cache,
        cache: cmd.cache,
        quiet: cmd.quiet,
        verbose: cmd.verbose,
        // ab's answer is its comparison; vm's is the table
        tables: cmd.tables || !compare_after,
        table: trig_export::vm_table::summary,
        json: cmd.json,
        run: run_cmd.options().map_err(usage)?,
        timing_given: run_cmd.warmup.is_some() || run_cmd.duration.is_some(),
    };
    let done = host_vm::run(&opts)?;
    let mut code = done.status;
    let mut comparisons = Vec::new();
    if compare_after {
        let base = Side::of_file(&done.files[0], vec![done.sets[0].clone()]);
        for (file, set) in done.files.iter().zip(&done.sets).skip(1) {
            let new = Side::of_file(file, vec![set.clone()]);
            match compare::compare(&base, &new, &settings) {
                Ok(c) => {
                    print!("{}", table.export(&c));
                    if code == exit::OK {
                        code = c.tally().status();
                    }
                    comparisons.push(c);
                }
                Err(e) => {
                    eprintln!("trig-init: compare: {e}");
                    code = code.max(exit::USAGE);
                }
            }
        }
    }
    if let Some((exporter, path)) = kcidb {
        let runs = Runs {
            files: &done.files,
            sets: &done.sets,
        };
        let text = if compare_after {
            exporter.export(&AbRuns {
                runs,
                comparisons: &comparisons,
            })
        } else {
            exporter.export(&runs)
        };
        // could not write: the boots' results are in --out all the same
        if let Err(e) = write_file(&path, &text) {
            eprintln!("trig-init: error: {e}");
            code = code.max(exit::INFRA);
        }
    }
    Ok(ExitCode::from(code))
}
