//! Watching a guest's console: frames, progress, panics, and the end.

use trig_schema::frame::{self, parse_progress, Frame, FrameError, Parser, INIT_MARKER};

/// The line of a panic: after it the kernel does nothing more (with
/// `panic=0` it just hangs), so the host waits only a little longer.
pub const PANIC: &str = "Kernel panic - not syncing";

/// Lines that mean the kernel crashed.
const CRASH_MARKERS: &[&str] = &[
    PANIC,
    "BUG: ",
    "Oops: ",
    "general protection fault",
    "Unable to handle kernel",
    "kernel BUG at",
];

/// Console output kept per boot, in memory and in its log: a runaway
/// guest prints at the serial speed for the whole timeout.
pub const KEEP: usize = 64 << 20;
/// Longer lines are cut into pieces of this size.
pub const MAX_LINE: usize = 64 << 10;
/// Framing errors kept per boot: the first say why; a stream of garbage
/// would add one a line.
pub const MAX_ERRORS: usize = 64;
/// Frame payloads kept per boot, the newest (the final report is last).
pub const KEEP_FRAMES: usize = 2 * frame::MAX_FRAME;

/// Calls `line` with each line of `r` (without its newline, lossily
/// decoded, at most `max` bytes: longer ones come in pieces) until the
/// end of `r` or until `line` returns false.
pub fn read_lines(r: impl std::io::Read, max: usize, mut line: impl FnMut(String) -> bool) {
    use std::io::BufRead;
    let mut r = std::io::BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        let chunk = match r.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(c) => c,
        };
        let room = max - buf.len();
        let (take, end) = match chunk.iter().take(room).position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len().min(room), buf.len() + chunk.len() >= max),
        };
        buf.extend_from_slice(&chunk[..take]);
        r.consume(take);
        if end {
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            if !line(String::from_utf8_lossy(&buf).into_owned()) {
                return;
            }
            buf.clear();
        }
    }
    if !buf.is_empty() {
        line(String::from_utf8_lossy(&buf).into_owned());
    }
}

/// Everything learnt from a console so far.
#[derive(Default)]
pub struct Console {
    pub log: String,
    pub frames: Vec<Frame>,
    pub errors: Vec<FrameError>,
    /// The crash line and a few after it.
    pub crash: Vec<String>,
    pub reached_init: bool,
    /// Whether a panic line came (see [`PANIC`]).
    pub panicked: bool,
    /// Bytes of output not kept in `log`, beyond [`KEEP`].
    pub dropped: u64,
    /// The latest `i/n name` progress marker.
    pub progress: Option<(usize, usize, String)>,
    parser: Parser,
}

impl Console {
    /// Takes one line; returns a new progress marker if it was one.
    pub fn feed(&mut self, line: &str) -> Option<(usize, usize, String)> {
        if self.log.len() + line.len() < KEEP {
            self.log.push_str(line);
            self.log.push('\n');
        } else {
            self.dropped += line.len() as u64 + 1;
        }
        let clean = line.trim_end_matches('\r');
        // the crash line, then a few lines of its context
        let in_crash = !self.crash.is_empty() && self.crash.len() < 8;
        if in_crash || (self.crash.is_empty() && CRASH_MARKERS.iter().any(|m| clean.contains(m))) {
            self.crash.push(clean.to_string());
        }
        self.panicked |= clean.contains(PANIC);
        if clean.contains(INIT_MARKER) {
            self.reached_init = true;
        }
        match self.parser.feed(clean) {
            Some(Ok(f)) => self.keep_frame(f),
            Some(Err(e)) if self.errors.len() < MAX_ERRORS => self.errors.push(e),
            Some(Err(_)) | None => {}
        }
        let p = parse_progress(clean);
        if p.is_some() {
            self.progress.clone_from(&p);
        }
        p
    }

    /// Keeps `f`, and of the frames before it as many of the newest as
    /// [`KEEP_FRAMES`] allows.
    fn keep_frame(&mut self, f: Frame) {
        self.frames.push(f);
        let mut total: usize = self.frames.iter().map(|f| f.payload.len()).sum();
        let mut drop = 0;
        while total > KEEP_FRAMES && drop + 1 < self.frames.len() {
            total -= self.frames[drop].payload.len();
            drop += 1;
        }
        self.frames.drain(..drop);
    }

    /// Call when the output ended.
    pub fn close(&mut self) {
        self.errors.extend(self.parser.finish());
        if self.dropped > 0 {
            let note = format!(
                "[trig-init: console output over {} MiB; {} more bytes not kept]\n",
                KEEP >> 20,
                self.dropped
            );
            self.log.push_str(&note);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_schema::frame::{self, encode};

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
        for l in encode(frame::REPORT, "{}") {
            c.feed(l.trim_end());
        }
        c.close();
        assert!(c.reached_init && c.crash.is_empty() && c.errors.is_empty());
        assert_eq!(c.frames.len(), 1);
    }

    #[test]
    fn output_kept_is_capped_and_frames_still_parsed() {
        let mut c = Console::default();
        let line = "x".repeat(1 << 20);
        for _ in 0..80 {
            c.feed(&line);
        }
        for l in encode(frame::REPORT, "{}") {
            c.feed(l.trim_end());
        }
        c.close();
        assert!(c.log.len() <= KEEP + 200, "{}", c.log.len());
        assert!(c.dropped >= 16 << 20, "{}", c.dropped);
        assert!(c.log.ends_with("not kept]\n"));
        assert_eq!(c.frames.len(), 1, "a report after the flood still counts");
    }

    #[test]
    fn a_report_quoting_crash_messages_is_no_crash() {
        // the frame payload escapes spaces, so markers with one never match
        assert!(CRASH_MARKERS.iter().all(|m| m.contains(' ')));
        let json = r#"{"cmdline":"x=BUG: y=Kernel panic - not syncing","m":"@@TRIG-END report"}"#;
        let mut c = Console::default();
        for l in encode(frame::REPORT, json) {
            c.feed(l.trim_end());
        }
        c.close();
        assert!(c.crash.is_empty() && !c.panicked && c.errors.is_empty());
        assert_eq!(c.frames.len(), 1);
    }

    #[test]
    fn long_lines_come_in_pieces() {
        let text = format!("{}\nshort\n{}", "y".repeat(25), "z".repeat(3));
        let mut lines = Vec::new();
        read_lines(text.as_bytes(), 10, |l| {
            lines.push(l);
            true
        });
        assert_eq!(lines, ["yyyyyyyyyy", "yyyyyyyyyy", "yyyyy", "short", "zzz"]);
    }

    #[test]
    fn cut_output_is_truncated_frame() {
        let mut c = Console::default();
        let lines = encode(frame::REPORT, "{\"a\":1}");
        c.feed(lines[0].trim_end());
        c.close();
        assert!(c.errors[0].to_string().contains("truncated"));
    }

    mod untrusted {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(100))]
            /// Floods, cut lines, forged markers and crash lines: no panic,
            /// and everything kept is capped.
            #[test]
            fn any_console_is_bounded(
                lines in proptest::collection::vec(
                    prop_oneof![
                        any::<String>(),
                        "@@TRIG(-BEGIN|-END)? [ -~]{0,40}",
                        "(Kernel panic - not syncing|BUG: |Oops: )[ -~]{0,40}",
                        "@@TRIG-PROGRESS [0-9]{1,20}/[0-9]{1,20} [ -~]{0,30}",
                    ],
                    0..200,
                ),
            ) {
                let mut c = Console::default();
                for l in &lines {
                    c.feed(l);
                }
                c.close();
                prop_assert!(c.crash.len() <= 8);
                prop_assert!(c.errors.len() <= MAX_ERRORS + 1);
                prop_assert!(c.log.len() <= KEEP + 200);
            }
        }

        #[test]
        fn a_stream_of_orphan_end_lines_keeps_a_few_errors() {
            let mut c = Console::default();
            let junk = format!("@@TRIG-END report {}", "z".repeat(10_000));
            for _ in 0..10_000 {
                c.feed(&junk);
            }
            c.close();
            assert!(c.errors.len() <= MAX_ERRORS + 1, "{}", c.errors.len());
            assert!(c.errors.iter().all(|e| e.to_string().len() < 1000));
        }

        #[test]
        fn a_flood_of_frames_keeps_the_newest() {
            let mut c = Console::default();
            let big = "q".repeat(1 << 20);
            // more than KEEP_FRAMES of frames, then the final report
            for _ in 0..(KEEP_FRAMES >> 20) + 8 {
                for l in encode(frame::BENCH, &big) {
                    c.feed(l.trim_end());
                }
            }
            for l in encode(frame::REPORT, "{}") {
                c.feed(l.trim_end());
            }
            let kept: usize = c.frames.iter().map(|f| f.payload.len()).sum();
            assert!(kept <= KEEP_FRAMES, "{kept}");
            assert_eq!(c.frames.last().unwrap().kind, frame::REPORT);
        }
    }
}
