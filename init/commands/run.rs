//! `trig-init run`: the matrix in the running kernel.

use crate::cli::RunCmd;
use std::process::ExitCode;
use trig_init::runner::Sink;
use trig_init::{exit, guest};

pub fn run(cmd: RunCmd) -> Result<ExitCode, String> {
    let opts = cmd.options()?;
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
