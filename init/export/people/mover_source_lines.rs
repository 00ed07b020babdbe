//! The source lines under each mover (`--profile` with debug info): the
//! lines of the function that moved most, as `file:line +change (base ->
//! new)`, and why there are none when a side has none. File names come
//! from the kernel's DWARF, anyone's text: shown through `text`.

use crate::outside::text::{line, width as columns, wrap};
use trig_analysis::compare::movers::{FunctionMove, Movers};

/// The rows of `f`'s lines, indented under its own row, within `width`.
pub fn rows(f: &FunctionMove, width: usize) -> Vec<String> {
    f.lines
        .iter()
        .flat_map(|l| {
            let text = format!(
                "{}  {:+.2}  ({:.2} -> {:.2})",
                line(&l.place()),
                l.change,
                l.base,
                l.new
            );
            indented(&text, 4, width)
        })
        .collect()
}

/// `text` indented by `indent` spaces, wrapped (its spacing then lost)
/// only where it does not fit `width`.
pub(super) fn indented(text: &str, indent: usize, width: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    if columns(text).saturating_add(indent) <= width {
        return vec![format!("{pad}{text}")];
    }
    wrap(text, width.saturating_sub(indent), 2)
        .into_iter()
        .map(|l| format!("{pad}{l}"))
        .collect()
}

/// Why the movers have no source lines, when they have none.
pub fn note(m: &Movers, width: usize) -> Vec<String> {
    match &m.no_lines {
        Some(why) if !m.functions.is_empty() => {
            indented(&format!("(no source lines: {})", line(why)), 2, width)
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_analysis::compare::source_lines::SourceLineMove;

    fn moved(file: &str) -> FunctionMove {
        FunctionMove {
            name: "__set_task_comm".into(),
            base: 23.0,
            new: 26.0,
            change: 3.0,
            calls: 0.0,
            l1_misses: 0.0,
            ll_misses: 0.0,
            coherence: 0.0,
            lines: vec![SourceLineMove {
                file: file.into(),
                base_line: None,
                line: Some(1237),
                base: 0.0,
                new: 3.0,
                change: 3.0,
            }],
        }
    }

    #[test]
    fn a_line_is_named_with_its_change() {
        let r = rows(&moved("fs/exec.c"), usize::MAX);
        assert_eq!(r, ["    fs/exec.c:1237  +3.00  (0.00 -> 3.00)"]);
    }

    #[test]
    fn a_file_name_from_dwarf_cannot_act_on_the_terminal() {
        let r = rows(&moved("fs/\u{1b}[2Jexec.c\nfake"), usize::MAX).join("\n");
        assert!(!r.contains('\u{1b}') && !r.contains("\nfake"), "{r}");
    }

    #[test]
    fn no_lines_says_why() {
        let m = Movers {
            against: None,
            total: 3.0,
            kernel: 3.0,
            functions: vec![moved("fs/exec.c")],
            shared: Vec::new(),
            no_lines: Some("BASE: no vmlinux with DWARF".into()),
        };
        assert_eq!(
            note(&m, usize::MAX),
            ["  (no source lines: BASE: no vmlinux with DWARF)"]
        );
    }
}
