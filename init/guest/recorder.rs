//! Runs the selected matrix and emits the report: framed on the console
//! for the host (PID 1), or as a plain JSON document (a command).

use crate::caps;
use crate::matrix;
use crate::options::RunOptions;
use crate::registry::{Reporter, RunPoint};
use crate::sampler::{self, Progress};
use crate::upstream;
use std::sync::{Arc, Mutex};
use trig_schema::error::shown;
use trig_schema::{
    frame, BenchResult, Figures, Harness, MountOutcome, Outcome, Report, RunEnd, Status, System,
    NAME_WIDTH, SCHEMA_VERSION,
};

/// Where the report goes.
#[derive(Clone)]
pub enum Sink {
    /// Framed on stdout (the serial console), a frame per benchmark as it
    /// finishes and the whole report at the end.
    Console,
    /// The whole report as JSON to this file, or stdout for "-".
    Plain(String),
    /// Upstream's bench's lines on stdout (`bench`, `trig-init bench`),
    /// each point named as it was asked for (`names`, by point), and the
    /// JSON report only where asked.
    Upstream {
        names: Vec<String>,
        quiet: bool,
        json: Option<String>,
    },
}

/// The report being built, shared with the watchdog so that whatever ends
/// the run, the results so far are emitted exactly once, and whole.
#[derive(Clone)]
pub struct Recorder {
    pub report: Arc<Mutex<Report>>,
    /// The benchmark running now: what ends the run early reports it as
    /// cut short instead of leaving it out.
    running: Arc<Mutex<Option<BenchResult>>>,
    /// Whether the report was emitted; held while it is, so that what
    /// ends the run second (the main thread's power-off after the
    /// watchdog's report, the watchdog's after the main thread's) waits
    /// for it to be written whole.
    emitted: Arc<Mutex<bool>>,
    sink: Sink,
}

pub fn system(pid1: bool) -> System {
    let uts = nix::sys::utsname::uname().ok();
    let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
        uts.as_ref()
            .map(|u| f(u).to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    System {
        release: field(|u| u.release()),
        version: field(|u| u.version()),
        machine: field(|u| u.machine()),
        cmdline: std::fs::read_to_string("/proc/cmdline")
            .unwrap_or_default()
            .trim()
            .into(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        pid1,
        cpu: crate::cpu::seen(),
    }
}

/// Writes whole lines with one write each, so that the kernel's console
/// messages fall between our lines, not inside them. A failed write is
/// the command's to report, at its end ([`trig_schema::out`]).
pub fn console_lines(lines: &[String]) {
    for line in lines {
        let _ = trig_schema::out::stdout(line);
    }
}

impl Recorder {
    pub fn new(
        sink: Sink,
        opts: &RunOptions,
        points: usize,
        mounts: Vec<MountOutcome>,
        pid1: bool,
    ) -> Recorder {
        let report = Report {
            schema_version: SCHEMA_VERSION,
            tool: crate::this_build(),
            system: system(pid1),
            capabilities: caps::probe(),
            params: opts.params(points),
            mounts,
            results: Vec::new(),
            harness: None,
            outcome: Outcome {
                status: RunEnd::Running,
                message: None,
            },
        };
        Recorder {
            report: Arc::new(Mutex::new(report)),
            running: Arc::default(),
            emitted: Arc::default(),
            sink,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Report> {
        // a panic elsewhere must not cost us the results
        self.report.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs every point in order, emitting each result as it comes.
    pub fn run(&self, points: &[RunPoint], opts: &RunOptions) {
        let caps = self.lock().capabilities.clone();
        if matches!(self.sink, Sink::Console) {
            // lets the host rebuild a report if the guest dies part-way
            let json = serde_json::to_string(&*self.lock()).expect("report serializes");
            console_lines(&frame::encode(frame::HEADER, &json));
        }
        let loaded = matrix::Loaded::load(points, opts, &caps);
        let n = points.len();
        for (i, point) in points.iter().enumerate() {
            let progress = self.announce(i, n, point, opts);
            self.start(matrix::new_result(point, opts));
            let result = matrix::run_point(point, opts, &caps, &progress, &loaded);
            match &progress {
                // a failed write is the command's to report, at its end
                Progress::Upstream { quiet, bench, .. } => {
                    let terse = upstream::Terse {
                        quiet: *quiet,
                        affinity: opts.affinity,
                    };
                    let line = summary_is_due(&result)
                        .then(|| upstream::summary(&result, point.bench.reporter, terse))
                        .flatten();
                    if let Some(line) = line {
                        let _ = trig_schema::stdoutln!("{line}");
                    }
                    // the reason quotes the kernel and libbpf: outside text
                    if result.status != Status::Ok {
                        trig_schema::stderrln!(
                            "benchmark '{}' {}: {}",
                            shown(bench, false),
                            result.status.as_str(),
                            shown(result.reason.as_deref().unwrap_or(""), false)
                        );
                    }
                }
                _ => trig_schema::stderrln!("{}", summary_line(&result)),
            }
            if matches!(self.sink, Sink::Console) {
                let json = serde_json::to_string(&result).expect("results serialize");
                console_lines(&frame::encode(frame::BENCH, &json));
            }
            self.done(result);
        }
        trig_schema::add_overheads(&mut self.lock().results);
        if opts.harness {
            self.harness(opts);
        }
        // after the matrix: reading them moves this process's heap, and
        // uprobe counts move with its layout
        if opts.profile && matches!(self.sink, Sink::Console) {
            // several producers share lines the host names by data symbol
            emit_symbols(opts.producers.iter().any(|&p| p > 1));
        }
    }

    /// Says which point `i` of `n` starts, as the sink's reader expects,
    /// and what the sampler is to print while it runs.
    fn announce(&self, i: usize, n: usize, point: &RunPoint, opts: &RunOptions) -> Progress {
        match &self.sink {
            Sink::Console => console_lines(&[frame::progress_line(i + 1, n, &point.name)]),
            Sink::Plain(_) => trig_schema::stderrln!("[{}/{n}] {}", i + 1, point.name),
            Sink::Upstream { names, quiet, .. } => {
                let bench = names.get(i).unwrap_or(&point.name).clone();
                if !quiet {
                    let _ = trig_schema::stdoutln!("{}", upstream::setting_up(&bench));
                }
                return Progress::Upstream {
                    bench,
                    quiet: *quiet,
                    report: point.bench.reporter,
                };
            }
        }
        if opts.verbose {
            Progress::Stderr
        } else {
            Progress::Silent
        }
    }

    /// Notes the benchmark starting now, not measured yet.
    fn start(&self, result: BenchResult) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    }

    /// Adds a benchmark's result.
    fn done(&self, result: BenchResult) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.lock().results.push(result);
    }

    /// Times the bare loop right after the matrix and sets the report's
    /// harness figures from the first trig-base result.
    fn harness(&self, opts: &RunOptions) {
        let base = self.lock().results.iter().find_map(|r| {
            (r.bench == "trig-base" && r.producers == 1)
                .then(|| r.summary.as_ref().map(|s| s.mean))
                .flatten()
        });
        let Some(base_mps) = base else {
            trig_schema::stderrln!(
                "trig-init: --harness needs a trig-base result with one producer"
            );
            return;
        };
        let batch = matrix::GETPGID_BATCH;
        let bare_mps = sampler::bare_rate(opts.clock(), opts.duration, batch, || {
            matrix::syscall_loop::getpgid_loop(batch, 0)
        });
        trig_schema::stderrln!(
            "harness: trig-base {base_mps:.3}M/s, bare getpgid loop {bare_mps:.3}M/s, ratio {:.3}",
            base_mps / bare_mps
        );
        self.lock().harness = Some(Harness {
            base_mps,
            bare_mps,
            ratio: base_mps / bare_mps,
        });
    }

    /// Sets the outcome and emits the report, once; later calls (the
    /// watchdog after a normal end, or the reverse) do nothing once it is
    /// out.
    pub fn finish(&self, status: RunEnd, message: Option<String>) -> bool {
        let mut emitted = self.emitted.lock().unwrap_or_else(|e| e.into_inner());
        if *emitted {
            return false;
        }
        *emitted = true;
        let report = {
            let mut r = self.lock();
            // the benchmark the watchdog (a signal, a panic) cut short
            if let Some(mut cut) = self
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
            {
                cut.status = match status {
                    RunEnd::Watchdog => Status::Timeout,
                    _ => Status::Failed,
                };
                cut.reason = Some(format!(
                    "running when the run ended ({status}{})",
                    message
                        .as_ref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ));
                r.results.push(cut);
            }
            // the overheads of those measured before (idempotent)
            trig_schema::add_overheads(&mut r.results);
            r.outcome = Outcome { status, message };
            r.clone()
        };
        match &self.sink {
            Sink::Console => {
                let json = serde_json::to_string(&report).expect("report serializes");
                // twice: a kernel message that breaks a marker of one
                // copy leaves the other (the host takes the last good one)
                let lines = frame::encode(frame::REPORT, &json);
                console_lines(&lines);
                console_lines(&lines);
            }
            Sink::Upstream { json: None, .. } => {}
            Sink::Plain(path)
            | Sink::Upstream {
                json: Some(path), ..
            } => {
                let json = serde_json::to_string_pretty(&report).expect("report serializes") + "\n";
                if path == "-" {
                    console_lines(&[json]);
                } else if let Err(e) =
                    trig_schema::files::replace(std::path::Path::new(path), json.as_bytes())
                {
                    trig_schema::stderrln!("trig-init: writing {path}: {e}");
                    trig_schema::out::failed(format!("cannot write {path}: {e}"));
                }
            }
        }
        true
    }

    pub fn all_ok(&self) -> bool {
        self.lock().all_ok()
    }

    /// Whether the run completed and measured every benchmark (none
    /// unsupported either).
    pub fn all_measured(&self) -> bool {
        let report = self.lock();
        report.all_ok() && report.results.iter().all(|r| r.status == Status::Ok)
    }
}

/// The kernel's symbols as a `kallsyms` frame, for `--profile`, and its
/// data symbols as a `datasyms` one with `data`; without them the host
/// still has the results, only unnamed.
fn emit_symbols(data: bool) {
    match crate::kallsyms::read(data) {
        Ok((syms, data)) => {
            let frames = [(frame::KALLSYMS, Some(syms)), (frame::DATASYMS, data)];
            for (kind, syms) in frames {
                if let Some(syms) = syms {
                    let json = serde_json::to_string(&syms).expect("symbols serialize");
                    console_lines(&frame::encode(kind, &json));
                }
            }
        }
        Err(e) => trig_schema::stderrln!("trig-init: --profile: {e}"),
    }
}

/// What a result's own figure adds to its summary line.
fn figure_note(f: &Figures) -> Option<String> {
    if let Some(fp) = f.false_positives {
        return Some(format!("false positives {:.3}%", fp * 100.0));
    }
    // the guest's clock: under icount, instructions at shift 0
    if let Some(t) = f.timed_per_op {
        return Some(format!("timed by BPF {t:.3} ns/op"));
    }
    if let Some(m) = f.memory_mib {
        let peak = f.peak_memory_mib.unwrap_or(m);
        return Some(format!("memory {m:.2} MiB (peak {peak:.2})"));
    }
    f.important_hits.map(|i| format!("important hits {i:.3}"))
}

/// Upstream's summary line, prefixed with the benchmark.
pub fn summary_line(r: &BenchResult) -> String {
    match (&r.status, &r.summary) {
        (Status::Ok, Some(s)) => {
            let report = crate::registry::find(&r.bench).map_or(Reporter::Hits, |b| b.reporter);
            // where hits and drops are parted, the events are operations
            let counts_drops = r.samples.iter().any(|s| s.drops > 0);
            let head = match report {
                Reporter::FalseHits | Reporter::Hits if counts_drops => {
                    upstream::head(s, Reporter::Ops)
                }
                _ => upstream::head(s, report),
            };
            match r.figures.as_ref().and_then(figure_note) {
                Some(note) => format!("{:<w$} {head}, {note}", r.name, w = NAME_WIDTH),
                None => format!("{:<w$} {head}", r.name, w = NAME_WIDTH),
            }
        }
        _ => format!(
            "{:<w$} {}: {}",
            r.name,
            r.status.as_str(),
            shown(r.reason.as_deref().unwrap_or(""), false),
            w = NAME_WIDTH
        ),
    }
}

/// Whether upstream's Summary line is printed for `result`: where it was
/// measured, and also where producers then outlasted the stop's grace and
/// were abandoned, as upstream's bench prints its Summary from the samples
/// and exits without waiting for them (the reason follows on stderr).
fn summary_is_due(result: &BenchResult) -> bool {
    match result.status {
        Status::Ok => true,
        Status::Timeout => result.summary.as_ref().is_some_and(|s| s.mean > 0.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::tests::ok;

    #[test]
    fn the_watchdog_reports_the_running_benchmark_and_keeps_overheads() {
        let path = std::env::temp_dir().join(format!("trig-runner-wd-{}.json", std::process::id()));
        let run = Recorder::new(
            Sink::Plain(path.display().to_string()),
            &RunOptions::default(),
            3,
            Vec::new(),
            false,
        );
        run.done(ok("trig-base", "trig-base", 2.0));
        run.done(ok("trig-kprobe", "trig-kprobe", 1.0));
        run.start(
            crate::registry::find("rename-base")
                .unwrap()
                .result("rename-base", 1),
        );
        assert!(run.finish(RunEnd::Watchdog, Some("watchdog: 1 s".into())));
        let r = run.lock();
        let cut = r.results.iter().find(|b| b.name == "rename-base");
        let cut = cut.expect("the running benchmark has a row");
        assert_eq!(cut.status, Status::Timeout);
        assert!(
            cut.reason.as_deref().unwrap().contains("watchdog"),
            "{cut:?}"
        );
        let kprobe = r.results.iter().find(|b| b.name == "trig-kprobe").unwrap();
        let o = kprobe
            .overhead_ns
            .as_ref()
            .expect("overhead against trig-base");
        assert!((o.ns_per_event - 500.0).abs() < 1e-9, "{o:?}");
        let _ = std::fs::remove_file(&path);
    }

    /// run_bench_bpf_loop.sh's `-p 1 --nr_loops 1000000` under load: a
    /// getpgid() outlasted the stop's grace, the producer was abandoned,
    /// and no Summary line came for the script's sed. Upstream's bench
    /// prints its Summary from the samples and exits, never waiting.
    #[test]
    fn an_abandoned_producer_still_gets_upstreams_summary() {
        let mut r = ok("bpf-loop", "bpf-loop", 2.0);
        assert!(summary_is_due(&r));
        r.status = Status::Timeout;
        r.reason = Some("producers did not stop; abandoned".into());
        assert!(summary_is_due(&r));
        r.summary = None;
        assert!(!summary_is_due(&r));
        let mut failed = ok("bpf-loop", "bpf-loop", 2.0);
        failed.status = Status::Failed;
        assert!(!summary_is_due(&failed));
    }

    /// What ends the run second waits until the first's report is out:
    /// the main thread powered off while the watchdog's was being written.
    #[test]
    fn a_second_finish_waits_for_the_first_report_to_be_written() {
        let path =
            std::env::temp_dir().join(format!("trig-runner-two-{}.json", std::process::id()));
        let run = Recorder::new(
            Sink::Plain(path.display().to_string()),
            &RunOptions::default(),
            1,
            Vec::new(),
            false,
        );
        // the first finish is kept from emitting here
        let held = run.lock();
        let finish = |status| {
            let run = run.clone();
            std::thread::spawn(move || run.finish(status, None))
        };
        let first = finish(RunEnd::Watchdog);
        std::thread::sleep(std::time::Duration::from_millis(200));
        let second = finish(RunEnd::Complete);
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!second.is_finished(), "back before the report was out");
        drop(held);
        let (a, b) = (first.join().unwrap(), second.join().unwrap());
        assert!(a ^ b, "emitted once: {a} {b}");
        assert!(path.exists());
        let _ = std::fs::remove_file(&path);
    }
}
