//! Synthetic `trig-init vm` results files, for tests of the host
//! commands that read them (compare, history, report, nightly.sh), and a
//! stub QEMU for the scripts' version check.

use serde_json::{json, Value};
use trig_schema::{BenchResult, Better, RunSet, Status, Summary};

/// A results file of one kernel: `boots` boots in which trig-base runs
/// at 2 M/s and trig-kprobe at `kprobe` M/s, each boot off by up to
/// `spread` (relative) in a fixed pattern.
pub fn results(
    release: &str,
    commit: &str,
    created: &str,
    kprobe: f64,
    boots: usize,
    spread: f64,
) -> Value {
    let boots: Vec<Vec<BenchResult>> = (0..boots)
        .map(|i| {
            let w = 1.0 + spread * ((i * 7 % 5) as f64 / 2.0 - 1.0);
            vec![
                bench("trig-base", Status::Ok, 2.0 * w),
                bench("trig-kprobe", Status::Ok, kprobe * w),
            ]
        })
        .collect();
    results_of(release, commit, created, boots)
}

/// One benchmark's result in a boot: `ok` at `rate`, or `status` with
/// no figure (and a reason, as a guest gives one).
pub fn bench(name: &str, status: Status, rate: f64) -> BenchResult {
    let mut r = BenchResult::new(name, name, "trigger", 1, Better::Higher);
    r.status = status;
    if status == Status::Ok {
        r.summary = Some(Summary {
            mean: rate,
            stddev: 0.0,
            per_producer: rate,
            cv: 0.0,
            samples: 5,
        });
    } else {
        r.reason = Some(format!("{} (planted)", status.as_str()));
    }
    r
}

/// A results file of one kernel whose boots gave `boots`, each boot's
/// results in order.
pub fn results_of(
    release: &str,
    commit: &str,
    created: &str,
    boots: Vec<Vec<BenchResult>>,
) -> Value {
    let runs: Vec<Value> = boots
        .into_iter()
        .enumerate()
        .map(|(i, results)| {
            json!({"index": i + 1, "status": "ok", "console_log": "", "wall_s": 1.0,
                "report": {"schema_version": 1, "tool": {"name": "t", "version": "0", "git_rev": "x"},
                    "system": {"release": release, "version": "v", "machine": "x86_64", "cmdline": "", "cpus": 2, "pid1": true},
                    "capabilities": {}, "params": trig_guest::options::RunOptions::default().params(1),
                    "mounts": [], "results": results, "outcome": {"status": "complete"}}})
        })
        .collect();
    let doc = json!({
        "schema_version": 1, "created": created,
        "kernel": {"spec": "x", "path": "", "release": release, "commit": commit},
        "vm": {"arch": "x86_64", "accel": "tcg", "cpus": 2, "memory": "1G", "append": ""},
        "runs": runs,
    });
    // what the readers accept
    serde_json::from_value::<RunSet>(doc.clone()).expect("a valid results file");
    doc
}

/// An icount results file of one boot of `commit` with trig-kprobe at
/// `kprobe` M/Ginsn.
#[allow(dead_code)] // not every test binary that includes synth uses it
pub fn icount(commit: &str, created: &str, kprobe: f64) -> Value {
    let mut doc = results("6.1.0", commit, created, kprobe, 1, 0.0);
    doc["vm"]["meter"] = "icount".into();
    doc
}

/// Marks `bench` failed with `reason` in every boot of `doc`.
#[allow(dead_code)] // not every test binary that includes synth uses it
pub fn fail(doc: &mut Value, bench: &str, reason: &str) {
    for run in doc["runs"].as_array_mut().unwrap() {
        for r in run["report"]["results"].as_array_mut().unwrap() {
            if r["name"] == bench {
                r["status"] = "failed".into();
                r["reason"] = reason.into();
                r.as_object_mut().unwrap().remove("summary");
            }
        }
    }
}

/// `base.json` and `new.json` in `dir`, trig-kprobe 15% slower in NEW,
/// five boots a side (compare flags it), as the paths written.
#[allow(dead_code)] // not every test binary that includes synth uses it
pub fn regressed_pair(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let write = |name: &str, doc: Value| {
        let p = dir.join(name);
        std::fs::write(&p, doc.to_string()).unwrap();
        p
    };
    (
        write(
            "base.json",
            results("6.1.0", "aaaa", "20261101T000000Z", 0.8, 5, 0.01),
        ),
        write(
            "new.json",
            results("6.1.0", "bbbb", "20261102T000000Z", 0.68, 5, 0.01),
        ),
    )
}

/// An icount results file of one boot of trig-init build `rev`, profiled:
/// trig-base with 316 of the kernel's instructions per event, trig-kprobe
/// at `kprobe` M/Ginsn with `kernel` of them, and its overhead over
/// trig-base as the guest fills it in.
fn profiled(commit: &str, created: &str, kprobe: f64, kernel: f64, rev: &str) -> Value {
    use trig_schema::{add_overheads, Profile};
    let mut doc = results("6.1.0", commit, created, kprobe, 1, 0.0);
    doc["vm"]["meter"] = "icount".into();
    let report = &mut doc["runs"][0]["report"];
    report["tool"]["git_rev"] = rev.into();
    let mut rs: Vec<BenchResult> = serde_json::from_value(report["results"].take()).unwrap();
    for r in &mut rs {
        // the baseline a guest records
        r.baseline = trig_guest::registry::find(&r.bench)
            .and_then(|b| b.baseline())
            .map(|b| b.name.to_string());
        r.profile = Some(Profile {
            total: 1e3 / r.summary.as_ref().unwrap().mean,
            kernel: if r.name == "trig-kprobe" {
                kernel
            } else {
                316.0
            },
            functions: Vec::new(),
            entries: None,
            memory: None,
            contention: None,
            source: None,
        });
    }
    add_overheads(&mut rs);
    report["results"] = serde_json::to_value(rs).unwrap();
    doc
}

/// Nine profiled nights in `dir` (`profiled`), as the paths written:
/// three of one trig-init build, three of another whose trig-kprobe rate
/// is 1% lower (its own code), three of those on a kernel whose kprobe
/// path is 3 instructions longer (issue 26).
#[allow(dead_code)] // not every test binary that includes synth uses it
pub fn updated_history(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    (0..9)
        .map(|n| {
            let (rev, kprobe, kernel) = match n {
                0..=2 => ("aaaa", 0.8, 653.5),
                3..=5 => ("bbbb", 0.792, 653.5),
                // 3 more instructions an event
                _ => ("bbbb", 1e3 / (1e3 / 0.792 + 3.0), 656.5),
            };
            let created = format!("202611{:02}T000000Z", n + 1);
            let p = dir.join(format!("{created}.json"));
            let doc = profiled(&format!("c{n}"), &created, kprobe, kernel, rev);
            std::fs::write(&p, doc.to_string()).unwrap();
            p
        })
        .collect()
}

/// A directory holding a `qemu-system-x86_64` that says it is `version`,
/// first on the PATH that the scripts see: the PATH to give them.
#[allow(dead_code)] // not every test binary that includes synth uses it
pub fn qemu_of_version(dir: &std::path::Path, version: &str) -> std::ffi::OsString {
    let bin = dir.join(format!("qemu-{version}"));
    std::fs::create_dir_all(&bin).unwrap();
    let qemu = bin.join("qemu-system-x86_64");
    std::fs::write(
        &qemu,
        format!("#!/bin/sh\necho 'QEMU emulator version {version} (stub)'\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&qemu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut path = bin.into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}
