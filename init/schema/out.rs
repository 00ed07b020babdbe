//! The standard streams, written without a panic: std's `print!` panics
//! when stdout is a full disk or a closed pipe. What a command prints on
//! stdout is its product, so a write there that fails is the command's
//! error (exit 4: "cannot write standard output: ..."; `bench` exits 1,
//! as upstream's does, and dies by SIGPIPE on a closed pipe). Code that
//! prints from deep inside a run (the guest's recorder and sampler) goes
//! on, and the command asks [`failure`] at its end. stderr has no
//! one left to tell: a failed write there is dropped.

use crate::error::{infra, Error};
use std::io::{self, Write};
use std::sync::Mutex;

/// Why the first output that could not be written could not.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Writes `text` to stdout whole, flushed.
pub fn stdout(text: &str) -> Result<(), Error> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| {
            let why = format!("cannot write standard output: {e}");
            failed(why.clone());
            infra(why)
        })
}

/// Remembers that an output (stdout, a report's file) could not be
/// written, and why, for the command to end with.
pub fn failed(why: String) {
    let mut first = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    first.get_or_insert(why);
}

/// The first output of this process that could not be written, if any.
pub fn failure() -> Option<Error> {
    let first = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    first.clone().map(infra)
}

/// Writes `text` to stderr whole; a failure is dropped.
pub fn stderr(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// `print!` to stdout, returning what [`stdout`] returns.
#[macro_export]
macro_rules! stdout {
    ($($arg:tt)*) => {
        $crate::out::stdout(&format!($($arg)*))
    };
}

/// `println!` to stdout, returning what [`stdout`] returns.
#[macro_export]
macro_rules! stdoutln {
    () => {
        $crate::out::stdout("\n")
    };
    ($($arg:tt)*) => {
        $crate::out::stdout(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics.
#[macro_export]
macro_rules! stderr {
    ($($arg:tt)*) => {
        $crate::out::stderr(&format!($($arg)*))
    };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! stderrln {
    () => {
        $crate::out::stderr("\n")
    };
    ($($arg:tt)*) => {
        $crate::out::stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}
