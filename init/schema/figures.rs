//! A family's own figures beside its rate, as upstream's bench reports
//! them besides hits: a Bloom filter's false positives. Each is a ratio
//! of counts, the same under either meter, compared and tracked as a
//! metric of its own.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    /// Lookups a Bloom filter let through that the hash map behind it did
    /// not hold, a share of all lookups (upstream prints them in percent
    /// of the lookups and themselves, counting them twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_positives: Option<f64>,
}

/// One of [`Figures`], a metric of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureKind {
    FalsePositives,
}

impl Figures {
    pub fn of(&self, kind: FigureKind) -> Option<f64> {
        match kind {
            FigureKind::FalsePositives => self.false_positives,
        }
    }

    /// A filter's figures: of `events` lookups, `false_hits` false
    /// positives; none where nothing was counted.
    pub fn filter(events: u64, false_hits: u64) -> Option<Figures> {
        (events > 0).then(|| Figures {
            false_positives: Some(false_hits as f64 / events as f64),
        })
    }
}
