//! Every renderer against reviewed snapshots (tests/snapshots/, insta), so
//! that a change of format shows as a diff: `vm`'s summary table, `compare`
//! in each format, `history` in each format and `report`'s page. The inputs
//! are synthetic results files (tests/synth), written under fixed names and
//! named relative to the directory the command runs in, so that no
//! temporary path reaches the output. Review a change with
//! `cargo insta review` (or INSTA_UPDATE=always, then `git diff`); under
//! CI=true a changed output fails.

mod synth;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory holding `base.json` and `new.json` (trig-kprobe 15%
/// slower in NEW, five boots a side) and `history/`: twelve nights at
/// 0.8 M/s, then three at 0.68 (a new change point).
fn inputs(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trig-snapshots-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("history")).unwrap();
    synth::regressed_pair(&dir);
    let write = |path: &str, doc: serde_json::Value| {
        std::fs::write(dir.join(path), doc.to_string()).unwrap();
    };
    for night in 1..=15 {
        // 1% from night to night, as nights differ
        let wobble = [1.0, 1.01, 0.99, 1.005, 0.995][night % 5];
        let kprobe = if night <= 12 { 0.8 } else { 0.68 } * wobble;
        let created = format!("202611{night:02}T000000Z");
        write(
            &format!("history/6.1.0-{created}.json"),
            synth::results("6.1.0", &format!("c{night:02}"), &created, kprobe, 3, 0.01),
        );
    }
    dir
}

/// stdout of `trig-init ARGS` run in `dir`, with its exit status checked.
fn run(dir: &Path, args: &[&str], status: i32) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .output()
        .expect("run trig-init");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(status), "{args:?}: {stderr}");
    String::from_utf8(o.stdout).expect("utf-8 output")
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn vm_summary_table() {
    let set = serde_json::from_value(synth::results(
        "6.1.0",
        "aaaa",
        "20261101T000000Z",
        0.8,
        5,
        0.01,
    ))
    .unwrap();
    insta::assert_snapshot!("vm_table", trig_export::people::vm_table::summary(&set));
}

/// Where the boots' time went: the mean over the boots whose report came
/// (the third was cut short), by family, from the host's clock.
#[test]
fn vm_summary_says_where_a_boots_time_went() {
    let mut doc = synth::results("6.1.0", "aaaa", "20261101T000000Z", 0.8, 3, 0.0);
    for (k, run) in doc["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
        let k = k as f64;
        run["wall_s"] = (20.0 + 2.0 * k).into();
        run["timeline"] = serde_json::json!({
            "starts": [["trig-base", 8.0 + k], ["trig-kprobe", 10.0 + k]],
            "report_s": 19.5 + 2.0 * k,
        });
        run["report"]["results"][1]["group"] = "rename".into();
        if k == 2.0 {
            run["timeline"]["report_s"] = serde_json::Value::Null;
        }
    }
    let set = serde_json::from_value(doc).unwrap();
    let table = trig_export::people::vm_table::summary(&set);
    let line = table.lines().last().unwrap();
    assert_eq!(
        line,
        "time a boot (mean of 2): 21.0 s: 8.5 s to the first benchmark, \
         trigger 1 in 2.0 s, rename 1 in 10.0 s, 0.5 s report and power-off",
        "{table}"
    );
}

/// A run split over two boots side by side: its wall time from the first
/// part's start to the last one's end, the parts' mean start and end, and
/// their benchmarks' seconds summed.
#[test]
fn vm_summary_says_where_a_split_runs_time_went() {
    let mut doc = synth::results("6.1.0", "aaaa", "20261101T000000Z", 0.8, 1, 0.0);
    let run = &mut doc["runs"][0];
    run["wall_s"] = 12.0.into();
    run["report"]["results"][1]["group"] = "rename".into();
    let part = |i: usize, name: &str, first: f64| {
        serde_json::json!({
            "part": format!("{i}/2"), "benchmarks": [name],
            "boot": {"index": 1, "status": "ok", "console_log": "", "wall_s": 11.0,
                "timeline": {"starts": [[name, first]], "report_s": 10.5}},
        })
    };
    run["parts"] = serde_json::json!([part(1, "trig-base", 8.0), part(2, "trig-kprobe", 9.0)]);
    let set = serde_json::from_value(doc).unwrap();
    let table = trig_export::people::vm_table::summary(&set);
    assert_eq!(
        table.lines().last().unwrap(),
        "time a boot (split over 2 boots side by side, their seconds summed): 12.0 s: \
         8.5 s to the first benchmark, trigger 1 in 2.5 s, rename 1 in 1.5 s, \
         0.5 s report and power-off",
        "{table}"
    );
}

#[test]
fn compare_in_every_format() {
    let dir = inputs("compare");
    for format in ["table", "markdown", "email", "json", "bmf"] {
        let out = run(
            &dir,
            &["compare", "base.json", "new.json", "--format", format],
            1,
        );
        insta::assert_snapshot!(format!("compare_{format}"), out);
    }
    let coloured = run(
        &dir,
        &["compare", "base.json", "new.json", "--color", "always"],
        1,
    );
    insta::assert_snapshot!("compare_table_color", coloured);
    // the --export-* files are the same renderers, never coloured
    run(
        &dir,
        &[
            "compare",
            "base.json",
            "new.json",
            "--color",
            "always",
            "--export-table",
            "c.txt",
            "--export-json",
            "c.json",
            "--export-markdown",
            "c.md",
            "--export-bmf",
            "c.bmf",
        ],
        1,
    );
    for (file, format) in [
        ("c.txt", "table"),
        ("c.json", "json"),
        ("c.md", "markdown"),
        ("c.bmf", "bmf"),
    ] {
        let stdout = run(
            &dir,
            &["compare", "base.json", "new.json", "--format", format],
            1,
        );
        assert_eq!(read(&dir, file), stdout, "{file}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn history_in_every_format() {
    let dir = inputs("history");
    for format in ["table", "markdown", "json", "bmf"] {
        let out = run(&dir, &["history", "history", "--format", format], 1);
        insta::assert_snapshot!(format!("history_{format}"), out);
    }
    // with alerts: the first run alerts and records, the second does not
    let first = run(&dir, &["history", "history", "--alert"], 1);
    insta::assert_snapshot!("history_alert_first", first);
    insta::assert_snapshot!("history_alerts_file", read(&dir, "history/alerts.json"));
    let second = run(&dir, &["history", "history", "--alert"], 0);
    insta::assert_snapshot!("history_alert_again", second);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The kernel's instructions over the baseline across an update of
/// trig-init (`synth::updated_history`): compare's columns and headline,
/// and history's break that the kernel's series run on across.
#[test]
fn kernel_overhead_across_an_update() {
    let dir = std::env::temp_dir().join(format!("trig-snapshots-update-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("history")).unwrap();
    synth::updated_history(&dir.join("history"));
    let (before, after) = (
        "history/20261106T000000Z.json",
        "history/20261107T000000Z.json",
    );
    for format in ["table", "markdown"] {
        let args = [
            "compare",
            "--metric",
            "kernel-overhead",
            before,
            after,
            "--format",
            format,
        ];
        insta::assert_snapshot!(
            format!("compare_kernel_overhead_{format}"),
            run(&dir, &args, 1)
        );
    }
    let args = ["history", "history", "--metric", "kernel-overhead"];
    insta::assert_snapshot!("history_kernel_overhead", run(&dir, &args, 1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn report_page() {
    let dir = inputs("report");
    run(&dir, &["report", "history", "-o", "report.html"], 0);
    insta::assert_snapshot!("report_html", read(&dir, "report.html"));
    run(
        &dir,
        &[
            "report",
            "history",
            "-o",
            "scaled.html",
            "--common-scale",
            "--repo-url",
            "https://git.example/linux",
        ],
        0,
    );
    insta::assert_snapshot!("report_html_common_scale", read(&dir, "scaled.html"));
    std::fs::remove_dir_all(&dir).unwrap();
}
