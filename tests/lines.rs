//! The source lines of `--profile` through the binary: profiled results
//! whose lines name a file, as the kernel's DWARF could (anyone's text),
//! through compare's formats and `profile --lines`; results without
//! lines say why (docs/profile.md, "Source lines").

mod common;
mod synth;

use serde_json::{json, Value};
use std::path::Path;

/// A DWARF file name that would act on a terminal (Markdown shows the
/// movers in a fence no line can close: md::code).
const HOSTILE: &str = "fs/\u{1b}[2J<img src=x>\rexec.c";

/// Profiles every result of the results file at `path`: one function,
/// whose lines are `lines` (none: profiled before lines were resolved).
fn profile(path: &Path, lines: Option<&[(u32, f64)]>) {
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ls: Vec<Value> = lines
        .unwrap_or_default()
        .iter()
        .map(|&(line, insn)| json!({"file": HOSTILE, "line": line, "insn": insn}))
        .collect();
    let insn: f64 = lines.unwrap_or(&[(0, 20.0)]).iter().map(|l| l.1).sum();
    for run in doc["runs"].as_array_mut().unwrap() {
        for r in run["report"]["results"].as_array_mut().unwrap() {
            let mut p = json!({
                "total": 1000.0, "kernel": insn,
                "functions": [{"name": "__set_task_comm", "insn": insn, "calls": 1.0, "lines": ls}],
            });
            if lines.is_some() {
                p["source"] = json!({"debuginfo": "vmlinux"});
            }
            r["profile"] = p;
        }
    }
    std::fs::write(path, doc.to_string()).unwrap();
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("trig-lines-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `profile --lines ARGS BASE NEW`.
fn profile_lines(args: &[&str], base: &Path, new: &Path) -> common::Ran {
    let mut all = vec!["profile", "--lines"];
    all.extend(args);
    all.extend([base.to_str().unwrap(), new.to_str().unwrap()]);
    common::bounded(20, &all)
}

#[test]
fn a_moved_line_is_named_under_its_function_and_shown_escaped() {
    let dir = scratch("moved");
    let (base, new) = synth::regressed_pair(&dir);
    profile(&base, Some(&[(10, 7.0), (11, 2.0)]));
    // a line planted at 11 pushes the old 11 to 12
    profile(&new, Some(&[(10, 7.0), (11, 3.0), (12, 2.0)]));
    for format in ["table", "markdown", "email"] {
        let r = common::bounded(
            20,
            &[
                "compare",
                "--format",
                format,
                base.to_str().unwrap(),
                new.to_str().unwrap(),
            ],
        );
        assert!(r.code <= 1, "{}", r.both());
        assert!(
            r.out.contains(":11  +3.00  (0.00 -> 3.00)"),
            "{format}: {}",
            r.out
        );
        assert!(
            !r.out.contains(":12  "),
            "{format}: the shifted line moved: {}",
            r.out
        );
        assert!(
            !r.out.contains('\u{1b}') && !r.out.contains('\r'),
            "{format}: {}",
            r.out
        );
    }
    let r = profile_lines(&["__set_task_comm", "--bench", "trig-kprobe"], &base, &new);
    assert_eq!(r.code, 0, "{}", r.both());
    assert!(
        !r.out.contains('\u{1b}') && !r.out.contains('\r'),
        "{}",
        r.out
    );
    let plus: Vec<&str> = r
        .out
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert_eq!(plus.len(), 1, "{}", r.out);
    assert!(
        plus[0].contains(":- -> 11") && plus[0].contains("+3.00"),
        "{}",
        r.out
    );
    let r = profile_lines(&["no_such_fn"], &base, &new);
    assert_eq!(r.code, 2, "{}", r.both());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn results_without_lines_say_why() {
    let dir = scratch("none");
    let (base, new) = synth::regressed_pair(&dir);
    profile(&base, None);
    profile(&new, Some(&[(10, 7.0), (11, 3.0)]));
    let r = common::bounded(
        20,
        &["compare", base.to_str().unwrap(), new.to_str().unwrap()],
    );
    assert!(
        r.out
            .contains("(no source lines: BASE: profiled before source lines were resolved)"),
        "{}",
        r.both()
    );
    // NEW's lines alone are no move
    assert!(!r.out.contains(":11  +3.00"), "{}", r.out);
    let _ = std::fs::remove_dir_all(dir);
}
