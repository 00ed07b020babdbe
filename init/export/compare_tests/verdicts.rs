//! Verdicts: regressions, directions, edges, missing and failed
//! benchmarks, the tests for few boots and for paired ones, and what A/A
//! compares flag.

use super::*;

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
    // BASE measured it: NEW's kernel lost it, which the gate counts
    assert_eq!(verdict_of(&c, "trig-fentry"), Verdict::Missing);
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
fn too_few_boots_are_inconclusive_not_no_change() {
    // a doctored -20.0% on both of 2 paired rounds: no Wilcoxon p can
    // reach 0.05 with 2 pairs, so the result cannot be "no change"; with
    // two tests in the comparison a lone change must reach 0.025 after
    // the adjustment, which takes 7 pairs (2/2^7), not 6
    let base = side(set(&as_slices(&boots(2, 1.0, 0.0)), Some("s")));
    let new = side(set(&as_slices(&boots(2, 0.8, 0.0)), Some("s")));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    let k = c.benches.iter().find(|b| b.name == "trig-kprobe").unwrap();
    assert_eq!(k.verdict, Verdict::Inconclusive);
    assert_eq!(k.metrics[0].boots_needed, Some(7));
    let text = table::comparison(&c, false);
    assert!(text.contains("needs 7 boots"), "{text}");
    // unpaired, 2 against 2: Mann-Whitney needs 5 a side (4 at the raw 0.05)
    let s = Settings {
        unpaired: true,
        ..Settings::default()
    };
    let c = compare(&base, &new, &s).unwrap();
    let k = c.benches.iter().find(|b| b.name == "trig-kprobe").unwrap();
    assert_eq!(k.verdict, Verdict::Inconclusive);
    assert_eq!(k.metrics[0].boots_needed, Some(5));
    // one boot against three: no test at all
    let base = side(set(&as_slices(&boots(1, 1.0, 0.0)), None));
    let new = side(set(&as_slices(&boots(3, 0.8, 0.0)), None));
    let c = compare(&base, &new, &Settings::default()).unwrap();
    assert_eq!(verdict_of(&c, "trig-kprobe"), Verdict::Inconclusive);
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
            let h = pieces::header(&c).join("\n");
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
    trig_schema::stderrln!("A/A: {tests} tests, {flagged} flagged on q, {unadjusted} on the raw p");
    assert_eq!(tests, 20 * 90);
    assert!(flagged <= 1, "{flagged}");
    assert!(unadjusted > flagged, "{unadjusted}");
}
