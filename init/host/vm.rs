//! `trig-init vm`: boot a kernel N times with trig-init as /init, collect
//! each boot's report, keep everything measured whatever goes wrong.

use super::console::{self, Console};
use super::exit;
use super::files::{self, TempFile};
use super::interrupt;
use super::kernel::{self, Arch, Kernel};
use super::qemu::{self, Accel};
use super::{initramfs, table};
use crate::options::{RunOptions, ICOUNT_DURATION, ICOUNT_WARMUP};
use crate::report::frame::Frame;
use crate::report::{
    BenchResult, KernelInfo, Meter, Outcome, Pairing, Report, RunRecord, RunSet, VmInfo,
    SCHEMA_VERSION,
};
use crate::{matrix, registry};
use nix::sys::signal::Signal;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccelChoice {
    Auto,
    Kvm,
    Tcg,
}

impl AccelChoice {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(AccelChoice::Auto),
            "kvm" => Ok(AccelChoice::Kvm),
            "tcg" => Ok(AccelChoice::Tcg),
            _ => Err(format!("--accel must be auto, kvm or tcg, not '{s}'")),
        }
    }
}

/// `--meter`: what a rate is per. `auto` is time under KVM and the
/// instruction count under TCG, whose wall-clock rates vary from boot to
/// boot by more than the changes worth finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeterChoice {
    Auto,
    Time,
    Icount,
}

impl MeterChoice {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(MeterChoice::Auto),
            "time" => Ok(MeterChoice::Time),
            "icount" => Ok(MeterChoice::Icount),
            _ => Err(format!("--meter must be auto, time or icount, not '{s}'")),
        }
    }

    /// The meter of a guest run under `accel`.
    pub fn resolve(self, accel: Accel) -> Meter {
        match (self, accel) {
            (MeterChoice::Time, _) | (MeterChoice::Auto, Accel::Kvm) => Meter::Time,
            (MeterChoice::Icount, _) | (MeterChoice::Auto, Accel::Tcg) => Meter::Icount,
        }
    }
}

/// Kernel arguments under icount. The kernel mixes its command line into
/// its RNG, so without them a boot with `trig.inject=` would draw other
/// user-space addresses and syscall stack offsets than one without; fixed
/// ones keep the command line's text out of the producers' layout (its
/// length is kept out by padding it, `qemu::ICOUNT_CMDLINE_LEN`).
const ICOUNT_KERNEL_ARGS: [&str; 2] = ["norandmaps", "randomize_kstack_offset=off"];

/// How the guests of one command boot under the accelerator at hand.
struct Guest {
    meter: Meter,
    cpus: usize,
    /// The run options as kernel arguments.
    args: Vec<String>,
    timeout: Duration,
}

/// Seconds a boot may take before QEMU is killed, when not given: the
/// guest's own watchdog plus two minutes under the time meter. Under icount
/// the guest's clock counts instructions, and a guest second took 5 to 10
/// wall seconds here (TCG, a loaded 2-core host): allow 20 for each
/// measured guest second, and 10 wall seconds a benchmark for loading and
/// attaching, plus five minutes of boot.
pub fn boot_timeout(meter: Meter, run: &RunOptions, points: usize) -> u64 {
    match meter {
        Meter::Time => u64::from(run.watchdog_secs(points)) + 120,
        Meter::Icount => {
            let measured = (run.warmup + run.duration) * points as f64;
            (20.0 * measured + 10.0 * points as f64 + 300.0).min(u32::MAX as f64) as u64
        }
    }
}

/// Guest CPUs when not given: one under icount (cheaper to emulate, and
/// nothing to scale there: vCPUs take turns), two otherwise.
pub fn default_cpus(meter: Meter) -> usize {
    match meter {
        Meter::Icount => 1,
        Meter::Time => 2,
    }
}

/// Why these run options cannot be measured under `meter`.
pub fn meter_conflict(meter: Meter, run: &RunOptions) -> Option<String> {
    let most = run.producers.iter().copied().max().unwrap_or(1);
    (meter == Meter::Icount && most > 1).then(|| {
        format!(
            "-p {most}: under the icount meter vCPUs take turns on one host thread, so \
             producer scaling means nothing there; use --meter time (KVM, or TCG's wall clock) \
             for -p above 1"
        )
    })
}

pub struct VmOptions {
    /// One or more kernels; several are booted interleaved by `order`.
    pub kernels: Vec<String>,
    pub order: Order,
    /// The kernel's source commit, recorded for history and bisect.
    pub commit: Option<String>,
    pub arch: Arch,
    /// None: [`default_cpus`] of the meter.
    pub cpus: Option<usize>,
    pub memory: String,
    pub runs: usize,
    pub out: PathBuf,
    pub accel: AccelChoice,
    pub meter: MeterChoice,
    /// Per boot; None derives it from the run options.
    pub timeout: Option<u64>,
    pub init: Option<PathBuf>,
    pub append: String,
    /// Leave KASLR on (nokaslr is the default).
    pub kaslr: bool,
    /// More command line for the i-th kernel only (compare boot options,
    /// or inject a slowdown into one side: `trig.inject=...`).
    pub kernel_appends: Vec<String>,
    pub quiet: bool,
    /// Also print the results document here ("-" for stdout).
    pub json: Option<String>,
    pub run: RunOptions,
    /// Whether -w or -d was given; if not, the icount meter runs its own
    /// sub-second defaults.
    pub timing_given: bool,
}

/// How long a KVM guest may take to reach /init before KVM is judged
/// unusable (a working one takes about a second).
const KVM_PROBE: Duration = Duration::from_secs(30);

/// How long the host waits after a panic line for the rest of the oops
/// before it kills QEMU (the guest may have been booted with `panic=0`).
const PANIC_GRACE: Duration = Duration::from_secs(5);

/// QEMU's own messages kept per boot.
const KEEP_STDERR: u64 = 1 << 20;

struct Boot {
    console: Console,
    hung: bool,
    /// The signal that ended this boot early.
    interrupted: Option<Signal>,
    wall: f64,
    boot_s: Option<f64>,
    qemu_stderr: String,
}

/// Runs one guest until it powers off, crashes or runs past `timeout`.
/// `give_up` ends a boot that has not reached /init by then.
fn boot(
    arch: Arch,
    args: &[String],
    timeout: Duration,
    give_up: Option<Duration>,
    mut on_progress: impl FnMut(usize, usize, &str, f64),
) -> Result<Boot, String> {
    let bin = qemu::binary(arch);
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    interrupt::die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {bin}: {e} (is QEMU installed?)"))?;
    let start = Instant::now();
    // bounded: a guest that floods the console waits for the host
    let (tx, rx) = mpsc::sync_channel(4096);
    let stdout = child.stdout.take().expect("piped");
    std::thread::spawn(move || {
        console::read_lines(stdout, console::MAX_LINE, |line| tx.send(line).is_ok())
    });
    let mut stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stderr).take(KEEP_STDERR).read_to_end(&mut kept);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        String::from_utf8_lossy(&kept).into_owned()
    });
    let mut console = Console::default();
    let mut boot_s = None;
    let mut hung = false;
    let mut interrupted = None;
    let mut panicked_at = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                if let Some((i, n, name)) = console.feed(&line) {
                    let t = start.elapsed().as_secs_f64();
                    boot_s.get_or_insert(t);
                    on_progress(i, n, &name, t);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if console.panicked {
            panicked_at.get_or_insert_with(Instant::now);
        }
        interrupted = interrupt::caught();
        let late = start.elapsed() > timeout
            || give_up.is_some_and(|g| !console.reached_init && start.elapsed() > g);
        let dead = panicked_at.is_some_and(|t: Instant| t.elapsed() > PANIC_GRACE);
        if late || dead || interrupted.is_some() {
            hung = late && !dead;
            let _ = child.kill();
            // drain what was printed before the kill
            while let Ok(line) = rx.recv_timeout(Duration::from_millis(500)) {
                console.feed(&line);
            }
            break;
        }
    }
    // how QEMU exited says nothing the console has not: power-off,
    // reboot and a kill all end it
    child
        .wait()
        .map_err(|e| format!("waiting for {bin}: {e}"))?;
    console.close();
    Ok(Boot {
        console,
        hung,
        interrupted,
        wall: start.elapsed().as_secs_f64(),
        boot_s,
        qemu_stderr: err_reader.join().unwrap_or_default(),
    })
}

/// The report of a boot: the final frame, or else one assembled from the
/// header and the per-benchmark frames that did arrive.
pub fn report_from_frames(frames: &[Frame]) -> Result<(Report, bool), String> {
    if let Some(f) = frames.iter().rev().find(|f| f.kind == "report") {
        let r: Report = serde_json::from_str(&f.payload)
            .map_err(|e| format!("malformed report JSON from the guest: {e}"))?;
        return Ok((r, true));
    }
    let header = frames
        .iter()
        .find(|f| f.kind == "header")
        .ok_or("no report on the console")?;
    let mut r: Report = serde_json::from_str(&header.payload)
        .map_err(|e| format!("malformed header JSON from the guest: {e}"))?;
    for f in frames.iter().filter(|f| f.kind == "bench") {
        let b: BenchResult = serde_json::from_str(&f.payload)
            .map_err(|e| format!("malformed benchmark JSON from the guest: {e}"))?;
        r.results.push(b);
    }
    matrix::add_overheads(&mut r.results);
    r.outcome = Outcome {
        status: "incomplete".into(),
        message: Some("the guest stopped before its final report".into()),
    };
    Ok((r, false))
}

/// Judges a finished boot.
fn record(index: usize, b: &Boot, timeout: Duration) -> RunRecord {
    let parsed = report_from_frames(&b.console.frames);
    let frame_errors: Vec<String> = b.console.errors.iter().map(|e| e.to_string()).collect();
    let at = b
        .console
        .progress
        .as_ref()
        .map(|(i, n, name)| format!(" during {name} ({i}/{n})"))
        .unwrap_or_default();
    let (status, mut message) = if !b.console.crash.is_empty() {
        (
            "crashed",
            Some(format!("kernel crashed: {}", b.console.crash.join(" / "))),
        )
    } else if let Some(sig) = b.interrupted {
        (
            "interrupted",
            Some(format!("trig-init got {sig}{at}; QEMU killed")),
        )
    } else if b.hung {
        (
            "hung",
            Some(format!(
                "guest did not finish within {} s{at}; QEMU killed",
                timeout.as_secs()
            )),
        )
    } else if !b.console.reached_init {
        let tail: Vec<&str> = b.console.log.lines().rev().take(5).collect();
        let why = if b.qemu_stderr.trim().is_empty() {
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        } else {
            b.qemu_stderr.trim().to_string()
        };
        (
            "no-boot",
            Some(format!("the guest never reached /init: {why}")),
        )
    } else {
        match &parsed {
            Ok((r, true)) if r.all_ok() => ("ok", None),
            Ok((r, true)) => (
                "failed",
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
                "bad-output",
                Some(format!(
                    "no complete, valid report on the console: {}",
                    frame_errors
                        .first()
                        .cloned()
                        .or_else(|| parsed.as_ref().err().cloned())
                        .unwrap_or_default()
                )),
            ),
        }
    };
    if b.console.dropped > 0 {
        let note = format!(
            "console output over {} MiB: {} bytes not kept",
            console::KEEP >> 20,
            b.console.dropped
        );
        message = Some(message.map_or(note.clone(), |m| format!("{m}; {note}")));
    }
    RunRecord {
        index,
        status: status.into(),
        message,
        // set when the log is written beside the results
        console_log: String::new(),
        wall_s: b.wall,
        boot_s: b.boot_s,
        pairing: None,
        report: parsed.ok().map(|(r, _)| r),
    }
}

/// A UTC timestamp for file names, 20261130T012345Z.
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // civil-from-days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn progress_printer(quiet: bool, label: &str) -> impl FnMut(usize, usize, &str, f64) + '_ {
    let tty = std::io::stderr().is_terminal();
    move |i, n, name, t| {
        if quiet {
            return;
        }
        let line = format!("[boot {label}] [{i}/{n}] {name} ({t:.1} s)");
        if tty {
            eprint!("\r\x1b[K{line}");
        } else {
            eprintln!("{line}");
        }
        let _ = std::io::stderr().flush();
    }
}

/// In which order the boots of several kernels go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A B A B ...: each round boots every kernel once, in the given order.
    Alternate,
    /// Each round boots every kernel once, in a seeded random order.
    Random(u64),
}

impl Order {
    pub fn parse(s: &str, seed: u64) -> Result<Self, String> {
        match s {
            "alternate" => Ok(Order::Alternate),
            "random" => Ok(Order::Random(seed)),
            _ => Err(format!("--order must be alternate or random, not '{s}'")),
        }
    }

    /// The kernel index of each boot, round by round: (round, kernel).
    /// Every round holds each kernel once, so rounds pair the boots.
    pub fn schedule(self, kernels: usize, rounds: usize) -> Vec<(usize, usize)> {
        let mut rng = match self {
            Order::Random(seed) => Some(fastrand::Rng::with_seed(seed)),
            Order::Alternate => None,
        };
        (1..=rounds)
            .flat_map(|round| {
                let mut ks: Vec<usize> = (0..kernels).collect();
                if let Some(rng) = rng.as_mut() {
                    rng.shuffle(&mut ks);
                }
                ks.into_iter().map(move |k| (round, k))
            })
            .collect()
    }
}

/// One kernel of the command and the results file it accumulates.
struct Target {
    kernel: Kernel,
    set: RunSet,
    /// The results file this command claimed, and the name it was
    /// claimed for (RELEASE-STEM-TAG).
    path: Option<(PathBuf, String)>,
}

impl Target {
    /// Adds a boot, writes its console log and rewrites the results file,
    /// so that a later failure loses nothing; `tag` keeps several kernels
    /// of one command apart.
    fn add(
        &mut self,
        out: &Path,
        stem: &str,
        tag: &str,
        mut rec: RunRecord,
        log: &str,
    ) -> Result<(), String> {
        if let Some(r) = &rec.report {
            self.set.kernel.release.clone_from(&r.system.release);
        }
        let name = format!("{}-{stem}{tag}", self.set.kernel.release.replace('/', "_"));
        if self.path.as_ref().map(|(_, n)| n) != Some(&name) {
            // another run into this directory in the same second gets
            // NAME-2.json, never this one
            let path = files::claim(|n| match n {
                1 => out.join(format!("{name}.json")),
                n => out.join(format!("{name}-{n}.json")),
            })
            .map_err(|e| format!("{}: {e}", out.display()))?;
            if let Some((old, _)) = self.path.replace((path, name)) {
                let _ = std::fs::remove_file(old);
            }
        }
        let path = &self.path.as_ref().expect("claimed above").0;
        let log_path = path.with_extension(format!("boot{}.log", rec.index));
        match files::replace(&log_path, log.as_bytes()) {
            Ok(()) => rec.console_log = log_path.display().to_string(),
            Err(e) => {
                let why = format!("console log {} not written: {e}", log_path.display());
                eprintln!("trig-init: warning: {why}");
                rec.message = Some(rec.message.map_or(why.clone(), |m| format!("{m}; {why}")));
            }
        }
        self.set.runs.push(rec);
        let json = serde_json::to_string_pretty(&self.set).expect("results serialize");
        files::replace(path, json.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// What a finished `vm` command leaves: per kernel, its results and file.
pub struct Done {
    pub status: u8,
    pub sets: Vec<RunSet>,
    pub files: Vec<PathBuf>,
}

/// Runs the command. With several kernels the boots interleave by
/// `order`, and each kernel gets its own results file.
pub fn run(opts: &VmOptions) -> Result<Done, (u8, String)> {
    let usage = |e: String| (exit::USAGE, e);
    check(opts).map_err(usage)?;
    opts.run.validate().map_err(usage)?;
    let selected = registry::select(&opts.run.filter).map_err(usage)?;
    let points = matrix::points(&selected, &opts.run).len();
    if opts.kernels.is_empty() {
        return Err(usage("no kernel given".into()));
    }
    let kernels = opts
        .kernels
        .iter()
        .map(|k| kernel::resolve(k, opts.arch))
        .collect::<Result<Vec<Kernel>, String>>()
        .map_err(usage)?;
    let init_path = match &opts.init {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| (exit::INFRA, e.to_string()))?,
    };
    let init = std::fs::read(&init_path)
        .map_err(|e| usage(format!("init binary {}: {e}", init_path.display())))?;
    if !initramfs::is_static_elf(&init) {
        return Err(usage(format!(
            "init binary {} is not a static executable; build the static one (scripts/build.sh) or pass --init",
            init_path.display()
        )));
    }
    let stem = timestamp();
    if opts.kernel_appends.len() > kernels.len() {
        return Err(usage(format!(
            "{} --kernel-append for {} kernels",
            opts.kernel_appends.len(),
            kernels.len()
        )));
    }
    if opts.meter == MeterChoice::Icount && opts.accel == AccelChoice::Kvm {
        return Err(usage(
            "--meter icount counts instructions under TCG; it cannot run with --accel kvm".into(),
        ));
    }
    let mut accel = match opts.accel {
        AccelChoice::Tcg => Accel::Tcg,
        AccelChoice::Kvm => Accel::Kvm,
        AccelChoice::Auto if opts.meter == MeterChoice::Icount => Accel::Tcg,
        AccelChoice::Auto if qemu::kvm_present(opts.arch) => Accel::Kvm,
        AccelChoice::Auto => {
            if !opts.quiet {
                eprintln!(
                    "trig-init: KVM not available for {}; using TCG",
                    opts.arch.as_str()
                );
            }
            Accel::Tcg
        }
    };
    let vm_of = |accel: Accel| -> Result<Guest, (u8, String)> {
        let meter = opts.meter.resolve(accel);
        if let Some(why) = meter_conflict(meter, &opts.run) {
            return Err(usage(why));
        }
        let mut run = opts.run.clone();
        if meter == Meter::Icount && !opts.timing_given {
            (run.warmup, run.duration) = (ICOUNT_WARMUP, ICOUNT_DURATION);
        }
        let cpus = opts.cpus.unwrap_or_else(|| default_cpus(meter));
        let mut args = run.to_kernel_args();
        if meter == Meter::Icount {
            args.extend(ICOUNT_KERNEL_ARGS.map(String::from));
        }
        let timeout = opts
            .timeout
            .unwrap_or_else(|| boot_timeout(meter, &run, points));
        Ok(Guest {
            meter,
            cpus,
            args,
            timeout: Duration::from_secs(timeout),
        })
    };
    let Guest {
        mut meter,
        mut cpus,
        args: mut run_args,
        mut timeout,
    } = vm_of(accel)?;
    // the i-th kernel's command line; rebuilt at every boot, since a KVM
    // that fails its first boot leaves TCG, and maybe other run defaults
    let cmdline_of = |i: usize, run_args: &[String]| {
        let extra = opts.kernel_appends.get(i).map_or("", String::as_str);
        qemu::kernel_cmdline(
            opts.arch,
            run_args,
            opts.kaslr,
            format!("{} {extra}", opts.append).trim(),
        )
    };
    let mut targets: Vec<Target> = kernels
        .into_iter()
        .enumerate()
        .map(|(i, kernel)| {
            let cmdline = cmdline_of(i, &run_args);
            Target {
                set: RunSet {
                    schema_version: SCHEMA_VERSION,
                    created: Some(stem.clone()),
                    kernel: KernelInfo {
                        spec: kernel.spec.clone(),
                        path: kernel.path.display().to_string(),
                        package: kernel.package.clone(),
                        release: "unknown".into(),
                        commit: opts.commit.clone(),
                    },
                    vm: VmInfo {
                        arch: opts.arch.as_str().into(),
                        accel: accel.as_str().into(),
                        meter,
                        cpus,
                        memory: opts.memory.clone(),
                        append: cmdline,
                    },
                    runs: Vec::new(),
                },
                kernel,
                path: None,
            }
        })
        .collect();
    for t in &targets {
        RunOptions::from_kernel_cmdline(&t.set.vm.append)
            .map_err(|e| usage(format!("kernel {}: command line: {e}", t.kernel.spec)))?;
    }
    // undocumented: extra files for scripts/upstream-bench.sh
    let extra = std::env::var_os(initramfs::EXTRA_ROOT_ENV).map(PathBuf::from);
    let cpio = initramfs::build_with(&init, extra.as_deref()).map_err(|e| {
        let root = extra.as_ref().map(|p| format!(" ({})", p.display()));
        (
            exit::INFRA,
            format!("initramfs{}: {e}", root.unwrap_or_default()),
        )
    })?;
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| (exit::INFRA, format!("{}: {e}", opts.out.display())))?;
    // unique to this command: runs in the same second must not pair
    let session = format!("{stem}-{}", std::process::id());
    let initrd = opts.out.join(format!(".initramfs-{session}.cpio"));
    let initrd = TempFile::create(initrd.clone(), &cpio)
        .map_err(|e| (exit::INFRA, format!("{}: {e}", initrd.display())))?;
    interrupt::install().map_err(|e| (exit::INFRA, e))?;
    let mut interrupted = None;
    let many = targets.len() > 1;
    let schedule = opts.order.schedule(targets.len(), opts.runs);
    for (n, &(round, k)) in schedule.iter().enumerate() {
        if interrupted.is_some() {
            break;
        }
        let target = &mut targets[k];
        let index = target.set.runs.len() + 1;
        let label = if many {
            format!("{}/{} k{}", n + 1, schedule.len(), k + 1)
        } else {
            format!("{index}/{}", opts.runs)
        };
        let b = loop {
            target.set.vm.append = cmdline_of(k, &run_args);
            let vm = qemu::Vm {
                kernel: &target.kernel,
                initrd: initrd.path(),
                cpus,
                memory: &opts.memory,
                cmdline: &target.set.vm.append,
                meter,
            };
            let give_up =
                (opts.accel == AccelChoice::Auto && accel == Accel::Kvm).then_some(KVM_PROBE);
            let b = boot(
                opts.arch,
                &qemu::args(&vm, accel),
                timeout,
                give_up,
                progress_printer(opts.quiet, &label),
            )
            .map_err(|e| (exit::INFRA, e))?;
            if give_up.is_some() && !b.console.reached_init && b.interrupted.is_none() {
                let why = b
                    .qemu_stderr
                    .lines()
                    .last()
                    .unwrap_or("the guest never reached /init")
                    .to_string();
                accel = Accel::Tcg;
                Guest {
                    meter,
                    cpus,
                    args: run_args,
                    timeout,
                } = vm_of(accel)?;
                eprintln!(
                    "trig-init: KVM is present but unusable ({why}); falling back to TCG, meter {}",
                    meter.as_str()
                );
                continue;
            }
            break b;
        };
        if !opts.quiet && std::io::stderr().is_terminal() {
            eprintln!();
        }
        interrupted = b.interrupted;
        let mut rec = record(index, &b, timeout);
        rec.pairing = Some(Pairing {
            session: session.clone(),
            round,
        });
        // quiet drops progress, never the reason of a failure
        if !opts.quiet || rec.status != "ok" {
            eprintln!(
                "trig-init: boot {label} ({}): {} in {:.1} s{}",
                target.kernel.spec,
                rec.status,
                rec.wall_s,
                rec.message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            );
        }
        target.set.vm.accel = accel.as_str().into();
        (target.set.vm.meter, target.set.vm.cpus) = (meter, cpus);
        let tag = if many {
            format!("-k{}", k + 1)
        } else {
            String::new()
        };
        target
            .add(&opts.out, &stem, &tag, rec, &b.console.log)
            .map_err(|e| (exit::INFRA, e))?;
    }
    drop(initrd);
    let interrupted = interrupted.or_else(interrupt::caught);
    let sets: Vec<RunSet> = targets.iter().map(|t| t.set.clone()).collect();
    if !opts.quiet {
        for t in &targets {
            eprint!("{}", table::summary(&t.set));
            if let Some((p, _)) = &t.path {
                eprintln!("results: {}", p.display());
            }
        }
    }
    if let Some(dest) = &opts.json {
        // one kernel: its results document; several: an array of them
        let json = if many {
            serde_json::to_string_pretty(&sets)
        } else {
            serde_json::to_string_pretty(&sets[0])
        }
        .expect("results serialize")
            + "\n";
        if dest == "-" {
            print!("{json}");
        } else {
            std::fs::write(dest, json).map_err(|e| (exit::INFRA, format!("{dest}: {e}")))?;
        }
    }
    if let Some(sig) = interrupted {
        eprintln!(
            "trig-init: interrupted by {sig}; the boots that finished are in the results file"
        );
    }
    Ok(Done {
        status: interrupted.map_or_else(
            || sets.iter().map(exit_status).max().unwrap_or(exit::OK),
            interrupt::exit_status,
        ),
        files: targets
            .iter()
            .filter_map(|t| t.path.as_ref().map(|(p, _)| p.clone()))
            .collect(),
        sets,
    })
}

/// Usage errors among the host's own options, found before anything is
/// built or booted.
fn check(opts: &VmOptions) -> Result<(), String> {
    if opts.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    if opts.cpus == Some(0) {
        return Err("--cpus must be at least 1".into());
    }
    if opts.timeout == Some(0) {
        return Err("--timeout must be at least 1 s".into());
    }
    if !valid_memory(&opts.memory) {
        return Err(format!(
            "--memory '{}' is not a size such as 512M, 1G or 1.5G",
            opts.memory
        ));
    }
    // run options given here would override those after -- unseen
    if let Some(w) = opts
        .append
        .split_whitespace()
        .find(|w| w.starts_with("trig."))
    {
        return Err(format!(
            "--append {w}: run options go after -- (or in --kernel-append, for one kernel)"
        ));
    }
    Ok(())
}

/// QEMU's `-m`: a positive number, fractions allowed, in MiB or with a
/// K, M, G or T suffix.
fn valid_memory(m: &str) -> bool {
    let digits = m.trim_end_matches(['k', 'K', 'm', 'M', 'g', 'G', 't', 'T']);
    m.len() - digits.len() <= 1
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.parse::<f64>().is_ok_and(|v| v > 0.0)
}

/// 3 if any boot did not give a complete report, else 1 if any benchmark
/// failed, else 0.
pub fn exit_status(set: &RunSet) -> u8 {
    if set.runs.iter().any(|r| {
        matches!(
            r.status.as_str(),
            "crashed" | "hung" | "no-boot" | "bad-output"
        )
    }) {
        exit::NO_BOOT
    } else if set.runs.iter().any(|r| r.status != "ok") {
        exit::BENCH_FAILED
    } else {
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::frame::encode;

    #[test]
    fn every_round_boots_every_kernel_once() {
        assert_eq!(
            Order::Alternate.schedule(2, 3),
            vec![(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)]
        );
        let s = Order::Random(7).schedule(3, 20);
        assert_eq!(s, Order::Random(7).schedule(3, 20), "seeded");
        for round in 1..=20 {
            let mut ks: Vec<usize> = s
                .iter()
                .filter(|(r, _)| *r == round)
                .map(|(_, k)| *k)
                .collect();
            ks.sort();
            assert_eq!(ks, vec![0, 1, 2]);
        }
        // not always A first
        assert!(s.chunks(3).any(|c| c[0].1 != 0));
        assert!(Order::parse("sideways", 1).is_err());
    }

    #[test]
    fn icount_boots_get_wall_time_for_their_guest_seconds() {
        let quick = RunOptions {
            warmup: ICOUNT_WARMUP,
            duration: ICOUNT_DURATION,
            ..RunOptions::default()
        };
        // the whole matrix at the defaults took 2 to 4 minutes here
        let t = boot_timeout(Meter::Icount, &quick, 59);
        assert!((900..3600).contains(&t), "{t}");
        // five measured guest seconds a benchmark: about ten wall minutes
        // a benchmark at 10 wall seconds a guest second
        let long = boot_timeout(Meter::Icount, &RunOptions::default(), 59);
        assert!(long > 59 * 6 * 10, "{long}");
        let timed = boot_timeout(Meter::Time, &RunOptions::default(), 59);
        assert_eq!(
            timed,
            u64::from(RunOptions::default().watchdog_secs(59)) + 120
        );
    }

    #[test]
    fn timestamp_shape() {
        let t = timestamp();
        assert_eq!(t.len(), 16);
        assert!(t.starts_with("20") && t.ends_with('Z') && t.as_bytes()[8] == b'T');
    }

    #[test]
    fn malformed_json_is_named() {
        let frames = vec![Frame {
            kind: "report".into(),
            payload: "{\"schema_version\":".into(),
        }];
        let e = report_from_frames(&frames).unwrap_err();
        assert!(e.contains("malformed report JSON"), "{e}");
        assert!(report_from_frames(&[]).unwrap_err().contains("no report"));
    }

    #[test]
    fn partial_report_keeps_finished_benchmarks() {
        let run = crate::runner::Run::new(
            crate::runner::Sink::Plain("/dev/null".into()),
            &RunOptions::default(),
            1,
            vec![],
            false,
        );
        let header = serde_json::to_string(&*run.report.lock().unwrap()).unwrap();
        let bench = r#"{"name":"trig-base","bench":"trig-base","group":"trigger","producers":1,"status":"ok","samples":[]}"#;
        let text = [encode("header", &header), encode("bench", bench)]
            .concat()
            .concat();
        let (frames, _) = crate::report::frame::parse(&text);
        let (r, complete) = report_from_frames(&frames).unwrap();
        assert!(!complete);
        assert_eq!(r.results.len(), 1);
        assert_eq!(r.outcome.status, "incomplete");
    }
}
