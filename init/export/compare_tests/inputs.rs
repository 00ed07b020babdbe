//! Reading results: malformed files, files without a report, invalid
//! rates, older schemas, and fuzzing the reader.

use super::*;

#[test]
fn malformed_files_are_named() {
    let good = serde_json::to_string(&set(&[&[("trig-base", 2.0)]], None)).unwrap();
    assert!(parse(&good[..good.len() / 2])
        .unwrap_err()
        .message
        .starts_with("truncated JSON"));
    assert!(parse("{]")
        .unwrap_err()
        .message
        .starts_with("malformed JSON"));
    let e = parse(r#"{"runs": 3}"#).unwrap_err();
    assert!(e.message.starts_with("not a trig-init results file"), "{e}");
    let e = parse(r#"{"hello": 1}"#).unwrap_err();
    assert!(e.message.contains("neither `runs`"), "{e}");
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
    assert!(e.message.contains("BASE has no boot with a report"), "{e}");
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
                let point = trig_analysis::history::Point {
                    file: format!("n{i}.json"), created: None, release: "r".into(), commit: None,
                };
                (point, vec![set(&[boot.as_slice()], None)])
            }).collect();
            let h = trig_analysis::history::analyse(
                "h", nights, &[Metric::Rate, Metric::Overhead], &Default::default(), 3,
            );
            let _ = crate::people::history_table::render(&h, false);
        }
    }
}

#[test]
fn zero_and_negative_rates_are_invalid_input() {
    let good = serde_json::to_string(&set(&[&[("trig-base", 2.0)]], None)).unwrap();
    for bad in ["0.0", "-2.0"] {
        let e = parse(&good.replace("\"mean\":2.0", &format!("\"mean\":{bad}"))).unwrap_err();
        assert!(
            e.message.contains("invalid input: trig-base has rate"),
            "{e}"
        );
    }
}

/// An instruction count below zero is no measurement either: a kernel
/// count of -5 insn/event read as a figure that has no ratio and was
/// judged `no-change` against 512.
#[test]
fn negative_instruction_counts_are_invalid_input() {
    for (total, kernel) in [(500.0, -5.0), (-1.0, 400.0)] {
        let mut s = set(&[&[("trig-base", 2.0)]], None);
        s.runs[0].report.as_mut().unwrap().results[0].profile = Some(Profile {
            total,
            kernel,
            functions: Vec::new(),
            entries: None,
            memory: None,
            contention: None,
            source: None,
        });
        let e = parse(&serde_json::to_string(&s).unwrap()).unwrap_err();
        assert!(
            e.message.contains("invalid input: trig-base has")
                && e.message.contains("instructions"),
            "{e}"
        );
    }
}

/// A hand-edited field of the wrong type is named with its line in the
/// file, in results files and plain reports alike: "invalid type:
/// integer `5`, expected a string" alone left a 40 KB file to search.
#[test]
fn a_field_of_the_wrong_type_is_named_with_its_line() {
    let s = set(&[&[("trig-base", 2.0), ("trig-kprobe", 0.8)]], None);
    let report = s.runs[0].report.clone().unwrap();
    for good in [
        serde_json::to_string_pretty(&s).unwrap(),
        serde_json::to_string_pretty(&vec![s]).unwrap(),
        serde_json::to_string_pretty(&report).unwrap(),
    ] {
        let bad = good.replace("\"baseline\": \"trig-base\"", "\"baseline\": 5");
        let line = bad.lines().position(|l| l.contains("\"baseline\": 5"));
        let e = parse(&bad).unwrap_err();
        assert!(
            e.message.contains("expected a string")
                && e.message.contains(&format!("line {}", line.unwrap() + 1)),
            "{e}"
        );
    }
}
