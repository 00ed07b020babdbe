//! `--profile`: where each benchmark's instructions went. The QEMU plugin
//! (plugin/) counts the guest kernel's instructions per translated block
//! inside the windows the guest marks around its measured samples; the
//! guest hands over its kallsyms; this module names the blocks and turns
//! them into instructions per event, per function.

use crate::boot::kernel::Arch;
use crate::boot::qemu;
use crate::report::{FunctionCost, KernelSymbols, Profile, Report, Status};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The plugin's file name, as cargo builds it.
pub const PLUGIN_FILE: &str = "libtrig_plugin.so";

/// Code outside the kernel image: BPF programs, trampolines, kprobe slots.
pub const JIT: &str = "[jit]";

/// The plugin: `TRIG_INIT_PLUGIN`, else the first [`PLUGIN_FILE`] in the
/// folders above this executable (scripts/build.sh puts it in target/).
pub fn plugin_path() -> Result<PathBuf, String> {
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
pub fn qemu_arg(plugin: &Path, out: &Path) -> String {
    let esc = |p: &Path| p.display().to_string().replace(',', ",,");
    format!("file={},out={}", esc(plugin), esc(out))
}

/// Loads the plugin into an empty QEMU once, so that a QEMU built without
/// plugins, or with an older plugin API than the plugin's, is refused
/// before anything boots, in QEMU's own words.
pub fn probe(arch: Arch, plugin: &Path) -> Result<(), String> {
    let bin = qemu::binary(arch);
    let arg = qemu_arg(plugin, Path::new("/dev/null"));
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

/// The plugin's output: kernel instructions per block start address, per
/// window; only windows with their `end` line are complete.
pub fn parse_windows(text: &str) -> Result<BTreeMap<u32, Vec<(u64, u64)>>, String> {
    let mut done = BTreeMap::new();
    let mut open: Option<(u32, Vec<(u64, u64)>)> = None;
    for (i, line) in text.lines().enumerate() {
        let bad = || format!("profile line {}: '{line}' is not plugin output", i + 1);
        if let Some(w) = line.strip_prefix("window ") {
            open = Some((w.parse().map_err(|_| bad())?, Vec::new()));
        } else if let Some(w) = line.strip_prefix("end ") {
            let (n, counts) = open.take().ok_or_else(bad)?;
            if w.parse() != Ok(n) {
                return Err(bad());
            }
            done.insert(n, counts);
        } else {
            let (addr, n) = line.split_once(' ').ok_or_else(bad)?;
            let addr = u64::from_str_radix(addr, 16).map_err(|_| bad())?;
            let n = n.parse().map_err(|_| bad())?;
            open.as_mut().ok_or_else(bad)?.1.push((addr, n));
        }
    }
    Ok(done)
}

/// Names addresses: the function a text address is in, or [`JIT`].
pub struct Symbolizer {
    addrs: Vec<u64>,
    names: Vec<String>,
    end: u64,
}

impl Symbolizer {
    pub fn new(s: &KernelSymbols) -> Result<Self, String> {
        if s.deltas.len() != s.names.len() {
            return Err("kernel symbols: addresses and names do not pair up".into());
        }
        let mut at = s.base;
        let addrs = s
            .deltas
            .iter()
            .map(|d| {
                at = at.saturating_add(*d);
                at
            })
            .collect();
        Ok(Symbolizer {
            addrs,
            names: s.names.clone(),
            end: s.end,
        })
    }

    pub fn name(&self, addr: u64) -> &str {
        if addr >= self.end {
            return JIT;
        }
        match self.addrs.partition_point(|&a| a <= addr) {
            0 => JIT,
            i => &self.names[i - 1],
        }
    }
}

/// The events and instructions of a result's measured samples: under the
/// icount meter a guest nanosecond is one instruction.
fn window_totals(samples: &[crate::report::Sample]) -> (f64, f64) {
    samples
        .iter()
        .filter(|s| !s.warmup)
        .fold((0.0, 0.0), |(events, insns), s| {
            (
                events + (s.mps * s.interval_s * 1e6).round(),
                insns + s.interval_s * 1e9,
            )
        })
}

/// A function's name without the suffixes of the compiler's clones and
/// split parts (`.constprop.0`, `.isra.0`, `.part.0`, `.cold`), which come
/// and go between builds: one function, one figure.
pub fn function_of(symbol: &str) -> &str {
    symbol.split('.').next().unwrap_or(symbol)
}

/// One window's counts as a profile per event.
pub fn profile(counts: &[(u64, u64)], sym: &Symbolizer, events: f64, insns: f64) -> Profile {
    let mut by_fn: HashMap<&str, u64> = HashMap::new();
    for &(addr, n) in counts {
        *by_fn.entry(function_of(sym.name(addr))).or_default() += n;
    }
    let kernel = by_fn.values().sum::<u64>() as f64 / events;
    let mut functions: Vec<FunctionCost> = by_fn
        .into_iter()
        .map(|(name, n)| FunctionCost {
            name: name.to_string(),
            insn: n as f64 / events,
        })
        .filter(|f| f.insn >= Profile::FLOOR)
        .collect();
    functions.sort_by(|a, b| b.insn.total_cmp(&a.insn).then(a.name.cmp(&b.name)));
    Profile {
        total: insns / events,
        kernel,
        functions,
    }
}

/// Fills in the profile of every `ok` result with a window; an error says
/// what could not be profiled, for the boot's message (results are kept).
pub fn attach(report: &mut Report, syms: &KernelSymbols, plugin_out: &str) -> Result<(), String> {
    let sym = Symbolizer::new(syms)?;
    let windows = parse_windows(plugin_out)?;
    let mut missing = Vec::new();
    for r in &mut report.results {
        let Some(w) = r.window else { continue };
        if r.status != Status::Ok {
            continue;
        }
        let (events, insns) = window_totals(&r.samples);
        match windows.get(&w) {
            Some(counts) if events > 0.0 => r.profile = Some(profile(counts, &sym, events, insns)),
            _ => missing.push(r.name.clone()),
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "no complete profile window for {}",
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::kallsyms;

    fn syms() -> KernelSymbols {
        kallsyms::parse(
            "ffffffff81000000 T do_syscall_64\n\
             ffffffff81000100 t strnlen\n\
             ffffffff81000200 T sized_strscpy\n\
             ffffffff82000000 B _end\n",
        )
    }

    #[test]
    fn addresses_are_named_by_the_function_they_fall_in() {
        let s = Symbolizer::new(&syms()).unwrap();
        assert_eq!(s.name(0xffffffff81000000), "do_syscall_64");
        assert_eq!(s.name(0xffffffff810000ff), "do_syscall_64");
        assert_eq!(s.name(0xffffffff81000150), "strnlen");
        assert_eq!(s.name(0xffffffff81ffffff), "sized_strscpy");
        // BPF JIT and trampolines live outside the image, on both sides
        assert_eq!(s.name(0xffffffffa0001000), JIT);
        assert_eq!(s.name(0xffff800000001000), JIT);
    }

    #[test]
    fn compiler_clones_count_as_their_function() {
        assert_eq!(
            function_of("syscall_trace_enter.constprop.0"),
            "syscall_trace_enter"
        );
        assert_eq!(
            function_of("perf_call_bpf_enter.isra.0"),
            "perf_call_bpf_enter"
        );
        assert_eq!(function_of("do_syscall_64"), "do_syscall_64");
        assert_eq!(function_of(JIT), JIT);
    }

    #[test]
    fn windows_parse_and_a_cut_one_is_left_out() {
        let w =
            parse_windows("window 0\nffffffff81000000 30\nend 0\nwindow 1\nffffffff81000100 5\n")
                .unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[&0], [(0xffffffff81000000, 30)]);
        assert!(parse_windows("window 0\nnonsense\n").is_err());
        assert!(parse_windows("window 0\nend 1\n").is_err());
    }

    #[test]
    fn counts_become_instructions_per_event() {
        let s = Symbolizer::new(&syms()).unwrap();
        let counts = [
            (0xffffffff81000000, 100),
            (0xffffffff81000010, 100),
            (0xffffffff81000100, 50),
            (0xffffffffa0000000, 30),
            // under the floor: counted in `kernel`, not listed
            (0xffffffff81000200, 0),
        ];
        let p = profile(&counts, &s, 10.0, 4000.0);
        assert_eq!(p.total, 400.0);
        assert_eq!(p.kernel, 28.0);
        let listed: Vec<(&str, f64)> = p
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.insn))
            .collect();
        assert_eq!(
            listed,
            [("do_syscall_64", 20.0), ("strnlen", 5.0), (JIT, 3.0)]
        );
        assert_eq!(p.kernel_rest(), 0.0);
    }
}
