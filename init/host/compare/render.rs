//! `compare` output: a terminal table in the style of LKP reports and
//! `veristat -C`, markdown for CI comments, JSON for machines.

use super::{Comparison, Metric, MetricComparison, SideInfo, TestKind, Verdict};
use crate::report::Meter;
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table { color: bool },
    Markdown,
    Json,
}

impl Format {
    pub fn parse(s: &str, color: bool) -> Result<Self, String> {
        match s {
            "table" => Ok(Format::Table { color }),
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            _ => Err(format!(
                "--format must be table, markdown or json, not '{s}'"
            )),
        }
    }
}

pub fn render(c: &Comparison, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(c).expect("comparison serializes") + "\n",
        Format::Markdown => markdown(c),
        Format::Table { color } => table(c, color),
    }
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
    for d in &c.differences {
        lines.push(format!("WARNING (--force): {d}"));
    }
    lines
}

/// Digits that the meter's precision supports: icount figures repeat to
/// 1e-4, so two more.
fn digits(meter: Meter) -> usize {
    match meter {
        Meter::Time => 0,
        Meter::Icount => 2,
    }
}

fn figure(m: Option<&MetricComparison>, new: bool, meter: Meter) -> String {
    m.map_or(String::new(), |m| {
        let s = if new { &m.new } else { &m.base };
        let d = digits(meter);
        match m.metric {
            Metric::Rate => format!("{:.*}", 3 + d, s.median),
            Metric::Overhead => format!("{:.*}", 1 + d, s.median),
        }
    })
}

fn change(m: Option<&MetricComparison>, meter: Meter) -> String {
    let d = 1 + digits(meter);
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

/// The column heads and one row per benchmark, for every format.
pub fn rows(c: &Comparison) -> (Vec<String>, Vec<Row>) {
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
    head.extend(["p".into(), "VERDICT".into()]);
    let rows = c
        .benches
        .iter()
        .map(|b| {
            let get = |metric| b.metrics.iter().find(|m| m.metric == metric);
            let mut cells = vec![b.name.clone()];
            for metric in [Metric::Rate, Metric::Overhead] {
                if want(metric) {
                    let m = get(metric);
                    cells.extend([
                        figure(m, false, c.meter),
                        figure(m, true, c.meter),
                        change(m, c.meter),
                    ]);
                }
            }
            let p = b
                .metrics
                .iter()
                .filter(|m| b.basis.contains(&m.metric))
                .filter_map(|m| m.p)
                .fold(f64::NAN, f64::min);
            cells.push(if p.is_nan() {
                String::new()
            } else {
                format!("{p:.3}")
            });
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
            cells.push(v);
            Row {
                cells,
                verdict: b.verdict,
            }
        })
        .collect();
    (head, rows)
}

/// At most `max` characters of `text`, cut between words (the JSON keeps
/// all of it).
pub(crate) fn words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let head = cut.rfind(' ').map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", head.trim_end_matches([',', ':', ';', ' ']))
}

fn totals(c: &Comparison) -> String {
    let order = [
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
    let parts: Vec<String> = order
        .iter()
        .filter(|v| c.count(**v) > 0)
        .map(|v| format!("{} {}", c.count(*v), v.as_str()))
        .collect();
    format!("{} benchmarks: {}", c.benches.len(), parts.join(", "))
}

fn table(c: &Comparison, color: bool) -> String {
    let (head, rows) = rows(c);
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(&r.cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let last = widths.len() - 1;
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, cell)| match i {
                0 => format!("{cell:<w$}", w = widths[0]),
                i if i == last => cell.clone(),
                _ => format!("{cell:>w$}", w = widths[i]),
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = header(c).join("\n") + "\n\n";
    out += &line(&head.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    out.push('\n');
    for r in &rows {
        let text = line(&r.cells);
        let paint = match r.verdict {
            Verdict::Regressed | Verdict::Failed => "\x1b[1;31m",
            Verdict::Improved => "\x1b[32m",
            Verdict::Unstable | Verdict::Inconclusive | Verdict::Missing => "\x1b[33m",
            _ => "",
        };
        if color && !paint.is_empty() {
            let _ = writeln!(out, "{paint}{text}\x1b[0m");
        } else {
            let _ = writeln!(out, "{text}");
        }
    }
    out + "\n" + &totals(c) + "\n"
}

fn markdown(c: &Comparison) -> String {
    let (head, rows) = rows(c);
    let mut out = String::from("### trig-init compare\n\n");
    for l in header(c) {
        let _ = writeln!(out, "- {l}");
    }
    let _ = writeln!(out, "\n| {} |", head.join(" | "));
    let _ = writeln!(
        out,
        "|{}|",
        head.iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { ":--" } else { "--:" })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in rows {
        let mut cells = r.cells;
        if matches!(r.verdict, Verdict::Regressed | Verdict::Improved) {
            let v = cells.last_mut().expect("verdict cell");
            *v = format!("**{v}**");
        }
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out + "\n" + &totals(c) + "\n"
}
