//! `compare --format email`: plain text for a mailing list.

use super::pieces::{explained, figure, flagged, header, headlines, pvalue, signed, totals};
use crate::outside::text::{pad, width, wrap};
use trig_analysis::compare::{BenchComparison, Comparison, Verdict};
use trig_schema::Meter;

/// Where plain text for a mailing list wraps (kernel mailing lists ask
/// for at most 72 to 75 columns, so that quoting keeps it within 80).
pub const MAIL_WIDTH: usize = 72;

/// Plain text for a mailing list, within [`MAIL_WIDTH`] columns:
/// headlines, an aligned table of the flagged benchmarks' figures, the
/// counts, and what was compared.
pub fn comparison(c: &Comparison) -> String {
    let mut out: Vec<String> = Vec::new();
    let para = |out: &mut Vec<String>, text: &str| out.extend(wrap(text, MAIL_WIDTH, 2));
    for l in headlines(c) {
        para(&mut out, &l);
    }
    out.push(String::new());
    let hits: Vec<&BenchComparison> = c.benches.iter().filter(|b| flagged(b.verdict)).collect();
    if !hits.is_empty() {
        out.extend(flagged_table(c, &hits));
        out.push(String::new());
    }
    let why = explained(c, MAIL_WIDTH);
    if !why.is_empty() {
        out.extend(why);
        out.push(String::new());
    }
    para(&mut out, &totals(c));
    for l in header(c) {
        para(&mut out, &l);
    }
    out.join("\n") + "\n"
}

/// The figures behind each flagged benchmark, one row a metric it rests
/// on, grouped regressions then improvements: columns narrow enough for
/// mail (the matrix's longest name is 26 characters).
fn flagged_table(c: &Comparison, hits: &[&BenchComparison]) -> Vec<String> {
    let tested = c.meter == Meter::Time;
    let mut head = vec!["BENCHMARK", "METRIC", "BASE", "NEW", "CHANGE"];
    if tested {
        head.push("q");
    }
    let mut groups: Vec<(Verdict, Vec<Vec<String>>)> = Vec::new();
    for v in [Verdict::Regressed, Verdict::Improved] {
        let rows: Vec<Vec<String>> = hits
            .iter()
            .filter(|b| b.verdict == v)
            .flat_map(|b| {
                b.metrics
                    .iter()
                    .filter(|m| b.basis.contains(&m.metric))
                    .map(|m| {
                        let mut row = vec![
                            b.name.clone(),
                            m.metric.as_str().to_string(),
                            figure(Some(m), false, c.meter),
                            figure(Some(m), true, c.meter),
                            signed(m.change_pct, 1 + c.meter.extra_digits()),
                        ];
                        if tested {
                            row.push(m.q.map_or(String::new(), pvalue));
                        }
                        row
                    })
            })
            .collect();
        if !rows.is_empty() {
            groups.push((v, rows));
        }
    }
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for row in groups.iter().flat_map(|(_, rows)| rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    let line = |cells: &[String]| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| pad(cell, w, i < 2))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(
        &head.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
    )];
    for (v, rows) in groups {
        out.push(format!("{}:", v.as_str()));
        out.extend(rows.iter().map(|r| line(r)));
    }
    out
}
