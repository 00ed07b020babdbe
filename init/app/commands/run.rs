//! `trig-init run`: the matrix in the running kernel.

use crate::cli::RunCmd;
use std::path::Path;
use std::process::ExitCode;
use trig_guest::pid1;
use trig_guest::recorder::Sink;
use trig_guest::registry;
use trig_schema::error::Error;
use trig_schema::{exit, files};

pub fn run(cmd: RunCmd) -> Result<ExitCode, Error> {
    let opts = cmd.options()?;
    files::check_outputs(Some(&cmd.json).filter(|p| *p != "-").map(Path::new))?;
    let mounts = pid1::mounts::mount_all(false);
    let selection = registry::select(&opts.filter);
    let recorder = pid1::execute(
        &opts,
        selection,
        Sink::Plain(cmd.json.clone()),
        mounts,
        false,
        || std::process::exit(i32::from(exit::NO_BOOT)),
    )?;
    // the report, or a line of it, that could not be written (exit 4)
    if let Some(e) = trig_schema::out::failure() {
        return Err(e);
    }
    Ok(if recorder.all_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::FAILED)
    })
}
