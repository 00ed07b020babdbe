//! `trig-init ab-proof DIR`'s text: what `scripts/proofs/ab-proof.sh` concludes
//! from the comparisons of one `ab` run (`trig_analysis::ab_proof`):
//!
//! - A/A: how many benchmarks compare flags, paired and unpaired, the
//!   largest change, the width of the change intervals, the per-boot CV
//!   against the CV of paired ratios;
//! - the ladder: for each injected benchmark and size, the measured
//!   change of each metric and its verdict; whether exactly the injected
//!   benchmarks were flagged; the smallest change flagged.

use std::collections::BTreeMap;
use std::fmt::Write;
use trig_analysis::ab_proof::AbRun;
use trig_analysis::compare::{BenchComparison, Comparison, Metric, MetricComparison, Verdict};
use trig_schema::stats;

const METRICS: [Metric; 2] = [Metric::Rate, Metric::Overhead];

/// The A/A lines, then the ladder.
pub fn text(run: &AbRun) -> String {
    // benchmark names are the results files'
    crate::outside::text::visible(&(aa(&run.paired, &run.unpaired) + &ladder(&run.rungs)))
        .into_owned()
}

fn is_flagged(v: Verdict) -> bool {
    matches!(v, Verdict::Regressed | Verdict::Improved)
}

/// Flagged benchmarks, each with the metrics its verdict rests on.
fn flagged(c: &Comparison) -> Vec<String> {
    c.benches
        .iter()
        .filter(|b| is_flagged(b.verdict))
        .map(|b| {
            let basis: Vec<&str> = b.basis.iter().map(|m| m.as_str()).collect();
            format!("{} ({})", b.name, basis.join("/"))
        })
        .collect()
}

fn metrics(c: &Comparison, metric: Metric) -> impl Iterator<Item = &MetricComparison> {
    c.benches
        .iter()
        .flat_map(|b| &b.metrics)
        .filter(move |m| m.metric == metric)
}

/// The median of the finite values; None when there are none.
fn median(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = xs.filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| stats::median(&v))
}

/// The CV of NEW / BASE over paired boots; None below two pairs.
fn ratio_cv(m: &MetricComparison) -> Option<f64> {
    let r: Vec<f64> = (m.base.values.iter().zip(&m.new.values))
        .filter(|(b, _)| **b != 0.0)
        .map(|(b, n)| n / b)
        .collect();
    (r.len() > 1).then(|| stats::cv(&r))
}

/// `x` with `digits` decimals (times `scale`), or `-` when there is none.
fn fixed(x: Option<f64>, scale: f64, digits: usize) -> String {
    x.map_or("-".into(), |x| format!("{:.digits$}", x * scale))
}

fn list_or_dash(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(", ")
    }
}

/// The A/A lines: `p` paired, `u` unpaired, both k1 against k2.
fn aa(p: &Comparison, u: &Comparison) -> String {
    let mut out = String::new();
    let judged = p.benches.iter().filter(|b| !b.metrics.is_empty()).count();
    let _ = writeln!(
        out,
        "A/A: {judged} benchmarks judged, {} + {} boots, meter {}, threshold {}%",
        p.base.runs,
        p.new.runs,
        p.meter.as_str(),
        p.limits.threshold_pct
    );
    for metric in METRICS {
        let largest = metrics(p, metric)
            .map(|m| m.change_pct.abs())
            .filter(|c| c.is_finite())
            .reduce(f64::max);
        let _ = writeln!(
            out,
            "  largest A/A change, {}: {}%",
            metric.as_str(),
            fixed(largest, 1.0, 5)
        );
    }
    for (name, c) in [("paired", p), ("unpaired", u)] {
        let width = |metric| median(metrics(c, metric).map(|m| m.ci_pct.1 - m.ci_pct.0));
        let _ = writeln!(
            out,
            "  {name:<8}: flagged {}: {}",
            flagged(c).len(),
            list_or_dash(&flagged(c))
        );
        let _ = writeln!(
            out,
            "            median 95% interval width: rate {} points, overhead {} points",
            fixed(width(Metric::Rate), 1.0, 1),
            fixed(width(Metric::Overhead), 1.0, 1)
        );
    }
    for metric in METRICS {
        if metrics(p, metric).next().is_none() {
            continue;
        }
        let side = median(metrics(p, metric).flat_map(|m| [m.base.cv, m.new.cv]));
        let pair = median(metrics(p, metric).filter_map(ratio_cv));
        let _ = writeln!(
            out,
            "  {}: median per-boot CV {}%, median CV of paired A/A ratios {}%",
            metric.as_str(),
            fixed(side, 100.0, 1),
            fixed(pair, 100.0, 1)
        );
    }
    out
}

/// What a comparison's NEW side had injected into the benchmarks it
/// ran (a filtered run leaves some injected ones out): benchmark to
/// spins.
fn injected(c: &Comparison) -> BTreeMap<String, u64> {
    c.new
        .inject
        .iter()
        .flat_map(|i| i.split(','))
        .filter_map(|i| {
            let (name, spins) = i.split_once(':')?;
            Some((name.to_string(), spins.trim().parse().ok()?))
        })
        .filter(|(name, _)| c.benches.iter().any(|b| &b.name == name))
        .collect()
}

/// One injected benchmark's metric on one rung.
struct Row<'a> {
    name: &'a str,
    spins: u64,
    m: &'a MetricComparison,
}

/// The ladder: a line per rung, then every injected (benchmark, spins,
/// metric), then the smallest change flagged per metric.
fn ladder(rungs: &[(usize, Comparison)]) -> String {
    let mut out = String::new();
    let mut rows: Vec<Row> = Vec::new();
    for (n, c) in rungs {
        let inj = injected(c);
        if inj.is_empty() {
            let releases = c.new.releases.join(", ");
            let _ = writeln!(
                out,
                "k{n} ({releases}): flagged {}",
                list_or_dash(&flagged(c))
            );
            continue;
        }
        rung(&mut out, *n, c, &inj);
        for b in c.benches.iter().filter(|b| inj.contains_key(&b.name)) {
            let spins = inj[&b.name];
            rows.extend(b.metrics.iter().map(|m| Row {
                name: &b.name,
                spins,
                m,
            }));
        }
    }
    rows.sort_by(|a, b| {
        (a.name, a.spins, a.m.metric.as_str()).cmp(&(b.name, b.spins, b.m.metric.as_str()))
    });
    out += "ladder (injected spins per call; change of the median, 95% CI, Wilcoxon p, verdict):\n";
    for r in &rows {
        let m = r.m;
        let ci = if m.ci_pct.0.is_finite() {
            format!("[{:+.2}, {:+.2}]", m.ci_pct.0, m.ci_pct.1)
        } else {
            "[-]".into()
        };
        let p = m.p.map_or("counted".into(), |p| format!("p={p:.3}"));
        let _ = writeln!(
            out,
            "  {} {:>3} spins {:<8} {:+8.3}% {ci:<18} {p} {}",
            crate::outside::text::pad(r.name, 14, true),
            r.spins,
            m.metric.as_str(),
            m.change_pct,
            m.verdict.as_str()
        );
    }
    for metric in METRICS {
        let _ = writeln!(
            out,
            "smallest change flagged ({}): {}",
            metric.as_str(),
            smallest(&rows, metric)
        );
    }
    out
}

/// A rung's headline: were exactly the injected benchmarks flagged, and
/// which others were.
fn rung(out: &mut String, n: usize, c: &Comparison, inj: &BTreeMap<String, u64>) {
    let hits: Vec<&BenchComparison> = c.benches.iter().filter(|b| is_flagged(b.verdict)).collect();
    let mut names: Vec<&str> = hits.iter().map(|b| b.name.as_str()).collect();
    names.sort_unstable();
    let exact = if names.iter().copied().eq(inj.keys().map(String::as_str)) {
        "exactly the injected"
    } else {
        "NOT exactly the injected"
    };
    let mut sizes: Vec<u64> = inj.values().copied().collect();
    sizes.sort_unstable();
    sizes.dedup();
    let sizes: Vec<String> = sizes.iter().map(u64::to_string).collect();
    let _ = writeln!(
        out,
        "k{n} ({} spins): flagged {}: {exact}",
        sizes.join(","),
        hits.len()
    );
    for b in hits.iter().filter(|b| !inj.contains_key(&b.name)) {
        let _ = writeln!(
            out,
            "  NOT injected but flagged in k{n}: {} {}",
            b.name,
            b.verdict.as_str()
        );
    }
}

/// Per injected benchmark, the smallest change of `metric` flagged on
/// any rung.
fn smallest(rows: &[Row], metric: Metric) -> String {
    let mut least: BTreeMap<&str, f64> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.m.metric == metric && is_flagged(r.m.verdict))
    {
        let v = least.entry(r.name).or_insert(f64::INFINITY);
        *v = v.min(r.m.change_pct.abs());
    }
    let pieces: Vec<String> = least.iter().map(|(n, v)| format!("{n} {v:.2}%")).collect();
    if pieces.is_empty() {
        "none".into()
    } else {
        pieces.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_analysis::fixtures::comparison;

    const A: &[(&str, f64)] = &[
        ("rename-base", 1.0),
        ("rename-kprobe", 0.5),
        ("rename-fentry", 0.8),
    ];

    /// A with `rename-kprobe` slowed by `pct` percent and `rename-fentry`
    /// by `fentry_pct`.
    fn slowed(pct: f64, fentry_pct: f64) -> Vec<(&'static str, f64)> {
        vec![
            ("rename-base", 1.0),
            ("rename-kprobe", 0.5 * (1.0 - pct / 100.0)),
            ("rename-fentry", 0.8 * (1.0 - fentry_pct / 100.0)),
        ]
    }

    #[test]
    fn aa_of_identical_boots_flags_nothing() {
        let c = comparison(A, A, None);
        let text = aa(&c, &c);
        assert_eq!(
            text,
            "A/A: 3 benchmarks judged, 1 + 1 boots, meter icount, threshold 0.25%\n\
             \x20 largest A/A change, rate: 0.00000%\n\
             \x20 largest A/A change, overhead: 0.00000%\n\
             \x20 paired  : flagged 0: -\n\
             \x20           median 95% interval width: rate 0.1 points, overhead 0.1 points\n\
             \x20 unpaired: flagged 0: -\n\
             \x20           median 95% interval width: rate 0.1 points, overhead 0.1 points\n\
             \x20 rate: median per-boot CV 0.0%, median CV of paired A/A ratios -%\n\
             \x20 overhead: median per-boot CV 0.0%, median CV of paired A/A ratios -%\n"
        );
    }

    #[test]
    fn the_ladder_finds_exactly_the_injected() {
        let inject = "rename-kprobe:1,rename-fentry:1";
        let small = comparison(A, &slowed(0.1, 2.0), Some(inject));
        let large = comparison(
            A,
            &slowed(3.0, 4.0),
            Some("rename-kprobe:4,rename-fentry:4,trig-rawtp:8"),
        );
        let text = ladder(&[(3, small), (4, large)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0], "k3 (1 spins): flagged 1: NOT exactly the injected",
            "{text}"
        );
        assert_eq!(
            lines[1], "k4 (4 spins): flagged 2: exactly the injected",
            "{text}"
        );
        assert_eq!(
            lines[2],
            "ladder (injected spins per call; change of the median, 95% CI, Wilcoxon p, verdict):"
        );
        // sorted by benchmark, spins, metric; icount has no p
        assert!(
            lines[3].starts_with("  rename-fentry    1 spins overhead "),
            "{text}"
        );
        assert!(
            lines[5].starts_with("  rename-fentry    4 spins overhead "),
            "{text}"
        );
        let k3_rate = lines
            .iter()
            .find(|l| l.contains("rename-kprobe    1 spins rate"))
            .unwrap();
        assert!(
            k3_rate.contains("  -0.100% [-0.15, -0.05]") && k3_rate.ends_with("counted no-change"),
            "{k3_rate}"
        );
        assert_eq!(
            lines[lines.len() - 2],
            "smallest change flagged (rate): rename-fentry 2.00%, rename-kprobe 3.00%"
        );
        assert!(
            lines[lines.len() - 1]
                .starts_with("smallest change flagged (overhead): rename-fentry "),
            "{text}"
        );
    }

    #[test]
    fn a_flagged_benchmark_not_injected_is_named() {
        let c = comparison(A, &slowed(3.0, 3.0), Some("rename-kprobe:2"));
        let text = ladder(&[(3, c)]);
        assert!(text.starts_with("k3 (2 spins): flagged 2: NOT exactly the injected\n  NOT injected but flagged in k3: rename-fentry regressed\n"), "{text}");
        assert!(
            !text.contains("rename-fentry  "),
            "not a ladder row: {text}"
        );
    }

    #[test]
    fn another_kernel_is_a_line_of_its_own() {
        let c = comparison(A, &slowed(5.0, 0.0), None);
        let text = ladder(&[(3, c)]);
        assert!(
            text.starts_with("k3 (6.1.0-test): flagged rename-kprobe (rate/overhead)\nladder"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "smallest change flagged (rate): none\nsmallest change flagged (overhead): none\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn paired_ratios_need_two_pairs() {
        let mut m = comparison(A, A, None).benches[1].metrics[0].clone();
        assert_eq!(ratio_cv(&m), None);
        m.base.values = vec![1.0, 1.0, 0.0];
        m.new.values = vec![1.0, 1.1, 5.0];
        let cv = ratio_cv(&m).unwrap();
        assert!((cv - stats::cv(&[1.0, 1.1])).abs() < 1e-12, "{cv}");
    }
}
