//! `trig-init`: PID 1 of a benchmark VM, or a command on a running kernel
//! or on the host.

mod cli;

use argh::FromArgs;
use cli::{Cmd, ListCmd, RunCmd, TrigInit};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use trig_init::changepoint;
use trig_init::host::compare::{
    self,
    render::{render, Format},
};
use trig_init::host::{ab_proof, bisect, bmf, exit, history, html, kernel::Arch, vm as host_vm};
use trig_init::options::RunOptions;
use trig_init::runner::Sink;
use trig_init::{guest, registry};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let subcommands: Vec<&str> = <Cmd as argh::SubCommands>::COMMANDS
        .iter()
        .map(|c| c.name)
        .collect();
    if nix::unistd::getpid().as_raw() == 1 && guest::is_appliance(&argv, &subcommands) {
        guest::pid1_main();
    }
    // not argh::from_env, which exits 1 on a parse error: 1 means
    // "regressed" here, a usage error is 2
    let args = match TrigInit::from_args(&["trig-init"], &strs(&argv)) {
        Ok(args) => args,
        Err(e) if e.status.is_ok() => {
            println!("{}", e.output);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!(
                "{}\nRun trig-init [COMMAND] --help for more information.",
                e.output.trim_end()
            );
            return ExitCode::from(exit::USAGE);
        }
    };
    if args.version {
        println!(
            "trig-init {} ({})",
            env!("CARGO_PKG_VERSION"),
            env!("TRIG_GIT_REV")
        );
        return ExitCode::SUCCESS;
    }
    let result = match args.cmd {
        None => {
            eprintln!("trig-init: no command given: running the whole matrix in the running kernel, as `trig-init run` does (`trig-init --help` lists the commands)");
            run(RunCmd::default())
        }
        Some(Cmd::Run(cmd)) => run(cmd),
        Some(Cmd::Vm(cmd)) => vm(cmd, false),
        Some(Cmd::Ab(cmd)) => vm(cmd.into(), true),
        Some(Cmd::Compare(cmd)) => Ok(compare(cmd)),
        Some(Cmd::History(cmd)) => Ok(history(cmd)),
        Some(Cmd::Report(cmd)) => Ok(report(cmd)),
        Some(Cmd::Bisect(cli::BisectCmd { cmd })) => match cmd {
            cli::BisectSub::Effect(c) => bisect::print_effect(c.comparison.as_ref()),
            cli::BisectSub::Verdict(c) => {
                bisect::print_verdict(c.effect.as_ref(), c.comparison.as_ref())
            }
        }
        .map(|()| ExitCode::SUCCESS),
        Some(Cmd::AbProof(cmd)) => ab_proof::print(cmd.dir.as_ref()).map(|()| ExitCode::SUCCESS),
        Some(Cmd::List(cmd)) => list(cmd),
    };
    finish(result)
}

fn finish(result: Result<ExitCode, String>) -> ExitCode {
    result.unwrap_or_else(|e| {
        eprintln!("trig-init: error: {e}");
        ExitCode::from(exit::USAGE)
    })
}

fn run_options(cmd: &RunCmd) -> Result<RunOptions, String> {
    let mut o = RunOptions {
        filter: cmd.filter.clone(),
        affinity: cmd.affinity,
        verbose: cmd.verbose,
        harness: cmd.harness,
        ..RunOptions::default()
    };
    let sets = [
        ("warmup", cmd.warmup.clone()),
        ("duration", cmd.duration.clone()),
        ("producers", cmd.producers.clone()),
        ("batch_iters", cmd.batch_iters.map(|v| v.to_string())),
        ("cmp_str_len", cmd.cmp_str_len.clone()),
        ("rename_thread", cmd.rename_thread.clone()),
        ("timeout", cmd.timeout.map(|v| v.to_string())),
        ("inject", cmd.inject.clone()),
    ];
    for (key, value) in sets {
        if let Some(v) = value {
            o.set(key, &v)?;
        }
    }
    o.validate()?;
    Ok(o)
}

fn run(cmd: RunCmd) -> Result<ExitCode, String> {
    let opts = run_options(&cmd)?;
    let mounts = guest::mounts::mount_all(false);
    let ok = guest::execute(&opts, Sink::Plain(cmd.json.clone()), mounts, false, || {
        std::process::exit(i32::from(exit::NO_BOOT))
    })?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::BENCH_FAILED)
    })
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `vm`, and `ab` (`compare_after`): boots, then compares each kernel
/// with the first.
fn vm(cmd: cli::VmCmd, compare_after: bool) -> Result<ExitCode, String> {
    let run_cmd = RunCmd::from_args(&["run"], &strs(&cmd.run_args)).map_err(|e| e.output)?;
    let format = Format::parse("table", color(&cmd.color)?)?;
    let kernels = if cmd.kernel.is_empty() {
        vec!["debian".to_string()]
    } else {
        cmd.kernel
    };
    if compare_after && kernels.len() < 2 {
        return Err("ab needs at least two kernels (-k A -k B)".into());
    }
    let opts = host_vm::VmOptions {
        kernels,
        order: host_vm::Order::parse(&cmd.order, cmd.seed)?,
        commit: cmd.commit,
        arch: cmd.arch.as_deref().map_or(Ok(Arch::host()), Arch::parse)?,
        cpus: cmd.cpus,
        memory: cmd.memory,
        runs: cmd.runs,
        out: cmd.out.into(),
        accel: host_vm::AccelChoice::parse(&cmd.accel)?,
        meter: host_vm::MeterChoice::parse(&cmd.meter)?,
        timeout: cmd.timeout,
        init: cmd.init.map(Into::into),
        append: cmd.append,
        kaslr: cmd.kaslr,
        kernel_appends: cmd.kernel_append,
        profile: cmd.profile,
        quiet: cmd.quiet,
        json: cmd.json,
        run: run_options(&run_cmd)?,
        timing_given: run_cmd.warmup.is_some() || run_cmd.duration.is_some(),
    };
    let done = match host_vm::run(&opts) {
        Ok(done) => done,
        Err((code, msg)) => {
            eprintln!("trig-init: error: {msg}");
            return Ok(ExitCode::from(code));
        }
    };
    let mut code = done.status;
    if compare_after {
        let settings = compare::Settings::default();
        let base = compare::Side::of_file(&done.files[0], vec![done.sets[0].clone()]);
        for (file, set) in done.files.iter().zip(&done.sets).skip(1) {
            let new = compare::Side::of_file(file, vec![set.clone()]);
            match compare::compare(&base, &new, &settings) {
                Ok(c) => {
                    print!("{}", render(&c, format));
                    if c.regressed() && code == exit::OK {
                        code = exit::BENCH_FAILED;
                    }
                }
                Err(e) => {
                    eprintln!("trig-init: compare: {e}");
                    code = code.max(exit::USAGE);
                }
            }
        }
    }
    Ok(ExitCode::from(code))
}

/// `--color`: auto colours a terminal unless NO_COLOR is set and not
/// empty (no-color.org); always and never override both.
fn color(choice: &str) -> Result<bool, String> {
    match choice {
        "auto" => Ok(std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())),
        "always" => Ok(true),
        "never" => Ok(false),
        c => Err(format!("--color must be auto, always or never, not '{c}'")),
    }
}

/// Exit statuses of `compare`.
const COMPARE_REGRESSED: u8 = 1;
const COMPARE_ERROR: u8 = 2;

fn compare(cmd: cli::CompareCmd) -> ExitCode {
    match compare_inner(cmd) {
        Ok(regressed) => ExitCode::from(if regressed { COMPARE_REGRESSED } else { 0 }),
        Err(e) => {
            eprintln!("trig-init compare: error: {e}");
            ExitCode::from(COMPARE_ERROR)
        }
    }
}

fn compare_inner(cmd: cli::CompareCmd) -> Result<bool, String> {
    let (base, new) = match (&cmd.previous, cmd.paths.as_slice()) {
        (Some(dir), []) => compare::input::previous(dir.as_ref())?,
        (None, [base, new]) => (
            compare::input::load(&[base.into()])?,
            compare::input::load(&[new.into()])?,
        ),
        _ => return Err("give BASE and NEW, or --previous DIR".into()),
    };
    if !(0.0..1.0).contains(&cmd.alpha)
        || cmd.threshold.is_some_and(|t| t.is_nan() || t < 0.0)
        || cmd.cv_limit.is_some_and(|c| c.is_nan() || c <= 0.0)
    {
        return Err("--alpha must be in (0,1), --threshold and --cv-limit positive".into());
    }
    let settings = compare::Settings {
        threshold_pct: cmd.threshold,
        alpha: cmd.alpha,
        cv_limit: cmd.cv_limit.map(|c| c / 100.0),
        metrics: compare::Metric::parse_choice(&cmd.metric)?,
        force: cmd.force,
        unpaired: cmd.unpaired,
        ..compare::Settings::default()
    };
    let stdout = Output::parse(&cmd.format, color(&cmd.color)?)?;
    let mut files = Vec::new();
    for (format, path) in [
        (cmd.format.as_str(), &cmd.output),
        ("json", &cmd.export_json),
        ("markdown", &cmd.export_markdown),
        ("table", &cmd.export_table),
        ("bmf", &cmd.export_bmf),
    ] {
        if let Some(path) = path {
            files.push((Output::parse(format, false)?, path));
        }
    }
    let c = compare::compare(&base, &new, &settings)?;
    print!("{}", stdout.render(&c));
    for (output, path) in files {
        std::fs::write(path, output.render(&c)).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(c.regressed())
}

/// What `compare` writes: one of render's formats, or BMF.
enum Output {
    Rendered(Format),
    Bmf,
}

impl Output {
    fn parse(format: &str, color: bool) -> Result<Self, String> {
        if format == "bmf" {
            return Ok(Output::Bmf);
        }
        Format::parse(format, color)
            .map(Output::Rendered)
            .map_err(|e| format!("{e} (or bmf)"))
    }

    fn render(&self, c: &compare::Comparison) -> String {
        match self {
            Output::Rendered(format) => render(c, *format),
            Output::Bmf => bmf::comparison(c),
        }
    }
}

/// Exit statuses of `history`: a new change point for the worse is 1.
fn history(cmd: cli::HistoryCmd) -> ExitCode {
    let run = || -> Result<bool, String> {
        if !(0.0..1.0).contains(&cmd.alpha) || cmd.min_change.is_some_and(|m| m.is_nan() || m < 0.0)
        {
            return Err("--alpha must be in (0,1) and --min-change positive".into());
        }
        let metrics = compare::Metric::parse_choice(&cmd.metric)?;
        let dir: &Path = cmd.dir.as_ref();
        let entries = history::load(dir, cmd.git.as_deref().map(AsRef::as_ref))?;
        let settings = changepoint::Settings {
            alpha: cmd.alpha,
            min_change: cmd
                .min_change
                .unwrap_or_else(|| history::default_min_change_pct(&entries))
                / 100.0,
            ..changepoint::Settings::default()
        };
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
        match cmd.format.as_str() {
            "json" => println!(
                "{}",
                serde_json::to_string_pretty(&h).expect("history serializes")
            ),
            "markdown" | "md" => print!("{}", history::render(&h, true)),
            "table" => print!("{}", history::render(&h, false)),
            "bmf" => print!("{}", bmf::history(&h)),
            f => {
                return Err(format!(
                    "--format must be table, markdown, json or bmf, not '{f}'"
                ))
            }
        }
        if !cmd.alert {
            return Ok(h.found.iter().any(|f| f.new && f.regression));
        }
        if !fresh.is_empty() {
            history::save_alerts(dir, &[recorded, fresh.clone()].concat())?;
        }
        Ok(fresh.iter().any(|a| a.regression))
    };
    match run() {
        Ok(regressed) => ExitCode::from(if regressed { COMPARE_REGRESSED } else { 0 }),
        Err(e) => {
            eprintln!("trig-init history: error: {e}");
            ExitCode::from(COMPARE_ERROR)
        }
    }
}

fn report(cmd: cli::ReportCmd) -> ExitCode {
    let run = || -> Result<(), String> {
        let metrics = [compare::Metric::Rate, compare::Metric::Overhead];
        let entries = history::load(cmd.dir.as_ref(), cmd.git.as_deref().map(AsRef::as_ref))?;
        let latest = match entries.as_slice() {
            [.., (pb, base), (pn, new)] => {
                let side = |p: &history::Point, sets: &[trig_init::report::RunSet]| {
                    compare::Side::of_file(p.file.as_ref(), sets.to_vec())
                };
                compare::compare(
                    &side(pb, base),
                    &side(pn, new),
                    &compare::Settings::default(),
                )
                .map_err(|e| eprintln!("trig-init report: no latest comparison: {e}"))
                .ok()
            }
            _ => None,
        };
        let settings = changepoint::Settings {
            min_change: history::default_min_change_pct(&entries) / 100.0,
            ..changepoint::Settings::default()
        };
        let h = history::analyse(&cmd.dir, entries, &metrics, &settings, 3);
        let options = html::Options {
            repo_url: cmd.repo_url.clone(),
            common_scale: cmd.common_scale,
        };
        std::fs::write(&cmd.output, html::page(&h, latest.as_ref(), &options))
            .map_err(|e| format!("{}: {e}", cmd.output))?;
        eprintln!(
            "trig-init report: wrote {} ({} results, {} change points)",
            cmd.output,
            h.points.len(),
            h.found.len()
        );
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("trig-init report: error: {e}");
            ExitCode::from(COMPARE_ERROR)
        }
    }
}

fn list(cmd: ListCmd) -> Result<ExitCode, String> {
    let version = match cmd.kernel {
        Some(k) => registry::version_of(&k)
            .ok_or_else(|| format!("--kernel {k}: not a kernel version such as 6.12"))?,
        None => registry::running_version()?,
    };
    print!("{}", registry::listing(version));
    Ok(ExitCode::SUCCESS)
}
