//! How the guests of one command boot under the accelerator at hand: the
//! meter, the CPUs, the run options as kernel arguments and the time a
//! boot may take.

use super::options::{MeterChoice, VmOptions};
use super::{usage, Error};
use crate::qemu::Accel;
use std::time::Duration;
use trig_guest::options::{RunOptions, ICOUNT_DURATION, ICOUNT_MIN_COUNTS, ICOUNT_WARMUP};
use trig_model::coherence::MAX_VCPUS;
use trig_schema::Meter;

/// Kernel arguments under icount. The kernel mixes its command line into
/// its RNG, so without them a boot with `trig.inject=` would draw other
/// user-space addresses and syscall stack offsets than one without; fixed
/// ones keep the command line's text out of the producers' layout (its
/// length is kept out by padding it, `qemu::ICOUNT_CMDLINE_LEN`).
const ICOUNT_KERNEL_ARGS: [&str; 2] = ["norandmaps", "randomize_kstack_offset=off"];

/// How the guests of one command boot under the accelerator at hand.
#[derive(Clone)]
pub(super) struct Launch {
    pub(super) meter: Meter,
    pub(super) cpus: usize,
    /// Several producers under icount: the plugin's coherence model runs
    /// (init/boot/profiling/coherence.rs), each producer pinned to a vCPU of its own.
    pub(super) coherence: bool,
    /// The run options as kernel arguments.
    pub(super) args: Vec<String>,
    pub(super) timeout: Duration,
}

/// Seconds a guest may go without progress (no line of trig-init's on
/// its console) before it is hung and QEMU killed, when not given. The
/// longest silent stretch of a healthy guest is its kernel's boot, or one
/// benchmark; there is no bound on the whole boot, so a guest that is
/// still writing is never cut (its own watchdog bounds its run). Under
/// icount a guest second took 5 to 10 wall seconds here (TCG, a loaded
/// 2-core host): allow 20 for each measured second of a benchmark, and
/// five minutes for the kernel's boot or a benchmark's loading and
/// attaching (four profiled boots side by side under a CPU hog took two
/// minutes to reach /init).
pub fn progress_timeout(meter: Meter, run: &RunOptions) -> u64 {
    let per_second = match meter {
        Meter::Time => 1.0,
        Meter::Icount => 20.0,
    };
    (per_second * (run.warmup + run.longest_window()) + 300.0).min(u32::MAX as f64) as u64
}

/// The icount meter's windows where the command line left them: its
/// sub-second warm-up and duration unless -w or -d was given, lengthened
/// by its count unless that or --min-counts was.
fn icount_windows(run: &mut RunOptions, timing_given: bool, min_counts_given: bool) {
    if timing_given {
        return;
    }
    (run.warmup, run.duration) = (ICOUNT_WARMUP, ICOUNT_DURATION);
    if !min_counts_given {
        run.min_counts = ICOUNT_MIN_COUNTS;
    }
}

/// Boots side by side when not given: under icount as many as the host
/// has cores (a guest's count does not depend on the host's load, and
/// each single-threaded guest keeps one core busy), under the time meter
/// one, since guests side by side slow each other's clocks.
pub fn default_jobs(meter: Meter) -> usize {
    match meter {
        Meter::Icount => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Meter::Time => 1,
    }
}

/// Launch CPUs when not given: under icount one (cheaper to emulate), or
/// one a producer for `-p N`; two otherwise.
pub fn default_cpus(meter: Meter, run: &RunOptions) -> usize {
    match meter {
        Meter::Icount => most_producers(run),
        Meter::Time => 2,
    }
}

fn most_producers(run: &RunOptions) -> usize {
    run.producers.iter().copied().max().unwrap_or(1)
}

/// Why these run options cannot be measured under `meter` on `cpus`
/// vCPUs: under icount each producer needs a vCPU of its own, since
/// the coherence model tells producers apart by vCPU.
pub fn meter_conflict(meter: Meter, run: &RunOptions, cpus: usize) -> Option<String> {
    let most = most_producers(run);
    if meter != Meter::Icount {
        return None;
    }
    if most > cpus {
        return Some(format!(
            "-p {most} under the icount meter needs a vCPU a producer: --cpus {cpus} is fewer; \
             leave --cpus out or give at least {most}"
        ));
    }
    model_bound(run, Some(cpus))
}

/// Why the coherence model (several producers under icount) cannot run
/// on `cpus` vCPUs (None: `--cpus` not given, a vCPU a producer): it
/// tells at most [`MAX_VCPUS`] apart, and a machine of more would fold a
/// vCPU into another and misstate every miss.
pub fn model_bound(run: &RunOptions, cpus: Option<usize>) -> Option<String> {
    let most = most_producers(run);
    let cpus = cpus.unwrap_or(most);
    (most > 1 && cpus > MAX_VCPUS).then(|| {
        let what = if most > MAX_VCPUS {
            format!("-p {most}")
        } else {
            format!("--cpus {cpus}")
        };
        format!(
            "{what}: the coherence model of -p N under the icount meter tells {MAX_VCPUS} vCPUs \
             apart, so at most {MAX_VCPUS} vCPUs and producers (or --meter time)"
        )
    })
}

/// How the guests boot under `accel`.
pub(super) fn launch(
    opts: &VmOptions,
    meter_choice: MeterChoice,
    accel: Accel,
) -> Result<Launch, Error> {
    let meter = meter_choice.resolve(accel);
    let cpus = opts.cpus.unwrap_or_else(|| default_cpus(meter, &opts.run));
    if let Some(why) = meter_conflict(meter, &opts.run, cpus) {
        return Err(usage(why));
    }
    if opts.profile && meter != Meter::Icount {
        return Err(usage(
            "--profile counts instructions: it needs the icount meter, not --meter time",
        ));
    }
    if opts.icount_shift > 0 && meter != Meter::Icount {
        return Err(usage(
            "--icount-shift sets the icount meter's ns an instruction: it needs the icount meter, \
             not --meter time",
        ));
    }
    let coherence = meter == Meter::Icount && most_producers(&opts.run) > 1;
    let mut run = opts.run.clone();
    run.icount_shift = opts.icount_shift;
    // the model needs the plugin's windows, and a producer a vCPU
    run.profile = opts.profile || coherence;
    run.affinity |= coherence;
    if meter == Meter::Icount {
        icount_windows(&mut run, opts.timing_given, opts.min_counts_given);
    }
    let mut args = run.to_kernel_args();
    if meter == Meter::Icount {
        args.extend(ICOUNT_KERNEL_ARGS.map(String::from));
    }
    let timeout = opts
        .timeout
        .unwrap_or_else(|| progress_timeout(meter, &run));
    Ok(Launch {
        meter,
        cpus,
        coherence,
        args,
        timeout: Duration::from_secs(timeout),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icount_windows_are_its_own_unless_given() {
        let given = |timing, min_counts: Option<u32>| {
            let mut run = RunOptions {
                warmup: 0.5,
                duration: 0.7,
                min_counts: min_counts.unwrap_or(0),
                ..RunOptions::default()
            };
            icount_windows(&mut run, timing, min_counts.is_some());
            (run.warmup, run.duration, run.min_counts)
        };
        let icount = (ICOUNT_WARMUP, ICOUNT_DURATION, ICOUNT_MIN_COUNTS);
        assert_eq!(given(false, None), icount);
        // -w or -d: those exactly, no lengthening unless asked
        assert_eq!(given(true, None), (0.5, 0.7, 0));
        assert_eq!(given(true, Some(500)), (0.5, 0.7, 500));
        // --min-counts alone, 0 included: the meter's windows, that count
        assert_eq!(given(false, Some(0)), (ICOUNT_WARMUP, ICOUNT_DURATION, 0));
        assert_eq!(
            given(false, Some(500)),
            (ICOUNT_WARMUP, ICOUNT_DURATION, 500)
        );
    }

    #[test]
    fn a_guest_gets_wall_time_for_its_longest_step_not_its_whole_run() {
        let quick = RunOptions {
            warmup: ICOUNT_WARMUP,
            duration: ICOUNT_DURATION,
            ..RunOptions::default()
        };
        // the kernel's boot took two minutes here under load
        let t = progress_timeout(Meter::Icount, &quick);
        assert!((300..400).contains(&t), "{t}");
        // six measured guest seconds a benchmark: ten wall seconds each
        let long = progress_timeout(Meter::Icount, &RunOptions::default());
        assert!(long > 6 * 10 + 300, "{long}");
        let timed = progress_timeout(Meter::Time, &RunOptions::default());
        assert!((306..310).contains(&timed), "{timed}");
    }
}
