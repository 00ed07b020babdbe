//! `compare --format markdown`: for CI comments.

use super::pieces::{
    counts, explained, flagged, header, headlines, rows, totals, unsupported, Row,
};
use crate::outside::md::{code, inline};
use std::fmt::Write;
use trig_analysis::compare::{Comparison, Verdict};

/// Headlines, what was compared, the flagged rows, and the rest folded
/// away under `<details>`.
pub fn comparison(c: &Comparison) -> String {
    let (head, rows) = rows(c);
    let mut out = String::from("### trig-init compare\n\n");
    for l in headlines(c) {
        let _ = writeln!(out, "**{}**\n", inline(&l));
    }
    for l in header(c) {
        let _ = writeln!(out, "- {}", inline(&l));
    }
    let split = rows.iter().take_while(|r| flagged(r.verdict)).count();
    let (hits, rest) = rows.split_at(split);
    if !hits.is_empty() {
        out += "\n";
        out += &md_table(&head, hits);
    }
    let why = explained(c, usize::MAX);
    if let Some((head, lines)) = why.split_first() {
        let _ = write!(out, "\n**{}**\n\n{}", inline(head), code(lines));
    }
    if !rest.is_empty() {
        let verdicts: Vec<Verdict> = rest.iter().map(|r| r.verdict).collect();
        let _ = write!(
            out,
            "\n<details><summary>{}</summary>\n\n{}\n</details>\n",
            counts(&verdicts).replacen("benchmark", "other benchmark", 1),
            md_table(&head, rest)
        );
    }
    for l in unsupported(c) {
        let _ = write!(out, "\n- {}", inline(&l));
    }
    out + "\n" + &totals(c) + "\n"
}

/// A Markdown table of `rows` under `head`: the names left-aligned, the
/// figures right.
fn md_table(head: &[String], rows: &[Row]) -> String {
    let mut t = format!("| {} |\n|", head.join(" | "));
    let align: Vec<&str> = (0..head.len())
        .map(|i| if i == 0 { ":--" } else { "--:" })
        .collect();
    t += &align.join("|");
    t += "|\n";
    for r in rows {
        let _ = writeln!(t, "| {} |", md_cells(r).join(" | "));
    }
    t
}

/// A row's cells as Markdown: the name and the verdict's reason are
/// outside text, the rest figures; a verdict to act on in bold.
fn md_cells(r: &Row) -> Vec<String> {
    let last = r.cells.len() - 1;
    let mut cells: Vec<String> = r
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 || i == last {
                inline(c)
            } else {
                c.clone()
            }
        })
        .collect();
    if flagged(r.verdict) {
        let v = cells.last_mut().expect("verdict cell");
        *v = format!("**{v}**");
    }
    cells
}
