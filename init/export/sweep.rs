//! What `sweep report` writes: the range's steps as a short list, then
//! each step's comparison through compare's own exporter of the same
//! format (a step is a comparison of two consecutive measured commits).

use crate::outside::md::inline;
use crate::outside::text::line;
use crate::people::html;
use crate::{Email, Exporter, Html, Json, Markdown, Table};
use serde::Serialize;
use std::fmt::Write;
use trig_analysis::compare::{Comparison, Verdict};
use trig_analysis::sweep::range::{CommitOutcome, Moved};
use trig_analysis::sweep::search;
use trig_analysis::sweep::{CommitStep, SweepReport};
use trig_schema::error::{usage, Error};

/// Version of the sweep report's JSON.
pub const JSON_SCHEMA_VERSION: u32 = 1;

/// A change in percent with its sign.
fn pct(p: f64) -> String {
    format!("{p:+.2}%")
}

/// "−0.41% regression of rename-base rate (+3.00 insn/event), top mover
/// __set_task_comm +3.00".
fn said(m: &Moved) -> String {
    let what = if m.verdict == Verdict::Regressed {
        "regression"
    } else {
        "improvement"
    };
    let mut s = format!(
        "{} {what} of {} {} ({:+.2} {})",
        pct(m.change_pct),
        m.bench,
        m.metric.as_str(),
        m.per_event,
        m.per_event_unit
    );
    if let Some((f, change)) = &m.top_mover {
        let _ = write!(s, ", top mover {f} {change:+.2}");
    }
    s
}

fn commit(s: &SweepReport, i: usize) -> String {
    // a subject is the committer's text: one line of it, in every format
    format!("{} {}", s.short(i), line(&s.manifest.commits[i].subject))
}

/// Which commit a step was measured against, and the unmeasured commits
/// it spans.
fn against(s: &SweepReport, step: &CommitStep) -> String {
    let mut out = format!("against {}", s.short(step.from));
    let gap: Vec<&str> = step.across().map(|i| s.short(i)).collect();
    if !gap.is_empty() {
        let _ = write!(
            out,
            ", across {} (not measured): the step may be theirs",
            gap.join(", ")
        );
    }
    out
}

/// The summary every format for people opens with: the range, then its
/// sections (each step with what moved, each benchmark that failed or
/// lost its figure at a commit, each commit not measured with why).
fn outline(s: &SweepReport) -> (String, [(&'static str, Vec<String>); 3]) {
    let broken = s
        .broken
        .iter()
        .map(|b| {
            format!(
                "{}: {} {}: {}",
                commit(s, b.at),
                b.bench,
                b.verdict.as_str(),
                b.why
            )
        })
        .collect();
    let unmeasured = if s.manifest.search {
        searched(s)
    } else {
        not_measured(s)
    };
    (
        title(s),
        [
            ("Steps", steps(s)),
            ("Failed or missing", broken),
            ("Not measured", unmeasured),
        ],
    )
}

/// The range, how much of it was measured, and how many steps and broken
/// benchmarks it holds.
fn title(s: &SweepReport) -> String {
    let m = &s.manifest;
    let measured = s.measured();
    let regressions = s.steps.iter().filter(|st| st.regressed()).count();
    let mut title = format!(
        "trig-init sweep of {}: {} commits (BASE and {} after), {measured} measured; {} steps beyond the threshold, {regressions} with a regression",
        m.range,
        m.commits.len(),
        m.commits.len() - 1,
        s.steps.len()
    );
    if !s.broken.is_empty() {
        let _ = write!(
            title,
            "; {} benchmarks failed or missing at a commit",
            s.broken.len()
        );
    }
    title
}

/// Each step with what moved and what it was measured against, then each
/// drift.
fn steps(s: &SweepReport) -> Vec<String> {
    let mut steps: Vec<String> = s
        .steps
        .iter()
        .map(|st| {
            format!(
                "{}: {} ({})",
                commit(s, st.at),
                all_said(&st.moved),
                against(s, st)
            )
        })
        .collect();
    steps.extend(s.drifts.iter().map(|d| {
        format!(
            "{}: drift of {} since {}: no measured commit between moved it beyond the threshold from the one before",
            commit(s, d.to),
            all_said(&d.moved),
            s.short(d.from)
        )
    }));
    steps
}

/// What moved, each as [`said`] says it, on one line.
fn all_said(moved: &[Moved]) -> String {
    let what: Vec<String> = moved.iter().map(said).collect();
    what.join("; ")
}

/// A sweep's commits not measured (not a search's): each skipped with
/// why, or missing from every slice.
fn not_measured(s: &SweepReport) -> Vec<String> {
    s.outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| match o {
            CommitOutcome::Measured(_) => None,
            CommitOutcome::Skipped(why) => Some(skipped(s, i, why)),
            CommitOutcome::Missing => Some(format!(
                "{}: not measured: no slice of {} took it",
                commit(s, i),
                s.dir
            )),
        })
        .collect()
}

/// Commit `i`, skipped, and why.
fn skipped(s: &SweepReport, i: usize, why: &str) -> String {
    format!("{}: skipped: {why}", commit(s, i))
}

/// What a search did not measure: its assumption, once; each commit
/// skipped, with why; each run of commits between two measured ones that
/// agree, or that the search has not got there yet.
fn searched(s: &SweepReport) -> Vec<String> {
    let measured = |i: &usize| matches!(s.outcomes[*i], CommitOutcome::Measured(_));
    let runs = search::unmeasured_runs(&s.outcomes);
    let mut out: Vec<(usize, String)> = s
        .outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| match o {
            CommitOutcome::Skipped(why) => Some((i, skipped(s, i, why))),
            _ => None,
        })
        .collect();
    for &(first, last) in &runs {
        let before = (0..first).rev().find(measured);
        let after = (last + 1..s.outcomes.len()).find(measured);
        let span = if first == last {
            s.short(first).to_string()
        } else {
            format!(
                "{}..{} ({} commits)",
                s.short(first),
                s.short(last),
                last - first + 1
            )
        };
        let open = s
            .steps
            .iter()
            .any(|st| Some(st.from) == before && Some(st.at) == after);
        let why = match (before, after) {
            (Some(b), Some(a)) if !open => {
                format!("between {} and {}, which agree", s.short(b), s.short(a))
            }
            _ => "not measured yet: the search is not done (`sweep next` names what to measure)"
                .to_string(),
        };
        out.push((first, format!("{span}: {why}")));
    }
    out.sort_by_key(|o| o.0);
    let unmeasured: usize = runs.iter().map(|r| r.1 - r.0 + 1).sum();
    std::iter::once(format!(
        "a search: {unmeasured} commits not measured, each between two measured commits whose figures agree within the threshold, taken to hold no step (a change and its exact reversal both between them would go unseen)"
    ))
    .chain(out.into_iter().map(|o| o.1))
    .collect()
}

/// Plain text: the outline, then each step's comparison in `each`.
fn text(s: &SweepReport, each: &dyn Exporter<Comparison>, width: Option<usize>) -> String {
    let (title, sections) = outline(s);
    let para = |out: &mut String, text: &str, indent: usize| match width {
        Some(w) => {
            for l in crate::outside::text::wrap(text, w, indent + 2) {
                let _ = writeln!(out, "{:indent$}{}", "", l.trim_start());
            }
        }
        None => {
            let _ = writeln!(out, "{:indent$}{}", "", line(text));
        }
    };
    let mut out = String::new();
    para(&mut out, &title, 0);
    for (head, lines) in &sections {
        if !lines.is_empty() {
            let _ = writeln!(out, "\n{head}:");
            for l in lines {
                para(&mut out, l, 2);
            }
        }
    }
    for st in &s.steps {
        out += "\n";
        para(
            &mut out,
            &format!("== {} ({})", commit(s, st.at), against(s, st)),
            0,
        );
        out += &each.export(&st.comparison);
    }
    out
}

impl Exporter<SweepReport> for Table {
    fn export(&self, s: &SweepReport) -> String {
        text(s, self, None)
    }
}

impl Exporter<SweepReport> for Email {
    fn export(&self, s: &SweepReport) -> String {
        text(s, self, Some(crate::people::email::MAIL_WIDTH))
    }
}

impl Exporter<SweepReport> for Markdown {
    fn export(&self, s: &SweepReport) -> String {
        let (title, sections) = outline(s);
        let mut out = format!("## {}\n", inline(&title));
        for (head, lines) in &sections {
            if !lines.is_empty() {
                let _ = writeln!(out, "\n**{head}**\n");
                for l in lines {
                    let _ = writeln!(out, "- {}", inline(l));
                }
            }
        }
        for st in &s.steps {
            let _ = write!(
                out,
                "\n### {}\n\n{}\n\n{}",
                inline(&commit(s, st.at)),
                inline(&against(s, st)),
                self.export(&st.comparison)
            );
        }
        out
    }
}

#[derive(Serialize)]
struct JsonCommit<'a> {
    commit: &'a str,
    subject: &'a str,
    /// measured, skipped or missing
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<&'a str>,
}
#[derive(Serialize)]
struct JsonStep<'a> {
    commit: &'a str,
    against: &'a str,
    /// Commits between the two that were not measured.
    across: Vec<&'a str>,
    moved: &'a [Moved],
    /// As `compare --format json` writes it.
    comparison: serde_json::Value,
}
#[derive(Serialize)]
struct JsonDrift<'a> {
    commit: &'a str,
    since: &'a str,
    moved: &'a [Moved],
}
/// `sweep report --format json`.
#[derive(Serialize)]
struct JsonDoc<'a> {
    schema_version: u32,
    range: &'a str,
    /// A search: the commits not measured lie between two that
    /// agree, taken to hold no step.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    search: bool,
    regressed: bool,
    /// `sweep report`'s exit status (docs/faults.md)
    status: u8,
    commits: Vec<JsonCommit<'a>>,
    steps: Vec<JsonStep<'a>>,
    drifts: Vec<JsonDrift<'a>>,
    broken: Vec<JsonBroken<'a>>,
}
#[derive(Serialize)]
struct JsonBroken<'a> {
    commit: &'a str,
    bench: &'a str,
    verdict: &'static str,
    why: &'a str,
}

impl Exporter<SweepReport> for Json {
    fn export(&self, s: &SweepReport) -> String {
        let m = &s.manifest;
        let doc = JsonDoc {
            schema_version: JSON_SCHEMA_VERSION,
            range: &m.range,
            search: m.search,
            regressed: s.regressed(),
            status: s.tally().status(),
            broken: s
                .broken
                .iter()
                .map(|b| JsonBroken {
                    commit: &m.commits[b.at].commit,
                    bench: &b.bench,
                    verdict: b.verdict.as_str(),
                    why: &b.why,
                })
                .collect(),
            commits: m
                .commits
                .iter()
                .zip(&s.outcomes)
                .map(|(c, o)| JsonCommit {
                    commit: &c.commit,
                    subject: &c.subject,
                    status: match o {
                        CommitOutcome::Measured(_) => "measured",
                        CommitOutcome::Skipped(_) => "skipped",
                        CommitOutcome::Missing => "missing",
                    },
                    why: match o {
                        CommitOutcome::Skipped(w) => Some(w),
                        _ => None,
                    },
                })
                .collect(),
            steps: s
                .steps
                .iter()
                .map(|st| JsonStep {
                    commit: &m.commits[st.at].commit,
                    against: &m.commits[st.from].commit,
                    across: st.across().map(|i| m.commits[i].commit.as_str()).collect(),
                    moved: &st.moved,
                    comparison: serde_json::from_str(&Json.export(&st.comparison))
                        .expect("compare's JSON parses"),
                })
                .collect(),
            drifts: s
                .drifts
                .iter()
                .map(|d| JsonDrift {
                    commit: &m.commits[d.to].commit,
                    since: &m.commits[d.from].commit,
                    moved: &d.moved,
                })
                .collect(),
        };
        serde_json::to_string_pretty(&doc).expect("a sweep serializes") + "\n"
    }
}

impl Exporter<SweepReport> for Html {
    fn export(&self, s: &SweepReport) -> String {
        let (title, sections) = outline(s);
        let mut out = html::head(&format!("trig-init sweep of {}", s.manifest.range));
        let _ = write!(out, "<h1>{}</h1>", html::esc(&title));
        for (head, lines) in &sections {
            if !lines.is_empty() {
                let _ = write!(out, "<h2>{head}</h2><ul>");
                for l in lines {
                    let _ = write!(out, "<li>{}</li>", html::esc(l));
                }
                out += "</ul>";
            }
        }
        for st in &s.steps {
            let heading = format!(
                "{} <small>({})</small>",
                html::esc(&commit(s, st.at)),
                html::esc(&against(s, st))
            );
            html::comparison(&mut out, &heading, &st.comparison);
        }
        out + "</body></html>\n"
    }
}

/// `sweep report --format`, parsed once by argh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SweepFormat {
    #[default]
    Table,
    Markdown,
    Email,
    Json,
    Html,
}

impl std::str::FromStr for SweepFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Ok(match s {
            "table" => SweepFormat::Table,
            "markdown" | "md" => SweepFormat::Markdown,
            "email" => SweepFormat::Email,
            "json" => SweepFormat::Json,
            "html" => SweepFormat::Html,
            f => {
                return Err(usage(format!(
                    "--format must be table, markdown, email, json or html, not '{f}'"
                )))
            }
        })
    }
}

impl SweepFormat {
    pub fn exporter(self) -> Box<dyn Exporter<SweepReport>> {
        match self {
            SweepFormat::Table => Box::new(Table { color: false }),
            SweepFormat::Markdown => Box::new(Markdown),
            SweepFormat::Email => Box::new(Email),
            SweepFormat::Json => Box::new(Json),
            SweepFormat::Html => Box::new(Html(Default::default())),
        }
    }
}
