//! `trig-init ab-proof DIR`: what `scripts/proofs/ab-proof.sh` concludes from one
//! `ab` run in DIR, whose `*-k1.json` and `*-k2.json` are one kernel
//! booted twice (A/A) and whose `*-k3.json` on are the same kernel with
//! a known slowdown injected (`trig.inject=BENCH:SPINS,...`, a ladder of
//! sizes) or other kernels (`--also`):
//!
//! - A/A: how many benchmarks compare flags, paired and unpaired, the
//!   largest change, the width of the change intervals, the per-boot CV
//!   against the CV of paired ratios;
//! - the ladder: for each injected benchmark and size, the measured
//!   change of each metric and its verdict; whether exactly the injected
//!   benchmarks were flagged; the smallest change flagged.
//!
//! Every figure comes from [`compare::compare`] with its default
//! settings, as `trig-init compare k1 kN` judges them.

//!
//! This returns the comparisons; `trig_export::ab_proof` writes the text.

use crate::compare::{self, Comparison};
use crate::input;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use trig_schema::error::{self, Error};

/// One `ab` run's comparisons, each with k1 as BASE.
pub struct AbRun {
    /// k2, paired by boot.
    pub paired: Comparison,
    /// k2, unpaired.
    pub unpaired: Comparison,
    /// Each kernel from k3 on, by its number.
    pub rungs: Vec<(usize, Comparison)>,
}

/// The results files of one `ab` run by kernel number: `NAME-kN.json`.
fn kernel_files(dir: &Path) -> Result<BTreeMap<usize, PathBuf>, String> {
    let mut files = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for path in entries.filter_map(|e| Some(e.ok()?.path())) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(n) = name
            .strip_suffix(".json")
            .and_then(|s| s.rsplit_once("-k"))
            .and_then(|(_, n)| n.parse::<usize>().ok())
        else {
            continue;
        };
        if let Some(old) = files.insert(n, path.clone()) {
            return Err(format!(
                "{}: two results files of kernel {n} ({} and {}): one ab run a directory",
                dir.display(),
                old.display(),
                path.display()
            ));
        }
    }
    if !(files.contains_key(&1) && files.contains_key(&2)) {
        return Err(format!(
            "{}: no *-k1.json and *-k2.json (the A/A pair of an ab run)",
            dir.display()
        ));
    }
    Ok(files)
}

/// The comparisons of the `ab` run in `dir`.
pub fn analyse(dir: &Path) -> Result<AbRun, Error> {
    let files = kernel_files(dir).map_err(error::input)?;
    let base = input::load(&[files[&1].clone()])?;
    let against = |n: usize, unpaired: bool| -> Result<Comparison, Error> {
        let new = input::load(&[files[&n].clone()])?;
        let settings = compare::Settings {
            unpaired,
            ..compare::Settings::default()
        };
        compare::compare(&base, &new, &settings).map_err(|e| e.context(format!("k1 against k{n}")))
    };
    let rungs = files
        .keys()
        .filter(|n| **n >= 3)
        .map(|&n| Ok((n, against(n, false)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(AbRun {
        paired: against(2, false)?,
        unpaired: against(2, true)?,
        rungs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::icount_results;
    use serde_json::Value;

    const A: &[(&str, f64)] = &[("rename-base", 1.0), ("rename-kprobe", 0.5)];

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("trig-ab-proof-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn reads_an_ab_run_directory() {
        let dir = scratch("run");
        let write = |n: usize, doc: Value| {
            std::fs::write(
                dir.join(format!("6.1.0-test-20260101T000000Z-k{n}.json")),
                doc.to_string(),
            )
            .unwrap()
        };
        write(1, icount_results(A, None));
        write(2, icount_results(A, None));
        write(3, icount_results(A, Some("rename-kprobe:4")));
        std::fs::write(dir.join("ab.txt"), "not results").unwrap();
        let run = analyse(&dir).unwrap();
        assert_eq!(run.paired.benches.len(), 2);
        assert!(run.unpaired.settings.unpaired && !run.paired.settings.unpaired);
        assert_eq!(run.rungs.iter().map(|r| r.0).collect::<Vec<_>>(), [3]);
        write(12, icount_results(A, None));
        std::fs::copy(
            dir.join("6.1.0-test-20260101T000000Z-k12.json"),
            dir.join("other-k2.json"),
        )
        .unwrap();
        let Err(e) = analyse(&dir) else {
            panic!("two k2 files")
        };
        assert!(e.message.contains("two results files of kernel 2"), "{e}");
        let Err(e) = analyse(&scratch("empty")) else {
            panic!("no files")
        };
        assert!(e.message.contains("no *-k1.json and *-k2.json"), "{e}");
    }
}
