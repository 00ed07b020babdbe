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

use crate::cli::{Cmd, RunCmd, TrigInit};
use std::process::ExitCode;
use trig_analysis::compare::DEFAULT_THRESHOLD_ENTRIES;
use trig_schema::error::{usage, Error};

/// Runs the command `args` names; with none, the whole matrix in the
/// running kernel, as `run` does (how `vmtest -k bzImage ./trig-init`
/// and a test box call it).
pub fn dispatch(args: TrigInit) -> ExitCode {
    let (name, result) = match args.cmd {
        None => {
            trig_schema::stderrln!("trig-init: no command given: running the whole matrix in the running kernel, as `trig-init run` does (`trig-init --help` lists the commands)");
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
    exit_on_error(name, result)
}

/// The exit status of a command, with its error said on stderr as
/// `NAME: error: ...` and its class giving the status.
pub fn exit_on_error(name: &str, result: Result<ExitCode, Error>) -> ExitCode {
    result.unwrap_or_else(|e| {
        trig_schema::stderr!("{}", said(name, &e));
        ExitCode::from(e.status())
    })
}

/// An error as said on stderr: `NAME: error: ...` on its first line, and
/// a message that is a list (compare's differences) with each item on a
/// line of its own, indented. An error quotes what it refuses (a
/// release, a name, a file's text): each line shows its control
/// characters, a newline among them, as escapes.
fn said(name: &str, e: &Error) -> String {
    let line = |t: &str| trig_export::outside::text::line(t).into_owned();
    let mut text = format!("{name}: error: {}\n", line(&e.message));
    for item in &e.items {
        text.push_str(&format!("  {}\n", line(item)));
    }
    text
}

/// argh's refusal of a command line (its lines: what is wrong, and what
/// is missing, one a line) as a usage error, `hint` its last item.
pub fn argh_refusal(output: &str, hint: &str) -> Error {
    let mut lines = output.trim_end().lines().map(str::trim);
    let head = lines.next().unwrap_or_default().to_string();
    let mut items: Vec<String> = lines.filter(|l| !l.is_empty()).map(String::from).collect();
    items.push(hint.into());
    trig_schema::error::usage(head).listing(items)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_one_line_or_a_list_never_an_escape() {
        use trig_schema::error::input;
        assert_eq!(
            said("trig-init", &input("no kernel given")),
            "trig-init: error: no kernel given\n"
        );
        let items = ["icount shift 0 against 2".to_string(), "kernel".to_string()];
        let list = said(
            "trig-init compare",
            &input("results are not comparable (--force compares anyway):").listing(items.into()),
        );
        assert_eq!(
            list,
            "trig-init compare: error: results are not comparable (--force compares anyway):\n  \
             icount shift 0 against 2\n  kernel\n"
        );
        assert!(!list.contains("\\n"), "{list}");
        // outside text keeps to its line: a newline in a name is escaped,
        // and no character of it makes an item (the oracle's file name
        // with a unit separator, once the lists' own)
        for name in ["/tmp/by-date/\n-0-2.json", "/tmp/by-date/\u{1f}-0-2.json"] {
            let named = said("trig-init history", &input(format!("{name}: no `created`")));
            assert_eq!(named.lines().count(), 1, "{named}");
            assert!(named.contains("by-date/\\"), "{named}");
        }
        let forged = said("trig-init", &input("release 6.1\x1b[2J"));
        assert!(!forged.contains('\x1b'), "{forged}");
    }
}
