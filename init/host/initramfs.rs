//! The initramfs: a newc cpio with the binary as /init and the two device
//! nodes the kernel needs before devtmpfs is mounted.

use super::le_uint;
use cpio::newc::{self, Builder, ModeFileType};
use std::io::Write;

pub fn build(init: &[u8]) -> std::io::Result<Vec<u8>> {
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
    newc::trailer(&mut out)?;
    Ok(out)
}

/// Whether an ELF executable has no program interpreter (is static): a
/// dynamic /init cannot start in an initramfs without a libc.
pub fn is_static_elf(elf: &[u8]) -> bool {
    // 64-bit little-endian ELF only: what trig-init is built as
    if !elf.starts_with(b"\x7fELF\x02\x01") {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (
        le_uint(elf, 0x20, 8),
        le_uint(elf, 0x36, 2),
        le_uint(elf, 0x38, 2),
    ) else {
        return false;
    };
    const PT_INTERP: usize = 3;
    (0..phnum).all(|i| {
        let o = phoff + i * phentsize;
        le_uint(elf, o, 4).is_some_and(|t| t != PT_INTERP)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn reads_back_with_nodes_and_init() {
        let bytes = build(b"\x7fELF-not-really").unwrap();
        let mut cur = std::io::Cursor::new(bytes);
        let mut seen = Vec::new();
        loop {
            let mut r = newc::Reader::new(&mut cur).unwrap();
            if r.entry().is_trailer() {
                break;
            }
            let e = r.entry();
            let name = e.name().to_string();
            seen.push((name.clone(), e.mode(), e.rdev_major(), e.rdev_minor()));
            let mut data = Vec::new();
            r.read_to_end(&mut data).unwrap();
            if name == "init" {
                assert_eq!(data, b"\x7fELF-not-really");
            }
            r.finish().unwrap();
        }
        assert_eq!(seen[1], ("dev/console".into(), 0o020600, 5, 1));
        assert_eq!(seen[3].0, "init");
        assert_eq!(seen[3].1, 0o100755);
    }
}
