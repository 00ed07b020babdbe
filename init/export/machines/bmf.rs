//! Bencher Metric Format (BMF) JSON, so that a nightly can push its
//! figures to a bencher server (`bencher run --adapter json --file F`):
//! `{"BENCHMARK": {"MEASURE": {"value": V, "lower_value": L,
//! "upper_value": U}}}`, one measure per metric, named with its unit.

use serde_json::{json, Map, Value};
use trig_analysis::compare::{Comparison, Metric};
use trig_analysis::history::History;
use trig_schema::{ContentionKind, EntryKind, FigureKind, MemKind, Meter};

/// The measure's slug: the metric and its unit under the meter, so that
/// figures of different units never share a measure.
pub fn measure(metric: Metric, meter: Meter) -> &'static str {
    match (metric, meter) {
        (Metric::Rate, Meter::Time) => "rate-m-per-s",
        (Metric::Rate, Meter::Icount) => "rate-m-per-ginsn",
        (Metric::Overhead, Meter::Time) => "overhead-ns-per-event",
        (Metric::Overhead, Meter::Icount) => "overhead-insn-per-event",
        (Metric::Kernel, _) => "kernel-insn-per-event",
        (Metric::KernelOverhead, _) => "kernel-overhead-insn-per-event",
        (Metric::Entries(EntryKind::Trap), _) => "traps-per-event",
        (Metric::Entries(EntryKind::Syscall), _) => "syscalls-per-event",
        (Metric::Entries(EntryKind::Interrupt), _) => "interrupts-per-event",
        (Metric::EntriesOverhead(EntryKind::Trap), _) => "traps-overhead-per-event",
        (Metric::EntriesOverhead(EntryKind::Syscall), _) => "syscalls-overhead-per-event",
        (Metric::EntriesOverhead(EntryKind::Interrupt), _) => "interrupts-overhead-per-event",
        (Metric::Memory(MemKind::Loads), _) => "kernel-loads-per-event",
        (Metric::Memory(MemKind::Stores), _) => "kernel-stores-per-event",
        (Metric::Memory(MemKind::L1iMisses), _) => "kernel-l1i-misses-per-event",
        (Metric::Memory(MemKind::L1dMisses), _) => "kernel-l1d-misses-per-event",
        (Metric::Memory(MemKind::LlMisses), _) => "kernel-ll-misses-per-event",
        (Metric::Memory(MemKind::Cycles), _) => "estimated-cycles-per-event",
        (Metric::Contention(ContentionKind::Misses), _) => "coherence-misses-per-event",
        (Metric::Contention(ContentionKind::Hitm), _) => "hitm-per-event",
        (Metric::Contention(ContentionKind::Rate), _) => "modelled-m-per-gcycle-per-producer",
        (Metric::Figure(FigureKind::FalsePositives), _) => "false-positives-per-lookup",
        (Metric::Figure(FigureKind::TimedPerOp), Meter::Time) => "bpf-timed-ns-per-op",
        (Metric::Figure(FigureKind::TimedPerOp), Meter::Icount) => "bpf-timed-insn-per-op",
        (Metric::Figure(FigureKind::ImportantHits), Meter::Time) => "important-hits-mops",
        (Metric::Figure(FigureKind::ImportantHits), Meter::Icount) => "important-hits-per-ginsn",
        (Metric::Figure(FigureKind::Memory), _) => "memory-mib",
        (Metric::Figure(FigureKind::PeakMemory), _) => "peak-memory-mib",
    }
}

/// A metric: the median of the boots, bounded by the lowest and highest.
fn metric(value: f64, lo: f64, hi: f64) -> Option<Value> {
    value
        .is_finite()
        .then(|| json!({"value": value, "lower_value": lo, "upper_value": hi}))
}

fn insert(doc: &mut Map<String, Value>, bench: &str, measure: &str, m: Option<Value>) {
    if let Some(m) = m {
        doc.entry(bench)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("benchmarks are objects")
            .insert(measure.into(), m);
    }
}

/// NEW's figures of a comparison.
pub fn comparison(c: &Comparison) -> String {
    let mut doc = Map::new();
    for b in &c.benches {
        for m in &b.metrics {
            let v = &m.new.values;
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            insert(
                &mut doc,
                &b.name,
                measure(m.metric, c.meter),
                (!v.is_empty())
                    .then(|| metric(m.new.median, lo, hi))
                    .flatten(),
            );
        }
    }
    serde_json::to_string_pretty(&doc).expect("BMF serializes") + "\n"
}

/// The newest result's figures of a history: benchmarks that did not run
/// in it are left out rather than given an older figure.
pub fn history(h: &History) -> String {
    let mut doc = Map::new();
    for s in &h.series {
        let newest = s.medians.last().copied().flatten();
        let spread = s.spread.last().copied().flatten();
        if let (Some(v), Some((lo, hi))) = (newest, spread) {
            insert(
                &mut doc,
                &s.bench,
                measure(s.metric, h.meter),
                metric(v, lo, hi),
            );
        }
    }
    serde_json::to_string_pretty(&doc).expect("BMF serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use trig_analysis::fixtures::nights;
    use trig_analysis::history::analyse;

    // tests/cli.rs checks the shape of both exports against bencher's
    #[test]
    fn history_gives_the_newest_figures() {
        let h = analyse(
            "h",
            nights(5, 99),
            &[Metric::Rate, Metric::Overhead],
            &trig_analysis::changepoint::Detection::default(),
            3,
        );
        let doc: Value = serde_json::from_str(&history(&h)).unwrap();
        let kprobe = &doc["trig-kprobe"]["rate-m-per-s"];
        // the fifth night's wobble is 0.97; one boot: its own bounds
        assert!((kprobe["value"].as_f64().unwrap() - 0.8 * 0.97).abs() < 1e-9);
        assert_eq!(kprobe["lower_value"], kprobe["value"]);
        assert_eq!(doc.as_object().unwrap().len(), 3);
    }
}
