//! The results files of a history directory, in the order of when they
//! ran or of their commits in a git tree.

use crate::git::git;
use crate::input;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;
use trig_schema::error::{self, Error};
use trig_schema::{is_object_name, RunSet};

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
/// rev-list --reverse`), when asked. A result is placed only by a commit
/// that names one commit of the tree: none recorded, an empty one, one
/// that is no object name, one that is not in the tree and a prefix of
/// several are each named, all of them in one error.
fn order_by_git(
    entries: &mut [(std::path::PathBuf, Vec<RunSet>)],
    tree: &Path,
) -> Result<(), Error> {
    let list = git(tree, &["rev-list", "--reverse", "--topo-order", "HEAD"])?;
    let order: Vec<&str> = list.lines().collect();
    let mut keyed = Vec::new();
    let mut unplaced = Vec::new();
    for (f, sets) in entries.iter() {
        let commit = sets.iter().find_map(|s| s.kernel.commit.clone());
        match place(commit.as_deref(), &order) {
            Ok(pos) => keyed.push(pos),
            Err(why) => unplaced.push(format!("{}: {why}", f.display())),
        }
    }
    if !unplaced.is_empty() {
        let head = format!(
            "--git {} cannot place {} of the results by their commits:",
            tree.display(),
            unplaced.len()
        );
        return Err(error::input(head).listing(unplaced));
    }
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by_key(|&i| keyed[i]);
    let sorted: Vec<_> = idx.iter().map(|&i| entries[i].clone()).collect();
    entries.clone_from_slice(&sorted);
    Ok(())
}

/// Where the commit a result recorded stands in `order`, or why it
/// cannot be placed there.
fn place(commit: Option<&str>, order: &[&str]) -> Result<usize, String> {
    let c = match commit {
        None | Some("") => {
            return Err("no kernel commit recorded (vm --commit SHA records it)".into())
        }
        Some(c) => c,
    };
    // git's shortest abbreviation is 4 digits
    if c.len() < 4 || !is_object_name(c) {
        return Err(format!(
            "kernel commit '{}' is not a commit id (4 to 40 hex digits)",
            error::shown(c, false)
        ));
    }
    let found: Vec<usize> = (0..order.len())
        .filter(|&i| order[i].starts_with(c))
        .collect();
    match found[..] {
        [i] => Ok(i),
        [] => Err(format!("kernel commit {c} is not in the tree's history")),
        _ => Err(format!(
            "kernel commit {c} is ambiguous: {} commits start with it",
            found.len()
        )),
    }
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

#[cfg(test)]
mod tests {
    use super::place;

    #[test]
    fn a_night_is_placed_only_by_a_commit_that_names_one() {
        let order = ["abcd1234", "abcd5678", "ef001234"];
        assert_eq!(place(Some("ef00"), &order), Ok(2));
        assert_eq!(place(Some("abcd5678"), &order), Ok(1));
        for (commit, why) in [
            (None, "no kernel commit recorded"),
            (Some(""), "no kernel commit recorded"),
            (Some("abc"), "is not a commit id"),
            (Some("fix-f\u{fc}r"), "is not a commit id"),
            (Some("abcd"), "ambiguous: 2 commits"),
            (Some("0123456789"), "is not in the tree's history"),
        ] {
            let e = place(commit, &order).unwrap_err();
            assert!(e.contains(why), "{commit:?}: {e}");
        }
    }
}
