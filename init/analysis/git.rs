//! git on a kernel tree, for the sweep's range and history's order: a git
//! that cannot be run is the host's failing (infrastructure, exit 4); a
//! git that refuses the tree or the range, the input's (exit 2).

use std::path::Path;
use std::process::Command;
use trig_schema::error::{infra, input, Error};

/// `git -C tree ARGS...`: its standard output.
pub fn git(tree: &Path, args: &[&str]) -> Result<String, Error> {
    let out = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(args)
        .output()
        .map_err(|e| infra(format!("git could not be run: {e}")))?;
    if !out.status.success() {
        return Err(input(format!(
            "git {} in {}: {}",
            args.join(" "),
            tree.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
