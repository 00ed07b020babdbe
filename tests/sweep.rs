//! `trig-init sweep plan|merge|report` on a small git history with
//! synthetic results in place of boots: the slices, the merge and what
//! it refuses, and the steps the report names.

mod common;
mod synth;

use common::{stderr, trig_init};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trig-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A git tree of `n` commits after a base, made as `dir/tree`: returns
/// it and the commits' hashes, base first.
fn history(dir: &Path, n: usize) -> (PathBuf, Vec<String>) {
    let tree = dir.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .arg("-C")
            .arg(&tree)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    git(&["init", "-q"]);
    let commits = (0..=n)
        .map(|k| {
            std::fs::write(tree.join("f"), k.to_string()).unwrap();
            git(&["add", "f"]);
            git(&["commit", "-qm", &format!("change {k}")]);
            git(&["rev-parse", "HEAD"])
        })
        .collect();
    (tree, commits)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `sweep plan` of one slice: its `(commit, stem)` lines.
fn plan(tree: &Path, range: &str, slice: &str, out: &Path) -> Vec<(String, String)> {
    let o = trig_init(&[
        "sweep",
        "plan",
        s(tree),
        range,
        "--slice",
        slice,
        "--out",
        s(out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (c, stem) = l.split_once(' ').unwrap();
            (c.to_string(), stem.to_string())
        })
        .collect()
}

/// An icount results file of `commit` with trig-kprobe at `kprobe`.
fn measured(commit: &str, kprobe: f64) -> Value {
    let mut doc = synth::results("6.1.0", commit, "20261201T000000Z", kprobe, 1, 0.0);
    doc["vm"]["meter"] = "icount".into();
    doc
}

/// Measures a slice as sweep.sh would: trig-kprobe's rate by index,
/// None for a commit that does not build.
fn measure(out: &Path, lines: &[(String, String)], commits: &[String], kprobe: &[Option<f64>]) {
    for (c, stem) in lines {
        let i = commits.iter().position(|x| x == c).unwrap();
        match kprobe[i] {
            Some(k) => std::fs::write(out.join(format!("{stem}.json")), measured(c, k).to_string()),
            None => std::fs::write(out.join(format!("{stem}.skip")), "build failed (planted)\n"),
        }
        .unwrap();
    }
}

fn merge(out: &Path, dirs: &[&Path]) -> std::process::Output {
    let mut args = vec!["sweep", "merge", "-o", s(out)];
    args.extend(dirs.iter().map(|d| s(d)));
    trig_init(&args)
}

/// Commit 2 makes trig-kprobe 1% slower, commit 3 does not build,
/// commit 4 makes it 2% faster; the rest change nothing.
const KPROBE: [Option<f64>; 6] = [
    Some(0.8),
    Some(0.8),
    Some(0.792),
    None,
    Some(0.80784),
    Some(0.80784),
];

/// A range of five commits swept in two slices.
fn two_slices(dir: &Path) -> (Vec<String>, String, PathBuf, PathBuf) {
    let (tree, commits) = history(dir, 5);
    let range = format!("{}..{}", &commits[0][..10], &commits[5][..10]);
    let (a, b) = (dir.join("slice-1"), dir.join("slice-2"));
    let la = plan(&tree, &range, "1/2", &a);
    let lb = plan(&tree, &range, "2/2", &b);
    // every other commit from BASE, then the others, in the range's order
    let taken = |l: &[(String, String)]| l.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>();
    assert_eq!(taken(&la), [commits[0].as_str(), &commits[2], &commits[4]]);
    assert_eq!(taken(&lb), [commits[1].as_str(), &commits[3], &commits[5]]);
    assert_eq!(la[1].1, format!("002-{}", &commits[2][..12]));
    measure(&a, &la, &commits, &KPROBE);
    measure(&b, &lb, &commits, &KPROBE);
    (commits, range, a, b)
}

#[test]
fn slices_merge_into_the_range_and_the_report_names_its_steps() {
    let dir = scratch("steps");
    let (commits, _, a, b) = two_slices(&dir);
    let all = dir.join("all");
    let o = merge(&all, &[&b, &a]);
    assert!(o.status.success(), "{}", stderr(&o));
    // the merge copies each commit's results as they are
    let stem = format!("002-{}", &commits[2][..12]);
    assert_eq!(
        std::fs::read(all.join(format!("{stem}.json"))).unwrap(),
        std::fs::read(a.join(format!("{stem}.json"))).unwrap()
    );
    let json = dir.join("report.json");
    let o = trig_init(&[
        "sweep",
        "report",
        s(&all),
        "--format",
        "markdown",
        "--export-json",
        s(&json),
    ]);
    assert_eq!(o.status.code(), Some(1), "a step regressed: {}", stderr(&o));
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(
        md.contains("### trig-init compare"),
        "compare's markdown per step: {md}"
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let steps = r["steps"].as_array().unwrap();
    let found: Vec<(&str, &str, &str)> = steps
        .iter()
        .flat_map(|st| {
            st["moved"].as_array().unwrap().iter().map(move |m| {
                (
                    st["commit"].as_str().unwrap(),
                    m["bench"].as_str().unwrap(),
                    m["verdict"].as_str().unwrap(),
                )
            })
        })
        .collect();
    assert_eq!(
        found,
        [
            (commits[2].as_str(), "trig-kprobe", "regressed"),
            (commits[4].as_str(), "trig-kprobe", "improved")
        ]
    );
    // the step after the unbuildable commit is measured across it
    assert_eq!(steps[1]["against"], commits[2].as_str());
    assert_eq!(steps[1]["across"], serde_json::json!([commits[3]]));
    assert_eq!(r["commits"][3]["status"], "skipped");
    assert_eq!(r["commits"][3]["why"], "build failed (planted)");
    // 1% of 1250 instructions an event is 12.6 more
    let per_event = steps[0]["moved"][0]["per_event"].as_f64().unwrap();
    assert!(
        (per_event - (1e3 / 0.792 - 1e3 / 0.8)).abs() < 1e-9,
        "{per_event}"
    );
    assert!(
        md.contains("across") && md.contains("skipped: build failed (planted)"),
        "{md}"
    );
    for format in ["table", "email", "html"] {
        let o = trig_init(&["sweep", "report", s(&all), "--format", format]);
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(
            text.contains(&commits[4][..12]) && text.contains("trig-kprobe"),
            "{format}: {text}"
        );
    }
}

/// `sweep report` of a range of `kprobe.len() - 1` commits after BASE,
/// swept in one slice into `dir` and measured at `kprobe` (`measure`).
fn report_of_one_slice(dir: &Path, kprobe: &[Option<f64>]) -> std::process::Output {
    let (tree, commits) = history(dir, kprobe.len() - 1);
    let out = dir.join("one");
    let lines = plan(&tree, &format!("{}..HEAD", commits[0]), "1/1", &out);
    measure(&out, &lines, &commits, kprobe);
    trig_init(&["sweep", "report", s(&out)])
}

#[test]
fn a_range_without_a_step_exits_0_and_says_so() {
    let o = report_of_one_slice(&scratch("flat"), &[Some(0.8); 3]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("3 measured; 0 steps"));
}

#[test]
fn merge_refuses_another_identity_naming_the_field() {
    let dir = scratch("identity");
    let (commits, _, a, b) = two_slices(&dir);
    // slice 2's runner emulated another machine
    let stem = format!("001-{}", &commits[1][..12]);
    let mut doc = measured(&commits[1], 0.8);
    doc["vm"]["accel"] = "kvm".into();
    std::fs::write(b.join(format!("{stem}.json")), doc.to_string()).unwrap();
    let o = merge(&dir.join("all"), &[&a, &b]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&stem) && e.contains("not measured like") && e.contains("accelerator"),
        "{e}"
    );
}

#[test]
fn merge_refuses_what_is_not_of_the_range() {
    let dir = scratch("range");
    let (commits, _, a, b) = two_slices(&dir);
    // a file named for no commit of the range
    std::fs::write(b.join("009-0123456789ab.json"), "{}").unwrap();
    let e = stderr(&merge(&dir.join("m1"), &[&a, &b]));
    assert!(
        e.contains("009-0123456789ab.json: not a commit of the range"),
        "{e}"
    );
    std::fs::remove_file(b.join("009-0123456789ab.json")).unwrap();
    // results of another commit under this one's name
    let stem = format!("003-{}", &commits[3][..12]);
    std::fs::write(
        b.join(format!("{stem}.json")),
        measured(&commits[1], 0.8).to_string(),
    )
    .unwrap();
    std::fs::remove_file(b.join(format!("{stem}.skip"))).unwrap();
    let e = stderr(&merge(&dir.join("m2"), &[&a, &b]));
    assert!(
        e.contains(&format!("results of commit {}", commits[1])),
        "{e}"
    );
    // a slice of another range
    let tree = dir.join("tree");
    let other = dir.join("other");
    plan(
        &tree,
        &format!("{}..{}", commits[1], commits[5]),
        "1/1",
        &other,
    );
    let e = stderr(&merge(&dir.join("m3"), &[&a, &other]));
    assert!(e.contains("another range"), "{e}");
    // the same slice twice
    let e = stderr(&merge(&dir.join("m4"), &[&a, &a]));
    assert!(
        e.contains(&format!("000-{} is in both", &commits[0][..12])),
        "{e}"
    );
}

#[test]
fn a_missing_slice_leaves_its_commits_named() {
    let dir = scratch("missing");
    let (commits, _, a, _) = two_slices(&dir);
    let all = dir.join("all");
    let o = merge(&all, &[&a]);
    assert!(
        o.status.success() && stderr(&o).contains("no slice took 3"),
        "{}",
        stderr(&o)
    );
    let text = String::from_utf8(trig_init(&["sweep", "report", s(&all)]).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "{} change 1: not measured: no slice",
            &commits[1][..12]
        )),
        "{text}"
    );
}

#[test]
fn plan_refuses_bad_ranges_and_slices() {
    let dir = scratch("plan");
    let (tree, commits) = history(&dir, 1);
    let out = dir.join("o");
    for (range, slice, why) in [
        ("HEAD", "1/1", "must be BASE..TIP"),
        ("HEAD..HEAD", "1/1", "no commits after BASE"),
        ("nope..HEAD", "1/1", "git log"),
        ("HEAD~1..HEAD", "3/2", "--slice must be K/N"),
        ("HEAD~1..HEAD", "0/2", "--slice must be K/N"),
    ] {
        let o = trig_init(&[
            "sweep",
            "plan",
            s(&tree),
            range,
            "--slice",
            slice,
            "--out",
            s(&out),
        ]);
        assert_eq!(o.status.code(), Some(2), "{range} {slice}");
        assert!(stderr(&o).contains(why), "{range} {slice}: {}", stderr(&o));
    }
    // another slice into a directory that holds one
    plan(&tree, &format!("{}..HEAD", commits[0]), "1/2", &out);
    let o = trig_init(&[
        "sweep",
        "plan",
        s(&tree),
        "HEAD~1..HEAD",
        "--slice",
        "2/2",
        "--out",
        s(&out),
    ]);
    assert!(stderr(&o).contains("holds another sweep"), "{}", stderr(&o));
}

/// More slices than commits: scripts/sweep.sh of a slice that takes no
/// commit leaves its manifest and log alone, no `.skip` of an empty
/// commit (which made the merge of every slice fail: "not a commit of
/// the range"). Nothing is built: the slice has nothing to build.
#[test]
fn a_slice_without_commits_is_merged_with_the_others() {
    let dir = scratch("empty-slice");
    let (tree, commits) = history(&dir, 1);
    let range = format!("{}..HEAD", commits[0]);
    let empty = dir.join("slice-3");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sweep.sh");
    let o = Command::new(script)
        .args([s(&tree), &range, "--slice", "3/3", "--out", s(&empty)])
        .env("TRIG_INIT", env!("CARGO_BIN_EXE_trig-init"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut left: Vec<String> = std::fs::read_dir(&empty)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["sweep.json", "sweep.log"]);
    let (a, b) = (dir.join("slice-1"), dir.join("slice-2"));
    measure(
        &a,
        &plan(&tree, &range, "1/3", &a),
        &commits,
        &[Some(0.8); 2],
    );
    measure(
        &b,
        &plan(&tree, &range, "2/3", &b),
        &commits,
        &[Some(0.8); 2],
    );
    let o = merge(&dir.join("all"), &[&a, &b, &empty]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Ubuntu 24.04's QEMU 8.2 cannot load the profiling plugin (API 4 needs
/// 9.2): every profiled boot of a slice failed. sweep.sh says so once,
/// before the first build, and goes on unprofiled; --require-profile
/// stops it before the plan (exit 2, nothing written).
#[test]
fn a_qemu_older_than_9_2_is_said_once_before_the_slice() {
    let dir = scratch("old-qemu");
    // two commits whose builds fail at once (no kernel in the tree)
    let (tree, commits) = history(&dir, 1);
    let range = format!("{}..HEAD", commits[0]);
    let plugin = dir.join("libtrig_plugin.so");
    std::fs::write(&plugin, "a plugin").unwrap();
    let sweep = |out: &Path, extra: &[&str]| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sweep.sh");
        Command::new(script)
            .args([s(&tree), &range, "--out", s(out)])
            .args(extra)
            .env("TRIG_INIT", env!("CARGO_BIN_EXE_trig-init"))
            .env("TRIG_INIT_PLUGIN", &plugin)
            .env("PATH", synth::qemu_of_version(&dir, "8.2.2"))
            .output()
            .unwrap()
    };
    let out = dir.join("slice");
    let o = sweep(&out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.matches("needs TCG plugin API 4").count(), 1, "{e}");
    assert_eq!(e.matches("measuring unprofiled").count(), 1, "{e}");
    // the message came before the first build
    assert!(e.find("QEMU 8.2") < e.find("build failed"), "{e}");
    assert_eq!(e.matches("build failed").count(), 2, "{e}");
    let stopped = dir.join("stopped");
    let o = sweep(&stopped, &["--require-profile"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--require-profile"), "{}", stderr(&o));
    assert!(!stopped.join("sweep.json").exists());
}

/// A sweep with fewer than two commits measured (every build failed)
/// compared nothing: exit 2, saying so, after the report of what was
/// not measured, where it said "0 steps" and exited 0.
#[test]
fn a_sweep_that_compared_nothing_exits_2() {
    let dir = scratch("nothing");
    for (name, kprobe) in [("none", [None; 3]), ("one", [Some(0.8), None, None])] {
        let o = report_of_one_slice(&dir.join(name), &kprobe);
        let (code, text) = (o.status.code(), String::from_utf8_lossy(&o.stdout));
        let e = stderr(&o);
        assert!(
            code == Some(2) && e.contains("nothing compared"),
            "{name}: {e}"
        );
        // what was not measured, and why, is still said
        assert!(text.contains("skipped: build failed (planted)"), "{text}");
    }
}

/// `--out` (plan) or `-o` (merge) that is a file is named as such, not
/// "File exists".
#[test]
fn an_out_that_is_a_file_is_named() {
    let dir = scratch("out-file");
    let (_, range, a, b) = two_slices(&dir);
    let file = dir.join("file");
    std::fs::write(&file, "x").unwrap();
    let tree = dir.join("tree");
    let args = ["sweep", "plan", s(&tree), &range, "--out", s(&file)];
    for o in [trig_init(&args), merge(&file, &[&a, &b])] {
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("is a file, not a directory"),
            "{}",
            stderr(&o)
        );
    }
}

/// A merge brings each skip's build log along (it stays beside the skip,
/// as docs/sweep.md says), and a merge that fails part-way leaves its
/// directory empty, so that a rerun is not refused as "not empty" (it
/// left what it had copied).
#[test]
fn merge_brings_build_logs_and_a_failed_one_leaves_nothing() {
    let dir = scratch("merge-logs");
    let (commits, _, a, b) = two_slices(&dir);
    let log = b.join(format!("003-{}.build.log", &commits[3][..12]));
    std::fs::write(&log, "error: planted\n").unwrap();
    let all = dir.join("all");
    let o = merge(&all, &[&a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let copied = all.join(log.file_name().unwrap());
    assert_eq!(std::fs::read_to_string(copied).unwrap(), "error: planted\n");
    // a log that cannot be read, after three results were copied
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", &log).unwrap();
    let again = dir.join("again");
    let o = merge(&again, &[&a, &b]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("build.log"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&again).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_file(&log).unwrap();
    let o = merge(&again, &[&a, &b]);
    assert!(o.status.success(), "a rerun: {}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
