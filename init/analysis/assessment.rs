//! What the analyses share underneath `compare`: a benchmark's verdict
//! and the default threshold of an entry count. `gate` and `changepoint`
//! take them from here, so that imports run one way (`compare` counts by
//! `gate`; `history` builds on `compare`, `changepoint` and `gate`).

use serde::Serialize;

/// Half an entry per event: "+1 trap per event" is flagged, the few
/// interrupts that land in a window (thousandths per event) are not.
pub const DEFAULT_THRESHOLD_ENTRIES: f64 = 0.5;

/// Most severe first: a benchmark's verdict is the most severe of its
/// metrics'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Failed,
    Missing,
    Unsupported,
    Regressed,
    Improved,
    Unstable,
    /// The test could not have reached significance with so few boots,
    /// whatever the data: neither a change nor its absence is shown.
    Inconclusive,
    WithinNoise,
    NoChange,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Failed => "failed",
            Verdict::Missing => "missing",
            Verdict::Unsupported => "unsupported",
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Unstable => "unstable",
            Verdict::Inconclusive => "inconclusive",
            Verdict::WithinNoise => "within-noise",
            Verdict::NoChange => "no-change",
        }
    }
}
