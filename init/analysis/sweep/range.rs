//! A sweep directory (`trig-init sweep plan`, `sweep merge`): the commit
//! range BASE..TIP in a manifest ([`MANIFEST`]: the whole range, BASE
//! first, and the slices measured into it) and one file per commit of its
//! slices, named `INDEX-COMMIT12`: `.json`, the `vm` results, or `.skip`,
//! one line saying why it was not measured; each commit's outcome, and
//! what moved between two measured commits. Both the exhaustive sweep
//! (the report, `sweep/mod.rs`) and the adaptive one (`search`) read
//! their commits here.

use crate::compare::{Comparison, Metric, Verdict};
use crate::git::git;
use crate::input::{self, Side};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use trig_schema::error::{self, Error};
use trig_schema::files;
use trig_schema::identity;

pub const MANIFEST: &str = "sweep.json";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Commit {
    pub commit: String,
    pub subject: String,
}

/// Every N-th commit of the range from the K-th (counting from 1).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Slice {
    pub k: usize,
    pub n: usize,
}

impl Slice {
    pub fn parse(s: &str) -> Result<Slice, Error> {
        let bad = || error::usage(format!("--slice must be K/N with 1 <= K <= N, not '{s}'"));
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if k == 0 || k > n {
            return Err(bad());
        }
        Ok(Slice { k, n })
    }

    pub fn contains(self, index: usize) -> bool {
        index % self.n == self.k - 1
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// As the sweep was asked for: `BASE..TIP`.
    pub range: String,
    /// BASE, then BASE..TIP oldest first (`git log --reverse --topo-order`).
    pub commits: Vec<Commit>,
    /// The slices whose commits this directory holds.
    pub slices: Vec<Slice>,
    /// A search (`analysis::search`): the commits measured are those
    /// `sweep next` asked for, not slices.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub search: bool,
}

impl Manifest {
    /// The name of commit `index`'s files, without extension: ordered by
    /// name as the range is.
    pub fn stem(&self, index: usize) -> String {
        let width = (self.commits.len().saturating_sub(1))
            .to_string()
            .len()
            .max(3);
        let c = &self.commits[index].commit;
        format!("{index:0width$}-{}", trig_schema::abbrev(c, 12))
    }

    pub fn read(dir: &Path) -> Result<Manifest, Error> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            error::input(format!(
                "{}: {e} (not a sweep directory: scripts/sweep.sh writes it)",
                path.display()
            ))
        })?;
        let m: Manifest = serde_json::from_str(&text)
            .map_err(|e| error::input(format!("{}: not a sweep manifest: {e}", path.display())))?;
        // a commit names its files: only an object name cannot leave the directory
        if let Some((i, c)) = m
            .commits
            .iter()
            .enumerate()
            .find(|(_, c)| !trig_schema::is_object_name(&c.commit))
        {
            return Err(error::input(format!(
                "{}: commits[{i}].commit {:?} is not a git object name (hex digits)",
                path.display(),
                c.commit
            )));
        }
        Ok(m)
    }

    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self).expect("a manifest serializes") + "\n";
        let path = dir.join(MANIFEST);
        files::write(&path, text)
    }
}

fn commits_of(log: &str) -> Vec<Commit> {
    log.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(c, s)| Commit {
            commit: c.into(),
            subject: s.into(),
        })
        .collect()
}

/// The commits of `BASE..TIP` in `tree`, BASE first.
pub fn range_commits(tree: &Path, range: &str) -> Result<Vec<Commit>, Error> {
    let (base, tip) = range
        .split_once("..")
        .filter(|(b, t)| !b.is_empty() && !t.is_empty() && !t.starts_with('.'))
        .ok_or_else(|| error::usage(format!("the range must be BASE..TIP, not '{range}'")))?;
    let fmt = "--format=%H%x09%s";
    let mut commits = commits_of(&git(
        tree,
        &["log", "-1", fmt, &format!("{base}^{{commit}}"), "--"],
    )?);
    let tip = git(
        tree,
        &["rev-parse", "--verify", &format!("{tip}^{{commit}}")],
    )?;
    let base_sha = commits[0].commit.clone();
    let log = git(
        tree,
        &[
            "log",
            "--reverse",
            "--topo-order",
            fmt,
            &format!("{base_sha}..{}", tip.trim()),
            "--",
        ],
    )?;
    let after = commits_of(&log);
    if after.is_empty() {
        return Err(error::input(format!("{range} has no commits after BASE")));
    }
    commits.extend(after);
    Ok(commits)
}

/// `sweep plan`: writes the slice's manifest into `out` (a rerun of the
/// same slice may reuse it; another range or slice may not) and returns
/// the slice's commits and their file stems, in the range's order. No
/// slice: a search's manifest, and no commits (`sweep next` asks for
/// them).
pub fn plan(
    tree: &Path,
    range: &str,
    slice: Option<Slice>,
    out: &Path,
) -> Result<Vec<(String, String)>, Error> {
    let m = Manifest {
        range: range.into(),
        commits: range_commits(tree, range)?,
        slices: slice.into_iter().collect(),
        search: slice.is_none(),
    };
    make_dir("--out", out)?;
    if out.join(MANIFEST).exists() {
        let old = Manifest::read(out)?;
        if old != m {
            let what = if old.search {
                "a search".to_string()
            } else {
                let s: Vec<String> = old.slices.iter().map(Slice::to_string).collect();
                format!("slice {}", s.join(","))
            };
            return Err(error::usage(format!(
                "{} holds another sweep ({} {what}); give another --out",
                out.display(),
                old.range,
            )));
        }
    }
    m.write(out)?;
    Ok((0..m.commits.len())
        .filter(|&i| slice.is_some_and(|s| s.contains(i)))
        .map(|i| (m.commits[i].commit.clone(), m.stem(i)))
        .collect())
}

/// Makes the directory `out` (`flag`'s), naming a file in the way as
/// such (the caller's error); one that cannot be made is the host's.
fn make_dir(flag: &str, out: &Path) -> Result<(), Error> {
    if out.exists() && !out.is_dir() {
        return Err(error::usage(format!(
            "{flag} {} is a file, not a directory",
            out.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(|e| error::infra(format!("{}: {e}", out.display())))
}

/// What a sweep directory has for one commit.
#[derive(Debug, Clone, PartialEq)]
pub enum CommitOutcome {
    Measured(PathBuf),
    /// Not built or not booted: why.
    Skipped(String),
    /// No slice of this directory took it.
    Missing,
}

/// The per-commit files of a sweep directory by index; a file that is not
/// a commit of the manifest's range is an error.
pub fn outcomes(dir: &Path, m: &Manifest) -> Result<Vec<CommitOutcome>, Error> {
    let index: BTreeMap<String, usize> = (0..m.commits.len()).map(|i| (m.stem(i), i)).collect();
    let mut out = vec![CommitOutcome::Missing; m.commits.len()];
    let entries =
        std::fs::read_dir(dir).map_err(|e| error::input(format!("{}: {e}", dir.display())))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != MANIFEST)
        .collect();
    names.sort();
    for name in names {
        let Some((stem, ext)) = name
            .rsplit_once('.')
            .filter(|(_, e)| *e == "json" || *e == "skip")
        else {
            continue;
        };
        let path = dir.join(&name);
        // a fifo would block the read for ever, a directory fail it
        if !path.is_file() {
            return Err(error::input(format!(
                "{}: not a regular file",
                path.display()
            )));
        }
        let i = *index.get(stem).ok_or_else(|| {
            error::input(format!(
                "{}: not a commit of the range {} ({} commits from {})",
                path.display(),
                m.range,
                m.commits.len(),
                &m.commits[0].commit[..12.min(m.commits[0].commit.len())]
            ))
        })?;
        if out[i] != CommitOutcome::Missing {
            return Err(error::input(format!(
                "{}: {stem} has both results and a skip",
                dir.display()
            )));
        }
        out[i] = if ext == "json" {
            CommitOutcome::Measured(path)
        } else {
            let why = std::fs::read_to_string(&path)
                .map_err(|e| error::input(format!("{}: {e}", path.display())))?;
            CommitOutcome::Skipped(why.trim().to_string())
        };
    }
    Ok(out)
}

/// Why results measured on one runner cannot be set beside another's:
/// the first field of their identity that differs (`report::identity`).
fn incompatible(a: &Side, b: &Side) -> Option<String> {
    a.sets
        .iter()
        .flat_map(|x| b.sets.iter().map(move |y| (x, y)))
        .find_map(|(x, y)| identity::compatible(x, y).err())
        .map(|m| m.to_string())
}

pub fn load(path: &Path) -> Result<Side, Error> {
    Ok(Side::of_file(path, input::load_file(path)?))
}

/// `sweep merge`: joins slice directories of one range into `out` (new
/// or empty). Refused: another range, a commit measured twice, results
/// whose identity differs from the first's (the field named), results of
/// another commit than their name's. Returns the commits no slice took.
pub fn merge(out: &Path, dirs: &[PathBuf]) -> Result<Vec<usize>, Error> {
    let first = dirs
        .first()
        .ok_or_else(|| error::usage("give the slice directories to merge"))?;
    let mut merged = Manifest::read(first)?;
    merged.slices.clear();
    let mut all = vec![CommitOutcome::Missing; merged.commits.len()];
    let mut from: Vec<Option<&Path>> = vec![None; merged.commits.len()];
    let mut reference: Option<(PathBuf, Side)> = None;
    for dir in dirs {
        let m = Manifest::read(dir)?;
        if m.commits != merged.commits {
            return Err(error::input(format!(
                "{}: another range ({}, {} commits) than {}'s ({}, {} commits)",
                dir.display(),
                m.range,
                m.commits.len(),
                first.display(),
                merged.range,
                merged.commits.len()
            )));
        }
        for (i, o) in outcomes(dir, &m)?.into_iter().enumerate() {
            if o == CommitOutcome::Missing {
                continue;
            }
            if let Some(other) = from[i] {
                return Err(error::input(format!(
                    "{} is in both {} and {}",
                    m.stem(i),
                    other.display(),
                    dir.display()
                )));
            }
            if let CommitOutcome::Measured(path) = &o {
                check_measured(path, &m.commits[i].commit, &mut reference)?;
            }
            from[i] = Some(dir);
            all[i] = o;
        }
        merged.slices.extend(m.slices);
    }
    merged.slices.sort();
    make_dir("-o", out)?;
    let occupied = std::fs::read_dir(out)
        .map_err(|e| error::infra(format!("{}: {e}", out.display())))?
        .next()
        .is_some();
    if occupied {
        return Err(error::usage(format!(
            "{}: not empty; merge into a new directory",
            out.display()
        )));
    }
    copy_into(out, &merged, &slice_files(&merged, &all, &from))?;
    Ok((0..all.len())
        .filter(|&i| all[i] == CommitOutcome::Missing)
        .collect())
}

/// The results file `path` of `commit`: results that say they are that
/// commit's, measured like the first file merged (`reference`, which the
/// first one becomes).
fn check_measured(
    path: &Path,
    commit: &str,
    reference: &mut Option<(PathBuf, Side)>,
) -> Result<(), Error> {
    let side = load(path)?;
    let recorded: Vec<&String> = side
        .sets
        .iter()
        .filter_map(|s| s.kernel.commit.as_ref())
        .collect();
    if recorded.is_empty() {
        return Err(error::input(format!(
            "{}: no kernel commit recorded (vm --commit SHA records it), so nothing says it is {commit}",
            path.display(),
        )));
    }
    if let Some(c) = recorded.iter().find(|c| **c != commit) {
        return Err(error::input(format!(
            "{}: results of commit {c}, not of {commit}",
            path.display(),
        )));
    }
    match reference {
        None => *reference = Some((path.to_path_buf(), side)),
        Some((rpath, rside)) => {
            if let Some(why) = incompatible(rside, &side) {
                return Err(error::input(format!(
                    "{} was not measured like {}: {why}",
                    path.display(),
                    rpath.display()
                )));
            }
        }
    }
    Ok(())
}

/// The files a merge copies: each measured file, each skip and the build
/// log beside it, from the slice directory (`from`) that had it.
fn slice_files(merged: &Manifest, all: &[CommitOutcome], from: &[Option<&Path>]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (i, o) in all.iter().enumerate() {
        match o {
            CommitOutcome::Measured(p) => files.push(p.clone()),
            CommitOutcome::Skipped(_) => {
                let dir = from[i].expect("a skip has a directory");
                files.push(dir.join(format!("{}.skip", merged.stem(i))));
                let log = dir.join(format!("{}.build.log", merged.stem(i)));
                if log.is_file() {
                    files.push(log);
                }
            }
            CommitOutcome::Missing => {}
        }
    }
    files
}

/// Copies `files` and writes `merged`'s manifest into the empty `out`;
/// on an error, removes what it wrote, or a rerun would refuse `out`.
fn copy_into(out: &Path, merged: &Manifest, files: &[PathBuf]) -> Result<(), Error> {
    let mut written = Vec::new();
    let copied = files
        .iter()
        .try_for_each(|src| {
            let dst = out.join(src.file_name().expect("a file"));
            written.push(dst.clone());
            // a slice's file that cannot be read is the input's fault,
            // one that cannot be written the host's
            let bytes =
                std::fs::read(src).map_err(|e| error::input(format!("{}: {e}", src.display())))?;
            std::fs::write(&dst, bytes).map_err(|e| error::infra(format!("{}: {e}", dst.display())))
        })
        .and_then(|()| {
            written.push(out.join(MANIFEST));
            merged.write(out)
        });
    if copied.is_err() {
        for f in &written {
            let _ = std::fs::remove_file(f);
        }
    }
    copied
}

/// One benchmark that stepped: its verdict's metric, by how much, and
/// the function that moved most (profiled boots).
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    pub bench: String,
    pub metric: Metric,
    pub verdict: Verdict,
    pub change_pct: f64,
    /// The change of the cost of one event (instructions under icount,
    /// ns under time): from the rates, or the overhead's own figures.
    pub per_event: f64,
    pub per_event_unit: &'static str,
    /// The function whose instructions per event changed most, and by how
    /// much.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_mover: Option<(String, f64)>,
}

/// Every regressed or improved benchmark of a comparison, regressions first.
pub fn moved(c: &Comparison) -> Vec<Moved> {
    let mut out: Vec<Moved> = c
        .benches
        .iter()
        .filter(|b| matches!(b.verdict, Verdict::Regressed | Verdict::Improved))
        .filter_map(|b| {
            let m = b.metrics.iter().find(|m| b.basis.contains(&m.metric))?;
            Some(Moved {
                bench: b.name.clone(),
                metric: m.metric,
                verdict: b.verdict,
                change_pct: m.change_pct,
                per_event: m.per_event_change(),
                per_event_unit: c.meter.cost_unit(),
                top_mover: b
                    .movers
                    .as_ref()
                    .and_then(|mv| mv.functions.first())
                    .map(|f| (f.name.clone(), f.change)),
            })
        })
        .collect();
    out.sort_by_key(|m| m.verdict);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_split_the_range_evenly_and_wholly() {
        let slices: Vec<Slice> = ["1/3", "2/3", "3/3"]
            .iter()
            .map(|s| Slice::parse(s).unwrap())
            .collect();
        for i in 0..13 {
            let owners = slices.iter().filter(|s| s.contains(i)).count();
            assert_eq!(owners, 1, "commit {i}");
        }
        let first: Vec<usize> = (0..13).filter(|&i| slices[0].contains(i)).collect();
        assert_eq!(first, [0, 3, 6, 9, 12]);
        assert_eq!(slices[1].to_string(), "2/3");
        for bad in ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"] {
            assert!(Slice::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn stems_sort_as_the_range_does() {
        let commits = |n: usize| Manifest {
            range: "a..b".into(),
            commits: (0..n)
                .map(|i| Commit {
                    commit: format!("{i:012x}{}", "f".repeat(28)),
                    subject: String::new(),
                })
                .collect(),
            slices: vec![],
            search: false,
        };
        let m = commits(13);
        assert_eq!(m.stem(12), format!("012-{:012x}", 12));
        // a merge window: the index widens so that names still sort
        let m = commits(12_001);
        let stems: Vec<String> = [9, 10, 999, 1000, 12_000]
            .iter()
            .map(|&i| m.stem(i))
            .collect();
        assert!(stems.windows(2).all(|w| w[0] < w[1]), "{stems:?}");
        assert_eq!(stems[0], format!("00009-{:012x}", 9));
    }
}
