//! What `trig-init vm` writes: one results file a kernel, every boot of
//! it (a split run's parts among them), with the kernel, the machine it
//! booted on and the meter; the report of each boot is the guest's
//! ([`crate::Report`]).

use crate::Report;
use serde::{Deserialize, Serialize};

/// What `trig-init vm` writes for one kernel: every boot of it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunSet {
    pub schema_version: u32,
    /// When the command started (UTC, 20261130T012345Z): orders history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    pub kernel: KernelInfo,
    pub vm: VmInfo,
    pub runs: Vec<RunRecord>,
}

/// Whether `t` is a `created` a history can be ordered by: the UTC
/// timestamp 20261130T012345Z, which sorts as its text.
pub fn is_timestamp(t: &str) -> bool {
    let b = t.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    b.len() == 16 && digits(0..8) && b[8] == b'T' && digits(9..15) && b[15] == b'Z'
}

/// The first `n` characters of a commit id as recorded: never cut inside
/// a character, whatever a forged file holds.
pub fn abbrev(id: &str, n: usize) -> &str {
    id.char_indices().nth(n).map_or(id, |(i, _)| &id[..i])
}

/// Whether `id` is a git object name (hex digits): the only commit ids a
/// file name or a URL is made of.
pub fn is_object_name(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelInfo {
    /// As given on the command line (`debian:6.1`, a path).
    pub spec: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// `uname -r` inside the guest, once a boot reported it.
    pub release: String,
    /// The source commit the kernel was built from, when the caller knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// What the guest's clock counts, and so what a rate is per.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Meter {
    /// Wall-clock time: events per second, cost in ns per event.
    #[default]
    Time,
    /// QEMU's instruction counter (`-icount shift=0`): a guest nanosecond
    /// is one executed instruction, so a rate is events per 10^9
    /// instructions and a cost is instructions per event, whatever the
    /// host's load.
    Icount,
}

impl Meter {
    pub fn as_str(self) -> &'static str {
        match self {
            Meter::Time => "time",
            Meter::Icount => "icount",
        }
    }

    /// The unit of a rate (M events per second or per 10^9 instructions).
    pub fn rate_unit(self) -> &'static str {
        match self {
            Meter::Time => "M/s",
            Meter::Icount => "M/Ginsn",
        }
    }

    /// Digits to show beyond the time meter's: icount figures repeat to
    /// 1e-4 or better, so two more carry information.
    pub fn extra_digits(self) -> usize {
        match self {
            Meter::Time => 0,
            Meter::Icount => 2,
        }
    }

    /// The unit of a per-event cost over the baseline.
    pub fn cost_unit(self) -> &'static str {
        match self {
            Meter::Time => "ns/event",
            Meter::Icount => "insn/event",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VmInfo {
    pub arch: String,
    /// `kvm` or `tcg`: TCG numbers are emulated, not native.
    pub accel: String,
    /// Absent in version-1 files, which were all timed.
    #[serde(default)]
    pub meter: Meter,
    pub cpus: usize,
    pub memory: String,
    pub append: String,
    /// QEMU's version as `--version` prints it; absent before schema 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qemu: Option<String>,
    /// `-machine` and `-cpu` as given to QEMU; absent before schema 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// The simulated caches and cycle weights of `--cache`, part of the
    /// identity: another model's misses are other figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// QEMU's `-icount shift`: an instruction takes 2^shift ns of guest
    /// time, so the timer ticks come that much oftener an instruction;
    /// part of the identity. Absent: 0, as every icount boot before it.
    #[serde(default, skip_serializing_if = "crate::params::is_zero")]
    pub icount_shift: u32,
}

/// How one boot went (`RunRecord.status`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BootStatus {
    /// A complete report, every benchmark ok or unsupported.
    Ok,
    /// A complete report in which some benchmarks failed.
    Failed,
    /// A signal to trig-init ended the boot.
    Interrupted,
    /// A kernel panic or oops.
    Crashed,
    /// Killed after the timeout.
    Hung,
    /// Never reached /init.
    NoBoot,
    /// No complete, valid report.
    BadOutput,
}

impl BootStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            BootStatus::Ok => "ok",
            BootStatus::Failed => "failed",
            BootStatus::Interrupted => "interrupted",
            BootStatus::Crashed => "crashed",
            BootStatus::Hung => "hung",
            BootStatus::NoBoot => "no-boot",
            BootStatus::BadOutput => "bad-output",
        }
    }

    /// Whether the boot gave no complete report: the kernel, not a
    /// benchmark, is at fault.
    pub fn no_report(self) -> bool {
        matches!(
            self,
            BootStatus::Crashed | BootStatus::Hung | BootStatus::NoBoot | BootStatus::BadOutput
        )
    }
}

impl std::fmt::Display for BootStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One boot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub index: usize,
    pub status: BootStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub console_log: String,
    pub wall_s: f64,
    /// Seconds from QEMU start to the first benchmark starting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_s: Option<f64>,
    /// Which interleaved round this boot belongs to: boots of different
    /// kernels in the same session and round are paired by `compare`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<Pairing>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// Where the boot's time went, as the host saw its console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// When `vm --split` spread this run's matrix over several boots side
    /// by side: each of them (the run's report merges theirs; its
    /// timeline is theirs, and its wall time from the first one's start
    /// to the last one's end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartRecord>,
}

/// One boot of a run split over several (`RunRecord.parts`): its record
/// as a boot's, without a report (the run's merges them).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartRecord {
    /// Which part, `I/N`.
    pub part: String,
    /// The benchmarks it ran, in order: its own and the baselines they
    /// are measured against.
    pub benchmarks: Vec<String>,
    /// Its boot, recorded as a run's without a report.
    pub boot: RunRecord,
}

/// When each benchmark of a boot started and when its report began, in
/// seconds of the host's clock from QEMU's start.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Timeline {
    /// Each benchmark's point (`trig-kprobe`, `strncmp-helper/len=8`) and
    /// when it started.
    pub starts: Vec<(String, f64)>,
    /// When the report after the last benchmark came whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Pairing {
    /// The command's start time, shared by every kernel it booted.
    pub session: String,
    pub round: usize,
}
