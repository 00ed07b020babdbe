//! Writes a synthetic history of the whole matrix, for
//! scripts/bench/bench-history.sh and for checking `history` and `report` by
//! hand: `cargo run --release --example synth-history -- DIR NIGHTS [METER]`.
//!
//! Every night is one boot (icount unless METER is `time`) of every point of the default run, with
//! its samples and overheads, as `vm` writes it. The figures are flat but
//! for 0.01% of seeded noise, one step of trig-kprobe and rename-kprobe
//! (-1.5%, a third of the way in) and one of strncmp-helper (+2%, two
//! thirds in), so that a history has change points to show.

// an example prints for a person at a terminal
#![allow(clippy::disallowed_macros)]

use serde_json::json;
use std::path::PathBuf;
use trig_guest::options::RunOptions;
use trig_guest::registry;
use trig_schema::{BenchResult, Overhead, RunSet, Sample, Summary};

/// The rate of a point of benchmark `name` on night `i` of `n`, in M events/s.
fn rate(name: &str, base: f64, i: usize, n: usize, rng: &mut fastrand::Rng) -> f64 {
    let step = if (name == "trig-kprobe" || name == "rename-kprobe") && i >= n / 3 {
        0.985
    } else if name == "strncmp-helper" && i >= 2 * n / 3 {
        1.02
    } else {
        1.0
    };
    base * step * (1.0 + 0.0001 * (rng.f64() * 2.0 - 1.0))
}

fn night(i: usize, n: usize, meter: &str, rng: &mut fastrand::Rng) -> RunSet {
    let opts = RunOptions::default();
    let benches: Vec<_> = registry::all().collect();
    let results: Vec<BenchResult> = registry::points(&benches, &opts.producers, &opts.cmp_str_lens)
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let mean = rate(p.bench.name, 1.0 + k as f64 / 10.0, i, n, rng);
            let samples = (0..6)
                .map(|s| Sample {
                    t_s: s as f64 + 1.0,
                    interval_s: 1.0,
                    sampler_s: 0.0,
                    warmup: s < 1,
                    bpf: (mean * 1e6) as u64,
                    user: (mean * 1e6) as u64,
                    mps: mean,
                    ..Sample::default()
                })
                .collect();
            BenchResult {
                samples,
                summary: Some(Summary {
                    mean,
                    stddev: mean * 1e-4,
                    per_producer: mean / p.producers as f64,
                    cv: 1e-4,
                    samples: 5,
                }),
                overhead_ns: p.bench.baseline().map(|b| Overhead {
                    baseline: b.name.into(),
                    ns_per_event: 1e3 / mean,
                }),
                ..p.bench.result(&p.name, p.producers)
            }
        })
        .collect();
    let json = json!({
        "schema_version": 1,
        "created": format!("{}T000000Z", day(i)),
        "kernel": {"spec": "x", "path": "", "release": format!("6.13.0-rc{i}"),
            "commit": format!("{i:08x}{}", "c0de".repeat(8))},
        "vm": {"arch": "x86_64", "accel": "tcg", "meter": meter, "cpus": 2, "memory": "1G", "append": ""},
        "runs": [{"index": 1, "status": "ok", "console_log": "", "wall_s": 300.0,
            "report": {"schema_version": 1, "tool": {"name": "trig-init", "version": "0.1.0", "git_rev": "synth"},
                "system": {"release": "r", "version": "v", "machine": "x86_64", "cmdline": "", "cpus": 2, "pid1": true},
                "capabilities": {}, "params": opts.params(1),
                "mounts": [], "results": results, "outcome": {"status": "complete"}}}]
    });
    serde_json::from_value(json).expect("a valid results file")
}

/// Night `i` as a date, one per day from 2020-01-01 (30-day months, as
/// only the order matters).
fn day(i: usize) -> String {
    format!(
        "{:04}{:02}{:02}",
        2020 + i / 360,
        i / 30 % 12 + 1,
        i % 30 + 1
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, n, meter) = match args.as_slice() {
        [dir, n] => (dir, n, "icount"),
        [dir, n, meter] if meter == "icount" || meter == "time" => (dir, n, meter.as_str()),
        _ => {
            eprintln!("usage: synth-history DIR NIGHTS [icount|time]");
            std::process::exit(2);
        }
    };
    let n: usize = n.parse().expect("NIGHTS is a number");
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("create DIR");
    let mut rng = fastrand::Rng::with_seed(25);
    for i in 0..n {
        let set = night(i, n, meter, &mut rng);
        let path = dir.join(format!("night-{}.json", day(i)));
        std::fs::write(&path, serde_json::to_string_pretty(&set).unwrap()).expect("write");
    }
}
