//! What the reader of a comparison should know about figures that are
//! not there: movers when only one side was profiled, overheads whose
//! baseline did not run.

use crate::input::Side;
use trig_schema::Status;

/// The notes of a comparison, in the order they are shown.
pub(super) fn notes(base: &Side, new: &Side) -> Vec<String> {
    [profiled_note(base, new)]
        .into_iter()
        .flatten()
        .chain(
            [("BASE", base), ("NEW", new)]
                .iter()
                .filter_map(|(w, s)| no_overhead(w, s)),
        )
        .collect()
}

/// Why no movers are listed when only one side was profiled.
fn profiled_note(base: &Side, new: &Side) -> Option<String> {
    let profiled = |s: &Side| {
        s.runs()
            .filter_map(|r| r.report.as_ref())
            .any(|r| r.results.iter().any(|b| b.profile.is_some()))
    };
    let (b, n) = (profiled(base), profiled(new));
    (b != n).then(|| {
        let (with, without) = if b { ("BASE", "NEW") } else { ("NEW", "BASE") };
        format!(
            "no movers: {with} was profiled (--profile) and {without} was not; \
             profile both to see where the instructions went"
        )
    })
}

/// The benchmarks of a side that have no overhead because their baseline
/// did not run in their boots.
fn no_overhead(which: &str, side: &Side) -> Option<String> {
    let mut missing: Vec<String> = Vec::new();
    for r in side.runs().filter_map(|r| r.report.as_ref()) {
        for b in r.results.iter().filter(|b| b.status == Status::Ok) {
            let Some(base) = &b.baseline else {
                continue;
            };
            let ran = r
                .results
                .iter()
                .any(|x| &x.bench == base && x.status == Status::Ok);
            let line = format!("{} (no {base})", b.name);
            if b.overhead_ns.is_none() && !ran && !missing.contains(&line) {
                missing.push(line);
            }
        }
    }
    (!missing.is_empty()).then(|| {
        format!(
            "no overhead in {which} for {}: the baseline did not run (ok) in the same boot",
            missing.join(", ")
        )
    })
}
