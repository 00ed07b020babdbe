//! `trig-init bisect effect|verdict` and `ab-proof`: the decisions of
//! scripts/bisect.sh and scripts/proofs/ab-proof.sh.

use crate::cli::{AbProofCmd, BisectCmd, BisectSub};
use std::process::ExitCode;
use trig_analysis::ab_proof;
use trig_analysis::bisect::{decide, effect, read_comparison, read_effect};
use trig_schema::error::Error;

pub fn bisect(BisectCmd { cmd }: BisectCmd) -> Result<ExitCode, Error> {
    match cmd {
        // BAD's effect as one JSON object
        BisectSub::Effect(c) => {
            let effect = effect(&read_comparison(c.comparison.as_ref())?);
            let json = serde_json::to_string(&effect).expect("an effect serializes");
            trig_schema::stdoutln!("{json}")?;
        }
        // `good|bad|skip: why` on one line; an unreadable or empty effect
        // is an error, never a verdict
        BisectSub::Verdict(c) => {
            let effect = read_effect(c.effect.as_ref())?;
            let d = decide(&effect, read_comparison(c.comparison.as_ref()));
            // the reason names benchmarks of the comparison's file
            trig_schema::stdoutln!(
                "{}: {}",
                d.step.as_str(),
                trig_export::outside::text::line(&d.why)
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn ab_proof(cmd: AbProofCmd) -> Result<ExitCode, Error> {
    let run = ab_proof::analyse(cmd.dir.as_ref())?;
    trig_schema::out::stdout(&trig_export::ab_proof::text(&run))?;
    Ok(ExitCode::SUCCESS)
}
