//! A result's identity: what must be equal for two results' figures to be
//! mixed (compared, merged, put in one history). Under the icount meter a
//! figure does not depend on the host, but it does on the emulated machine
//! (QEMU's version, the machine type, the CPU model and the features it
//! gives the kernel, whose alternatives follow them) and on trig-init's
//! own build; so those are part of it there, and the whole of it is a
//! check that a merge of runners' results can trust.

use crate::{Meter, RunSet};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One part of the identity, in the order a mismatch is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    /// A rate per second and one per 10^9 instructions are different
    /// quantities, whatever their digits.
    Meter,
    Architecture,
    Accelerator,
    Qemu,
    Machine,
    CpuModel,
    /// The simulated caches and cycle weights of `--cache` ("none"
    /// without): another model's misses are other figures.
    CacheModel,
    /// QEMU's `-icount shift` (`--icount-shift`): the timer ticks come
    /// 2^shift times as often an instruction, their work with them.
    IcountShift,
    /// The guest's CPUID feature words (x86-64), read by trig-init itself
    /// so that they do not depend on which flags the kernel knows.
    CpuFeatures,
    Cpus,
    /// The counts include the producers' own code and layout: another
    /// build of trig-init moved rename-base by 0.3% and the uprobe family
    /// by 3% on one kernel.
    Build,
    Parameters,
    /// The benchmarks asked for (`--filter`): another set is another
    /// series, whose missing benchmarks would read as lost.
    Benchmarks,
}

impl Field {
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Meter => "meter",
            Field::Architecture => "architecture",
            Field::Accelerator => "accelerator",
            Field::Qemu => "QEMU version",
            Field::Machine => "machine type",
            Field::CpuModel => "CPU model",
            Field::CacheModel => "cache model (--cache)",
            Field::IcountShift => "icount shift (--icount-shift)",
            Field::CpuFeatures => "CPU features (CPUID)",
            Field::Cpus => "CPUs",
            Field::Build => "trig-init build (icount counts its code too)",
            Field::Parameters => "parameters",
            Field::Benchmarks => "benchmark set (--filter)",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a field reads as in a file written before it was recorded.
pub const UNRECORDED: &str = "unrecorded";

/// The identity of one or more results: every value each field takes
/// (more than one: the results mix them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identity(BTreeMap<Field, BTreeSet<String>>);

impl Identity {
    /// The identity of these results together.
    pub fn of<'a>(sets: impl IntoIterator<Item = &'a RunSet>) -> Identity {
        let mut id = Identity::default();
        for s in sets {
            id.add_set(s);
        }
        id
    }

    fn add(&mut self, field: Field, value: impl Into<String>) {
        self.0.entry(field).or_default().insert(value.into());
    }

    fn add_set(&mut self, s: &RunSet) {
        let recorded = |v: &Option<String>| v.clone().unwrap_or_else(|| UNRECORDED.into());
        self.add(Field::Meter, s.vm.meter.as_str());
        self.add(Field::Architecture, s.vm.arch.clone());
        self.add(Field::Accelerator, s.vm.accel.clone());
        self.add(Field::Cpus, s.vm.cpus.to_string());
        let icount = s.vm.meter == Meter::Icount;
        if icount {
            self.add(Field::Qemu, recorded(&s.vm.qemu));
            self.add(Field::Machine, recorded(&s.vm.machine));
            self.add(Field::CpuModel, recorded(&s.vm.cpu));
            self.add(Field::CacheModel, s.vm.cache.as_deref().unwrap_or("none"));
            self.add(Field::IcountShift, s.vm.icount_shift.to_string());
        }
        for r in s.runs.iter().filter_map(|r| r.report.as_ref()) {
            if icount {
                let cpuid = r.system.cpu.as_ref().and_then(|c| c.cpuid.clone());
                self.add(Field::CpuFeatures, recorded(&cpuid));
                self.add(
                    Field::Build,
                    format!("{} {}", r.tool.version, r.tool.git_rev),
                );
            }
            self.add(Field::Parameters, r.params.signature());
            self.add(Field::Benchmarks, r.params.benchmark_set());
        }
    }

    /// Fields with more than one value: results that mix them.
    pub fn mixed(&self) -> impl Iterator<Item = (Field, Vec<&str>)> {
        self.0
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(f, v)| (*f, v.iter().map(String::as_str).collect()))
    }

    /// Each field on which the two differ, in [`Field`] order.
    pub fn mismatches(&self, other: &Identity) -> Vec<Mismatch> {
        let fields: BTreeSet<Field> = self.0.keys().chain(other.0.keys()).copied().collect();
        let values = |id: &Identity, f: Field| -> Vec<String> {
            id.0.get(&f)
                .map_or_else(|| vec![UNRECORDED.into()], |v| v.iter().cloned().collect())
        };
        fields
            .into_iter()
            .filter_map(|field| {
                let (a, b) = (values(self, field), values(other, field));
                (a != b).then_some(Mismatch { field, a, b })
            })
            .collect()
    }
}

/// A field on which two results differ, with each one's values.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub field: Field,
    pub a: Vec<String>,
    pub b: Vec<String>,
}

impl Mismatch {
    /// "FIELD: A_LABEL a vs B_LABEL b".
    pub fn describe(&self, a_label: &str, b_label: &str) -> String {
        format!(
            "{}: {a_label} {} vs {b_label} {}",
            self.field,
            self.a.join(" | "),
            self.b.join(" | ")
        )
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} differs: {} vs {}",
            self.field,
            self.a.join(" | "),
            self.b.join(" | ")
        )
    }
}

/// Whether the figures of `a` and `b` may be mixed (compared, merged):
/// Err names the first field on which they differ, with both values.
/// Under the time meter only the meter, architecture, accelerator, CPU
/// count and parameters count; under icount also the emulated machine
/// and trig-init's build.
pub fn compatible(a: &RunSet, b: &RunSet) -> Result<(), Mismatch> {
    match Identity::of([a])
        .mismatches(&Identity::of([b]))
        .into_iter()
        .next()
    {
        Some(m) => Err(m),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One boot of an icount results file on QEMU 10.0.2's Haswell-v4.
    fn counted() -> RunSet {
        serde_json::from_value(json!({
            "schema_version": 4,
            "kernel": {"spec": "x", "path": "", "release": "6.1.0"},
            "vm": {"arch": "x86_64", "accel": "tcg", "meter": "icount", "cpus": 1,
                "memory": "1G", "append": "", "qemu": "10.0.2",
                "machine": "pc-i440fx-10.0", "cpu": "Haswell-v4"},
            "runs": [{"index": 1, "status": "ok", "console_log": "", "wall_s": 1.0,
                "report": {"schema_version": 4,
                    "tool": {"name": "trig-init", "version": "0.1.0", "git_rev": "abc"},
                    "system": {"release": "6.1.0", "version": "", "machine": "x86_64",
                        "cmdline": "", "cpus": 1, "pid1": true,
                        "cpu": {"model": "Haswell", "flags": ["fpu"], "cpuid": "1.0:306c1"}},
                    "capabilities": {},
                    "params": crate::Params::run_defaults(),
                    "mounts": [], "results": [], "outcome": {"status": "complete"}}}]
        }))
        .unwrap()
    }

    #[test]
    fn equal_machines_are_compatible() {
        assert_eq!(compatible(&counted(), &counted()), Ok(()));
    }

    #[test]
    fn the_first_differing_field_is_named_with_both_values() {
        let mut b = counted();
        b.vm.qemu = Some("9.2.1".into());
        b.vm.cpu = Some("max".into());
        let m = compatible(&counted(), &b).unwrap_err();
        assert_eq!(m.field, Field::Qemu);
        assert_eq!(m.to_string(), "QEMU version differs: 10.0.2 vs 9.2.1");
        let mut b = counted();
        b.vm.icount_shift = 2;
        let shift_0 = serde_json::to_string(&counted()).unwrap();
        assert!(!shift_0.contains("icount_shift"), "files as before it");
        let m = compatible(&counted(), &b).unwrap_err();
        assert_eq!(
            m.to_string(),
            "icount shift (--icount-shift) differs: 0 vs 2"
        );
        let mut b = counted();
        b.runs[0].report.as_mut().unwrap().system.cpu = None;
        let m = compatible(&counted(), &b).unwrap_err();
        assert_eq!(
            m.to_string(),
            "CPU features (CPUID) differs: 1.0:306c1 vs unrecorded"
        );
    }

    /// Timed figures carry the host's noise: the machine is not compared.
    #[test]
    fn the_time_meter_compares_no_machine() {
        let (mut a, mut b) = (counted(), counted());
        b.vm.qemu = Some("9.2.1".into());
        a.vm.meter = Meter::Time;
        b.vm.meter = Meter::Time;
        assert_eq!(compatible(&a, &b), Ok(()));
        a.vm.cpus = 2;
        assert_eq!(compatible(&a, &b).unwrap_err().field, Field::Cpus);
    }

    /// A version-3 file (no machine recorded) reads, and under icount is
    /// not silently mixed with a version-4 one.
    #[test]
    fn an_older_file_reads_as_unrecorded() {
        let mut old = counted();
        (old.vm.qemu, old.vm.machine, old.vm.cpu) = (None, None, None);
        let json = serde_json::to_value(&old).unwrap();
        assert!(json["vm"].get("qemu").is_none());
        let m = compatible(&old, &counted()).unwrap_err();
        assert_eq!(
            m.describe("A", "B"),
            "QEMU version: A unrecorded vs B 10.0.2"
        );
    }
}
