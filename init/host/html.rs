//! `trig-init report HISTORY-DIR -o report.html`: one self-contained page
//! (inline SVG, no external assets) with a trend chart per benchmark and
//! metric, change points marked, and the latest comparison.

use super::compare::{render, Comparison, Verdict};
use super::history::{History, Series};
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const W: f64 = 360.0;
const H: f64 = 150.0;
const PAD: f64 = 34.0;

/// A trend chart: the median of each result with its lowest-highest boot
/// as a bar, and a dashed line before the first result after each change.
fn chart(s: &Series, h: &History) -> String {
    let vals: Vec<(usize, f64, (f64, f64))> = s
        .medians
        .iter()
        .zip(&s.spread)
        .enumerate()
        .filter_map(|(i, (m, sp))| Some((i, (*m)?, (*sp)?)))
        .collect();
    let lo = vals.iter().map(|v| v.2 .0).fold(f64::INFINITY, f64::min);
    let hi = vals
        .iter()
        .map(|v| v.2 .1)
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    };
    let n = h.points.len().max(2);
    let x = |i: f64| PAD + i * (W - PAD - 8.0) / (n - 1) as f64;
    let y = |v: f64| H - 18.0 - (v - lo) / (hi - lo) * (H - 30.0);
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}"><rect width="{W}" height="{H}" fill="#fff" stroke="#ccc"/>"##
    );
    for v in [lo, hi] {
        let _ = write!(
            svg,
            r##"<text x="2" y="{:.1}" font-size="9" fill="#555">{}</text>"##,
            y(v) + 3.0,
            short(v)
        );
    }
    for f in h
        .found
        .iter()
        .filter(|f| f.bench == s.bench && f.metric == s.metric)
    {
        let cx = x(f.at as f64 - 0.5);
        let colour = if f.regression { "#c00" } else { "#080" };
        let _ = write!(
            svg,
            r##"<line x1="{cx:.1}" y1="6" x2="{cx:.1}" y2="{:.1}" stroke="{colour}" stroke-dasharray="4 3"/><text x="{:.1}" y="12" font-size="10" fill="{colour}">{:+.1}%</text>"##,
            H - 14.0,
            cx + 3.0,
            f.change.change_pct
        );
    }
    for &(i, _, (a, b)) in &vals {
        let _ = write!(
            svg,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#9ab"/>"##,
            x(i as f64),
            y(a),
            y(b)
        );
    }
    let pts: Vec<String> = vals
        .iter()
        .map(|&(i, m, _)| format!("{:.1},{:.1}", x(i as f64), y(m)))
        .collect();
    let _ = write!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/>"##,
        pts.join(" ")
    );
    for &(i, m, _) in &vals {
        let _ = write!(
            svg,
            r##"<circle cx="{:.1}" cy="{:.1}" r="2.2" fill="#1f5fa8"><title>{}: {}</title></circle>"##,
            x(i as f64),
            y(m),
            esc(&h.points[i].label()),
            short(m)
        );
    }
    svg + "</svg>"
}

fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

pub fn page(h: &History, latest: Option<&Comparison>) -> String {
    let mut out = String::from(
        r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>trig-init history</title><style>
body{font-family:sans-serif;margin:1.5em;color:#222}h1{font-size:1.4em}
.grid{display:flex;flex-wrap:wrap;gap:12px}.c{font-size:12px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}.regressed,.failed{background:#fdd}.improved{background:#dfd}.unstable,.missing{background:#ffd}
</style></head><body>"#,
    );
    let _ = write!(
        out,
        "<h1>trig-init: {} results in {}</h1>",
        h.points.len(),
        esc(&h.dir)
    );
    if let (Some(a), Some(b)) = (h.points.first(), h.points.last()) {
        let _ = write!(
            out,
            "<p>From {} to {}. Points: median of each result's boots; bars: lowest to highest boot; dashed lines: change points (red slower, green faster).</p>",
            esc(&a.label()),
            esc(&b.label())
        );
    }
    out += "<h2>Change points</h2>";
    if h.found.is_empty() {
        out += "<p>none</p>";
    } else {
        out += "<table><tr><th>first result after</th><th>benchmark</th><th>metric</th><th>before</th><th>after</th><th>change [95% CI]</th><th>p</th><th>moved with</th></tr>";
        for f in &h.found {
            let c = &f.change;
            let _ = write!(
                out,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1}% [{:+.1}, {:+.1}]</td><td>{:.3}</td><td>{}</td></tr>",
                if f.regression { "regressed" } else { "improved" },
                esc(&h.points[f.at].label()),
                esc(&f.bench),
                f.metric.as_str(),
                short(c.before),
                short(c.after),
                c.change_pct,
                c.ci_pct.0,
                c.ci_pct.1,
                c.p,
                esc(&f.moved_with.join(", "))
            );
        }
        out += "</table>";
    }
    if let Some(c) = latest {
        out += "<h2>Latest comparison</h2><pre>";
        out += &esc(&render::header(c).join("\n"));
        out += "</pre><table><tr>";
        let (head, rows) = render::rows(c);
        for h in head {
            let _ = write!(out, "<th>{}</th>", esc(&h));
        }
        out += "</tr>";
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
            out += "</tr>";
        }
        out += "</table>";
    }
    out += "<h2>Trends</h2><div class=\"grid\">";
    for s in &h.series {
        let unit = match s.metric {
            super::compare::Metric::Rate => "M/s",
            super::compare::Metric::Overhead => "ns/event over baseline",
        };
        let _ = write!(
            out,
            "<div class=\"c\"><b>{}</b> {} ({unit})<br>{}</div>",
            esc(&s.bench),
            s.metric.as_str(),
            chart(s, h)
        );
    }
    out + "</div></body></html>\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::compare::Metric;

    #[test]
    fn page_is_self_contained_and_marks_change_points() {
        let h = crate::host::history::analyse(
            "h",
            crate::host::history::tests::nights(20, 12),
            &[Metric::Rate],
            &crate::changepoint::Settings::default(),
            3,
        );
        let html = page(&h, None);
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert_eq!(html.matches("<svg").count(), 3);
        assert_eq!(html.matches("stroke-dasharray").count(), 2);
        assert!(
            !html.contains("http://")
                || html.matches("http://").count()
                    == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        assert!(!html.contains("<script") && !html.contains("src="));
    }
}
