//! The summary table of a kernel's runs.

use crate::outside::text::{line, pad, words};
use std::fmt::Write;
use trig_schema::stats;
use trig_schema::{BenchResult, Meter, Report, RunRecord, RunSet, Status, Timeline};

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
    if let Some(table) = super::contention::table(set) {
        out.push_str(&table);
    }
    if let Some(line) = time_line(set) {
        out.push_str(&line);
    }
    out
}

/// A boot's wall time by part: to the first benchmark, each family's
/// benchmarks (group, count, seconds), the report and power-off; of a run
/// split over boots side by side, the boots' (`split`, each family's
/// seconds summed over them).
struct BootParts {
    wall: f64,
    first: f64,
    groups: Vec<(String, usize, f64)>,
    end: f64,
    split: usize,
}

/// Where a run's time went: its boot's, or the mean of its parts' with
/// their families' seconds summed (every part must have its timeline).
fn boot_parts(run: &RunRecord) -> Option<BootParts> {
    let report = run.report.as_ref();
    if run.parts.is_empty() {
        return timeline_parts(run.timeline.as_ref()?, run.wall_s, report);
    }
    let parts = run
        .parts
        .iter()
        .map(|p| timeline_parts(p.boot.timeline.as_ref()?, p.boot.wall_s, report))
        .collect::<Option<Vec<BootParts>>>()?;
    let n = parts.len() as f64;
    let mut groups: Vec<(String, usize, f64)> = Vec::new();
    for (g, count, secs) in parts.iter().flat_map(|p| &p.groups) {
        match groups.iter_mut().find(|(have, _, _)| have == g) {
            Some(entry) => (entry.1, entry.2) = (entry.1 + count, entry.2 + secs),
            None => groups.push((g.clone(), *count, *secs)),
        }
    }
    Some(BootParts {
        wall: run.wall_s,
        first: parts.iter().map(|p| p.first).sum::<f64>() / n,
        groups,
        end: parts.iter().map(|p| p.end).sum::<f64>() / n,
        split: parts.len(),
    })
}

/// Where a boot's time went, from its timeline (the host's clock): only
/// a boot whose report came, as a boot cut short spent its last part
/// waiting.
fn timeline_parts(timeline: &Timeline, wall: f64, report: Option<&Report>) -> Option<BootParts> {
    let first = timeline.starts.first()?.1;
    let matrix_end = timeline.report_s?;
    let group = |name: &str| {
        let results = report.map(|r| r.results.as_slice());
        let found = results.unwrap_or_default().iter().find(|b| b.name == name);
        found.map_or_else(|| "other".to_string(), |b| b.group.clone())
    };
    let mut groups: Vec<(String, usize, f64)> = Vec::new();
    for (k, (name, t)) in timeline.starts.iter().enumerate() {
        let until = timeline.starts.get(k + 1).map_or(matrix_end, |next| next.1);
        let g = group(name);
        match groups.iter_mut().find(|(have, _, _)| *have == g) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 += until - t;
            }
            None => groups.push((g, 1, until - t)),
        }
    }
    Some(BootParts {
        wall,
        first,
        groups,
        end: wall - matrix_end,
        split: 1,
    })
}

/// `time a boot: 64.7 s: 11.8 s to the first benchmark, trigger 47 in
/// 40.1 s, ..., 0.4 s report and power-off`, the mean over the boots that
/// have a timeline (the host's clock: where a boot's time goes).
fn time_line(set: &RunSet) -> Option<String> {
    let boots: Vec<BootParts> = set.runs.iter().filter_map(boot_parts).collect();
    boots.first()?;
    let n = boots.len() as f64;
    let mean = |f: &dyn Fn(&BootParts) -> f64| boots.iter().map(f).sum::<f64>() / n;
    // every boot's families, in the order they first ran
    let mut families: Vec<(&str, usize)> = Vec::new();
    for (g, count, _) in boots.iter().flat_map(|b| &b.groups) {
        if !families.iter().any(|(have, _)| have == g) {
            families.push((g, *count));
        }
    }
    let groups: Vec<String> = families
        .iter()
        .map(|(g, count)| {
            let secs =
                mean(&|b: &BootParts| b.groups.iter().filter(|x| x.0 == *g).map(|x| x.2).sum());
            format!("{} {count} in {secs:.1} s", words(g, 16))
        })
        .collect();
    // a split run's parts: each one's start and end, their benchmarks' seconds summed
    let split = boots.iter().map(|b| b.split).max().unwrap_or(1);
    let how = match (boots.len(), split) {
        (1, 1) => String::new(),
        (n, 1) => format!(" (mean of {n})"),
        (1, s) => format!(" (split over {s} boots side by side, their seconds summed)"),
        (n, s) => {
            format!(" (mean of {n}, split over {s} boots side by side, their seconds summed)")
        }
    };
    Some(format!(
        "time a boot{how}: {:.1} s: {:.1} s to the first benchmark, {}, {:.1} s report and power-off\n",
        mean(&|b| b.wall),
        mean(&|b| b.first),
        groups.join(", "),
        mean(&|b| b.end)
    ))
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
        if set.vm.icount_shift > 0 {
            let _ = writeln!(
                out,
                "note: --icount-shift {0}: an instruction is {1} ns of guest time, the timer \
                 ticks {1} times as often an instruction as at shift 0",
                set.vm.icount_shift,
                1u64 << set.vm.icount_shift
            );
        }
    } else if set.vm.accel == "tcg" {
        let _ = writeln!(
            out,
            "note: TCG emulation; compare ratios and kernels, not absolute rates"
        );
    }
    let _ = writeln!(
        out,
        "{:<w$} {:>4} {:>20} {:>12}  STATUS",
        "BENCHMARK",
        "RUNS",
        format!("{} (mean ± sd)", meter.rate_unit()),
        format!("{}+", meter.cost_unit()),
        w = trig_schema::NAME_WIDTH
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
    let over: Vec<f64> = results
        .iter()
        .filter_map(|b| b.overhead_ns.as_ref().map(|o| o.ns_per_event))
        .collect();
    let status = results
        .iter()
        .map(|b| b.status)
        .find(|s| *s != Status::Ok)
        .unwrap_or(Status::Ok);
    let rate = rate_cell(&results, &means, 3 + d);
    let apart = boots_apart(meter, &means);
    let over = overhead_cell(meter, &over, 1 + d);
    let reason = results
        .iter()
        .find_map(|b| b.reason.as_deref())
        .map(|r| format!(" ({})", words(r, 90)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} {:>4} {rate:>20} {over:>12}  {}{apart}{reason}",
        pad(name, trig_schema::NAME_WIDTH, true),
        means.len(),
        status.as_str()
    );
}

/// The mean rate of the boots' `means` ± their spread: across boots when
/// there are several, else within the boot; `-` when none measured.
fn rate_cell(results: &[&BenchResult], means: &[f64], digits: usize) -> String {
    if means.is_empty() {
        return "-".to_string();
    }
    let sd = if means.len() > 1 {
        stats::stddev(means)
    } else {
        results
            .iter()
            .find_map(|b| b.summary.as_ref().map(|s| s.stddev))
            .unwrap_or(0.0)
    };
    format!("{:.*} ± {:.*}", digits, stats::mean(means), digits, sd)
}

/// Under icount boots should agree to the last digits: how far apart
/// they were, which is the meter's determinism.
fn boots_apart(meter: Meter, means: &[f64]) -> String {
    match (meter, means.len()) {
        (Meter::Icount, 2..) => {
            let (lo, hi) = means
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &m| (l.min(m), h.max(m)));
            format!(
                " (boots {:.4}% apart)",
                (hi - lo) / stats::mean(means) * 100.0
            )
        }
        _ => String::new(),
    }
}

/// The mean overhead per event. Under the time meter, at or below zero
/// the benchmark ran no slower than its baseline, within the noise: no
/// cost to show; instructions have no noise, and fewer than the
/// baseline's are a saving (a Bloom filter's in front of a hash map).
fn overhead_cell(meter: Meter, over: &[f64], digits: usize) -> String {
    match stats::mean(over) {
        _ if over.is_empty() => String::new(),
        m if m <= 0.0 && meter == Meter::Time => "\u{2264}0 (noise)".into(),
        m => format!("{m:.digits$}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_negative_cost_and_no_word_cut_in_two() {
        assert_eq!(
            overhead_cell(Meter::Time, &[-1039.5], 1),
            "\u{2264}0 (noise)"
        );
        assert_eq!(overhead_cell(Meter::Icount, &[-1039.5], 1), "-1039.5");
        assert_eq!(overhead_cell(Meter::Time, &[12.34], 1), "12.3");
        assert_eq!(overhead_cell(Meter::Time, &[], 1), "");
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
