//! Plain text for people: lines shortened or wrapped between words, for
//! the tables of `vm` and `compare` and for mail.

/// At most `max` characters of `text`, cut between words (the JSON keeps
/// all of it).
pub fn words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let head = cut.rfind(' ').map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", head.trim_end_matches([',', ':', ';', ' ']))
}

/// `text` filled into lines of at most `width` characters, broken between
/// words, every line after the first indented by `indent` spaces; a word
/// longer than a line keeps a line of its own.
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if line.is_empty() {
            line.push_str(word);
        } else if line.chars().count() + 1 + word.chars().count() <= width {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(format!("{:indent$}{word}", ""));
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
}
