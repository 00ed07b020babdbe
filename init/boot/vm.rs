//! `trig-init vm`: boot a kernel N times with trig-init as /init, collect
//! each boot's report, keep everything measured whatever goes wrong.

use crate::boot::initramfs;
use crate::boot::judge::{add_profiles, exit_status, judge_boot};
use crate::boot::kernel::{self, Arch, Kernel};
use crate::boot::machine::{self, Boot, BootEvent, BootSpec};
use crate::boot::profile;
use crate::boot::qemu::{self, Accel};
use crate::boot::results::{timestamp, Target};
use crate::boot::signals;
use crate::boot::ui::{self, Ui};
use crate::exit;
use crate::files::{self, TempFile};
use crate::options::{RunOptions, ICOUNT_DURATION, ICOUNT_WARMUP};
use crate::report::{KernelInfo, Meter, Pairing, RunSet, VmInfo, SCHEMA_VERSION};
use crate::{matrix, registry};
use nix::sys::signal::Signal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Mutex;
use std::time::Duration;

/// An error of the command and its exit status (see [`exit`]).
type Failure = (u8, String);

fn usage(e: String) -> Failure {
    (exit::USAGE, e)
}

fn infra(e: String) -> Failure {
    (exit::INFRA, e)
}

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
#[derive(Clone)]
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
    /// Boots side by side; None: [`default_jobs`].
    pub jobs: Option<usize>,
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
    /// Count kernel instructions per function with the QEMU plugin.
    pub profile: bool,
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

/// What a finished `vm` command leaves: per kernel, its results and file.
pub struct Done {
    pub status: u8,
    pub sets: Vec<RunSet>,
    pub files: Vec<PathBuf>,
}

/// Everything a command settles before its first boot, and the guest
/// setup of the accelerator at hand (which a failing KVM changes).
struct Plan<'a> {
    opts: &'a VmOptions,
    /// `--meter`, with `auto` resolved for `--profile`.
    meter_choice: MeterChoice,
    /// Benchmarks (with their parameter points) each boot runs.
    points: usize,
    accel: Accel,
    guest: Guest,
    /// The command's start, in its results' names.
    stem: String,
    /// Unique to this command: runs in the same second must not pair.
    session: String,
    plugin: Option<PathBuf>,
    /// Why the results of the last boot could not be written: the
    /// schedule stops, and the figures are shown all the same.
    unsaved: Option<String>,
    /// Whether a KVM guest of `--accel auto` reached /init: KVM works,
    /// and no later boot needs the fallback to TCG.
    kvm_works: bool,
}

/// Runs the command. With several kernels the boots interleave by
/// `order`, and each kernel gets its own results file.
pub fn run(opts: &VmOptions) -> Result<Done, Failure> {
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
    let init = read_init(opts)?;
    let stem = timestamp();
    if opts.kernel_appends.len() > kernels.len() {
        return Err(usage(format!(
            "{} --kernel-append for {} kernels",
            opts.kernel_appends.len(),
            kernels.len()
        )));
    }
    let mut plan = Plan::new(opts, points, stem)?;
    let mut targets = plan.targets(kernels)?;
    plan.plugin = plugin(opts)?;
    // undocumented: extra files for scripts/upstream-bench.sh
    let extra = std::env::var_os(initramfs::EXTRA_ROOT_ENV).map(PathBuf::from);
    let cpio = initramfs::build_with(&init, extra.as_deref()).map_err(|e| {
        let root = extra.as_ref().map(|p| format!(" ({})", p.display()));
        infra(format!("initramfs{}: {e}", root.unwrap_or_default()))
    })?;
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| infra(format!("{}: {e}", opts.out.display())))?;
    for name in files::remove_stale(&opts.out) {
        eprintln!("trig-init: removed {name}, left by a run that was killed");
    }
    let initrd = temp_file(
        opts.out.join(format!(".initramfs-{}.cpio", plan.session)),
        &cpio,
    )?;
    signals::install().map_err(infra)?;
    let interrupted = {
        let ui = Ui::spawn(opts.quiet);
        plan.boot_all(&mut targets, &initrd, ui.events())?
    };
    drop(initrd);
    plan.finish(&targets, interrupted.or_else(signals::caught))
}

/// The static trig-init to boot as /init: `--init`, or this executable.
fn read_init(opts: &VmOptions) -> Result<Vec<u8>, Failure> {
    let init_path = match &opts.init {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| infra(e.to_string()))?,
    };
    let init = std::fs::read(&init_path)
        .map_err(|e| usage(format!("init binary {}: {e}", init_path.display())))?;
    if !initramfs::is_static_elf(&init) {
        return Err(usage(format!(
            "init binary {} is not a static executable; build the static one (scripts/build.sh) or pass --init",
            init_path.display()
        )));
    }
    // the guest would only say "error -8" (ENOEXEC) and look crashed
    if let Some(kernel::Format::Elf(built)) = kernel::detect_bytes(&init) {
        if built != opts.arch {
            return Err(usage(format!(
                "init binary {} is built for {}, not --arch {}; build that one (scripts/build.sh --arch {}) and pass it as --init",
                init_path.display(),
                built.as_str(),
                opts.arch.as_str(),
                opts.arch.as_str()
            )));
        }
    }
    Ok(init)
}

/// The QEMU plugin of `--profile`, found and tried before any boot.
fn plugin(opts: &VmOptions) -> Result<Option<PathBuf>, Failure> {
    if !opts.profile {
        return Ok(None);
    }
    let p = profile::plugin_path().map_err(usage)?;
    profile::probe(opts.arch, &p).map_err(usage)?;
    Ok(Some(p))
}

/// A temporary file of the command, removed on every path out.
fn temp_file(path: PathBuf, bytes: &[u8]) -> Result<TempFile, Failure> {
    TempFile::create(path.clone(), bytes).map_err(|e| infra(format!("{}: {e}", path.display())))
}

/// The accelerator to start with.
fn first_accel(opts: &VmOptions, meter_choice: MeterChoice) -> Accel {
    match opts.accel {
        AccelChoice::Tcg => Accel::Tcg,
        AccelChoice::Kvm => Accel::Kvm,
        AccelChoice::Auto if meter_choice == MeterChoice::Icount => Accel::Tcg,
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
    }
}

impl<'a> Plan<'a> {
    fn new(opts: &'a VmOptions, points: usize, stem: String) -> Result<Self, Failure> {
        // a profile counts instructions: --profile asks for the icount meter
        let meter_choice = match opts.meter {
            MeterChoice::Auto if opts.profile => MeterChoice::Icount,
            m => m,
        };
        if meter_choice == MeterChoice::Icount && opts.accel == AccelChoice::Kvm {
            return Err(usage(
                "--meter icount counts instructions under TCG; it cannot run with --accel kvm"
                    .into(),
            ));
        }
        let accel = first_accel(opts, meter_choice);
        let guest = guest(opts, meter_choice, points, accel)?;
        let session = format!("{stem}-{}", std::process::id());
        Ok(Plan {
            opts,
            meter_choice,
            points,
            accel,
            guest,
            stem,
            session,
            plugin: None,
            unsaved: None,
            kvm_works: false,
        })
    }

    /// The i-th kernel's command line; rebuilt at every boot, since a KVM
    /// that fails its first boot leaves TCG, and maybe other run defaults.
    fn cmdline(&self, i: usize) -> String {
        let opts = self.opts;
        let extra = opts.kernel_appends.get(i).map_or("", String::as_str);
        qemu::kernel_cmdline(
            opts.arch,
            &self.guest.args,
            opts.kaslr,
            format!("{} {extra}", opts.append).trim(),
        )
    }

    /// A results set per kernel, its command line checked.
    fn targets(&self, kernels: Vec<Kernel>) -> Result<Vec<Target>, Failure> {
        let opts = self.opts;
        let qemu_version = qemu::version(opts.arch);
        let targets: Vec<Target> = kernels
            .into_iter()
            .enumerate()
            .map(|(i, kernel)| Target {
                set: RunSet {
                    schema_version: SCHEMA_VERSION,
                    created: Some(self.stem.clone()),
                    kernel: KernelInfo {
                        spec: kernel.spec.clone(),
                        path: kernel.path.display().to_string(),
                        package: kernel.package.clone(),
                        release: "unknown".into(),
                        commit: opts.commit.clone(),
                    },
                    vm: VmInfo {
                        arch: opts.arch.as_str().into(),
                        accel: self.accel.as_str().into(),
                        meter: self.guest.meter,
                        cpus: self.guest.cpus,
                        memory: opts.memory.clone(),
                        append: self.cmdline(i),
                        qemu: qemu_version.clone(),
                        // set at each boot, with the accelerator
                        machine: None,
                        cpu: None,
                    },
                    runs: Vec::new(),
                },
                kernel,
                path: None,
            })
            .collect();
        for t in &targets {
            RunOptions::from_kernel_cmdline(&t.set.vm.append)
                .map_err(|e| usage(format!("kernel {}: command line: {e}", t.kernel.spec)))?;
        }
        Ok(targets)
    }

    /// Each boot of the command, in order.
    fn schedule(&self, kernels: usize) -> Vec<Scheduled> {
        let schedule = self.opts.order.schedule(kernels, self.opts.runs);
        let many = kernels > 1;
        let total = schedule.len();
        schedule
            .into_iter()
            .enumerate()
            .map(|(n, (round, k))| Scheduled {
                n,
                round,
                k,
                label: if many {
                    format!("{}/{total} k{}", n + 1, k + 1)
                } else {
                    format!("{round}/{}", self.opts.runs)
                },
                tag: if many {
                    format!("-k{}", k + 1)
                } else {
                    String::new()
                },
            })
            .collect()
    }

    /// Boots the schedule, until done or interrupted; returns the signal.
    /// A KVM that may still fail boots alone, since falling back to TCG
    /// changes how every later boot runs; then `--jobs` boots go side by
    /// side.
    fn boot_all(
        &mut self,
        targets: &mut [Target],
        initrd: &TempFile,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Signal>, Failure> {
        let mut todo = self.schedule(targets.len()).into_iter();
        while self.opts.accel == AccelChoice::Auto && self.accel == Accel::Kvm && !self.kvm_works {
            let Some(this) = todo.next() else {
                return Ok(None);
            };
            let counts = self.launcher().counts_file(&this)?;
            let b =
                self.boot_with_fallback(&targets[this.k], &this, initrd, counts.as_ref(), events)?;
            let sig = self.record(&mut targets[this.k], &this, b, counts, events);
            if sig.is_some() || self.unsaved.is_some() {
                return Ok(sig);
            }
        }
        self.side_by_side(targets, todo.collect(), initrd, events)
    }

    /// Boots `todo` up to `--jobs` at a time, each recorded as it ends;
    /// a signal or a results file that cannot be written starts no more,
    /// and what the boots under way measured is kept.
    fn side_by_side(
        &mut self,
        targets: &mut [Target],
        todo: Vec<Scheduled>,
        initrd: &TempFile,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Signal>, Failure> {
        let jobs = self
            .opts
            .jobs
            .unwrap_or_else(|| default_jobs(self.guest.meter))
            .clamp(1, todo.len().max(1));
        let launcher = self.launcher();
        // what a boot needs, apart from the targets that take the results
        let launches: Vec<(Kernel, String)> = (0..targets.len())
            .map(|k| (targets[k].kernel.clone(), self.cmdline(k)))
            .collect();
        let queue = Mutex::new(todo.into_iter());
        let stop = AtomicBool::new(false);
        let (tx, done) = mpsc::channel();
        std::thread::scope(|s| {
            for _ in 0..jobs {
                let tx = tx.clone();
                let (queue, stop, launches, launcher) = (&queue, &stop, &launches, &launcher);
                s.spawn(move || loop {
                    if stop.load(Ordering::SeqCst) || signals::caught().is_some() {
                        break;
                    }
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                    let Some(this) = next else {
                        break;
                    };
                    let (kernel, cmdline) = &launches[this.k];
                    let r = launcher.counts_file(&this).and_then(|counts| {
                        let b = launcher.launch(
                            kernel,
                            cmdline,
                            &this,
                            initrd,
                            counts.as_ref(),
                            events,
                        )?;
                        Ok((b, counts))
                    });
                    if tx.send((this, r)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            // each boot is judged and saved as it ends, whatever its place
            let (mut failed, mut interrupted) = (None, None);
            for (this, r) in done {
                match r {
                    Ok((b, counts)) => {
                        let sig = self.record(&mut targets[this.k], &this, b, counts, events);
                        interrupted = interrupted.or(sig);
                    }
                    Err(e) => failed = failed.or(Some(e)),
                }
                if failed.is_some() || interrupted.is_some() || self.unsaved.is_some() {
                    stop.store(true, Ordering::SeqCst);
                }
            }
            failed.map_or(Ok(interrupted), Err)
        })
    }

    /// What the boots need of the plan, apart from it (boots side by side
    /// borrow it while the plan records their results).
    fn launcher(&self) -> Launcher<'a> {
        Launcher {
            opts: self.opts,
            accel: self.accel,
            guest: self.guest.clone(),
            plugin: self.plugin.clone(),
            session: self.session.clone(),
            kvm_works: self.kvm_works,
        }
    }

    /// Judges a boot and adds it to the kernel's results; returns the
    /// signal that interrupted it.
    fn record(
        &mut self,
        target: &mut Target,
        this: &Scheduled,
        b: Boot,
        counts: Option<TempFile>,
        events: &Sender<BootEvent>,
    ) -> Option<Signal> {
        let mut rec = judge_boot(this.round, &b, self.guest.timeout);
        if let Some(counts) = &counts {
            add_profiles(&mut rec, &b.console.frames, counts.path());
        }
        rec.pairing = Some(Pairing {
            session: self.session.clone(),
            round: this.round,
        });
        let _ = events.send(BootEvent::Judged {
            label: this.label.clone(),
            kernel: target.kernel.spec.clone(),
            status: rec.status,
            wall_s: rec.wall_s,
            message: rec.message.clone(),
        });
        target.set.vm.append = self.cmdline(this.k);
        target.set.vm.accel = self.accel.as_str().into();
        let (machine, cpu) = qemu::model(self.opts.arch, self.accel);
        (target.set.vm.machine, target.set.vm.cpu) = (Some(machine.into()), Some(cpu.into()));
        (target.set.vm.meter, target.set.vm.cpus) = (self.guest.meter, self.guest.cpus);
        if self.unsaved.is_none() {
            match target.add(&self.opts.out, &self.stem, &this.tag, rec, &b.console.log) {
                Ok(Some(why)) => {
                    let _ = events.send(BootEvent::Notice(format!("warning: {why}")));
                }
                Ok(None) => {}
                Err(e) => self.unsaved = Some(e),
            }
        }
        b.interrupted
    }

    /// One boot; a KVM that cannot reach /init is given up for TCG, and
    /// the boot made again there.
    fn boot_with_fallback(
        &mut self,
        target: &Target,
        this: &Scheduled,
        initrd: &TempFile,
        counts: Option<&TempFile>,
        events: &Sender<BootEvent>,
    ) -> Result<Boot, Failure> {
        loop {
            let kvm = self.accel == Accel::Kvm;
            let cmdline = self.cmdline(this.k);
            let b =
                self.launcher()
                    .launch(&target.kernel, &cmdline, this, initrd, counts, events)?;
            if !kvm || b.console.reached_init || b.interrupted.is_some() {
                self.kvm_works |= kvm && b.console.reached_init;
                return Ok(b);
            }
            let why = b
                .qemu_stderr
                .lines()
                .last()
                .unwrap_or("the guest never reached /init")
                .to_string();
            if let Some(refusal) = qemu_refusal(&b.qemu_stderr) {
                return Err(infra(format!("QEMU refused to start: {refusal}")));
            }
            self.accel = Accel::Tcg;
            self.guest = guest(self.opts, self.meter_choice, self.points, self.accel)?;
            let _ = events.send(BootEvent::Notice(format!(
                "KVM is present but unusable ({why}); falling back to TCG, meter {}",
                self.guest.meter.as_str()
            )));
        }
    }

    /// The summary, the JSON document and the exit status.
    fn finish(&self, targets: &[Target], interrupted: Option<Signal>) -> Result<Done, Failure> {
        let opts = self.opts;
        let sets: Vec<RunSet> = targets.iter().map(|t| t.set.clone()).collect();
        let shown: Vec<_> = targets
            .iter()
            .map(|t| (&t.set, t.path.as_ref().map(|(p, _)| p)))
            .collect();
        // figures that could not be kept are at least shown
        ui::summary(opts.quiet && self.unsaved.is_none(), &shown);
        if let Some(dest) = &opts.json {
            write_json(dest, &sets)?;
        }
        if let Some(e) = &self.unsaved {
            return Err(infra(format!(
                "results not written: {e}; the figures above are all that is left of the last boot"
            )));
        }
        if let Some(sig) = interrupted {
            eprintln!(
                "trig-init: interrupted by {sig}; the boots that finished are in the results file"
            );
        }
        Ok(Done {
            status: interrupted.map_or_else(
                || sets.iter().map(exit_status).max().unwrap_or(exit::OK),
                signals::exit_status,
            ),
            files: targets
                .iter()
                .filter_map(|t| t.path.as_ref().map(|(p, _)| p.clone()))
                .collect(),
            sets,
        })
    }
}

/// What a boot needs of the plan: the accelerator at hand and how the
/// guests boot under it.
struct Launcher<'a> {
    opts: &'a VmOptions,
    accel: Accel,
    guest: Guest,
    plugin: Option<PathBuf>,
    session: String,
    kvm_works: bool,
}

impl Launcher<'_> {
    /// The file the plugin counts a boot's instructions into, with
    /// `--profile`.
    fn counts_file(&self, this: &Scheduled) -> Result<Option<TempFile>, Failure> {
        self.plugin
            .as_ref()
            .map(|_| {
                temp_file(
                    self.opts
                        .out
                        .join(format!(".profile-{}-{}.txt", self.session, this.n)),
                    b"",
                )
            })
            .transpose()
    }

    /// Runs one boot of `kernel` with this command line under the
    /// accelerator at hand.
    fn launch(
        &self,
        kernel: &Kernel,
        cmdline: &str,
        this: &Scheduled,
        initrd: &TempFile,
        counts: Option<&TempFile>,
        events: &Sender<BootEvent>,
    ) -> Result<Boot, Failure> {
        let vm = qemu::Vm {
            kernel,
            initrd: initrd.path(),
            cpus: self.guest.cpus,
            memory: &self.opts.memory,
            cmdline,
            meter: self.guest.meter,
            plugin: self
                .plugin
                .as_ref()
                .zip(counts)
                .map(|(p, c)| profile::qemu_arg(p, c.path())),
        };
        // a KVM not yet known to work gets a deadline to reach /init
        let give_up =
            (self.opts.accel == AccelChoice::Auto && self.accel == Accel::Kvm && !self.kvm_works)
                .then_some(KVM_PROBE);
        let spec = BootSpec {
            arch: self.opts.arch,
            args: &qemu::args(&vm, self.accel),
            timeout: self.guest.timeout,
            give_up,
            label: &this.label,
        };
        machine::boot(&spec, events).map_err(infra)
    }
}

/// QEMU's own error, when it refused the configuration for a reason that
/// is not KVM's (TCG would refuse it as well): its lines other than
/// warnings, none of which names KVM.
fn qemu_refusal(stderr: &str) -> Option<String> {
    let errors: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("warning"))
        .collect();
    let kvm = errors
        .iter()
        .any(|l| l.to_ascii_lowercase().contains("kvm"));
    (!errors.is_empty() && !kvm).then(|| errors.join(" / "))
}

/// Where a boot sits in the command's schedule.
struct Scheduled {
    /// Its place in the whole schedule, from 0.
    n: usize,
    round: usize,
    /// The kernel's index.
    k: usize,
    label: String,
    /// Added to the results file's name, with several kernels.
    tag: String,
}

/// How the guests boot under `accel`.
fn guest(
    opts: &VmOptions,
    meter_choice: MeterChoice,
    points: usize,
    accel: Accel,
) -> Result<Guest, Failure> {
    let meter = meter_choice.resolve(accel);
    if let Some(why) = meter_conflict(meter, &opts.run) {
        return Err(usage(why));
    }
    if opts.profile && meter != Meter::Icount {
        return Err(usage(
            "--profile counts instructions: it needs the icount meter, not --meter time".into(),
        ));
    }
    let mut run = opts.run.clone();
    run.profile = opts.profile;
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
}

/// The results document (one kernel) or an array of them (several) to
/// `dest`, "-" for stdout.
fn write_json(dest: &str, sets: &[RunSet]) -> Result<(), Failure> {
    let json = if sets.len() > 1 {
        serde_json::to_string_pretty(&sets)
    } else {
        serde_json::to_string_pretty(&sets[0])
    }
    .expect("results serialize")
        + "\n";
    if dest == "-" {
        print!("{json}");
        Ok(())
    } else {
        files::replace(std::path::Path::new(dest), json.as_bytes())
            .map_err(|e| infra(format!("{dest}: {e}")))
    }
}

/// Usage errors among the host's own options, found before anything is
/// built or booted.
fn check(opts: &VmOptions) -> Result<(), String> {
    if opts.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    if opts.jobs == Some(0) {
        return Err("--jobs must be at least 1".into());
    }
    if opts.cpus == Some(0) {
        return Err("--cpus must be at least 1".into());
    }
    let most = opts.arch.max_cpus();
    if let Some(n) = opts.cpus.filter(|&n| n > most) {
        return Err(format!(
            "--cpus {n}: QEMU's {} machine takes at most {most}",
            opts.arch.as_str()
        ));
    }
    if opts.timeout == Some(0) {
        return Err("--timeout must be at least 1 s".into());
    }
    let Some(mib) = memory_mib(&opts.memory) else {
        return Err(format!(
            "--memory '{}' is not a size such as 512M, 1G or 1.5G",
            opts.memory
        ));
    };
    if mib < MIN_MEMORY_MIB {
        return Err(format!(
            "--memory {}: a guest needs at least {MIN_MEMORY_MIB}M (the kernel and trig-init's initramfs)",
            opts.memory
        ));
    }
    if let Some(host) = host_memory_mib().filter(|&host| mib > host) {
        return Err(format!(
            "--memory {}: more than this host's {:.0}M",
            opts.memory, host
        ));
    }
    if opts.out.exists() && !opts.out.is_dir() {
        return Err(format!(
            "--out {} is a file, not a directory",
            opts.out.display()
        ));
    }
    if let Some(dest) = opts.json.as_deref().filter(|d| *d != "-") {
        files::check_writable(std::path::Path::new(dest))
            .map_err(|e| format!("--json {dest}: {e}"))?;
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

/// Below this a kernel does not get as far as /init.
const MIN_MEMORY_MIB: f64 = 128.0;

/// QEMU's `-m` in MiB: a positive number, fractions allowed, in MiB or
/// with a K, M, G or T suffix.
fn memory_mib(m: &str) -> Option<f64> {
    let digits = m.trim_end_matches(['k', 'K', 'm', 'M', 'g', 'G', 't', 'T']);
    if m.len() - digits.len() > 1 || !digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let scale = match m[digits.len()..].to_ascii_uppercase().as_str() {
        "K" => 1.0 / 1024.0,
        "" | "M" => 1.0,
        "G" => 1024.0,
        _ => 1024.0 * 1024.0,
    };
    digits
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0)
        .map(|v| v * scale)
}

/// The host's memory (MemTotal), in MiB: a guest given more would swap
/// or fail to start.
fn host_memory_mib() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: f64 = info
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
