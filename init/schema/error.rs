//! The error of a command, classed by where it came from: the class gives
//! the exit status (see [`exit`]), the message names the cause.

use crate::exit;
use std::borrow::Cow;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A bad command line: an option, an argument, a benchmark's name.
    Usage,
    /// An input that cannot be read or makes no sense: a results file, a
    /// history, a kernel, an alerts file.
    Input,
    /// What could not be run or written: QEMU, the host's tools, an
    /// output file.
    Infra,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub class: Class,
    pub message: String,
    /// A message that is a list (compare's differences, the nights a
    /// history cannot place): its items, which the one who says the
    /// error shows each on a line of its own. Apart from the message, so
    /// that no outside text in it (a file's name with any character) is
    /// ever taken for an item.
    pub items: Vec<String>,
}

pub fn usage(message: impl Into<String>) -> Error {
    Error::new(Class::Usage, message)
}

pub fn input(message: impl Into<String>) -> Error {
    Error::new(Class::Input, message)
}

pub fn infra(message: impl Into<String>) -> Error {
    Error::new(Class::Infra, message)
}

impl Error {
    fn new(class: Class, message: impl Into<String>) -> Error {
        Error {
            class,
            message: message.into(),
            items: Vec::new(),
        }
    }

    /// This error as a list: its message the head, then `items`.
    pub fn listing(self, items: Vec<String>) -> Error {
        Error { items, ..self }
    }

    /// The exit statuses of docs/faults.md: 2 for what the caller got
    /// wrong, 4 for what the host could not do.
    pub fn status(&self) -> u8 {
        match self.class {
            Class::Usage | Class::Input => exit::USAGE,
            Class::Infra => exit::INFRA,
        }
    }
}

impl Error {
    /// This error as the cause of `what`: "what: cause", of its class.
    pub fn context(self, what: impl fmt::Display) -> Error {
        Error {
            message: format!("{what}: {}", self.message),
            ..self
        }
    }
}

/// The message, and each item on a line of its own, indented.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        self.items.iter().try_for_each(|i| write!(f, "\n  {i}"))
    }
}

impl std::error::Error for Error {}

/// `text` with every character that acts on a terminal instead of showing
/// (a control character; a bidirectional override or isolate, which
/// reorders what follows) shown as its escape (`\r`, `\u{1b}`), and its
/// newlines too unless `lines`. Errors and warnings quote outside text (a
/// file's name, a release: docs/faults.md, "Outside text"); the
/// terminal's text of the renderers (`trig_export::outside::text`) is this too.
pub fn shown(text: &str, lines: bool) -> Cow<'_, str> {
    let acts = |c: char| {
        (c.is_control() && !(lines && c == '\n'))
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Says `message` on stderr as a warning of one line, [`shown`] (a
/// file's name cannot start a line that reads as trig-init's).
pub fn warn(message: impl fmt::Display) {
    crate::stderrln!("trig-init: warning: {}", shown(&message.to_string(), false));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_map_to_the_documented_statuses() {
        assert_eq!(usage("u").status(), 2);
        assert_eq!(input("i").status(), 2);
        assert_eq!(infra("w").status(), 4);
        assert_eq!(infra("out: denied").to_string(), "out: denied");
    }
}
