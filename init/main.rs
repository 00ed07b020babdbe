//! `trig-init`: PID 1 of a benchmark VM, or a command on a running kernel
//! or on the host.

mod bench_cli;
mod cli;
mod commands;

use argh::FromArgs;
use cli::{Cmd, RunCmd, TrigInit};
use commands::{bench, bisect, compare, history, list, profile, report, run, strs, sweep, vm};
use std::process::ExitCode;
use trig_guest::pid1;
use trig_schema::exit;

fn main() -> ExitCode {
    // args_os: std::env::args panics on an argument that is not UTF-8
    let argv_os: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let lossy: Vec<String> = argv_os
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // upstream's bench's command line, under its name: never the
    // appliance, which the kernel starts as /init
    let program = std::env::args_os().next().map(std::path::PathBuf::from);
    if program.as_deref().and_then(|p| p.file_name()) == Some("bench".as_ref()) {
        return bench::bench(argv_os);
    }
    let mut subcommands: Vec<&str> = <Cmd as argh::SubCommands>::COMMANDS
        .iter()
        .map(|c| c.name)
        .collect();
    subcommands.push("bench");
    if nix::unistd::getpid().as_raw() == 1 && pid1::is_appliance(&lossy, &subcommands) {
        pid1::pid1_main();
    }
    if argv_os.first().is_some_and(|a| a == "bench") {
        return bench::bench(argv_os[1..].to_vec());
    }
    if let Some(bad) = argv_os.iter().find(|a| a.to_str().is_none()) {
        eprintln!(
            "trig-init: error: argument {bad:?} is not UTF-8; trig-init takes UTF-8 arguments and paths"
        );
        return ExitCode::from(exit::USAGE);
    }
    let argv = lossy;
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
            trig_guest::GIT_REV
        );
        return ExitCode::SUCCESS;
    }
    let (name, result) = match args.cmd {
        None => {
            eprintln!("trig-init: no command given: running the whole matrix in the running kernel, as `trig-init run` does (`trig-init --help` lists the commands)");
            ("trig-init", run::run(RunCmd::default()))
        }
        Some(Cmd::Run(cmd)) => ("trig-init", run::run(cmd)),
        Some(Cmd::Vm(cmd)) => ("trig-init", vm::vm(cmd, false)),
        Some(Cmd::Ab(cmd)) => ("trig-init", vm::vm(cmd.into(), true)),
        Some(Cmd::Compare(cmd)) => ("trig-init compare", compare::compare(cmd)),
        Some(Cmd::History(cmd)) => ("trig-init history", history::history(cmd)),
        Some(Cmd::Report(cmd)) => ("trig-init report", report::report(cmd)),
        Some(Cmd::Bisect(cmd)) => ("trig-init", bisect::bisect(cmd)),
        Some(Cmd::AbProof(cmd)) => ("trig-init", bisect::ab_proof(cmd)),
        Some(Cmd::List(cmd)) => ("trig-init", list::list(cmd)),
        Some(Cmd::Sweep(cmd)) => ("trig-init sweep", sweep::sweep(cmd)),
        Some(Cmd::Profile(cmd)) => ("trig-init profile", profile::profile(cmd)),
    };
    commands::exit_on_error(name, result)
}
