//! Framing of JSON documents on a console that the kernel writes to as well.
//!
//! ```text
//! @@TRIG-BEGIN report
//! @@TRIG 0 200 1f2e3d4c {"schema_version":1,...
//! @@TRIG 1 121 5a6b7c8d ...,"outcome":{"status":"complete"}}
//! @@TRIG-END report lines=2 len=5321 crc32=89abcdef
//! ```
//! Each line is written with one write(2), so kernel messages mostly land
//! between lines; the marker may follow other text on a line (a kernel
//! message without its newline) and CR/LF endings are accepted. A kernel
//! message that lands inside a data line is cut out again by the line's
//! length and CRC32 (it sits in the line, or ends it and the rest of the
//! line follows on a later one). The end line's length and CRC32 reject
//! anything lost or mangled beyond that.
//!
//! The payload is compact JSON, and every '@' and space in it (both only
//! inside its strings) goes as `\u0040` and `\u0020`: the same JSON, in
//! which no frame marker and no kernel crash message (each has a space)
//! can be forged by content such as an echoed command line.

use std::fmt;

const BEGIN: &str = "@@TRIG-BEGIN ";
const LINE: &str = "@@TRIG ";
const END: &str = "@@TRIG-END ";
/// The frame kinds the guest sends: the report so far (its outcome
/// `running`), before the first benchmark,
pub const HEADER: &str = "header";
/// each benchmark's result as it finishes,
pub const BENCH: &str = "bench";
/// the whole report at the end (twice),
pub const REPORT: &str = "report";
/// and the guest kernel's symbols (`--profile`).
pub const KALLSYMS: &str = "kallsyms";
/// The kernel's data symbols, to name the lines several producers share.
pub const DATASYMS: &str = "datasyms";

/// Marks the start of each benchmark on the console, for the host's
/// progress display: `@@TRIG-PROGRESS 3/42 trig-kprobe`.
pub const PROGRESS: &str = "@@TRIG-PROGRESS ";

/// The guest's first words as PID 1 (see guest::pid1_main), which tell
/// the host that /init was reached.
pub const INIT_MARKER: &str = "as PID 1";

/// Whether a console line is trig-init's: its first words, a progress
/// line or a frame's (the host's measure of a guest's progress).
pub fn is_ours(line: &str) -> bool {
    line.contains("@@TRIG") || line.contains(INIT_MARKER)
}

/// The progress line of the `i`-th (from 1) of `n` benchmarks.
pub fn progress_line(i: usize, n: usize, name: &str) -> String {
    format!("{PROGRESS}{i}/{n} {name}\n")
}

/// Parses `@@TRIG-PROGRESS 3/42 name` (anywhere on a line).
pub fn parse_progress(line: &str) -> Option<(usize, usize, String)> {
    let rest = &line[line.find(PROGRESS)? + PROGRESS.len()..];
    let (frac, name) = rest.trim().split_once(' ')?;
    let (i, n) = frac.split_once('/')?;
    Some((i.parse().ok()?, n.parse().ok()?, name.to_string()))
}
/// Short lines keep each console write atomic and the damage of a garbled
/// line small.
const CHUNK: usize = 200;

/// How many later lines may hold the rest of a data line that a kernel
/// message broke.
const RESYNC_LINES: usize = 8;

/// The console is untrusted input (a kernel under test writes to it):
/// what one frame may hold. A kernel's symbols, the largest frame, take
/// about 3 MiB (Debian's 6.12).
pub const MAX_FRAME: usize = 32 << 20;

/// A data line claiming more than this is garbled (lines are [`CHUNK`]
/// long): it bounds the work of cutting foreign text out of one.
const MAX_DATA: usize = 4 * CHUNK;

/// Text quoted from the console in an error (a kind, a line) is cut here.
const QUOTE: usize = 120;

/// `s` cut to [`QUOTE`] characters.
fn quote(s: &str) -> String {
    s.chars().take(QUOTE).collect()
}

/// Lines (each ending in '\n') that carry `json`, compact JSON (as
/// serde_json::to_string writes it), as a frame of `kind`.
pub fn encode(kind: &str, json: &str) -> Vec<String> {
    let json = json.replace('@', "\\u0040").replace(' ', "\\u0020");
    let mut lines = vec![format!("{BEGIN}{kind}\n")];
    let mut rest = json.as_str();
    let mut seq = 0;
    while !rest.is_empty() {
        let mut cut = rest.len().min(CHUNK);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let data = &rest[..cut];
        lines.push(format!(
            "{LINE}{seq} {} {:08x} {data}\n",
            data.len(),
            crc32fast::hash(data.as_bytes())
        ));
        rest = &rest[cut..];
        seq += 1;
    }
    lines.push(format!(
        "{END}{kind} lines={seq} len={} crc32={:08x}\n",
        json.len(),
        crc32fast::hash(json.as_bytes())
    ));
    lines
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: String,
    pub payload: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// A frame began but its end line never came (the guest died or the
    /// output was cut).
    Truncated { kind: String, lines: usize },
    /// A sequence number was skipped or repeated.
    Sequence {
        kind: String,
        expected: usize,
        got: String,
    },
    /// The end line disagrees with what was received.
    Mismatch { kind: String, what: String },
    /// An end line without a begin line.
    Orphan { line: String },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Truncated { kind, lines } => write!(
                f,
                "truncated console output: '{kind}' frame has no end line after {lines} data lines"
            ),
            FrameError::Sequence {
                kind,
                expected,
                got,
            } => write!(
                f,
                "corrupt '{kind}' frame: expected data line {expected}, got '{got}'"
            ),
            FrameError::Mismatch { kind, what } => write!(f, "corrupt '{kind}' frame: {what}"),
            FrameError::Orphan { line } => write!(f, "frame end without a beginning: '{line}'"),
        }
    }
}

impl std::error::Error for FrameError {}

struct Open {
    kind: String,
    payload: String,
    lines: usize,
    broken: Option<FrameError>,
    /// A data line broken by other output, waiting for its rest.
    pending: Option<Pending>,
}

struct Pending {
    data: String,
    len: usize,
    crc: u32,
    waited: usize,
}

fn matches(data: &str, len: usize, crc: u32) -> bool {
    data.len() == len && crc32fast::hash(data.as_bytes()) == crc
}

/// `data` without the foreign text inside or at the end of it, if
/// cutting out `data.len() - len` bytes somewhere gives the line sent.
fn cut_out(data: &str, len: usize, crc: u32) -> Option<String> {
    let extra = data.len().checked_sub(len)?;
    (0..=len)
        .filter(|&at| data.is_char_boundary(at) && data.is_char_boundary(at + extra))
        .map(|at| format!("{}{}", &data[..at], &data[at + extra..]))
        .find(|d| matches(d, len, crc))
}

impl Open {
    /// A data line's first part, foreign text, then the rest on `line`.
    fn resume(&mut self, line: &str) {
        let Some(p) = self.pending.as_mut() else {
            return;
        };
        let joined = len_prefix(&p.data, p.len.checked_sub(line.len()))
            .map(|head| format!("{head}{line}"))
            .filter(|d| matches(d, p.len, p.crc));
        p.waited += 1;
        if let Some(d) = joined {
            self.pending = None;
            self.accept(&d);
        } else if p.waited > RESYNC_LINES {
            self.garbled();
        }
    }

    fn accept(&mut self, data: &str) {
        self.payload.push_str(data);
        self.lines += 1;
    }

    fn garbled(&mut self) {
        self.pending = None;
        self.broken = Some(FrameError::Mismatch {
            kind: self.kind.clone(),
            what: format!(
                "data line {} garbled by other output (length or crc32)",
                self.lines
            ),
        });
    }
}

fn len_prefix(s: &str, n: Option<usize>) -> Option<&str> {
    n.filter(|&n| s.is_char_boundary(n)).map(|n| &s[..n])
}

/// Incremental parser: feed console lines as they arrive.
pub struct Parser {
    open: Option<Open>,
    /// [`MAX_FRAME`], smaller in tests.
    max_frame: usize,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::with_max_frame(MAX_FRAME)
    }
}

impl Parser {
    /// A parser that refuses frames of more than `max_frame` bytes.
    pub fn with_max_frame(max_frame: usize) -> Self {
        Parser {
            open: None,
            max_frame,
        }
    }

    /// Takes one console line (with or without its line ending) and returns
    /// a frame or an error when the line completes or breaks one.
    pub fn feed(&mut self, line: &str) -> Option<Result<Frame, FrameError>> {
        let line = line.trim_end_matches(['\r', '\n']);
        let marked = [BEGIN, END, LINE].iter().any(|m| line.contains(m));
        if let Some(open) = self.open.as_mut() {
            if !marked {
                open.resume(line);
                return None;
            }
            if open.pending.is_some() {
                open.garbled();
            }
        }
        if let Some(i) = line.find(BEGIN) {
            let kind = quote(line[i + BEGIN.len()..].trim());
            let prev = self.open.replace(Open {
                kind,
                payload: String::new(),
                lines: 0,
                broken: None,
                pending: None,
            });
            // A new frame while one is open: the open one was cut short.
            return prev.map(|o| {
                Err(FrameError::Truncated {
                    kind: o.kind,
                    lines: o.lines,
                })
            });
        }
        if let Some(i) = line.find(END) {
            let rest = &line[i + END.len()..];
            let Some(open) = self.open.take() else {
                return Some(Err(FrameError::Orphan { line: quote(line) }));
            };
            return Some(finish(open, rest));
        }
        if let Some(i) = line.find(LINE) {
            self.data_line(&line[i + LINE.len()..]);
        }
        None
    }

    /// A numbered line of data (`rest`, after its marker) of the open
    /// frame, unless none is open or it is broken already.
    fn data_line(&mut self, rest: &str) {
        let max_frame = self.max_frame;
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if open.broken.is_some() {
            return;
        }
        let mut fields = rest.splitn(4, ' ');
        let (seq, len, crc) = (fields.next(), fields.next(), fields.next());
        let data = fields.next().unwrap_or_default();
        if seq.and_then(|s| s.parse::<usize>().ok()) != Some(open.lines) {
            open.broken = Some(FrameError::Sequence {
                kind: open.kind.clone(),
                expected: open.lines,
                got: quote(seq.unwrap_or_default()),
            });
            return;
        }
        let len = len
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|&l| l <= MAX_DATA);
        let crc = crc.and_then(|c| u32::from_str_radix(c, 16).ok());
        let (Some(len), Some(crc)) = (len, crc) else {
            open.garbled();
            return;
        };
        if open.payload.len() + len > max_frame {
            open.broken = Some(FrameError::Mismatch {
                kind: open.kind.clone(),
                what: format!("over {} bytes: not read further", max_frame),
            });
            // what it held is dropped now, not at its end line
            open.payload = String::new();
        } else if matches(data, len, crc) {
            open.accept(data);
        } else if let Some(d) = cut_out(data, len, crc) {
            open.accept(&d);
        } else {
            open.pending = Some(Pending {
                data: data.to_string(),
                len,
                crc,
                waited: 0,
            });
        }
    }

    /// Call at the end of the output: an open frame is truncated.
    pub fn finish(&mut self) -> Option<FrameError> {
        self.open.take().map(|o| {
            o.broken.unwrap_or(FrameError::Truncated {
                kind: o.kind,
                lines: o.lines,
            })
        })
    }
}

fn finish(open: Open, end: &str) -> Result<Frame, FrameError> {
    if let Some(e) = open.broken {
        return Err(e);
    }
    let mismatch = |what: String| FrameError::Mismatch {
        kind: open.kind.clone(),
        what,
    };
    let mut fields = end.split_whitespace();
    let kind = fields.next().unwrap_or_default();
    if kind != open.kind {
        return Err(mismatch(format!("ends as '{kind}'")));
    }
    let field = |name: &str| {
        end.split_whitespace()
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_string)
    };
    let want_lines = field("lines").and_then(|v| v.parse::<usize>().ok());
    let want_len = field("len").and_then(|v| v.parse::<usize>().ok());
    let want_crc = field("crc32").and_then(|v| u32::from_str_radix(&v, 16).ok());
    let (Some(lines), Some(len), Some(crc)) = (want_lines, want_len, want_crc) else {
        return Err(mismatch(format!("unreadable end line '{end}'")));
    };
    if lines != open.lines {
        return Err(mismatch(format!(
            "{} of {lines} lines received",
            open.lines
        )));
    }
    if len != open.payload.len() {
        return Err(mismatch(format!(
            "{} of {len} bytes received",
            open.payload.len()
        )));
    }
    let got = crc32fast::hash(open.payload.as_bytes());
    if got != crc {
        return Err(mismatch(format!(
            "crc32 {got:08x}, end line says {crc:08x}"
        )));
    }
    Ok(Frame {
        kind: open.kind,
        payload: open.payload,
    })
}

/// Every frame and every framing error in a whole console log.
pub fn parse(text: &str) -> (Vec<Frame>, Vec<FrameError>) {
    let mut parser = Parser::default();
    let (mut frames, mut errors) = (Vec::new(), Vec::new());
    for line in text.split('\n') {
        match parser.feed(line) {
            Some(Ok(f)) => frames.push(f),
            Some(Err(e)) => errors.push(e),
            None => {}
        }
    }
    errors.extend(parser.finish());
    (frames, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> String {
        // long enough for several lines, with multi-byte characters at cuts
        let mut s = String::from("{\"k\":\"");
        for i in 0..300 {
            s.push_str(if i % 7 == 0 { "é" } else { "ab" });
        }
        s.push_str("\"}");
        s
    }

    #[test]
    fn round_trip() {
        let json = doc();
        let text: String = encode("report", &json).concat();
        let (frames, errors) = parse(&text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            frames,
            vec![Frame {
                kind: "report".into(),
                payload: json
            }]
        );
    }

    #[test]
    fn empty_payload_round_trips() {
        let (frames, errors) = parse(&encode("x", "").concat());
        assert!(errors.is_empty());
        assert_eq!(frames[0].payload, "");
    }

    #[test]
    fn interleaved_kernel_lines_and_crlf() {
        let json = doc();
        let mut text = String::new();
        for (i, l) in encode("report", &json).iter().enumerate() {
            text.push_str("[    1.234] random: crng init done\r\n");
            // a kernel message whose newline came late, then our line
            if i == 2 {
                text.push_str("[    1.3] virtio_net: probe");
            }
            text.push_str(&l.replace('\n', "\r\n"));
        }
        let (frames, errors) = parse(&text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(frames[0].payload, json);
    }

    #[test]
    fn truncated_output() {
        let lines = encode("report", &doc());
        let text: String = lines[..lines.len() - 2].concat();
        let (frames, errors) = parse(&text);
        assert!(frames.is_empty());
        assert!(
            matches!(errors[..], [FrameError::Truncated { .. }]),
            "{errors:?}"
        );
        assert!(errors[0].to_string().contains("truncated"));
    }

    #[test]
    fn wrong_checksum() {
        let mut lines = encode("report", &doc());
        lines[1] = lines[1].replacen("ab", "ba", 1);
        let (frames, errors) = parse(&lines.concat());
        assert!(frames.is_empty());
        assert!(errors[0].to_string().contains("crc32"), "{}", errors[0]);
    }

    fn value(json: &str) -> serde_json::Value {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn payload_cannot_forge_markers() {
        let json = serde_json::json!({
            "cmdline": "x=@@TRIG-END report lines=0 len=0 crc32=0 y=@@TRIG-BEGIN bench @@TRIG 9 z",
            "reason": "BUG: Kernel panic - not syncing: Oops: general protection fault",
        })
        .to_string();
        let lines = encode("report", &json);
        assert!(lines[1..lines.len() - 1]
            .iter()
            .all(|l| !l[LINE.len()..].contains("@@") && l.matches(' ').count() == 4));
        let (frames, errors) = parse(&lines.concat());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(value(&frames[0].payload), value(&json));
    }

    /// A kernel message, with its newline, at byte `at` of `text`.
    fn printk_at(text: &str, at: usize) -> Option<String> {
        text.is_char_boundary(at).then(|| {
            format!(
                "{}[   12.345678] random: crng init done\r\n{}",
                &text[..at],
                &text[at..]
            )
        })
    }

    #[test]
    fn a_printk_inside_a_data_line_is_cut_out() {
        let json = doc();
        let lines = encode("report", &json);
        for i in 1..lines.len() - 1 {
            let data_from = lines[i].match_indices(' ').nth(3).unwrap().0 + 1;
            for at in (data_from..lines[i].len()).step_by(5) {
                let Some(broken) = printk_at(&lines[i], at) else {
                    continue;
                };
                let mut l = lines.clone();
                l[i] = broken;
                // and one without its newline, inside the line
                let mut glued = lines.clone();
                glued[i] = format!("{}[ 1.0] x{}", &lines[i][..at], &lines[i][at..]);
                for text in [l.concat(), glued.concat()] {
                    let (frames, errors) = parse(&text);
                    assert!(errors.is_empty(), "line {i} at {at}: {errors:?}");
                    assert_eq!(frames[0].payload, json);
                }
            }
        }
    }

    #[test]
    fn a_twice_sent_frame_survives_a_printk_anywhere() {
        let json = doc();
        let twice = [encode("report", &json), encode("report", &json)]
            .concat()
            .concat();
        for at in 0..twice.len() {
            let Some(text) = printk_at(&twice, at) else {
                continue;
            };
            let (frames, _) = parse(&text);
            assert!(
                frames.iter().any(|f| f.payload == json),
                "printk at {at} lost both copies"
            );
        }
    }

    #[test]
    fn lost_line_is_a_sequence_error() {
        let mut lines = encode("report", &doc());
        lines.remove(2);
        let (_, errors) = parse(&lines.concat());
        assert!(
            matches!(errors[..], [FrameError::Sequence { expected: 1, .. }]),
            "{errors:?}"
        );
    }

    #[test]
    fn a_line_that_cannot_be_mended_breaks_the_frame() {
        let mut lines = encode("report", &doc());
        lines[1] = lines[1].replacen("ab", "abab", 1);
        lines[2] = lines[2].replacen("ab", "", 1);
        let (frames, errors) = parse(&lines.concat());
        assert!(frames.is_empty());
        assert!(errors[0].to_string().contains("garbled"), "{}", errors[0]);
    }

    #[test]
    fn later_frames_survive_a_broken_one() {
        let first = encode("bench", "{\"a\":1}");
        let second = encode("bench", "{\"b\":2}");
        let text = first[..2].concat() + &second.concat();
        let (frames, errors) = parse(&text);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].payload, "{\"b\":2}");
        assert!(matches!(errors[..], [FrameError::Truncated { .. }]));
    }

    #[test]
    fn orphan_end() {
        let (_, errors) = parse("@@TRIG-END report lines=0 len=0 crc32=0\n");
        assert!(matches!(errors[..], [FrameError::Orphan { .. }]));
    }

    /// The console is untrusted input: random and mutated streams never
    /// panic the parser, and what it holds stays bounded.
    mod untrusted {
        use super::*;
        use proptest::prelude::*;

        /// A line of the stream: a real frame's line, a marker with random
        /// fields, random text, or a kernel message.
        fn line() -> impl Strategy<Value = String> {
            let frame_lines = "[ -~é]{0,300}".prop_map(|json| encode("report", &json).concat());
            prop_oneof![
                frame_lines,
                ("[a-z]{0,12}", any::<u16>(), any::<u32>(), "[ -~]{0,80}").prop_map(
                    |(k, n, c, d)| format!("@@TRIG {n} {} {c:08x} {d}\n@@TRIG-BEGIN {k}", d.len())
                ),
                ("[a-z]{0,12}", any::<u32>(), any::<u32>()).prop_map(|(k, l, c)| format!(
                    "@@TRIG-END {k} lines={} len={l} crc32={c:08x}",
                    l % 4
                )),
                any::<String>(),
                "\\[ *[0-9.]+\\] [ -~]{0,60}",
            ]
        }

        /// Cuts `text` at `at` (a line cut short, a message spliced in).
        fn splice(text: &str, at: usize, with: &str) -> String {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            format!("{}{with}{}", &text[..at], &text[at..])
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(300))]
            #[test]
            fn random_streams_never_panic(lines in proptest::collection::vec(line(), 0..40)) {
                let (frames, errors) = parse(&lines.join("\n"));
                for e in &errors {
                    prop_assert!(e.to_string().len() < 1000, "{e}");
                }
                prop_assert!(frames.len() <= lines.len() + 1);
            }

            #[test]
            fn mutated_frames_never_panic_and_never_lie(
                json in "[ -~é]{1,600}",
                cuts in proptest::collection::vec((any::<usize>(), "[ -~\n]{0,40}"), 0..4),
            ) {
                let mut text = encode("report", &json).concat();
                for (at, with) in &cuts {
                    text = splice(&text, *at, with);
                }
                let (frames, _) = parse(&text);
                // a frame that got through is the one sent: the CRC says so
                for f in frames {
                    prop_assert_eq!(&f.payload, &json.replace('@', "\\u0040").replace(' ', "\\u0020"));
                }
            }
        }

        #[test]
        fn a_forged_begin_with_endless_data_lines_is_bounded() {
            let mut p = Parser::with_max_frame(10_000);
            assert!(p.feed("@@TRIG-BEGIN report").is_none());
            let data = "x".repeat(CHUNK);
            let crc = crc32fast::hash(data.as_bytes());
            for seq in 0..100_000 {
                p.feed(&format!("@@TRIG {seq} {CHUNK} {crc:08x} {data}"));
                let held = p.open.as_ref().map_or(0, |o| o.payload.len());
                assert!(held <= 10_000 + MAX_DATA, "{held} bytes held");
            }
            let e = p.feed("@@TRIG-END report lines=100000 len=20000000 crc32=0");
            assert!(
                matches!(&e, Some(Err(FrameError::Mismatch { what, .. })) if what.contains("over 10000 bytes")),
                "{e:?}"
            );
        }

        #[test]
        fn a_data_line_claiming_a_huge_length_is_garbled_not_searched() {
            let mut p = Parser::default();
            p.feed("@@TRIG-BEGIN report");
            let data = "y".repeat(60_000);
            p.feed(&format!("@@TRIG 0 59000 12345678 {data}"));
            assert!(matches!(
                p.feed("@@TRIG-END report lines=1 len=59000 crc32=12345678"),
                Some(Err(FrameError::Mismatch { .. }))
            ));
        }
    }
}
