//! The parameters of split runs written before schema 7. `vm --split`
//! (the default where the host has several cores) merged its parts'
//! reports under the command line's parameters, not the ones its guests
//! ran with: under the icount meter the guests' windows are 0.02 s and
//! 0.1 s lengthened to 10,000 counts, and `-p N` pins the producers, while
//! the file said 1 s, 5 s, no lengthening and the affinity as given. The
//! parts' console logs, kept beside the results file, hold what each
//! guest reported: the run's parameters are read back from them, or the
//! file is refused with why. Never compared as it stands.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use trig_schema::error::{self, Error};
use trig_schema::frame::{self, HEADER, REPORT};
use trig_schema::{Meter, Params, RunRecord, RunSet};

/// The first schema whose split runs record their guests' parameters.
const GUESTS_PARAMS_SINCE: u32 = 7;

/// What a framed report holds that this needs.
#[derive(Deserialize)]
struct Reported {
    params: Params,
}

/// Gives every split icount run of `sets`, read from `file`, written
/// before schema 7, the parameters its guests reported on their consoles.
pub fn mend(file: &Path, sets: &mut [RunSet]) -> Result<(), Error> {
    for set in sets
        .iter_mut()
        .filter(|s| s.schema_version < GUESTS_PARAMS_SINCE && s.vm.meter == Meter::Icount)
    {
        for run in set.runs.iter_mut().filter(|r| r.parts.len() > 1) {
            mend_run(file, run).map_err(|why| {
                error::input(format!(
                    "boot {} was split over {} boots by a trig-init before schema {GUESTS_PARAMS_SINCE}, \
                     which recorded the command line's parameters instead of its guests'; {why}: \
                     what ran cannot be told (run it again)",
                    run.index,
                    run.parts.len()
                ))
            })?;
        }
    }
    Ok(())
}

fn mend_run(file: &Path, run: &mut RunRecord) -> Result<(), String> {
    let Some(report) = run.report.as_mut() else {
        return Ok(());
    };
    let mut reported: Vec<(String, Params)> = Vec::new();
    for part in &run.parts {
        // a part that never ran left no log
        if part.boot.console_log.is_empty() {
            continue;
        }
        let log = located(file, &part.boot.console_log);
        let text = std::fs::read(&log)
            .map_err(|e| format!("part {}'s console log {}: {e}", part.part, log.display()))?;
        if let Some(params) = last_params(&String::from_utf8_lossy(&text)) {
            reported.push((part.part.clone(), params));
        }
    }
    let Some((first_part, first)) = reported.first() else {
        return Err("no part's console log holds a report".into());
    };
    if let Some((part, other)) = reported.iter().find(|(_, p)| !p.same_run(first)) {
        return Err(format!(
            "its parts ran with different parameters (part {part}: {}; part {first_part}: {})",
            other.signature(),
            first.signature()
        ));
    }
    if let Some(params) = Params::of_parts(reported.iter().map(|(_, p)| p)) {
        report.params = params;
    }
    Ok(())
}

/// A console log's path as recorded (relative to where `vm` ran), else
/// its name beside the results file (a results directory moved or copied
/// whole).
fn located(file: &Path, log: &str) -> PathBuf {
    let recorded = PathBuf::from(log);
    if recorded.exists() {
        return recorded;
    }
    match (file.parent(), recorded.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => recorded,
    }
}

/// The parameters of the last report, or header, a console log holds.
fn last_params(log: &str) -> Option<Params> {
    let (frames, _) = frame::parse(log);
    frames
        .iter()
        .rev()
        .filter(|f| f.kind == REPORT || f.kind == HEADER)
        .find_map(|f| serde_json::from_str::<Reported>(&f.payload).ok())
        .map(|r| r.params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::load_file;

    /// A schema-6 results file of a run split over two boots under the
    /// icount meter, its merged report saying 1 s and 5 s, each part's
    /// log beside it (None: not written) saying what its guest ran.
    fn legacy(dir: &Path, logs: [Option<(f64, f64)>; 2]) -> PathBuf {
        let params = logs.map(|log| {
            log.map(|(warmup_s, duration_s)| Params {
                warmup_s,
                duration_s,
                min_counts: 10_000,
                ..Params::run_defaults()
            })
        });
        legacy_of(dir, &params)
    }

    /// The same of any number of parts, each log holding `params` (each
    /// part's watchdog its own: 60 s and its index).
    fn legacy_of(dir: &Path, logs: &[Option<Params>]) -> PathBuf {
        let mut parts = Vec::new();
        for (i, log) in logs.iter().enumerate() {
            let path = dir.join(format!("r.boot1.part{}.log", i + 1));
            let _ = std::fs::remove_file(&path);
            if let Some(params) = log {
                let params = Params {
                    timeout_s: 60 + i as u32,
                    ..params.clone()
                };
                let report = serde_json::json!({ "params": params }).to_string();
                let mut text = String::from("[    0.000000] Linux version 6.1\n");
                for line in frame::encode(REPORT, &report) {
                    text.push_str(&line);
                    text.push('\n');
                }
                std::fs::write(&path, text).unwrap();
            }
            parts.push(serde_json::json!({
                "part": format!("{}/{}", i + 1, logs.len()),
                "benchmarks": [],
                "boot": {"index": 1, "status": "ok", "console_log": path.display().to_string(),
                         "wall_s": 1.0, "report": null},
            }));
        }
        let mut doc = crate::fixtures::icount_results(&[("trig-base", 3.0)], None);
        doc["schema_version"] = 6.into();
        doc["runs"][0]["parts"] = parts.into();
        let file = dir.join("r.json");
        std::fs::write(&file, doc.to_string()).unwrap();
        file
    }

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("trig-split-params-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_legacy_split_run_is_read_with_its_guests_parameters() {
        let d = dir("mended");
        let file = legacy(&d, [Some((0.02, 0.1)), Some((0.02, 0.1))]);
        let sets = load_file(&file).unwrap();
        let params = &sets[0].runs[0].report.as_ref().unwrap().params;
        assert_eq!(
            (
                params.warmup_s,
                params.duration_s,
                params.min_counts,
                params.timeout_s
            ),
            (0.02, 0.1, 10_000, 61)
        );
        // a results directory moved whole: the logs found beside it
        let moved = dir("moved");
        for f in ["r.json", "r.boot1.part1.log", "r.boot1.part2.log"] {
            std::fs::rename(d.join(f), moved.join(f)).unwrap();
        }
        let sets = load_file(&moved.join("r.json")).unwrap();
        assert_eq!(
            sets[0].runs[0].report.as_ref().unwrap().params.duration_s,
            0.1
        );
    }

    #[test]
    fn a_legacy_split_run_whose_logs_cannot_tell_is_refused() {
        for (name, logs, why) in [
            ("gone", [Some((0.02, 0.1)), None], "part 2/2's console log"),
            (
                "differ",
                [Some((0.02, 0.1)), Some((1.0, 5.0))],
                "ran with different parameters",
            ),
        ] {
            let d = dir(name);
            let file = legacy(&d, logs);
            let e = load_file(&file).unwrap_err().to_string();
            assert!(
                e.contains("split over 2 boots by a trig-init before schema 7") && e.contains(why),
                "{e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        /// What a part's guest may have reported: the icount meter's
        /// windows or the command line's, lengthened or not, pinned or
        /// not; or no log at all.
        fn reported() -> impl Strategy<Value = Option<Params>> {
            let params = (
                prop::sample::select(vec![0.02, 1.0]),
                prop::sample::select(vec![0.1, 5.0]),
                prop::sample::select(vec![0u32, 10_000]),
                any::<bool>(),
            )
                .prop_map(|(warmup_s, duration_s, min_counts, affinity)| Params {
                    warmup_s,
                    duration_s,
                    min_counts,
                    affinity,
                    ..Params::run_defaults()
                });
            prop_oneof![8 => params.prop_map(Some), 1 => Just(None)]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(60))]

            /// A legacy split run, forged: read with its guests' parameters
            /// exactly when every part's log is there and they agree (the
            /// longest watchdog of theirs), else refused in one line.
            #[test]
            fn a_forged_legacy_split_run_is_mended_or_refused(
                logs in proptest::collection::vec(reported(), 2..5)
            ) {
                let d = dir("generated");
                let file = legacy_of(&d, &logs);
                let all: Option<Vec<&Params>> = logs.iter().map(Option::as_ref).collect();
                let agree = all.as_ref().is_some_and(|a| {
                    a.iter().all(|p| Params { timeout_s: 0, ..(*p).clone() } == Params { timeout_s: 0, ..a[0].clone() })
                });
                match load_file(&file) {
                    Ok(sets) => {
                        prop_assert!(agree, "{logs:?}");
                        let got = &sets[0].runs[0].report.as_ref().unwrap().params;
                        let want = Params {
                            timeout_s: 60 + logs.len() as u32 - 1,
                            ..logs[0].clone().unwrap()
                        };
                        prop_assert_eq!(got, &want);
                    }
                    Err(e) => {
                        prop_assert!(!agree, "{e}");
                        prop_assert!(!e.message.contains('\n'), "{e}");
                    }
                }
            }
        }
    }
}
