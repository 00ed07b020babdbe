//! What is compared of a benchmark: its rate or its per-event overhead.

use crate::report::{BenchResult, Better, Meter, Status};
use serde::Serialize;

/// What is compared: the raw rate or the per-event overhead over the
/// benchmark's baseline in the same boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Rate,
    Overhead,
    /// The kernel's instructions per event (`--profile`, icount): the
    /// producers' own code is not in it, so it does not depend on
    /// trig-init's build.
    Kernel,
}

impl Metric {
    pub fn parse_choice(s: &str) -> Result<Vec<Metric>, String> {
        match s {
            "rate" => Ok(vec![Metric::Rate]),
            "overhead" => Ok(vec![Metric::Overhead]),
            "both" => Ok(vec![Metric::Rate, Metric::Overhead]),
            "kernel" => Ok(vec![Metric::Kernel]),
            _ => Err(format!(
                "--metric must be rate, overhead, both or kernel, not '{s}'"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Rate => "rate",
            Metric::Overhead => "overhead",
            Metric::Kernel => "kernel",
        }
    }

    /// The unit of the metric's figures under `meter`.
    pub fn unit(self, meter: Meter) -> &'static str {
        match self {
            Metric::Rate => meter.rate_unit(),
            Metric::Overhead => meter.cost_unit(),
            Metric::Kernel => "kernel insn/event",
        }
    }

    /// Whether results of different trig-init builds compare on it.
    pub fn build_independent(self) -> bool {
        self == Metric::Kernel
    }

    pub fn value(self, r: &BenchResult) -> Option<f64> {
        if r.status != Status::Ok {
            return None;
        }
        match self {
            Metric::Rate => r.summary.as_ref().map(|s| s.mean),
            Metric::Overhead => r.overhead_ns.as_ref().map(|o| o.ns_per_event),
            Metric::Kernel => r.profile.as_ref().map(|p| p.kernel),
        }
    }

    /// The rate improves as the benchmark says; a cost always downwards.
    pub fn better(self, r: &BenchResult) -> Better {
        match self {
            Metric::Rate => r.better,
            Metric::Overhead | Metric::Kernel => Better::Lower,
        }
    }
}
