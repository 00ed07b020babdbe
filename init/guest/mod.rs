//! Guest duties of PID 1: mounts, console, resource limits, watchdog and
//! power-off, around the same run as the plain command.

pub mod mounts;
pub mod power;

use crate::matrix;
use crate::options::RunOptions;
use crate::registry;
use crate::report::MountOutcome;
use crate::runner::{Run, Sink};
use nix::fcntl::{open, OFlag};
use nix::sys::resource::{setrlimit, Resource, RLIM_INFINITY};
use nix::sys::stat::Mode;
use std::time::Duration;

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
pub fn raise_memlock() -> Result<(), String> {
    setrlimit(Resource::RLIMIT_MEMLOCK, RLIM_INFINITY, RLIM_INFINITY)
        .map_err(|e| format!("raising RLIMIT_MEMLOCK: {e}"))
}

/// Selects, runs and emits. The watchdog ends the run after the options'
/// timeout whatever is happening, emitting what was measured; `on_timeout`
/// then ends the process (power-off as PID 1, an exit status otherwise).
pub fn execute(
    opts: &RunOptions,
    sink: Sink,
    mounts: Vec<MountOutcome>,
    pid1: bool,
    on_timeout: fn() -> !,
) -> Result<bool, String> {
    crate::bpf::capture_libbpf_log();
    let selection = registry::select(&opts.filter).and_then(|s| {
        opts.validate()?;
        Ok(s)
    });
    let points = selection
        .as_ref()
        .map(|s| matrix::points(s, opts))
        .unwrap_or_default();
    let run = Run::new(sink, opts, points.len(), mounts, pid1);
    if let Err(e) = selection {
        run.finish("error", Some(e.clone()));
        return Err(e);
    }
    let secs = opts.watchdog_secs(points.len());
    let watchdog = run.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(u64::from(secs)));
        let msg = format!("watchdog: the run did not finish within {secs} s");
        eprintln!("trig-init: {msg}");
        watchdog.finish("watchdog", Some(msg));
        on_timeout();
    });
    if let Err(e) = raise_memlock() {
        eprintln!("trig-init: {e}");
    }
    let body = std::panic::AssertUnwindSafe(|| run.run(&points, opts));
    match std::panic::catch_unwind(body) {
        Ok(()) => run.finish("complete", None),
        Err(panic) => run.finish(
            "panic",
            Some(format!(
                "trig-init panicked: {}",
                matrix::panic_message(&*panic)
            )),
        ),
    };
    Ok(run.all_ok())
}

/// PID 1: set up the guest, run what the kernel command line asks, power
/// off. Every path, a panic included, ends in power-off after a report.
pub fn pid1_main() -> ! {
    let mounts = mounts::mount_all(true);
    ensure_stdio();
    eprintln!("trig-init {} as PID 1", env!("CARGO_PKG_VERSION"));
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let outcome = std::panic::catch_unwind(|| {
        let (opts, bad) = match RunOptions::from_kernel_cmdline(&cmdline) {
            Ok(o) => (o, None),
            Err(e) => (RunOptions::default(), Some(e)),
        };
        if let Some(e) = bad {
            let run = Run::new(Sink::Console, &opts, 0, mounts.clone(), true);
            run.finish("error", Some(format!("kernel command line: {e}")));
            return;
        }
        let _ = execute(&opts, Sink::Console, mounts.clone(), true, power::power_off);
    });
    if let Err(panic) = outcome {
        let msg = matrix::panic_message(&*panic);
        let run = Run::new(Sink::Console, &RunOptions::default(), 0, mounts, true);
        run.finish("panic", Some(format!("trig-init panicked: {msg}")));
    }
    power::power_off()
}
