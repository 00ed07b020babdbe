//! `trig-init profile --lines`: one function's source lines, BASE
//! against NEW, as an annotated diff: a mark (` ` the same, `!` changed,
//! `+` NEW's alone, `-` BASE's alone), the place on each side, the
//! instructions per event on each and the change, and with the sources
//! at hand each line's text. File names and source text are anyone's:
//! shown through `text`.

use crate::outside::text::{line, pad};
use trig_analysis::compare::source_lines::SourceLineMove;
use trig_analysis::compare::MIN_MOVE;

/// A line's mark in the diff.
fn mark(l: &SourceLineMove) -> char {
    match (l.base_line, l.line) {
        (None, _) => '+',
        (_, None) => '-',
        _ if l.change.abs() >= MIN_MOVE => '!',
        _ => ' ',
    }
}

/// The diff of `function` in `bench`; `text` gives a line's source text
/// (file, line, whether NEW's), if known.
pub fn render(
    bench: &str,
    function: &str,
    lines: &[SourceLineMove],
    text: &dyn Fn(&str, u32, bool) -> Option<String>,
) -> String {
    let (b, n): (f64, f64) = lines
        .iter()
        .fold((0.0, 0.0), |(b, n), l| (b + l.base, n + l.new));
    let mut out = format!(
        "--- BASE {} in {}: {b:.2} insn/event on its lines\n+++ NEW  {} in {}: {n:.2} insn/event on its lines\n",
        line(function),
        line(bench),
        line(function),
        line(bench)
    );
    if lines.is_empty() {
        out.push_str("(no source lines of it on either side)\n");
        return out;
    }
    let place = |l: &SourceLineMove| {
        let num = |x: Option<u32>| x.map_or("-".to_string(), |x| x.to_string());
        format!("{}:{} -> {}", l.file, num(l.base_line), num(l.line))
    };
    let w = lines
        .iter()
        .map(|l| crate::outside::text::width(&place(l)))
        .max()
        .unwrap_or(0);
    for l in lines {
        let change = match l.change.abs() >= MIN_MOVE {
            true => format!("{:+9.2}", l.change),
            false => " ".repeat(9),
        };
        let src = match (l.line, l.base_line) {
            (Some(n), _) => text(&l.file, n, true),
            (None, Some(b)) => text(&l.file, b, false),
            _ => None,
        };
        // a tab is the kernel's indent, not a character to escape
        let src = src
            .map(|s| format!("  | {}", line(&s.trim_end().replace('\t', "        "))))
            .unwrap_or_default();
        out.push_str(&format!(
            "{} {}  {:>9.2} {:>9.2} {change}{src}\n",
            mark(l),
            pad(&place(l), w, true),
            l.base,
            l.new,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(base_line: Option<u32>, new_line: Option<u32>, base: f64, new: f64) -> SourceLineMove {
        SourceLineMove {
            file: "fs/exec.c".into(),
            base_line,
            line: new_line,
            base,
            new,
            change: new - base,
        }
    }

    #[test]
    fn marks_say_what_changed_and_text_is_shown_escaped() {
        let lines = [
            moved(Some(1235), Some(1236), 7.0, 7.0),
            moved(None, Some(1237), 0.0, 3.0),
            moved(Some(1236), None, 2.0, 0.0),
            moved(Some(1237), Some(1239), 3.0, 4.0),
        ];
        let text = |_: &str, n: u32, new: bool| {
            (new && n == 1237).then(|| "\tspin();\u{1b}[2J\r".to_string())
        };
        let d = render("rename-base", "__set_task_comm", &lines, &text);
        let rows: Vec<&str> = d.lines().skip(2).collect();
        assert!(rows[0].starts_with("  fs/exec.c:1235 -> 1236"), "{d}");
        assert!(rows[1].starts_with("+ fs/exec.c:- -> 1237"), "{d}");
        assert!(
            rows[1].contains("+3.00") && rows[1].contains("|         spin();"),
            "{d}"
        );
        assert!(!d.contains('\u{1b}') && !d.contains('\r'), "{d}");
        assert!(rows[2].starts_with("- fs/exec.c:1236 -> -"), "{d}");
        assert!(rows[3].starts_with("! "), "{d}");
        assert!(
            d.starts_with("--- BASE __set_task_comm in rename-base: 12.00"),
            "{d}"
        );
    }
}
