//! The results files of a `vm` command: one per kernel, rewritten after
//! every boot so that a later failure loses nothing, with each boot's
//! console log beside it.

use crate::judge::append;
use crate::kernel::Kernel;
use std::path::{Path, PathBuf};
use trig_schema::files;
use trig_schema::{RunRecord, RunSet};

/// One kernel of the command and the results file it accumulates.
pub struct Target {
    pub kernel: Kernel,
    pub set: RunSet,
    /// The results file this command claimed, and the name it was
    /// claimed for (RELEASE-STEM-TAG).
    pub path: Option<(PathBuf, String)>,
}

impl Target {
    /// Adds a run, writes its console logs (one, or one a part of a split
    /// run; None for a part that never ran) and rewrites the results
    /// file; `tag` keeps several kernels of one command apart. A log that
    /// could not be written is noted in the run's message and returned as
    /// a warning; a results file that could not be is the error (the run
    /// stays in `set`, to be shown).
    pub(crate) fn add(
        &mut self,
        out: &Path,
        stem: &str,
        tag: &str,
        rec: RunRecord,
        logs: &[Option<String>],
    ) -> Result<Option<String>, String> {
        if let Some(r) = &rec.report {
            self.set.kernel.release.clone_from(&r.system.release);
        }
        // boots side by side end in any order; the file keeps boot order
        let at = self.set.runs.partition_point(|r| r.index < rec.index);
        self.set.runs.insert(at, rec);
        let path = self.claim(out, &format!("{stem}{tag}"))?;
        let rec = &mut self.set.runs[at];
        let mut warnings = Vec::new();
        if rec.parts.is_empty() {
            let log = logs.first().and_then(Option::as_deref).unwrap_or_default();
            let log_path = path.with_extension(format!("boot{}.log", rec.index));
            match write_log(&log_path, log) {
                Ok(p) => rec.console_log = p,
                Err(why) => warnings.push(why),
            }
        }
        for (i, log) in logs.iter().enumerate().take(rec.parts.len()) {
            let Some(log) = log else { continue };
            let log_path = path.with_extension(format!("boot{}.part{}.log", rec.index, i + 1));
            match write_log(&log_path, log) {
                Ok(p) => rec.parts[i].boot.console_log = p,
                Err(why) => warnings.push(why),
            }
        }
        if let Some(first) = rec.parts.iter().find(|p| !p.boot.console_log.is_empty()) {
            rec.console_log.clone_from(&first.boot.console_log);
        }
        for why in &warnings {
            append(&mut rec.message, why.clone());
        }
        files::replace(&path, self.json().as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok((!warnings.is_empty()).then(|| warnings.join("; ")))
    }

    fn json(&self) -> String {
        serde_json::to_string_pretty(&self.set).expect("results serialize")
    }

    /// The results file for the kernel's release as now known: created
    /// anew, whole (and the old one removed), when the release changed
    /// the name.
    fn claim(&mut self, out: &Path, suffix: &str) -> Result<PathBuf, String> {
        let name = format!("{}-{suffix}", self.set.kernel.release.replace('/', "_"));
        if self.path.as_ref().map(|(_, n)| n) != Some(&name) {
            // another run into this directory in the same second gets
            // NAME-2.json, never this one
            let path = files::create_first(
                |n| match n {
                    1 => out.join(format!("{name}.json")),
                    n => out.join(format!("{name}-{n}.json")),
                },
                self.json().as_bytes(),
            )
            .map_err(|e| format!("{}: {e}", out.join(format!("{name}.json")).display()))?;
            if let Some((old, _)) = self.path.replace((path, name)) {
                let _ = std::fs::remove_file(old);
            }
        }
        Ok(self.path.as_ref().expect("claimed above").0.clone())
    }
}

/// Writes a console log; its path, or why it could not be written.
fn write_log(path: &Path, log: &str) -> Result<String, String> {
    files::replace(path, log.as_bytes())
        .map(|()| path.display().to_string())
        .map_err(|e| format!("console log {} not written: {e}", path.display()))
}

/// A UTC timestamp for file names, 20261130T012345Z.
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // civil-from-days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_shape() {
        let t = timestamp();
        assert_eq!(t.len(), 16);
        assert!(t.starts_with("20") && t.ends_with('Z') && t.as_bytes()[8] == b'T');
    }
}
