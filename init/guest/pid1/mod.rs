//! Guest duties of PID 1: mounts, console, resource limits, watchdog and
//! power-off, around the same run as the plain command.

pub mod mounts;
pub mod power;

use crate::matrix;
use crate::options::RunOptions;
use crate::recorder::{Recorder, Sink};
use crate::registry::{self, Bench};
use crate::split;
use nix::fcntl::{open, OFlag};
use nix::libc;
use nix::sys::resource::{setrlimit, Resource, RLIM_INFINITY};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::stat::Mode;
use std::time::Duration;
use trig_schema::error::Error;
use trig_schema::exit;
use trig_schema::{MountOutcome, RunEnd};

/// Without /dev/console in the initramfs the kernel starts init with no
/// stdio; open the console that devtmpfs just provided.
fn ensure_stdio() {
    if nix::fcntl::fcntl(1, nix::fcntl::FcntlArg::F_GETFD).is_ok() {
        return;
    }
    if let Ok(fd) = open(
        "/dev/console",
        OFlag::O_RDWR | OFlag::O_NOCTTY,
        Mode::empty(),
    ) {
        for target in 0..3 {
            let _ = nix::unistd::dup2(fd, target);
        }
    }
}

/// BPF maps and programs were charged to RLIMIT_MEMLOCK before 5.11.
fn raise_memlock() -> Result<(), String> {
    setrlimit(Resource::RLIMIT_MEMLOCK, RLIM_INFINITY, RLIM_INFINITY)
        .map_err(|e| format!("raising RLIMIT_MEMLOCK: {e}"))
}

/// Selects, runs and emits. The watchdog ends the run after the options'
/// timeout whatever is happening, emitting what was measured; `on_timeout`
/// then ends the process (power-off as PID 1, an exit status otherwise).
/// `selection` is what to run: [`registry::select`] of the options'
/// filters, or the benchmarks named one by one (`bench`).
pub fn execute(
    opts: &RunOptions,
    selection: Result<Vec<&'static Bench>, Error>,
    sink: Sink,
    mounts: Vec<MountOutcome>,
    pid1: bool,
    on_timeout: fn() -> !,
) -> Result<Recorder, Error> {
    crate::bpf::capture_libbpf_log(opts.verbose);
    let selection = selection.and_then(|s| {
        opts.validate()?;
        Ok(s)
    });
    let points = selection
        .as_ref()
        .map(|s| registry::points(s, &opts.producers, &opts.cmp_str_lens))
        .unwrap_or_default();
    let run = Recorder::new(sink, opts, points.len(), mounts, pid1);
    if let Err(e) = selection {
        run.finish(RunEnd::Error, Some(e.to_string()));
        return Err(e);
    }
    if !pid1 {
        emit_on_signal(run.clone());
    }
    watch(
        run.clone(),
        opts.watchdog_secs(points.len()),
        opts.clock(),
        on_timeout,
    );
    if let Err(e) = raise_memlock() {
        // since 5.11 BPF memory is charged to the cgroup, not the limit
        if !registry::running_version().is_ok_and(|v| v >= (5, 11)) {
            trig_schema::stderrln!("trig-init: {e}");
        }
    }
    let body = std::panic::AssertUnwindSafe(|| run.run(&points, opts));
    match std::panic::catch_unwind(body) {
        Ok(()) => run.finish(RunEnd::Complete, None),
        Err(panic) => run.finish(
            RunEnd::Panic,
            Some(format!(
                "trig-init panicked: {}",
                matrix::panic_message(&*panic)
            )),
        ),
    };
    Ok(run)
}

/// Ends the run after `secs` (the clock's) plus the time late samples and
/// stops added (a sampler starved by long syscalls starts its schedule
/// again from them, as upstream's ticks do, and a stop waits for the
/// batches in flight: a slow run is not a hung one), emitting what was
/// measured; then `on_timeout`.
fn watch(run: Recorder, secs: u32, clock: crate::clock::Clock, on_timeout: fn() -> !) {
    std::thread::spawn(move || {
        let (mut wait, mut granted) = (clock.guest(f64::from(secs)), Duration::ZERO);
        loop {
            std::thread::sleep(wait);
            let now = crate::sampler::granted();
            if now <= granted {
                break;
            }
            (wait, granted) = (now - granted, now);
        }
        let added = match granted.is_zero() {
            true => String::new(),
            false => format!(
                " and the {:.1} s its late samples and stops added",
                granted.as_secs_f64()
            ),
        };
        let msg = format!("watchdog: the run did not finish within {secs} s{added}");
        trig_schema::stderrln!("trig-init: {msg}");
        run.finish(RunEnd::Watchdog, Some(msg));
        on_timeout();
    });
}

/// A plain run told to stop (SIGINT, SIGTERM, SIGHUP) emits what it
/// measured so far, then exits 128 + the signal, as a shell reports it.
fn emit_on_signal(run: Recorder) {
    let mut set = SigSet::empty();
    // one that the caller ignores (nohup, a background job's SIGINT) stays
    // ignored: waiting for it would take it
    for sig in exit::SIGNALS.into_iter().filter(|&s| !ignored(s)) {
        set.add(sig);
    }
    // blocked here and so in every thread started later: only the waiter
    // below takes them
    if set.thread_block().is_err() {
        return;
    }
    std::thread::spawn(move || {
        if let Ok(sig) = set.wait() {
            run.finish(RunEnd::Interrupted, Some(format!("interrupted by {sig}")));
            std::process::exit(i32::from(exit::exit_status(sig)));
        }
    });
}

/// Whether `sig` is ignored, as inherited.
fn ignored(sig: Signal) -> bool {
    let mut now = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `now`
    let read = unsafe { libc::sigaction(sig as libc::c_int, std::ptr::null(), now.as_mut_ptr()) };
    // SAFETY: zeroed, then filled by a successful sigaction
    read == 0 && unsafe { now.assume_init() }.sa_sigaction == libc::SIG_IGN
}

/// Whether a PID 1 is the appliance: started by the kernel, which passes
/// init no option and no subcommand name, only stray words of its command
/// line. A PID 1 of a namespace asked for `list` runs `list`.
/// `args` are those after the program's name.
pub fn is_appliance(args: &[String], subcommands: &[&str]) -> bool {
    args.iter()
        .all(|a| !a.starts_with('-') && !subcommands.contains(&a.as_str()))
}

/// Undocumented: the program that an initramfs built with extra files
/// (`trig_boot::initramfs::EXTRA_ROOT_ENV`, scripts/bench/upstream-bench.sh) has PID 1
/// run, on the console, after the mounts and before the matrix. A normal
/// initramfs has none.
pub const EXTRA_RUN: &str = "/.trig-extra/run";

fn run_extra() {
    if !std::path::Path::new(EXTRA_RUN).exists() {
        return;
    }
    match std::process::Command::new(EXTRA_RUN).status() {
        Ok(st) => trig_schema::stderrln!("trig-init: {EXTRA_RUN}: {st}"),
        Err(e) => trig_schema::stderrln!("trig-init: {EXTRA_RUN}: {e}"),
    }
}

/// PID 1: set up the guest, run what the kernel command line asks, power
/// off. Every path, a panic included, ends in power-off after a report.
pub fn pid1_main() -> ! {
    let mounts = mounts::mount_all(true);
    ensure_stdio();
    trig_schema::stderrln!("trig-init {} as PID 1", env!("CARGO_PKG_VERSION"));
    run_extra();
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let outcome = std::panic::catch_unwind(|| {
        let (opts, bad) = match RunOptions::from_kernel_cmdline(&cmdline) {
            Ok(o) => (o, None),
            Err(e) => (RunOptions::default(), Some(e)),
        };
        if let Some(e) = bad {
            let run = Recorder::new(Sink::Console, &opts, 0, mounts.clone(), true);
            run.finish(RunEnd::Error, Some(format!("kernel command line: {e}")));
            return;
        }
        let selection =
            registry::select(&opts.filter).map(|sel| split::part_of(sel, &opts, opts.part));
        let _ = execute(
            &opts,
            selection,
            Sink::Console,
            mounts.clone(),
            true,
            power::power_off,
        );
    });
    if let Err(panic) = outcome {
        let msg = matrix::panic_message(&*panic);
        let run = Recorder::new(Sink::Console, &RunOptions::default(), 0, mounts, true);
        run.finish(RunEnd::Panic, Some(format!("trig-init panicked: {msg}")));
    }
    power::power_off()
}

#[cfg(test)]
mod tests {
    use super::is_appliance;

    #[test]
    fn pid_1_is_the_appliance_only_without_a_subcommand() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let subs = ["run", "list", "vm"];
        assert!(is_appliance(&args(&[]), &subs));
        // words of the kernel command line that it does not know
        assert!(is_appliance(&args(&["splash"]), &subs));
        assert!(!is_appliance(&args(&["list"]), &subs));
        assert!(!is_appliance(&args(&["--help"]), &subs));
    }
}
