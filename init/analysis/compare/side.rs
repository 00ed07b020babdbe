//! What each side of a comparison was, whether the two can be compared,
//! and the results each holds for a benchmark.

use super::seen::Seen;
use super::{unmeasured, Metric};
use crate::input::Side;
use serde::Serialize;
use std::collections::BTreeSet;
use trig_schema::error::{self, Error};
use trig_schema::identity::{Field, Identity};
use trig_schema::Meter;

/// What one side of the comparison was.
#[derive(Debug, Clone, Serialize)]
pub struct SideInfo {
    pub files: Vec<String>,
    pub releases: Vec<String>,
    /// The kernels as the user named them (`-k` path, `debian:6.1`).
    pub specs: Vec<String>,
    pub commits: Vec<String>,
    /// The Debian packages the kernels came from, where they did.
    pub packages: Vec<String>,
    pub arch: Vec<String>,
    pub accel: Vec<String>,
    pub meter: Vec<Meter>,
    pub cpus: Vec<usize>,
    /// `--icount-shift` of its icount boots (0: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icount_shift: Vec<u32>,
    /// Boots with a report.
    pub runs: usize,
    /// Deliberate slowdowns in these boots (validation runs).
    pub inject: Vec<String>,
}

impl Side {
    pub(super) fn info(&self) -> SideInfo {
        fn distinct<T: Ord + Clone>(xs: impl Iterator<Item = T>) -> Vec<T> {
            xs.collect::<BTreeSet<T>>().into_iter().collect()
        }
        SideInfo {
            files: self.files.clone(),
            releases: distinct(self.sets.iter().map(|s| s.kernel.release.clone())),
            specs: distinct(self.sets.iter().map(|s| s.kernel.spec.clone())),
            commits: distinct(self.sets.iter().filter_map(|s| s.kernel.commit.clone())),
            packages: distinct(self.sets.iter().filter_map(|s| s.kernel.package.clone())),
            arch: distinct(self.sets.iter().map(|s| s.vm.arch.clone())),
            accel: distinct(self.sets.iter().map(|s| s.vm.accel.clone())),
            meter: distinct(self.sets.iter().map(|s| s.vm.meter.as_str()))
                .into_iter()
                .map(|m| {
                    if m == "icount" {
                        Meter::Icount
                    } else {
                        Meter::Time
                    }
                })
                .collect(),
            cpus: distinct(self.sets.iter().map(|s| s.vm.cpus)),
            icount_shift: distinct(self.sets.iter().map(|s| s.vm.icount_shift))
                .into_iter()
                .filter(|&n| n > 0)
                .collect(),
            runs: self.runs().count(),
            inject: distinct(
                self.runs()
                    .filter_map(|r| r.report.as_ref()?.params.inject.clone()),
            ),
        }
    }

    fn identity(&self) -> Identity {
        Identity::of(&self.sets)
    }
}

/// Why BASE and NEW cannot be compared: each field of their identity
/// (`report::identity`) on which they differ, or which varies within one
/// side.
///
/// On `metrics` that are all build-independent (the kernel's
/// instructions), trig-init's build does not matter; the cache model
/// matters only to the metrics it counts (the instructions are the same
/// with it or without).
pub fn differences(base: &Side, new: &Side, metrics: &[Metric]) -> Vec<String> {
    let (a, b) = (base.identity(), new.identity());
    let build_free = !metrics.is_empty() && metrics.iter().all(|m| m.build_independent());
    let cached = metrics.iter().any(|m| m.needs_cache());
    let counts = |f: Field| match f {
        Field::Build => !build_free,
        Field::CacheModel => cached,
        _ => true,
    };
    let mut out: Vec<String> = [("BASE", &a), ("NEW", &b)]
        .iter()
        .flat_map(|(side, id)| {
            id.mixed()
                .filter(move |(f, _)| counts(*f))
                .map(move |(f, v)| format!("{side} mixes {f}: {}", v.join(" | ")))
        })
        .collect();
    out.extend(
        a.mismatches(&b)
            .iter()
            .filter(|m| counts(m.field))
            .map(|m| m.describe("BASE", "NEW")),
    );
    out
}

/// The results of every boot for `name` on one side, with the boot's
/// pairing key.
pub(super) fn results<'a>(side: &'a Side, name: &str) -> Vec<Seen<'a>> {
    side.runs()
        .filter_map(|run| {
            let boot = &run.report.as_ref()?.results;
            Some(Seen {
                key: run.pairing.as_ref().map(|p| (p.session.clone(), p.round)),
                result: boot.iter().find(|b| b.name == name)?,
                boot,
            })
        })
        .collect()
}

/// What a comparison stands on: both sides have boots with a report and
/// one kernel each, and nothing else differs unless `force`; returns the
/// differences that `force` let through.
pub(super) fn comparable(
    base: &Side,
    new: &Side,
    (bi, ni): (&SideInfo, &SideInfo),
    (force, metrics): (bool, &[Metric]),
) -> Result<Vec<String>, Error> {
    if bi.runs == 0 || ni.runs == 0 {
        let which = if bi.runs == 0 { "BASE" } else { "NEW" };
        return Err(error::input(format!(
            "{which} has no boot with a report: nothing to compare"
        )));
    }
    for (which, side) in [("BASE", base), ("NEW", new)] {
        let boots: Vec<&[_]> = side
            .runs()
            .filter_map(|r| r.report.as_ref())
            .map(|r| r.results.as_slice())
            .collect();
        if let Some(why) = unmeasured(metrics, &boots) {
            return Err(error::input(format!("{which} {why}")));
        }
    }
    // a directory vm's default --out filled with several kernels: pooled,
    // their boots would read as one kernel's noise
    for (which, info) in [("BASE", bi), ("NEW", ni)] {
        for (what, kernels) in [("kernels", &info.releases), ("commits", &info.commits)] {
            if kernels.len() > 1 {
                return Err(error::input(format!(
                    "{which} holds the results of {} {what} ({}): a side is one kernel; \
                     name its files, or give each kernel its own --out directory",
                    kernels.len(),
                    kernels.join(", ")
                )));
            }
        }
    }
    let diffs = differences(base, new, metrics);
    if !diffs.is_empty() && !force {
        return Err(
            error::input("results are not comparable (--force compares anyway):").listing(diffs),
        );
    }
    Ok(diffs)
}

/// Every benchmark either side ran, in the order first seen.
pub(super) fn bench_names(base: &Side, new: &Side) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for side in [base, new] {
        for run in side.runs() {
            for r in &run.report.as_ref().expect("runs() has reports").results {
                if !names.contains(&r.name) {
                    names.push(r.name.clone());
                }
            }
        }
    }
    names
}
