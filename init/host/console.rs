//! Watching a guest's console: frames, progress, panics, and the end.

use crate::report::frame::{Frame, FrameError, Parser};
use crate::runner::PROGRESS;

/// Lines that mean the kernel crashed.
const CRASH_MARKERS: &[&str] = &[
    "Kernel panic - not syncing",
    "BUG: ",
    "Oops: ",
    "general protection fault",
    "Unable to handle kernel",
    "kernel BUG at",
];

/// The guest's first words as PID 1 (see guest::pid1_main).
pub const INIT_MARKER: &str = "as PID 1";

/// Everything learnt from a console so far.
#[derive(Default)]
pub struct Console {
    pub log: String,
    pub frames: Vec<Frame>,
    pub errors: Vec<FrameError>,
    /// The crash line and a few after it.
    pub crash: Vec<String>,
    pub reached_init: bool,
    /// The latest `i/n name` progress marker.
    pub progress: Option<(usize, usize, String)>,
    parser: Parser,
}

/// Parses `@@TRIG-PROGRESS 3/42 name`.
pub fn parse_progress(line: &str) -> Option<(usize, usize, String)> {
    let rest = &line[line.find(PROGRESS)? + PROGRESS.len()..];
    let (frac, name) = rest.trim().split_once(' ')?;
    let (i, n) = frac.split_once('/')?;
    Some((i.parse().ok()?, n.parse().ok()?, name.to_string()))
}

impl Console {
    /// Takes one line; returns a new progress marker if it was one.
    pub fn feed(&mut self, line: &str) -> Option<(usize, usize, String)> {
        self.log.push_str(line);
        self.log.push('\n');
        let clean = line.trim_end_matches('\r');
        // the crash line, then a few lines of its context
        let in_crash = !self.crash.is_empty() && self.crash.len() < 8;
        if in_crash || (self.crash.is_empty() && CRASH_MARKERS.iter().any(|m| clean.contains(m))) {
            self.crash.push(clean.to_string());
        }
        if clean.contains(INIT_MARKER) {
            self.reached_init = true;
        }
        match self.parser.feed(clean) {
            Some(Ok(f)) => self.frames.push(f),
            Some(Err(e)) => self.errors.push(e),
            None => {}
        }
        let p = parse_progress(clean);
        if p.is_some() {
            self.progress.clone_from(&p);
        }
        p
    }

    /// Call when the output ended.
    pub fn close(&mut self) {
        self.errors.extend(self.parser.finish());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::frame::encode;

    #[test]
    fn panic_is_quoted_with_context() {
        let mut c = Console::default();
        for l in [
            "[    0.5] VFS: Cannot open root device",
            "[    0.5] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)",
            "[    0.5] CPU: 0 PID: 1 Comm: swapper/0",
        ] {
            c.feed(l);
        }
        assert_eq!(c.crash.len(), 2);
        assert!(c.crash[0].contains("Unable to mount root fs"));
        assert!(!c.reached_init);
    }

    #[test]
    fn frames_and_progress() {
        let mut c = Console::default();
        c.feed("trig-init 0.1.0 as PID 1");
        assert_eq!(
            c.feed("@@TRIG-PROGRESS 3/42 trig-kprobe"),
            Some((3, 42, "trig-kprobe".into()))
        );
        for l in encode("report", "{}") {
            c.feed(l.trim_end());
        }
        c.close();
        assert!(c.reached_init && c.crash.is_empty() && c.errors.is_empty());
        assert_eq!(c.frames.len(), 1);
    }

    #[test]
    fn cut_output_is_truncated_frame() {
        let mut c = Console::default();
        let lines = encode("report", "{\"a\":1}");
        c.feed(lines[0].trim_end());
        c.close();
        assert!(c.errors[0].to_string().contains("truncated"));
    }
}
