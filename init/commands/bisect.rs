//! `trig-init bisect effect|verdict` and `ab-proof`: the decisions of
//! scripts/bisect.sh and scripts/ab-proof.sh.

use crate::cli::{AbProofCmd, BisectCmd, BisectSub};
use std::process::ExitCode;
use trig_init::analysis::ab_proof;
use trig_init::analysis::bisect as host_bisect;
use trig_init::error::{input, Error};

pub fn bisect(BisectCmd { cmd }: BisectCmd) -> Result<ExitCode, Error> {
    match cmd {
        BisectSub::Effect(c) => host_bisect::print_effect(c.comparison.as_ref()),
        BisectSub::Verdict(c) => {
            host_bisect::print_verdict(c.effect.as_ref(), c.comparison.as_ref())
        }
    }
    .map(|()| ExitCode::SUCCESS)
    .map_err(input)
}

pub fn ab_proof(cmd: AbProofCmd) -> Result<ExitCode, Error> {
    ab_proof::print(cmd.dir.as_ref())
        .map(|()| ExitCode::SUCCESS)
        .map_err(input)
}
