//! The decisions of `scripts/bisect.sh` under `git bisect run`: what BAD
//! regressed against GOOD (its effect), and whether the commit under test
//! shares it (its verdict). Both read what `compare --export-json` wrote,
//! so the script builds, boots and compares, and decides nothing itself.
//!
//! A step is judged against BAD's known effect rather than by a fresh
//! significance test: over the (benchmark, metric) pairs BAD regressed,
//! the step's change as a fraction of BAD's; the commit is bad when the
//! median fraction is above [`BAD_FRACTION`].

use crate::compare::{Metric, Verdict};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use trig_schema::error::{self, Error};

/// A step whose change is typically more than this fraction of BAD's
/// has BAD's regression.
pub const BAD_FRACTION: f64 = 0.5;

/// BAD's effect: each `"BENCHMARK METRIC"` that compare judged regressed,
/// with its change (as `bisect effect` prints it, a JSON object): in
/// percent, or in entries per event for an entry count (traps,
/// syscalls, interrupts), which often grows from none.
pub type Effect = BTreeMap<String, f64>;

/// One benchmark's metric as a comparison export has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `"BENCHMARK METRIC"`, the key of [`Effect`].
    pub key: String,
    /// The change in percent, or in entries per event for an entry
    /// count; None where compare had no figure (the export writes null).
    pub change: Option<f64>,
    /// compare's verdict, as exported (`regressed`, `failed`, ...).
    pub verdict: String,
}

impl Change {
    /// A change that can be weighed: a finite figure from a benchmark
    /// that ran on both sides.
    fn measured(&self) -> Option<f64> {
        let no_figure = [Verdict::Failed, Verdict::Missing, Verdict::Unsupported]
            .iter()
            .any(|v| v.as_str() == self.verdict);
        self.change.filter(|c| c.is_finite() && !no_figure)
    }
}

/// The part of compare's JSON export read here.
#[derive(Deserialize)]
struct Export {
    benches: Vec<ExportBench>,
}

#[derive(Deserialize)]
struct ExportBench {
    name: String,
    metrics: Vec<ExportMetric>,
}

#[derive(Deserialize)]
struct ExportMetric {
    metric: String,
    change_pct: Option<f64>,
    verdict: String,
    base: Option<ExportSide>,
    new: Option<ExportSide>,
}

#[derive(Deserialize)]
struct ExportSide {
    median: Option<f64>,
}

/// Whether `metric` (as exported) is an entry count.
fn is_count(metric: &str) -> bool {
    Metric::parse_choice(metric).is_ok_and(|m| m[0].is_count())
}

impl ExportMetric {
    /// An entry count's change is NEW − BASE per event, the figure its
    /// verdict was judged on; any other's in percent.
    fn change(&self) -> Option<f64> {
        if !is_count(&self.metric) {
            return self.change_pct;
        }
        let median = |s: &Option<ExportSide>| s.as_ref()?.median;
        Some(median(&self.new)? - median(&self.base)?)
    }
}

/// Every metric of every benchmark in a comparison export.
pub fn parse_comparison(text: &str) -> Result<Vec<Change>, Error> {
    let doc: Export = serde_json::from_str(text)
        .map_err(|e| error::input(format!("not a comparison (compare --export-json): {e}")))?;
    Ok(doc
        .benches
        .into_iter()
        .flat_map(|b| {
            b.metrics.into_iter().map(move |m| Change {
                key: format!("{} {}", b.name, m.metric),
                change: m.change(),
                verdict: m.verdict,
            })
        })
        .collect())
}

fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| error::input(format!("{}: {e}", path.display())))
}

/// Reads a comparison export; the error names the file.
pub fn read_comparison(path: &Path) -> Result<Vec<Change>, Error> {
    parse_comparison(&read(path)?).map_err(|e| e.context(path.display()))
}

/// What BAD regressed: empty when nothing did.
pub fn effect(changes: &[Change]) -> Effect {
    changes
        .iter()
        .filter(|c| c.verdict == Verdict::Regressed.as_str())
        .filter_map(|c| Some((c.key.clone(), c.measured()?)))
        .collect()
}

/// Reads an effect file; an effect with no usable change is an error,
/// since no commit could be judged against it.
pub fn read_effect(path: &Path) -> Result<Effect, Error> {
    let effect: Effect = serde_json::from_str(&read(path)?).map_err(|e| {
        error::input(format!(
            "{}: not an effect (bisect effect): {e}",
            path.display()
        ))
    })?;
    let usable: Effect = effect
        .into_iter()
        .filter(|(_, v)| v.is_finite() && *v != 0.0)
        .collect();
    if usable.is_empty() {
        return Err(error::input(format!(
            "{}: BAD regressed nothing: no commit can be judged against it",
            path.display()
        )));
    }
    Ok(usable)
}

/// What `git bisect run` is told about one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BisectStep {
    Good,
    Bad,
    /// Cannot be judged: `git bisect skip`.
    Skip,
}

impl BisectStep {
    pub fn as_str(self) -> &'static str {
        match self {
            BisectStep::Good => "good",
            BisectStep::Bad => "bad",
            BisectStep::Skip => "skip",
        }
    }

    /// `git bisect run`'s exit status for it.
    pub fn exit_code(self) -> u8 {
        match self {
            BisectStep::Good => 0,
            BisectStep::Bad => 1,
            BisectStep::Skip => 125,
        }
    }
}

/// A verdict and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub step: BisectStep,
    pub why: String,
}

impl Decision {
    fn skip(why: String) -> Self {
        Decision {
            step: BisectStep::Skip,
            why,
        }
    }
}

/// Judges a step's comparison (GOOD against the commit) by BAD's effect.
/// An unreadable comparison or one that measured none of BAD's
/// regressed benchmarks is a skip; metrics the step did not measure are
/// left out of the median.
pub fn decide(effect: &Effect, step: Result<Vec<Change>, Error>) -> Decision {
    let changes = match step {
        Ok(c) => c,
        Err(e) => return Decision::skip(format!("unreadable comparison: {e}")),
    };
    let now: BTreeMap<&str, &Change> = changes.iter().map(|c| (c.key.as_str(), c)).collect();
    let mut parts = Vec::new();
    let mut unmeasured = Vec::new();
    for (key, bad) in effect {
        match now.get(key.as_str()).map(|c| (c.measured(), &c.verdict)) {
            Some((Some(change), _)) => parts.push((key, change, *bad)),
            Some((None, verdict)) => unmeasured.push(format!("{key} {verdict}")),
            None => unmeasured.push(format!("{key} absent")),
        }
    }
    if parts.is_empty() {
        return Decision::skip(format!(
            "no benchmark of BAD's regression measured ({})",
            unmeasured.join(", ")
        ));
    }
    let fractions: Vec<f64> = parts.iter().map(|(_, now, bad)| now / bad).collect();
    // + 0.0: a zero fraction of a negative change prints as 0.00, not -0.00
    let fraction = trig_schema::stats::median(&fractions) + 0.0;
    let mut shown: Vec<String> = parts
        .iter()
        .map(|(key, now, bad)| {
            let metric = key.rsplit(' ').next().unwrap_or_default();
            let unit = if is_count(metric) { "/event" } else { "%" };
            format!("{key} {now:+.1}{unit} of {bad:+.1}{unit}")
        })
        .collect();
    shown.extend(unmeasured.iter().map(|u| format!("{u} (left out)")));
    Decision {
        step: if fraction > BAD_FRACTION {
            BisectStep::Bad
        } else {
            BisectStep::Good
        },
        why: format!("{}: median fraction {fraction:.2}", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(key: &str, change: Option<f64>, verdict: &str) -> Change {
        Change {
            key: key.into(),
            change,
            verdict: verdict.into(),
        }
    }

    fn bad_effect() -> Effect {
        [("rename-base rate", -0.5), ("rename-kprobe rate", -0.3)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    fn judge(changes: &[(&str, Option<f64>, &str)]) -> Decision {
        let c = changes.iter().map(|(k, v, w)| change(k, *v, w)).collect();
        decide(&bad_effect(), Ok(c))
    }

    /// Judges `changes` and checks the verdict, git bisect's exit status
    /// for it, and why.
    fn expect(changes: &[(&str, Option<f64>, &str)], step: BisectStep, exit: u8, why: &str) {
        let d = judge(changes);
        assert_eq!(
            (d.step, d.step.exit_code(), d.why.as_str()),
            (step, exit, why)
        );
    }

    #[test]
    fn the_step_with_bads_change_is_bad() {
        expect(
            &[
                ("rename-base rate", Some(-0.5), "regressed"),
                ("rename-kprobe rate", Some(-0.29), "regressed"),
                ("rename-base overhead", Some(3.0), "regressed"),
            ],
            BisectStep::Bad,
            1,
            "rename-base rate -0.5% of -0.5%, rename-kprobe rate -0.3% of -0.3%: median fraction 0.98",
        );
    }

    #[test]
    fn the_step_without_it_is_good() {
        let d = judge(&[
            ("rename-base rate", Some(0.0), "no-change"),
            ("rename-kprobe rate", Some(-0.01), "within-noise"),
        ]);
        assert_eq!(d.step, BisectStep::Good, "{}", d.why);
        assert_eq!(d.step.exit_code(), 0);
    }

    #[test]
    fn half_of_bads_change_is_still_good() {
        // the fraction must be above one half, as in bisect.sh's Python
        let d = judge(&[
            ("rename-base rate", Some(-0.25), "regressed"),
            ("rename-kprobe rate", Some(-0.15), "within-noise"),
        ]);
        assert_eq!(d.step, BisectStep::Good, "{}", d.why);
        assert!(d.why.ends_with("median fraction 0.50"), "{}", d.why);
    }

    #[test]
    fn a_missing_benchmark_is_left_out() {
        let d = judge(&[("rename-base rate", Some(-0.45), "regressed")]);
        assert_eq!(d.step, BisectStep::Bad, "{}", d.why);
        assert!(
            d.why.contains("rename-kprobe rate absent (left out)"),
            "{}",
            d.why
        );
    }

    #[test]
    fn a_failed_benchmark_is_left_out_not_read_as_a_change() {
        // a failed side exports a null or meaningless change: the Python
        // this replaces crashed on null, which git bisect read as "bad"
        expect(
            &[
                ("rename-base rate", None, "failed"),
                ("rename-kprobe rate", Some(-80.0), "missing"),
            ],
            BisectStep::Skip,
            125,
            "no benchmark of BAD's regression measured (rename-base rate failed, rename-kprobe rate missing)",
        );
    }

    #[test]
    fn nothing_of_bads_regression_measured_is_a_skip() {
        let d = judge(&[("trig-base rate", Some(-9.0), "regressed")]);
        assert_eq!(d.step, BisectStep::Skip);
        assert!(d.why.contains("rename-base rate absent"), "{}", d.why);
    }

    #[test]
    fn inconclusive_and_unstable_changes_still_count() {
        // the step is weighed against BAD's known effect, not tested for
        // significance: compare's inconclusive (too few boots) or
        // unstable (noisy) verdicts do not stop its change from counting
        let bad: &[(&str, Option<f64>, &str)] = &[
            ("rename-base rate", Some(-0.6), "inconclusive"),
            ("rename-kprobe rate", Some(-0.2), "unstable"),
        ];
        let good: &[(&str, Option<f64>, &str)] = &[
            ("rename-base rate", Some(0.1), "inconclusive"),
            ("rename-kprobe rate", Some(0.0), "unstable"),
        ];
        for (changes, step) in [(bad, BisectStep::Bad), (good, BisectStep::Good)] {
            let d = judge(changes);
            assert_eq!(d.step, step, "{}", d.why);
        }
    }

    #[test]
    fn an_unreadable_step_comparison_is_a_skip() {
        let d = decide(&bad_effect(), parse_comparison("{\"benches\": 3}"));
        assert_eq!(d.step, BisectStep::Skip);
        assert!(d.why.starts_with("unreadable comparison: "), "{}", d.why);
    }

    #[test]
    fn bads_effect_is_what_compare_judged_regressed() {
        let c = [
            change("rename-base rate", Some(-0.5), "regressed"),
            change("rename-base overhead", Some(0.1), "within-noise"),
            change("trig-base rate", Some(1.0), "improved"),
            change("rename-fexit rate", None, "regressed"),
        ];
        assert_eq!(
            effect(&c),
            [("rename-base rate".to_string(), -0.5)]
                .into_iter()
                .collect()
        );
        assert!(effect(&[]).is_empty());
    }

    fn scratch(name: &str, text: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("trig-bisect-{name}-{}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn an_effect_with_nothing_regressed_is_an_error_not_a_verdict() {
        for (name, text) in [("empty", "{}"), ("zero", "{\"a rate\": 0.0}")] {
            let e = read_effect(&scratch(name, text)).unwrap_err();
            assert!(e.message.contains("BAD regressed nothing"), "{e}");
        }
        let e = read_effect(&scratch("list", "[1]")).unwrap_err();
        assert!(e.message.contains("not an effect"), "{e}");
        let e = read_effect("/nonexistent/effect.json".as_ref()).unwrap_err();
        assert!(e.message.contains("/nonexistent/effect.json"), "{e}");
        let ok = read_effect(&scratch("ok", "{\"a rate\": -1.5, \"b rate\": 0}")).unwrap();
        assert_eq!(ok, [("a rate".to_string(), -1.5)].into_iter().collect());
    }

    #[test]
    fn an_entry_count_changes_by_entries_per_event_from_none() {
        let export = |new: f64| {
            format!(
                r#"{{"benches": [{{"name": "trig-uprobe-nop", "metrics": [{{"metric": "traps",
                "change_pct": null, "verdict": "regressed", "base": {{"median": 0.0}},
                "new": {{"median": {new}}}}}]}}]}}"#
            )
        };
        let bad = effect(&parse_comparison(&export(1.0)).unwrap());
        assert_eq!(bad["trig-uprobe-nop traps"], 1.0);
        let d = decide(&bad, parse_comparison(&export(0.0)));
        assert_eq!(
            (d.step, d.why.as_str()),
            (
                BisectStep::Good,
                "trig-uprobe-nop traps +0.0/event of +1.0/event: median fraction 0.00"
            )
        );
        assert_eq!(
            decide(&bad, parse_comparison(&export(1.0))).step,
            BisectStep::Bad
        );
    }
}
