//! One `vm` command's session: what it settles before its first boot
//! (the meter and accelerator, how its guests launch, its id, a results
//! set per kernel), which its boots (boots.rs) and its end (output.rs)
//! then carry on.

use super::launch::{launch, Launch};
use super::options::{AccelChoice, MeterChoice, VmOptions};
use super::{usage, Error};
use crate::cache::Caches;
use crate::kernel::Kernel;
use crate::lines::{Cost, DebugInfo};
use crate::qemu::{self, Accel};
use crate::results::Target;
use std::path::PathBuf;
use trig_guest::options::RunOptions;
use trig_schema::{KernelInfo, RunSet, VmInfo, SCHEMA_VERSION};

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

impl<'a> Session<'a> {
    pub(super) fn new(opts: &'a VmOptions, stem: String) -> Result<Self, Error> {
        // a profile counts instructions: --profile asks for the icount meter
        let meter_choice = match opts.meter {
            MeterChoice::Auto if opts.profile => MeterChoice::Icount,
            m => m,
        };
        if meter_choice == MeterChoice::Icount && opts.accel == AccelChoice::Kvm {
            return Err(usage(
                "--meter icount counts instructions under TCG; it cannot run with --accel kvm",
            ));
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
        })
    }

    /// The i-th kernel's command line; rebuilt at every boot, since a KVM
    /// that fails its first boot leaves TCG, and maybe other run defaults.
    pub(super) fn cmdline(&self, i: usize) -> String {
        let opts = self.opts;
        let extra = opts.kernel_appends.get(i).map_or("", String::as_str);
        qemu::kernel_cmdline(
            opts.arch,
            &self.launch.args,
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
