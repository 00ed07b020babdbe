//! Reading results for `compare`, `history` and `ab-proof`: `trig-init vm` results
//! files (one kernel, or the array that `ab --json` writes), plain
//! `trig-init run` reports, or directories of them.

use crate::split_params;
use serde::de::IgnoredAny;
use std::path::{Path, PathBuf};
use trig_schema::error::{self, Error};
use trig_schema::upgrade::upgrade;
use trig_schema::{
    is_timestamp, BootStatus, Report, RunRecord, RunSet, Status, VmInfo, SCHEMA_VERSION,
};

/// One side: every boot of every results file given for it.
pub struct Side {
    pub files: Vec<String>,
    pub sets: Vec<RunSet>,
}

/// What makes a boot that boot: its kernel with the session and round
/// where `ab` or `vm` recorded them, else its run's start and everything
/// recorded of it (two boots differ at least in their wall time; a copied
/// file does not).
fn boot_key(kernel: &str, run: &RunRecord) -> String {
    match &run.pairing {
        Some(p) => format!("{kernel} session {} round {}", p.session, p.round),
        None => format!(
            "{kernel} {}",
            serde_json::to_string(run).expect("a boot serializes")
        ),
    }
}

/// Drops every boot seen before in `files` (a copied results file, a
/// file given twice): a copy is no evidence. Returns a line per file that
/// held only copies or some, naming what they repeat; a file left with no
/// boot of its own is removed.
pub fn drop_copies(files: &mut Vec<(PathBuf, Vec<RunSet>)>) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, PathBuf> = Default::default();
    let mut said = Vec::new();
    for (file, sets) in files.iter_mut() {
        let mut copies: Vec<String> = Vec::new();
        for set in sets.iter_mut() {
            let kernel = format!(
                "{:?} {} {:?} {:?}",
                set.created, set.kernel.path, set.kernel.commit, set.kernel.release
            );
            set.runs.retain(|run| {
                let key = boot_key(&kernel, run);
                if let Some(first) = seen.get(&key) {
                    copies.push(format!("boot {} repeats {}", run.index, first.display()));
                    return false;
                }
                seen.insert(key, file.clone());
                true
            });
        }
        sets.retain(|s| !s.runs.is_empty());
        if !copies.is_empty() {
            said.push(format!(
                "{}: counted once: {}",
                file.display(),
                copies.join(", ")
            ));
        }
    }
    files.retain(|(_, sets)| !sets.is_empty());
    said
}

impl Side {
    /// The side of one results file.
    pub fn of_file(file: &Path, sets: Vec<RunSet>) -> Side {
        Side {
            files: vec![file.display().to_string()],
            sets,
        }
    }

    /// Its boots that left a report.
    pub fn runs(&self) -> impl Iterator<Item = &RunRecord> {
        self.sets
            .iter()
            .flat_map(|s| s.runs.iter())
            .filter(|r| r.report.is_some())
    }

    /// Every benchmark with a result, whatever its status.
    pub fn names(&self) -> std::collections::BTreeSet<&str> {
        self.runs()
            .filter_map(|r| r.report.as_ref())
            .flat_map(|r| &r.results)
            .map(|b| b.name.as_str())
            .collect()
    }

    /// Each benchmark: whether it has a figure (an `ok` result), else
    /// why not; one unsupported everywhere is left out (nothing to
    /// measure).
    pub fn standing(&self) -> std::collections::BTreeMap<String, Standing> {
        let mut out: std::collections::BTreeMap<String, Standing> = Default::default();
        for r in self.runs().filter_map(|r| r.report.as_ref()) {
            for b in &r.results {
                let now = match b.status {
                    Status::Ok => Standing::Measured,
                    Status::Unsupported => continue,
                    s => Standing::Failed(b.reason.clone().unwrap_or_else(|| s.as_str().into())),
                };
                let e = out.entry(b.name.clone()).or_insert(now.clone());
                if now == Standing::Measured {
                    *e = now;
                }
            }
        }
        out
    }
}

/// A benchmark on one side: measured (an `ok` result in some boot), or
/// failed, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    Measured,
    Failed(String),
}

/// The top level of an object: what tells a results file from a report.
#[derive(serde::Deserialize)]
struct Top {
    runs: Option<IgnoredAny>,
    results: Option<IgnoredAny>,
}

/// Parses one results document; the error says what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<RunSet>, Error> {
    serde_json::from_str::<IgnoredAny>(text).map_err(|e| {
        error::input(if e.is_eof() {
            format!("truncated JSON ({e})")
        } else {
            format!("malformed JSON ({e})")
        })
    })?;
    // read from the text, not a parsed value, so that an error names its line
    let shape = |e: serde_json::Error| error::input(format!("not a trig-init results file: {e}"));
    let top = if text.trim_start().starts_with('{') {
        // an object whose top level cannot be read (a key twice) says why
        Some(serde_json::from_str::<Top>(text).map_err(shape)?)
    } else {
        None
    };
    let mut sets: Vec<RunSet> = if text.trim_start().starts_with('[') {
        serde_json::from_str(text).map_err(shape)?
    } else if top.as_ref().is_some_and(|t| t.runs.is_some()) {
        vec![serde_json::from_str(text).map_err(shape)?]
    } else if top.as_ref().is_some_and(|t| t.results.is_some()) {
        // a plain run: one boot-less "run" on whatever kernel it ran on
        vec![from_report(serde_json::from_str(text).map_err(shape)?)]
    } else {
        return Err(error::input("not a trig-init results file: neither `runs` (trig-init vm) nor `results` (trig-init run)"));
    };
    for s in &mut sets {
        readable_version("results", s.schema_version).map_err(error::input)?;
        for r in s.runs.iter_mut().filter_map(|r| r.report.as_mut()) {
            readable_version("report", r.schema_version).map_err(error::input)?;
            positive_rates(r).map_err(error::input)?;
            // every results file comes through here: the one place where
            // older reports get what newer guests record
            upgrade(r);
        }
    }
    Ok(sets)
}

/// A newer schema may mean other units in the same fields: refuse it.
fn readable_version(what: &str, v: u32) -> Result<(), String> {
    if v == 0 || v > SCHEMA_VERSION {
        return Err(format!(
            "{what} schema version {v}: this trig-init reads versions 1 to {SCHEMA_VERSION}"
        ));
    }
    Ok(())
}

/// A rate at or below zero, or instructions counted below zero, is no
/// measurement (a guest counts events, the plugin instructions): it would
/// read as `no-change`, so the file is refused instead.
fn positive_rates(r: &Report) -> Result<(), String> {
    for b in r.results.iter().filter(|b| b.status == Status::Ok) {
        if let Some(mean) = b.summary.as_ref().map(|s| s.mean).filter(|m| *m <= 0.0) {
            return Err(format!(
                "invalid input: {} has rate {mean}; an ok result's rate is above 0",
                b.name
            ));
        }
        if let Some(p) = b
            .profile
            .as_ref()
            .filter(|p| p.total < 0.0 || p.kernel < 0.0)
        {
            return Err(format!(
                "invalid input: {} has {} instructions per event, {} of them the kernel's; counted instructions are 0 or more",
                b.name, p.total, p.kernel
            ));
        }
    }
    Ok(())
}

fn from_report(report: Report) -> RunSet {
    RunSet {
        schema_version: SCHEMA_VERSION,
        created: None,
        kernel: trig_schema::KernelInfo {
            spec: "running kernel".into(),
            path: String::new(),
            package: None,
            release: report.system.release.clone(),
            commit: None,
        },
        vm: VmInfo {
            arch: report.system.machine.clone(),
            accel: if report.system.pid1 {
                "unknown"
            } else {
                "none"
            }
            .into(),
            // a plain run cannot tell; vmtest and test boxes are timed
            meter: Default::default(),
            cpus: report.system.cpus,
            memory: String::new(),
            append: report.system.cmdline.clone(),
            qemu: None,
            machine: None,
            cpu: None,
            cache: None,
            icount_shift: 0,
        },
        runs: vec![RunRecord {
            index: 1,
            status: if report.all_ok() {
                BootStatus::Ok
            } else {
                BootStatus::Failed
            },
            message: None,
            console_log: String::new(),
            wall_s: 0.0,
            boot_s: None,
            pairing: None,
            report: Some(report),
            timeline: None,
            parts: Vec::new(),
        }],
    }
}

/// Where `history --alert` remembers the change points it alerted on,
/// beside the results (which never read it as one).
pub const ALERTS_FILE: &str = "alerts.json";

/// The `.json` files of a directory, by name.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        // what is not read is named, never dropped without a word
        let path = match entry {
            Ok(e) => e.path(),
            Err(e) => {
                error::warn(format_args!("{}: an entry unread: {e}", dir.display()));
                continue;
            }
        };
        // what `history --alert` keeps beside the results
        if path.extension().is_none_or(|x| x != "json") || path.ends_with(ALERTS_FILE) {
            continue;
        }
        // a link is followed: to a file, read; to nothing, or a loop, named
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => files.push(path),
            Ok(m) => error::warn(format_args!(
                "skipped {}: {}, not a results file",
                path.display(),
                if m.is_dir() {
                    "a directory"
                } else {
                    "not a regular file"
                }
            )),
            Err(e) => error::warn(format_args!("skipped {}: {e}", path.display())),
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no .json results files", dir.display()));
    }
    Ok(files)
}

pub fn load_file(path: &Path) -> Result<Vec<RunSet>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| error::input(format!("{}: {e}", path.display())))?;
    parse_file(path, &text).map_err(|e| error::input(format!("{}: {e}", path.display())))
}

/// A results file's text, read from `path`: parsed, and a split run of
/// an older build given its guests' parameters.
fn parse_file(path: &Path, text: &str) -> Result<Vec<RunSet>, String> {
    let mut sets = parse(text).map_err(|e| e.message)?;
    split_params::mend(path, &mut sets).map_err(|e| e.message)?;
    Ok(sets)
}

/// A results file found in a directory; None, with a warning naming it,
/// for an empty or cut-off one (an older trig-init left one when the disk
/// filled on its first write): the rest of the directory still counts.
fn load_found(path: &Path) -> Result<Option<Vec<RunSet>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cut = text.trim().is_empty()
        || serde_json::from_str::<IgnoredAny>(&text).is_err_and(|e| e.is_eof());
    if cut {
        error::warn(format_args!(
            "skipped {}: empty or cut off ({} bytes), not a whole results file",
            path.display(),
            text.len()
        ));
        return Ok(None);
    }
    parse_file(path, &text)
        .map(Some)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The whole results files of a directory, by name.
fn load_dir(dir: &Path) -> Result<Vec<(PathBuf, Vec<RunSet>)>, String> {
    let mut found = Vec::new();
    for f in json_files(dir)? {
        if let Some(sets) = load_found(&f)? {
            found.push((f, sets));
        }
    }
    Ok(found)
}

/// One side from files and directories.
pub fn load(paths: &[PathBuf]) -> Result<Side, Error> {
    let mut side = Side {
        files: Vec::new(),
        sets: Vec::new(),
    };
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            files.extend(load_dir(p).map_err(error::input)?);
        } else {
            files.push((p.clone(), load_file(p)?));
        }
    }
    for line in drop_copies(&mut files) {
        error::warn(line);
    }
    for (f, sets) in files {
        side.sets.extend(sets);
        side.files.push(f.display().to_string());
    }
    Ok(side)
}

/// Every results file in a history directory, oldest first (by when the
/// run started, else by name), with what it holds.
pub fn history(dir: &Path) -> Result<Vec<(PathBuf, Vec<RunSet>)>, Error> {
    let mut entries = load_dir(dir).map_err(error::input)?;
    for line in drop_copies(&mut entries) {
        error::warn(line);
    }
    entries.sort_by_key(|(f, sets)| {
        (
            sets.iter().filter_map(|s| s.created.clone()).min(),
            f.clone(),
        )
    });
    Ok(entries)
}

/// `history` in the order the results ran: each needs a `created` that
/// says when (a missing or garbled one would be sorted anywhere and could
/// invent a change point).
pub fn by_date(dir: &Path) -> Result<Vec<(PathBuf, Vec<RunSet>)>, Error> {
    let entries = history(dir)?;
    if let Some((f, _)) = entries.iter().find(|(_, sets)| {
        !sets
            .iter()
            .any(|s| s.created.as_deref().is_some_and(is_timestamp))
    }) {
        return Err(error::input(format!(
            "{}: no `created` of the form 20261130T012345Z to order it by when it ran; \
             order by commit instead (--git TREE)",
            f.display()
        )));
    }
    Ok(entries)
}

/// `--previous DIR`: the two newest results, as (BASE, NEW).
pub fn previous(dir: &Path) -> Result<(Side, Side), Error> {
    let mut h = by_date(dir)?;
    if h.len() < 2 {
        return Err(error::input(format!(
            "{}: --previous needs at least two results files, found {}",
            dir.display(),
            h.len()
        )));
    }
    let (nf, new) = h.pop().expect("two entries");
    let (bf, base) = h.pop().expect("two entries");
    Ok((Side::of_file(&bf, base), Side::of_file(&nf, new)))
}
