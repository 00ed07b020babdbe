//! The BPF side: skeletons built by build.rs, loading only the programs a
//! benchmark needs, attaching them, and turning libbpf's errors into
//! `unsupported` (the kernel cannot) or `failed` (something broke).

use crate::caps;
use crate::registry::{Attach, Bench};
use crate::report::Capability;
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::{Link, Object, PrintLevel, ProgramMut, UprobeMultiOpts};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[allow(
    clippy::all,
    clippy::pedantic,
    dead_code,
    unused_imports,
    non_camel_case_types
)]
pub mod skel {
    pub mod trigger {
        include!(concat!(env!("OUT_DIR"), "/trigger.skel.rs"));
    }
    pub mod rename {
        include!(concat!(env!("OUT_DIR"), "/rename.skel.rs"));
    }
    pub mod strncmp {
        include!(concat!(env!("OUT_DIR"), "/strncmp.skel.rs"));
    }
}

/// Why a benchmark did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The kernel lacks what the benchmark needs.
    Unsupported(String),
    /// Something that should have worked did not.
    Failed(String),
}

/// libbpf's recent messages (the verifier log of a failed load among them),
/// quoted in failure reasons.
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
const LOG_KEEP: usize = 200;

fn on_libbpf_message(level: PrintLevel, msg: String) {
    if level == PrintLevel::Debug || std::env::var_os("TRIG_LIBBPF_DEBUG").is_some() {
        eprint!("libbpf: {msg}");
    }
    let mut log = LOG.lock().unwrap_or_else(|e| e.into_inner());
    // a verifier log arrives as one message of many lines
    log.extend(msg.lines().map(str::to_string));
    let excess = log.len().saturating_sub(LOG_KEEP);
    log.drain(..excess);
}

/// Routes libbpf's messages into the log above.
pub fn capture_libbpf_log() {
    let level = if std::env::var_os("TRIG_LIBBPF_DEBUG").is_some() {
        PrintLevel::Debug
    } else {
        PrintLevel::Warn
    };
    libbpf_rs::set_print(Some((level, on_libbpf_message)));
}

fn clear_log() {
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The most telling lines of the log: the last verifier lines before the
/// end of a load log, or libbpf's last messages.
fn log_tail() -> String {
    let log = LOG.lock().unwrap_or_else(|e| e.into_inner());
    let end = log
        .iter()
        .position(|l| l.contains("-- END PROG LOAD LOG --"))
        .unwrap_or(log.len());
    let lines: Vec<&str> = log[..end]
        .iter()
        .map(|l| l.trim())
        .filter(|l| {
            !l.is_empty()
                && !l.contains("-- BEGIN PROG LOAD LOG --")
                && !l.starts_with("processed ")
        })
        .collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

fn os_error(err: &libbpf_rs::Error) -> Option<i32> {
    let text = format!("{err:#}");
    let at = text.rfind("os error ")?;
    text[at + 9..]
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

/// Decides between `unsupported` and `failed` for an error at `stage`.
pub fn classify(
    stage: &str,
    err: &libbpf_rs::Error,
    bench: &Bench,
    caps: &BTreeMap<String, Capability>,
) -> Failure {
    let errno = os_error(err);
    let tail = log_tail();
    let lacking = !caps::has(caps, bench.feature);
    // EOPNOTSUPP, ENOTSUPP (kernel-internal 524), ENOENT/ESRCH (no such
    // attach point), or the verifier refusing the attach point itself.
    let refused = matches!(errno, Some(95 | 524 | 2 | 3))
        || tail.contains("not modifiable")
        || tail.contains("is not allowed")
        || tail.contains("unknown func");
    // strerror() has no name for the kernel-internal ENOTSUPP
    let mut reason = format!("{stage}: {err:#}").replace(
        "No error information (os error 524)",
        "ENOTSUPP (kernel errno 524)",
    );
    if !tail.is_empty() && !reason.contains(&tail) {
        reason.push_str(&format!(" [libbpf: {tail}]"));
    }
    if lacking || refused {
        // what is missing first: tables cut long reasons short
        Failure::Unsupported(format!(
            "needs {} ({}{}): {reason}",
            bench.feature.as_str(),
            bench.feature.needs(),
            if lacking {
                ", not found by the probe"
            } else {
                ""
            }
        ))
    } else {
        Failure::Failed(reason)
    }
}

/// Opens nothing itself: turns on autoload for `progs` only, then loads.
pub fn load<'o, S: OpenSkel<'o>>(
    mut open: S,
    progs: &[&str],
    bench: &Bench,
    caps: &BTreeMap<String, Capability>,
) -> Result<S::Output, Failure> {
    for mut p in open.open_object_mut().progs_mut() {
        if progs.iter().any(|n| p.name() == *n) {
            p.set_autoload(true);
        }
    }
    clear_log();
    open.load().map_err(|e| classify("load", &e, bench, caps))
}

pub fn program<'a>(obj: &'a Object, name: &str) -> Result<ProgramMut<'a>, Failure> {
    obj.progs_mut()
        .find(|p| p.name() == name)
        .ok_or_else(|| Failure::Failed(format!("BPF object has no program {name}")))
}

/// Attaches the benchmark's program; `uprobe_offset` is the file offset of
/// the trigger's target in /proc/self/exe for uprobe benchmarks.
pub fn attach(
    obj: &Object,
    bench: &Bench,
    uprobe_offset: Option<usize>,
    caps: &BTreeMap<String, Capability>,
) -> Result<Option<Link>, Failure> {
    let Some(name) = bench.prog else {
        return Ok(None);
    };
    let prog = program(obj, name)?;
    clear_log();
    let link = match bench.attach {
        Attach::None => return Ok(None),
        Attach::Section => prog.attach(),
        Attach::Uprobe { ret, multi } => {
            let offset = uprobe_offset
                .ok_or_else(|| Failure::Failed("uprobe without a target offset".into()))?;
            if multi {
                let opts = UprobeMultiOpts {
                    offsets: vec![offset],
                    retprobe: ret,
                    ..Default::default()
                };
                prog.attach_uprobe_multi_with_opts(-1, "/proc/self/exe", "", opts)
            } else {
                prog.attach_uprobe(ret, -1, "/proc/self/exe", offset)
            }
        }
    };
    link.map(Some)
        .map_err(|e| classify("attach", &e, bench, caps))
}
