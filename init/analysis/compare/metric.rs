//! What is compared of a benchmark: its rate or its per-event overhead.

use crate::report::{BenchResult, Better, Status};
use serde::Serialize;

/// What is compared: the raw rate or the per-event overhead over the
/// benchmark's baseline in the same boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Rate,
    Overhead,
}

impl Metric {
    pub fn parse_choice(s: &str) -> Result<Vec<Metric>, String> {
        match s {
            "rate" => Ok(vec![Metric::Rate]),
            "overhead" => Ok(vec![Metric::Overhead]),
            "both" => Ok(vec![Metric::Rate, Metric::Overhead]),
            _ => Err(format!(
                "--metric must be rate, overhead or both, not '{s}'"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Rate => "rate",
            Metric::Overhead => "overhead",
        }
    }

    pub fn value(self, r: &BenchResult) -> Option<f64> {
        if r.status != Status::Ok {
            return None;
        }
        match self {
            Metric::Rate => r.summary.as_ref().map(|s| s.mean),
            Metric::Overhead => r.overhead_ns.as_ref().map(|o| o.ns_per_event),
        }
    }

    /// The rate improves as the benchmark says; a cost always downwards.
    pub fn better(self, r: &BenchResult) -> Better {
        match self {
            Metric::Rate => r.better,
            Metric::Overhead => Better::Lower,
        }
    }
}
