//! `trig-init list`: the registry as a table, with upstream's name of each
//! benchmark in the bench of the kernel version at hand.

use crate::cli::ListCmd;
use std::process::ExitCode;
use trig_guest::registry;
use trig_schema::error::{usage, Error};

pub fn list(cmd: ListCmd) -> Result<ExitCode, Error> {
    let version = match cmd.kernel {
        Some(k) => registry::version_of(&k)
            .ok_or_else(|| usage(format!("--kernel {k}: not a kernel version such as 6.12")))?,
        None => registry::running_version()?,
    };
    trig_schema::out::stdout(&registry::listing(version))?;
    Ok(ExitCode::SUCCESS)
}
