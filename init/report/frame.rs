//! Framing of JSON documents on a console that the kernel writes to as well.
//!
//! ```text
//! @@TRIG-BEGIN report
//! @@TRIG 0 {"schema_version":1,...
//! @@TRIG 1 ...,"outcome":{"status":"complete"}}
//! @@TRIG-END report lines=2 len=5321 crc32=89abcdef
//! ```
//! Each line is written with one write(2), so kernel messages land between
//! lines rather than inside them; the marker may follow other text on a line
//! (a kernel message without its newline) and CR/LF endings are accepted.
//! The end line's length and CRC32 reject anything lost or mangled.

use std::fmt;

const BEGIN: &str = "@@TRIG-BEGIN ";
const LINE: &str = "@@TRIG ";
const END: &str = "@@TRIG-END ";
/// Short lines keep each console write atomic and the damage of a garbled
/// line small.
const CHUNK: usize = 200;

/// Lines (each ending in '\n') that carry `json` as a frame of `kind`.
pub fn encode(kind: &str, json: &str) -> Vec<String> {
    let mut lines = vec![format!("{BEGIN}{kind}\n")];
    let mut rest = json;
    let mut seq = 0;
    while !rest.is_empty() {
        let mut cut = rest.len().min(CHUNK);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        lines.push(format!("{LINE}{seq} {}\n", &rest[..cut]));
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
}

/// Incremental parser: feed console lines as they arrive.
#[derive(Default)]
pub struct Parser {
    open: Option<Open>,
}

impl Parser {
    /// Takes one console line (with or without its line ending) and returns
    /// a frame or an error when the line completes or breaks one.
    pub fn feed(&mut self, line: &str) -> Option<Result<Frame, FrameError>> {
        let line = line.trim_end_matches(['\r', '\n']);
        if let Some(i) = line.find(BEGIN) {
            let kind = line[i + BEGIN.len()..].trim().to_string();
            let prev = self.open.replace(Open {
                kind,
                payload: String::new(),
                lines: 0,
                broken: None,
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
                return Some(Err(FrameError::Orphan {
                    line: line.to_string(),
                }));
            };
            return Some(finish(open, rest));
        }
        if let Some(i) = line.find(LINE) {
            let open = self.open.as_mut()?;
            if open.broken.is_some() {
                return None;
            }
            let rest = &line[i + LINE.len()..];
            let (seq, data) = rest.split_once(' ').unwrap_or((rest, ""));
            if seq.parse::<usize>().ok() != Some(open.lines) {
                open.broken = Some(FrameError::Sequence {
                    kind: open.kind.clone(),
                    expected: open.lines,
                    got: seq.to_string(),
                });
                return None;
            }
            open.payload.push_str(data);
            open.lines += 1;
        }
        None
    }

    /// Call at the end of the output: an open frame is truncated.
    pub fn finish(&mut self) -> Option<FrameError> {
        self.open.take().map(|o| FrameError::Truncated {
            kind: o.kind,
            lines: o.lines,
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
    fn garbled_line_inside_is_a_length_error() {
        let mut lines = encode("report", &doc());
        lines[1] = lines[1].replace('\n', "[ 2.0] oops\n");
        let (_, errors) = parse(&lines.concat());
        assert!(errors[0].to_string().contains("bytes"), "{}", errors[0]);
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
}
