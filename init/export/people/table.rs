//! `compare --format table`: the aligned terminal table in the style of
//! LKP reports and `veristat -C`, flagged rows first, ANSI colours on
//! request.

use super::pieces::{explained, header, headlines, rows, totals, unsupported};
use crate::outside::text::{line as one_line, pad, width};
use std::fmt::Write;
use trig_analysis::compare::{Comparison, Verdict};

pub fn comparison(c: &Comparison, color: bool) -> String {
    let (head, rows) = rows(c);
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(&r.cells) {
            *w = (*w).max(width(cell));
        }
    }
    let last = widths.len() - 1;
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, cell)| match i {
                0 => pad(cell, widths[0], true),
                i if i == last => one_line(cell).into_owned(),
                _ => pad(cell, widths[i], false),
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    // every line but the rows (padded, so shown, above) holds outside text
    let shown = |lines: Vec<String>| -> String {
        let lines: Vec<_> = lines.iter().map(|l| one_line(l)).collect();
        lines.join("\n")
    };
    let mut out = shown(headlines(c)) + "\n\n" + &shown(header(c)) + "\n\n";
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
    for l in unsupported(c) {
        let _ = writeln!(out, "{}", one_line(&l));
    }
    for l in explained(c, usize::MAX) {
        let _ = write!(out, "\n{}", one_line(&l));
    }
    out + "\n" + &totals(c) + "\n"
}
