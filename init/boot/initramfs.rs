//! The initramfs: a newc cpio with the binary as /init and the two device
//! nodes the kernel needs before devtmpfs is mounted.

use cpio::newc::{self, Builder, ModeFileType};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Undocumented, for scripts/bench/upstream-bench.sh: a directory whose tree is
/// added to the initramfs at the same paths (directories and regular files
/// only). With it the guest's PID 1 runs `/.trig-extra/run`, if the tree
/// has one, before the matrix (`guest::EXTRA_RUN`).
pub const EXTRA_ROOT_ENV: &str = "TRIG_INIT_EXTRA_ROOT";

/// One entry of an extra tree: its path relative to the tree's root, and
/// what it is.
struct Extra {
    name: String,
    dir: bool,
    perm: u32,
    data: Vec<u8>,
}

/// The files of `root`, preorder (every directory before what it holds).
fn tree(root: &Path) -> std::io::Result<Vec<Extra>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<Extra>) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let path = e.path();
            let meta = std::fs::metadata(&path)?;
            let name = path
                .strip_prefix(root)
                .map_err(std::io::Error::other)?
                .to_str()
                .ok_or_else(|| std::io::Error::other(format!("{}: not UTF-8", path.display())))?
                .to_string();
            let perm = meta.permissions().mode() & 0o7777;
            if meta.is_dir() {
                out.push(Extra {
                    name,
                    dir: true,
                    perm,
                    data: Vec::new(),
                });
                walk(root, &path, out)?;
            } else if meta.is_file() {
                let data = std::fs::read(&path)?;
                out.push(Extra {
                    name,
                    dir: false,
                    perm,
                    data,
                });
            } else {
                return Err(std::io::Error::other(format!(
                    "{}: neither a directory nor a regular file",
                    path.display()
                )));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

pub fn build(init: &[u8]) -> std::io::Result<Vec<u8>> {
    build_with(init, None)
}

/// [`build`], plus the tree under `extra` (see [`EXTRA_ROOT_ENV`]).
pub fn build_with(init: &[u8], extra: Option<&Path>) -> std::io::Result<Vec<u8>> {
    let extra = extra.map(tree).transpose()?.unwrap_or_default();
    let mut out = Vec::with_capacity(init.len() + 1024);
    let mut ino = 1;
    let mut entry = |name: &str, kind: ModeFileType, perm: u32, rdev: (u32, u32), data: &[u8]| {
        let nlink = if matches!(kind, ModeFileType::Directory) {
            2
        } else {
            1
        };
        let b = Builder::new(name)
            .ino(ino)
            .mode(perm)
            .set_mode_file_type(kind)
            .nlink(nlink)
            .rdev_major(rdev.0)
            .rdev_minor(rdev.1);
        ino += 1;
        let mut w = b.write(&mut out, data.len() as u32);
        w.write_all(data)?;
        w.finish().map(|_| ())
    };
    entry("dev", ModeFileType::Directory, 0o755, (0, 0), &[])?;
    // the kernel opens /dev/console for init's stdio before init runs
    entry("dev/console", ModeFileType::Char, 0o600, (5, 1), &[])?;
    entry("dev/null", ModeFileType::Char, 0o666, (1, 3), &[])?;
    entry("init", ModeFileType::Regular, 0o755, (0, 0), init)?;
    for e in &extra {
        if e.name == "dev" || e.name == "init" {
            return Err(std::io::Error::other(format!(
                "extra {}: already there",
                e.name
            )));
        }
        let kind = if e.dir {
            ModeFileType::Directory
        } else {
            ModeFileType::Regular
        };
        entry(&e.name, kind, e.perm, (0, 0), &e.data)?;
    }
    newc::trailer(&mut out)?;
    Ok(out)
}

/// Whether an ELF executable has no program interpreter (is static): a
/// dynamic /init cannot start in an initramfs without a libc.
pub fn is_static_elf(elf: &[u8]) -> bool {
    use object::elf::{FileHeader64, PT_INTERP};
    use object::read::elf::{FileHeader, ProgramHeader};
    use object::LittleEndian as LE;
    // 64-bit little-endian ELF only: what trig-init is built as
    let Ok(header) = FileHeader64::<LE>::parse(elf) else {
        return false;
    };
    header
        .program_headers(LE, elf)
        .is_ok_and(|phdrs| phdrs.iter().all(|p| p.p_type(LE) != PT_INTERP))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Every entry of a newc archive: name, mode, device numbers, data.
    fn entries(bytes: Vec<u8>) -> Vec<(String, u32, u32, u32, Vec<u8>)> {
        let mut cur = std::io::Cursor::new(bytes);
        let mut seen = Vec::new();
        loop {
            let mut r = newc::Reader::new(&mut cur).unwrap();
            let e = r.entry();
            if e.is_trailer() {
                return seen;
            }
            let (name, mode, major, minor) = (
                e.name().to_string(),
                e.mode(),
                e.rdev_major(),
                e.rdev_minor(),
            );
            let mut data = Vec::new();
            r.read_to_end(&mut data).unwrap();
            seen.push((name, mode, major, minor, data));
            r.finish().unwrap();
        }
    }

    /// Static: no program interpreter; a dynamic executable (the host's
    /// shell) has one, and what is no 64-bit ELF is neither.
    #[test]
    fn a_static_elf_has_no_interpreter() {
        let mut header = vec![0u8; 64];
        header[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        header[18] = 62;
        assert!(is_static_elf(&header));
        assert!(!is_static_elf(&std::fs::read("/bin/sh").unwrap()));
        assert!(!is_static_elf(b"\x7fELF-not-really"));
    }

    #[test]
    fn reads_back_with_nodes_and_init() {
        let seen = entries(build(b"\x7fELF-not-really").unwrap());
        assert_eq!(
            (seen[1].0.as_str(), seen[1].1, seen[1].2, seen[1].3),
            ("dev/console", 0o020600, 5, 1)
        );
        assert_eq!(seen[3].0, "init");
        assert_eq!(seen[3].1, 0o100755);
        assert_eq!(seen[3].4, b"\x7fELF-not-really");
    }

    #[test]
    fn extra_tree_goes_in_at_its_paths() {
        let dir = std::env::temp_dir().join(format!("trig-extra-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".trig-extra/sub")).unwrap();
        std::fs::write(dir.join(".trig-extra/run"), b"#!x").unwrap();
        std::fs::set_permissions(
            dir.join(".trig-extra/run"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(dir.join(".trig-extra/sub/data"), b"d").unwrap();
        let bytes = build_with(b"\x7fELF", Some(&dir)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let seen = entries(bytes);
        let names: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "dev",
                "dev/console",
                "dev/null",
                "init",
                ".trig-extra",
                ".trig-extra/run",
                ".trig-extra/sub",
                ".trig-extra/sub/data"
            ]
        );
        assert_eq!(seen[5].1, 0o100755);
        assert_eq!(seen[5].4, b"#!x");
        assert_eq!(seen[6].1 & 0o170000, 0o040000);
    }
}
