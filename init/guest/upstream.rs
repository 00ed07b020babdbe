//! The lines upstream's bench prints (tools/testing/selftests/bpf/bench.c),
//! byte for byte, so that scripts which cut them (`tail -n1 | cut -d'('
//! -f1`) read trig-init's too. Every family of ours reports as upstream's
//! trigger, rename and strncmp benchmarks do: hits and drops
//! (`hits_drops_report_*`); drops are always 0 here, as there.

use trig_schema::Summary;

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
pub fn iter(iter: usize, late_us: f64, mps: f64, producers: usize) -> String {
    format!(
        "{}, drops {:8.3}M/s, total operations {mps:8.3}M/s",
        iter_hits(iter, late_us, mps, producers),
        0.0
    )
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
pub fn hits(s: &Summary) -> String {
    format!(
        "Summary: hits {:8.3} \u{b1} {:5.3}M/s ({:7.3}M/prod)",
        s.mean, s.stddev, s.per_producer
    )
}

/// The whole summary line, upstream's last.
pub fn summary(s: &Summary) -> String {
    format!(
        "{}, drops {:8.3} \u{b1} {:5.3}M/s, total operations {:8.3} \u{b1} {:5.3}M/s",
        hits(s),
        0.0,
        0.0,
        s.mean,
        s.stddev
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_upstreams_to_the_byte() {
        // as upstream's printf formats them (bench.c's hits_drops_*)
        assert_eq!(
            iter(0, 75.486, 1.0221, 1),
            "Iter   0 ( 75.486us): hits    1.022M/s (  1.022M/prod), drops    0.000M/s, total operations    1.022M/s"
        );
        assert_eq!(
            iter(12, -3.0, 2.5, 8),
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
            summary(&s),
            "Summary: hits    2.385 \u{b1} 0.046M/s (  2.385M/prod), drops    0.000 \u{b1} 0.000M/s, total operations    2.385 \u{b1} 0.046M/s"
        );
        // what run_bench_*.sh cut out of it: the total, then the per-producer
        let total = summary(&s);
        let total = total.split('(').next().unwrap();
        let fields: Vec<&str> = total.split(' ').collect();
        assert_eq!(fields[2..].join(" "), "   2.385 \u{b1} 0.046M/s ");
        assert_eq!(
            setting_up("trig-base"),
            "Setting up benchmark 'trig-base'..."
        );
        assert_eq!(started("trig-base"), "Benchmark 'trig-base' started.");
    }
}
