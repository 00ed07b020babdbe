//! Text from untrusted authors (issue 49): commit ids and subjects,
//! kernel releases, benchmark names, failure reasons, a sweep's skip
//! lines, QEMU's string and whole results files, as a pull request's CI
//! runner could forge them, through every reader and every format. Never
//! a panic or a hang, never a character that acts on a terminal, never
//! live Markdown or HTML, every JSON export valid for its schema, columns
//! aligned by display width (docs/faults.md, "Outside text").
//!
//! The cases the issue found first, then the property over arbitrary
//! text: its seed is fixed, `PROPTEST_CASES` raises its cases (default
//! below, sized for the fast tier).

mod common;
mod synth;

use common::Ran;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, TestRng, TestRunner};
use pulldown_cmark::{Event, Options, Parser, Tag};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use unicode_width::UnicodeWidthChar;

fn run(args: &[&Path]) -> Ran {
    common::bounded(20, args)
}

/// `run` of plain words and paths.
macro_rules! run {
    ($($a:expr),* $(,)?) => { run(&[$(Path::new($a)),*]) };
}

/// `compare BASE NEW --format FORMAT --export-json JSON` and one export
/// more.
fn compare(base: &Path, new: &Path, format: &str, json: &Path, more: (&str, &Path)) -> Ran {
    run!(
        "compare",
        base,
        new,
        "--format",
        format,
        "--export-json",
        json,
        more.0,
        more.1
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trig-untrusted-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, doc: &Value) {
    std::fs::write(path, doc.to_string()).unwrap();
}

/// A results file of one kernel: trig-base and trig-kprobe (at
/// `kprobe`), three boots under the time meter.
fn results(release: &str, commit: &str, kprobe: f64) -> Value {
    synth::results(release, commit, "20261101T000000Z", kprobe, 3, 0.01)
}

/// [`results`] with trig-kprobe named `name`, failed with `reason`
/// when it has one.
fn named(release: &str, commit: &str, kprobe: f64, name: &str, reason: Option<&str>) -> Value {
    let mut doc = results(release, commit, kprobe);
    rename(&mut doc, name, reason);
    doc
}

/// `base.json` and `new.json` in `dir`, as the paths written.
fn pair(dir: &Path, base: &Value, new: &Value) -> (PathBuf, PathBuf) {
    let paths = (dir.join("base.json"), dir.join("new.json"));
    write(&paths.0, base);
    write(&paths.1, new);
    paths
}

/// [`pair`] of trig-kprobe named `name`, 25% slower in NEW.
fn slower(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    pair(
        dir,
        &named("6.1.0", "aaaa", 0.8, name, None),
        &named("6.1.0", "bbbb", 0.6, name, None),
    )
}

/// Renames trig-kprobe to `name` in every boot of `doc`, failed with
/// `reason` when it has one.
fn rename(doc: &mut Value, name: &str, reason: Option<&str>) {
    if let Some(reason) = reason {
        synth::fail(doc, "trig-kprobe", reason);
    }
    for run in doc["runs"].as_array_mut().unwrap() {
        for r in run["report"]["results"].as_array_mut().unwrap() {
            if r["name"] == "trig-kprobe" {
                r["name"] = name.into();
                r["bench"] = name.into();
            }
        }
    }
}

/// The first character of `text` that acts on a terminal instead of
/// showing: a control character but the newline, a bidirectional
/// override or isolate.
fn acting(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    })
}

/// What of `md` GitHub would render live that trig-init did not write:
/// HTML but the `<details>` and `<summary>` compare folds its rows in, a
/// link or an image, a table row of more or fewer cells than its head.
fn live(md: &str) -> Option<String> {
    for ev in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match &ev {
            Event::Html(h) | Event::InlineHtml(h) => {
                let mut rest = h.to_string();
                for ours in ["<details>", "<summary>", "</summary>", "</details>"] {
                    rest = rest.replace(ours, "");
                }
                if rest.contains('<') {
                    return Some(format!("HTML {h:?}"));
                }
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => return Some(format!("{ev:?}")),
            _ => {}
        }
    }
    let mut head = None;
    for l in md.lines() {
        if !l.starts_with('|') {
            head = None;
            continue;
        }
        let n = pipes(l);
        match head {
            None => head = Some(n),
            Some(h) if h != n => return Some(format!("a row of {n} bars under {h}: {l:?}")),
            _ => {}
        }
    }
    None
}

/// The cell bars of a table line: `|` not escaped by a backslash.
fn pipes(line: &str) -> usize {
    let (mut n, mut escaped) = (0, false);
    for c in line.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '|' => n += 1,
            _ => {}
        }
    }
    n
}

/// The character at display column `col` of `line` (None past its end).
fn at_column(line: &str, col: usize) -> Option<char> {
    let mut x = 0;
    for c in line.chars() {
        if x == col {
            return Some(c);
        }
        x += c.width().unwrap_or(0);
        if x > col {
            return None;
        }
    }
    None
}

/// Whether compare's table keeps its last column (the verdict) at one
/// display column on every row: Some(the row that strays).
fn misaligned(table: &str) -> Option<String> {
    let mut lines = table.lines().skip_while(|l| !l.starts_with("BENCHMARK"));
    let head = lines.next()?;
    let col: usize = head[..head.find("VERDICT")?]
        .chars()
        .map(|c| c.width().unwrap_or(0))
        .sum();
    lines
        .take_while(|l| !l.is_empty() && !l.starts_with("unsupported"))
        .find(|row| {
            !(at_column(row, col - 2) == Some(' ')
                && at_column(row, col - 1) == Some(' ')
                && at_column(row, col).is_some_and(|c| c != ' '))
        })
        .map(String::from)
}

// ------------------------------------------------------- the cases found

#[test]
fn a_commit_cut_inside_a_character_panics_nothing() {
    let dir = scratch("cut");
    let hist = dir.join("hist");
    std::fs::create_dir_all(&hist).unwrap();
    // byte 8 inside é (html's x labels), byte 12 inside ö (every short id)
    for (i, commit) in ["1234567é89ab", "fix-für-größe", "fix-für-größe2"]
        .iter()
        .enumerate()
    {
        let mut doc = results("6.1.0", commit, 0.8);
        doc["created"] = format!("2026110{}T000000Z", i + 1).into();
        write(&hist.join(format!("{i}.json")), &doc);
    }
    let r = run!("report", &hist, "-o", &dir.join("page.html"));
    assert_ne!(r.code, 101, "report panicked: {}", r.err);
    assert_eq!(r.code, 0, "{}", r.err);
    let r = run!("history", &hist);
    assert!(r.code <= 1, "history: {}", r.err);
    let r = run!("compare", &hist.join("1.json"), &hist.join("2.json"));
    assert!(r.code <= 1, "compare: {}", r.err);
    assert!(r.out.contains("@ fix-für-größ ("), "{}", r.out);
}

#[test]
fn a_sweep_of_commits_that_are_no_object_names_is_refused_naming_the_field() {
    let dir = scratch("sweep-commit");
    std::fs::create_dir_all(&dir).unwrap();
    write(
        &dir.join("sweep.json"),
        &json!({"range": "a..b", "search": true, "slices": [],
            "commits": [{"commit": "fix-für-größe", "subject": "s"}, {"commit": "../../x", "subject": "t"}]}),
    );
    for args in [
        vec![Path::new("sweep"), Path::new("report"), &dir],
        vec![Path::new("sweep"), Path::new("next"), &dir],
        vec![
            Path::new("sweep"),
            Path::new("merge"),
            Path::new("-o"),
            &dir.join("out"),
            &dir,
        ],
    ] {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(
            r.err.contains("commits[0]") && r.err.contains("not a git object name"),
            "{}",
            r.err
        );
    }
}

#[test]
fn names_longer_than_a_format_width_panic_nothing() {
    let dir = scratch("long");
    let long = "trig-".to_string() + &"k".repeat(70_000);
    let (base, new) = slower(&dir, &long);
    let (md, js) = (dir.join("c.md"), dir.join("c.json"));
    for format in ["table", "markdown", "email"] {
        let r = compare(&base, &new, format, &js, ("--export-markdown", &md));
        assert_eq!(r.code, 1, "{format}: {}", &r.err[..r.err.len().min(2000)]);
        assert!(format == "email" || r.out.contains(&long), "{format}");
    }
}

#[test]
fn what_reaches_a_terminal_acts_on_nothing() {
    let dir = scratch("term");
    let name = "trig-kprobe\rFAKE\nFORGED line";
    let reason = "\x1b]8;;https://e.com\x1b\\click\x1b]8;;\x1b\\\0";
    let mut b = named("6.1.0\x1b]0;owned\x07", "aaaa", 0.8, name, None);
    let mut n = named("6.1.0\x1b[2J", "bbbb", 0.8, name, Some(reason));
    let (base, new) = pair(&dir, &b, &n);
    for format in ["table", "email"] {
        let r = run!("compare", &base, &new, "--format", format);
        assert_eq!(r.code, 1, "{}", r.err);
        assert_eq!(acting(&r.out), None, "{format}: {:?}", r.out);
        // a name's newline starts no line of its own
        assert!(!r.out.lines().any(|l| l.starts_with("FORGED")), "{}", r.out);
        assert!(
            format == "email" || r.out.contains("trig-kprobe\\rFAKE"),
            "{}",
            r.out
        );
    }
    // another QEMU (of an icount result's identity): the refusal names
    // it, on stderr
    n["vm"]["qemu"] = "QEMU 9.2\x1b[31m\r".into();
    b["vm"]["qemu"] = "QEMU 9.2".into();
    n["vm"]["meter"] = "icount".into();
    b["vm"]["meter"] = "icount".into();
    pair(&dir, &b, &n);
    let r = run!("compare", &base, &new);
    assert_eq!(r.code, 2, "{}", r.err);
    assert_eq!(acting(&r.err), None, "{:?}", r.err);
    let hist = dir.join("hist");
    std::fs::create_dir_all(&hist).unwrap();
    for i in 0..3 {
        let mut doc = results("6.1.0\x1b[2J", &format!("c{i}"), 0.8);
        doc["created"] = format!("2026110{}T000000Z", i + 1).into();
        if i == 2 {
            rename(&mut doc, "trig-kprobe", Some("\x1b[2Jgone\r"));
        }
        write(&hist.join(format!("{i}.json")), &doc);
    }
    let r = run!("history", &hist);
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(acting(&format!("{}{}", r.out, r.err)), None, "{:?}", r.out);
}

/// A sweep directory of three measured commits, the middle one skipped
/// with `skip`, the subjects given; returns its commits.
fn sweep_dir(dir: &Path, subjects: &[&str], skip: &str) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let commits: Vec<String> = (0..subjects.len())
        .map(|i| format!("{i:x}").repeat(40))
        .collect();
    write(
        &dir.join("sweep.json"),
        &json!({"range": format!("{}..{}", commits[0], commits[commits.len() - 1]),
            "commits": commits.iter().zip(subjects).map(|(c, s)| json!({"commit": c, "subject": s})).collect::<Vec<_>>(),
            "slices": [{"k": 1, "n": 1}]}),
    );
    for (i, c) in commits.iter().enumerate() {
        let stem = format!("{i:03}-{}", &c[..12]);
        if i == 1 {
            std::fs::write(dir.join(format!("{stem}.skip")), skip).unwrap();
        } else {
            let kprobe = if i == 0 { 0.8 } else { 0.7 };
            write(
                &dir.join(format!("{stem}.json")),
                &synth::icount(c, "20261201T000000Z", kprobe),
            );
        }
    }
    commits
}

#[test]
fn a_sweep_report_in_markdown_renders_nothing_live() {
    let dir = scratch("md").join("sweep");
    sweep_dir(
        &dir,
        &[
            "base",
            "<details><img src=x onerror=alert(1)>",
            "[approve](https://e.com) <b>x</b>\n# head",
        ],
        "error: <img src=y> [x](https://e.com)\x1b[2J\n",
    );
    let r = run!("sweep", "report", &dir, "--format", "markdown");
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(live(&r.out), None, "{}", r.out);
    assert!(r.out.contains("approve"), "{}", r.out);
    let r = run!("sweep", "report", &dir);
    assert_eq!(acting(&r.out), None, "{:?}", r.out);
}

#[test]
fn a_newline_or_bar_in_a_name_splits_no_markdown_row() {
    let out = regressed("md-cell", "trig-kprobe\n| x | y |\\", "markdown");
    assert_eq!(live(&out), None, "{out}");
}

/// What compare prints in `format` of trig-kprobe named `name`, 25%
/// slower in NEW (exit 1).
fn regressed(test: &str, name: &str, format: &str) -> String {
    let dir = scratch(test);
    let (base, new) = slower(&dir, name);
    let r = run!("compare", &base, &new, "--format", format);
    assert_eq!(r.code, 1, "{}", r.err);
    r.out
}

#[test]
fn every_output_path_is_checked_before_the_work() {
    let dir = scratch("outputs");
    let (base, new) = synth::regressed_pair(&dir);
    let sweep = dir.join("sweep");
    sweep_dir(&sweep, &["a", "b", "c"], "build failed\n");
    let hist = dir.join("hist");
    std::fs::create_dir_all(&hist).unwrap();
    std::fs::copy(&base, hist.join("a.json")).unwrap();
    std::fs::copy(&new, hist.join("b.json")).unwrap();
    let kept = dir.join("kept.json");
    let nowhere = dir.join("nodir/x");
    let (c, e, k) = (Path::new("compare"), Path::new("--export-json"), &kept);
    for args in [
        vec![c, &base, &new, Path::new("-o"), &nowhere],
        vec![
            c,
            &base,
            &new,
            e,
            k,
            Path::new("--export-markdown"),
            &nowhere,
        ],
        vec![
            Path::new("sweep"),
            Path::new("report"),
            &sweep,
            e,
            k,
            Path::new("--export-html"),
            &nowhere,
        ],
        vec![
            Path::new("history"),
            &hist,
            Path::new("--export-kcidb"),
            &nowhere,
        ],
    ] {
        std::fs::write(&kept, "old").unwrap();
        let r = run(&args);
        assert_eq!(r.code, 4, "{args:?}: {}", r.err);
        assert_eq!(r.out, "", "{args:?}: printed before the failure");
        let old = std::fs::read_to_string(&kept).unwrap();
        assert_eq!(old, "old", "{args:?}: replaced before a later path failed");
    }
    // and the commands that boot or measure: nothing booted or run first
    let nowhere_text = nowhere.to_str().unwrap();
    for args in [
        vec![
            "vm",
            "-k",
            "/nonexistent/bzImage",
            "--export-kcidb",
            nowhere_text,
        ],
        vec![
            "ab",
            "-k",
            "/nonexistent/a",
            "-k",
            "/nonexistent/b",
            "--export-kcidb",
            nowhere_text,
        ],
        vec![
            "run",
            "--filter",
            "trig-base",
            "-w",
            "0",
            "-d",
            "0.1",
            "--json",
            nowhere_text,
        ],
    ] {
        let r = run(&args.iter().map(Path::new).collect::<Vec<_>>());
        assert_eq!(r.code, 4, "{args:?}: {}", r.err);
        assert!(r.err.contains(nowhere_text), "{args:?}: {}", r.err);
        assert!(!r.err.contains("[1/"), "{args:?}: ran first: {}", r.err);
    }
}

#[test]
fn columns_align_by_display_width() {
    let out = regressed("width", "trig-全角の名前😀e\u{301}\u{200b}", "table");
    assert_eq!(misaligned(&out), None, "{out}");
}

#[test]
fn a_duplicated_top_level_key_is_named() {
    let dir = scratch("dup");
    let (base, new) = synth::regressed_pair(&dir);
    let text = std::fs::read_to_string(&new).unwrap();
    std::fs::write(&new, text.replacen('{', "{\"runs\": [],", 1)).unwrap();
    let r = run!("compare", &base, &new);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("duplicate field `runs`"), "{}", r.err);
}

#[test]
fn what_a_history_does_not_read_is_named() {
    let dir = scratch("odd");
    let (base, new) = synth::regressed_pair(&dir);
    let hist = dir.join("hist");
    std::fs::create_dir_all(&hist).unwrap();
    std::fs::copy(&base, hist.join("0.json")).unwrap();
    std::fs::copy(&new, hist.join("1.json")).unwrap();
    let odd: Vec<(String, Odd)> = [
        Odd::Dangling,
        Odd::Loop,
        Odd::Dir,
        Odd::Fifo,
        Odd::Unreadable,
    ]
    .iter()
    .map(|&odd| (format!("{odd:?}\x1b[2J.json"), odd))
    .collect();
    for (name, odd) in &odd {
        plant(&hist, &hist.join(name), *odd);
    }
    // the file that is no text refuses the history (2), naming it
    let r = run!("history", &hist);
    assert_eq!(r.code, 2, "{}", r.err);
    odd_named(&r, &odd).unwrap();
    assert_eq!(acting(&r.err), None, "{:?}", r.err);
}

// ---------------------------------------------------------- the property

/// Text as a hostile author writes it: pieces of escape sequences,
/// Markdown and HTML, control, multi-byte, full-width, combining,
/// zero-width and right-to-left characters, any character at all; now
/// and then empty or very long.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<char>().prop_map(String::from),
        prop::sample::select(vec![
            "\x1b[2J",
            "\x1b]0;title\x07",
            "\x1b]8;;https://e.com\x1b\\",
            "\r",
            "\n",
            "\0",
            "\t",
            "\u{9b}31m",
            "\u{202e}",
            "\u{2067}",
            "\u{200b}",
            "e\u{301}",
            "全角",
            "😀",
            "ß",
            "ü",
            "<img src=x>",
            "<script>",
            "<details>",
            "[a](https://e.com)",
            "![i](x)",
            "`",
            "```",
            "|",
            "\\",
            "*",
            "_",
            "#",
            "> ",
            "- ",
            "1. ",
            "&amp;",
            "<",
            "---",
            " ",
            "..",
            "/",
        ])
        .prop_map(String::from),
        "[a-z0-9.-]{1,8}",
    ];
    prop_oneof![
        12 => prop::collection::vec(piece, 0..8).prop_map(|v| v.concat()),
        1 => Just(String::new()),
        1 => Just("x".repeat(70_000)),
    ]
}

/// The text fields of a forged run: each results file's, a sweep's.
#[derive(Debug, Clone)]
struct Texts {
    release: String,
    commit: String,
    bench: String,
    reason: String,
    spec: String,
    qemu: String,
    subject: String,
    skip: String,
    range: String,
    kernel: String,
    /// The name of odd entries among a history's results files.
    file: String,
    odd: Vec<Odd>,
}

/// An entry a reader meets in a directory beside the results files.
#[derive(Debug, Clone, Copy)]
enum Odd {
    /// A link to a results file: read (a copy, counted once).
    Link,
    /// A link to nothing, a link to itself, a directory, a fifo: named;
    /// a file that cannot be read as text: refused, named.
    Dangling,
    Loop,
    Dir,
    Fifo,
    Unreadable,
}

/// Puts `odd` at `path` in `dir`.
fn plant(dir: &Path, path: &Path, odd: Odd) {
    use std::os::unix::fs::symlink;
    match odd {
        Odd::Link => symlink(dir.join("0.json"), path).unwrap(),
        Odd::Dangling => symlink(dir.join("nowhere.json"), path).unwrap(),
        Odd::Loop => symlink(path, path).unwrap(),
        Odd::Dir => std::fs::create_dir(path).unwrap(),
        Odd::Unreadable => std::fs::write(path, b"{\xff\xfe}").unwrap(),
        Odd::Fifo => {
            let o = std::process::Command::new("mkfifo")
                .arg(path)
                .output()
                .unwrap();
            assert!(o.status.success(), "mkfifo");
        }
    }
}

/// Whether a reader of `dir` said what it did not read: every odd entry
/// but a link to a results file is named (as a terminal shows it), a file
/// that is no text by the refusal.
fn odd_named(r: &Ran, names: &[(String, Odd)]) -> Result<(), TestCaseError> {
    let named = |name: &str| r.err.contains(&*trig_export::outside::text::line(name));
    // the first file that is no text refuses the directory: the rest unread
    let refused = names
        .iter()
        .any(|(name, odd)| matches!(odd, Odd::Unreadable) && named(name));
    for (name, odd) in names {
        prop_assert!(
            matches!(odd, Odd::Link) || (matches!(odd, Odd::Unreadable) && refused) || named(name),
            "{odd:?} {name:?} dropped without a word: {}",
            r.err
        );
    }
    Ok(())
}

fn texts() -> impl Strategy<Value = Texts> {
    let odd = prop::sample::select(vec![
        Odd::Link,
        Odd::Dangling,
        Odd::Loop,
        Odd::Dir,
        Odd::Fifo,
        Odd::Unreadable,
    ]);
    (
        (text(), text(), text(), text(), text()),
        (text(), text(), text(), text(), text()),
        (text(), prop::collection::vec(odd, 0..4)),
    )
        .prop_map(
            |(
                (release, commit, bench, reason, spec),
                (qemu, subject, skip, range, kernel),
                (file, odd),
            )| {
                Texts {
                    file,
                    odd,
                    release,
                    commit,
                    bench,
                    reason,
                    spec,
                    qemu,
                    subject,
                    skip,
                    range,
                    kernel,
                }
            },
        )
}

/// One results file of the forged fields: trig-kprobe (renamed) at
/// `kprobe`, failed when `failed`.
fn forged(t: &Texts, commit: &str, kprobe: f64, failed: bool, created: &str) -> Value {
    let mut doc = synth::results(&t.release, commit, created, kprobe, 3, 0.01);
    doc["kernel"]["spec"] = t.spec.as_str().into();
    doc["vm"]["qemu"] = t.qemu.as_str().into();
    rename(&mut doc, &t.bench, failed.then_some(t.reason.as_str()));
    doc
}

/// What one command said, checked for its medium: `terminal` for what
/// reaches one (stdout of the formats for people; stderr always).
fn said(what: &str, r: &Ran, terminal: bool) -> Result<(), TestCaseError> {
    prop_assert!(r.code != 101, "{what} panicked: {}", r.err);
    prop_assert!(r.code != 124 && r.code != 137 && r.code >= 0, "{what} hung");
    prop_assert!(
        [0, 1, 2, 4].contains(&r.code),
        "{what}: exit {}: {}",
        r.code,
        r.err
    );
    prop_assert_eq!(acting(&r.err), None, "{} stderr: {:?}", what, r.err);
    if terminal {
        prop_assert_eq!(acting(&r.out), None, "{}: {:?}", what, r.out);
    }
    Ok(())
}

fn markdown(what: &str, md: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(live(md), None, "{}: {}", what, md);
    Ok(())
}

fn json(what: &str, text: &str) -> Result<Value, TestCaseError> {
    serde_json::from_str(text).map_err(|e| TestCaseError::fail(format!("{what}: {e}: {text}")))
}

fn html(what: &str, page: &str) -> Result<(), TestCaseError> {
    for tag in ["<img", "<script", "<a href=\"https://e.com"] {
        prop_assert!(!page.contains(tag), "{what}: {tag}");
    }
    Ok(())
}

/// Every reader and every format it offers over the forged fields.
fn check(t: &Texts, dir: &Path) -> Result<(), TestCaseError> {
    let (base, new) = (dir.join("base.json"), dir.join("new.json"));
    write(&base, &forged(t, &t.commit, 0.8, false, "20261101T000000Z"));
    write(
        &new,
        &forged(t, &format!("{}2", t.commit), 0.6, false, "20261102T000000Z"),
    );
    let c_json = dir.join("c.json");
    let kcidb = dir.join("kcidb.json");
    for format in ["table", "email", "markdown", "json", "bmf"] {
        let r = compare(&base, &new, format, &c_json, ("--export-kcidb", &kcidb));
        said(
            &format!("compare --format {format}"),
            &r,
            matches!(format, "table" | "email"),
        )?;
        if r.code > 1 {
            continue;
        }
        match format {
            "markdown" => markdown("compare", &r.out)?,
            "json" | "bmf" => drop(json(format, &r.out)?),
            "table" => prop_assert_eq!(misaligned(&r.out), None, "{}", r.out),
            _ => {}
        }
    }
    if c_json.exists() {
        common::assert_kcidb_valid(&[&kcidb]);
        let effect = dir.join("effect.json");
        let r = run!("bisect", "effect", &c_json);
        said("bisect effect", &r, true)?;
        std::fs::write(&effect, &r.out).unwrap();
        let r = run!("bisect", "verdict", "--effect", &effect, &c_json);
        said("bisect verdict", &r, true)?;
    }

    let hist = dir.join("hist");
    std::fs::create_dir_all(&hist).unwrap();
    for i in 0..4 {
        let created = format!("2026110{}T000000Z", i + 1);
        let doc = forged(
            t,
            &format!("{}{i}", t.commit),
            if i < 2 { 0.8 } else { 0.6 },
            i == 3,
            &created,
        );
        write(&hist.join(format!("{i}.json")), &doc);
    }
    // a file's name holds no `/` or NUL, and 255 bytes at most
    let stem: String = t
        .file
        .chars()
        .filter(|c| !matches!(c, '/' | '\0'))
        .take(40)
        .collect();
    let odd: Vec<(String, Odd)> = (t.odd.iter().enumerate())
        .map(|(i, &odd)| (format!("{stem}-{i}.json"), odd))
        .collect();
    for (name, odd) in &odd {
        plant(&hist, &hist.join(name), *odd);
    }
    for format in ["table", "markdown", "json", "bmf"] {
        let r = run!(
            "history",
            &hist,
            "--format",
            format,
            "--export-kcidb",
            &kcidb
        );
        said(&format!("history --format {format}"), &r, format == "table")?;
        odd_named(&r, &odd)?;
        if r.code <= 1 {
            match format {
                "markdown" => markdown("history", &r.out)?,
                "json" | "bmf" => drop(json(format, &r.out)?),
                // one KCIDB document a reader is enough (kcidb-io is slow)
                _ => common::assert_kcidb_valid(&[&kcidb]),
            }
        }
    }
    let page = dir.join("page.html");
    let r = run!(
        "report",
        &hist,
        "-o",
        &page,
        "--repo-url",
        "https://git.example/linux"
    );
    said("report", &r, true)?;
    odd_named(&r, &odd)?;
    if r.code == 0 {
        html("report", &std::fs::read_to_string(&page).unwrap())?;
    }

    let sweep = dir.join("sweep");
    let commits = sweep_dir(&sweep, &[&t.subject, &t.subject, &t.subject], &t.skip);
    let mut manifest = json(
        "manifest",
        &std::fs::read_to_string(sweep.join("sweep.json")).unwrap(),
    )?;
    manifest["range"] = t.range.as_str().into();
    write(&sweep.join("sweep.json"), &manifest);
    for (i, c) in commits.iter().enumerate().filter(|(i, _)| *i != 1) {
        let mut doc = forged(
            t,
            c,
            if i == 0 { 0.8 } else { 0.7 },
            false,
            "20261201T000000Z",
        );
        doc["vm"]["meter"] = "icount".into();
        write(&sweep.join(format!("{i:03}-{}.json", &c[..12])), &doc);
    }
    for format in ["table", "email", "markdown", "json", "html"] {
        let r = run!("sweep", "report", &sweep, "--format", format);
        said(
            &format!("sweep report --format {format}"),
            &r,
            matches!(format, "table" | "email"),
        )?;
        if r.code <= 1 {
            match format {
                "markdown" => markdown("sweep report", &r.out)?,
                "json" => drop(json(format, &r.out)?),
                "html" => html("sweep report", &r.out)?,
                _ => {}
            }
        }
    }
    let r = run!("sweep", "merge", "-o", &dir.join("merged"), &sweep);
    said("sweep merge", &r, true)?;
    manifest["search"] = true.into();
    manifest["slices"] = json!([]);
    manifest["commits"][1]["commit"] = t.commit.as_str().into();
    write(&sweep.join("sweep.json"), &manifest);
    let r = run!("sweep", "next", &sweep);
    said("sweep next", &r, true)?;
    let r = run!("list", "--kernel", &t.kernel.replace('\0', ""));
    said("list", &r, true)?;
    Ok(())
}

#[test]
fn outside_text_through_every_reader_and_format() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(12);
    let config = Config {
        cases,
        max_shrink_iters: 100,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/untrusted.txt",
        ))),
        ..Config::default()
    };
    // a fixed seed: CI sees the same cases each run (PROPTEST_CASES draws more)
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[49; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let dir = scratch("property");
    let n = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&texts(), |t| {
            let d = dir.join(
                n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    .to_string(),
            );
            std::fs::create_dir_all(&d).unwrap();
            let r = check(&t, &d);
            let _ = std::fs::remove_dir_all(&d);
            r
        })
        .unwrap();
}
