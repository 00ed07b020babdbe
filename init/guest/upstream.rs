//! The lines upstream's bench prints (tools/testing/selftests/bpf/bench.c),
//! byte for byte, so that scripts which cut them (`tail -n1 | cut -d'('
//! -f1`, run_common.sh's sed) read trig-init's too. Each family reports
//! as upstream's does ([`Reporter`]): hits and drops
//! (`hits_drops_report_*`; drops only where a family counts them, the
//! Bloom filter's), throughput and latency (`ops_report_*`), a Bloom
//! filter's false hits (`false_hits_report_*`), the hash maps' timed runs
//! or local storage's important hits (`local_storage_report_*`).

use crate::registry::{Family, Reporter, Runner};
use trig_schema::{stats, BenchResult, Sample, Summary};

/// Why `-c N` is refused, in the words of the family's upstream bench:
/// its validate() or, for a family without a consumer thread, the
/// harness's setup.
pub fn no_consumers(family: &Family) -> &'static str {
    match family.runner {
        Runner::Strncmp => "strncmp benchmark doesn't support consumer!",
        Runner::Count => "benchmark doesn't support consumers!",
        Runner::Bloom => "The bloom filter benchmarks do not support consumer",
        Runner::LpmTrie => "benchmark doesn't support consumer",
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
/// came against its period, in µs, and its rates. Upstream's period is
/// always a second; a fractional `-d` samples more often (sampler).
/// None where upstream prints no progress (the hash map benchmarks).
pub fn iter(
    iter: usize,
    late_us: f64,
    s: &Sample,
    producers: usize,
    report: Reporter,
) -> Option<String> {
    let (hits, drops) = split(s);
    let head = iter_hits(iter, late_us, hits, producers);
    Some(match report {
        Reporter::Hits => format!(
            "{head}, drops {drops:8.3}M/s, total operations {:8.3}M/s",
            s.mps
        ),
        Reporter::Ops => head,
        Reporter::FalseHits => {
            let total = s.bpf + s.false_hits;
            format!(
                "Iter {iter:3} ({late_us:7.3}us): {} false hits of {total} total operations. \
                 Percentage = {} %",
                s.false_hits,
                percent(s.false_hits, total)
            )
        }
        Reporter::LocalStorage => format!(
            "Iter {iter:3} ({late_us:7.3}us): hits {:8.3}M/s important_hits {:8.3}M/s",
            s.mps,
            s.important_mps()
        ),
        Reporter::TimedOps | Reporter::TimedFrees => {
            iter_rate(iter, late_us, s.timed_mps(), producers, Scale::of(report))
        }
        Reporter::HtabMem => format!(
            "Iter {iter:3} ({late_us:7.3}us): per-prod-op {:7.2}k/s, memory usage {:7.2}MiB",
            per_producer_k(s, producers),
            mib(s.memory_bytes)
        ),
        Reporter::FullUpdate | Reporter::Lookup | Reporter::Timing => return None,
    })
}

/// A producer's operations a second in a sample, thousands (htab-mem's
/// per-prod-op).
fn per_producer_k(s: &Sample, producers: usize) -> f64 {
    s.mps * 1e3 / producers.max(1) as f64
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}

/// A sample's rate split as upstream's reports split it: hits and drops,
/// M/s (the drops' share of the events BPF counted).
fn split(s: &Sample) -> (f64, f64) {
    let drops = s.share_mps(s.drops);
    (s.mps - drops, drops)
}

/// `part` of `total` in percent as upstream computes it (in single
/// precision) and prints it (`%2.2f`, glibc's `-nan` of nothing).
fn percent(part: u64, total: u64) -> String {
    let p = part as f32 / total as f32 * 100.0;
    match p.is_nan() {
        true => "-nan".into(),
        false => format!("{:2.2}", f64::from(p)),
    }
}

/// How upstream's reports scale a rate and a latency
/// (`frac_second_report_*`'s divisors): millions a second and ns an
/// operation, or, for lpm-trie-free's frees, thousands and ms.
#[derive(Debug, Clone, Copy)]
struct Scale {
    per_million: f64,
    letter: char,
    ns_per_unit: f64,
    unit: &'static str,
}

impl Scale {
    const MILLIONS: Scale = Scale {
        per_million: 1.0,
        letter: 'M',
        ns_per_unit: 1.0,
        unit: "ns",
    };

    fn of(report: Reporter) -> Scale {
        match report {
            Reporter::TimedFrees => Scale {
                per_million: 1e3,
                letter: 'K',
                ns_per_unit: 1e6,
                unit: "ms",
            },
            _ => Scale::MILLIONS,
        }
    }
}

/// The head of an `Iter` line, which `run -v` prints (shorter on the
/// console, where a guest writes it inside the measured windows).
pub fn iter_hits(iter: usize, late_us: f64, mps: f64, producers: usize) -> String {
    iter_rate(iter, late_us, mps, producers, Scale::MILLIONS)
}

/// An `Iter` line's hits, `mps` in the scale's unit.
fn iter_rate(iter: usize, late_us: f64, mps: f64, producers: usize, scale: Scale) -> String {
    let (rate, k) = (mps * scale.per_million, scale.letter);
    format!(
        "Iter {iter:3} ({late_us:7.3}us): hits {rate:8.3}{k}/s ({:7.3}{k}/prod)",
        rate / producers as f64
    )
}

/// The head of the summary of the events' rate, which every consumer of
/// ours shows too (where a family counts drops, its events are every
/// operation: [`summary`] parts them).
pub fn head(s: &Summary, report: Reporter) -> String {
    match report {
        Reporter::Hits | Reporter::FalseHits => format!(
            "Summary: hits {:8.3} \u{b1} {:5.3}M/s ({:7.3}M/prod)",
            s.mean, s.stddev, s.per_producer
        ),
        Reporter::Ops
        | Reporter::FullUpdate
        | Reporter::Lookup
        | Reporter::TimedOps
        | Reporter::TimedFrees
        | Reporter::Timing => {
            let Scale {
                per_million: x,
                letter: k,
                ..
            } = Scale::of(report);
            format!(
                "Summary: throughput {:8.3} \u{b1} {:5.3} {k} ops/s ({:7.3}{k} ops/prod)",
                s.mean * x,
                s.stddev * x,
                s.per_producer * x
            )
        }
        Reporter::LocalStorage => format!(
            "Summary: hits throughput {:8.3} \u{b1} {:5.3} M ops/s",
            s.mean, s.stddev
        ),
        Reporter::HtabMem => format!(
            "Summary: per-prod-op {:7.2} \u{b1} {:7.2}k/s",
            s.per_producer * 1e3,
            s.stddev * 1e3 / s.mean.max(f64::MIN_POSITIVE) * s.per_producer
        ),
    }
}

/// How `-q` and `-a` shape bpf-hashmap-lookup's lines.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terse {
    pub quiet: bool,
    pub affinity: bool,
}

/// The summary of hits and drops (`hits_drops_report_final`), the rate
/// `s` of every operation parted.
fn hits_and_drops(r: &BenchResult, s: &Summary) -> String {
    let measured = r.samples.iter().filter(|s| !s.warmup);
    let (hits, drops): (Vec<f64>, Vec<f64>) = measured.map(split).unzip();
    let (hits, drops) = (stats::summarize(&hits), stats::summarize(&drops));
    let hits = Summary {
        mean: hits.mean,
        stddev: hits.stddev,
        per_producer: hits.mean / r.producers as f64,
        ..s.clone()
    };
    format!(
        "{}, drops {:8.3} \u{b1} {:5.3}M/s, total operations {:8.3} \u{b1} {:5.3}M/s",
        head(&hits, Reporter::Hits),
        drops.mean,
        drops.stddev,
        s.mean,
        s.stddev
    )
}

/// The whole summary, upstream's last lines, of a measured result.
pub fn summary(r: &BenchResult, report: Reporter, terse: Terse) -> Option<String> {
    let s = r.summary.as_ref()?;
    let measured = || r.samples.iter().filter(|s| !s.warmup);
    Some(match report {
        Reporter::Hits => hits_and_drops(r, s),
        // ns an operation a producer, computed as upstream's is
        Reporter::Ops => format!(
            "{}, latency {:8.3} ns/op",
            head(s, report),
            1000.0 / s.mean * r.producers as f64
        ),
        Reporter::FalseHits => {
            let false_hits = measured().map(|s| s.false_hits).sum::<u64>();
            let total = measured().map(|s| s.bpf).sum::<u64>() + false_hits;
            format!(
                "Summary: {false_hits} false hits of {total} total operations. Percentage =  {} %",
                percent(false_hits, total)
            )
        }
        // upstream's latency is not a producer's: it has one
        Reporter::LocalStorage => {
            let important: Vec<f64> = measured().map(Sample::important_mps).collect();
            let important = stats::summarize(&important);
            format!(
                "{}, hits latency {:8.3} ns/op, important_hits throughput {:8.3} \u{b1} {:5.3} M ops/s",
                head(s, report),
                1000.0 / s.mean,
                important.mean,
                important.stddev
            )
        }
        // the result's rate is already the program's timing; a run's
        // latency too, each sample's ns an operation in whole ns first,
        // as upstream's
        Reporter::TimedOps | Reporter::TimedFrees => {
            let latencies: Vec<f64> = measured()
                .map(|s| ((s.timed_s * 1e9).round() as u64 / s.bpf.max(1)) as f64)
                .collect();
            let scale = Scale::of(report);
            format!(
                "{}, latency {:8.3} {}/op",
                head(s, report),
                stats::summarize(&latencies).mean / scale.ns_per_unit / r.producers as f64,
                scale.unit
            )
        }
        Reporter::HtabMem => htab_mem(r),
        Reporter::Timing => timing(&r.bench, r.figures.as_ref()?, r.extra.get("batch_iters")?)?,
        Reporter::FullUpdate | Reporter::Lookup => timed(r, report, terse)?,
    })
}

/// bpf-nop's line (`bpf_bench_timing_report`): each timed run's ns an
/// iteration, those beyond 1.5 interquartile ranges of the quartiles left
/// out (at 8 runs or more), their median, deviation and 99th percentile.
fn timing(name: &str, figures: &trig_schema::Figures, iters: &str) -> Option<String> {
    let iters: f64 = iters.parse().ok()?;
    let mut ops: Vec<f64> = figures
        .timed_runs
        .iter()
        .flat_map(|c| c.ns.iter().filter(|&&ns| ns > 0))
        .map(|&ns| ns as f64 / iters)
        .collect();
    if ops.is_empty() {
        return Some("No timing samples collected.".into());
    }
    ops.sort_by(f64::total_cmp);
    let n = ops.len();
    if n >= 8 {
        let (q1, q3) = (ops[n / 4], ops[3 * n / 4]);
        let (lo, hi) = (q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1));
        ops.retain(|&x| (lo..=hi).contains(&x));
    }
    let n = ops.len();
    let deviation = match n {
        1 => 0.0,
        _ => stats::stddev(&ops),
    };
    Some(format!(
        "{name}: median {:.2} ns/op, stddev {deviation:.2}, p99 {:.2} ({n} samples)",
        ops[n / 2],
        ops[(n * 99 / 100).min(n - 1)]
    ))
}

/// htab-mem's summary (`htab_mem_report_final`): each producer's
/// operations, the memory charged in the samples, and its peak.
fn htab_mem(r: &BenchResult) -> String {
    let measured = r.samples.iter().filter(|s| !s.warmup);
    let (ops, memory): (Vec<f64>, Vec<f64>) = measured
        .map(|s| (per_producer_k(s, r.producers), mib(s.memory_bytes)))
        .unzip();
    let (ops, memory) = (stats::summarize(&ops), stats::summarize(&memory));
    let peak = r.figures.as_ref().and_then(|f| f.peak_memory_mib);
    format!(
        "Summary: per-prod-op {:7.2} \u{b1} {:7.2}k/s, memory usage {:7.2} \u{b1} {:7.2}MiB, \
         peak memory usage {:7.2}MiB",
        ops.mean,
        ops.stddev,
        memory.mean,
        memory.stddev,
        peak.unwrap_or(0.0)
    )
}

/// The hash map benchmarks' lines, a CPU each, from the program's timed
/// runs: the last one's updates a second (full update), or the mean of
/// the lookups a second of each run and twice their deviation.
fn timed(r: &BenchResult, report: Reporter, terse: Terse) -> Option<String> {
    let runs = &r.figures.as_ref()?.timed_runs;
    let ops: u64 = r.extra.get("nr_loops")?.parse().ok()?;
    let lines: Vec<String> = runs
        .iter()
        .filter_map(|c| {
            let last = *c.ns.last()?;
            Some(match report {
                Reporter::Lookup => lookup_line(c.cpu, &c.ns, ops, terse),
                _ => format!(
                    "{}:hash_map_full_perf {} events per sec",
                    c.cpu,
                    ops * 1_000_000_000 / last.max(1)
                ),
            })
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// One CPU's line of bpf-hashmap-lookup, as upstream computes it: the
/// lookups a second of each run in whole numbers first.
fn lookup_line(cpu: usize, times: &[u64], ops: u64, terse: Terse) -> String {
    let events: Vec<f64> = times
        .iter()
        .map(|&t| (ops * 1_000_000_000 / t.max(1)) as f64 / 1e6)
        .collect();
    let n = events.len();
    let mean = events.iter().sum::<f64>() / n as f64;
    let deviation = stats::stddev(&events);
    let deviation = if deviation.is_nan() { 0.0 } else { deviation };
    let mean_ms = times.iter().sum::<u64>() / n as u64 / 1_000_000;
    match terse {
        Terse {
            quiet: true,
            affinity: true,
        } => format!("{mean:.3}"),
        Terse { quiet: true, .. } => format!("cpu{cpu:02} {mean:.3}"),
        _ => format!(
            "cpu{cpu:02}: lookup {mean:.3}M \u{b1} {:.3}M events/sec (approximated from {n} samples of ~{mean_ms}ms)",
            2.0 * deviation
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_schema::Better;

    fn sample(mps: f64) -> Sample {
        Sample {
            mps,
            interval_s: 1.0,
            ..Sample::default()
        }
    }

    /// A measured result of `producers` at rates `mps`, each sample with
    /// `events`, `drops` and `false_hits`.
    fn result(mps: &[f64], producers: usize, counts: (u64, u64, u64)) -> BenchResult {
        let (bpf, drops, false_hits) = counts;
        let samples: Vec<Sample> = mps
            .iter()
            .map(|&m| Sample {
                bpf,
                drops,
                false_hits,
                ..sample(m)
            })
            .collect();
        let spread = stats::summarize(mps);
        BenchResult {
            summary: Some(Summary {
                mean: spread.mean,
                stddev: spread.stddev,
                per_producer: spread.mean / producers as f64,
                cv: spread.cv,
                samples: spread.n,
            }),
            samples,
            ..BenchResult::new("b", "b", "f", producers, Better::Higher)
        }
    }

    #[test]
    fn lines_are_upstreams_to_the_byte() {
        // as upstream's printf formats them (bench.c's hits_drops_*)
        assert_eq!(
            iter(0, 75.486, &sample(1.0221), 1, Reporter::Hits).unwrap(),
            "Iter   0 ( 75.486us): hits    1.022M/s (  1.022M/prod), drops    0.000M/s, total operations    1.022M/s"
        );
        assert_eq!(
            iter(12, -3.0, &sample(2.5), 8, Reporter::Hits).unwrap(),
            "Iter  12 ( -3.000us): hits    2.500M/s (  0.312M/prod), drops    0.000M/s, total operations    2.500M/s"
        );
        let r = result(&[2.339, 2.385, 2.431], 1, (0, 0, 0));
        let line = summary(&r, Reporter::Hits, Terse::default()).unwrap();
        assert_eq!(
            line,
            "Summary: hits    2.385 \u{b1} 0.046M/s (  2.385M/prod), drops    0.000 \u{b1} 0.000M/s, total operations    2.385 \u{b1} 0.046M/s"
        );
        // what run_bench_*.sh cut out of it: the total, then the per-producer
        let total = line.split('(').next().unwrap();
        let fields: Vec<&str> = total.split(' ').collect();
        assert_eq!(fields[2..].join(" "), "   2.385 \u{b1} 0.046M/s ");
        // ops_report_*: bpf-loop's, as run_common.sh's ops() reads it
        assert_eq!(
            iter(3, 12.5, &sample(40.0), 4, Reporter::Ops).unwrap(),
            "Iter   3 ( 12.500us): hits   40.000M/s ( 10.000M/prod)"
        );
        let ops = result(&[39.75, 40.0, 40.25], 4, (0, 0, 0));
        assert_eq!(
            summary(&ops, Reporter::Ops, Terse::default()).unwrap(),
            "Summary: throughput   40.000 \u{b1} 0.250 M ops/s ( 10.000M ops/prod), latency  100.000 ns/op"
        );
        assert_eq!(
            setting_up("trig-base"),
            "Setting up benchmark 'trig-base'..."
        );
        assert_eq!(started("trig-base"), "Benchmark 'trig-base' started.");
    }

    #[test]
    fn timed_lines_are_upstreams_a_cpu_each() {
        let mut r = result(&[2.5], 1, (0, 0, 0));
        r.extra.insert("nr_loops".into(), "10000".into());
        r.figures = Some(trig_schema::Figures {
            timed_runs: vec![
                trig_schema::TimedRuns {
                    cpu: 0,
                    ns: vec![4_000_000, 3_742_583],
                },
                trig_schema::TimedRuns {
                    cpu: 3,
                    ns: vec![5_000_000],
                },
            ],
            ..Default::default()
        });
        // the last run of each CPU, in whole events a second
        assert_eq!(
            summary(&r, Reporter::FullUpdate, Terse::default()).unwrap(),
            "0:hash_map_full_perf 2671951 events per sec\n3:hash_map_full_perf 2000000 events per sec"
        );
        // every run's, their mean and twice their deviation
        assert_eq!(
            summary(&r, Reporter::Lookup, Terse::default()).unwrap(),
            "cpu00: lookup 2.586M \u{b1} 0.243M events/sec (approximated from 2 samples of ~3ms)\n\
             cpu03: lookup 2.000M \u{b1} 0.000M events/sec (approximated from 1 samples of ~5ms)"
        );
        let quiet = |affinity| Terse {
            quiet: true,
            affinity,
        };
        assert_eq!(
            summary(&r, Reporter::Lookup, quiet(false)).unwrap(),
            "cpu00 2.586\ncpu03 2.000"
        );
        assert_eq!(
            summary(&r, Reporter::Lookup, quiet(true)).unwrap(),
            "2.586\n2.000"
        );
    }

    #[test]
    fn local_storage_lines_are_upstreams() {
        // 1000 gets a sample, 100 of the first map
        let s = Sample {
            bpf: 1000,
            important_hits: 100,
            ..sample(5.0)
        };
        assert_eq!(
            iter(2, 40.0, &s, 1, Reporter::LocalStorage).unwrap(),
            "Iter   2 ( 40.000us): hits    5.000M/s important_hits    0.500M/s"
        );
        let mut r = result(&[4.0, 6.0], 1, (1000, 0, 0));
        for s in &mut r.samples {
            s.important_hits = 250;
        }
        assert_eq!(
            summary(&r, Reporter::LocalStorage, Terse::default()).unwrap(),
            "Summary: hits throughput    5.000 \u{b1} 1.414 M ops/s, hits latency  200.000 ns/op, \
             important_hits throughput    1.250 \u{b1} 0.354 M ops/s"
        );
    }

    #[test]
    fn timed_lines_are_upstreams_frac_second_ones() {
        // 1000 operations the program timed at 2 ms, in a 50 ms interval
        let s = Sample {
            bpf: 1000,
            timed_s: 0.002,
            ..sample(0.02)
        };
        assert_eq!(
            iter(1, 3.0, &s, 1, Reporter::TimedOps).unwrap(),
            "Iter   1 (  3.000us): hits    0.500M/s (  0.500M/prod)"
        );
        // the rates the program timed, the result's (matrix::record):
        // 0.5 and 0.4 M/s; 2000 and 2500 ns an operation
        let mut r = result(&[0.5, 0.4], 1, (1000, 0, 0));
        r.samples[0].timed_s = 0.002;
        r.samples[1].timed_s = 0.0025;
        assert_eq!(
            summary(&r, Reporter::TimedOps, Terse::default()).unwrap(),
            "Summary: throughput    0.450 \u{b1} 0.071 M ops/s (  0.450M ops/prod), latency 2250.000 ns/op"
        );
    }

    #[test]
    fn frees_are_upstreams_thousands_and_ms() {
        // 3 tries freed in 6 ms of the program's timing: 0.5K/s
        let s = Sample {
            bpf: 3,
            timed_s: 0.006,
            ..sample(0.02)
        };
        assert_eq!(
            iter(4, 12.5, &s, 1, Reporter::TimedFrees).unwrap(),
            "Iter   4 ( 12.500us): hits    0.500K/s (  0.500K/prod)"
        );
        // 2 ms and 2.5 ms a free: 0.5 and 0.4 K/s, upstream's latency the
        // mean of each sample's whole ns a free, in ms
        let mut r = result(&[0.0005, 0.0004], 1, (3, 0, 0));
        r.samples[0].timed_s = 0.006;
        r.samples[1].timed_s = 0.0075;
        assert_eq!(
            summary(&r, Reporter::TimedFrees, Terse::default()).unwrap(),
            "Summary: throughput    0.450 \u{b1} 0.071 K ops/s (  0.450K ops/prod), latency    2.250 ms/op"
        );
    }

    #[test]
    fn drops_and_false_hits_are_parted_as_upstream_parts_them() {
        // a hash map's lookups: 1024 events a sample, 1000 of them drops
        let s = Sample {
            bpf: 1024,
            drops: 1000,
            false_hits: 3,
            ..sample(10.24)
        };
        assert_eq!(
            iter(1, 0.5, &s, 2, Reporter::Hits).unwrap(),
            "Iter   1 (  0.500us): hits    0.240M/s (  0.120M/prod), drops   10.000M/s, total operations   10.240M/s"
        );
        // upstream's total counts the false hits twice, as drops and apart
        assert_eq!(
            iter(1, 0.5, &s, 2, Reporter::FalseHits).unwrap(),
            "Iter   1 (  0.500us): 3 false hits of 1027 total operations. Percentage = 0.29 %"
        );
        let r = result(&[10.24, 10.24], 1, (1024, 1000, 3));
        assert_eq!(
            summary(&r, Reporter::Hits, Terse::default()).unwrap(),
            "Summary: hits    0.240 \u{b1} 0.000M/s (  0.240M/prod), drops   10.000 \u{b1} 0.000M/s, total operations   10.240 \u{b1} 0.000M/s"
        );
        assert_eq!(
            summary(&r, Reporter::FalseHits, Terse::default()).unwrap(),
            "Summary: 6 false hits of 2054 total operations. Percentage =  0.29 %"
        );
        // the hash map benchmarks print no progress
        assert_eq!(iter(0, 0.0, &s, 1, Reporter::Lookup), None);
        // nothing counted: glibc's NaN, as upstream's would print
        assert!(iter(0, 0.0, &sample(0.0), 1, Reporter::FalseHits)
            .unwrap()
            .ends_with("Percentage = -nan %"));
    }

    #[test]
    fn htab_mem_lines_are_upstreams_and_its_scripts_read_them() {
        // 8 producers, 64,000 operations a second each; 2.5 MiB charged
        let s = Sample {
            memory_bytes: 5 * 524_288,
            ..sample(0.512)
        };
        assert_eq!(
            iter(4, 10.5, &s, 8, Reporter::HtabMem).unwrap(),
            "Iter   4 ( 10.500us): per-prod-op   64.00k/s, memory usage    2.50MiB"
        );
        let mut r = result(&[0.504, 0.52], 8, (0, 0, 0));
        r.samples[0].memory_bytes = 2 * 1_048_576;
        r.samples[1].memory_bytes = 4 * 1_048_576;
        r.figures = Some(trig_schema::Figures::memory(&[], Some(5 * 1_048_576)));
        let line = summary(&r, Reporter::HtabMem, Terse::default()).unwrap();
        assert_eq!(
            line,
            "Summary: per-prod-op   64.00 \u{b1}    1.41k/s, memory usage    3.00 \u{b1}    1.41MiB, \
             peak memory usage    5.00MiB"
        );
        // run_bench_htab_mem.sh's htab_mem(): its three seds
        let after = |key: &str| line.split(key).nth(1).unwrap().trim_start().to_string();
        assert!(after(" per-prod-op").starts_with("64.00 \u{b1}    1.41k/s"));
        assert!(after(" memory usage").starts_with("3.00 \u{b1}    1.41MiB"));
        assert!(after(" peak memory usage").starts_with("5.00MiB"));
    }

    #[test]
    fn timing_lines_are_upstreams_outliers_left_out() {
        // runs of 1000 iterations: 1 ns each but one run 40 times as slow
        let mut ns: Vec<u64> = (0..99).map(|i| 1_000 + i % 3).collect();
        ns.push(40_000);
        let figures = trig_schema::Figures {
            timed_runs: vec![trig_schema::TimedRuns { cpu: 0, ns }],
            ..Default::default()
        };
        assert_eq!(
            timing("bpf-nop", &figures, "1000").unwrap(),
            "bpf-nop: median 1.00 ns/op, stddev 0.00, p99 1.00 (99 samples)"
        );
        assert_eq!(
            timing("bpf-nop", &trig_schema::Figures::default(), "1000").unwrap(),
            "No timing samples collected."
        );
    }
}
