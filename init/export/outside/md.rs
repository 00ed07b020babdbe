//! Outside text in Markdown (a CI comment, a GitHub step summary): shown
//! as written, never rendered. A pull request's CI runner can forge a
//! results file that a nightly's summary renders (docs/faults.md,
//! "Outside text"), so a subject's `<img>`, `[approve](…)` or
//! `<details>` must reach the page as text, not as an image, a link or an
//! unclosed block. The Markdown formats take every field that is not
//! their own literal through here.

use crate::outside::text;

/// `text` as inline Markdown on one line (a list item, a heading, a
/// table cell, bold): what acts on a terminal shown as its escape (as in
/// [`text::line`], newlines included, so that a heading or a row stays
/// one line), every CommonMark metacharacter escaped, `<` and `&` as
/// entities so that no inline HTML or entity is read.
pub fn inline(text: &str) -> String {
    let text = text::line(text);
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.chars().enumerate() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // `!` is left: it opens an image only before `[`, escaped
            // here
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            // what opens a block at the start of a line: a heading, a
            // list or a setext underline (a list item's text starts one)
            '#' | '-' | '+' | '=' if i == 0 => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    // "12. x" opens an ordered list after digits too ("6.1.0" does not)
    let n = out.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
    let marker =
        out[n..].starts_with(['.', ')']) && matches!(out[n + 1..].chars().next(), None | Some(' '));
    match n {
        n if n > 0 && marker => {
            out.insert(n, '\\');
            out
        }
        _ => out,
    }
}

/// `lines` of outside text in a fenced code block that none of them can
/// close: the fence is longer than any run of backticks they hold.
pub fn code(lines: &[String]) -> String {
    let longest = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body: Vec<String> = lines.iter().map(|l| text::line(l).into_owned()).collect();
    format!("{fence}text\n{}\n{fence}\n", body.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_of_the_text_is_rendered() {
        assert_eq!(
            inline("<img src=x> [approve](https://e.com) <details>"),
            "&lt;img src=x&gt; \\[approve\\](https://e.com) &lt;details&gt;"
        );
        assert_eq!(inline("a|b\nc"), "a\\|b\\\\nc");
        assert_eq!(inline("# x"), "\\# x");
        assert_eq!(inline("- x"), "\\- x");
        assert_eq!(inline("12. x"), "12\\. x");
        assert_eq!(inline("6.1.0"), "6.1.0");
        assert_eq!(inline("trig-kprobe"), "trig-kprobe");
        assert_eq!(inline("`x` &amp;"), "\\`x\\` &amp;amp;");
        let block = code(&["a ```` b".into()]);
        assert!(block.starts_with("`````text\n"), "{block}");
    }
}
