//! The history as a table or in Markdown.

use crate::outside::md::inline;
use crate::outside::text::{line, pad};
use std::fmt::Write;
use trig_analysis::history::{Found, History};
use trig_schema::is_object_name;
use trig_schema::Meter;

/// What a change point takes: its size, and how many results.
pub fn needs(h: &History) -> String {
    match h.meter {
        Meter::Time => format!(
            "steps of {}% and more (time meter) show from {} results on, {} of them after the step",
            h.min_change_pct, h.needs, h.needs_after
        ),
        Meter::Icount => format!(
            "steps of more than {0}% (icount meter, exact) show on the result that moved, pending until the next result confirms them; so do smaller steps that add up to more than {0}%",
            h.min_change_pct
        ),
    }
}

/// Why a history shows no change point, when it cannot show one.
pub fn no_change_points(h: &History) -> String {
    if h.points.len() < h.needs {
        let why = match h.meter {
            Meter::Time => "; with fewer, even a clean step cannot pass the permutation test",
            Meter::Icount => "",
        };
        format!(
            "no change points: {} results, and a change point needs at least {} ({} after the step{why})",
            h.points.len(),
            h.needs,
            h.needs_after
        )
    } else {
        format!("no change points of {}% or more", h.min_change_pct)
    }
}

/// One sentence for an alert: what moved, by how much, where, and the
/// bisect range.
fn alert_line(h: &History, f: &Found) -> String {
    let mut s = format!(
        "{} {} {} ({}) from #{} {}",
        f.bench,
        f.metric.as_str(),
        f.size(),
        if f.regression { "worse" } else { "better" },
        f.at + 1,
        h.points[f.at].label()
    );
    if let Some((good, bad)) = bisectable(f) {
        let _ = write!(s, "; git bisect start {bad} {good}");
    }
    s
}

/// The range to bisect a change point in: only when both ends are git
/// object names, as a forged commit would run in the shell it is pasted
/// into.
fn bisectable(f: &Found) -> Option<&(String, String)> {
    f.bisect
        .as_ref()
        .filter(|(good, bad)| is_object_name(good) && is_object_name(bad))
}

/// A line of outside text (labels, names, reasons: the results files')
/// in Markdown or as a terminal shows it.
fn shown(text: &str, markdown: bool) -> String {
    if markdown {
        inline(text)
    } else {
        line(text).into_owned()
    }
}

/// The summary lines, alerts and table header, in Markdown or plain text.
fn render_head(out: &mut String, h: &History, markdown: bool) {
    let span = match (h.points.first(), h.points.last()) {
        (Some(a), Some(b)) => format!("{} .. {}", a.label(), b.label()),
        _ => String::new(),
    };
    let needs = needs(h);
    let alerts: Vec<&Found> = h
        .found
        .iter()
        .filter(|f| h.alerting && f.alerted.is_none() && !f.pending)
        .collect();
    let new_column = if h.alerting { "alert" } else { "new" };
    if markdown {
        let _ = writeln!(
            out,
            "### trig-init history\n\n- {}\n- {needs}\n",
            shown(
                &format!("{}: {} results, {span}", h.dir, h.points.len()),
                true
            )
        );
        for f in &alerts {
            let _ = writeln!(out, "**ALERT**: {}\n", shown(&alert_line(h, f), true));
        }
        let _ = writeln!(out, "| first result after | benchmark | metric | before | after | change [95% CI] | p | {new_column} | moved with |\n|:--|:--|:--|--:|--:|--:|--:|:--|:--|");
    } else {
        let summary = format!("{}: {} results, {span}", h.dir, h.points.len());
        let _ = writeln!(out, "{}", shown(&summary, false));
        let _ = writeln!(
            out,
            "{} change point(s); new = in the newest {} results; {needs}",
            h.found.len(),
            h.new_window
        );
        for f in &alerts {
            let _ = writeln!(out, "ALERT: {}", shown(&alert_line(h, f), false));
        }
        let _ = writeln!(
            out,
            "\n{} {} {:<15} {:>10} {:>10} {:>24} {:>6} {:<7} MOVED WITH",
            pad("FIRST RESULT AFTER", AT, true),
            pad("BENCHMARK", BENCH, true),
            "METRIC",
            "BEFORE",
            "AFTER",
            "CHANGE [95% CI]",
            "p",
            new_column.to_uppercase()
        );
    }
}

/// The widths of the plain table's columns of outside text: the result
/// (release, commit, date) and the benchmark.
const AT: usize = 44;
const BENCH: usize = 26;

/// One change point's table row.
fn found_row(out: &mut String, h: &History, f: &Found, markdown: bool) {
    let c = &f.change;
    let range = if f.metric.is_count() {
        String::new()
    } else {
        format!(" [{:+.1},{:+.1}]", c.ci_pct.0, c.ci_pct.1)
    };
    let change = format!(
        "{}{range}{}",
        f.size(),
        if f.regression { " worse" } else { " better" },
    );
    let change = if f.drift { change + " drift" } else { change };
    let at = format!("#{} {}", f.at + 1, h.points[f.at].label());
    let new = match (h.alerting, &f.alerted) {
        _ if f.pending => "pending",
        (true, None) => "ALERT",
        (true, Some(_)) => "earlier",
        (false, _) if f.new => "new",
        _ => "",
    };
    let with = f.moved_with.join(", ");
    // one set of names for both layouts, so that they differ only in format
    let (bench, metric, before, after, p) =
        (&f.bench, f.metric.as_str(), c.before, c.after, c.p_text());
    let _ = if markdown {
        let (at, bench, with) = (inline(&at), inline(bench), inline(&with));
        writeln!(out, "| {at} | {bench} | {metric} | {before:.3} | {after:.3} | {change} | {p} | {new} | {with} |")
    } else {
        let (at, bench, with) = (pad(&at, AT, true), pad(bench, BENCH, true), line(&with));
        writeln!(out, "{at} {bench} {metric:<15} {before:>10.3} {after:>10.3} {change:>24} {p:>6} {new:<7} {with}")
    };
}

/// A `git bisect` line per distinct range of a new regression.
fn bisect_lines(out: &mut String, h: &History, markdown: bool) {
    let mut bisects: Vec<&(String, String)> = h
        .found
        .iter()
        .filter(|f| f.new && f.regression)
        .filter_map(bisectable)
        .collect();
    bisects.dedup();
    for (good, bad) in bisects {
        let _ = writeln!(
            out,
            "{}to bisect: git bisect start {bad} {good} && git bisect run scripts/bisect.sh --bench ...",
            if markdown { "\n" } else { "" }
        );
    }
}

/// What the newest result failed or lost, each benchmark a line.
fn newest_lines(out: &mut String, h: &History, markdown: bool) {
    let Some(last) = h.points.last() else {
        return;
    };
    for b in &h.newest {
        let what = format!(
            "the newest result, #{} {}: {} {} ({})",
            h.points.len(),
            last.label(),
            b.name,
            b.verdict.as_str(),
            b.reason.as_deref().unwrap_or("no reason recorded")
        );
        let what = shown(&what, markdown);
        let _ = if markdown {
            writeln!(out, "**{}**: {what}\n", b.verdict.as_str().to_uppercase())
        } else {
            writeln!(out, "{}: {what}", b.verdict.as_str().to_uppercase())
        };
    }
}

pub fn render(h: &History, markdown: bool) -> String {
    let mut out = String::new();
    render_head(&mut out, h, markdown);
    newest_lines(&mut out, h, markdown);
    let kernel_series = h.series.iter().any(|s| s.metric.build_independent());
    for b in &h.breaks {
        let sentence = format!(
            "results from #{} {} on are not comparable with those before ({}): each series is compared only with results of its own kind{}",
            b.at + 1,
            h.points[b.at].label(),
            b.why.join("; "),
            if b.build_only && kernel_series {
                ", but for the kernel's instructions (kernel, kernel-overhead), which trig-init's build does not count in"
            } else {
                ""
            }
        );
        let _ = writeln!(
            out,
            "{}{}",
            if markdown { "\n" } else { "" },
            shown(&sentence, markdown)
        );
    }
    for f in &h.found {
        found_row(&mut out, h, f, markdown);
    }
    if h.found.is_empty() {
        // Markdown: a line right under a table is one more row of it
        if markdown {
            out.push('\n');
        }
        out.push_str(&no_change_points(h));
        out.push('\n');
    }
    bisect_lines(&mut out, h, markdown);
    out
}
