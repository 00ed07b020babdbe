//! Synthetic results for the tests of analysis and of the exporters
//! (feature `test-support`): histories of nights, and one-boot icount
//! results compared as `compare` would.

use crate::compare::{self, Comparison};
use crate::history::Point;
use crate::input::{self, Side};
use serde_json::{json, Value};
use trig_schema::*;

/// A history of `n` nightly results; trig-kprobe and trig-kretprobe
/// slow down by 15% from result `step` on, trig-base never changes.
pub fn nights(n: usize, step: usize) -> Vec<(Point, Vec<RunSet>)> {
    let wobble = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99];
    nights_of(n, Meter::Time, |i| {
        let w = wobble[i % wobble.len()];
        let slow = if i >= step { 0.85 } else { 1.0 };
        vec![
            ("trig-base", 2.0 * w),
            ("trig-kprobe", 0.8 * w * slow),
            ("trig-kretprobe", 0.5 * w * slow),
        ]
    })
}

/// `n` nightly results of one boot each, with these benchmarks' rates.
pub fn nights_of(
    n: usize,
    meter: Meter,
    rates: impl Fn(usize) -> Vec<(&'static str, f64)>,
) -> Vec<(Point, Vec<RunSet>)> {
    (0..n)
        .map(|i| {
            let results: Vec<BenchResult> = rates(i)
                .iter()
                .map(|(name, mean)| BenchResult {
                    summary: Some(Summary { mean: *mean, stddev: 0.0, per_producer: *mean, cv: 0.0, samples: 5 }),
                    ..BenchResult::new(name, name, "trigger", 1, Better::Higher)
                })
                .collect();
            let json = serde_json::json!({
                "schema_version": 1, "created": format!("202611{:02}T000000Z", i + 1),
                "kernel": {"spec": "x", "path": "", "release": format!("6.1.{i}"), "commit": format!("{i:02}{}", "ab".repeat(19))},
                "vm": {"arch": "x86_64", "accel": "tcg", "meter": meter, "cpus": 2, "memory": "1G", "append": ""},
                "runs": [{"index": 1, "status": "ok", "console_log": "", "wall_s": 1.0,
                    "report": {"schema_version": 1, "tool": {"name": "t", "version": "0", "git_rev": "x"},
                      "system": {"release": "r", "version": "v", "machine": "x86_64", "cmdline": "", "cpus": 2, "pid1": true},
                      "capabilities": {}, "params": serde_json::to_value(Params::run_defaults()).unwrap(),
                      "mounts": [], "results": serde_json::to_value(&results).unwrap(), "outcome": {"status": "complete"}}}]
            });
            let set: RunSet = serde_json::from_value(json).unwrap();
            let point = Point { file: format!("n{i}.json"), created: set.created.clone(), release: set.kernel.release.clone(), commit: set.kernel.commit.clone() };
            (point, vec![set])
        })
        .collect()
}

/// A one-boot icount results file: each benchmark at its rate, those
/// after the first with their overhead against it.
pub fn icount_results(rates: &[(&str, f64)], inject: Option<&str>) -> Value {
    let base = 1e3 / rates[0].1;
    let results: Vec<Value> = rates
        .iter()
        .enumerate()
        .map(|(i, (name, rate))| {
            let mut r = json!({"name": name, "bench": name, "group": "rename", "producers": 1,
                "better": "higher", "status": "ok", "samples": [],
                "summary": {"mean": rate, "stddev": 0.0, "per_producer": rate, "cv": 0.0, "samples": 4}});
            if i > 0 {
                r["overhead_ns"] = json!({"baseline": rates[0].0, "ns_per_event": 1e3 / rate - base});
            }
            r
        })
        .collect();
    let mut params = json!({"filter": [], "warmup_s": 0.1, "duration_s": 0.2, "producers": [1],
        "affinity": false, "batch_iters": 100, "cmp_str_lens": [1], "rename_thread": "worker",
        "timeout_s": 100});
    if let Some(i) = inject {
        params["inject"] = json!(i);
    }
    json!({"schema_version": 2,
        "kernel": {"spec": "k", "path": "k", "release": "6.1.0-test"},
        "vm": {"arch": "x86_64", "accel": "tcg", "meter": "icount", "cpus": 1, "memory": "1G", "append": ""},
        "runs": [{"index": 1, "status": "ok", "console_log": "", "wall_s": 1.0,
            "report": {"schema_version": 2, "tool": {"name": "trig-init", "version": "0", "git_rev": "x"},
                "system": {"release": "6.1.0-test", "version": "v", "machine": "x86_64", "cmdline": "", "cpus": 1, "pid1": true},
                "capabilities": {}, "params": params, "mounts": [], "results": results,
                "outcome": {"status": "complete"}}}]})
}

/// BASE against NEW as `compare` judges them.
pub fn comparison(base: &[(&str, f64)], new: &[(&str, f64)], inject: Option<&str>) -> Comparison {
    let side = |doc: Value| Side {
        files: vec!["test.json".into()],
        sets: input::parse(&doc.to_string()).unwrap(),
    };
    compare::compare(
        &side(icount_results(base, None)),
        &side(icount_results(new, inject)),
        &compare::Settings::default(),
    )
    .unwrap()
}
