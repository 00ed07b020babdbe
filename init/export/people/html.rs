//! `trig-init report HISTORY-DIR -o report.html`: one self-contained page
//! (inline SVG, no external assets) with a trend chart per benchmark and
//! metric, change points marked, and the latest comparison.

use crate::people::pieces;
use std::fmt::Write;
use trig_analysis::compare::{Comparison, Metric, Verdict};
use trig_analysis::history::{self, History, Series};
use trig_schema::stats;

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const W: f64 = 420.0;
const H: f64 = 190.0;
/// Room for the y-axis labels on the left and the x-axis labels below.
const LEFT: f64 = 46.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 30.0;

/// How the page is drawn (`trig-init report` options).
#[derive(Debug, Clone, Default)]
pub struct PageOptions {
    /// Commits link to URL/commit/HASH (GitHub's and GitLab's form).
    pub repo_url: Option<String>,
    /// Every chart in percent from its series' median, on one range.
    pub common_scale: bool,
}

impl PageOptions {
    /// `inner` (markup) as a link to the commit's page, when the
    /// repository is known.
    fn linked(&self, commit: Option<&str>, inner: String) -> String {
        match (&self.repo_url, commit) {
            // a commit id of a forged file names no other page of the host
            (Some(url), Some(c)) if trig_schema::is_object_name(c) => format!(
                r#"<a href="{}/commit/{}">{inner}</a>"#,
                esc(url.trim_end_matches('/')),
                esc(c)
            ),
            _ => inner,
        }
    }
}

/// What a chart's y axis shows: the series' own figures, or percent from
/// its median on a range common to every chart.
#[derive(Clone, Copy)]
enum Scale {
    Own,
    Common(f64, f64),
}

/// A series' values as drawn: (result index, median, lowest, highest).
fn drawn(s: &Series, scale: Scale) -> Vec<(usize, f64, f64, f64)> {
    let known: Vec<f64> = s.medians.iter().flatten().copied().collect();
    let mid = if known.is_empty() {
        1.0
    } else {
        stats::median(&known)
    };
    let f = |v: f64| match scale {
        Scale::Own => v,
        Scale::Common(..) => (v / mid - 1.0) * 100.0,
    };
    s.medians
        .iter()
        .zip(&s.spread)
        .enumerate()
        .filter_map(|(i, (m, sp))| {
            let (lo, hi) = (*sp)?;
            Some((i, f((*m)?), f(lo), f(hi)))
        })
        .collect()
}

/// Round tick positions (1, 2 or 5 times a power of ten apart) over
/// [lo, hi].
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo) / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|k| k * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

fn tick_label(v: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{v:.decimals$}")
}

/// The short x-axis label of a result: its commit, else its date.
fn x_label(h: &History, i: usize) -> String {
    let p = &h.points[i];
    match (&p.commit, &p.created) {
        (Some(c), _) => trig_schema::abbrev(c, 8).to_string(),
        (None, Some(t)) if trig_schema::is_timestamp(t) => format!("{}-{}", &t[4..6], &t[6..8]),
        _ => format!("#{}", i + 1),
    }
}

/// Where a chart puts a result index and a value: `n` slots across,
/// [lo, hi] up the plot area.
struct Frame {
    n: usize,
    lo: f64,
    hi: f64,
}

impl Frame {
    fn x(&self, i: f64) -> f64 {
        LEFT + (i + 0.5) * (W - LEFT - RIGHT) / self.n as f64
    }

    fn y(&self, v: f64) -> f64 {
        H - BOTTOM - (v - self.lo) / (self.hi - self.lo) * (H - TOP - BOTTOM)
    }
}

/// The y range of a chart: the common one, or the series' own lowest and
/// highest boot; padded 5% so no bar touches the edge.
fn y_range(vals: &[(usize, f64, f64, f64)], scale: Scale) -> (f64, f64) {
    let (lo, hi) = match scale {
        Scale::Common(lo, hi) => (lo, hi),
        Scale::Own => (
            vals.iter().map(|v| v.2).fold(f64::INFINITY, f64::min),
            vals.iter().map(|v| v.3).fold(f64::NEG_INFINITY, f64::max),
        ),
    };
    if hi > lo {
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

/// Horizontal grid lines with their labels, and at most about six x
/// labels (commit links when the repository is known).
fn axes(svg: &mut String, fr: &Frame, h: &History, opts: &PageOptions) {
    let ys = ticks(fr.lo, fr.hi);
    let step = if ys.len() > 1 {
        ys[1] - ys[0]
    } else {
        fr.hi - fr.lo
    };
    for v in &ys {
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#eee"/><text x="{2:.1}" y="{3:.1}" font-size="9" fill="#555" text-anchor="end">{4}</text>"##,
            fr.y(*v),
            W - RIGHT,
            LEFT - 4.0,
            fr.y(*v) + 3.0,
            tick_label(*v, step)
        );
    }
    let every = h.points.len().div_ceil(6).max(1);
    for i in (0..h.points.len()).filter(|i| i % every == 0 || i + 1 == h.points.len()) {
        let label = x_label(h, i);
        let text = format!(
            r##"<text x="{:.1}" y="{:.1}" font-size="8" fill="#555" text-anchor="middle">{}</text>"##,
            fr.x(i as f64),
            H - BOTTOM + 12.0,
            esc(&label)
        );
        *svg += &opts.linked(h.points[i].commit.as_deref(), text);
    }
}

/// The mean of each segment between change points, as Otava draws them,
/// then a dashed line with the change before each change point.
fn change_marks(
    svg: &mut String,
    fr: &Frame,
    vals: &[(usize, f64, f64, f64)],
    found: &[&history::Found],
    len: usize,
) {
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(found.iter().map(|f| f.at))
        .chain(std::iter::once(len))
        .collect();
    for w in bounds.windows(2) {
        let seg: Vec<f64> = vals
            .iter()
            .filter(|v| (w[0]..w[1]).contains(&v.0))
            .map(|v| v.1)
            .collect();
        if !seg.is_empty() {
            let m = stats::mean(&seg);
            let _ = write!(
                svg,
                r##"<line x1="{:.1}" y1="{2:.1}" x2="{:.1}" y2="{2:.1}" stroke="#e08a00" stroke-width="2" opacity="0.8"><title>segment mean {3}</title></line>"##,
                fr.x(w[0] as f64 - 0.4),
                fr.x(w[1] as f64 - 0.6),
                fr.y(m),
                short(m)
            );
        }
    }
    for f in found {
        let cx = fr.x(f.at as f64 - 0.5);
        let colour = if f.regression { "#c00" } else { "#080" };
        let _ = write!(
            svg,
            r##"<line x1="{cx:.1}" y1="{TOP}" x2="{cx:.1}" y2="{:.1}" stroke="{colour}" stroke-dasharray="4 3"/><text x="{:.1}" y="11" font-size="10" fill="{colour}">{}</text>"##,
            H - BOTTOM,
            cx + 3.0,
            f.size()
        );
    }
}

/// Each result's lowest-highest bar, the line through the medians, and a
/// dot per median with its result and value as a tooltip.
fn medians(svg: &mut String, fr: &Frame, vals: &[(usize, f64, f64, f64)], h: &History) {
    for &(i, _, a, b) in vals {
        let _ = write!(
            svg,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#9ab"/>"##,
            fr.x(i as f64),
            fr.y(a),
            fr.y(b)
        );
    }
    let pts: Vec<String> = vals
        .iter()
        .map(|&(i, m, _, _)| format!("{:.1},{:.1}", fr.x(i as f64), fr.y(m)))
        .collect();
    let _ = write!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/>"##,
        pts.join(" ")
    );
    for &(i, m, _, _) in vals {
        let _ = write!(
            svg,
            r##"<circle cx="{:.1}" cy="{:.1}" r="2.2" fill="#1f5fa8"><title>{}: {}</title></circle>"##,
            fr.x(i as f64),
            fr.y(m),
            esc(&h.points[i].label()),
            short(m)
        );
    }
}

/// A trend chart: the median of each result with its lowest-highest boot
/// as a bar, the mean of each segment between change points, a dashed
/// line before the first result after each change, and labelled axes.
fn chart(s: &Series, h: &History, scale: Scale, opts: &PageOptions) -> String {
    let vals = drawn(s, scale);
    let (lo, hi) = y_range(&vals, scale);
    let fr = Frame {
        n: h.points.len().max(2),
        lo,
        hi,
    };
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif"><rect width="{W}" height="{H}" fill="#fff" stroke="#ccc"/>"##
    );
    axes(&mut svg, &fr, h, opts);
    let found: Vec<_> = h
        .found
        .iter()
        .filter(|f| f.bench == s.bench && f.metric == s.metric)
        .collect();
    change_marks(&mut svg, &fr, &vals, &found, h.points.len());
    medians(&mut svg, &fr, &vals, h);
    svg + "</svg>"
}

fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// A page's opening, up to its body, with the style every page shares.
pub(crate) fn head(title: &str) -> String {
    format!(
        r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>{}</title><style>{STYLE}</style></head><body>"#,
        esc(title)
    )
}

const STYLE: &str = r#"
body{font-family:sans-serif;margin:1.5em;color:#222}h1{font-size:1.4em}
.grid{display:flex;flex-wrap:wrap;gap:12px}.c{font-size:12px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}.regressed,.failed{background:#fdd}.improved{background:#dfd}.unstable,.missing{background:#ffd}
"#;

/// The table of change points found, or why there are none.
fn change_points(out: &mut String, h: &History, opts: &PageOptions) {
    *out += "<h2>Change points</h2>";
    if h.found.is_empty() {
        let _ = write!(
            out,
            "<p>{}</p>",
            esc(&crate::people::history_table::no_change_points(h))
        );
        return;
    }
    *out += "<table><tr><th>first result after</th><th>benchmark</th><th>metric</th><th>before</th><th>after</th><th>change [95% CI]</th><th>p</th><th>moved with</th></tr>";
    for f in &h.found {
        let c = &f.change;
        let _ = write!(
            out,
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1}% [{:+.1}, {:+.1}]</td><td>{}</td><td>{}</td></tr>",
            if f.regression { "regressed" } else { "improved" },
            opts.linked(h.points[f.at].commit.as_deref(), esc(&h.points[f.at].label())),
            esc(&f.bench),
            f.metric.as_str(),
            short(c.before),
            short(c.after),
            c.change_pct,
            c.ci_pct.0,
            c.ci_pct.1,
            c.p_text(),
            esc(&f.moved_with.join(", "))
        );
    }
    *out += "</table>";
}

/// A comparison as `compare` prints it under a heading (markup), rows
/// coloured by verdict.
pub(crate) fn comparison(out: &mut String, heading: &str, c: &Comparison) {
    let _ = write!(out, "<h2>{heading}</h2><pre>");
    *out += &esc(&pieces::header(c).join("\n"));
    *out += "</pre><table><tr>";
    let (head, rows) = pieces::rows(c);
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(&h));
    }
    *out += "</tr>";
    for r in rows {
        let class = match r.verdict {
            Verdict::Regressed
            | Verdict::Improved
            | Verdict::Unstable
            | Verdict::Missing
            | Verdict::Failed => r.verdict.as_str(),
            _ => "",
        };
        let _ = write!(out, "<tr class=\"{class}\">");
        for cell in r.cells {
            let _ = write!(out, "<td>{}</td>", esc(&cell));
        }
        *out += "</tr>";
    }
    *out += "</table>";
    let folded = pieces::unsupported(c);
    if !folded.is_empty() {
        let _ = write!(
            out,
            "<p>{}</p>",
            esc(&folded.join("\n")).replace('\n', "<br>")
        );
    }
    let why = pieces::explained(c, usize::MAX);
    if !why.is_empty() {
        let _ = write!(out, "<pre>{}</pre>", esc(&why.join("\n")));
    }
}

/// The y scale every chart shares: percent from each series' median over
/// the widest range (at least ±1%), or each series' own.
fn scale_of(h: &History, opts: &PageOptions) -> Scale {
    if !opts.common_scale {
        return Scale::Own;
    }
    let all: Vec<_> = h
        .series
        .iter()
        .flat_map(|s| drawn(s, Scale::Common(0.0, 0.0)))
        .collect();
    Scale::Common(
        all.iter().map(|v| v.2).fold(-1.0, f64::min),
        all.iter().map(|v| v.3).fold(1.0, f64::max),
    )
}

/// One chart per series, those with a change point first, regressions
/// before improvements.
fn trends(out: &mut String, h: &History, opts: &PageOptions) {
    *out += "<h2>Trends</h2><div class=\"grid\">";
    let scale = scale_of(h, opts);
    let mut series: Vec<&Series> = h.series.iter().collect();
    series.sort_by_key(|s| {
        let mut own = h
            .found
            .iter()
            .filter(|f| f.bench == s.bench && f.metric == s.metric);
        match (own.clone().any(|f| f.regression), own.next().is_some()) {
            (true, _) => 0,
            (false, true) => 1,
            _ => 2,
        }
    });
    for s in series {
        let unit = match (scale, s.metric) {
            (Scale::Common(..), _) => "% from its median".to_string(),
            (Scale::Own, Metric::Rate) => h.meter.rate_unit().to_string(),
            (Scale::Own, Metric::Overhead) => format!("{} over baseline", h.meter.cost_unit()),
            (Scale::Own, m) => m.unit(h.meter).to_string(),
        };
        let _ = write!(
            out,
            "<div class=\"c\"><b>{}</b> {} ({unit})<br>{}</div>",
            esc(&s.bench),
            s.metric.as_str(),
            chart(s, h, scale, opts)
        );
    }
}

pub fn page(h: &History, latest: Option<&Comparison>, opts: &PageOptions) -> String {
    let mut out = head("trig-init history");
    let _ = write!(
        out,
        "<h1>trig-init: {} results in {}</h1>",
        h.points.len(),
        esc(&h.dir)
    );
    if let (Some(a), Some(b)) = (h.points.first(), h.points.last()) {
        let _ = write!(
            out,
            "<p>From {} to {}. Points: median of each result's boots; bars: lowest to highest boot; orange: mean of each segment between change points; dashed lines: change points (red slower, green faster); x axis: commit, or date. Change points: {}.</p>",
            esc(&a.label()),
            esc(&b.label()),
            esc(&crate::people::history_table::needs(h))
        );
    }
    change_points(&mut out, h, opts);
    if let Some(c) = latest {
        comparison(&mut out, "Latest comparison", c);
    }
    trends(&mut out, h, opts);
    out + "</div></body></html>\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_analysis::fixtures::nights;
    use trig_analysis::history::analyse;

    fn history(n: usize, step: usize) -> History {
        analyse(
            "h",
            nights(n, step),
            &[Metric::Rate],
            &trig_analysis::changepoint::Detection::default(),
            3,
        )
    }

    #[test]
    fn page_is_self_contained_and_marks_change_points() {
        let html = page(&history(20, 12), None, &PageOptions::default());
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert_eq!(html.matches("<svg").count(), 3);
        assert_eq!(html.matches("stroke-dasharray").count(), 2);
        assert!(
            !html.contains("http://")
                || html.matches("http://").count()
                    == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        assert!(!html.contains("<script") && !html.contains("src="));
        // charts with a change point first: trig-base's is last
        let pos = |b: &str| html.find(&format!("<b>{b}</b>")).unwrap();
        assert!(pos("trig-kprobe") < pos("trig-base") && pos("trig-kretprobe") < pos("trig-base"));
        // two segment means on a chart with one change point, one without
        assert_eq!(html.matches("segment mean").count(), 2 + 2 + 1);
        // x labels are commits, units the time meter's
        assert!(html.contains(">00ababab</text>") && html.contains("(M/s)"));
    }

    #[test]
    fn commits_link_to_the_repository_and_scales_can_be_shared() {
        let opts = PageOptions {
            repo_url: Some("https://github.com/torvalds/linux/".into()),
            common_scale: true,
        };
        let html = page(&history(20, 12), None, &opts);
        let hash = format!("12{}", "ab".repeat(19));
        assert!(
            html.contains(&format!(
                "href=\"https://github.com/torvalds/linux/commit/{hash}\""
            )),
            "{html}"
        );
        assert_eq!(html.matches("% from its median").count(), 3);
        // one y range for all: the same tick labels on every chart
        let first_tick = |svg: &str| {
            svg.split("text-anchor=\"end\">")
                .nth(1)
                .map(|t| t[..t.find('<').unwrap()].to_string())
        };
        let svgs: Vec<_> = html.split("<svg").skip(1).map(first_tick).collect();
        assert!(svgs.windows(2).all(|w| w[0] == w[1]), "{svgs:?}");
    }

    #[test]
    fn a_short_history_says_why_it_has_no_change_point() {
        let html = page(&history(5, 3), None, &PageOptions::default());
        assert!(
            html.contains("5 results, and a change point needs at least 12"),
            "{html}"
        );
    }

    #[test]
    fn ticks_are_round() {
        let t = ticks(0.71, 0.83);
        let want = [0.72, 0.74, 0.76, 0.78, 0.80, 0.82];
        assert_eq!(t.len(), want.len(), "{t:?}");
        assert!(
            t.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9),
            "{t:?}"
        );
        assert_eq!(tick_label(t[4], 0.02), "0.80");
        assert_eq!(ticks(-3.0, 12.0), vec![0.0, 5.0, 10.0]);
    }
}
