//! `bench` (trig-init linked or copied under upstream's binary's name) and
//! `trig-init bench`: upstream's command line, its lines on stdout, its
//! exit statuses, so that its scripts run unchanged.

use crate::bench_cli::{self, BadBenchLine, BenchCall, BenchRun};
use nix::sys::signal::{signal, SigHandler, Signal};
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;
use trig_guest::matrix::maps::{hashmap, local_storage, lpm_trie};
use trig_guest::options::RunOptions;
use trig_guest::recorder::Sink;
use trig_guest::registry::{self, Bench, Producers, Reporter, Runner};
use trig_guest::{pid1, upstream};
use trig_schema::error::shown;
use trig_schema::{exit, files};

/// argp's status for a command line it refuses (sysexits.h's EX_USAGE).
const EX_USAGE: u8 = 64;

/// Runs upstream's command line `args` (without the program's name).
pub fn bench(args: Vec<OsString>) -> ExitCode {
    // a reader that goes away ends the run as it ends upstream's C
    // program, not in a panic on the next line (Rust ignores SIGPIPE)
    // SAFETY: no handler of ours is replaced; the default is async-safe.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
    let code = match bench_cli::parse(args) {
        Ok(BenchCall::Run(run)) => run_named(*run),
        Ok(BenchCall::List) => list(),
        Ok(BenchCall::Help) => {
            let _ = trig_schema::stdout!("{}", bench_cli::HELP);
            ExitCode::SUCCESS
        }
        Ok(BenchCall::Version) => {
            let _ = trig_schema::stdoutln!(
                "trig-init {} ({})",
                env!("CARGO_PKG_VERSION"),
                trig_guest::GIT_REV
            );
            ExitCode::SUCCESS
        }
        Err(BadBenchLine(why)) => refuse(why),
    };
    // stdout full (or gone otherwise): said once, at the end, exit 1
    match trig_schema::out::failure() {
        Some(e) => fail(format!("bench: {e}")),
        None => code,
    }
}

/// argp's refusal of a command line.
fn refuse(why: impl std::fmt::Display) -> ExitCode {
    let why = why.to_string();
    trig_schema::stderrln!(
        "bench: {}\nTry `bench --help' for more information.",
        shown(&why, false)
    );
    ExitCode::from(EX_USAGE)
}

/// Upstream's failure: its words on stderr, exit 1.
fn fail(why: impl std::fmt::Display) -> ExitCode {
    trig_schema::stderrln!("{why}");
    ExitCode::from(exit::FAILED)
}

fn list() -> ExitCode {
    match registry::running_version() {
        Ok(version) => {
            let mut text = String::from("Available benchmarks:\n");
            for name in registry::upstream_names(version) {
                text.push_str(&format!("- {name}\n"));
            }
            let _ = trig_schema::out::stdout(&text);
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// The first of `knobs` that `bench`'s family takes no part in, where its
/// family has a parser of its own (one without takes any).
fn foreign_knob(knobs: &[&'static str], bench: &Bench) -> Option<&'static str> {
    let own = bench.knobs?;
    knobs.iter().find(|k| !own.contains(k)).copied()
}

/// Upstream's names in the running kernel's registry rows.
fn resolve(names: &[String]) -> Result<Vec<&'static Bench>, String> {
    let version = registry::running_version().map_err(|e| e.to_string())?;
    names
        .iter()
        .map(|name| {
            registry::by_upstream_name(name, version)
                .ok_or_else(|| format!("benchmark '{}' not found", shown(name, false)))
        })
        .collect()
}

/// Upstream's operations for a run of one hash map, local storage or LPM
/// trie benchmark, and local storage's maps, where the matrix states
/// fewer (full-update's, the gets and the trie's runs have no knob
/// upstream).
fn upstream_operations(benches: &[&Bench], opts: &mut RunOptions) {
    match benches {
        [b] if b.family.runner == Runner::LpmTrie => opts.nr_loops = Some(lpm_trie::UPSTREAM_RUNS),
        [b] if b.family.runner == Runner::LocalStorage => {
            opts.nr_loops = Some(local_storage::UPSTREAM_GETS);
            if local_storage::Gets::gets_storage(b) {
                opts.nr_maps = Some(opts.nr_maps.unwrap_or(local_storage::UPSTREAM_MAPS))
            }
        }
        [b] if b.reporter == Reporter::FullUpdate => {
            opts.nr_loops = Some(hashmap::UPSTREAM_FULL_UPDATES)
        }
        [b] if b.reporter == Reporter::Lookup => {
            opts.nr_loops = Some(opts.nr_loops.unwrap_or(hashmap::UPSTREAM_LOOKUPS))
        }
        _ => {}
    }
}

fn run_named(run: BenchRun) -> ExitCode {
    if run.names.is_empty() {
        return fail("benchmark name is not specified");
    }
    let benches = match resolve(&run.names) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let mut run = run;
    upstream_operations(&benches, &mut run.opts);
    // upstream's second parse, with the chosen family's parser alone
    if let Some(knob) = foreign_knob(&run.knobs, benches[0]) {
        return refuse(format!("unrecognized option '--{knob}'"));
    }
    if let Some(path) = run.json.as_deref().filter(|p| *p != "-") {
        if let Err(e) = files::check_writable(Path::new(path)) {
            return refuse(format!("--json {path}: {e}"));
        }
    }
    // upstream's benchmarks check these in their setup, after its line
    let one_producer = |b: &&Bench| b.family.producers == Producers::One;
    let refusal = if run.consumers > 0 {
        Some(upstream::no_consumers(benches[0].family))
    } else if run.opts.producers.iter().any(|&p| p > 1) && benches.iter().any(one_producer) {
        Some("benchmark doesn't support multi-producer!")
    } else if run.opts.nr_entries.is_none() && benches[0].family.runner == Runner::LpmTrie {
        // upstream's trie has no size of its own
        Some("Missing --nr_entries parameter")
    } else {
        None
    };
    if let Some(why) = refusal {
        if !run.quiet {
            let _ = trig_schema::stdoutln!("{}", upstream::setting_up(&run.names[0]));
        }
        return fail(why);
    }
    let sink = Sink::Upstream {
        names: run.names,
        quiet: run.quiet,
        json: run.json,
    };
    let mounts = pid1::mounts::mount_all(false);
    let on_timeout = || std::process::exit(i32::from(exit::NO_BOOT));
    match pid1::execute(&run.opts, Ok(benches), sink, mounts, false, on_timeout) {
        // upstream exits 1 when a benchmark cannot attach: so does a
        // benchmark unsupported here, not only a failed one
        Ok(recorder) if recorder.all_measured() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(exit::FAILED),
        Err(e) => fail(e),
    }
}
