//! The lines that say which functions moved (`compare`'s movers), for
//! the text formats and mail.

use super::mover_source_lines;
use crate::outside::text::{line, pad, width as columns, wrap};
use trig_analysis::compare::cache_lines::CacheLineMove;
use trig_analysis::compare::movers::{FunctionMove, Movers};
use trig_analysis::compare::MIN_MOVE;

/// Text lines that explain `m` for benchmark `name`.
pub fn lines(name: &str, m: &Movers) -> Vec<String> {
    lines_within(name, m, usize::MAX)
}

/// [`lines`] within `width` columns (mail): the summary wrapped, and a
/// function name too long for its row on a line of its own, its figures
/// on the next.
pub fn lines_within(name: &str, m: &Movers, width: usize) -> Vec<String> {
    let mut out = wrap(&summary(name, m), width, 2);
    out.extend(functions(m, width));
    out.extend(mover_source_lines::note(m, width));
    for l in &m.shared {
        out.extend(mover_source_lines::indented(
            &shared_cache_line(l),
            2,
            width,
        ));
    }
    out
}

/// Where the change per event lies: kernel or user space, and of the
/// kernel's, the functions listed or the others.
fn summary(name: &str, m: &Movers) -> String {
    let over = m
        .against
        .as_ref()
        .map(|b| format!(" over {b}"))
        .unwrap_or_default();
    format!(
        "{name}{over}: {:+.2} insn/event: kernel {:+.2}, user space {:+.2}; {}",
        m.total,
        m.kernel,
        m.total - m.kernel,
        match m.functions.len() {
            0 => format!("no kernel function moved by {MIN_MOVE} or more"),
            n => format!(
                "the {n} listed {:+.2}, other kernel functions {:+.2}",
                m.listed(),
                m.kernel - m.listed()
            ),
        }
    )
}

/// Each function that moved: its name in a column as wide as the names
/// that fit beside the widest figures, a longer one on a line of its own;
/// then its source lines.
fn functions(m: &Movers, width: usize) -> Vec<String> {
    let figures: Vec<String> = m.functions.iter().map(figures_of).collect();
    let room = width.saturating_sub(4 + figures.iter().map(String::len).max().unwrap_or(0));
    let names = m.functions.iter().map(|f| columns(&f.name));
    let name_width = names.clone().filter(|&n| n <= room).max().unwrap_or(0);
    let mut out = Vec::new();
    for (f, fig) in m.functions.iter().zip(&figures) {
        if columns(&f.name) <= name_width {
            out.push(format!("  {}  {fig}", pad(&f.name, name_width, true)));
        } else {
            out.push(format!("  {}", line(&f.name)));
            out.push(format!("  {}  {fig}", pad("", name_width, true)));
        }
        out.extend(mover_source_lines::rows(f, width));
    }
    out
}

/// A function's change and figures, and each of its counts that moved
/// by [`MIN_MOVE`] or more.
fn figures_of(f: &FunctionMove) -> String {
    let counts: String = [
        ("calls", f.calls),
        ("L1 misses", f.l1_misses),
        ("LL misses", f.ll_misses),
        ("coherence misses", f.coherence),
    ]
    .iter()
    .filter(|(_, x)| x.abs() >= MIN_MOVE)
    .map(|(what, x)| format!(", {what} {x:+.2}"))
    .collect();
    format!(
        "{:>+9.2}  ({:.2} -> {:.2}){counts}",
        f.change, f.base, f.new
    )
}

/// A shared line that moved, with the functions that wrote and read it.
fn shared_cache_line(l: &CacheLineMove) -> String {
    let by = |what: &str, fs: &[String]| match fs.len() {
        0 => String::new(),
        _ => format!(
            "; {what} by {}",
            fs.iter().map(|f| line(f)).collect::<Vec<_>>().join(", ")
        ),
    };
    format!(
        "shared line {}  {:+.2} coherence misses/event ({:.2} -> {:.2}){}{}",
        line(&l.name),
        l.change,
        l.base,
        l.new,
        by("written", &l.writers),
        by("read", &l.readers)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_analysis::compare::cache_lines::CacheLineMove;
    use trig_analysis::compare::movers::FunctionMove;

    #[test]
    fn mail_lines_keep_within_their_width() {
        let long = "a_kernel_function_with_a_name_of_sixty_characters_or_so_xyz";
        let moved = |name: &str, base: f64, new: f64| FunctionMove {
            name: name.into(),
            base,
            new,
            change: new - base,
            calls: 0.0,
            l1_misses: 0.0,
            ll_misses: 0.0,
            coherence: 0.0,
            lines: Vec::new(),
        };
        let m = Movers {
            against: None,
            total: 100.0,
            kernel: 100.0,
            functions: vec![moved(long, 10.0, 90.0), moved("vfs_write", 100.0, 120.0)],
            shared: Vec::new(),
            no_lines: None,
        };
        let text = lines_within("trig-kprobe-multi-something", &m, 72);
        for l in &text {
            assert!(
                l.chars().count() <= 72,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(text.iter().any(|l| l.trim() == long), "{text:#?}");
        assert!(text
            .iter()
            .any(|l| l.contains("vfs_write") && l.contains("+20.00")));
    }

    #[test]
    fn a_shared_line_that_moved_is_named_with_its_writers() {
        let m = Movers {
            against: None,
            total: 1.0,
            kernel: 1.0,
            functions: Vec::new(),
            shared: vec![CacheLineMove {
                name: "trig_syscall_count+0x0".into(),
                base: 0.0,
                new: 0.887,
                change: 0.887,
                writers: vec!["do_syscall_64".into(), "evil\u{1b}[2J".into()],
                readers: Vec::new(),
            }],
            no_lines: None,
        };
        let text = lines("trig-base", &m);
        let row = text.iter().find(|l| l.contains("shared line")).unwrap();
        assert!(
            row.contains("trig_syscall_count+0x0  +0.89 coherence misses/event (0.00 -> 0.89); written by do_syscall_64"),
            "{row}"
        );
        assert!(!row.contains('\u{1b}'), "{row}");
        for l in lines_within("trig-base", &m, 60) {
            assert!(l.chars().count() <= 60, "{l}");
        }
    }

    #[test]
    fn a_function_name_past_a_format_width_panics_nothing() {
        let long = "f".repeat(70_000);
        let m = Movers {
            against: None,
            total: 1.0,
            kernel: 1.0,
            functions: vec![FunctionMove {
                name: long.clone(),
                base: 1.0,
                new: 2.0,
                change: 1.0,
                calls: 0.0,
                l1_misses: 0.0,
                ll_misses: 0.0,
                coherence: 0.0,
                lines: Vec::new(),
            }],
            shared: Vec::new(),
            no_lines: None,
        };
        let text = lines("trig-kprobe", &m);
        assert!(text.iter().any(|l| l.contains(&long)));
    }
}
