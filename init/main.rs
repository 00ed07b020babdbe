//! `trig-init`: PID 1 of a benchmark VM, or a command on a running kernel
//! or on the host.

mod cli;

use argh::FromArgs;
use cli::{Cmd, RunCmd, TrigInit};
use std::process::ExitCode;
use trig_init::host::{kernel::Arch, vm as host_vm};
use trig_init::options::RunOptions;
use trig_init::runner::Sink;
use trig_init::{guest, registry};

/// Exit statuses of `run` (and of a guest run seen from the host).
const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_TIMEOUT: i32 = 3;

fn main() -> ExitCode {
    if nix::unistd::getpid().as_raw() == 1 {
        guest::pid1_main();
    }
    let args: TrigInit = argh::from_env();
    let result = match args.cmd {
        None => run(RunCmd::default()),
        Some(Cmd::Run(cmd)) => run(cmd),
        Some(Cmd::Vm(cmd)) => vm(cmd),
        Some(Cmd::List(_)) => {
            list();
            Ok(ExitCode::SUCCESS)
        }
    };
    result.unwrap_or_else(|e| {
        eprintln!("trig-init: error: {e}");
        ExitCode::from(EXIT_USAGE)
    })
}

fn run_options(cmd: &RunCmd) -> Result<RunOptions, String> {
    let mut o = RunOptions {
        filter: cmd.filter.clone(),
        affinity: cmd.affinity,
        verbose: cmd.verbose,
        ..RunOptions::default()
    };
    let sets = [
        ("warmup", cmd.warmup.map(|v| v.to_string())),
        ("duration", cmd.duration.map(|v| v.to_string())),
        ("producers", cmd.producers.clone()),
        ("batch_iters", cmd.batch_iters.map(|v| v.to_string())),
        ("cmp_str_len", cmd.cmp_str_len.clone()),
        ("rename_thread", cmd.rename_thread.clone()),
        ("timeout", cmd.timeout.map(|v| v.to_string())),
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
        std::process::exit(EXIT_TIMEOUT)
    })?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    })
}

fn vm(cmd: cli::VmCmd) -> Result<ExitCode, String> {
    let args: Vec<&str> = cmd.run_args.iter().map(String::as_str).collect();
    let run_cmd = RunCmd::from_args(&["run"], &args).map_err(|e| e.output)?;
    let opts = host_vm::VmOptions {
        kernel: cmd.kernel,
        arch: cmd.arch.as_deref().map_or(Ok(Arch::host()), Arch::parse)?,
        cpus: cmd.cpus,
        memory: cmd.memory,
        runs: cmd.runs.max(1),
        out: cmd.out.into(),
        accel: host_vm::AccelChoice::parse(&cmd.accel)?,
        timeout: cmd.timeout,
        init: cmd.init.map(Into::into),
        append: cmd.append,
        quiet: cmd.quiet,
        json: cmd.json,
        run: run_options(&run_cmd)?,
    };
    match host_vm::run(&opts) {
        Ok(code) => Ok(ExitCode::from(code)),
        Err((code, msg)) => {
            eprintln!("trig-init: error: {msg}");
            Ok(ExitCode::from(code))
        }
    }
}

fn list() {
    println!(
        "{:<28} {:<8} {:<48} {:<30} NEEDS",
        "BENCHMARK", "GROUP", "ATTACHES TO", "TRIGGER"
    );
    for b in registry::all() {
        let trigger = match b.trigger {
            registry::Trigger::Getpgid => "getpgid() loop".to_string(),
            registry::Trigger::TestRun(p) => format!("test_run {p}"),
            registry::Trigger::Call(t) => format!("call {t:?} target").to_lowercase(),
            registry::Trigger::Rename => "write /proc/self/comm".into(),
        };
        println!(
            "{:<28} {:<8} {:<48} {:<30} {}",
            b.name,
            b.group.as_str(),
            b.point,
            trigger,
            b.feature.needs()
        );
    }
}
