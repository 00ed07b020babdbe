//! Every file trig-init writes: written whole or not at all (into a
//! temporary file beside it, then renamed or linked into place), claimed
//! exclusively so that two runs into one directory never share one, and
//! temporary ones removed on every path out, or by a later run when their
//! owner was killed.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// [`replace`] for what a command writes as its output (results, an
/// export, a manifest, alerts): the error names the path and is the
/// host's (4: what could not be written).
pub fn write(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> Result<(), crate::error::Error> {
    let path = path.as_ref();
    replace(path, bytes.as_ref())
        .map_err(|e| crate::error::infra(format!("{}: {e}", path.display())))
}

/// [`check_writable`] for every output a command was asked for, before
/// its work: the first that cannot be written named as [`write`] names
/// it, so that nothing is printed or replaced when one of them would fail.
pub fn check_outputs<'a>(
    paths: impl IntoIterator<Item = &'a Path>,
) -> Result<(), crate::error::Error> {
    for path in paths {
        check_writable(path).map_err(|e| {
            let name = match path.as_os_str().is_empty() {
                true => "''".into(),
                false => path.display().to_string(),
            };
            crate::error::infra(format!("{name}: {e}"))
        })?;
    }
    Ok(())
}

/// A temporary file, removed when dropped: on success, on an error
/// returned by `?`, on a panic and on an interrupted run alike.
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// Creates `path`, which must not exist yet, with `bytes` in it.
    pub fn create(path: PathBuf, bytes: &[u8]) -> io::Result<TempFile> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let file = TempFile { path };
        f.write_all(bytes)?;
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Writes `bytes` whole to the first of `name(1)`, `name(2)`, ... that
/// does not exist yet, and returns it: the caller owns that name from then
/// on. The file appears with all its bytes (linked from a temporary file
/// written first) or not at all: a full disk leaves no empty one.
pub fn create_first(name: impl Fn(usize) -> PathBuf, bytes: &[u8]) -> io::Result<PathBuf> {
    let first = name(1);
    let tmp = TempFile::create(temp_beside(&first), bytes)?;
    File::open(tmp.path())?.sync_all()?;
    for n in 1..=1000 {
        let path = name(n);
        match fs::hard_link(tmp.path(), &path) {
            Ok(()) => {
                sync_dir(&path);
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            // a file system without hard links (vfat): claim the name
            // empty, then rename the whole file over it
            Err(_) => match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => {
                    return fs::rename(tmp.path(), &path)
                        .map(|()| path.clone())
                        .inspect_err(|_| {
                            let _ = fs::remove_file(&path);
                        })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            },
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{}: a thousand files of that name exist", first.display()),
    ))
}

/// This process's temporary file for `path`, in the same directory (a
/// rename or link never crosses a file system): `.NAME.tmp-PID`.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent().and_then(|d| File::open(d).ok()) {
        let _ = dir.sync_all();
    }
}

/// Replaces `path` with what `write` writes: into a temporary file in the
/// same directory, flushed to disk, then renamed over `path`. A failure at
/// any step leaves the old `path` whole.
pub fn replace_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    // a device or pipe (--json /dev/stdout) is written as it is, not
    // replaced; a symbolic link's target is replaced, not the link
    match fs::metadata(path) {
        Ok(m) if !m.is_file() => return write(&mut OpenOptions::new().write(true).open(path)?),
        Ok(_) if fs::symlink_metadata(path)?.file_type().is_symlink() => {
            return replace_with(&fs::canonicalize(path)?, write)
        }
        _ => {}
    }
    let tmp = temp_beside(path);
    let _ = fs::remove_file(&tmp);
    let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let guard = TempFile { path: tmp };
    write(&mut f)?;
    f.sync_all()?;
    fs::rename(&guard.path, path)?;
    // renamed: nothing left to remove
    std::mem::forget(guard);
    sync_dir(path);
    Ok(())
}

/// [`replace_with`] these bytes.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(path, |f| f.write_all(bytes))
}

/// Whether `path` can be written, found before the work whose result
/// goes there: its directory exists and takes a file, and it is not a
/// directory itself.
pub fn check_writable(path: &Path) -> io::Result<()> {
    // "", "." or "dir/..": no file to write (the temporary file beside
    // it was `..tmp-PID` in the working directory, and the write failed
    // only after the work)
    if path.file_name().is_none() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "names no file"));
    }
    if path.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "a directory"));
    }
    if fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        // a device or pipe: opened when written
        return Ok(());
    }
    TempFile::create(temp_beside(path), b"").map(drop)
}

/// Removes the temporary files in `dir` of trig-init processes that are
/// gone (killed before their guards ran): `.NAME.tmp-PID`, and a `vm`
/// run's `.initramfs-STAMP-PID.cpio` and `.profile-STAMP-PID-N.txt`. A
/// living owner's files stay; returns the names removed.
pub fn remove_stale(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let gone = owner(&name).is_some_and(|pid| {
            pid != std::process::id() as i32
                && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
                    == Err(nix::errno::Errno::ESRCH)
        });
        if gone && fs::remove_file(entry.path()).is_ok() {
            removed.push(name);
        }
    }
    removed.sort();
    removed
}

/// The pid in the name of a temporary file of trig-init's.
fn owner(name: &str) -> Option<i32> {
    let rest = name.strip_prefix('.')?;
    let pid = if let Some(r) = rest.strip_prefix("initramfs-") {
        r.strip_suffix(".cpio")?.rsplit('-').next()?
    } else if let Some(r) = rest.strip_prefix("profile-") {
        r.strip_suffix(".txt")?.rsplit('-').nth(1)?
    } else {
        rest.rsplit_once(".tmp-")?.1
    };
    pid.parse().ok().filter(|&p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trig-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_path_that_names_no_file_is_refused_before_the_work() {
        for path in ["", ".", "..", "/", "some/dir/.."] {
            let e = check_writable(Path::new(path)).unwrap_err();
            assert_eq!(e.to_string(), "names no file", "{path:?}");
        }
    }

    #[test]
    fn a_failed_rewrite_keeps_the_old_file_whole() {
        let d = dir("atomic");
        let p = d.join("r.json");
        replace(&p, b"{\"boots\":1}").unwrap();
        // a disk that fills up half-way through the rewrite
        let e = replace_with(&p, |f| {
            f.write_all(b"{\"boo")?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
        });
        assert!(e.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"{\"boots\":1}");
        assert_eq!(names(&d), vec!["r.json"], "no temporary file left");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn claims_never_share_a_name_and_temp_files_go() {
        let d = dir("claim");
        let name = |n: usize| d.join(format!("r{n}.json"));
        let (a, b) = (
            create_first(name, b"a").unwrap(),
            create_first(name, b"b").unwrap(),
        );
        assert_ne!(a, b);
        assert_eq!(fs::read(&b).unwrap(), b"b");
        {
            let t = TempFile::create(d.join(".t"), b"x").unwrap();
            assert!(TempFile::create(d.join(".t"), b"y").is_err(), "exclusive");
            assert!(t.path().exists());
        }
        assert_eq!(names(&d), vec!["r1.json", "r2.json"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn stale_temporary_files_of_dead_runs_go_and_live_ones_stay() {
        let d = dir("stale");
        // a pid that is surely gone: a child reaped already
        let gone = {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            c.wait().unwrap();
            c.id()
        };
        let me = std::process::id();
        for n in [
            format!(".initramfs-20261201T000000Z-{gone}.cpio"),
            format!(".profile-20261201T000000Z-{gone}-3.txt"),
            format!(".r.json.tmp-{gone}"),
            format!(".initramfs-20261201T000000Z-{me}.cpio"),
            "r.json".into(),
            ".hidden".into(),
        ] {
            fs::write(d.join(n), b"x").unwrap();
        }
        assert_eq!(remove_stale(&d).len(), 3);
        assert_eq!(
            names(&d),
            vec![
                ".hidden".to_string(),
                format!(".initramfs-20261201T000000Z-{me}.cpio"),
                "r.json".into()
            ]
        );
        fs::remove_dir_all(&d).unwrap();
    }
}
