//! The results files of a history directory, in the order of when they
//! ran or of their commits in a git tree.

use crate::git::git;
use crate::input;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use trig_schema::error::{self, Error};
use trig_schema::RunSet;

/// One results file of the history: one point of every series.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub file: String,
    pub created: Option<String>,
    pub release: String,
    pub commit: Option<String>,
}

impl Point {
    pub fn label(&self) -> String {
        let mut s = self.release.clone();
        if let Some(c) = &self.commit {
            let _ = write!(s, " @{}", trig_schema::abbrev(c, 12));
        }
        if let Some(t) = &self.created {
            let _ = write!(s, " {t}");
        }
        s
    }
}

/// Orders the history by the commits' order in a git tree (`git
/// rev-list --reverse`), when asked; results without a known commit are
/// an error then.
fn order_by_git(
    entries: &mut [(std::path::PathBuf, Vec<RunSet>)],
    tree: &Path,
) -> Result<(), Error> {
    let list = git(tree, &["rev-list", "--reverse", "--topo-order", "HEAD"])?;
    let order: BTreeMap<String, usize> = list
        .lines()
        .enumerate()
        .map(|(i, c)| (c.to_string(), i))
        .collect();
    let mut keyed = Vec::new();
    for (f, sets) in entries.iter() {
        let commit = sets.iter().find_map(|s| s.kernel.commit.clone());
        let pos = commit
            .as_ref()
            .and_then(|c| {
                order
                    .iter()
                    .find(|(full, _)| full.starts_with(c.as_str()))
                    .map(|(_, i)| *i)
            })
            .ok_or_else(|| match &commit {
                None => error::input(format!(
                    "{}: no kernel commit recorded (vm --commit SHA records it), so --git cannot place it",
                    f.display()
                )),
                Some(c) => error::input(format!(
                    "{}: kernel commit {c} is not in the history of {}",
                    f.display(),
                    tree.display()
                )),
            })?;
        keyed.push(pos);
    }
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by_key(|&i| keyed[i]);
    let sorted: Vec<_> = idx.iter().map(|&i| entries[i].clone()).collect();
    entries.clone_from_slice(&sorted);
    Ok(())
}

/// The history in `dir`, by date or, with a tree, by its commits: an
/// unreadable file is the input's error, a git that cannot be run the
/// host's.
pub fn load(dir: &Path, tree: Option<&Path>) -> Result<Vec<(Point, Vec<RunSet>)>, Error> {
    let entries = match tree {
        Some(tree) => {
            let mut entries = input::history(dir)?;
            order_by_git(&mut entries, tree)?;
            entries
        }
        None => input::by_date(dir)?,
    };
    Ok(entries
        .into_iter()
        .map(|(f, sets)| {
            let point = Point {
                file: f.display().to_string(),
                created: sets.iter().find_map(|s| s.created.clone()),
                release: sets
                    .first()
                    .map_or_else(String::new, |s| s.kernel.release.clone()),
                commit: sets.iter().find_map(|s| s.kernel.commit.clone()),
            };
            (point, sets)
        })
        .collect())
}
