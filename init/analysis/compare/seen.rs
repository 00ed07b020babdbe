//! What a side observed of a benchmark: its result in each boot, with
//! the boot's other results (its baseline's among them), which every
//! figure of a comparison is read from.

use super::metric::Metric;
use trig_schema::BenchResult;

/// One boot's result of a benchmark: the boot's pairing key, the result,
/// and every result of that boot (its baseline's among them).
pub(super) struct Seen<'a> {
    pub(super) key: Option<(String, usize)>,
    pub(super) result: &'a BenchResult,
    pub(super) boot: &'a [BenchResult],
}

impl Seen<'_> {
    pub(super) fn value(&self, metric: Metric) -> Option<f64> {
        metric.value(self.result, self.boot)
    }
}

pub(super) type Observed<'a> = [Seen<'a>];
