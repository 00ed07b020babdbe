//! The files of a `vm` run: claimed exclusively so that two runs into one
//! directory never share one, rewritten atomically so that a failed write
//! never costs what was already kept, and temporary ones removed on every
//! path out.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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

/// Creates, empty, the first of `name(1)`, `name(2)`, ... that does not
/// exist yet, and returns it: the caller owns that name from then on.
pub fn claim(name: impl Fn(usize) -> PathBuf) -> io::Result<PathBuf> {
    for n in 1..=1000 {
        let path = name(n);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{}: a thousand files of that name exist", name(1).display()),
    ))
}

/// Replaces `path` with what `write` writes: into a temporary file in the
/// same directory, flushed to disk, then renamed over `path`. A failure at
/// any step leaves the old `path` whole.
pub fn replace_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let guard = TempFile { path: tmp };
    write(&mut f)?;
    f.sync_all()?;
    fs::rename(&guard.path, path)?;
    // renamed: nothing left to remove
    std::mem::forget(guard);
    if let Some(dir) = path.parent().and_then(|d| File::open(d).ok()) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// [`replace_with`] these bytes.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_with(path, |f| f.write_all(bytes))
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
        let (a, b) = (claim(name).unwrap(), claim(name).unwrap());
        assert_ne!(a, b);
        {
            let t = TempFile::create(d.join(".t"), b"x").unwrap();
            assert!(TempFile::create(d.join(".t"), b"y").is_err(), "exclusive");
            assert!(t.path().exists());
        }
        assert_eq!(names(&d), vec!["r1.json", "r2.json"]);
        fs::remove_dir_all(&d).unwrap();
    }
}
