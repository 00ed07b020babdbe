//! The formats for people: table, markdown, email and JSON, their
//! headlines and the reasons they cut.

use super::*;

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
    let mail = crate::ComparisonFormat::Email.exporter(true).export(&c);
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
                        calls: 0.0,
                        memory: None,
                        coherence: None,
                        lines: Vec::new(),
                    }],
                    entries: None,
                    memory: None,
                    contention: None,
                    source: None,
                });
            }
        }
        side(s)
    };
    // 1250 -> 1273 instructions per event
    let base = profiled(1.0, 10.0, "/src/linux/build-base/vmlinux");
    let new = profiled(1250.0 / 1273.0, 33.0, "/src/linux/build-new/vmlinux");
    let c = compare(&base, &new, &Settings::default()).unwrap();
    let head = &pieces::headlines(&c)[0];
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
