//! The one accounting every gate decides its exit status by: of each
//! benchmark asked for, whether it was measured on both sides and with
//! what verdict, or failed, went missing, was unsupported or is pending.
//! `compare`, `ab`, `history`, `sweep report` and `bisect.sh` (through
//! compare) count their benchmarks here, and the exporters take each
//! benchmark's status from [`exported`], so that no gate passes on what it
//! did not compare (docs/faults.md, "What each gate does").

use crate::assessment::Verdict;
use serde::Serialize;
use trig_schema::exit;

/// What the benchmarks of one gate came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub regressed: usize,
    /// Failed or timed out on a side (no `ok` result there).
    pub failed: usize,
    /// Asked for on one side and absent from the other, or a figure one
    /// side has and the other lacks (`ok` in BASE, `unsupported` in NEW
    /// among them: the kernel lost what the benchmark attaches to).
    pub missing: usize,
    /// Compared to a verdict: improved, no change, within noise (and
    /// regressed, counted above as well).
    pub decided: usize,
    /// Compared, but the figures could not decide: unstable, inconclusive.
    pub undecided: usize,
    /// Unsupported on a side that the other did not measure either.
    pub unsupported: usize,
    /// A step at the newest result, which the next one confirms or drops.
    pub pending: usize,
}

impl Tally {
    pub fn of(verdicts: impl IntoIterator<Item = Verdict>) -> Tally {
        let mut t = Tally::default();
        for v in verdicts {
            t.add(v);
        }
        t
    }

    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Regressed => {
                self.regressed += 1;
                self.decided += 1;
            }
            Verdict::Failed => self.failed += 1,
            Verdict::Missing => self.missing += 1,
            Verdict::Unsupported => self.unsupported += 1,
            Verdict::Improved | Verdict::WithinNoise | Verdict::NoChange => self.decided += 1,
            Verdict::Unstable | Verdict::Inconclusive => self.undecided += 1,
        }
    }

    /// Benchmarks whose figures were set against each other.
    pub fn compared(&self) -> usize {
        self.decided + self.undecided
    }

    /// Nothing was decided: no benchmark came to a verdict.
    pub fn nothing_decided(&self) -> bool {
        self.decided == 0
    }

    /// The exit status: 1 when something regressed, failed or went
    /// missing, or when nothing was decided; else 0. Pending steps wait
    /// for the next result and never fail a gate.
    pub fn status(&self) -> u8 {
        if self.regressed + self.failed + self.missing > 0 || self.nothing_decided() {
            exit::FAILED
        } else {
            exit::OK
        }
    }

    /// Why the gate did not pass, when it did not for want of a verdict
    /// ("2 failed, 1 missing; nothing compared"); None when it passed or
    /// only regressions failed it (their own lines say so).
    pub fn shortfall(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.failed, "failed"),
            (self.missing, "missing"),
            (self.unsupported, "unsupported"),
            (self.undecided, "undecided (unstable or inconclusive)"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let nothing = self.nothing_decided();
        if self.failed + self.missing == 0 && !nothing {
            return None;
        }
        let mut line = if parts.is_empty() {
            "no benchmark".to_string()
        } else {
            parts.join(", ")
        };
        if nothing {
            line.push_str("; nothing compared to a verdict");
        }
        Some(line)
    }
}

/// A benchmark's status in the exports (KCIDB's test statuses; BMF and
/// the HTML page show the verdict itself): a regression fails, a
/// benchmark that did not run is an error, one that cannot run is
/// skipped, one without a figure on a side is a miss, and the rest are
/// performance figures, done; a pending step is done, not failed.
pub fn exported(v: Verdict, pending: bool) -> &'static str {
    match v {
        Verdict::Regressed if !pending => "FAIL",
        Verdict::Failed => "ERROR",
        Verdict::Unsupported => "SKIP",
        Verdict::Missing => "MISS",
        _ => "DONE",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    #[test]
    fn nothing_decided_never_passes() {
        assert_eq!(Tally::of([]).status(), 1);
        assert_eq!(Tally::of([Unsupported, Unsupported]).status(), 1);
        assert_eq!(Tally::of([Inconclusive, Unstable]).status(), 1);
        assert_eq!(
            Tally::of([Unsupported]).shortfall().as_deref(),
            Some("1 unsupported; nothing compared to a verdict")
        );
    }

    #[test]
    fn a_failure_or_a_missing_benchmark_fails_beside_verdicts() {
        assert_eq!(Tally::of([NoChange, Failed]).status(), 1);
        assert_eq!(Tally::of([NoChange, Missing]).status(), 1);
        assert_eq!(Tally::of([NoChange, Regressed]).status(), 1);
        assert_eq!(Tally::of([Regressed]).shortfall(), None);
    }

    #[test]
    fn decided_benchmarks_pass_beside_unsupported_and_undecided_ones() {
        let t = Tally::of([NoChange, Improved, WithinNoise, Unsupported, Inconclusive]);
        assert_eq!((t.status(), t.compared(), t.shortfall()), (0, 4, None));
    }

    #[test]
    fn exported_statuses() {
        assert_eq!(exported(Regressed, false), "FAIL");
        assert_eq!(exported(Regressed, true), "DONE");
        assert_eq!(exported(Missing, false), "MISS");
        assert_eq!(exported(Failed, false), "ERROR");
        assert_eq!(exported(Unsupported, false), "SKIP");
        assert_eq!(exported(Improved, false), "DONE");
    }
}
