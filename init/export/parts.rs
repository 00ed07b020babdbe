//! The parts of a comparison that its formats for people share: the
//! headlines, what was compared, the rows of figures and verdicts, the
//! totals, and where the instructions went.

use crate::analysis::compare::{
    movers, BenchComparison, Comparison, Metric, MetricComparison, SideInfo, TestKind, Verdict,
};
use crate::export::text::words;
use crate::report::Meter;
use crate::stats;
use std::fmt::Write;

/// Verdicts in the order that totals list them.
pub const ORDER: [Verdict; 9] = [
    Verdict::Regressed,
    Verdict::Improved,
    Verdict::WithinNoise,
    Verdict::NoChange,
    Verdict::Unstable,
    Verdict::Inconclusive,
    Verdict::Unsupported,
    Verdict::Missing,
    Verdict::Failed,
];

/// What a reader acts on: a regression or an improvement.
pub fn flagged(v: Verdict) -> bool {
    matches!(v, Verdict::Regressed | Verdict::Improved)
}

/// A side in a headline: its commits as `git log --oneline` abbreviates
/// them, else its releases.
fn label(s: &SideInfo) -> String {
    if s.commits.is_empty() {
        return s.releases.join(",");
    }
    let short: Vec<String> = s
        .commits
        .iter()
        .map(|c| c.chars().take(8).collect())
        .collect();
    short.join(",")
}

/// A change in percent, its minus sign typeset.
pub fn signed(pct: f64, digits: usize) -> String {
    format!("{pct:+.digits$}%").replacen('-', "\u{2212}", 1)
}

pub fn pvalue(q: f64) -> String {
    if q < 0.001 {
        "<0.001".into()
    } else {
        format!("{q:.3}")
    }
}

/// The metric a flagged benchmark's verdict rests on (the rate first).
fn basis(b: &BenchComparison) -> Option<&MetricComparison> {
    b.metrics.iter().find(|m| b.basis.contains(&m.metric))
}

fn unit(meter: Meter, metric: Metric) -> &'static str {
    match metric {
        Metric::Rate => meter.rate_unit(),
        Metric::Overhead => meter.cost_unit(),
    }
}

/// One line per flagged benchmark, regressions first, as LKP reports
/// open: "−10.6% regression of trig-kprobe rate, 0.403→0.360 M/s,
/// q=0.029, 4+4 boots, 2f22765d→6b1f5330"; or one line saying that
/// nothing was flagged.
pub fn headlines(c: &Comparison) -> Vec<String> {
    let span = format!("{}\u{2192}{}", label(&c.base), label(&c.new));
    let mut hits: Vec<(&BenchComparison, &MetricComparison)> = c
        .benches
        .iter()
        .filter(|b| flagged(b.verdict))
        .filter_map(|b| Some((b, basis(b)?)))
        .collect();
    if hits.is_empty() {
        return vec![format!(
            "no regression or improvement beyond {}% in {} benchmarks, {span}",
            c.limits.threshold_pct,
            c.benches.len()
        )];
    }
    hits.sort_by_key(|(b, _)| b.verdict);
    hits.iter()
        .map(|(b, m)| {
            let evidence = match (m.q, m.test) {
                (Some(q), TestKind::WelchPerSecond) => format!("q={} (weak)", pvalue(q)),
                (Some(q), _) => format!("q={}", pvalue(q)),
                (None, _) => c.meter.as_str().to_string(),
            };
            let boots = if m.pairs > 0 {
                format!("{} pairs", m.pairs)
            } else {
                format!("{}+{} boots", m.base.values.len(), m.new.values.len())
            };
            format!(
                "{} {} of {} {}, {}\u{2192}{} {}, {evidence}, {boots}, {span}",
                signed(m.change_pct, 1 + c.meter.extra_digits()),
                if b.verdict == Verdict::Regressed {
                    "regression"
                } else {
                    "improvement"
                },
                b.name,
                m.metric.as_str(),
                figure(Some(m), false, c.meter),
                figure(Some(m), true, c.meter),
                unit(c.meter, m.metric)
            )
        })
        .collect()
}

fn side(s: &SideInfo) -> String {
    let mut out = s.releases.join(", ");
    if !s.commits.is_empty() {
        let short: Vec<&str> = s.commits.iter().map(|c| &c[..c.len().min(12)]).collect();
        let _ = write!(out, " @ {}", short.join(", "));
    }
    let _ = write!(
        out,
        " ({} boot{})",
        s.runs,
        if s.runs == 1 { "" } else { "s" }
    );
    if !s.inject.is_empty() {
        let _ = write!(out, " [injected slowdown {}]", s.inject.join(", "));
    }
    out
}

/// What was compared, and how; one line each.
pub fn header(c: &Comparison) -> Vec<String> {
    let s = &c.settings;
    let mut lines = vec![
        format!("BASE: {}", side(&c.base)),
        format!("NEW:  {}", side(&c.new)),
        format!(
            "{} under {}, meter {}, {} CPUs; {}",
            c.new.arch.join("/"),
            c.new.accel.join("/").to_uppercase(),
            c.meter.as_str(),
            c.new
                .cpus
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("/"),
            match (c.meter, c.paired) {
                (Meter::Icount, _) => {
                    "instructions counted: one boot a side decides, against the threshold"
                }
                (Meter::Time, true) => {
                    "interleaved boots paired by round (Wilcoxon signed-rank on paired ratios)"
                }
                (Meter::Time, false) => "unpaired (Mann-Whitney U on per-boot figures)",
            }
        ),
        format!(
            "threshold {}%, alpha {}, CV limit {}%, metrics {}",
            c.limits.threshold_pct,
            s.alpha,
            c.limits.cv_limit * 100.0,
            s.metrics
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join("+")
        ),
    ];
    match c.meter {
        Meter::Icount => lines.push(format!(
            "note: rates are events per 10^9 guest instructions ({}), costs instructions per event; \
             an instruction count does not see cache or TLB misses, lock contention or IPIs",
            Meter::Icount.rate_unit()
        )),
        Meter::Time if c.new.accel.iter().any(|a| a == "tcg") => lines.push(
            "note: TCG emulation; relative changes are meaningful, absolute rates are not".into(),
        ),
        Meter::Time => {}
    }
    if c.meter == Meter::Time && !c.paired && (c.base.runs < 4 || c.new.runs < 4) && c.base.runs > 1
    {
        lines.push(
            "note: fewer than 4 boots per side; Mann-Whitney cannot reach p < 0.05 with so few"
                .into(),
        );
    }
    lines.extend(family(c));
    for d in &c.differences {
        lines.push(format!("WARNING (--force): {d}"));
    }
    lines.extend(c.notes.iter().map(|n| format!("note: {n}")));
    lines
}

/// Under the time meter: how many tests the p-values were adjusted
/// across, and how many boots a lone change would need to be flagged when
/// these could not have been enough.
fn family(c: &Comparison) -> Option<String> {
    let tested: Vec<&MetricComparison> = c
        .benches
        .iter()
        .flat_map(|b| &b.metrics)
        .filter(|m| m.p.is_some())
        .collect();
    if tested.len() < 2 {
        return None;
    }
    // Benjamini–Hochberg's first step: the smallest p must clear alpha / m
    let bar = c.settings.alpha / tested.len() as f64;
    // two significant digits
    let d = (1.0 - bar.log10()).ceil().max(3.0) as usize;
    let mut line = format!(
        "false alarms controlled across {} tests (Benjamini-Hochberg q < alpha); \
         a lone change needs p < {bar:.d$}",
        tested.len()
    );
    let (best, needed) = if c.paired {
        let n = tested.iter().map(|m| m.pairs).max().unwrap_or(0);
        let k = (n..64).find(|&k| stats::wilcoxon_min_p(k) < bar);
        (stats::wilcoxon_min_p(n), k.map(|k| format!("{k} pairs")))
    } else if c.base.runs > 1 && c.new.runs > 1 {
        let k = (2..64).find(|&k| stats::mann_whitney_min_p(k, k) < bar);
        (
            stats::mann_whitney_min_p(c.base.runs, c.new.runs),
            k.map(|k| format!("{k} boots a side")),
        )
    } else {
        return Some(line);
    };
    if let (true, Some(needed)) = (best >= bar, needed) {
        let _ = write!(line, ", which takes {needed} (fewer benchmarks: --filter)");
    }
    Some(line)
}

pub fn figure(m: Option<&MetricComparison>, new: bool, meter: Meter) -> String {
    m.map_or(String::new(), |m| {
        let s = if new { &m.new } else { &m.base };
        let d = meter.extra_digits();
        match m.metric {
            Metric::Rate => format!("{:.*}", 3 + d, s.median),
            Metric::Overhead => format!("{:.*}", 1 + d, s.median),
        }
    })
}

fn change(m: Option<&MetricComparison>, meter: Meter) -> String {
    let d = 1 + meter.extra_digits();
    match m {
        None => String::new(),
        Some(m) if m.change_pct.is_nan() => "-".into(),
        Some(m) if m.ci_pct.0.is_nan() => format!("{:+.*}%", d, m.change_pct),
        Some(m) => format!(
            "{:+.*}% [{:+.*},{:+.*}]",
            d, m.change_pct, d, m.ci_pct.0, d, m.ci_pct.1
        ),
    }
}

pub struct Row {
    pub cells: Vec<String>,
    pub verdict: Verdict,
}

/// The column heads: the benchmark, three per metric compared, q and
/// the verdict.
fn head(c: &Comparison) -> Vec<String> {
    let want = |m: Metric| c.settings.metrics.contains(&m);
    let (rate, cost) = (c.meter.rate_unit(), c.meter.cost_unit());
    let interval = match c.meter {
        Meter::Time => "95% CI",
        Meter::Icount => "A/A bound",
    };
    let mut head = vec!["BENCHMARK".to_string()];
    if want(Metric::Rate) {
        head.extend([
            format!("BASE {rate}"),
            format!("NEW {rate}"),
            format!("RATE CHANGE [{interval}]"),
        ]);
    }
    if want(Metric::Overhead) {
        head.extend([
            format!("BASE {cost}"),
            format!("NEW {cost}"),
            format!("OVERHEAD CHANGE [{interval}]"),
        ]);
    }
    head.extend(["q".into(), "VERDICT".into()]);
    head
}

/// The verdict with what qualifies it: the metrics it rests on when not
/// all, the boots the test lacked, a weak test, and the reason.
fn verdict_cell(b: &BenchComparison) -> String {
    let mut v = b.verdict.as_str().to_string();
    if b.metrics.len() > 1 && !b.basis.is_empty() && b.basis.len() < b.metrics.len() {
        let basis: Vec<&str> = b.basis.iter().map(|m| m.as_str()).collect();
        let _ = write!(v, " ({})", basis.join(","));
    }
    if let Some(n) = b.metrics.iter().filter_map(|m| m.boots_needed).max() {
        let _ = write!(v, " (the test needs {n} boots a side, or pairs)");
    }
    if let Some(m) = b
        .metrics
        .iter()
        .find(|m| m.test == TestKind::WelchPerSecond)
    {
        if b.basis.contains(&m.metric)
            && matches!(b.verdict, Verdict::Regressed | Verdict::Improved)
        {
            v.push_str(" weak");
        }
    }
    if let Some(r) = &b.reason {
        let _ = write!(v, ": {}", words(r, 80));
    }
    v
}

/// One benchmark's row: figures and change per metric compared, the
/// lowest q of the metrics the verdict rests on, and the verdict.
fn row(c: &Comparison, b: &BenchComparison) -> Row {
    let get = |metric| b.metrics.iter().find(|m| m.metric == metric);
    let mut cells = vec![b.name.clone()];
    for metric in [Metric::Rate, Metric::Overhead] {
        if c.settings.metrics.contains(&metric) {
            let m = get(metric);
            cells.extend([
                figure(m, false, c.meter),
                figure(m, true, c.meter),
                change(m, c.meter),
            ]);
        }
    }
    let q = b
        .metrics
        .iter()
        .filter(|m| b.basis.contains(&m.metric))
        .filter_map(|m| m.q)
        .fold(f64::NAN, f64::min);
    cells.push(if q.is_nan() { String::new() } else { pvalue(q) });
    cells.push(verdict_cell(b));
    Row {
        cells,
        verdict: b.verdict,
    }
}

/// The column heads and one row per benchmark, for every format.
pub fn rows(c: &Comparison) -> (Vec<String>, Vec<Row>) {
    let mut rows: Vec<Row> = c.benches.iter().map(|b| row(c, b)).collect();
    // what a reader acts on first, the rest in the matrix's order
    rows.sort_by_key(|r| match r.verdict {
        Verdict::Regressed => 0,
        Verdict::Improved => 1,
        _ => 2,
    });
    (head(c), rows)
}

/// "N benchmarks: 1 regressed, 40 no-change, …" for these verdicts.
pub fn counts(verdicts: &[Verdict]) -> String {
    let parts: Vec<String> = ORDER
        .iter()
        .map(|v| (v, verdicts.iter().filter(|x| *x == v).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect();
    format!("{} benchmarks: {}", verdicts.len(), parts.join(", "))
}

pub fn totals(c: &Comparison) -> String {
    counts(&c.benches.iter().map(|b| b.verdict).collect::<Vec<_>>())
}

/// Where each flagged benchmark's instructions went, when both sides were
/// profiled: a heading, then [`movers::lines_within`] `width` of each;
/// empty otherwise.
pub fn explained(c: &Comparison, width: usize) -> Vec<String> {
    let mut out: Vec<String> = c
        .benches
        .iter()
        .filter(|b| flagged(b.verdict))
        .filter_map(|b| Some(movers::lines_within(&b.name, b.movers.as_ref()?, width)))
        .flatten()
        .collect();
    if !out.is_empty() {
        out.insert(
            0,
            "Where the instructions went, per event (NEW - BASE, --profile):".into(),
        );
    }
    out
}
