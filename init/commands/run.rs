//! `trig-init run`: the matrix in the running kernel.

use crate::cli::RunCmd;
use std::process::ExitCode;
use trig_init::guest;
use trig_init::runner::Sink;

/// Exit statuses of `run` (and of a guest run seen from the host).
const EXIT_FAILED: u8 = 1;
const EXIT_TIMEOUT: i32 = 3;

pub fn run(cmd: RunCmd) -> Result<ExitCode, String> {
    let opts = cmd.options()?;
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
