//! One run of a kernel split over several boots (`vm --split`): the
//! parts' records merged into the run's, shaped as a single boot's, each
//! part kept in it. A part that failed or never ran loses only its own
//! benchmarks: they become failed rows that say why, and the other parts'
//! figures stay.

use crate::judge::append;
use trig_guest::options::RunOptions;
use trig_guest::registry::{self, Bench};
use trig_guest::split::{Part, Plan};
use trig_schema::{
    BenchResult, BootStatus, Outcome, Params, PartRecord, Report, RunEnd, RunRecord, Status,
};

/// A run's parts as they came: each one's record, or None for a part
/// that never ran (the command stopped first).
pub struct Parts<'a> {
    pub plan: &'a Plan,
    /// The run's options without the part: what the whole selection ran
    /// with.
    pub whole: &'a RunOptions,
    pub records: Vec<Option<RunRecord>>,
}

impl Parts<'_> {
    fn of(&self) -> usize {
        self.records.len()
    }

    /// The part record of the i-th part (from 0).
    fn part_record(&self, i: usize) -> PartRecord {
        let part = Part {
            index: i + 1,
            of: self.of(),
        };
        let benchmarks = self.plan.runs[i].iter().map(|b| b.name.into()).collect();
        let boot = match &self.records[i] {
            Some(r) => RunRecord {
                report: None,
                ..r.clone()
            },
            None => RunRecord {
                index: 0,
                status: BootStatus::Interrupted,
                message: Some(NOT_RUN.into()),
                console_log: String::new(),
                wall_s: 0.0,
                boot_s: None,
                pairing: None,
                report: None,
                timeline: None,
                parts: Vec::new(),
            },
        };
        PartRecord {
            part: part.to_string(),
            benchmarks,
            boot,
        }
    }

    /// The i-th part's report, unless it ran with other parameters than
    /// the first part that reported ([`Parts::refused`]).
    fn report(&self, i: usize) -> Option<&Report> {
        let report = self.records[i].as_ref()?.report.as_ref()?;
        self.refused(i).is_none().then_some(report)
    }

    /// The parameters the first part that reported ran with: what each
    /// guest reads from its kernel command line (the icount meter's
    /// windows, the affinity `-p N` implies), not what the command line
    /// of `vm` said.
    fn first_params(&self) -> Option<&Params> {
        self.records
            .iter()
            .flatten()
            .find_map(|r| r.report.as_ref())
            .map(|r| &r.params)
    }

    /// Why the i-th part's report cannot be merged: it ran with other
    /// parameters than the first part's, so its figures are of another
    /// run. Each part's watchdog is its own (it counts its own points).
    fn refused(&self, i: usize) -> Option<String> {
        let mine = &self.records[i].as_ref()?.report.as_ref()?.params;
        let first = self.first_params()?;
        (!mine.same_run(first)).then(|| {
            format!(
                "ran with other parameters than the first part ({} against {})",
                mine.signature(),
                first.signature()
            )
        })
    }

    /// Why the i-th part's benchmarks are missing, when it failed or was
    /// refused.
    fn why_lost(&self, i: usize) -> String {
        let why = self.refused(i).unwrap_or_else(|| match &self.records[i] {
            Some(r) => r.message.clone().unwrap_or_else(|| r.status.to_string()),
            None => NOT_RUN.into(),
        });
        format!("lost with part {}/{}: {why}", i + 1, self.of())
    }
}

const NOT_RUN: &str = "not run: the command stopped before this part";

/// The run `index` of a kernel from its parts, `wall_s` from the first
/// part's start to the last one's end.
pub fn merge(index: usize, parts: &Parts, wall_s: f64) -> RunRecord {
    let mut part_records: Vec<PartRecord> = (0..parts.of()).map(|i| parts.part_record(i)).collect();
    for p in &mut part_records {
        p.boot.index = index;
    }
    let report = merge_reports(parts);
    let mut message = None;
    for (i, p) in part_records.iter().enumerate() {
        if let Some(why) = parts.refused(i) {
            append(&mut message, format!("part {}: {why}", p.part));
        }
    }
    for p in part_records
        .iter()
        .filter(|p| p.boot.status != BootStatus::Ok)
    {
        if let Some(m) = &p.boot.message {
            append(&mut message, format!("part {}: {m}", p.part));
        }
    }
    let lost: Vec<&str> = report.as_ref().map_or(Vec::new(), |r| {
        let lost = r.results.iter().filter(|b| is_lost(b));
        lost.map(|b| b.name.as_str()).collect()
    });
    if !lost.is_empty() {
        append(
            &mut message,
            format!("benchmarks lost: {}", lost.join(", ")),
        );
    }
    RunRecord {
        index,
        status: merged_status(&part_records, report.as_ref()),
        message,
        console_log: part_records
            .iter()
            .map(|p| p.boot.console_log.clone())
            .find(|l| !l.is_empty())
            .unwrap_or_default(),
        wall_s,
        boot_s: part_records
            .iter()
            .filter_map(|p| p.boot.boot_s)
            .reduce(f64::min),
        pairing: None,
        report,
        timeline: None,
        parts: part_records,
    }
}

/// A row that a failed part left: failed, and said so.
fn is_lost(b: &BenchResult) -> bool {
    b.status == Status::Failed
        && b.reason
            .as_deref()
            .is_some_and(|r| r.starts_with("lost with part"))
}

/// The run's status: the first part's that gave no complete report, else
/// failed where a part or a benchmark failed.
fn merged_status(parts: &[PartRecord], report: Option<&Report>) -> BootStatus {
    if let Some(p) = parts
        .iter()
        .find(|p| !matches!(p.boot.status, BootStatus::Ok | BootStatus::Failed))
    {
        return p.boot.status;
    }
    match report {
        Some(r) if r.all_ok() => BootStatus::Ok,
        _ => BootStatus::Failed,
    }
}

/// The parts' reports as one whole boot's: the first report's system,
/// tool and mounts, every part's capabilities, the parameters the guests
/// ran with (the longest watchdog of theirs), each benchmark's result
/// from the part that owns it (else from another that ran it) in table
/// order, and a failed row for each point that no part gave.
fn merge_reports(parts: &Parts) -> Option<Report> {
    let reports: Vec<Option<&Report>> = (0..parts.of()).map(|i| parts.report(i)).collect();
    let mut merged = reports.iter().flatten().next().copied()?.clone();
    for r in reports.iter().flatten().rev() {
        merged.capabilities.extend(r.capabilities.clone());
    }
    merged.harness = reports.iter().flatten().find_map(|r| r.harness.clone());
    let selection: Vec<&'static Bench> = all_of(parts.plan);
    let points = registry::points(
        &selection,
        &parts.whole.producers,
        &parts.whole.cmp_str_lens,
    );
    merged.params = Params::of_parts(reports.iter().flatten().map(|r| &r.params))?;
    merged.results = points
        .iter()
        .filter_map(|p| {
            let owner = parts
                .plan
                .owns
                .iter()
                .position(|o| o.iter().any(|b| b.name == p.bench.name))?;
            let from = |i: usize| {
                reports[i]?
                    .results
                    .iter()
                    .find(|b| b.name == p.name)
                    .cloned()
            };
            let found = from(owner).or_else(|| (0..reports.len()).find_map(from));
            Some(found.unwrap_or_else(|| {
                let mut lost = p.bench.result(&p.name, p.producers);
                lost.status = Status::Failed;
                lost.reason = Some(parts.why_lost(owner));
                lost
            }))
        })
        .collect();
    merged.outcome = merged_outcome(&reports, parts.of());
    Some(merged)
}

/// Every benchmark of the plan, in table order.
fn all_of(plan: &Plan) -> Vec<&'static Bench> {
    registry::all()
        .filter(|b| plan.owns.iter().flatten().any(|o| o.name == b.name))
        .collect()
}

/// Complete when every part's report is; else the first part's outcome
/// that is not, and which part.
fn merged_outcome(reports: &[Option<&Report>], of: usize) -> Outcome {
    for (i, r) in reports.iter().enumerate() {
        let (status, message) = match r {
            Some(r) if r.outcome.status == RunEnd::Complete => continue,
            Some(r) => (r.outcome.status, r.outcome.message.clone()),
            None => (RunEnd::Incomplete, Some("no report".to_string())),
        };
        let message = message.map_or_else(
            || format!("part {}/{of}", i + 1),
            |m| format!("part {}/{of}: {m}", i + 1),
        );
        return Outcome {
            status,
            message: Some(message),
        };
    }
    Outcome {
        status: RunEnd::Complete,
        message: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_guest::split::plan;
    use trig_schema::{Summary, Timeline};

    /// A part's record as a guest that ran `benches` would leave it, each
    /// rate the benchmark's name length.
    fn part_rec(benches: &[&'static Bench], status: BootStatus, complete: bool) -> RunRecord {
        guest_rec(benches, status, complete, &RunOptions::default())
    }

    /// A part's record whose guest ran with `ran`.
    fn guest_rec(
        benches: &[&'static Bench],
        status: BootStatus,
        complete: bool,
        ran: &RunOptions,
    ) -> RunRecord {
        let mut report = trig_guest::recorder::Recorder::new(
            trig_guest::recorder::Sink::Plain("/dev/null".into()),
            ran,
            benches.len(),
            vec![],
            false,
        )
        .report
        .lock()
        .unwrap()
        .clone();
        for p in registry::points(benches, &[1], &ran.cmp_str_lens) {
            let mut r = p.bench.result(&p.name, 1);
            r.summary = Some(Summary {
                mean: p.name.len() as f64,
                stddev: 0.0,
                per_producer: 0.0,
                cv: 0.0,
                samples: 1,
            });
            report.results.push(r);
        }
        report.outcome.status = if complete {
            RunEnd::Complete
        } else {
            RunEnd::Incomplete
        };
        RunRecord {
            index: 1,
            status,
            message: (!complete).then(|| "guest made no progress".into()),
            console_log: "log".into(),
            wall_s: 30.0,
            boot_s: Some(10.0),
            pairing: None,
            report: Some(report),
            timeline: Some(Timeline::default()),
            parts: Vec::new(),
        }
    }

    #[test]
    fn parts_merge_into_the_whole_boots_shape() {
        let whole = RunOptions::default();
        let sel = registry::select(&[]).unwrap();
        let plan = plan(&sel, &whole, 2);
        let records = plan
            .runs
            .iter()
            .map(|r| Some(part_rec(r, BootStatus::Ok, true)))
            .collect();
        let parts = Parts {
            plan: &plan,
            whole: &whole,
            records,
        };
        let run = merge(3, &parts, 40.0);
        let single = part_rec(&sel, BootStatus::Ok, true);
        let (got, want) = (
            run.report.as_ref().unwrap(),
            single.report.as_ref().unwrap(),
        );
        // every point once, in the whole boot's order, as the whole would record
        let names = |r: &Report| r.results.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(got), names(want));
        // the guests' parameters, with the longest watchdog of theirs
        let longest = plan
            .runs
            .iter()
            .map(|r| whole.params(r.len()).timeout_s)
            .max();
        assert_eq!(
            got.params,
            Params {
                timeout_s: longest.unwrap(),
                ..whole.params(1)
            }
        );
        assert_eq!(
            (run.status, run.index, run.wall_s, run.boot_s),
            (BootStatus::Ok, 3, 40.0, Some(10.0))
        );
        assert_eq!(run.parts.len(), 2);
        assert_eq!(run.parts[1].part, "2/2");
        assert!(run.parts[0].benchmarks.contains(&"trig-base".to_string()));
        assert_eq!(got.outcome.status, RunEnd::Complete);
        assert!(run.message.is_none());
    }

    #[test]
    fn a_failed_part_loses_only_its_own_and_says_why() {
        let whole = RunOptions::default();
        let sel = registry::select(&[]).unwrap();
        let plan = plan(&sel, &whole, 3);
        // part 2 hung after its first benchmark; part 3 never ran
        let hung = part_rec(&plan.runs[1][..1], BootStatus::Hung, false);
        let records = vec![
            Some(part_rec(&plan.runs[0], BootStatus::Ok, true)),
            Some(hung),
            None,
        ];
        let parts = Parts {
            plan: &plan,
            whole: &whole,
            records,
        };
        let run = merge(1, &parts, 50.0);
        assert_eq!(run.status, BootStatus::Hung);
        let report = run.report.as_ref().unwrap();
        assert_eq!(report.outcome.status, RunEnd::Incomplete);
        assert!(report
            .outcome
            .message
            .as_deref()
            .unwrap()
            .starts_with("part 2/3"));
        for b in &report.results {
            let owner = plan
                .owns
                .iter()
                .position(|o| o.iter().any(|x| x.name == b.bench))
                .unwrap();
            let kept = owner == 0 || (owner == 1 && plan.runs[1][0].name == b.bench);
            assert_eq!(b.status == Status::Ok, kept, "{}", b.name);
            if !kept {
                assert!(is_lost(b), "{}: {:?}", b.name, b.reason);
                let why = if owner == 1 {
                    "guest made no progress"
                } else {
                    NOT_RUN
                };
                assert!(b.reason.as_deref().unwrap().contains(why), "{:?}", b.reason);
            }
        }
        let message = run.message.unwrap();
        assert!(
            message.contains("part 3/3: not run") && message.contains("benchmarks lost: "),
            "{message}"
        );
        assert_eq!(run.parts[2].boot.status, BootStatus::Interrupted);
    }

    /// The icount meter's windows are the guests' (the host sets them as
    /// kernel arguments): the merged run records those, not the
    /// command line's defaults of 1 s and 5 s, and a part whose guest ran
    /// with other parameters is refused, its benchmarks lost and named.
    #[test]
    fn the_merged_run_records_what_its_guests_ran_and_refuses_a_stranger() {
        let whole = RunOptions::default();
        let guests = RunOptions {
            warmup: 0.02,
            duration: 0.1,
            min_counts: 10_000,
            ..RunOptions::default()
        };
        let sel = registry::select(&[]).unwrap();
        let plan = plan(&sel, &whole, 2);
        let merged = |second: &RunOptions| {
            let records = vec![
                Some(guest_rec(&plan.runs[0], BootStatus::Ok, true, &guests)),
                Some(guest_rec(&plan.runs[1], BootStatus::Ok, true, second)),
            ];
            let parts = Parts {
                plan: &plan,
                whole: &whole,
                records,
            };
            merge(1, &parts, 20.0)
        };
        let run = merged(&guests);
        let params = &run.report.as_ref().unwrap().params;
        assert_eq!(
            (params.warmup_s, params.duration_s, params.min_counts),
            (0.02, 0.1, 10_000)
        );
        assert_eq!(run.status, BootStatus::Ok);

        let stranger = RunOptions {
            duration: 0.2,
            ..guests.clone()
        };
        let run = merged(&stranger);
        assert_eq!(run.status, BootStatus::Failed);
        let report = run.report.as_ref().unwrap();
        assert_eq!(report.params.duration_s, 0.1);
        let message = run.message.unwrap();
        assert!(
            message.contains("part 2/2: ran with other parameters than the first part (warmup 0.02 s, duration 0.2 s"),
            "{message}"
        );
        for b in &report.results {
            let second = plan.owns[1].iter().any(|o| o.name == b.bench);
            assert_eq!(is_lost(b), second, "{}", b.name);
        }
    }
}
