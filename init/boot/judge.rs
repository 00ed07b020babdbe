//! How a boot is judged: pure functions from what a boot left (its
//! console, how it ended) to the boot's record in the results.

use crate::console;
use crate::machine::Boot;
use crate::profiling::functions;
use crate::profiling::source_lines::{self, DebugInfo};
use std::path::Path;
use std::time::Duration;
use trig_schema::exit;
use trig_schema::frame::{self, Frame};
use trig_schema::{
    add_overheads, BenchResult, BootStatus, KernelSymbols, Outcome, Report, RunEnd, RunRecord,
    RunSet, Status,
};

/// The report of a boot: the final frame, or else one assembled from the
/// header and the per-benchmark frames that did arrive.
pub(crate) fn report_from_frames(frames: &[Frame]) -> Result<(Report, bool), String> {
    if let Some(f) = frames.iter().rev().find(|f| f.kind == frame::REPORT) {
        let r: Report = serde_json::from_str(&f.payload)
            .map_err(|e| format!("malformed report JSON from the guest: {e}"))?;
        return Ok((r, true));
    }
    let header = frames
        .iter()
        .find(|f| f.kind == frame::HEADER)
        .ok_or("no report on the console")?;
    let mut r: Report = serde_json::from_str(&header.payload)
        .map_err(|e| format!("malformed header JSON from the guest: {e}"))?;
    for f in frames.iter().filter(|f| f.kind == frame::BENCH) {
        let b: BenchResult = serde_json::from_str(&f.payload)
            .map_err(|e| format!("malformed benchmark JSON from the guest: {e}"))?;
        r.results.push(b);
    }
    add_overheads(&mut r.results);
    r.outcome = Outcome {
        status: RunEnd::Incomplete,
        message: Some("the guest stopped before its final report".into()),
    };
    Ok((r, false))
}

/// Judges a finished boot, the `index`-th of its kernel.
pub fn judge_boot(index: usize, b: &Boot, timeout: Duration) -> RunRecord {
    let parsed = report_from_frames(&b.console.frames);
    let (status, mut message) = verdict(b, &parsed, timeout);
    if status == BootStatus::BadOutput {
        if let Some(how) = qemu_end(b) {
            append(&mut message, how);
        }
    }
    if b.console.dropped > 0 {
        let note = format!(
            "console output over {} MiB: {} bytes not kept",
            console::KEEP >> 20,
            b.console.dropped
        );
        append(&mut message, note);
    }
    let mut report = parsed.ok().map(|(r, _)| r);
    if let (Some(r), Some(why)) = (report.as_mut(), &message) {
        add_cut_short(r, b.console.progress.as_ref(), why);
    }
    RunRecord {
        index,
        status,
        message,
        // set when the log is written beside the results
        console_log: String::new(),
        wall_s: b.wall,
        boot_s: b.boot_s,
        pairing: None,
        report,
        timeline: (!b.timeline.starts.is_empty()).then(|| b.timeline.clone()),
        parts: Vec::new(),
    }
}

/// The benchmark a guest that stopped before its final report was running
/// (its last progress marker) becomes a failed row, not a missing one.
fn add_cut_short(r: &mut Report, progress: Option<&(usize, usize, String)>, why: &str) {
    let Some((_, _, name)) = progress else {
        return;
    };
    if r.outcome.status != RunEnd::Incomplete || r.results.iter().any(|b| &b.name == name) {
        return;
    }
    // a point's name is its benchmark's, maybe with /parameters after it
    let Some(bench) = trig_guest::registry::find(name.split('/').next().unwrap_or(name)) else {
        return;
    };
    let mut cut = bench.result(name, 1);
    cut.status = Status::Failed;
    cut.reason = Some(format!("running when the guest stopped: {why}"));
    r.results.push(cut);
}

/// Adds `why` to a boot's message.
pub fn append(message: &mut Option<String>, why: String) {
    *message = Some(
        message
            .take()
            .map_or(why.clone(), |m| format!("{m}; {why}")),
    );
}

/// The status of a boot and why, the kernel's failures first.
fn verdict(
    b: &Boot,
    parsed: &Result<(Report, bool), String>,
    timeout: Duration,
) -> (BootStatus, Option<String>) {
    let at = b
        .console
        .progress
        .as_ref()
        .map(|(i, n, name)| format!(" during {name} ({i}/{n})"))
        .unwrap_or_default();
    let (status, why) = if !b.console.crash.is_empty() {
        (
            BootStatus::Crashed,
            format!("kernel crashed: {}", b.console.crash.join(" / ")),
        )
    } else if let Some(sig) = b.interrupted {
        (
            BootStatus::Interrupted,
            format!("trig-init got {sig}{at}; QEMU killed"),
        )
    } else if b.hung {
        (
            BootStatus::Hung,
            format!(
                "guest made no progress for {} s{at}; QEMU killed",
                timeout.as_secs()
            ),
        )
    } else if !b.console.reached_init {
        (
            BootStatus::NoBoot,
            format!("the guest never reached /init: {}", no_boot_why(b)),
        )
    } else {
        return report_verdict(b, parsed);
    };
    (status, Some(why))
}

/// How QEMU ended a boot that it was not killed in, where that says more
/// than a power-off: a signal from elsewhere or a failure, and its last
/// words.
fn qemu_end(b: &Boot) -> Option<String> {
    let status = b
        .qemu_exit
        .filter(|s| !s.success())
        .map(|s| format!("QEMU ended with {s}"));
    let said = b
        .qemu_stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(|l| format!("QEMU said: {}", l.chars().take(200).collect::<String>()));
    let both: Vec<String> = status.into_iter().chain(said).collect();
    (!both.is_empty()).then(|| both.join(", "))
}

/// Why a guest never reached /init: QEMU's messages, or else the last
/// lines of its console, or else that there were none.
fn no_boot_why(b: &Boot) -> String {
    if !b.qemu_stderr.trim().is_empty() {
        return b.qemu_stderr.trim().to_string();
    }
    let tail: Vec<&str> = b
        .console
        .log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .rev()
        .take(5)
        .collect();
    if tail.is_empty() {
        return "QEMU ended without a word and the console stayed empty (a truncated or \
                unbootable kernel image, or a kernel without a serial console?)"
            .into();
    }
    tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
}

/// The verdict on a boot that reached /init: by its report.
fn report_verdict(
    b: &Boot,
    parsed: &Result<(Report, bool), String>,
) -> (BootStatus, Option<String>) {
    match parsed {
        Ok((r, true)) if r.all_ok() => (BootStatus::Ok, None),
        Ok((r, true)) => (
            BootStatus::Failed,
            Some(format!(
                "guest run ended '{}'{}; see failed benchmarks",
                r.outcome.status,
                r.outcome
                    .message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            )),
        ),
        Ok((_, false)) | Err(_) => (
            BootStatus::BadOutput,
            Some(format!(
                "no complete, valid report on the console: {}",
                b.console
                    .errors
                    .first()
                    .map(|e| e.to_string())
                    .or_else(|| parsed.as_ref().err().cloned())
                    .filter(|why| !why.is_empty())
                    .unwrap_or_else(|| "no frame seen".into())
            )),
        ),
    }
}

/// Fills in the boot's per-function profiles from the plugin's counts and
/// the guest's symbols, and their source lines from `debug` (none: not
/// asked for); what is missing goes in the boot's message, and the
/// results stay as they are. Returns what the lines cost.
pub(crate) fn add_profiles(
    rec: &mut RunRecord,
    frames: &[Frame],
    counts: &Path,
    debug: Option<&Result<DebugInfo, String>>,
) -> Option<source_lines::Cost> {
    let report = rec.report.as_mut()?;
    let syms = frames
        .iter()
        .rev()
        .find(|f| f.kind == frame::KALLSYMS)
        .ok_or_else(|| "the guest sent no kernel symbols".to_string())
        .and_then(|f| {
            serde_json::from_str::<KernelSymbols>(&f.payload)
                .map_err(|e| format!("malformed kernel symbols from the guest: {e}"))
        });
    // several producers' shared lines are named by them, if sent
    let data = frames
        .iter()
        .rev()
        .find(|f| f.kind == frame::DATASYMS)
        .and_then(|f| serde_json::from_str::<KernelSymbols>(&f.payload).ok());
    let mut cost = None;
    let attached = syms.and_then(|syms| {
        let text = std::fs::read_to_string(counts)
            .map_err(|e| format!("plugin output {}: {e}", counts.display()))?;
        functions::attach(report, &syms, data.as_ref(), &text)?;
        // a profile without lines is still the profile: the reason is
        // in each profile's source, not the boot's message
        match debug {
            Some(debug) => {
                let sym = functions::Symbolizer::new(&syms)?;
                cost = source_lines::attach(report, &sym, &text, debug).ok();
            }
            None => source_lines::unresolved(report, source_lines::NOT_ASKED),
        }
        Ok(())
    });
    if let Err(why) = attached {
        append(&mut rec.message, format!("profile: {why}"));
    }
    cost
}

/// 3 if any boot did not give a complete report, else 1 if any benchmark
/// failed, else 0.
pub fn exit_status(set: &RunSet) -> u8 {
    if set.runs.iter().any(|r| r.status.no_report()) {
        exit::NO_BOOT
    } else if set.runs.iter().any(|r| r.status != BootStatus::Ok) {
        exit::FAILED
    } else {
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_guest::options::RunOptions;
    use trig_schema::frame::encode;

    /// The header frame's JSON of a guest run at the defaults.
    fn header() -> String {
        let run = trig_guest::recorder::Recorder::new(
            trig_guest::recorder::Sink::Plain("/dev/null".into()),
            &RunOptions::default(),
            1,
            vec![],
            false,
        );
        let report = run.report.lock().unwrap();
        serde_json::to_string(&*report).unwrap()
    }

    #[test]
    fn malformed_json_is_named() {
        let frames = vec![Frame {
            kind: frame::REPORT.into(),
            payload: "{\"schema_version\":".into(),
        }];
        let e = report_from_frames(&frames).unwrap_err();
        assert!(e.contains("malformed report JSON"), "{e}");
        assert!(report_from_frames(&[]).unwrap_err().contains("no report"));
    }

    #[test]
    fn a_profile_that_cannot_be_made_keeps_the_results_and_says_why() {
        let header = header();
        let bench = r#"{"name":"trig-base","bench":"trig-base","group":"trigger","producers":1,"status":"ok","window":0,"samples":[{"t_s":0.3,"interval_s":0.05,"warmup":false,"bpf":0,"user":10,"mps":0.0002}]}"#;
        let mut text = [encode(frame::HEADER, &header), encode(frame::BENCH, bench)].concat();
        let (frames, _) = trig_schema::frame::parse(&text.concat());
        let (report, _) = report_from_frames(&frames).unwrap();
        let rec = || RunRecord {
            index: 1,
            status: BootStatus::Ok,
            message: None,
            console_log: String::new(),
            wall_s: 1.0,
            boot_s: None,
            pairing: None,
            report: Some(report.clone()),
            timeline: None,
            parts: Vec::new(),
        };
        let dir = std::env::temp_dir().join(format!("trig-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let counts = dir.join("counts");
        // no symbols from the guest
        let mut r = rec();
        add_profiles(&mut r, &frames, &counts, None);
        assert!(r.message.unwrap().contains("sent no kernel symbols"));
        assert_eq!(r.report.unwrap().results.len(), 1);
        // symbols, but the plugin's window was cut off
        let syms = trig_guest::kallsyms::parse("ffffffff81000000 T f\nffffffff82000000 B _end\n");
        text.extend(encode(
            frame::KALLSYMS,
            &serde_json::to_string(&syms).unwrap(),
        ));
        let (frames, _) = trig_schema::frame::parse(&text.concat());
        std::fs::write(&counts, "window 0\nffffffff81000000 50 5\n").unwrap();
        let mut r = rec();
        add_profiles(&mut r, &frames, &counts, None);
        assert!(r
            .message
            .unwrap()
            .contains("no complete profile window for trig-base"));
        // and whole: 10 events, 50 kernel instructions
        std::fs::write(&counts, "window 0\nffffffff81000000 50 5\nend 0\n").unwrap();
        let mut r = rec();
        add_profiles(&mut r, &frames, &counts, None);
        assert_eq!(r.message, None);
        let p = r.report.unwrap().results[0].profile.clone().unwrap();
        assert_eq!((p.kernel, p.functions[0].name.as_str()), (5.0, "f"));
        assert!((p.total - 5e6).abs() < 1.0, "{}", p.total);
        // lines not asked for (-p N's model alone) say so, where compare's
        // movers said "profiled before source lines were resolved"
        let why = p.source.and_then(|s| s.missing);
        assert_eq!(why.as_deref(), Some(source_lines::NOT_ASKED));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn partial_report_keeps_finished_benchmarks() {
        let header = header();
        let bench = r#"{"name":"trig-base","bench":"trig-base","group":"trigger","producers":1,"status":"ok","samples":[]}"#;
        let text = [encode(frame::HEADER, &header), encode(frame::BENCH, bench)]
            .concat()
            .concat();
        let (frames, _) = trig_schema::frame::parse(&text);
        let (r, complete) = report_from_frames(&frames).unwrap();
        assert!(!complete);
        assert_eq!(r.results.len(), 1);
        assert_eq!(r.outcome.status, RunEnd::Incomplete);
    }

    #[test]
    fn the_benchmark_running_when_the_guest_stopped_is_a_failed_row() {
        let bench = r#"{"name":"trig-base","bench":"trig-base","group":"trigger","producers":1,"status":"ok","samples":[]}"#;
        let mut console = console::Console::default();
        let lines = [
            vec!["trig-init 0.1.0 as PID 1\n".to_string()],
            encode(frame::HEADER, &header()),
            vec![frame::progress_line(1, 2, "trig-base")],
            encode(frame::BENCH, bench),
            vec![frame::progress_line(2, 2, "trig-kprobe")],
            vec!["[    9.0] Kernel panic - not syncing: Fatal exception\n".into()],
        ]
        .concat();
        for l in &lines {
            console.feed(l.trim_end());
        }
        console.close();
        let b = Boot {
            console,
            hung: false,
            interrupted: None,
            wall: 1.0,
            boot_s: None,
            timeline: Default::default(),
            qemu_stderr: String::new(),
            qemu_exit: None,
        };
        let rec = judge_boot(1, &b, Duration::from_secs(60));
        assert_eq!(rec.status, BootStatus::Crashed);
        let r = rec.report.expect("the partial report");
        let cut = r.results.iter().find(|x| x.name == "trig-kprobe");
        let cut = cut.expect("a row for the running benchmark");
        assert_eq!(cut.status, Status::Failed);
        assert!(
            cut.reason.as_deref().unwrap().contains("Fatal exception"),
            "{cut:?}"
        );
    }

    /// A guest cut short without a panic: how QEMU ended is in the
    /// message (a QEMU killed from elsewhere looked like a guest that
    /// stopped writing).
    #[test]
    fn a_boot_cut_short_says_how_qemu_ended() {
        use std::os::unix::process::ExitStatusExt;
        let boot = |qemu_exit, qemu_stderr: &str| {
            let mut console = console::Console::default();
            console.feed("trig-init 0.1.0 as PID 1");
            for l in encode(frame::HEADER, &header()) {
                console.feed(l.trim_end());
            }
            console.close();
            Boot {
                console,
                hung: false,
                interrupted: None,
                wall: 1.0,
                boot_s: None,
                timeline: Default::default(),
                qemu_stderr: qemu_stderr.into(),
                qemu_exit,
            }
        };
        let killed = judge_boot(
            1,
            &boot(Some(ExitStatusExt::from_raw(9)), ""),
            Duration::ZERO,
        );
        assert_eq!(killed.status, BootStatus::BadOutput);
        let m = killed.message.unwrap();
        assert!(m.contains("QEMU ended with signal: 9"), "{m}");
        let said = "qemu-system-x86_64: terminating on signal 15 from pid 7";
        let m = judge_boot(
            1,
            &boot(Some(ExitStatusExt::from_raw(0)), said),
            Duration::ZERO,
        )
        .message
        .unwrap();
        assert!(m.ends_with(&format!("QEMU said: {said}")), "{m}");
        // a power-off says nothing more
        let m = judge_boot(
            1,
            &boot(Some(ExitStatusExt::from_raw(0)), ""),
            Duration::ZERO,
        )
        .message
        .unwrap();
        assert!(!m.contains("QEMU"), "{m}");
    }
}
