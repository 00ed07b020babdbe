//! `trig-init vm` and `ab`: boot kernels, then (ab) compare them.

use super::{strs, threshold_entries};
use crate::cli::{RunCmd, VmCmd};
use argh::FromArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use trig_analysis::compare::{self, Comparison};
use trig_analysis::input::Side;
use trig_boot::kernel::Arch;
use trig_boot::vm::{self as boot, VmOptions};
use trig_export::machines::kcidb::{self, AbRuns, Kcidb, Runs};
use trig_export::{Exporter, Table};
use trig_schema::error::{usage, Error};
use trig_schema::exit;
use trig_schema::files;

/// `vm`, and `ab` (`compare_after`): boots, then compares each kernel
/// with the first. Every setting is checked before the first boot.
pub fn vm(cmd: VmCmd, compare_after: bool) -> Result<ExitCode, Error> {
    files::check_outputs(cmd.export_kcidb.as_deref().map(std::path::Path::new))?;
    let table = Table {
        color: cmd.color.on(),
    };
    let settings = settings(&cmd, compare_after)?;
    let kcidb = match &cmd.export_kcidb {
        Some(path) => Some((Kcidb(kcidb::KcidbOptions::from_env()?), path.clone())),
        None => None,
    };
    let opts = options(cmd, compare_after)?;
    let done = boot::run(&opts)?;
    let mut code = done.status;
    let mut comparisons = Vec::new();
    if compare_after {
        let (compared, status) = compare_with_first(&done, &settings, &table);
        comparisons = compared;
        // a boot's status stands over what the comparison says of it
        code = if code == exit::OK { status } else { code };
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
        if let Err(e) = files::write(&path, text) {
            trig_schema::stderrln!("trig-init: error: {e}");
            code = exit::gravest(code, exit::INFRA);
        }
    }
    Ok(ExitCode::from(code))
}

/// ab's comparison settings: `--metric` and `--threshold-entries`, which
/// vm refuses, and a metric that the boots asked for would not count.
fn settings(cmd: &VmCmd, compare_after: bool) -> Result<compare::Settings, Error> {
    if !compare_after {
        if cmd.metric.is_some() {
            return Err(usage(
                "--metric is ab's: vm compares nothing (trig-init compare --metric compares its results)",
            ));
        }
        if cmd.threshold_entries.is_some() {
            return Err(usage(
                "--threshold-entries is ab's: vm compares nothing (trig-init compare --threshold-entries compares its results)",
            ));
        }
    }
    let metrics = match &cmd.metric {
        None => compare::Settings::default().metrics,
        Some(m) => {
            let metrics = m.0.clone();
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
            metrics
        }
    };
    Ok(compare::Settings {
        metrics,
        threshold_entries: threshold_entries(cmd.threshold_entries)?,
        ..compare::Settings::default()
    })
}

/// The command line as the boots' options.
fn options(cmd: VmCmd, compare_after: bool) -> Result<VmOptions, Error> {
    let run_cmd = RunCmd::from_args(&["run"], &strs(&cmd.run_args)).map_err(|e| {
        super::argh_refusal(
            &e.output,
            "(vm's last arguments are the guest's run options, after --; \
             vm's own switches, such as --debuginfo, take no value)",
        )
    })?;
    let kernels = if cmd.kernel.is_empty() {
        vec!["debian".to_string()]
    } else {
        cmd.kernel
    };
    if compare_after && kernels.len() < 2 {
        return Err(usage("ab needs at least two kernels (-k A -k B)"));
    }
    if cmd.debuginfo && !cmd.profile && !cmd.cache {
        return Err(usage(
            "--debuginfo is for the source lines of --profile (or --cache): add --profile",
        ));
    }
    Ok(VmOptions {
        kernels,
        order: cmd.order.seeded(cmd.seed),
        commit: cmd.commit,
        arch: cmd.arch.unwrap_or_else(Arch::host),
        cpus: cmd.cpus,
        memory: cmd.memory,
        runs: cmd.runs,
        jobs: cmd.jobs,
        split: cmd.split,
        out: cmd.out.into(),
        accel: cmd.accel,
        meter: cmd.meter,
        icount_shift: cmd.icount_shift,
        timeout: cmd.timeout,
        init: cmd.init.map(PathBuf::from),
        append: cmd.append,
        kaslr: cmd.kaslr,
        kernel_appends: cmd.kernel_append,
        profile: cmd.profile || cmd.cache,
        cache: cmd.cache,
        debuginfo: cmd.debuginfo,
        quiet: cmd.quiet,
        verbose: cmd.verbose,
        // ab's answer is its comparison; vm's is the table
        tables: cmd.tables || !compare_after,
        table: trig_export::people::vm_table::summary,
        json: cmd.json,
        run: run_cmd.options()?,
        timing_given: run_cmd.warmup.is_some() || run_cmd.duration.is_some(),
        min_counts_given: run_cmd.min_counts.is_some(),
    })
}

/// ab's comparisons of each kernel with the first, printed, and their
/// status. One that cannot be made after the boots (a side without a
/// report, results that differ in what they stand on) is a gate that
/// did not pass: 1, as `compare` of nothing measured; the boots' results
/// are kept all the same.
fn compare_with_first(
    done: &boot::Done,
    settings: &compare::Settings,
    table: &Table,
) -> (Vec<Comparison>, u8) {
    let base = Side::of_file(&done.files[0], vec![done.sets[0].clone()]);
    let mut status = exit::OK;
    let mut comparisons = Vec::new();
    for (file, set) in done.files.iter().zip(&done.sets).skip(1) {
        let new = Side::of_file(file, vec![set.clone()]);
        match compare::compare(&base, &new, settings) {
            Ok(c) => {
                if let Err(e) = trig_schema::out::stdout(&table.export(&c)) {
                    trig_schema::stderrln!("trig-init: error: {e}");
                    status = exit::gravest(status, exit::INFRA);
                }
                status = exit::gravest(status, c.tally().status());
                comparisons.push(c);
            }
            Err(e) => {
                trig_schema::stderrln!(
                    "trig-init: compare: {}: the gate fails, the boots' results are kept",
                    trig_export::outside::text::line(&e.to_string())
                );
                status = exit::gravest(status, exit::FAILED);
            }
        }
    }
    (comparisons, status)
}
