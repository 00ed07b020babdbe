//! The table of several producers under icount: per benchmark and `-p`,
//! what the coherence model counted and the throughput it models, in the
//! shape of upstream's summary ("hits X (Y/prod)"), and where the shared
//! lines are.

use crate::outside::text::{line, pad};
use std::fmt::Write;
use trig_schema::contention::SharedCacheLine;
use trig_schema::{Contention, RunSet};

/// The table, or None when no result carries the model's figures.
pub fn table(set: &RunSet) -> Option<String> {
    let rows: Vec<(&str, &Contention)> = set
        .runs
        .iter()
        .filter_map(|r| r.report.as_ref())
        .flat_map(|r| &r.results)
        .filter_map(|b| Some((b.name.as_str(), b.profile.as_ref()?.contention.as_ref()?)))
        .collect();
    let mut out = head(rows.first()?.1);
    for (name, c) in &rows {
        row(&mut out, name, c);
    }
    cache_lines(&mut out, &rows);
    Some(out)
}

/// The model and its weights, as the first result has them, then the
/// column heads.
fn head(first: &Contention) -> String {
    let mut out = format!(
        "\nSeveral producers, modelled ({}: an instruction a cycle, a coherence miss {} cycles, \
         one that finds the line modified elsewhere (HITM) {}); per event:\n",
        first.model, first.weights.miss_cycles, first.weights.hitm_cycles
    );
    let _ = writeln!(
        out,
        "{} {:>3} {:>9} {:>7} {:>8} {:>7} {:>9}  modelled M/Gcycle",
        pad("benchmark", 28, true),
        "p",
        "insn",
        "spin",
        "misses",
        "HITM",
        "cycles"
    );
    out
}

/// One benchmark's figures, and the line that bounds its throughput.
fn row(out: &mut String, name: &str, c: &Contention) {
    let m = c.misses();
    let _ = writeln!(
        out,
        "{} {:>3} {:>9.1} {:>7.1} {:>8.3} {:>7.3} {:>9.1}  hits {:.3} ({:.3}/prod){}",
        pad(name, 28, true),
        c.producers,
        c.insn,
        c.spin,
        m.misses,
        m.hitm,
        c.cycles,
        c.rate,
        c.per_producer,
        c.bound_by
            .as_ref()
            .map(|l| format!(", bound by {}", line(l)))
            .unwrap_or_default()
    );
}

/// Each benchmark's hottest shared lines (three), under a heading when
/// any benchmark has one.
fn cache_lines(out: &mut String, rows: &[(&str, &Contention)]) {
    let hot: Vec<_> = rows.iter().filter(|(_, c)| !c.lines.is_empty()).collect();
    if !hot.is_empty() {
        out.push_str(
            "\nShared lines (coherence misses per event; who missed, loads r, stores w):\n",
        );
    }
    for (name, c) in hot {
        let _ = writeln!(out, "  {}", line(name));
        for l in c.lines.iter().take(3) {
            let _ = writeln!(
                out,
                "    {} {} {:.3} (HITM {:.3}): {}",
                pad(&l.name, 36, true),
                l.kind,
                l.misses.misses,
                l.misses.hitm,
                sites(l)
            );
        }
    }
}

/// Who missed on line `l`: its two top readers, then its two top writers.
fn sites(l: &SharedCacheLine) -> String {
    let who = |side: &[(String, f64)], rw: char| {
        side.iter()
            .take(2)
            .map(|(f, n)| format!("{rw} {} {n:.3}", line(f)))
            .collect::<Vec<_>>()
    };
    let mut sites = who(&l.readers, 'r');
    sites.extend(who(&l.writers, 'w'));
    sites.join(", ")
}
