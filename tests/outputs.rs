//! Every command that prints, to a full stdout (/dev/full) and to a
//! closed pipe: trig-init's own commands exit 4 with one line that says
//! "cannot write standard output"; `bench`, as upstream's C program, dies
//! by SIGPIPE on a closed pipe and exits 1 with one line on a full disk.
//! No panic, no backtrace, anywhere.

// a test's own output: a failed write there fails the test
#![allow(clippy::disallowed_macros)]

mod common;
mod synth;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

/// Where stdout goes.
#[derive(Clone, Copy, Debug)]
enum Sink {
    Full,
    ClosedPipe,
}

fn run_into(sink: Sink, program: &std::path::Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .stdout(common::unwritable_stdout(matches!(sink, Sink::ClosedPipe)))
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn no_panic(what: &str, o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{what}: {err}"
    );
    err
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trig-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A short run of a benchmark that needs no BPF, its JSON to the path
/// that follows.
const RUN: &[&str] = &[
    "run",
    "-w",
    "0",
    "-d",
    "0.05",
    "--filter",
    "trig-usermode-count",
    "--json",
];

/// Whether this host can run a benchmark: as root (the BPF-less ones
/// need nothing more).
fn host_runs_benchmarks() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[test]
fn trig_inits_commands_exit_4_with_one_line_when_stdout_cannot_be_written() {
    let dir = scratch("commands");
    let (base, new) = synth::regressed_pair(&dir);
    let history = dir.join("history");
    std::fs::create_dir_all(&history).unwrap();
    for (i, f) in [&base, &new].iter().enumerate() {
        std::fs::copy(f, history.join(format!("night{i}.json"))).unwrap();
    }
    let comparison = dir.join("c.json");
    let c = Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(["compare", "--format", "json"])
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    std::fs::write(&comparison, &c.stdout).unwrap();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (base, new, history, comparison) = (s(&base), s(&new), s(&history), s(&comparison));
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["--version"],
        vec!["vm", "--help"],
        vec!["list", "--kernel", "6.1"],
        vec!["compare", &base, &new],
        vec!["compare", "--format", "json", &base, &new],
        vec!["history", &history],
        vec!["bisect", "effect", &comparison],
    ];
    if host_runs_benchmarks() {
        commands.push([RUN, &["-"]].concat());
    }
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_trig-init"));
    for args in &commands {
        for sink in [Sink::Full, Sink::ClosedPipe] {
            let o = run_into(sink, exe, args);
            let err = no_panic(&format!("{args:?} {sink:?}"), &o);
            assert_eq!(o.status.code(), Some(4), "{args:?} {sink:?}: {err}");
            let said: Vec<&str> = err
                .lines()
                .filter(|l| l.contains("cannot write standard output"))
                .collect();
            assert_eq!(said.len(), 1, "{args:?} {sink:?}: {err}");
            assert!(said[0].contains("error: "), "{args:?} {sink:?}: {err}");
        }
    }
    // a file that cannot be written is the same status
    if host_runs_benchmarks() {
        let o = run_into(Sink::Full, exe, &[RUN, &["/dev/full"]].concat());
        let err = no_panic("run --json /dev/full", &o);
        assert_eq!(o.status.code(), Some(4), "{err}");
        assert!(err.contains("cannot write /dev/full"), "{err}");
    }
}

#[test]
fn bench_dies_by_sigpipe_on_a_closed_pipe_and_exits_1_on_a_full_disk() {
    let dir = scratch("bench");
    let bench = dir.join("bench");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_trig-init"), &bench).unwrap();
    let mut commands: Vec<Vec<&str>> = vec![vec!["--help"], vec!["--list"], vec!["--version"]];
    if host_runs_benchmarks() {
        commands.push(vec!["-w0", "-d0.05", "trig-usermode-count"]);
    }
    for args in &commands {
        let full = run_into(Sink::Full, &bench, args);
        let err = no_panic(&format!("{args:?} full"), &full);
        assert_eq!(full.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(
            err.lines()
                .filter(|l| l.contains("cannot write standard output"))
                .count(),
            1,
            "{args:?}: {err}"
        );
        let closed = run_into(Sink::ClosedPipe, &bench, args);
        no_panic(&format!("{args:?} closed"), &closed);
        assert_eq!(closed.status.signal(), Some(13), "{args:?}: {closed:?}");
    }
}
