//! `compare --format json`: the comparison for machines.

use crate::people::pieces::ORDER;
use serde::Serialize;
use std::collections::BTreeMap;
use trig_analysis::compare::Comparison;

/// Version of compare's JSON. 1: the first to carry one, with `units`,
/// `counts` per verdict and `q`, the p adjusted across the comparison.
/// Benchmarks profiled on both sides carry `movers` (an added field).
pub const JSON_SCHEMA_VERSION: u32 = 1;

/// The comparison with what a consumer needs to read it without knowing
/// the meter: the version, the units, and how many of each verdict.
pub fn comparison(c: &Comparison) -> String {
    #[derive(Serialize)]
    struct Units {
        rate: &'static str,
        cost: &'static str,
    }
    #[derive(Serialize)]
    struct Json<'a> {
        schema_version: u32,
        units: Units,
        counts: BTreeMap<&'static str, usize>,
        #[serde(flatten)]
        comparison: &'a Comparison,
    }
    let doc = Json {
        schema_version: JSON_SCHEMA_VERSION,
        units: Units {
            rate: c.meter.rate_unit(),
            cost: c.meter.cost_unit(),
        },
        counts: ORDER.iter().map(|v| (v.as_str(), c.count(*v))).collect(),
        comparison: c,
    };
    serde_json::to_string_pretty(&doc).expect("comparison serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use trig_analysis::bisect::{decide, effect, parse_comparison, BisectStep};
    use trig_analysis::fixtures::comparison;

    /// What `scripts/bisect.sh` decides from reads this export.
    #[test]
    fn reads_what_compare_exports() {
        let c = comparison(&[("rename-base", 1.0)], &[("rename-base", 0.99)], None);
        let text = super::comparison(&c);
        let changes = parse_comparison(&text).unwrap();
        let e = effect(&changes);
        assert_eq!(e.keys().collect::<Vec<_>>(), ["rename-base rate"]);
        assert!((e["rename-base rate"] + 1.0).abs() < 1e-9, "{e:?}");
        let d = decide(&e, Ok(changes));
        assert_eq!(
            (d.step, d.why.as_str()),
            (
                BisectStep::Bad,
                "rename-base rate -1.0% of -1.0%: median fraction 1.00"
            )
        );
    }
}
