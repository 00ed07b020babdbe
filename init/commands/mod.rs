//! One module per subcommand: each takes its parsed command line and
//! returns the exit status, or an error that [`exit_on_error`] reports.

pub mod bench;
pub mod bisect;
pub mod compare;
pub mod history;
pub mod list;
pub mod profile;
pub mod report;
pub mod run;
pub mod sweep;
pub mod vm;

use std::process::ExitCode;
use trig_analysis::compare::DEFAULT_THRESHOLD_ENTRIES;
use trig_schema::error::{usage, Error};

/// The exit status of a command, with its error said on stderr as
/// `NAME: error: ...` and its class giving the status.
pub fn exit_on_error(name: &str, result: Result<ExitCode, Error>) -> ExitCode {
    result.unwrap_or_else(|e| {
        // an error quotes what it refuses: a release, a name, a file's text
        eprintln!(
            "{name}: error: {}",
            trig_export::outside::text::line(&e.to_string())
        );
        ExitCode::from(e.status())
    })
}

/// `--threshold-entries`, compare's default when not given.
fn threshold_entries(t: Option<f64>) -> Result<f64, Error> {
    match t {
        None => Ok(DEFAULT_THRESHOLD_ENTRIES),
        Some(t) if t > 0.0 && t.is_finite() => Ok(t),
        Some(_) => Err(usage("--threshold-entries must be positive")),
    }
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
