//! The lines upstream's bench prints (tools/testing/selftests/bpf/bench.c),
//! byte for byte, so that scripts which cut them (`tail -n1 | cut -d'('
//! -f1`, run_common.sh's sed) read trig-init's too. Each family reports
//! as upstream's does ([`Reporter`]): hits and drops
//! (`hits_drops_report_*`; drops are always 0 here, as there), or
//! throughput and latency (`ops_report_*`).

use crate::registry::{Family, Reporter, Runner};
use trig_schema::Summary;

/// Why `-c N` is refused, in the words of the family's upstream bench:
/// its validate() or, for a family without a consumer thread, the
/// harness's setup.
pub fn no_consumers(family: &Family) -> &'static str {
    match family.runner {
        Runner::Strncmp => "strncmp benchmark doesn't support consumer!",
        Runner::Count => "benchmark doesn't support consumers!",
        _ => "benchmark doesn't support consumer!",
    }
}

/// Before a benchmark's setup (not under `-q`).
pub fn setting_up(bench: &str) -> String {
    format!("Setting up benchmark '{bench}'...")
}

/// Once its producers run (not under `-q`).
pub fn started(bench: &str) -> String {
    format!("Benchmark '{bench}' started.")
}

/// Sample `iter` (warm-up ones included, counted from 0): how late it
/// came against its period, in µs, and the rate. Upstream's period is
/// always a second; a fractional `-d` samples more often (sampler).
pub fn iter(iter: usize, late_us: f64, mps: f64, producers: usize, report: Reporter) -> String {
    let head = iter_hits(iter, late_us, mps, producers);
    match report {
        Reporter::Hits => format!(
            "{head}, drops {:8.3}M/s, total operations {mps:8.3}M/s",
            0.0
        ),
        Reporter::Ops => head,
    }
}

/// The head of an `Iter` line, which `run -v` prints (shorter on the
/// console, where a guest writes it inside the measured windows).
pub fn iter_hits(iter: usize, late_us: f64, mps: f64, producers: usize) -> String {
    format!(
        "Iter {iter:3} ({late_us:7.3}us): hits {mps:8.3}M/s ({:7.3}M/prod)",
        mps / producers as f64
    )
}

/// The head of the summary, which every consumer of ours shows too.
pub fn head(s: &Summary, report: Reporter) -> String {
    match report {
        Reporter::Hits => format!(
            "Summary: hits {:8.3} \u{b1} {:5.3}M/s ({:7.3}M/prod)",
            s.mean, s.stddev, s.per_producer
        ),
        Reporter::Ops => format!(
            "Summary: throughput {:8.3} \u{b1} {:5.3} M ops/s ({:7.3}M ops/prod)",
            s.mean, s.stddev, s.per_producer
        ),
    }
}

/// The whole summary line, upstream's last, of a run with `producers`.
pub fn summary(s: &Summary, report: Reporter, producers: usize) -> String {
    match report {
        Reporter::Hits => format!(
            "{}, drops {:8.3} \u{b1} {:5.3}M/s, total operations {:8.3} \u{b1} {:5.3}M/s",
            head(s, report),
            0.0,
            0.0,
            s.mean,
            s.stddev
        ),
        // ns an operation a producer, computed as upstream's is
        Reporter::Ops => format!(
            "{}, latency {:8.3} ns/op",
            head(s, report),
            1000.0 / s.mean * producers as f64
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_upstreams_to_the_byte() {
        // as upstream's printf formats them (bench.c's hits_drops_*)
        assert_eq!(
            iter(0, 75.486, 1.0221, 1, Reporter::Hits),
            "Iter   0 ( 75.486us): hits    1.022M/s (  1.022M/prod), drops    0.000M/s, total operations    1.022M/s"
        );
        assert_eq!(
            iter(12, -3.0, 2.5, 8, Reporter::Hits),
            "Iter  12 ( -3.000us): hits    2.500M/s (  0.312M/prod), drops    0.000M/s, total operations    2.500M/s"
        );
        let s = Summary {
            mean: 2.385,
            stddev: 0.046,
            per_producer: 2.385,
            cv: 0.046 / 2.385,
            samples: 5,
        };
        assert_eq!(
            summary(&s, Reporter::Hits, 1),
            "Summary: hits    2.385 \u{b1} 0.046M/s (  2.385M/prod), drops    0.000 \u{b1} 0.000M/s, total operations    2.385 \u{b1} 0.046M/s"
        );
        // what run_bench_*.sh cut out of it: the total, then the per-producer
        let total = summary(&s, Reporter::Hits, 1);
        let total = total.split('(').next().unwrap();
        let fields: Vec<&str> = total.split(' ').collect();
        assert_eq!(fields[2..].join(" "), "   2.385 \u{b1} 0.046M/s ");
        // ops_report_*: bpf-loop's, as run_common.sh's ops() reads it
        assert_eq!(
            iter(3, 12.5, 40.0, 4, Reporter::Ops),
            "Iter   3 ( 12.500us): hits   40.000M/s ( 10.000M/prod)"
        );
        let ops = Summary {
            mean: 40.0,
            stddev: 0.25,
            per_producer: 10.0,
            cv: 0.25 / 40.0,
            samples: 5,
        };
        assert_eq!(
            summary(&ops, Reporter::Ops, 4),
            "Summary: throughput   40.000 \u{b1} 0.250 M ops/s ( 10.000M ops/prod), latency  100.000 ns/op"
        );
        assert_eq!(
            setting_up("trig-base"),
            "Setting up benchmark 'trig-base'..."
        );
        assert_eq!(started("trig-base"), "Benchmark 'trig-base' started.");
    }
}
