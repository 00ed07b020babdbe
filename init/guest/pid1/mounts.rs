//! The file systems BPF benchmarks need, as data. A failed mount is
//! reported, not fatal: the benchmarks that need it fail with a reason.

use nix::mount::{mount, MsFlags};
use std::path::Path;
use trig_schema::MountOutcome;

struct Spec {
    source: &'static str,
    target: &'static str,
    fstype: &'static str,
    /// Mounted by trig-init as a plain command only when missing; the
    /// others (proc, sysfs, devtmpfs) are only mounted as PID 1.
    plain_too: bool,
}

const MOUNTS: &[Spec] = &[
    Spec {
        source: "proc",
        target: "/proc",
        fstype: "proc",
        plain_too: false,
    },
    Spec {
        source: "sysfs",
        target: "/sys",
        fstype: "sysfs",
        plain_too: false,
    },
    Spec {
        source: "devtmpfs",
        target: "/dev",
        fstype: "devtmpfs",
        plain_too: false,
    },
    Spec {
        source: "bpf",
        target: "/sys/fs/bpf",
        fstype: "bpf",
        plain_too: true,
    },
    Spec {
        source: "debugfs",
        target: "/sys/kernel/debug",
        fstype: "debugfs",
        plain_too: true,
    },
    Spec {
        source: "tracefs",
        target: "/sys/kernel/tracing",
        fstype: "tracefs",
        plain_too: true,
    },
    // debugfs automounts tracefs here on current kernels; older ones need it
    Spec {
        source: "tracefs",
        target: "/sys/kernel/debug/tracing",
        fstype: "tracefs",
        plain_too: true,
    },
];

/// Mount points already mounted, from /proc/self/mounts.
fn mounted() -> Vec<String> {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

fn is_present(spec: &Spec, mounted: &[String]) -> bool {
    mounted.iter().any(|m| m == spec.target)
        // an automounted tracefs shows up only once something looks at it
        || (spec.target == "/sys/kernel/debug/tracing"
            && Path::new("/sys/kernel/debug/tracing/trace_pipe").exists())
}

/// Mounts what is missing; `pid1` mounts the basic file systems as well.
pub fn mount_all(pid1: bool) -> Vec<MountOutcome> {
    let mut out = Vec::new();
    for spec in MOUNTS.iter().filter(|s| pid1 || s.plain_too) {
        let outcome = |status: &str, error: Option<String>| MountOutcome {
            target: spec.target.into(),
            fstype: spec.fstype.into(),
            status: status.into(),
            error,
        };
        // re-read each time: /proc itself is the first mount
        if is_present(spec, &mounted()) {
            out.push(outcome("present", None));
            continue;
        }
        let res = std::fs::create_dir_all(spec.target)
            .map_err(|e| format!("creating {}: {e}", spec.target))
            .and_then(|()| {
                mount(
                    Some(spec.source),
                    spec.target,
                    Some(spec.fstype),
                    MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
                    None::<&str>,
                )
                .map_err(|e| format!("mount -t {} {}: {e}", spec.fstype, spec.target))
            });
        out.push(match res {
            Ok(()) => outcome("mounted", None),
            Err(e) => outcome("failed", Some(e)),
        });
    }
    out
}
