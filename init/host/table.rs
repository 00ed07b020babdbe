//! The summary table of a kernel's runs.

use crate::report::{RunSet, Status};
use crate::stats;
use std::fmt::Write;

/// Benchmark, runs, mean ± stddev (across boots when there are several,
/// else within the boot), status.
pub fn summary(set: &RunSet) -> String {
    let reports: Vec<_> = set.runs.iter().filter_map(|r| r.report.as_ref()).collect();
    let mut names: Vec<&str> = Vec::new();
    for r in &reports {
        for b in &r.results {
            if !names.contains(&b.name.as_str()) {
                names.push(&b.name);
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {} ({}), {} under {}, {} CPUs, {} boot(s)",
        set.kernel.release,
        set.kernel.spec,
        set.vm.arch,
        set.vm.accel.to_uppercase(),
        set.vm.cpus,
        set.runs.len()
    );
    if set.vm.accel == "tcg" {
        let _ = writeln!(
            out,
            "note: TCG emulation; compare ratios and kernels, not absolute rates"
        );
    }
    let _ = writeln!(
        out,
        "{:<30} {:>4} {:>20} {:>10}  STATUS",
        "BENCHMARK", "RUNS", "M/s (mean ± sd)", "ns/event+"
    );
    for name in names {
        let results: Vec<_> = reports
            .iter()
            .filter_map(|r| r.results.iter().find(|b| b.name == name))
            .collect();
        let means: Vec<f64> = results
            .iter()
            .filter(|b| b.status == Status::Ok)
            .filter_map(|b| b.summary.as_ref().map(|s| s.mean))
            .collect();
        let sd = if means.len() > 1 {
            stats::stddev(&means)
        } else {
            results
                .iter()
                .find_map(|b| b.summary.as_ref().map(|s| s.stddev))
                .unwrap_or(0.0)
        };
        let over: Vec<f64> = results
            .iter()
            .filter_map(|b| b.overhead_ns.as_ref().map(|o| o.ns_per_event))
            .collect();
        let status = results
            .iter()
            .map(|b| b.status)
            .find(|s| *s != Status::Ok)
            .unwrap_or(Status::Ok);
        let rate = if means.is_empty() {
            "-".to_string()
        } else {
            format!("{:.3} ± {:.3}", stats::mean(&means), sd)
        };
        let over = if over.is_empty() {
            String::new()
        } else {
            format!("{:.1}", stats::mean(&over))
        };
        let reason = results
            .iter()
            .find_map(|b| b.reason.as_deref())
            .map(|r| format!(" ({})", r.chars().take(90).collect::<String>()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{name:<30} {:>4} {rate:>20} {over:>10}  {}{reason}",
            means.len(),
            status.as_str()
        );
    }
    out
}
