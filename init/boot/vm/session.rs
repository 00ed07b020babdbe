//! One `vm` command's session: what it settles before its first boot
//! (the meter and accelerator, how its guests launch, its id, a results
//! set per kernel), which its boots (boots.rs) and its end (output.rs)
//! then carry on.

use super::launch::{default_jobs, launch, model_bound, Launch};
use super::options::{AccelChoice, MeterChoice, VmOptions};
use super::{usage, Error};
use crate::kernel::Kernel;
use crate::profiling::caches::Caches;
use crate::profiling::source_lines::{Cost, DebugInfo};
use crate::qemu::{self, Accel};
use crate::results::Target;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
use trig_guest::options::RunOptions;
use trig_guest::registry;
use trig_guest::split::{self, Part, Plan};
use trig_schema::{KernelInfo, Meter, RunRecord, RunSet, VmInfo, SCHEMA_VERSION};

/// Everything a command settles before its first boot, and how its
/// guests launch under the accelerator at hand (which a failing KVM
/// changes).
pub(super) struct Session<'a> {
    pub(super) opts: &'a VmOptions,
    /// `--meter`, with `auto` resolved for `--profile`.
    pub(super) meter_choice: MeterChoice,
    pub(super) accel: Accel,
    pub(super) launch: Launch,
    /// The command's start, in its results' names.
    pub(super) stem: String,
    /// Unique to this command: runs in the same second must not pair.
    pub(super) id: String,
    pub(super) plugin: Option<PathBuf>,
    /// With `--profile`: each kernel's DWARF for the source lines, or why
    /// it has none; and what resolving the lines cost so far.
    pub(super) debug: Vec<Result<DebugInfo, String>>,
    pub(super) lines_cost: Cost,
    /// Why the results of the last boot could not be written: the
    /// schedule stops, and the figures are shown all the same.
    pub(super) unsaved: Option<String>,
    /// Whether a KVM guest of `--accel auto` reached /init: KVM works,
    /// and no later boot needs the fallback to TCG.
    pub(super) kvm_works: bool,
    /// How each kernel's matrix is split over boots side by side; None:
    /// one boot a run.
    pub(super) plan: Option<Plan>,
    /// The parts of each run (round, kernel) that have ended, until all
    /// have and they are merged into the run.
    pub(super) pending: BTreeMap<(usize, usize), Pending>,
}

/// The parts of one run that have ended so far.
pub(super) struct Pending {
    /// Each part's record and console, once it ended.
    pub(super) parts: Vec<Option<(RunRecord, String)>>,
    /// The first part's start and the last one's end, by the host's clock.
    pub(super) start: Instant,
    pub(super) end: Instant,
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
                trig_schema::stderrln!(
                    "trig-init: KVM not available for {}; using TCG",
                    opts.arch.as_str()
                );
            }
            Accel::Tcg
        }
    }
}

impl<'a> Session<'a> {
    pub(super) fn new(opts: &'a VmOptions, stem: String) -> Result<Self, Error> {
        // a profile counts instructions and a shift is icount's: either
        // asks for the icount meter
        let meter_choice = match opts.meter {
            MeterChoice::Auto if opts.profile || opts.icount_shift > 0 => MeterChoice::Icount,
            m => m,
        };
        if meter_choice == MeterChoice::Icount && opts.accel == AccelChoice::Kvm {
            let asked = match opts.meter {
                MeterChoice::Icount => "--meter icount",
                _ if opts.icount_shift > 0 => "--icount-shift",
                _ => "--profile",
            };
            return Err(usage(format!(
                "{asked} counts instructions under TCG (the icount meter); it cannot run with --accel kvm"
            )));
        }
        // the icount meter, asked for or where KVM may fail: checked
        // before KVM is tried, so that no boot is spent first
        if meter_choice != MeterChoice::Time {
            if let Some(why) = model_bound(&opts.run, opts.cpus) {
                return Err(usage(why));
            }
        }
        let accel = first_accel(opts, meter_choice);
        let launch = launch(opts, meter_choice, accel)?;
        let session = format!("{stem}-{}", std::process::id());
        Ok(Session {
            opts,
            meter_choice,
            accel,
            launch,
            stem,
            id: session,
            plugin: None,
            debug: Vec::new(),
            lines_cost: Cost::default(),
            unsaved: None,
            kvm_works: false,
            plan: None,
            pending: BTreeMap::new(),
        })
    }

    /// Splits each kernel's matrix over boots side by side: `--split`,
    /// else where that is faster (under the icount meter, into the slots
    /// that the command's boots leave free, a part no smaller than
    /// [`split::MIN_PART_WEIGHT`]).
    pub(super) fn plan_split(&mut self, kernels: usize) -> Result<(), Error> {
        let mut selection = registry::select(&self.opts.run.filter)?;
        // an arm64 guest runs no x86-only benchmark: no part may wait for one
        selection.retain(|b| self.opts.arch.runs(b));
        let n = match self.opts.split {
            _ if selection.is_empty() => 1,
            Some(n) => n,
            None if self.launch.meter == Meter::Icount => {
                let slots = self
                    .opts
                    .jobs
                    .unwrap_or_else(|| default_jobs(self.launch.meter));
                let boots = kernels.saturating_mul(self.opts.runs).max(1);
                split::worth(&selection, &self.opts.run, slots / boots)
            }
            None => 1,
        };
        let plan = split::plan(&selection, &self.opts.run, n);
        self.plan = (plan.runs.len() > 1).then_some(plan);
        Ok(())
    }

    /// Parts a run is split into (1: not split).
    pub(super) fn parts(&self) -> usize {
        self.plan.as_ref().map_or(1, |p| p.runs.len())
    }

    /// The i-th kernel's command line; rebuilt at every boot, since a KVM
    /// that fails its first boot leaves TCG, and maybe other run defaults.
    pub(super) fn cmdline(&self, i: usize) -> String {
        self.part_cmdline(i, Part::WHOLE)
    }

    /// The i-th kernel's command line for one part of its matrix.
    pub(super) fn part_cmdline(&self, i: usize, part: Part) -> String {
        let opts = self.opts;
        let extra = opts.kernel_appends.get(i).map_or("", String::as_str);
        let mut run = self.launch.args.clone();
        if part.of > 1 {
            run.push(format!("trig.part={part}"));
        }
        qemu::kernel_cmdline(
            opts.arch,
            &run,
            opts.kaslr,
            format!("{} {extra}", opts.append).trim(),
        )
    }

    /// A results set per kernel, its command line checked.
    pub(super) fn targets(&self, kernels: Vec<Kernel>) -> Result<Vec<Target>, Error> {
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
                        commit: opts.commit.get(i).or(opts.commit.first()).cloned(),
                    },
                    vm: VmInfo {
                        arch: opts.arch.as_str().into(),
                        accel: self.accel.as_str().into(),
                        meter: self.launch.meter,
                        cpus: self.launch.cpus,
                        memory: opts.memory.clone(),
                        append: self.cmdline(i),
                        qemu: qemu_version.clone(),
                        // set at each boot, with the accelerator
                        machine: None,
                        cpu: None,
                        cache: opts.cache.then(|| Caches::of(opts.arch).describe()),
                        icount_shift: self.opts.icount_shift,
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
}
