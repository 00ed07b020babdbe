use super::*;
use crate::analysis::input::{parse, Side};
use crate::export::{email, json, markdown, parts, table};
use crate::report::*;
use crate::stats;
use std::collections::BTreeMap;

/// A results set of boots whose benchmarks ran at the given rates, with
/// trig-kprobe's overhead against trig-base filled in as the guest does.
fn set(rates: &[&[(&str, f64)]], session: Option<&str>) -> RunSet {
    let runs = rates
        .iter()
        .enumerate()
        .map(|(i, boot)| {
            let mut results: Vec<BenchResult> = boot
                .iter()
                .map(|(name, mean)| {
                    let mut r = BenchResult::new(name, name, "trigger", 1, Better::Higher);
                    // the baseline and attach kind a guest records (every
                    // benchmark named here was in schema 4's registry)
                    upgrade::fill(&mut r);
                    if *mean < 0.0 {
                        r.status = Status::Unsupported;
                        r.reason = Some("no kprobe_multi (EOPNOTSUPP)".into());
                    } else {
                        r.summary = Some(Summary {
                            mean: *mean,
                            stddev: 0.0,
                            per_producer: *mean,
                            cv: 0.0,
                            samples: 5,
                        });
                        r.samples = (0..5)
                            .map(|k| Sample {
                                t_s: k as f64,
                                interval_s: 1.0,
                                warmup: false,
                                bpf: 0,
                                user: 0,
                                mps: mean * (1.0 + 0.004 * (k as f64 - 2.0)),
                            })
                            .collect();
                    }
                    r
                })
                .collect();
            crate::report::add_overheads(&mut results);
            RunRecord {
                index: i + 1,
                status: BootStatus::Ok,
                message: None,
                console_log: String::new(),
                wall_s: 1.0,
                boot_s: None,
                pairing: session.map(|s| Pairing {
                    session: s.into(),
                    round: i + 1,
                }),
                report: Some(Report {
                    schema_version: SCHEMA_VERSION,
                    tool: Tool::this_build(),
                    system: System {
                        release: "6.1.0-test".into(),
                        version: String::new(),
                        machine: "x86_64".into(),
                        cmdline: String::new(),
                        cpus: 2,
                        pid1: true,
                        cpu: Some(Cpu {
                            model: "Intel Core Processor (Haswell, no TSX, IBRS)".into(),
                            flags: vec!["avx2".into(), "fpu".into()],
                            cpuid: Some("1.0:306c1,0,fffa3203,178bfbff".into()),
                        }),
                    },
                    capabilities: BTreeMap::new(),
                    params: Params::run_defaults(),
                    mounts: vec![],
                    results,
                    harness: None,
                    outcome: Outcome {
                        status: RunEnd::Complete,
                        message: None,
                    },
                }),
            }
        })
        .collect();
    RunSet {
        schema_version: SCHEMA_VERSION,
        created: None,
        kernel: KernelInfo {
            spec: "test".into(),
            path: String::new(),
            package: None,
            release: "6.1.0-test".into(),
            commit: None,
        },
        vm: VmInfo {
            meter: Default::default(),
            arch: "x86_64".into(),
            accel: "tcg".into(),
            cpus: 2,
            memory: "1G".into(),
            append: String::new(),
            qemu: Some("10.0.2".into()),
            machine: Some("pc-i440fx-10.0".into()),
            cpu: Some("Haswell-v4".into()),
        },
        runs,
    }
}

fn side(s: RunSet) -> Side {
    Side::of_file("test.json".as_ref(), vec![s])
}

/// Boots of trig-base and trig-kprobe with small boot-to-boot noise;
/// `scale` multiplies trig-kprobe's rate.
fn boots(n: usize, kprobe_scale: f64, drift: f64) -> Vec<Vec<(&'static str, f64)>> {
    let noise = [1.0, 1.012, 0.991, 1.006, 0.995, 1.009, 0.997, 1.003];
    (0..n)
        .map(|i| {
            let d = (1.0 + drift * i as f64) * noise[i % noise.len()];
            vec![
                ("trig-base", 2.0 * d),
                ("trig-kprobe", 0.8 * d * kprobe_scale),
                ("trig-kprobe-multi", -1.0),
            ]
        })
        .collect()
}

fn as_slices<'a>(b: &'a [Vec<(&'static str, f64)>]) -> Vec<&'a [(&'static str, f64)]> {
    b.iter().map(Vec::as_slice).collect()
}

fn verdict_of(c: &Comparison, name: &str) -> Verdict {
    c.benches.iter().find(|b| b.name == name).unwrap().verdict
}

#[test]
fn a_slowdown_is_regressed_and_nothing_else() {
    let base = side(set(&as_slices(&boots(5, 1.0, 0.0)), None));
    let new = side(set(&as_slices(&boots(5, 0.9, 0.0)), None));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Regressed);
    assert_eq!(verdict_of(&c, "trig-base"), Verdict::NoChange);
    assert_eq!(verdict_of(&c, "trig-kprobe-multi"), Verdict::Unsupported);
    let k = c.benches.iter().find(|b| b.name == "trig-kprobe").unwrap();
    let rate = &k.metrics[0];
    assert_eq!(rate.test, TestKind::MannWhitney);
    assert!((rate.change_pct + 10.0).abs() < 0.5, "{}", rate.change_pct);
    assert!(rate.ci_pct.0 <= rate.change_pct && rate.change_pct <= rate.ci_pct.1);
    // the overhead grows: regressed too, in the other direction
    assert_eq!(k.metrics[1].verdict, Verdict::Regressed);
    assert!(k.metrics[1].change_pct > 0.0);
    assert!(c.regressed());
    // the reverse is an improvement
    let c = compare(&new, &base, &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Improved);
    assert!(!c.regressed());
}

#[test]
fn direction_comes_from_the_result() {
    let mut base = set(&as_slices(&boots(5, 1.0, 0.0)), None);
    let mut new = set(&as_slices(&boots(5, 0.9, 0.0)), None);
    for r in base.runs.iter_mut().chain(new.runs.iter_mut()) {
        for b in &mut r.report.as_mut().unwrap().results {
            b.better = Better::Lower;
        }
    }
    let s = Settings {
        metrics: vec![Metric::Rate],
        ..Settings::default()
    };
    let c = compare(&side(base), &side(new), &s).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Improved);
}

#[test]
fn verdict_edges() {
    let l = Limits::of(Meter::Time, &Settings::default());
    let v = |change, ci, p, cv| verdict(change, ci, p, cv, Better::Higher, l, 0.05);
    assert_eq!(v(-3.0, (-4.0, -2.0), Some(0.01), 0.01), Verdict::Regressed);
    assert_eq!(
        v(-2.99, (-4.0, -2.0), Some(0.01), 0.01),
        Verdict::WithinNoise
    );
    assert_eq!(v(-10.0, (-12.0, -8.0), Some(0.05), 0.01), Verdict::NoChange);
    assert_eq!(v(-10.0, (-12.0, -8.0), None, 0.01), Verdict::NoChange);
    assert_eq!(v(5.0, (4.0, 6.0), Some(0.001), 0.01), Verdict::Improved);
    // noisy: unstable, unless the interval clears the threshold
    assert_eq!(v(-5.0, (-9.0, -1.0), Some(0.01), 0.11), Verdict::Unstable);
    assert_eq!(
        v(-20.0, (-25.0, -15.0), Some(0.01), 0.11),
        Verdict::Regressed
    );
    assert_eq!(v(0.0, (-1.0, 1.0), Some(0.9), 0.10), Verdict::NoChange);
}

#[test]
fn missing_unsupported_and_failed() {
    let base = set(
        &[&[("trig-base", 2.0), ("trig-tp", 1.0), ("trig-fentry", 1.0)]],
        None,
    );
    let mut new = set(&[&[("trig-base", 2.0), ("trig-fentry", -1.0)]], None);
    let r = &mut new.runs[0].report.as_mut().unwrap().results;
    r.push(BenchResult {
        status: Status::Failed,
        reason: Some("attach: EINVAL".into()),
        ..BenchResult::new("trig-rawtp", "trig-rawtp", "trigger", 1, Better::Higher)
    });
    let c = compare(&side(base), &side(new), &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-tp"), Verdict::Missing);
    assert_eq!(verdict_of(&c, "trig-rawtp"), Verdict::Missing);
    assert_eq!(verdict_of(&c, "trig-fentry"), Verdict::Unsupported);
    let b = c.benches.iter().find(|b| b.name == "trig-fentry").unwrap();
    assert!(b
        .reason
        .as_ref()
        .unwrap()
        .starts_with("NEW: no kprobe_multi"));
    // failed wins over missing and unsupported on a side that has both
    let base = set(&[&[("trig-base", 2.0)]], None);
    let mut new = set(&[&[]], None);
    new.runs[0]
        .report
        .as_mut()
        .unwrap()
        .results
        .push(BenchResult {
            status: Status::Timeout,
            ..BenchResult::new("trig-base", "trig-base", "trigger", 1, Better::Higher)
        });
    let c = compare(&side(base), &side(new), &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-base"), Verdict::Failed);
}

#[test]
fn single_boots_use_welch_on_seconds() {
    let base = side(set(&[&[("trig-base", 2.0)]], None));
    let new = side(set(&[&[("trig-base", 1.8)]], None));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    let m = &c.benches[0].metrics[0];
    assert_eq!(m.test, TestKind::WelchPerSecond);
    assert_eq!(c.benches[0].verdict, Verdict::Regressed);
    let out = table::comparison(&c, false);
    assert!(out.contains("regressed weak"), "{out}");
}

#[test]
fn pairing_cancels_drift() {
    // 8 interleaved rounds; the host drifts 4% a round (28% in all) and
    // the new kernel is 5% slower on trig-kprobe only
    let base = side(set(&as_slices(&boots(8, 1.0, 0.04)), Some("s1")));
    let new = side(set(&as_slices(&boots(8, 0.95, 0.04)), Some("s1")));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert!(c.paired);
    let k = c.benches.iter().find(|b| b.name == "trig-kprobe").unwrap();
    assert_eq!(k.metrics[0].test, TestKind::WilcoxonPaired);
    assert_eq!(k.metrics[0].pairs, 8);
    assert!((k.metrics[0].change_pct + 5.0).abs() < 0.1);
    assert_eq!(k.verdict, Verdict::Regressed);
    assert_eq!(verdict_of(&c, "trig-base"), Verdict::NoChange);
    // the same boots without pairing drown in the drift
    let unpaired = Settings {
        unpaired: true,
        ..Settings::default()
    };
    let c = compare(&base, &new, &unpaired).unwrap();
    assert!(!c.paired);
    let v = verdict_of(&c, "trig-kprobe");
    assert!(matches!(v, Verdict::NoChange | Verdict::Unstable), "{v:?}");
}

#[test]
fn incomparable_inputs_are_named() {
    let base = set(&as_slices(&boots(3, 1.0, 0.0)), None);
    let mut new = base.clone();
    new.vm.accel = "kvm".into();
    new.vm.arch = "aarch64".into();
    new.runs[0].report.as_mut().unwrap().params.duration_s = 2.0;
    let e = compare(
        &side(base.clone()),
        &side(new.clone()),
        &Settings::default(),
    )
    .unwrap_err();
    assert!(e.contains("accelerator: BASE tcg vs NEW kvm"), "{e}");
    assert!(
        e.contains("architecture: BASE x86_64 vs NEW aarch64"),
        "{e}"
    );
    assert!(e.contains("NEW mixes parameters"), "{e}");
    assert!(e.contains("--force"), "{e}");
    let forced = Settings {
        force: true,
        ..Settings::default()
    };
    let c = compare(&side(base), &side(new), &forced).unwrap();
    assert!(!c.differences.is_empty());
    assert!(markdown::comparison(&c).contains("WARNING (--force): accelerator"));
}

#[test]
fn an_injected_slowdown_does_not_make_results_incomparable() {
    let base = set(&as_slices(&boots(3, 1.0, 0.0)), None);
    let mut new = base.clone();
    new.runs[0].report.as_mut().unwrap().params.inject = Some("trig-kprobe:100".into());
    let c = compare(&side(base), &side(new), &Settings::default()).unwrap();
    assert_eq!(c.new.inject, vec!["trig-kprobe:100".to_string()]);
}

#[test]
fn formats_render() {
    let base = side(set(&as_slices(&boots(5, 1.0, 0.0)), None));
    let new = side(set(&as_slices(&boots(5, 0.9, 0.0)), None));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    let t = table::comparison(&c, true);
    assert!(t.contains("\x1b[1;31mtrig-kprobe"), "{t}");
    assert!(
        t.contains("3 benchmarks: 1 regressed, 1 no-change, 1 unsupported"),
        "{t}"
    );
    let md = markdown::comparison(&c);
    assert!(
        md.contains("| trig-kprobe |") && md.contains("**regressed**"),
        "{md}"
    );
    let v: serde_json::Value = serde_json::from_str(&json::comparison(&c)).unwrap();
    assert_eq!(v["benches"][1]["verdict"], "regressed");
}

#[test]
fn malformed_files_are_named() {
    let good = serde_json::to_string(&set(&[&[("trig-base", 2.0)]], None)).unwrap();
    assert!(parse(&good[..good.len() / 2])
        .unwrap_err()
        .starts_with("truncated JSON"));
    assert!(parse("{]").unwrap_err().starts_with("malformed JSON"));
    let e = parse(r#"{"runs": 3}"#).unwrap_err();
    assert!(e.starts_with("not a trig-init results file"), "{e}");
    let e = parse(r#"{"hello": 1}"#).unwrap_err();
    assert!(e.contains("neither `runs`"), "{e}");
    assert_eq!(parse(&good).unwrap().len(), 1);
    // a plain `trig-init run` report is one run
    let report = serde_json::to_string(
        set(&[&[("trig-base", 2.0)]], None).runs[0]
            .report
            .as_ref()
            .unwrap(),
    )
    .unwrap();
    let sets = parse(&report).unwrap();
    assert_eq!(sets[0].runs.len(), 1);
    assert_eq!(sets[0].vm.accel, "unknown");
}

/// Results written before schema 5 are read with the baseline and attach
/// kind that a guest records now, files and plain reports alike; a
/// schema-5 result stands as it was recorded.
#[test]
fn older_results_read_with_what_guests_record_now() {
    let mut old = set(&[&[("trig-base", 2.0), ("trig-kprobe", 0.8)]], None);
    let report = old.runs[0].report.as_mut().unwrap();
    report.schema_version = 4;
    for r in &mut report.results {
        (r.baseline, r.attach) = (None, None);
    }
    let plain = serde_json::to_string(report).unwrap();
    for sets in [parse(&serde_json::to_string(&old).unwrap()), parse(&plain)] {
        let r = &sets.unwrap()[0].runs[0].report.clone().unwrap().results[1];
        assert_eq!(r.baseline.as_deref(), Some("trig-base"));
        assert_eq!(r.attach.as_deref(), Some("kprobe"));
    }
    let mut new = set(&[&[("trig-kprobe", 0.8)]], None);
    new.runs[0].report.as_mut().unwrap().results[0].baseline = None;
    let sets = parse(&serde_json::to_string(&new).unwrap()).unwrap();
    assert_eq!(
        sets[0].runs[0].report.as_ref().unwrap().results[0].baseline,
        None
    );
}

#[test]
fn no_reports_is_an_error() {
    let mut s = set(&[&[("trig-base", 2.0)]], None);
    s.runs[0].report = None;
    let e = compare(
        &side(s.clone()),
        &side(set(&[&[("trig-base", 2.0)]], None)),
        &Settings::default(),
    )
    .unwrap_err();
    assert!(e.contains("BASE has no boot with a report"), "{e}");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn truncations_and_flips_of_a_valid_file_never_panic(cut in 0usize..4000, flip in 0usize..4000, byte in any::<u8>()) {
            let good = serde_json::to_string(&set(&[&[("trig-base", 2.0), ("trig-kprobe", 0.8)]], Some("s"))).unwrap();
            let mut b = good.into_bytes();
            let n = b.len();
            b[flip % n] = byte;
            b.truncate(cut % (n + 1));
            if let Ok(sets) = parse(&String::from_utf8_lossy(&b)) {
                let s = side(sets.into_iter().next().unwrap_or_else(|| set(&[], None)));
                let _ = compare(&s, &s, &Settings::default());
            }
        }

        #[test]
        fn extreme_figures_never_panic(figs in proptest::collection::vec(prop_oneof![
            Just(1e300), Just(f64::MAX), Just(5e-324), Just(f64::INFINITY), Just(f64::NAN),
            Just(0.0), 0.001f64..1e6,
        ], 2..9)) {
            let boots: Vec<Vec<(&str, f64)>> =
                figs.iter().map(|&x| vec![("trig-base", x), ("trig-kprobe", x / 3.0)]).collect();
            let (b, n) = boots.split_at(boots.len() / 2);
            for session in [None, Some("s")] {
                let (b, n) = (side(set(&as_slices(b), session)), side(set(&as_slices(n), session)));
                if let Ok(c) = compare(&b, &n, &Settings::default()) {
                    let _ = (table::comparison(&c, true), markdown::comparison(&c), email::comparison(&c), json::comparison(&c));
                }
            }
            let nights: Vec<_> = boots.iter().enumerate().map(|(i, boot)| {
                let point = crate::analysis::history::Point {
                    file: format!("n{i}.json"), created: None, release: "r".into(), commit: None,
                };
                (point, vec![set(&[boot.as_slice()], None)])
            }).collect();
            let h = crate::analysis::history::analyse(
                "h", nights, &[Metric::Rate, Metric::Overhead], &Default::default(), 3,
            );
            let _ = crate::analysis::history::render(&h, false);
        }
    }
}

#[test]
fn zero_and_negative_rates_are_invalid_input() {
    let good = serde_json::to_string(&set(&[&[("trig-base", 2.0)]], None)).unwrap();
    for bad in ["0.0", "-2.0"] {
        let e = parse(&good.replace("\"mean\":2.0", &format!("\"mean\":{bad}"))).unwrap_err();
        assert!(e.contains("invalid input: trig-base has rate"), "{e}");
    }
}

/// Sets as the icount meter gives them: every boot's figures equal to
/// within `aa` (a fraction), samples within 1e-5 of their mean.
fn counted(rates: &[&[(&str, f64)]], session: Option<&str>, aa: f64) -> RunSet {
    let mut s = set(rates, session);
    s.vm.meter = Meter::Icount;
    for (i, run) in s.runs.iter_mut().enumerate() {
        for r in &mut run.report.as_mut().unwrap().results {
            let wobble = 1.0 + aa * (i % 2) as f64;
            if let Some(sum) = r.summary.as_mut() {
                sum.mean *= wobble;
            }
            for (k, x) in r.samples.iter_mut().enumerate() {
                x.mps = r.summary.as_ref().unwrap().mean * (1.0 + 1e-5 * (k as f64 - 2.0));
            }
        }
        crate::report::add_overheads(&mut run.report.as_mut().unwrap().results);
    }
    s
}

#[test]
fn icount_decides_with_one_boot_a_side() {
    let base = side(counted(&as_slices(&boots(1, 1.0, 0.0)), None, 0.0));
    // one spin in trig-kprobe's loop: -0.9%, as measured on Debian 6.1
    let new = side(counted(&as_slices(&boots(1, 0.991, 0.0)), None, 0.0));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert_eq!(c.meter, Meter::Icount);
    assert_eq!(c.limits.threshold_pct, 5.0 * ICOUNT_AA_PCT);
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Regressed);
    assert_eq!(verdict_of(&c, "trig-base"), Verdict::NoChange);
    let k = c.benches.iter().find(|b| b.name == "trig-kprobe").unwrap();
    assert_eq!(k.metrics[0].test, TestKind::Counted);
    let text = table::comparison(&c, false);
    assert!(
        text.contains("M/Ginsn") && text.contains("insn/event"),
        "{text}"
    );
    assert!(text.contains("meter icount"), "{text}");
    assert!(!text.contains("ns/ev"), "{text}");
    // no p under icount: the headline leads with the instructions an
    // event gained (10^3 / M/Ginsn), the percentages beside them
    assert!(
        text.starts_with("+11.35 insn/event regression of trig-kprobe (rate \u{2212}0.90%, overhead +1.51%), 1250.0\u{2192}1261.4 insn/event, 1+1 boots, "),
        "{text}"
    );
    // and so does the table's change column
    let row = text.lines().find(|l| l.starts_with("trig-kprobe")).unwrap();
    assert!(row.contains("+11.35 (-0.900%)"), "{row}");
    assert!(!text.lines().any(|l| l.ends_with(" q  VERDICT")), "{text}");
}

#[test]
fn icount_a_a_within_the_bound_flags_nothing() {
    let b = boots(3, 1.0, 0.0);
    let flat: Vec<Vec<(&str, f64)>> = b
        .iter()
        .map(|boot| {
            boot.iter()
                .map(|&(n, _)| {
                    (
                        n,
                        if n == "trig-kprobe-multi" {
                            -1.0
                        } else if n == "trig-base" {
                            2.0
                        } else {
                            0.8
                        },
                    )
                })
                .collect()
        })
        .collect();
    let base = side(counted(&as_slices(&flat), None, ICOUNT_AA_PCT / 100.0));
    let new = side(counted(&as_slices(&flat), None, 0.0));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert!(
        c.benches
            .iter()
            .all(|b| matches!(b.verdict, Verdict::NoChange | Verdict::Unsupported)),
        "{}",
        table::comparison(&c, false)
    );
}

#[test]
fn icount_spread_beyond_the_limit_is_unstable() {
    let flat = vec![vec![("trig-base", 2.0), ("trig-kprobe", 0.8)]; 2];
    // boots 0.5% apart: not deterministic, and the change is small
    let base = side(counted(&as_slices(&flat), None, 0.005));
    let new = side(counted(&as_slices(&flat), None, 0.0));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Unstable);
}

#[test]
fn meters_are_never_mixed() {
    let base = side(set(&as_slices(&boots(1, 1.0, 0.0)), None));
    let new = side(counted(&as_slices(&boots(1, 1.0, 0.0)), None, 0.0));
    let e = compare(&base, &new, &Settings::default()).unwrap_err();
    assert!(e.contains("meter: BASE time vs NEW icount"), "{e}");
}

#[test]
fn too_few_boots_are_inconclusive_not_no_change() {
    // a doctored -20.0% on both of 2 paired rounds: no Wilcoxon p can
    // reach 0.05 with 2 pairs, so the result cannot be "no change"
    let base = side(set(&as_slices(&boots(2, 1.0, 0.0)), Some("s")));
    let new = side(set(&as_slices(&boots(2, 0.8, 0.0)), Some("s")));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    let k = c.benches.iter().find(|b| b.name == "trig-kprobe").unwrap();
    assert_eq!(k.verdict, Verdict::Inconclusive);
    assert_eq!(k.metrics[0].boots_needed, Some(6));
    let text = table::comparison(&c, false);
    assert!(text.contains("needs 6 boots"), "{text}");
    // unpaired, 2 against 2: Mann-Whitney needs 4 a side
    let s = Settings {
        unpaired: true,
        ..Settings::default()
    };
    let c = compare(&base, &new, &s).unwrap();
    let k = c.benches.iter().find(|b| b.name == "trig-kprobe").unwrap();
    assert_eq!(k.verdict, Verdict::Inconclusive);
    assert_eq!(k.metrics[0].boots_needed, Some(4));
    // one boot against three: no test at all
    let base = side(set(&as_slices(&boots(1, 1.0, 0.0)), None));
    let new = side(set(&as_slices(&boots(3, 0.8, 0.0)), None));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Inconclusive);
}

#[test]
fn reasons_are_cut_between_words() {
    let base = set(&[&[("trig-base", 2.0), ("trig-kprobe-multi", -1.0)]], None);
    let mut new = base.clone();
    new.runs[0].report.as_mut().unwrap().results[1].reason =
        Some("needs kprobe_multi (5.18+, CONFIG_FPROBE, not found by the probe): attach: failed to attach".into());
    let c = compare(&side(base), &side(new), &Settings::default()).unwrap();
    let text = table::comparison(&c, false);
    // folded into one line per reason, which keeps what the kernel lacks
    // and drops libbpf's detail
    let line = text
        .lines()
        .find(|l| l.starts_with("unsupported (1): "))
        .unwrap();
    assert_eq!(
        line,
        "unsupported (1): BASE: no kprobe_multi (EOPNOTSUPP); \
         NEW: needs kprobe_multi (5.18+, CONFIG_FPROBE, not found by the probe): trig-kprobe-multi"
    );
}

/// A regressed comparison whose sides name their commits.
fn regressed_between_commits() -> Comparison {
    let mut base = set(&as_slices(&boots(5, 1.0, 0.0)), None);
    let mut new = set(&as_slices(&boots(5, 0.9, 0.0)), None);
    base.kernel.commit = Some("2f22765d1234abcd".into());
    new.kernel.commit = Some("6b1f5330abcd1234".into());
    compare(&side(base), &side(new), &Settings::default()).unwrap()
}

#[test]
fn markdown_of_a_regression_opens_with_its_headline() {
    let c = regressed_between_commits();
    let md = markdown::comparison(&c);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[..2], ["### trig-init compare", ""], "{md}");
    assert!(
        lines[2].starts_with("**\u{2212}10.")
            && lines[2].contains("% regression of trig-kprobe rate, 0.800\u{2192}0.720 M/s, q=")
            && lines[2].ends_with(", 5+5 boots, 2f22765d\u{2192}6b1f5330**"),
        "{md}"
    );
    // the flagged row before the fold, the rest inside it
    let (row, fold) = (
        md.find("| trig-kprobe |").unwrap(),
        md.find("<details>").unwrap(),
    );
    assert!(
        row < fold && md.find("| trig-base |").unwrap() > fold,
        "{md}"
    );
    assert!(
        md.contains("<summary>1 other benchmark: 1 no-change</summary>")
            && md.contains("\n- unsupported (1): "),
        "{md}"
    );
    // the table opens with it too, and lists the flagged row first
    let t = table::comparison(&c, false);
    assert!(t.starts_with("\u{2212}10."), "{t}");
    let first_row = t.lines().find(|l| l.starts_with("trig-")).unwrap();
    assert!(first_row.starts_with("trig-kprobe "), "{t}");
}

#[test]
fn email_is_plain_text_within_72_columns() {
    let c = regressed_between_commits();
    let mail = crate::export::for_comparison("email", true)
        .unwrap()
        .export(&c);
    assert!(mail.lines().all(|l| l.chars().count() <= 72), "{mail}");
    assert!(!mail.contains('\x1b') && !mail.contains("**") && !mail.contains('|'));
    assert!(mail.starts_with("\u{2212}10."), "{mail}");
    let rows: Vec<&str> = mail
        .lines()
        .skip_while(|l| *l != "regressed:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 2, "{mail}");
    assert!(rows[0].starts_with("trig-kprobe  rate"), "{mail}");
    assert!(mail.contains("\n3 benchmarks: 1 regressed, 1 no-change, 1 unsupported\nBASE:"));
}

#[test]
fn json_carries_version_units_and_counts() {
    let c = regressed_between_commits();
    let v: serde_json::Value = serde_json::from_str(&json::comparison(&c)).unwrap();
    assert_eq!(v["schema_version"], json::JSON_SCHEMA_VERSION);
    assert_eq!(v["units"]["rate"], "M/s");
    assert_eq!(v["units"]["cost"], "ns/event");
    assert_eq!(v["counts"]["regressed"], 1);
    assert_eq!(v["counts"]["no-change"], 1);
    assert_eq!(v["counts"]["failed"], 0);
    // the raw p is kept beside the q decided on
    let rate = &v["benches"][1]["metrics"][0];
    assert!(rate["q"].as_f64().unwrap() >= rate["p"].as_f64().unwrap());
}

fn normal(rng: &mut fastrand::Rng) -> f64 {
    stats::box_muller(1.0 - rng.f64(), rng.f64())
}

/// One side of an A/A compare: 45 benchmarks, each boot's rate and cost
/// drawn around the same truth with 5% noise, as TCG's quieter hours.
fn noisy_matrix(rng: &mut fastrand::Rng, boots: usize) -> RunSet {
    let names: Vec<String> = (0..45).map(|i| format!("bench-{i:02}")).collect();
    let rates: Vec<Vec<(&str, f64)>> = (0..boots)
        .map(|_| {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_str(), (1.0 + i as f64) * (1.0 + 0.05 * normal(rng))))
                .collect()
        })
        .collect();
    let mut s = set(&rates.iter().map(Vec::as_slice).collect::<Vec<_>>(), None);
    for run in &mut s.runs {
        for r in &mut run.report.as_mut().unwrap().results {
            r.overhead_ns = Some(Overhead {
                baseline: "bench-base".into(),
                ns_per_event: 100.0 * (1.0 + 0.05 * normal(rng)),
            });
        }
    }
    s
}

#[test]
fn twenty_a_a_compares_flag_at_most_one_benchmark() {
    let mut rng = fastrand::Rng::with_seed(16);
    let (mut flagged, mut unadjusted, mut tests) = (0, 0, 0);
    let l = Limits::of(Meter::Time, &Settings::default());
    for round in 0..20 {
        let base = side(noisy_matrix(&mut rng, 6));
        let new = side(noisy_matrix(&mut rng, 6));
        let c = compare(&base, &new, &Settings::default()).unwrap();
        if round == 0 {
            // 2 / C(12, 6) is above 0.05 / 90: the header says what would do
            let h = parts::header(&c).join("\n");
            assert!(h.contains("across 90 tests"), "{h}");
            assert!(h.contains("p < 0.00056, which takes 8 boots a side"), "{h}");
        }
        flagged += c.count(Verdict::Regressed) + c.count(Verdict::Improved);
        tests += c.benches.iter().flat_map(|b| &b.metrics).count();
        // what the raw p would have flagged
        unadjusted += c
            .benches
            .iter()
            .filter(|b| {
                b.metrics.iter().any(|m| {
                    let v = verdict(m.change_pct, m.ci_pct, m.p, m.noise_cv, m.better, l, 0.05);
                    matches!(v, Verdict::Regressed | Verdict::Improved)
                })
            })
            .count();
    }
    eprintln!("A/A: {tests} tests, {flagged} flagged on q, {unadjusted} on the raw p");
    assert_eq!(tests, 20 * 90);
    assert!(flagged <= 1, "{flagged}");
    assert!(unadjusted > flagged, "{unadjusted}");
}

#[test]
fn icount_judges_the_uprobe_family_at_the_common_threshold() {
    let boot = |uprobe: f64, kprobe: f64| {
        vec![vec![
            ("trig-base", 2.0),
            ("trig-kprobe", kprobe),
            ("trig-usermode-count", 160.0),
            ("trig-uprobe-nop", uprobe),
        ]]
    };
    let base = side(counted(&as_slices(&boot(0.9276, 0.8)), None, 0.0));
    // one spin injected into trig-uprobe-nop's loop (7 instructions an
    // event): -0.64% on a real boot, judged no-change under the old 5%
    // floor (docs/compare.md, "The uprobe family's threshold")
    let new = side(counted(
        &as_slices(&boot(0.9276 * (1.0 - 0.0064), 0.8)),
        None,
        0.0,
    ));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-uprobe-nop"), Verdict::Regressed);
    let m = &c
        .benches
        .iter()
        .find(|b| b.name == "trig-uprobe-nop")
        .unwrap()
        .metrics[0];
    assert_eq!(m.threshold_pct, c.limits.threshold_pct);
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::NoChange);
}

/// Two runners with different emulated machines count differently: under
/// icount compare names the field and both values, and --force still
/// compares; the time meter, whose figures carry the host's noise anyway,
/// lets them through.
#[test]
fn icount_refuses_another_emulated_machine() {
    let base = counted(&as_slices(&boots(1, 1.0, 0.0)), None, 0.0);
    type Case = (&'static str, fn(&mut RunSet));
    let cases: [Case; 4] = [
        ("QEMU version: BASE 10.0.2 vs NEW 9.2.1", |s| {
            s.vm.qemu = Some("9.2.1".into())
        }),
        ("CPU model: BASE Haswell-v4 vs NEW max", |s| {
            s.vm.cpu = Some("max".into())
        }),
        ("machine type: BASE pc-i440fx-10.0 vs NEW unrecorded", |s| {
            s.vm.machine = None
        }),
        (
            "CPU features (CPUID): BASE 1.0:306c1,0,fffa3203,178bfbff vs NEW 1.0:1",
            |s| {
                let r = s.runs[0].report.as_mut().unwrap();
                r.system.cpu.as_mut().unwrap().cpuid = Some("1.0:1".into())
            },
        ),
    ];
    for (message, change) in cases {
        let mut new = base.clone();
        change(&mut new);
        let e = compare(
            &side(base.clone()),
            &side(new.clone()),
            &Settings::default(),
        )
        .unwrap_err();
        assert!(e.contains(message), "{e}");
        let forced = Settings {
            force: true,
            ..Settings::default()
        };
        assert!(compare(&side(base.clone()), &side(new.clone()), &forced).is_ok());
        let (mut timed_base, mut timed_new) = (base.clone(), new);
        timed_base.vm.meter = Meter::Time;
        timed_new.vm.meter = Meter::Time;
        assert!(compare(&side(timed_base), &side(timed_new), &Settings::default()).is_ok());
    }
}

#[test]
fn icount_refuses_another_build_of_trig_init() {
    let base = counted(&as_slices(&boots(1, 1.0, 0.0)), None, 0.0);
    let mut new = base.clone();
    new.runs[0].report.as_mut().unwrap().tool.git_rev = "0123abc".into();
    let e = compare(&side(base), &side(new), &Settings::default()).unwrap_err();
    assert!(e.contains("trig-init build"), "{e}");
}

/// Two trig-init builds, the new one with a spin in trig-kprobe's
/// producer loop (issue 26; kernel figures as measured on Debian 6.12,
/// docs/profile.md): the rate moves and is refused without --force; the
/// kernel's instructions per event agree within 0.01, and compare on them
/// says no-change without it.
#[test]
fn the_kernel_metric_compares_across_trig_init_builds() {
    let profiled = |kprobe_scale: f64, kernel: f64, rev: &str| {
        let mut s = counted(&as_slices(&boots(1, kprobe_scale, 0.0)), None, 0.0);
        for run in &mut s.runs {
            let rep = run.report.as_mut().unwrap();
            rep.tool.git_rev = rev.into();
            for r in rep.results.iter_mut().filter(|r| r.summary.is_some()) {
                let kernel = if r.name == "trig-kprobe" {
                    kernel
                } else {
                    316.0
                };
                let total = 1e3 / r.summary.as_ref().unwrap().mean;
                r.profile = Some(Profile {
                    total,
                    kernel,
                    functions: Vec::new(),
                });
            }
        }
        side(s)
    };
    let base = profiled(1.0, 653.6157, "aaaa");
    let new = profiled(0.99115, 653.6193, "bbbb");
    let e = compare(&base, &new, &Settings::default()).unwrap_err();
    assert!(e.contains("trig-init build"), "{e}");
    let kernel = Settings {
        metrics: vec![Metric::Kernel],
        ..Settings::default()
    };
    let c = compare(&base, &new, &kernel).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::NoChange);
    assert_eq!(verdict_of(&c, "trig-base"), Verdict::NoChange);
    let m = &c
        .benches
        .iter()
        .find(|b| b.name == "trig-kprobe")
        .unwrap()
        .metrics[0];
    assert_eq!(m.metric, Metric::Kernel);
    assert!((m.new.median - m.base.median).abs() < 0.01, "{m:?}");
    assert!(table::comparison(&c, false).contains("kernel insn/event"));
    // the rate still differs: --force shows the spin
    let forced = Settings {
        force: true,
        ..Settings::default()
    };
    let c = compare(&base, &new, &forced).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Regressed);
}

/// Issue 27's own-tree change (three volatile increments in
/// trace_call_bpf, +23 instructions on every event through it): under
/// icount the headline leads with the instructions, names both kernels
/// though their releases read alike, and ends with the top mover.
#[test]
fn the_icount_headline_leads_with_instructions_and_the_top_mover() {
    let profiled = |kprobe_scale: f64, tcb: f64, path: &str| {
        let mut s = counted(&as_slices(&boots(1, kprobe_scale, 0.0)), None, 0.0);
        s.kernel.spec = path.into();
        s.kernel.release = "6.1.192+".into();
        for run in &mut s.runs {
            let rep = run.report.as_mut().unwrap();
            for r in rep.results.iter_mut().filter(|r| r.summary.is_some()) {
                let total = 1e3 / r.summary.as_ref().unwrap().mean;
                let kprobe = r.name == "trig-kprobe";
                r.profile = Some(Profile {
                    total,
                    kernel: total - 20.0,
                    functions: vec![FunctionCost {
                        name: "trace_call_bpf".into(),
                        insn: if kprobe { tcb } else { 0.0 },
                    }],
                });
            }
        }
        side(s)
    };
    // 1250 -> 1273 instructions per event
    let base = profiled(1.0, 10.0, "/src/linux/build-base/vmlinux");
    let new = profiled(1250.0 / 1273.0, 33.0, "/src/linux/build-new/vmlinux");
    let c = compare(&base, &new, &Settings::default()).unwrap();
    let head = &parts::headlines(&c)[0];
    assert!(
        head.starts_with("+23.00 insn/event regression of trig-kprobe (rate \u{2212}1.81%"),
        "{head}"
    );
    assert!(
        head.contains("1250.0\u{2192}1273.0 insn/event")
            && head.contains("6.1.192+ (build-base/vmlinux)\u{2192}6.1.192+ (build-new/vmlinux)")
            && head.ends_with("; top mover trace_call_bpf +23.00"),
        "{head}"
    );
}
