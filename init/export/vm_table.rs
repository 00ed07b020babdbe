//! The summary table of a kernel's runs.

use crate::text::{line, pad, words};
use std::fmt::Write;
use trig_schema::stats;
use trig_schema::{Meter, Report, RunSet, Status};

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
    let mut out = header(set);
    for name in names {
        row(&mut out, name, &reports, set.vm.meter);
    }
    out
}

/// The kernel's line, the meter's note and the column heads.
fn header(set: &RunSet) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {} ({}), {} under {}, meter {}, {} CPU{}, {} boot(s)",
        // a patch's release, the user's spec: as a terminal shows them
        line(&set.kernel.release),
        line(&set.kernel.spec),
        set.vm.arch,
        set.vm.accel.to_uppercase(),
        set.vm.meter.as_str(),
        set.vm.cpus,
        if set.vm.cpus == 1 { "" } else { "s" },
        set.runs.len()
    );
    let meter = set.vm.meter;
    if meter == Meter::Icount {
        let _ = writeln!(
            out,
            "note: icount meter: M/Ginsn is millions of events per 10^9 guest instructions, \
             insn/event the instructions an event adds over its baseline"
        );
    } else if set.vm.accel == "tcg" {
        let _ = writeln!(
            out,
            "note: TCG emulation; compare ratios and kernels, not absolute rates"
        );
    }
    let _ = writeln!(
        out,
        "{:<30} {:>4} {:>20} {:>12}  STATUS",
        "BENCHMARK",
        "RUNS",
        format!("{} (mean ± sd)", meter.rate_unit()),
        format!("{}+", meter.cost_unit())
    );
    out
}

/// The line of benchmark `name` across the boots' reports.
fn row(out: &mut String, name: &str, reports: &[&Report], meter: Meter) {
    let d = meter.extra_digits();
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
        format!("{:.*} ± {:.*}", 3 + d, stats::mean(&means), 3 + d, sd)
    };
    // under icount boots should agree to the last digits: say how far
    // apart they were, which is the meter's determinism
    let apart = match (meter, means.len()) {
        (Meter::Icount, 2..) => {
            let (lo, hi) = means
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &m| (l.min(m), h.max(m)));
            format!(
                " (boots {:.4}% apart)",
                (hi - lo) / stats::mean(&means) * 100.0
            )
        }
        _ => String::new(),
    };
    let over = overhead_cell(&over, 1 + d);
    let reason = results
        .iter()
        .find_map(|b| b.reason.as_deref())
        .map(|r| format!(" ({})", words(r, 90)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} {:>4} {rate:>20} {over:>12}  {}{apart}{reason}",
        pad(name, 30, true),
        means.len(),
        status.as_str()
    );
}

/// The mean overhead per event; at or below zero the benchmark ran no
/// slower than its baseline, within the noise: no cost to show.
fn overhead_cell(over: &[f64], digits: usize) -> String {
    match stats::mean(over) {
        _ if over.is_empty() => String::new(),
        m if m <= 0.0 => "\u{2264}0 (noise)".into(),
        m => format!("{m:.digits$}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_negative_cost_and_no_word_cut_in_two() {
        assert_eq!(overhead_cell(&[-1039.5], 1), "\u{2264}0 (noise)");
        assert_eq!(overhead_cell(&[12.34], 1), "12.3");
        assert_eq!(overhead_cell(&[], 1), "");
        let r =
            "attach: failed to attach kprobe_multi to bpf_fentry_test1: Operation not supported";
        assert_eq!(words(r, 30), "attach: failed to attach\u{2026}");
    }

    #[test]
    fn one_cpu_is_not_cpus() {
        let mut set: RunSet = serde_json::from_value(serde_json::json!({
            "schema_version": 1,
            "kernel": {"spec": "k", "path": "", "release": "6.1.0"},
            "vm": {"arch": "x86_64", "accel": "tcg", "cpus": 1, "memory": "1G", "append": ""},
            "runs": []
        }))
        .unwrap();
        assert!(header(&set).contains(", 1 CPU, "), "{}", header(&set));
        set.vm.cpus = 2;
        assert!(header(&set).contains(", 2 CPUs, "), "{}", header(&set));
    }
}
