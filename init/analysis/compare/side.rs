//! What each side of a comparison was, whether the two can be compared,
//! and the results each holds for a benchmark.

use crate::analysis::input::Side;
use crate::report::identity::Identity;
use crate::report::{BenchResult, Meter};
use serde::Serialize;
use std::collections::BTreeSet;

/// What one side of the comparison was.
#[derive(Debug, Clone, Serialize)]
pub struct SideInfo {
    pub files: Vec<String>,
    pub releases: Vec<String>,
    pub commits: Vec<String>,
    pub arch: Vec<String>,
    pub accel: Vec<String>,
    pub meter: Vec<Meter>,
    pub cpus: Vec<usize>,
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
            commits: distinct(self.sets.iter().filter_map(|s| s.kernel.commit.clone())),
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
pub fn differences(base: &Side, new: &Side) -> Vec<String> {
    let (a, b) = (base.identity(), new.identity());
    let mut out: Vec<String> = [("BASE", &a), ("NEW", &b)]
        .iter()
        .flat_map(|(side, id)| {
            id.mixed()
                .map(move |(f, v)| format!("{side} mixes {f}: {}", v.join(" | ")))
        })
        .collect();
    out.extend(a.mismatches(&b).iter().map(|m| m.describe("BASE", "NEW")));
    out
}

/// The results of every boot for `name` on one side, with the boot's
/// pairing key.
pub(super) fn results<'a>(
    side: &'a Side,
    name: &str,
) -> Vec<(Option<(String, usize)>, &'a BenchResult)> {
    side.runs()
        .filter_map(|run| {
            let key = run.pairing.as_ref().map(|p| (p.session.clone(), p.round));
            let r = run
                .report
                .as_ref()?
                .results
                .iter()
                .find(|b| b.name == name)?;
            Some((key, r))
        })
        .collect()
}
