//! How the binary was called: under upstream's bench's name, as the
//! appliance (PID 1 with no command), or with trig-init's command line,
//! parsed by argh (`--help` and `--version` answered here).

use crate::cli::{Cmd, TrigInit};
use crate::commands::{argh_refusal, exit_on_error, strs};
use argh::FromArgs;
use std::ffi::OsString;
use std::process::ExitCode;
use trig_guest::pid1;
use trig_schema::exit;

pub enum Called {
    /// Upstream's bench command line (without the program's name).
    Bench(Vec<OsString>),
    /// PID 1 of a VM: the whole matrix, then power-off.
    Appliance,
    Command(Box<TrigInit>),
    /// Answered already (`--help`, `--version`, a command line refused).
    Done(ExitCode),
}

/// How `argv` (the program's name first) calls the binary.
pub fn how(argv: &[OsString]) -> Called {
    let args = argv.get(1..).unwrap_or_default();
    // upstream's bench's command line, under its name: never the
    // appliance, which the kernel starts as /init
    let program = argv.first().map(std::path::Path::new);
    if program.and_then(|p| p.file_name()) == Some("bench".as_ref()) {
        return Called::Bench(args.to_vec());
    }
    let lossy: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut subcommands: Vec<&str> = <Cmd as argh::SubCommands>::COMMANDS
        .iter()
        .map(|c| c.name)
        .collect();
    subcommands.push("bench");
    if nix::unistd::getpid().as_raw() == 1 && pid1::is_appliance(&lossy, &subcommands) {
        return Called::Appliance;
    }
    if args.first().is_some_and(|a| a == "bench") {
        return Called::Bench(args[1..].to_vec());
    }
    if let Some(bad) = args.iter().find(|a| a.to_str().is_none()) {
        trig_schema::stderrln!(
            "trig-init: error: argument {bad:?} is not UTF-8; trig-init takes UTF-8 arguments and paths"
        );
        return Called::Done(ExitCode::from(exit::USAGE));
    }
    parsed(&lossy)
}

/// trig-init's own command line. Not argh::from_env, which exits 1 on a
/// parse error: 1 means "regressed" here, a usage error is 2.
fn parsed(args: &[String]) -> Called {
    let done = |result| Called::Done(exit_on_error("trig-init", result));
    match TrigInit::from_args(&["trig-init"], &strs(args)) {
        // --help: argh's text is the product
        Err(e) if e.status.is_ok() => {
            done(trig_schema::stdoutln!("{}", e.output).map(|()| ExitCode::SUCCESS))
        }
        Err(e) => done(Err(argh_refusal(
            &e.output,
            "(trig-init [COMMAND] --help lists the options)",
        ))),
        Ok(args) if args.version => done(
            trig_schema::stdoutln!(
                "trig-init {} ({})",
                env!("CARGO_PKG_VERSION"),
                trig_guest::GIT_REV
            )
            .map(|()| ExitCode::SUCCESS),
        ),
        Ok(args) => Called::Command(Box::new(args)),
    }
}
