//! `trig-init vm`: boot a kernel N times with trig-init as /init, collect
//! each boot's report, keep everything measured whatever goes wrong.

mod boots;
mod launch;
mod options;
mod output;
mod schedule;
mod session;

pub use launch::{default_cpus, default_jobs, meter_conflict, progress_timeout};
pub use options::{AccelChoice, MeterChoice, VmOptions};
pub use schedule::Order;

use crate::initramfs;
use crate::kernel::{self, Kernel};
use crate::profiling::plugin as profiling_plugin;
use crate::profiling::source_lines::{self, debuginfo};
use crate::results::timestamp;
use crate::signals;
use crate::ui::Ui;
use options::check;
use session::Session;
use std::path::PathBuf;
use trig_guest::registry;
use trig_schema::error::{infra, shown, usage, Error};
use trig_schema::files::{self, TempFile};
use trig_schema::RunSet;

/// What a finished `vm` command leaves: per kernel, its results and file.
pub struct Done {
    pub status: u8,
    pub sets: Vec<RunSet>,
    pub files: Vec<PathBuf>,
}

/// Runs the command. With several kernels the boots interleave by
/// `order`, and each kernel gets its own results file.
pub fn run(opts: &VmOptions) -> Result<Done, Error> {
    check(opts).map_err(usage)?;
    opts.run.validate()?;
    registry::select(&opts.run.filter)?;
    if opts.kernels.is_empty() {
        return Err(usage("no kernel given"));
    }
    if opts.kernel_appends.len() > opts.kernels.len() {
        return Err(usage(format!(
            "{} --kernel-append for {} kernels",
            opts.kernel_appends.len(),
            opts.kernels.len()
        )));
    }
    // what the meter and the machine cannot honour is refused before a
    // kernel is fetched
    let mut session = Session::new(opts, timestamp())?;
    let kernels = opts
        .kernels
        .iter()
        .map(|k| kernel::resolve(k, opts.arch))
        .collect::<Result<Vec<Kernel>, Error>>()?;
    let init = read_init(opts)?;
    let mut targets = session.targets(kernels)?;
    session.plan_split(targets.len())?;
    // several producers under icount run the coherence model, which a
    // TCG fallback of auto may turn on after the first boot
    let coherence =
        session.meter_choice != MeterChoice::Time && opts.run.producers.iter().any(|&p| p > 1);
    session.plugin = plugin(opts, coherence)?;
    if opts.profile {
        session.debug = targets
            .iter()
            .map(|t| debuginfo_of(opts, &t.kernel))
            .collect();
    }
    // undocumented: extra files for scripts/bench/upstream-bench.sh
    let extra = std::env::var_os(initramfs::EXTRA_ROOT_ENV).map(PathBuf::from);
    let cpio = initramfs::build_with(&init, extra.as_deref()).map_err(|e| {
        let root = extra.as_ref().map(|p| format!(" ({})", p.display()));
        infra(format!("initramfs{}: {e}", root.unwrap_or_default()))
    })?;
    std::fs::create_dir_all(&opts.out)
        .map_err(|e| infra(format!("{}: {e}", opts.out.display())))?;
    for name in files::remove_stale(&opts.out) {
        trig_schema::stderrln!("trig-init: removed {name}, left by a run that was killed");
    }
    let initrd = temp_file(
        opts.out.join(format!(".initramfs-{}.cpio", session.id)),
        &cpio,
    )?;
    signals::install()?;
    let interrupted = {
        let ui = Ui::spawn(opts.quiet);
        session.boot_all(&mut targets, &initrd, ui.events())?
    };
    drop(initrd);
    session.finish(&targets, interrupted.or_else(signals::caught))
}

/// The static trig-init to boot as /init: `--init`, or this executable.
fn read_init(opts: &VmOptions) -> Result<Vec<u8>, Error> {
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

/// The QEMU plugin of `--profile` or of the coherence model, found and
/// tried before any boot.
fn plugin(opts: &VmOptions, coherence: bool) -> Result<Option<PathBuf>, Error> {
    if !opts.profile && !coherence {
        return Ok(None);
    }
    let p = profiling_plugin::plugin_path()?;
    profiling_plugin::probe(opts.arch, &p)?;
    Ok(Some(p))
}

/// A kernel's DWARF for the source lines of `--profile`, said on the
/// terminal either way: lines or why not.
fn debuginfo_of(opts: &VmOptions, k: &Kernel) -> Result<source_lines::DebugInfo, String> {
    let found = debuginfo::find(k, opts.arch, opts.debuginfo);
    if !opts.quiet {
        match &found {
            Ok(d) => trig_schema::stderrln!(
                "trig-init: source lines of {} from {}",
                shown(&k.spec, false),
                d.path.display()
            ),
            Err(why) => trig_schema::stderrln!(
                "trig-init: no source lines for {}: {}",
                shown(&k.spec, false),
                shown(why, false)
            ),
        }
    }
    found
}

/// A temporary file of the command, removed on every path out.
fn temp_file(path: PathBuf, bytes: &[u8]) -> Result<TempFile, Error> {
    TempFile::create(path.clone(), bytes).map_err(|e| infra(format!("{}: {e}", path.display())))
}
