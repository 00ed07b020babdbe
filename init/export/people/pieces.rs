//! The pieces of a comparison that its formats for people share: the
//! headlines, what was compared, the rows of figures and verdicts, the
//! totals, and where the instructions went.

use crate::outside::text::words;
use crate::people::movers;
use std::fmt::Write;
use trig_analysis::compare::{
    BenchComparison, Comparison, Metric, MetricComparison, SideInfo, TestKind, Verdict,
};
use trig_schema::stats;
use trig_schema::{ContentionKind, MemKind, Meter};

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

/// The two sides in a headline: their commits as `git log --oneline`
/// abbreviates them, else their releases; where those read alike (two
/// builds of one tree are both `6.1.192+`), the kernels as the user named
/// them, less what the two names share in front (`base/vmlinux`,
/// `new/vmlinux`), so that BASE and NEW never read the same.
pub fn names(c: &Comparison) -> (String, String) {
    let plain = |s: &SideInfo| -> String {
        if s.commits.is_empty() {
            return s.releases.join(",");
        }
        let short: Vec<String> = s
            .commits
            .iter()
            .map(|c| c.chars().take(8).collect())
            .collect();
        short.join(",")
    };
    let (base, new) = (plain(&c.base), plain(&c.new));
    if base != new {
        return (base, new);
    }
    let (b, n) = (c.base.specs.join(","), c.new.specs.join(","));
    if b == n {
        return (base, new);
    }
    // the path components both names start with
    let shared: usize = b
        .split_inclusive('/')
        .zip(n.split_inclusive('/'))
        .take_while(|(x, y)| x == y && x.ends_with('/'))
        .map(|(x, _)| x.len())
        .sum();
    (
        format!("{base} ({})", &b[shared..]),
        format!("{new} ({})", &n[shared..]),
    )
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
    metric.unit(meter)
}

/// One line per flagged benchmark, regressions first, as LKP reports
/// open: "−10.6% regression of trig-kprobe rate, 0.403→0.360 M/s,
/// q=0.029, 4+4 boots, 2f22765d→6b1f5330"; under icount led by what a
/// kernel developer reasons in, the instructions an event gained (see
/// [`icount_headline`]); or one line saying that nothing was flagged.
pub fn headlines(c: &Comparison) -> Vec<String> {
    let (base, new) = names(c);
    let span = format!("{base}\u{2192}{new}");
    let mut hits: Vec<(&BenchComparison, &MetricComparison)> = c
        .benches
        .iter()
        .filter(|b| flagged(b.verdict))
        .filter_map(|b| Some((b, basis(b)?)))
        .collect();
    let shortfall = c.tally().shortfall();
    if let (true, Some(why)) = (hits.is_empty(), &shortfall) {
        return vec![format!("{why}, {span}")];
    }
    if hits.is_empty() {
        return vec![format!(
            "no regression or improvement beyond {}% in {} benchmarks, {span}",
            c.limits.threshold_pct,
            c.benches.len()
        )];
    }
    hits.sort_by_key(|(b, _)| b.verdict);
    let mut lines: Vec<String> = hits.iter().map(|(b, m)| headline(c, b, m, &span)).collect();
    lines.extend(shortfall);
    lines
}

/// A flagged benchmark's line, in what its basis `m` is read in: a
/// count's change per event, under icount the instructions (see
/// [`icount_headline`]), else the change in percent and its evidence.
fn headline(c: &Comparison, b: &BenchComparison, m: &MetricComparison, span: &str) -> String {
    let boots = if m.pairs > 0 {
        format!("{} pairs", m.pairs)
    } else {
        format!("{}+{} boots", m.base.values.len(), m.new.values.len())
    };
    let what = if b.verdict == Verdict::Regressed {
        "regression"
    } else {
        "improvement"
    };
    if m.metric.is_count() {
        // "+1.00 syscalls/event regression of trig-uprobe-nop10, 0.000→1.000"
        return format!(
            "{} {} {what} of {}, {}\u{2192}{}, {boots}, {span}",
            per_event(m.per_event_change()),
            m.metric.unit(c.meter),
            b.name,
            figure(Some(m), false, c.meter),
            figure(Some(m), true, c.meter),
        );
    }
    if c.meter == Meter::Icount {
        return icount_headline(b, what, &boots, span);
    }
    let evidence = match (m.q, m.test) {
        (Some(q), TestKind::WelchPerSecond) => format!("q={} (weak)", pvalue(q)),
        (Some(q), _) => format!("q={}", pvalue(q)),
        (None, _) => c.meter.as_str().to_string(),
    };
    format!(
        "{} {what} of {} {}, {}\u{2192}{} {}, {evidence}, {boots}, {span}",
        signed(m.change_pct, 1 + c.meter.extra_digits()),
        b.name,
        m.metric.as_str(),
        figure(Some(m), false, c.meter),
        figure(Some(m), true, c.meter),
        unit(c.meter, m.metric)
    )
}

/// A change per event to two places, its minus sign typeset.
fn per_event(change: f64) -> String {
    format!("{change:+.2}").replacen('-', "\u{2212}", 1)
}

/// Instructions per event of a rate in events per 10^9 instructions
/// (M/Ginsn): every instruction of an event's path, user space included.
fn insn_per_event(rate: f64) -> f64 {
    1000.0 / rate
}

/// A flagged benchmark under icount: "+23.01 insn/event regression of
/// trig-kprobe (rate −1.97%, overhead +6.51%), 1170.2→1193.2 insn/event,
/// 1+1 boots, BASE→NEW; top mover trace_call_bpf +23.00". It leads with
/// the overhead's change when the verdict rests on it alone, else with the
/// change of every instruction an event takes.
fn icount_headline(b: &BenchComparison, what: &str, boots: &str, span: &str) -> String {
    let get = |metric| b.metrics.iter().find(|m| m.metric == metric);
    let (rate, overhead) = (get(Metric::Rate), get(Metric::Overhead));
    let total = rate
        .filter(|m| m.base.median > 0.0 && m.new.median > 0.0)
        .map(|m| (insn_per_event(m.base.median), insn_per_event(m.new.median)));
    let kernel = [
        (Metric::Kernel, " in the kernel"),
        (Metric::KernelOverhead, " in the kernel over the baseline"),
    ]
    .into_iter()
    .find_map(|(m, whose)| get(m).map(|k| ((k.base.median, k.new.median), whose)));
    let by_overhead = !b.basis.contains(&Metric::Rate) || total.is_none();
    let ((from, to), whose) = match (by_overhead, overhead, total, kernel) {
        (true, Some(o), _, _) => ((o.base.median, o.new.median), " over the baseline"),
        (_, _, Some(t), _) => (t, ""),
        // --metric kernel or kernel-overhead alone
        (_, _, _, Some(k)) => k,
        _ => ((f64::NAN, f64::NAN), ""),
    };
    let lead = to - from;
    let mut pcts = Vec::new();
    if let Some(m) = rate {
        pcts.push(format!("rate {}", signed(m.change_pct, 2)));
    }
    if let Some(m) = overhead.filter(|m| !m.change_pct.is_nan()) {
        pcts.push(format!("overhead {}", signed(m.change_pct, 2)));
    }
    let mut line = format!(
        "{} insn/event{} {what} of {}",
        per_event(lead),
        whose,
        b.name
    );
    if !pcts.is_empty() {
        let _ = write!(line, " ({})", pcts.join(", "));
    }
    let _ = write!(
        line,
        ", {from:.1}\u{2192}{to:.1} insn/event, {boots}, {span}"
    );
    if let Some(top) = b.movers.as_ref().and_then(|m| m.functions.first()) {
        let _ = write!(line, "; top mover {} {:+.2}", top.name, top.change);
    }
    line
}

fn side(s: &SideInfo) -> String {
    let mut out = s.releases.join(", ");
    if s.specs.iter().any(|k| !s.releases.contains(k)) {
        let _ = write!(out, " [{}]", s.specs.join(", "));
    }
    if !s.commits.is_empty() {
        let short: Vec<&str> = s
            .commits
            .iter()
            .map(|c| trig_schema::abbrev(c, 12))
            .collect();
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
    let mut lines = vec![
        format!("BASE: {}", side(&c.base)),
        format!("NEW:  {}", side(&c.new)),
        machine(c),
        limits(c),
    ];
    lines.extend(meter_note(c));
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

/// NEW's machine and meter, and how the sides were compared.
fn machine(c: &Comparison) -> String {
    let how = match (c.meter, c.paired) {
        (Meter::Icount, _) => {
            "instructions counted: one boot a side decides, against the threshold"
        }
        (Meter::Time, true) => {
            "interleaved boots paired by round (Wilcoxon signed-rank on paired ratios)"
        }
        (Meter::Time, false) => "unpaired (Mann-Whitney U on per-boot figures)",
    };
    let cpus: Vec<String> = c.new.cpus.iter().map(ToString::to_string).collect();
    format!(
        "{} under {}, meter {}, {} CPUs; {how}",
        c.new.arch.join("/"),
        c.new.accel.join("/").to_uppercase(),
        c.meter.as_str(),
        cpus.join("/"),
    )
}

/// The limits a verdict was judged against, and the metrics judged.
fn limits(c: &Comparison) -> String {
    let metrics: Vec<&str> = c.settings.metrics.iter().map(|m| m.as_str()).collect();
    format!(
        "threshold {}%, alpha {}, CV limit {}%, metrics {}",
        c.limits.threshold_pct,
        c.settings.alpha,
        c.limits.cv_limit * 100.0,
        metrics.join("+")
    )
}

/// What the meter's figures are and what they cannot see: icount's
/// units and blind spots, or TCG's absolute rates.
fn meter_note(c: &Comparison) -> Option<String> {
    match c.meter {
        Meter::Icount => {
            let unseen = if c.settings.metrics.iter().any(|m| m.needs_cache()) {
                "misses are a simulated cache's and cycles a model's (--cache); neither sees \
                 TLB misses, lock contention or IPIs"
            } else {
                "an instruction count does not see cache or TLB misses, lock contention or IPIs"
            };
            Some(format!(
                "note: rates are events per 10^9 guest instructions ({}), costs instructions \
                 per event; {unseen}",
                Meter::Icount.rate_unit()
            ))
        }
        Meter::Time if c.new.accel.iter().any(|a| a == "tcg") => Some(
            "note: TCG emulation; relative changes are meaningful, absolute rates are not".into(),
        ),
        Meter::Time => None,
    }
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
            // a count of a few per event, read to the thousandth
            m if m.is_count() => format!("{:.3}", s.median),
            _ => format!("{:.*}", 1 + d, s.median),
        }
    })
}

fn change(m: Option<&MetricComparison>, meter: Meter) -> String {
    let d = 1 + meter.extra_digits();
    match m {
        None => String::new(),
        // an entry count is judged on what it gained, often from none
        Some(m) if m.metric.is_count() => format!("{:+.2}", m.per_event_change()),
        Some(m) if m.change_pct.is_nan() => "-".into(),
        // what a kernel developer reasons in first, the percentage beside
        Some(m) if meter == Meter::Icount => {
            format!("{:+.2} ({:+.*}%)", m.per_event_change(), d, m.change_pct)
        }
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
    let interval = match c.meter {
        Meter::Time => "[95% CI]",
        Meter::Icount => "insn/event (%)",
    };
    let mut head = vec!["BENCHMARK".to_string()];
    for m in Metric::ALL {
        if c.settings.metrics.contains(&m) {
            let unit = m.unit(c.meter);
            let name = m.as_str().replace('-', " ").to_uppercase();
            let interval = match m {
                _ if m.is_count() => "per event",
                Metric::Memory(MemKind::Cycles) => "cycles/event (%)",
                Metric::Contention(ContentionKind::Rate) => "M/Gcycle (%)",
                _ => interval,
            };
            head.extend([
                format!("BASE {unit}"),
                format!("NEW {unit}"),
                format!("{name} CHANGE {interval}"),
            ]);
        }
    }
    // under icount no test is run, so there is no q to show
    if c.meter == Meter::Time {
        head.push("q".into());
    }
    head.push("VERDICT".into());
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
    for metric in Metric::ALL {
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
    if c.meter == Meter::Time {
        cells.push(if q.is_nan() { String::new() } else { pvalue(q) });
    }
    cells.push(verdict_cell(b));
    Row {
        cells,
        verdict: b.verdict,
    }
}

/// The column heads and one row per benchmark that could run on both
/// sides, for every format (the others are [`unsupported`]'s lines).
pub fn rows(c: &Comparison) -> (Vec<String>, Vec<Row>) {
    let mut rows: Vec<Row> = c
        .benches
        .iter()
        .filter(|b| b.verdict != Verdict::Unsupported)
        .map(|b| row(c, b))
        .collect();
    // what a reader acts on first, the rest in the matrix's order
    rows.sort_by_key(|r| match r.verdict {
        Verdict::Regressed => 0,
        Verdict::Improved => 1,
        _ => 2,
    });
    (head(c), rows)
}

/// The benchmarks a kernel cannot run, one line per reason ("unsupported
/// (3): needs uprobe_multi (6.6+): trig-uprobe-multi-nop, …"), in the
/// matrix's order: a dozen rows of one reason say less than its line.
pub fn unsupported(c: &Comparison) -> Vec<String> {
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    let gists: Vec<(String, &str)> = c
        .benches
        .iter()
        .filter(|b| b.verdict == Verdict::Unsupported)
        .map(|b| {
            (
                gist(b.reason.as_deref().unwrap_or("no reason given")),
                b.name.as_str(),
            )
        })
        .collect();
    for (why, name) in &gists {
        let (why, name) = (why.as_str(), *name);
        match reasons.iter_mut().find(|(r, _)| *r == why) {
            Some((_, names)) => names.push(name),
            None => reasons.push((why, vec![name])),
        }
    }
    reasons
        .into_iter()
        .map(|(why, names)| format!("unsupported ({}): {why}: {}", names.len(), names.join(", ")))
        .collect()
}

/// What an unsupported verdict's reason says a kernel lacks, without the
/// libbpf detail that differs from program to program: "BASE: needs
/// kprobe_multi (5.18+, CONFIG_FPROBE, not found by the probe)", one side
/// named only when the two sides differ.
fn gist(reason: &str) -> String {
    let short = |text: &str| -> String {
        let Some(rest) = text.strip_prefix("needs ") else {
            return words(text, 80);
        };
        // up to the parenthesis that closes the first one opened
        let mut depth = 0;
        for (i, ch) in rest.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' if depth == 1 => return format!("needs {}", &rest[..=i]),
                ')' => depth -= 1,
                ':' if depth == 0 => return format!("needs {}", &rest[..i]),
                _ => {}
            }
        }
        words(text, 80)
    };
    // "BASE: …; NEW: …" (a verifier log may hold "; " of its own)
    let sides_said = match reason.split_once("; NEW: ") {
        Some((base, new)) => vec![base, new],
        None => vec![reason],
    };
    let sides: Vec<(&str, String)> = sides_said
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let side = if i == 1 { "NEW" } else { "BASE" };
            match part.split_once(": ") {
                Some((s @ ("BASE" | "NEW"), text)) => (s, short(text)),
                _ if i == 1 => (side, short(part)),
                _ => ("", short(part)),
            }
        })
        .collect();
    match sides.as_slice() {
        [(_, a), (_, b)] if a == b => a.clone(),
        _ => sides
            .iter()
            .map(|(side, g)| {
                if side.is_empty() {
                    g.clone()
                } else {
                    format!("{side}: {g}")
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// "N benchmarks: 1 regressed, 40 no-change, …" for these verdicts.
pub fn counts(verdicts: &[Verdict]) -> String {
    let pieces: Vec<String> = ORDER
        .iter()
        .map(|v| (v, verdicts.iter().filter(|x| *x == v).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect();
    let noun = if verdicts.len() == 1 {
        "benchmark"
    } else {
        "benchmarks"
    };
    format!("{} {noun}: {}", verdicts.len(), pieces.join(", "))
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
