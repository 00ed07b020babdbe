//! Outside text as plain text for people, on a terminal or in a mail:
//! every character that would act instead of showing (escape sequences,
//! CR, NUL, bidirectional overrides) shown as its escape, and text
//! measured, cut, padded and wrapped by display width, never by bytes or
//! characters. A results file is anyone's (docs/faults.md, "Outside
//! text"): every renderer for people takes its fields through here.

use std::borrow::Cow;
use trig_schema::error;
use unicode_width::UnicodeWidthStr;

/// `text` with every character that acts on a terminal shown as its
/// escape (`\r`, `\u{1b}`), newlines kept: for a whole text of many
/// lines ([`error::shown`], which errors and warnings are shown by too).
pub fn visible(text: &str) -> Cow<'_, str> {
    error::shown(text, true)
}

/// `text` on one line: [`visible`], its newlines shown too (a cell, a
/// name, a list item).
pub fn line(text: &str) -> Cow<'_, str> {
    error::shown(text, false)
}

/// The columns `text` takes on one line of a terminal.
pub fn width(text: &str) -> usize {
    line(text).width()
}

/// `text` on one line, padded with spaces to `w` columns: on the right
/// (`left` aligned), else on the left. Never through `format!`'s width,
/// which counts characters and panics past 65,535.
pub fn pad(text: &str, w: usize, left: bool) -> String {
    let text = line(text);
    let fill = " ".repeat(w.saturating_sub(text.width()));
    if left {
        format!("{text}{fill}")
    } else {
        format!("{fill}{text}")
    }
}

/// The longest head of `text` (on one line) within `max` columns.
fn head(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in line(text).chars() {
        out.push(c);
        if out.width() > max {
            out.pop();
            break;
        }
    }
    out
}

/// At most `max` columns of `text`, cut between words (the JSON keeps
/// all of it).
pub fn words(text: &str, max: usize) -> String {
    if width(text) <= max {
        return line(text).into_owned();
    }
    let cut = head(text, max);
    let head = cut.rfind(' ').map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", head.trim_end_matches([',', ':', ';', ' ']))
}

/// `text` filled into lines of at most `width` columns, broken between
/// words, every line after the first indented by `indent` spaces; a word
/// longer than a line keeps a line of its own.
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let word = line(word);
        let line = lines.last_mut().expect("one line at least");
        if line.is_empty() {
            line.push_str(&word);
        } else if line.width() + 1 + word.width() <= width {
            line.push(' ');
            line.push_str(&word);
        } else {
            lines.push(" ".repeat(indent) + &word);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_between_words_within_the_width() {
        let text = "-10.6% regression of trig-kprobe rate, 0.403→0.360 M/s, q=0.029, 4+4 boots, 2f22765d→6b1f5330";
        let lines = wrap(text, 40, 2);
        assert_eq!(
            lines,
            [
                "-10.6% regression of trig-kprobe rate,",
                "  0.403→0.360 M/s, q=0.029, 4+4 boots,",
                "  2f22765d→6b1f5330",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 40));
        assert_eq!(wrap("short", 72, 2), ["short"]);
        // a word wider than the line is not cut
        assert_eq!(wrap("a bbbbbbbbbb c", 5, 1), ["a", " bbbbbbbbbb", " c"]);
    }

    #[test]
    fn what_acts_is_shown_and_widths_are_columns() {
        assert_eq!(line("trig-kprobe\rFAKE"), "trig-kprobe\\rFAKE");
        assert_eq!(visible("a\x1b[2J\nb\u{202e}"), "a\\u{1b}[2J\nb\\u{202e}");
        assert_eq!(line("a\nb"), "a\\nb");
        assert!(matches!(line("plain"), Cow::Borrowed(_)));
        // full-width two columns, combining and zero-width none
        assert_eq!(width("全角"), 4);
        assert_eq!(width("e\u{301}\u{200b}"), 1);
        assert_eq!(pad("全角", 6, true), "全角  ");
        assert_eq!(pad("x", 3, false), "  x");
        // past format!'s limit of 65,535
        assert_eq!(pad("x", 70_000, true).len(), 70_000);
        assert_eq!(words("全角全角 全角全角", 9), "全角全角…");
        assert!(wrap("全角全角 全角全角", 10, 0)
            .iter()
            .all(|l| width(l) <= 10));
    }
}
