//! The QEMU plugin behind `--profile`, `--cache` and `-p N`'s coherence
//! model: found, tried once in an empty QEMU, and given its arguments.

use super::caches::Caches;
use crate::kernel::Arch;
use crate::qemu;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use trig_schema::error::{infra, Error};

/// The plugin's file name, as cargo builds it.
pub const PLUGIN_FILE: &str = "libtrig_plugin.so";

/// The plugin: `TRIG_INIT_PLUGIN`, else the first [`PLUGIN_FILE`] in the
/// folders above this executable (scripts/build.sh puts it in target/).
/// Not found is the host's (exit 4): a tool missing, as QEMU would be.
pub fn plugin_path() -> Result<PathBuf, Error> {
    find_plugin().map_err(infra)
}

fn find_plugin() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("TRIG_INIT_PLUGIN") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else if p.as_os_str().is_empty() {
            Err(format!(
                "TRIG_INIT_PLUGIN is set but empty: name the plugin ({PLUGIN_FILE}) or unset it"
            ))
        } else if p.is_dir() {
            Err(format!(
                "TRIG_INIT_PLUGIN={} is a directory: name the plugin file in it ({PLUGIN_FILE})",
                p.display()
            ))
        } else {
            Err(format!("TRIG_INIT_PLUGIN={}: no such file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("this executable: {e}"))?;
    exe.ancestors()
        .skip(1)
        .take(4)
        .map(|d| d.join(PLUGIN_FILE))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "--profile needs the QEMU plugin {PLUGIN_FILE} beside {} or above it \
                 (scripts/build.sh builds it), or TRIG_INIT_PLUGIN=PATH",
                exe.display()
            )
        })
}

/// The `-plugin` argument; QEMU's option syntax doubles commas in values.
pub fn qemu_arg(plugin: &Path, out: &Path, caches: Option<&Caches>, coherence: bool) -> String {
    let esc = |p: &Path| p.display().to_string().replace(',', ",,");
    let mut arg = format!("file={},out={}", esc(plugin), esc(out));
    if let Some(c) = caches {
        arg = format!("{arg},{}", c.plugin_args());
    }
    if coherence {
        // a miss stalls its vCPU what the model charges it
        let w = trig_schema::contention::Weights::MODEL;
        let (miss, hitm) = (w.miss_cycles as u64, w.hitm_cycles as u64);
        arg.push_str(&format!(",coherence=on,miss={miss},hitm={hitm}"));
    }
    arg
}

/// Loads the plugin into an empty QEMU once, so that a QEMU built without
/// plugins, or with an older plugin API than the plugin's, is refused
/// before anything boots, in QEMU's own words.
/// A refusal is the host's (exit 4): QEMU missing, or not one that runs
/// the plugin.
pub fn probe(arch: Arch, plugin: &Path) -> Result<(), Error> {
    load_once(arch, plugin).map_err(infra)
}

fn load_once(arch: Arch, plugin: &Path) -> Result<(), String> {
    let bin = qemu::binary(arch);
    let arg = qemu_arg(plugin, Path::new("/dev/null"), None, false);
    let mut child = Command::new(bin)
        .args([
            "-M",
            "none",
            "-display",
            "none",
            "-nodefaults",
            "-accel",
            "tcg",
        ])
        .args(["-plugin", &arg, "-S", "-monitor", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {bin}: {e} (is QEMU installed?)"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"quit\n");
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{bin}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{bin} cannot load the profiling plugin {} (it needs TCG plugin API 4, QEMU 9.2 or newer, built with plugins): {}",
        plugin.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}
