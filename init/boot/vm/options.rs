//! What `vm` is asked for: its options, and the usage errors among them
//! found before anything is built or booted.

use super::schedule::Order;
use crate::kernel::Arch;
use crate::qemu::Accel;
use std::path::PathBuf;
use trig_guest::options::{set_by_host, RunOptions, MAX_ICOUNT_SHIFT};
use trig_guest::split::MAX_PARTS;
use trig_schema::error::{usage, Error};
use trig_schema::files;
use trig_schema::Meter;
use trig_schema::RunSet;

pub struct VmOptions {
    /// One or more kernels; several are booted interleaved by `order`.
    pub kernels: Vec<String>,
    pub order: Order,
    /// The kernel's source commit, recorded for history and bisect.
    /// One for every kernel, or one per kernel in -k's order.
    pub commit: Vec<String>,
    pub arch: Arch,
    /// None: [`default_cpus`] of the meter.
    pub cpus: Option<usize>,
    pub memory: String,
    pub runs: usize,
    /// Boots side by side; None: [`default_jobs`](super::default_jobs).
    pub jobs: Option<usize>,
    /// Boots each run of a kernel is split into; None: where faster
    /// (`Session::plan_split`).
    pub split: Option<usize>,
    pub out: PathBuf,
    pub accel: AccelChoice,
    pub meter: MeterChoice,
    /// QEMU's `-icount shift` (icount only; 0: an instruction a ns).
    pub icount_shift: u32,
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
    /// With `profile`: also run every access through the simulated caches
    /// of the pinned CPU model.
    pub cache: bool,
    /// With `profile`: fetch a Debian kernel's `-dbg` vmlinux for the
    /// source lines (init/boot/profiling/source_lines/debuginfo.rs).
    pub debuginfo: bool,
    pub quiet: bool,
    /// QEMU's own words behind the notes that sum them up.
    pub verbose: bool,
    /// Each kernel's own table of results after the boots.
    pub tables: bool,
    /// What makes that table (the export crate's: boot renders nothing).
    pub table: fn(&RunSet) -> String,
    /// Also print the results document here ("-" for stdout).
    pub json: Option<String>,
    pub run: RunOptions,
    /// Whether -w or -d was given; if not, the icount meter runs its own
    /// sub-second defaults.
    pub timing_given: bool,
    /// Whether --min-counts was given; if not, and -w and -d were not
    /// either, the icount meter lengthens its windows by its own count.
    pub min_counts_given: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccelChoice {
    Auto,
    Kvm,
    Tcg,
}

impl std::str::FromStr for AccelChoice {
    type Err = Error;

    /// `--accel`, as argh parses it into the typed flag.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" => Ok(AccelChoice::Auto),
            "kvm" => Ok(AccelChoice::Kvm),
            "tcg" => Ok(AccelChoice::Tcg),
            _ => Err(usage(format!(
                "--accel must be auto, kvm or tcg, not '{s}'"
            ))),
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

impl std::str::FromStr for MeterChoice {
    type Err = Error;

    /// `--meter`, as argh parses it into the typed flag.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" => Ok(MeterChoice::Auto),
            "time" => Ok(MeterChoice::Time),
            "icount" => Ok(MeterChoice::Icount),
            _ => Err(usage(format!(
                "--meter must be auto, time or icount, not '{s}'"
            ))),
        }
    }
}

impl MeterChoice {
    /// The meter of a guest run under `accel`.
    pub fn resolve(self, accel: Accel) -> Meter {
        match (self, accel) {
            (MeterChoice::Time, _) | (MeterChoice::Auto, Accel::Kvm) => Meter::Time,
            (MeterChoice::Icount, _) | (MeterChoice::Auto, Accel::Tcg) => Meter::Icount,
        }
    }
}

/// Usage errors among the host's own options, found before anything is
/// built or booted.
pub(super) fn check(opts: &VmOptions) -> Result<(), String> {
    if opts.commit.len() > 1 && opts.commit.len() != opts.kernels.len() {
        return Err(format!(
            "--commit given {} times for {} kernels: give it once, or once per -k",
            opts.commit.len(),
            opts.kernels.len()
        ));
    }
    check_counts(opts)?;
    check_machine(opts)?;
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
    check_kernel_args(opts)
}

/// The schedule's counts: boots, jobs, parts and the time a boot may take.
fn check_counts(opts: &VmOptions) -> Result<(), String> {
    if opts.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let boots = opts.runs.saturating_mul(opts.kernels.len().max(1));
    if boots > MAX_BOOTS {
        return Err(format!(
            "--runs {}: {boots} boots of {} kernel(s); at most {MAX_BOOTS} in one command (split the runs over several --out)",
            opts.runs,
            opts.kernels.len().max(1)
        ));
    }
    if opts.jobs == Some(0) {
        return Err("--jobs must be at least 1".into());
    }
    if let Some(n) = opts.split.filter(|n| !(1..=MAX_PARTS).contains(n)) {
        return Err(format!(
            "--split {n}: from 1 (no split) to {MAX_PARTS} boots a run"
        ));
    }
    if opts.timeout == Some(0) {
        return Err("--timeout must be at least 1 s".into());
    }
    Ok(())
}

/// The guest machine: its CPUs and memory, within QEMU's and the host's.
fn check_machine(opts: &VmOptions) -> Result<(), String> {
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
    Ok(())
}

/// What reaches the guest's command line besides the run options: the
/// shift its clock is read in, and `--append` and `--kernel-append`.
fn check_kernel_args(opts: &VmOptions) -> Result<(), String> {
    if opts.icount_shift > MAX_ICOUNT_SHIFT {
        return Err(format!(
            "--icount-shift {}: from 0 to {MAX_ICOUNT_SHIFT} (an instruction takes 1 to {} ns of guest time)",
            opts.icount_shift,
            1u32 << MAX_ICOUNT_SHIFT
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
    // what trig-init sets itself, from its own options, must match them
    if let Some(w) = opts
        .kernel_appends
        .iter()
        .flat_map(|a| a.split_whitespace())
        .find(|w| {
            w.strip_prefix("trig.")
                .is_some_and(|kv| set_by_host(kv.split_once('=').map_or(kv, |(k, _)| k)))
        })
    {
        return Err(format!(
            "--kernel-append {w}: trig-init sets this itself (from --split, --profile or --icount-shift)"
        ));
    }
    Ok(())
}

/// The most boots one command takes: more than a day at 10 s a boot,
/// and every results file holds all its boots and is rewritten after
/// each; beyond it a typo (`--runs 1000000`) would plan boots for years.
const MAX_BOOTS: usize = 10_000;

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
