//! Which source lines of a function moved (`--profile` with debug info):
//! each side's lines of the function in file and line order, aligned by
//! a longest common subsequence of lines of the same file and the same
//! instructions per event, so that a line added above the rest (a planted
//! change, a new check) moves the rest's numbers without moving them: the
//! lines left unaligned are the change. Lines of two kernel versions
//! align the same way, by what they cost where their numbers differ.

use super::MIN_MOVE;
use serde::Serialize;
use std::collections::BTreeMap;
use trig_schema::{Profile, SourceLineCost};

/// Lines shown under a mover.
pub const TOP_LINES: usize = 3;

/// One source line's move: its number on each side (aligned lines keep
/// both; a line of one side alone has one) and its instructions per event.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SourceLineMove {
    pub file: String,
    /// Its number in BASE's sources, if BASE has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_line: Option<u32>,
    /// Its number in NEW's sources, if NEW has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub base: f64,
    pub new: f64,
    pub change: f64,
}

impl SourceLineMove {
    /// `file:line`, NEW's number where it has one.
    pub fn place(&self) -> String {
        match (self.line, self.base_line) {
            (Some(n), _) => format!("{}:{n}", self.file),
            (None, Some(b)) => format!("{}:{b} (BASE)", self.file),
            (None, None) => self.file.clone(),
        }
    }
}

/// One side's mean lines per function: (file, line) to instructions per
/// event.
#[derive(Debug, Default, Clone)]
pub struct MeanSourceLines(BTreeMap<String, BTreeMap<(String, u32), f64>>);

impl MeanSourceLines {
    /// The mean over `ps` (a line a profile lacks costs it nothing).
    pub fn of(ps: &[&Profile]) -> MeanSourceLines {
        let n = ps.len().max(1) as f64;
        let mut m = MeanSourceLines::default();
        for p in ps {
            for f in &p.functions {
                m.add(&f.name, &f.lines, 1.0 / n);
            }
        }
        m
    }

    fn add(&mut self, function: &str, lines: &[SourceLineCost], k: f64) {
        let of = self.0.entry(function.to_string()).or_default();
        for l in lines {
            *of.entry((l.file.clone(), l.line)).or_default() += k * l.insn;
        }
    }

    /// This side less `base`'s (an overhead over its baseline).
    pub fn over(mut self, base: &MeanSourceLines) -> MeanSourceLines {
        for (f, lines) in &base.0 {
            let of = self.0.entry(f.clone()).or_default();
            for (key, insn) in lines {
                *of.entry(key.clone()).or_default() -= insn;
            }
        }
        self
    }

    /// A function's lines in file and line order.
    fn of_function(&self, function: &str) -> Vec<(&str, u32, f64)> {
        self.0
            .get(function)
            .map(|m| m.iter().map(|((f, l), x)| (f.as_str(), *l, *x)).collect())
            .unwrap_or_default()
    }
}

/// Whether two lines align: one file, the same cost.
fn same(a: &(&str, u32, f64), b: &(&str, u32, f64)) -> bool {
    a.0 == b.0 && (a.2 - b.2).abs() < MIN_MOVE
}

/// Every line of `function` on either side, aligned (a longest common
/// subsequence of [`same`] lines), in NEW's order.
pub fn aligned(
    base: &MeanSourceLines,
    new: &MeanSourceLines,
    function: &str,
) -> Vec<SourceLineMove> {
    let (b, n) = (base.of_function(function), new.of_function(function));
    // lcs[i][j]: the longest alignment of b[i..] and n[j..]
    let mut lcs = vec![vec![0u32; n.len() + 1]; b.len() + 1];
    for i in (0..b.len()).rev() {
        for j in (0..n.len()).rev() {
            lcs[i][j] = match same(&b[i], &n[j]) {
                true => lcs[i + 1][j + 1] + 1,
                false => lcs[i + 1][j].max(lcs[i][j + 1]),
            };
        }
    }
    let mv = |bl: Option<&(&str, u32, f64)>, nl: Option<&(&str, u32, f64)>| {
        let (bx, nx) = (bl.map_or(0.0, |l| l.2), nl.map_or(0.0, |l| l.2));
        SourceLineMove {
            file: bl.or(nl).map_or("", |l| l.0).to_string(),
            base_line: bl.map(|l| l.1),
            line: nl.map(|l| l.1),
            base: bx,
            new: nx,
            change: nx - bx,
        }
    };
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < b.len() || j < n.len() {
        if i < b.len() && j < n.len() && same(&b[i], &n[j]) {
            out.push(mv(Some(&b[i]), Some(&n[j])));
            (i, j) = (i + 1, j + 1);
        } else if j < n.len() && (i == b.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(mv(None, Some(&n[j])));
            j += 1;
        } else {
            out.push(mv(Some(&b[i]), None));
            i += 1;
        }
    }
    out
}

/// The lines of `function` that moved by [`MIN_MOVE`] or more, largest
/// first, at most [`TOP_LINES`].
pub fn top(base: &MeanSourceLines, new: &MeanSourceLines, function: &str) -> Vec<SourceLineMove> {
    let mut moved: Vec<SourceLineMove> = aligned(base, new, function)
        .into_iter()
        .filter(|l| l.change.abs() >= MIN_MOVE)
        .collect();
    moved.sort_by(|a, b| b.change.abs().total_cmp(&a.change.abs()));
    moved.truncate(TOP_LINES);
    moved
}

/// `function`'s lines in `bench`'s profiles of each side, aligned: what
/// `trig-init profile --lines` shows. None when a side has no profile of
/// it.
pub fn of_bench(
    base: &[trig_schema::RunSet],
    new: &[trig_schema::RunSet],
    bench: &str,
    function: &str,
) -> Option<Vec<SourceLineMove>> {
    let profiles = |sets: &[trig_schema::RunSet]| -> Vec<Profile> {
        sets.iter()
            .flat_map(|s| &s.runs)
            .filter_map(|r| r.report.as_ref())
            .flat_map(|r| &r.results)
            .filter(|r| r.name == bench)
            .filter_map(|r| r.profile.clone())
            .collect()
    };
    let (b, n) = (profiles(base), profiles(new));
    if b.is_empty() || n.is_empty() {
        return None;
    }
    let mean = |ps: &[Profile]| MeanSourceLines::of(&ps.iter().collect::<Vec<_>>());
    Some(aligned(&mean(&b), &mean(&n), function))
}

/// Why a side's profiles have no lines, if one has none: the reason its
/// profiles recorded, or that they were profiled before lines were.
pub fn missing(ps: &[&Profile]) -> Option<String> {
    ps.iter().find_map(|p| match &p.source {
        None => Some("profiled before source lines were resolved".to_string()),
        Some(s) => s.missing.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(lines: &[(u32, f64)]) -> MeanSourceLines {
        let mut m = MeanSourceLines::default();
        let ls: Vec<SourceLineCost> = lines
            .iter()
            .map(|&(line, insn)| SourceLineCost {
                file: "fs/exec.c".into(),
                line,
                insn,
            })
            .collect();
        m.add("__set_task_comm", &ls, 1.0);
        m
    }

    #[test]
    fn a_line_planted_above_the_rest_is_the_one_that_moved() {
        // the plant at 1237 pushes every later line one down
        let base = side(&[(1236, 3.0), (1237, 5.0), (1238, 10.0), (1240, 5.0)]);
        let new = side(&[
            (1236, 3.0),
            (1237, 3.0),
            (1238, 5.0),
            (1239, 10.0),
            (1241, 5.0),
        ]);
        let t = top(&base, &new, "__set_task_comm");
        assert_eq!(t.len(), 1, "{t:#?}");
        assert_eq!(t[0].place(), "fs/exec.c:1237");
        assert_eq!(t[0].change, 3.0);
        let all = aligned(&base, &new, "__set_task_comm");
        assert_eq!(all.len(), 5);
        assert!(all
            .iter()
            .any(|l| l.base_line == Some(1238) && l.line == Some(1239)));
    }

    #[test]
    fn a_line_gone_is_named_by_base_s_number() {
        let base = side(&[(10, 4.0), (11, 2.0)]);
        let new = side(&[(10, 4.0)]);
        let t = top(&base, &new, "__set_task_comm");
        assert_eq!(t[0].place(), "fs/exec.c:11 (BASE)");
        assert_eq!(t[0].change, -2.0);
        assert!(top(&base, &base, "__set_task_comm").is_empty());
        assert!(top(&base, &new, "another").is_empty());
    }

    #[test]
    fn an_overhead_s_lines_are_over_its_baseline_s() {
        let with = side(&[(10, 4.0), (11, 2.0)]);
        let baseline = side(&[(10, 4.0)]);
        let o = with.over(&baseline);
        let l = o.of_function("__set_task_comm");
        assert_eq!(l, [("fs/exec.c", 10, 0.0), ("fs/exec.c", 11, 2.0)]);
    }
}
