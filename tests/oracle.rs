//! The oracle of issue 31: scenarios drawn from a small model of nights
//! (or commits) and what each benchmark did on them, written as real
//! results files, run through the real `compare`, `history` (by date,
//! `--git`, `--alert` night by night, `--export-kcidb`) and `sweep
//! report`/`merge`, and checked against the model's own answer: exit
//! statuses, the steps named (night or commit, benchmark, direction,
//! pending), compare's verdicts and the KCIDB statuses. The rules the
//! model encodes are docs/faults.md's table (the gate rules of issue 31);
//! the gates are also checked against one another on the same data.
//!
//! Figures are icount's (exact: a step is beyond the threshold or not,
//! nothing in between is drawn), but for the time meter's interleaved
//! pairs and copied files. `PROPTEST_CASES` sets the number of cases of
//! each property (default below, sized for the fast tier).

mod common;
mod synth;

use common::Ran;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::Value;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use trig_schema::Status;

/// The benchmarks drawn, with their rate before any step.
const BENCHES: [(&str, f64); 3] = [
    ("trig-base", 2.0),
    ("trig-kprobe", 0.8),
    ("trig-fentry", 1.1),
];
/// More names for the time meter's comparisons of up to five tests.
const TIMED: [&str; 5] = [
    "trig-base",
    "trig-kprobe",
    "trig-fentry",
    "trig-rawtp",
    "trig-tp",
];
/// compare's and history's icount threshold, relative.
const ICOUNT: f64 = 0.0025;
const ALPHA: f64 = 0.05;

fn cases(default: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    Config {
        cases,
        max_shrink_iters: 200,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/oracle.txt",
        ))),
        ..Config::default()
    }
}

/// The rules of issue 31 that main does not keep yet, by the tags the
/// checks name them with (the item numbers; `S`: a series over
/// identities, `D`: a copied file in a history, `M`: KCIDB's MISS, `C`:
/// a merge of results without their commit, `F`: a fifo in a sweep, `T`:
/// a `created` that is no date, `N`: a history that compared nothing,
/// `L`: the verdict of a lost attach point, `R`: a history whose newest
/// result recovered from its predecessor's failure, `K`: see
/// [`Scenario::series_tags`], `W`: a sweep whose measured commits share
/// no figure):
/// checks that involve one are left out, so that the others still run.
/// `ORACLE_UNFIXED` (comma-separated tags) overrides it; empty checks all.
const UNFIXED: &str = "";

/// Whether a check that involves `tags` is made.
fn checked(tags: &[&str]) -> bool {
    let unfixed = std::env::var("ORACLE_UNFIXED").unwrap_or_else(|_| UNFIXED.into());
    !tags
        .iter()
        .any(|t| unfixed.split(',').any(|u| u.trim() == *t))
}

/// The tags of `(involved, tag)` that a scenario involves.
fn involved<'a>(tags: &[(bool, &'a str)]) -> Vec<&'a str> {
    tags.iter().filter(|(on, _)| *on).map(|(_, t)| *t).collect()
}

// ---------------------------------------------------------------- running

/// The real binary: a command that opens a fifo and waits on it fails
/// the property instead of hanging the test.
fn run<S: AsRef<OsStr>>(args: &[S]) -> Ran {
    common::bounded(5, args)
}

fn hung(r: &Ran) -> bool {
    r.code == 124 || r.code == 137
}

/// A fresh directory for one case, removed when the case ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let d = std::env::temp_dir().join(format!("trig-oracle-{}/{what}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(path: &Path, doc: &Value) {
    std::fs::write(path, doc.to_string()).unwrap();
}

/// A directory and a fifo named `*.json`: not results files.
fn odd_files(dir: &Path, stem: &str) {
    std::fs::create_dir_all(dir.join(format!("{stem}-dir.json"))).unwrap();
    let fifo = dir.join(format!("{stem}-fifo.json"));
    if fifo.exists() {
        return;
    }
    let o = Command::new("mkfifo").arg(&fifo).output().unwrap();
    assert!(o.status.success(), "mkfifo");
}

/// A git tree of ten commits, made once: the commits every scenario's
/// results record, in order, so that `history --git` and a sweep's
/// manifest can place them.
fn tree() -> &'static (PathBuf, Vec<String>) {
    static TREE: OnceLock<(PathBuf, Vec<String>)> = OnceLock::new();
    TREE.get_or_init(|| {
        let t = std::env::temp_dir().join(format!("trig-oracle-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        std::fs::create_dir_all(&t).unwrap();
        let git = |args: &[&str]| {
            let o = Command::new("git")
                .arg("-C")
                .arg(&t)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .output()
                .unwrap();
            assert!(o.status.success(), "git {args:?}");
            String::from_utf8(o.stdout).unwrap().trim().to_string()
        };
        git(&["init", "-q"]);
        let commits = (0..10)
            .map(|k| {
                git(&[
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    &format!("change {k}"),
                ]);
                git(&["rev-parse", "HEAD"])
            })
            .collect();
        (t, commits)
    })
}

// ------------------------------------------------------------ the model

/// What one benchmark did on one night.
#[derive(Clone, Copy, Debug, PartialEq)]
enum St {
    Ok(f64),
    Failed,
    Unsupported,
    Absent,
}

impl St {
    fn figure(self) -> Option<f64> {
        match self {
            St::Ok(x) => Some(x),
            _ => None,
        }
    }
}

/// A night measured like the others, or on another QEMU, or with
/// another benchmark set (`params.filter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Identity {
    Same,
    Qemu,
    Filter,
}

#[derive(Clone, Debug)]
struct Night {
    states: Vec<St>,
    identity: Identity,
    /// Part of the file's name and the kernel's release: any Unicode.
    label: String,
}

/// The results file of a night (icount, one boot).
fn night_doc(n: &Night, commit: &str, created: Option<&str>) -> Value {
    let results = n
        .states
        .iter()
        .zip(BENCHES)
        .filter_map(|(s, (name, _))| match *s {
            St::Ok(x) => Some(synth::bench(name, Status::Ok, x)),
            St::Failed => Some(synth::bench(name, Status::Failed, 0.0)),
            St::Unsupported => Some(synth::bench(name, Status::Unsupported, 0.0)),
            St::Absent => None,
        })
        .collect();
    let release = format!("6.1.0-{}", n.label);
    let mut doc = synth::results_of(&release, commit, created.unwrap_or(""), vec![results]);
    doc["vm"]["meter"] = "icount".into();
    match created {
        Some(c) => doc["created"] = c.into(),
        None => {
            doc.as_object_mut().unwrap().remove("created");
        }
    }
    match n.identity {
        Identity::Same => {}
        Identity::Qemu => doc["vm"]["qemu"] = "9.2.1".into(),
        Identity::Filter => {
            doc["runs"][0]["report"]["params"]["filter"] = serde_json::json!(["trig-*"])
        }
    }
    doc
}

/// The verdict compare gives one benchmark, BASE's state against NEW's;
/// None when neither side has it.
fn verdict(b: St, n: St, t: f64) -> Option<&'static str> {
    use St::*;
    Some(match (b, n) {
        (Absent, Absent) => return None,
        (Absent, _) | (_, Absent) => "missing",
        (Failed, _) | (_, Failed) => "failed",
        // NEW's kernel lost what BASE's attached to: its figure is missing
        (Ok(_), Unsupported) => "missing",
        (Unsupported, _) => "unsupported",
        (Ok(x), Ok(y)) => {
            let c = y / x - 1.0;
            if c.abs() < t {
                "no-change"
            } else if c < 0.0 {
                "regressed"
            } else {
                "improved"
            }
        }
    })
}

/// Whether the gate counts this verdict as a failure: regressed, failed,
/// missing (an attach point lost among them).
fn fails(v: &str) -> bool {
    matches!(v, "regressed" | "failed" | "missing")
}

fn decided(v: &str) -> bool {
    matches!(v, "regressed" | "improved" | "no-change" | "within-noise")
}

fn kcidb_status(v: &str) -> &'static str {
    match v {
        "regressed" => "FAIL",
        "failed" => "ERROR",
        "unsupported" => "SKIP",
        "missing" => "MISS",
        _ => "DONE",
    }
}

/// compare's answer: each benchmark's verdict, by name, and the exit.
/// The third of the answer: whether the exit rests on more than a
/// regression (a failure, a benchmark missing, nothing decided: item 1).
fn compare_model(b: &[St], n: &[St], t: f64) -> (Vec<(&'static str, &'static str)>, i32, bool) {
    let v: Vec<(&str, &str, St)> = BENCHES
        .iter()
        .zip(b.iter().zip(n))
        .filter_map(|((name, _), (&b, &n))| Some((*name, verdict(b, n, t)?, b)))
        .collect();
    let fail = v.iter().any(|(_, v, _)| fails(v));
    let none_decided = !v.iter().any(|(_, v, _)| decided(v));
    let code = i32::from(fail || none_decided);
    let accounted = none_decided || v.iter().any(|(_, v, _)| *v != "regressed" && fails(v));
    (
        v.into_iter().map(|(n, v, _)| (n, v)).collect(),
        code,
        accounted,
    )
}

/// A step of a history series by the icount rule (docs/nightly.md): at
/// night `at`, measured from night `from`, confirmed by night `confirm`
/// (None: pending), up or down, a drift or not.
#[derive(Clone, Debug, PartialEq)]
struct MStep {
    bench: usize,
    at: usize,
    up: bool,
    drift: bool,
    confirm: Option<usize>,
}

/// The direction `b` differs from `a` by more than the threshold.
fn beyond(a: f64, b: f64) -> Option<bool> {
    let rel = b / a - 1.0;
    (rel.abs() > ICOUNT).then_some(rel > 0.0)
}

/// The steps of one series, `(night, figure)` in order; and the nights
/// that were one-night excursions with the night after each.
fn series_steps(bench: usize, xs: &[(usize, f64)]) -> (Vec<MStep>, Vec<(usize, usize)>) {
    let (mut steps, mut excursions) = (Vec::new(), Vec::new());
    let (mut prev, mut level) = (0, 0);
    for i in 1..xs.len() {
        let x = xs[i].1;
        let (from, up, drift) = match (beyond(xs[prev].1, x), beyond(xs[level].1, x)) {
            (Some(up), _) => (prev, up, false),
            (None, Some(up)) => (level, up, true),
            (None, None) => {
                prev = i;
                continue;
            }
        };
        match xs.get(i + 1) {
            Some(&(_, next)) if beyond(xs[from].1, next) != Some(up) => {
                excursions.push((xs[i].0, xs[i + 1].0));
                continue;
            }
            next => steps.push(MStep {
                bench,
                at: xs[i].0,
                up,
                drift,
                confirm: next.map(|n| n.0),
            }),
        }
        (prev, level) = (i, i);
    }
    (steps, excursions)
}

/// Every benchmark's series of one identity, as `series_steps` finds
/// them, over nights `..end`.
fn history_steps(nights: &[Night], end: usize) -> (Vec<MStep>, Vec<(usize, usize, usize)>) {
    let (mut all, mut exc) = (Vec::new(), Vec::new());
    for id in [Identity::Same, Identity::Qemu, Identity::Filter] {
        for b in 0..BENCHES.len() {
            let xs: Vec<(usize, f64)> = (0..end)
                .filter(|&i| nights[i].identity == id)
                .filter_map(|i| Some((i, nights[i].states[b].figure()?)))
                .collect();
            let (s, e) = series_steps(b, &xs);
            all.extend(s);
            exc.extend(e.into_iter().map(|(a, c)| (b, a, c)));
        }
    }
    (all, exc)
}

/// Whether the newest of nights `..end` has a benchmark that failed, or
/// that is missing (or lost its attach point: docs/faults.md's `missing`
/// row) though the previous night of its identity had it: named, exit 1.
fn newest_fails(nights: &[Night], end: usize) -> bool {
    let last = &nights[end - 1];
    let prev = (0..end - 1)
        .rev()
        .find(|&i| nights[i].identity == last.identity);
    last.states.iter().enumerate().any(|(b, s)| {
        let before = prev.map(|p| nights[p].states[b]);
        *s == St::Failed
            || (*s == St::Absent && before.is_some_and(|s| s != St::Absent))
            || (*s == St::Unsupported && before.is_some_and(|s| s.figure().is_some()))
    })
}

/// Whether the newest of nights `..end` has a benchmark that the
/// previous night of its identity failed (and it did not) or lacked (and
/// it has): the gate must not fail on the predecessor's fault (`R`).
fn recovered(nights: &[Night], end: usize) -> bool {
    let last = &nights[end - 1];
    let prev = (0..end - 1)
        .rev()
        .find(|&i| nights[i].identity == last.identity);
    prev.is_some_and(|p| {
        (last.states.iter().zip(&nights[p].states)).any(|(n, b)| match b {
            St::Failed => *n != St::Failed,
            St::Absent => *n != St::Absent,
            _ => false,
        })
    })
}

/// Whether no benchmark has a figure on two of nights `..end` of one
/// identity: a history that compared nothing (exit 1, docs/faults.md),
/// though it may hold many nights (all failed but one, say).
fn nothing_compared(nights: &[Night], end: usize) -> bool {
    [Identity::Same, Identity::Qemu, Identity::Filter]
        .iter()
        .all(|id| {
            (0..BENCHES.len()).all(|b| {
                nights[..end]
                    .iter()
                    .filter(|n| n.identity == *id && n.states[b].figure().is_some())
                    .count()
                    < 2
            })
        })
}

/// A series scenario: nights in order, a night whose file is copied
/// under another name, a night whose `created` is missing or not a date,
/// odd files in the directories, and a slice file without its commit.
#[derive(Clone, Debug)]
struct Scenario {
    nights: Vec<Night>,
    copy_of: Option<usize>,
    bad_created: Option<(usize, bool)>,
    odd: bool,
    commitless: Option<usize>,
}

fn label() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[^/\u{0}]{1,6}").unwrap()
}

impl Scenario {
    /// What every check of the series involves: nights of another
    /// identity (`S`), one of them between a step (or an excursion) and
    /// the night of its kind that confirms it (or returns) (`K`), a copied
    /// file (`D`).
    fn series_tags(&self) -> Vec<&'static str> {
        let n = self.nights.len();
        let foreign = self.nights.iter().any(|n| n.identity != Identity::Same);
        let (steps, excursions) = history_steps(&self.nights, n);
        let between = steps.iter().any(|s| s.confirm.unwrap_or(n) > s.at + 1)
            || excursions.iter().any(|&(_, at, back)| back > at + 1);
        involved(&[
            (foreign, "S"),
            (between, "K"),
            (self.copy_of.is_some(), "D"),
        ])
    }
}

/// One benchmark on one night: how its level moves (mostly not; steps of
/// 1 and 2%, drifts of 0.1% when `drift`), a one-night excursion, and
/// its status.
fn move_and_status() -> impl Strategy<Value = (f64, bool, u8)> {
    (
        prop::sample::select(vec![
            1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.99, 1.01, 0.98, 1.02, 0.999, 1.001,
        ]),
        prop::bool::weighted(0.08),
        prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]),
    )
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (2usize..=8, any::<bool>())
        .prop_flat_map(|(n, drift)| {
            (
                prop::collection::vec(
                    (
                        prop::collection::vec(move_and_status(), BENCHES.len()),
                        prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]),
                        label(),
                    ),
                    n,
                ),
                Just(drift),
                prop::option::weighted(0.2, (0..n, any::<bool>())),
                prop::option::weighted(0.15, (0..n, any::<bool>())),
                prop::bool::weighted(0.2),
                prop::option::weighted(0.1, 1..n),
            )
        })
        .prop_map(|(raw, drift, copy, bad, odd, commitless)| {
            let mut level: Vec<f64> = BENCHES.iter().map(|b| b.1).collect();
            let nights = raw
                .into_iter()
                .enumerate()
                .map(|(i, (moves, id, label))| {
                    let states = moves
                        .iter()
                        .enumerate()
                        .map(|(b, &(f, excursion, status))| {
                            let f = if drift || (f - 1.0).abs() > 0.005 {
                                f
                            } else {
                                1.0
                            };
                            if i > 0 {
                                level[b] *= f;
                            }
                            match status {
                                1 => St::Failed,
                                2 => St::Unsupported,
                                3 => St::Absent,
                                _ => St::Ok(level[b] * if excursion { 0.985 } else { 1.0 }),
                            }
                        })
                        .collect();
                    let identity = match id {
                        _ if i == 0 => Identity::Same,
                        1 => Identity::Qemu,
                        2 => Identity::Filter,
                        _ => Identity::Same,
                    };
                    Night {
                        states,
                        identity,
                        label: format!("{label}-{i}"),
                    }
                })
                .collect();
            Scenario {
                nights,
                copy_of: copy.map(|c| c.0),
                bad_created: bad,
                odd,
                commitless,
            }
        })
}

/// No two figures of one benchmark within a rounding of a threshold
/// apart: the model's answer is then the only one.
fn unambiguous(s: &Scenario, thresholds: &[f64]) -> bool {
    (0..BENCHES.len()).all(|b| {
        let xs: Vec<f64> = s
            .nights
            .iter()
            .filter_map(|n| n.states[b].figure())
            .collect();
        xs.iter().all(|a| {
            xs.iter().all(|x| {
                thresholds
                    .iter()
                    .all(|t| ((x / a - 1.0).abs() - t).abs() > 1e-7)
            })
        })
    })
}

fn created(i: usize) -> String {
    format!("202611{:02}T000000Z", i + 1)
}

/// The history directory of nights `..end`: each night's file (its name
/// any Unicode, so that names do not sort as the nights do), the copy,
/// the odd files. Returns the file name of each night.
fn history_dir(s: &Scenario, dir: &Path, end: usize) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let commits = &tree().1;
    let mut names = Vec::new();
    for (i, n) in s.nights[..end].iter().enumerate() {
        let when = match s.bad_created {
            Some((g, missing)) if g == i => (!missing).then(|| "yesterday".to_string()),
            _ => Some(created(i)),
        };
        let doc = night_doc(n, &commits[i], when.as_deref());
        // reversed, so that the name order is not the nights' order
        let name = format!("{}-{}.json", n.label, s.nights.len() - i);
        write(&dir.join(&name), &doc);
        if s.copy_of == Some(i) {
            write(&dir.join(format!("copy of {name}")), &doc);
        }
        names.push(name);
    }
    if s.odd {
        odd_files(dir, "zz");
    }
    names
}

/// The night of history's point `at`, by its file's name (a copy's is
/// its original's: either may stand for the two); usize::MAX for none.
fn night_of(h: &Value, at: &Value, names: &[String]) -> usize {
    let file = h["points"][at.as_u64().unwrap() as usize]["file"]
        .as_str()
        .unwrap();
    let name = Path::new(file).file_name().unwrap().to_string_lossy();
    let name = name.strip_prefix("copy of ").unwrap_or(&name);
    names.iter().position(|n| n == name).unwrap_or(usize::MAX)
}

/// history's found change points as (bench, night, up, pending).
fn found(h: &Value, names: &[String]) -> Vec<(String, usize, bool, bool)> {
    let mut out: Vec<_> = h["found"]
        .as_array()
        .expect("found")
        .iter()
        .filter(|f| f["metric"] == "rate")
        .map(|f| {
            (
                f["bench"].as_str().unwrap().to_string(),
                night_of(h, &f["at"], names),
                f["regression"] == false,
                f["pending"] == true,
            )
        })
        .collect();
    out.sort();
    out
}

fn model_found(steps: &[MStep]) -> Vec<(String, usize, bool, bool)> {
    let mut out: Vec<_> = steps
        .iter()
        .map(|s| {
            (
                BENCHES[s.bench].0.to_string(),
                s.at,
                s.up,
                s.confirm.is_none(),
            )
        })
        .collect();
    out.sort();
    out
}

fn parse(what: &str, text: &str) -> Result<Value, TestCaseError> {
    serde_json::from_str(text)
        .map_err(|e| TestCaseError::fail(format!("{what}: not JSON ({e}): {text}")))
}

// ------------------------------------------------------- the properties

/// `history` over the whole series, ordered by date or by `--git`: exit,
/// steps and KCIDB statuses.
fn check_history(
    s: &Scenario,
    dir: &Path,
    git: bool,
) -> Result<Vec<(String, usize, bool, bool)>, TestCaseError> {
    let n = s.nights.len();
    let names = history_dir(s, dir, n);
    let kcidb = dir.with_extension("kcidb");
    let mut args: Vec<&OsStr> = vec![
        "history".as_ref(),
        dir.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ];
    args.extend([OsStr::new("--export-kcidb"), kcidb.as_os_str()]);
    if git {
        args.extend([OsStr::new("--git"), tree().0.as_os_str()]);
    }
    let r = run(&args);
    prop_assert!(!hung(&r), "history hung: {}", r.err);
    if let (Some((g, _)), false) = (s.bad_created, git) {
        if !checked(&["T"]) {
            return Ok(Vec::new());
        }
        prop_assert_eq!(
            r.code,
            2,
            "a created that is no date, ordering by date: {}",
            r.err
        );
        // as a terminal shows it: the label's control characters escaped
        let shown = trig_export::outside::text::line(&names[g]);
        prop_assert!(r.err.contains(&*shown), "the file is named: {}", r.err);
        return Ok(Vec::new());
    }
    let (steps, _) = history_steps(&s.nights, n);
    let newest = newest_fails(&s.nights, n);
    let nothing = nothing_compared(&s.nights, n);
    let new_regression = steps
        .iter()
        .any(|st| !st.up && st.confirm.is_some() && st.at + 3 >= n);
    let code = i32::from(newest || new_regression || nothing);
    let back = recovered(&s.nights, n);
    let tags = [
        s.series_tags(),
        involved(&[(newest, "8"), (nothing, "N"), (back, "R")]),
    ]
    .concat();
    if checked(&tags) {
        prop_assert_eq!(
            r.code,
            code,
            "history (git {}) exit: {}{}",
            git,
            r.err,
            r.out
        );
    }
    if r.code == 2 {
        return Ok(Vec::new());
    }
    let h = parse("history --format json", &r.out)?;
    let got = found(&h, &names);
    if !checked(&s.series_tags()) {
        return Ok(got);
    }
    prop_assert_eq!(&got, &model_found(&steps), "history (git {}) steps", git);
    // KCIDB: each night's benchmark as the one accounting says
    let pending = steps.iter().any(|x| x.confirm.is_none());
    if !checked(&involved(&[(pending, "7")])) {
        return Ok(got);
    }
    let k = parse("history KCIDB", &std::fs::read_to_string(&kcidb).unwrap())?;
    let tests = k["tests"].as_array().unwrap();
    for (i, night) in s.nights.iter().enumerate() {
        let stem = names[i].trim_end_matches(".json");
        for (b, st) in night.states.iter().enumerate() {
            let bench = BENCHES[b].0;
            let (status, pending) = match st {
                St::Absent => continue,
                St::Failed => ("ERROR", false),
                St::Unsupported => ("SKIP", false),
                St::Ok(_) => match steps.iter().find(|x| x.bench == b && x.at == i) {
                    Some(x) if x.confirm.is_none() => ("DONE", true),
                    Some(x) if !x.up => ("FAIL", false),
                    _ => ("DONE", false),
                },
            };
            let of: Vec<&Value> = tests
                .iter()
                .filter(|t| {
                    let id = t["id"].as_str().unwrap_or("");
                    [stem.to_string(), format!("copy of {stem}")]
                        .iter()
                        .any(|stem| {
                            id.contains(&format!(":{stem}/{bench}/rate"))
                                || id.ends_with(&format!(":{stem}/{bench}"))
                        })
                })
                .collect();
            prop_assert_eq!(
                of.len(),
                1,
                "one KCIDB test of {} on night {}: {:?}",
                bench,
                i,
                of
            );
            prop_assert_eq!(
                of[0]["status"].as_str(),
                Some(status),
                "KCIDB status of {} on night {}: {}",
                bench,
                i,
                of[0]
            );
            if pending {
                prop_assert_eq!(
                    &of[0]["misc"]["pending"],
                    &Value::Bool(true),
                    "a pending step is flagged: {}",
                    of[0]
                );
            }
        }
    }
    Ok(got)
}

/// `history --alert` run night by night: each confirmed step alerted
/// once, on the night that confirms it; exit 1 on those of a regression
/// and on a night whose newest result failed.
fn check_alerts(s: &Scenario, dir: &Path) -> Result<(), TestCaseError> {
    let n = s.nights.len();
    let git = s.bad_created.is_some();
    let (steps, _) = history_steps(&s.nights, n);
    // two steps of a series within two nights: one alert hid the other
    let close = steps.iter().enumerate().any(|(i, a)| {
        steps[i + 1..]
            .iter()
            .any(|b| a.bench == b.bench && a.at.abs_diff(b.at) <= 2)
    });
    let tags = [s.series_tags(), involved(&[(close, "4")])].concat();
    for end in 1..=n {
        let names = history_dir(s, dir, end);
        let mut args: Vec<&OsStr> = vec![
            "history".as_ref(),
            dir.as_os_str(),
            "--alert".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ];
        if git {
            args.extend([OsStr::new("--git"), tree().0.as_os_str()]);
        }
        let r = run(&args);
        prop_assert!(!hung(&r), "history --alert hung: {}", r.err);
        let fresh: Vec<&MStep> = steps
            .iter()
            .filter(|x| x.confirm == Some(end - 1))
            .collect();
        let newest = newest_fails(&s.nights, end);
        let nothing = nothing_compared(&s.nights, end);
        let code = i32::from(newest || nothing || fresh.iter().any(|x| !x.up));
        let back = recovered(&s.nights, end);
        let night_tags = [
            tags.clone(),
            involved(&[(newest, "8"), (nothing, "N"), (back, "R")]),
        ]
        .concat();
        if checked(&night_tags) {
            prop_assert_eq!(
                r.code,
                code,
                "history --alert on night {}: {}{}",
                end - 1,
                r.err,
                r.out
            );
        }
        if r.code == 2 || !checked(&tags) {
            continue;
        }
        let h = parse("history --alert --format json", &r.out)?;
        let mut alerted: Vec<(String, usize)> = h["found"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["metric"] == "rate" && f["pending"] != true && f.get("alerted").is_none())
            .map(|f| {
                (
                    f["bench"].as_str().unwrap().into(),
                    night_of(&h, &f["at"], &names),
                )
            })
            .collect();
        alerted.sort();
        let mut want: Vec<(String, usize)> = fresh
            .iter()
            .map(|x| (BENCHES[x.bench].0.into(), x.at))
            .collect();
        want.sort();
        prop_assert_eq!(alerted, want, "alerted on night {}", end - 1);
    }
    Ok(())
}

/// compare of each night with the one before of its identity (another
/// identity is refused, exit 2): verdicts, exit, KCIDB.
fn check_neighbours(s: &Scenario, dir: &Path) -> Result<(), TestCaseError> {
    let commits = &tree().1;
    std::fs::create_dir_all(dir).unwrap();
    let file = |i: usize| {
        let p = dir.join(format!("{}.json", s.nights[i].label));
        write(&p, &night_doc(&s.nights[i], &commits[i], Some(&created(i))));
        p
    };
    for i in 1..s.nights.len() {
        let (b, n) = (file(i - 1), file(i));
        let (nb, nn) = (&s.nights[i - 1], &s.nights[i]);
        let r = run(&[
            OsStr::new("compare"),
            b.as_os_str(),
            n.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        prop_assert!(!hung(&r));
        if nb.identity != nn.identity {
            if nb.identity == Identity::Qemu || nn.identity == Identity::Qemu {
                prop_assert_eq!(r.code, 2, "another QEMU is refused: {}", r.err);
            }
            continue;
        }
        check_compare_answer(&r, (&nb.states, &nn.states), ICOUNT, false, None)?;
    }
    Ok(())
}

/// compare's exit and verdicts against the model's; `exports` the KCIDB
/// export's text and the table's, when written.
/// `copies`: a side held copies of its file (item 6).
fn check_compare_answer(
    r: &Ran,
    (b, n): (&[St], &[St]),
    t: f64,
    copies: bool,
    exports: Option<(&str, &str)>,
) -> Result<(), TestCaseError> {
    let (want, code, accounted) = compare_model(b, n, t);
    if checked(&involved(&[(accounted, "1")])) {
        prop_assert_eq!(r.code, code, "compare exit, verdicts {:?}: {}", want, r.err);
    }
    let c = parse("compare --format json", &r.out)?;
    let mut got: Vec<(String, String)> = c["benches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["name"].as_str().unwrap().into(),
                b["verdict"].as_str().unwrap().into(),
            )
        })
        .collect();
    got.sort();
    let mut w: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    w.sort();
    // measured in BASE, unsupported in NEW: gate-rules.md's `unsupported`
    // (SKIP), docs/faults.md's `missing` (MISS); `L` until they agree
    let lost = b
        .iter()
        .zip(n)
        .any(|(b, n)| b.figure().is_some() && *n == St::Unsupported);
    if !checked(&involved(&[(lost, "L")])) {
        return Ok(());
    }
    prop_assert_eq!(&got, &w, "compare's verdicts");
    // one boot a side (copies count once): one figure each
    let boots = c["benches"].as_array().unwrap();
    for b in boots
        .iter()
        .filter(|_| checked(&involved(&[(copies, "6")])))
    {
        for m in b["metrics"].as_array().into_iter().flatten() {
            prop_assert_eq!(
                m["base"]["values"].as_array().map(Vec::len),
                Some(1),
                "BASE's boots of {}: {}",
                b["name"],
                m
            );
            prop_assert_eq!(
                m["new"]["values"].as_array().map(Vec::len),
                Some(1),
                "NEW's boots of {}: {}",
                b["name"],
                m
            );
        }
    }
    let missing = want.iter().any(|(_, v)| *v == "missing");
    if let Some((_, table)) = exports.filter(|_| accounted && checked(&["1"])) {
        // the headline of a comparison that failed or decided nothing
        prop_assert!(!table.contains("no regression"), "headline: {}", table);
    }
    if let Some((text, _)) = exports.filter(|_| checked(&involved(&[(missing, "M")]))) {
        let k = parse("compare KCIDB", text)?;
        let tests = k["tests"].as_array().unwrap();
        for (bench, v) in &want {
            let path = format!("trig_init.{bench}");
            let statuses: BTreeSet<&str> = tests
                .iter()
                .filter(|t| {
                    let p = t["path"].as_str().unwrap_or("");
                    p == path || p.starts_with(&format!("{path}."))
                })
                .filter_map(|t| t["status"].as_str())
                .collect();
            prop_assert_eq!(
                statuses,
                BTreeSet::from([kcidb_status(v)]),
                "KCIDB status of {} ({})",
                bench,
                v
            );
        }
    }
    Ok(())
}

/// A sweep's steps: (commit, benchmark, up).
type SweepSteps = Vec<(usize, String, bool)>;

/// The sweep of the series: nights of another identity did not build
/// (`.skip`), the rest measured; with `odd`, one more commit that no
/// slice took, a fifo in its place. Returns the steps it reported as
/// (commit, bench, up).
fn check_sweep(s: &Scenario, dir: &Path) -> Result<Option<SweepSteps>, TestCaseError> {
    let commits = &tree().1;
    let n = s.nights.len();
    let odd = s.odd && checked(&["F"]);
    let total = n + usize::from(odd);
    std::fs::create_dir_all(dir).unwrap();
    let manifest = |slices: Value| {
        serde_json::json!({
            "range": format!("{}..{}", commits[0], commits[total - 1]),
            "commits": (0..total).map(|i| serde_json::json!({"commit": commits[i], "subject": format!("change {} {}", i, s.nights.get(i).map_or("", |x| &x.label))})).collect::<Vec<_>>(),
            "slices": slices,
        })
    };
    let stem = |i: usize| format!("{i:03}-{}", &commits[i][..12]);
    write(
        &dir.join("sweep.json"),
        &manifest(serde_json::json!([{"k": 1, "n": 1}])),
    );
    for (i, night) in s.nights.iter().enumerate() {
        if night.identity == Identity::Same {
            write(
                &dir.join(format!("{}.json", stem(i))),
                &night_doc(night, &commits[i], Some(&created(i))),
            );
        } else {
            std::fs::write(
                dir.join(format!("{}.skip", stem(i))),
                "build failed (planted)\n",
            )
            .unwrap();
        }
    }
    if odd {
        let o = Command::new("mkfifo")
            .arg(dir.join(format!("{}.json", stem(n))))
            .output()
            .unwrap();
        assert!(o.status.success());
    }
    let json = dir.with_extension("report.json");
    let r = run(&[
        OsStr::new("sweep"),
        "report".as_ref(),
        dir.as_os_str(),
        "--export-json".as_ref(),
        json.as_os_str(),
    ]);
    prop_assert!(!hung(&r), "sweep report hung (a fifo named for a commit?)");
    if odd && r.code == 2 && r.err.contains(&stem(n)) {
        // refused, naming the file that is not a results file
        return Ok(None);
    }
    // the model: per benchmark, each figure against the last earlier one
    let measured: Vec<usize> = (0..n)
        .filter(|&i| s.nights[i].identity == Identity::Same)
        .collect();
    // `gap`: a benchmark without a figure after one (item 2)
    let (mut want, mut fail, mut gap) = (Vec::new(), false, false);
    let mut named = Vec::new();
    for (b, (bench, _)) in BENCHES.iter().enumerate() {
        let mut last: Option<f64> = None;
        for &i in &measured {
            let st = s.nights[i].states[b];
            match (st, last) {
                (St::Ok(x), Some(a)) => {
                    if let Some(up) = beyond(a, x) {
                        want.push((i, bench.to_string(), up));
                        fail |= !up;
                    }
                }
                (St::Failed, _) => {
                    (fail, gap) = (true, true);
                    named.push((bench, i));
                }
                (St::Absent | St::Unsupported, Some(_)) => (fail, gap) = (true, true),
                _ => {}
            }
            last = st.figure().or(last);
        }
    }
    want.sort();
    if measured.len() < 2 {
        prop_assert_eq!(
            r.code,
            2,
            "a sweep with {} measured commits compared nothing: {}",
            measured.len(),
            r.err
        );
        return Ok(None);
    }
    // two commits measured, but no benchmark with a figure on two (`W`)
    let none_twice = (0..BENCHES.len()).all(|b| {
        let figures = measured
            .iter()
            .filter(|&&i| s.nights[i].states[b].figure().is_some());
        figures.count() < 2
    });
    if !checked(&involved(&[(gap, "2"), (none_twice, "W")])) {
        return Ok(None);
    }
    // nothing compared is never exit 0 (docs/faults.md)
    prop_assert_eq!(
        r.code,
        i32::from(fail || none_twice),
        "sweep report exit: {}{}",
        r.err,
        r.out
    );
    let rep = parse(
        "sweep report JSON",
        &std::fs::read_to_string(&json).unwrap(),
    )?;
    let mut got: Vec<(usize, String, bool)> = rep["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| {
            let at = commits
                .iter()
                .position(|c| st["commit"] == c.as_str())
                .unwrap();
            st["moved"].as_array().unwrap().iter().map(move |m| {
                (
                    at,
                    m["bench"].as_str().unwrap().to_string(),
                    m["verdict"] == "improved",
                )
            })
        })
        .collect();
    got.sort();
    prop_assert_eq!(&got, &want, "sweep report's steps");
    for (bench, i) in named {
        // the commit, then the benchmark and "fail" soon after it (a
        // subject of any Unicode may break the line)
        let text = r.both();
        let named = text.match_indices(&commits[i][..12]).any(|(at, _)| {
            let after: String = text[at..].chars().take(160).collect();
            after.contains(bench) && after.contains("fail")
        });
        prop_assert!(
            named,
            "{} failed at commit {} is named: {}",
            bench,
            i,
            r.both()
        );
    }
    // the steps are compare's verdicts of the same two commits
    for st in rep["steps"].as_array().unwrap() {
        let at = commits
            .iter()
            .position(|c| st["commit"] == c.as_str())
            .unwrap();
        let from = commits
            .iter()
            .position(|c| st["against"] == c.as_str())
            .unwrap();
        let f = |i: usize| dir.join(format!("{}.json", stem(i)));
        let c = run(&[
            OsStr::new("compare"),
            f(from).as_os_str(),
            f(at).as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        let c = parse("compare --format json", &c.out)?;
        for m in st["moved"].as_array().unwrap() {
            let v = c["benches"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["name"] == m["bench"])
                .map(|b| b["verdict"].clone());
            prop_assert_eq!(
                v,
                Some(m["verdict"].clone()),
                "compare of the step's commits {} and {}",
                from,
                at
            );
        }
    }
    Ok(Some(got))
}

/// `sweep merge` of two slices, one of them holding a result of another
/// identity or without its commit: refused, naming the file.
fn check_merge(s: &Scenario, dir: &Path) -> Result<(), TestCaseError> {
    let commits = &tree().1;
    let n = s.nights.len();
    // the results merge refuses: another QEMU, another benchmark set
    // (item 3), no commit (`C`)
    let planted: Vec<usize> = (0..n)
        .filter(|&i| match s.nights[i].identity {
            Identity::Qemu => true,
            Identity::Filter => checked(&["3"]),
            Identity::Same => s.commitless == Some(i) && checked(&["C"]),
        })
        .collect();
    if planted.is_empty() {
        return Ok(());
    }
    let stem = |i: usize| format!("{i:03}-{}", &commits[i][..12]);
    let mut slices = Vec::new();
    for k in 1..=2 {
        let d = dir.join(format!("slice-{k}"));
        std::fs::create_dir_all(&d).unwrap();
        write(
            &d.join("sweep.json"),
            &serde_json::json!({
                "range": format!("{}..{}", commits[0], commits[n - 1]),
                "commits": (0..n).map(|i| serde_json::json!({"commit": commits[i], "subject": "s"})).collect::<Vec<_>>(),
                "slices": [{"k": k, "n": 2}],
            }),
        );
        for i in (0..n).filter(|i| i % 2 == k - 1) {
            let mut doc = night_doc(&s.nights[i], &commits[i], Some(&created(i)));
            if s.commitless == Some(i) {
                doc["kernel"].as_object_mut().unwrap().remove("commit");
            }
            write(&d.join(format!("{}.json", stem(i))), &doc);
        }
        slices.push(d);
    }
    let out = dir.join("all");
    let r = run(&[
        OsStr::new("sweep"),
        "merge".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        slices[0].as_os_str(),
        slices[1].as_os_str(),
    ]);
    prop_assert_eq!(
        r.code,
        2,
        "merge of another benchmark set, QEMU or no commit (nights {:?}): {}",
        planted,
        r.err
    );
    prop_assert!(
        planted.iter().any(|&i| r.err.contains(&stem(i))),
        "the file is named: {}",
        r.err
    );
    Ok(())
}

proptest! {
    #![proptest_config(cases(48))]

    /// One series through every gate: history (by date and by commit),
    /// history --alert night by night, compare of neighbours, sweep report
    /// and merge; and the gates agree on the same data.
    #[test]
    fn gates_answer_as_the_model_does(s in scenario()) {
        prop_assume!(unambiguous(&s, &[ICOUNT]));
        let tmp = Scratch::new("series");
        let by_date = check_history(&s, &tmp.0.join("by-date"), false)?;
        let by_git = check_history(&s, &tmp.0.join("by-git"), true)?;
        let agree = checked(&s.series_tags());
        if s.bad_created.is_none() && agree {
            prop_assert_eq!(&by_date, &by_git, "history by date and by commit");
        }
        check_alerts(&s, &tmp.0.join("alerts"))?;
        check_neighbours(&s, &tmp.0.join("pairs"))?;
        let swept = check_sweep(&s, &tmp.0.join("sweep"))?;
        check_merge(&s, &tmp.0.join("merge"))?;
        if checked(&["9"]) {
            let (h, sw) = (tmp.0.join("by-git"), tmp.0.join("sweep"));
            for args in [vec![OsStr::new("history"), h.as_os_str(), "--min-change".as_ref(), "0".as_ref()], vec![OsStr::new("sweep"), "report".as_ref(), sw.as_os_str(), "--threshold".as_ref(), "0".as_ref()]] {
                let r = run(&args);
                prop_assert_eq!(r.code, 2, "{:?} must be refused: {}", args, r.err);
            }
        }
        // the sweep's steps are history's over the same commits, but the
        // two of an excursion (history: none) and drifts (sweep: none)
        let (steps, exc) = history_steps(&s.nights, s.nights.len());
        if let Some(swept) = swept.filter(|_| agree && !steps.iter().any(|x| x.drift)) {
            let aside = |b: &str, i: usize| exc.iter().any(|&(eb, a, c)| BENCHES[eb].0 == b && (a == i || c == i));
            let sweep: Vec<(usize, String, bool)> = swept.into_iter().filter(|(i, b, _)| !aside(b, *i)).collect();
            let mut hist: Vec<(usize, String, bool)> = by_git
                .into_iter()
                .filter(|(b, i, _, _)| *i < s.nights.len() && s.nights[*i].identity == Identity::Same && !aside(b, *i))
                .map(|(b, i, up, _)| (i, b, up))
                .collect();
            hist.sort();
            prop_assert_eq!(sweep, hist, "sweep report and history --git over the same commits");
        }
    }
}

// --------------------------------------------------- compare, two files

/// A side given as a directory: the copies of its file in it, and
/// whether odd files are; None: the file itself.
type SideDir = Option<(usize, bool)>;

#[derive(Clone, Debug)]
struct Pair {
    base: Vec<St>,
    new: Vec<St>,
    threshold: Option<f64>,
    /// NEW booted on another QEMU.
    qemu: bool,
    /// Each side given as a directory holding its file, this many copies
    /// of it, and odd files; or as the file.
    dirs: (SideDir, SideDir),
    labels: (String, String),
}

fn state(rate: f64) -> impl Strategy<Value = St> {
    prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 1, 2, 3]).prop_map(move |s| match s {
        1 => St::Failed,
        2 => St::Unsupported,
        3 => St::Absent,
        _ => St::Ok(rate),
    })
}

fn pair() -> impl Strategy<Value = Pair> {
    let side_dir = prop::option::weighted(0.4, (0usize..=2, prop::bool::weighted(0.3)));
    (
        BENCHES.map(|(_, r)| state(r)),
        (
            BENCHES.map(|(_, r)| state(r)),
            prop::collection::vec(
                prop::sample::select(vec![1.0, 1.0, 1.0, 0.99, 1.01, 0.98, 1.03, 0.9995]),
                3,
            ),
            prop::bool::weighted(0.1),
        ),
        prop::sample::select(vec![
            None,
            None,
            None,
            None,
            Some(0.0),
            Some(-1.0),
            Some(0.5),
            Some(1.5),
        ]),
        prop::bool::weighted(0.08),
        (side_dir.clone(), side_dir),
        (label(), label()),
    )
        .prop_map(
            |(base, (new, f, empty), threshold, qemu, dirs, labels)| Pair {
                new: new
                    .iter()
                    .zip(&f)
                    .map(|(s, f)| match s {
                        _ if empty => St::Absent,
                        St::Ok(x) => St::Ok(x * f),
                        s => *s,
                    })
                    .collect(),
                base: base.to_vec(),
                threshold,
                qemu,
                dirs,
                labels,
            },
        )
}

proptest! {
    #![proptest_config(cases(160))]

    /// compare of two kernels (files or directories of them, copies and
    /// odd files among them): exit, verdicts and KCIDB statuses.
    #[test]
    fn compare_answers_as_the_model_does(p in pair()) {
        let tmp = Scratch::new("pair");
        let commits = &tree().1;
        let side = |which: &str, states: &[St], at: usize, label: &str, dir: Option<(usize, bool)>, qemu: bool| {
            let night = Night {
                states: states.to_vec(),
                identity: if qemu { Identity::Qemu } else { Identity::Same },
                label: label.to_string(),
            };
            let doc = night_doc(&night, &commits[at], Some(&created(at)));
            let d = tmp.0.join(format!("{which} {label}"));
            std::fs::create_dir_all(&d).unwrap();
            let f = d.join(format!("{label}.json"));
            write(&f, &doc);
            match dir {
                None => f,
                Some((copies, odd)) => {
                    for c in 0..copies {
                        write(&d.join(format!("{label} copy {c}.json")), &doc);
                    }
                    if odd {
                        odd_files(&d, label);
                    }
                    d
                }
            }
        };
        let b = side("base", &p.base, 0, &p.labels.0, p.dirs.0, false);
        let n = side("new", &p.new, 1, &p.labels.1, p.dirs.1, p.qemu);
        let (kcidb, table) = (tmp.0.join("kcidb.json"), tmp.0.join("table.txt"));
        let mut args: Vec<&OsStr> = vec!["compare".as_ref(), b.as_os_str(), n.as_os_str(), "--format".as_ref(), "json".as_ref(), "--export-kcidb".as_ref(), kcidb.as_os_str(), "--export-table".as_ref(), table.as_os_str()];
        let t = p.threshold.map(|t| t.to_string());
        if let Some(t) = &t {
            args.extend([OsStr::new("--threshold"), t.as_ref()]);
        }
        let r = run(&args);
        prop_assert!(!hung(&r), "compare hung: {}", r.err);
        if p.threshold.is_some_and(|t| t <= 0.0) {
            if !checked(&["9"]) {
                return Ok(());
            }
            prop_assert_eq!(r.code, 2, "--threshold {:?} must be refused: {}", p.threshold, r.err);
            return Ok(());
        }
        if p.qemu {
            prop_assert_eq!(r.code, 2, "another QEMU is refused: {}", r.err);
            return Ok(());
        }
        let kcidb = std::fs::read_to_string(&kcidb).unwrap_or_default();
        let table = std::fs::read_to_string(&table).unwrap_or_default();
        let copies = [p.dirs.0, p.dirs.1].iter().flatten().any(|d| d.0 > 0);
        check_compare_answer(&r, (&p.base, &p.new), p.threshold.map_or(ICOUNT, |t| t / 100.0), copies, Some((&kcidb, &table)))?;
    }
}

// ----------------------------------------------- the time meter's boots

/// A time-meter results file of `boots` boots of the benchmarks
/// `names`, benchmark b's rate on boot i `rate(b, i)`; `paired`: the
/// boots are the rounds of one interleaved session.
fn timed(
    names: &[&str],
    commit: &str,
    boots: usize,
    rate: impl Fn(usize, usize) -> f64,
    paired: bool,
) -> Value {
    let runs: Vec<Vec<_>> = (0..boots)
        .map(|i| {
            (names.iter().enumerate())
                .map(|(b, n)| synth::bench(n, Status::Ok, rate(b, i)))
                .collect()
        })
        .collect();
    let mut doc = synth::results_of("6.1.0", commit, "20261201T000000Z", runs);
    if paired {
        for (i, run) in doc["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
            run["pairing"] = serde_json::json!({"session": "20261201T000000Z", "round": i + 1});
        }
    }
    doc
}

/// The fewest boots (pairs, or boots a side) whose smallest p beats the
/// level a lone change must reach among `m` tests (Benjamini–Hochberg).
fn needed(m: usize, min_p: impl Fn(usize) -> f64) -> usize {
    (2..64).find(|&k| min_p(k) < ALPHA / m as f64).unwrap()
}

fn wilcoxon_min_p(n: usize) -> f64 {
    2.0 / 2f64.powi(n as i32)
}

fn mann_whitney_min_p(k: usize) -> f64 {
    // 2 / C(2k, k)
    2.0 / (0..k).fold(1.0, |c, i| c * (2 * k - i) as f64 / (i + 1) as f64)
}

proptest! {
    #![proptest_config(cases(40))]

    /// Interleaved pairs, one benchmark changed the same way in every
    /// pair, the others not, on a comparison of `m` tests: every one
    /// inconclusive, with the pairs needed, when the smallest p the pairs
    /// allow misses alpha / m (the level a lone change must reach after
    /// the adjustment); else the change and no-change. A repeated round
    /// counts once.
    #[test]
    fn too_few_pairs_are_inconclusive(m in 1usize..=5, pairs in 2usize..=10, down in any::<bool>(), repeat in prop::bool::weighted(0.3)) {
        if !checked(&involved(&[(true, "5"), (repeat, "6")])) {
            return Ok(());
        }
        let tmp = Scratch::new("pairs");
        let names = &TIMED[..m];
        let f = if down { 0.9 } else { 1.1 };
        let level = |i: usize| 1.0 + 0.01 * ((i * 7) % 5) as f64;
        let base = timed(names, "aaaa", pairs, |_, i| level(i), true);
        // the others move by a little either way, round by round
        let moved = |b: usize, i: usize| match b {
            0 => f * (1.0 + 1e-4 * i as f64),
            _ => 1.0 + if i.is_multiple_of(2) { 1e-3 } else { -1e-3 } * (i + 1) as f64,
        };
        let mut new = timed(names, "bbbb", pairs, |b, i| level(i) * moved(b, i), true);
        if repeat {
            let mut again = new["runs"][0].clone();
            again["index"] = (pairs + 1).into();
            new["runs"].as_array_mut().unwrap().push(again);
        }
        let (b, n) = (tmp.0.join("base.json"), tmp.0.join("new.json"));
        write(&b, &base);
        write(&n, &new);
        let r = run(&[OsStr::new("compare"), b.as_os_str(), n.as_os_str(), "--format".as_ref(), "json".as_ref()]);
        let c = parse("compare --format json", &r.out)?;
        let inconclusive = wilcoxon_min_p(pairs) >= ALPHA / m as f64;
        for (b, bench) in c["benches"].as_array().unwrap().iter().enumerate() {
            let want = match b {
                _ if inconclusive => "inconclusive",
                0 if down => "regressed",
                0 => "improved",
                _ => "no-change",
            };
            prop_assert_eq!(bench["verdict"].as_str(), Some(want), "{} pairs, {} tests: {}", pairs, m, bench);
            let metric = &bench["metrics"][0];
            prop_assert_eq!(metric["new"]["values"].as_array().map(Vec::len), Some(pairs), "a repeated round counts once");
            if inconclusive {
                prop_assert_eq!(metric["boots_needed"].as_u64(), Some(needed(m, wilcoxon_min_p) as u64), "pairs needed");
            }
        }
        prop_assert_eq!(r.code, i32::from(inconclusive || down), "exit (nothing decided, or regressed): {}", r.err);
    }

    /// Two boots a side, each results file copied: the copies count once
    /// (2+2 boots, inconclusive), and are named.
    #[test]
    fn copies_count_once(copies in 1usize..=5, m in 1usize..=3) {
        if !checked(&["5", "6"]) {
            return Ok(());
        }
        let tmp = Scratch::new("copies");
        let names = &TIMED[..m];
        for (side, commit, f) in [("base", "aaaa", 1.0), ("new", "bbbb", 0.9)] {
            let d = tmp.0.join(side);
            std::fs::create_dir_all(&d).unwrap();
            let doc = timed(names, commit, 2, |_, i| f * (1.0 + 0.01 * i as f64), false);
            for c in 0..=copies {
                write(&d.join(format!("{side}-{c}.json")), &doc);
            }
        }
        let r = run(&[OsStr::new("compare"), tmp.0.join("base").as_os_str(), tmp.0.join("new").as_os_str(), "--format".as_ref(), "json".as_ref()]);
        let c = parse("compare --format json", &r.out)?;
        for bench in c["benches"].as_array().unwrap() {
            prop_assert_eq!(bench["verdict"].as_str(), Some("inconclusive"), "2+2 boots, {} copies: {}", copies, bench);
            let metric = &bench["metrics"][0];
            prop_assert_eq!(metric["base"]["values"].as_array().map(Vec::len), Some(2));
            prop_assert_eq!(metric["boots_needed"].as_u64(), Some(needed(m, mann_whitney_min_p) as u64), "boots needed");
        }
        prop_assert_eq!(r.code, 1, "nothing decided: {}", r.err);
        prop_assert!(r.err.contains("base-1.json") && r.err.contains("new-1.json"), "the copies are named: {}", r.err);
    }
}
