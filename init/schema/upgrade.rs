//! Reading results written before schema 5, which lack each result's
//! `attach` and `baseline`: the guest records them now, so that analysis
//! and export need no registry (the benchmark tables are the guest's). Every
//! results file is read through `analysis::input::parse`, which upgrades
//! it here, once, so that no reader needs a fallback of its own.

use super::{BenchResult, Report};

/// The first schema whose results carry `attach` and `baseline`.
const RECORDED_SINCE: u32 = 5;

/// Each benchmark of the registry while schema 4 was current: its
/// baseline and its attach kind. Frozen, not asked of today's registry:
/// what an old result was measured against does not change with the
/// tables, and analysis does not depend on the guest's modules.
const SCHEMA_4: &[(&str, Option<&str>, &str)] = &[
    ("trig-base", None, "none"),
    ("trig-tp", Some("trig-base"), "tp"),
    ("trig-rawtp", Some("trig-base"), "raw_tp"),
    ("trig-kprobe", Some("trig-base"), "kprobe"),
    ("trig-kretprobe", Some("trig-base"), "kretprobe"),
    ("trig-kprobe-multi", Some("trig-base"), "kprobe.multi"),
    ("trig-kretprobe-multi", Some("trig-base"), "kretprobe.multi"),
    ("trig-fentry", Some("trig-base"), "fentry"),
    ("trig-fexit", Some("trig-base"), "fexit"),
    ("trig-fmodret", Some("trig-base"), "fmod_ret"),
    ("trig-fentry-sleep", Some("trig-base"), "fentry.s"),
    ("trig-kernel-count", None, "none"),
    ("trig-batch-kprobe", Some("trig-kernel-count"), "kprobe"),
    (
        "trig-batch-kretprobe",
        Some("trig-kernel-count"),
        "kretprobe",
    ),
    (
        "trig-batch-kprobe-multi",
        Some("trig-kernel-count"),
        "kprobe.multi",
    ),
    (
        "trig-batch-kretprobe-multi",
        Some("trig-kernel-count"),
        "kretprobe.multi",
    ),
    ("trig-batch-fentry", Some("trig-kernel-count"), "fentry"),
    ("trig-batch-fexit", Some("trig-kernel-count"), "fexit"),
    ("trig-batch-fmodret", Some("trig-kernel-count"), "fmod_ret"),
    ("trig-batch-tp", Some("trig-kernel-count"), "tp"),
    ("trig-batch-rawtp", Some("trig-kernel-count"), "raw_tp"),
    ("trig-usermode-count", None, "none"),
    ("trig-uprobe-nop", Some("trig-usermode-count"), "uprobe"),
    ("trig-uprobe-push", Some("trig-usermode-count"), "uprobe"),
    ("trig-uprobe-ret", Some("trig-usermode-count"), "uprobe"),
    ("trig-uprobe-nop5", Some("trig-usermode-count"), "uprobe"),
    (
        "trig-uretprobe-nop",
        Some("trig-usermode-count"),
        "uretprobe",
    ),
    (
        "trig-uretprobe-push",
        Some("trig-usermode-count"),
        "uretprobe",
    ),
    (
        "trig-uretprobe-ret",
        Some("trig-usermode-count"),
        "uretprobe",
    ),
    (
        "trig-uretprobe-nop5",
        Some("trig-usermode-count"),
        "uretprobe",
    ),
    (
        "trig-uprobe-multi-nop",
        Some("trig-usermode-count"),
        "uprobe.multi",
    ),
    (
        "trig-uprobe-multi-push",
        Some("trig-usermode-count"),
        "uprobe.multi",
    ),
    (
        "trig-uprobe-multi-ret",
        Some("trig-usermode-count"),
        "uprobe.multi",
    ),
    (
        "trig-uretprobe-multi-nop",
        Some("trig-usermode-count"),
        "uretprobe.multi",
    ),
    (
        "trig-uretprobe-multi-push",
        Some("trig-usermode-count"),
        "uretprobe.multi",
    ),
    (
        "trig-uretprobe-multi-ret",
        Some("trig-usermode-count"),
        "uretprobe.multi",
    ),
    ("trig-usdt", Some("trig-usermode-count"), "usdt"),
    ("rename-base", None, "none"),
    ("rename-kprobe", Some("rename-base"), "kprobe"),
    ("rename-kretprobe", Some("rename-base"), "kretprobe"),
    ("rename-rawtp", Some("rename-base"), "raw_tp"),
    ("rename-fentry", Some("rename-base"), "fentry"),
    ("rename-fexit", Some("rename-base"), "fexit"),
    ("strncmp-baseline", None, "tp"),
    ("strncmp-no-helper", Some("strncmp-baseline"), "tp"),
    ("strncmp-helper", Some("strncmp-baseline"), "tp"),
];

/// Fills in what a report older than schema 5 lacks.
pub fn upgrade(report: &mut Report) {
    if report.schema_version < RECORDED_SINCE {
        report.results.iter_mut().for_each(fill);
    }
}

/// Gives `r` the baseline and attach kind of its benchmark in schema 4's
/// registry; an unknown benchmark gets neither (to a reader of its time
/// it had no baseline either).
pub fn fill(r: &mut BenchResult) {
    if let Some((_, baseline, attach)) = SCHEMA_4.iter().find(|(b, ..)| *b == r.bench) {
        r.baseline = baseline.map(str::to_string);
        r.attach = Some(attach.to_string());
    }
}
