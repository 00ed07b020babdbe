//! Where a kernel's DWARF comes from, for the source lines of
//! `--profile`: the image itself (an x86-64 vmlinux that
//! scripts/build-kernel.sh built keeps its DWARF), a `vmlinux` beside the
//! image or above it (arm64's `arch/arm64/boot/Image` under the build
//! directory), or for `-k debian:...` the vmlinux of the matching `-dbg`
//! package in the cache, which `--debuginfo` streams out of the package:
//! only the vmlinux reaches the disk, never the package (860 MB for 6.1,
//! mostly modules' DWARF). Each is checked against the image's GNU build
//! id before a line is read from it.

use crate::kernel::{self, Arch, Kernel};
use crate::lines::{check, image_build_id, DebugInfo};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The cached `-dbg` vmlinux of a Debian kernel.
const DBG_FILE: &str = "vmlinux-dbg";

/// The debug info of `kernel`, checked against its image; `fetch`
/// (`--debuginfo`) streams a Debian kernel's from its `-dbg` package when
/// the cache has none. An error says why there are no lines.
pub(crate) fn find(kernel: &Kernel, arch: Arch, fetch: bool) -> Result<DebugInfo, String> {
    let image_id = image_build_id(&kernel.path)?;
    let mut tried = Vec::new();
    for path in candidates(kernel) {
        if !path.is_file() {
            continue;
        }
        match check(&path, image_id.as_deref()) {
            Ok(d) => return Ok(d),
            Err(e) => tried.push(e),
        }
    }
    if let Some(package) = &kernel.package {
        let dbg = kernel::package_dir(package).join(DBG_FILE);
        if !dbg.exists() && fetch {
            fetch_dbg(package, arch, &dbg)?;
            return check(&dbg, image_id.as_deref());
        }
        if !fetch {
            tried.push(format!(
                "Debian's images carry no DWARF: --debuginfo fetches the vmlinux of {package}'s -dbg package"
            ));
        }
    }
    if tried.is_empty() {
        tried.push(format!(
            "no vmlinux with DWARF at {} or beside it",
            kernel.path.display()
        ));
    }
    Err(tried.join("; "))
}

/// Where a kernel's vmlinux may be: the image (an ELF), `vmlinux` in its folder
/// and the three above, and a Debian kernel's cached `-dbg` vmlinux.
fn candidates(kernel: &Kernel) -> Vec<PathBuf> {
    let elf = matches!(kernel.format, kernel::Format::Elf(_));
    let mut c: Vec<PathBuf> = elf.then(|| kernel.path.clone()).into_iter().collect();
    c.extend(
        kernel
            .path
            .ancestors()
            .skip(1)
            .take(4)
            .map(|d| d.join("vmlinux"))
            .filter(|p| *p != kernel.path),
    );
    if let Some(package) = &kernel.package {
        c.push(kernel::package_dir(package).join(DBG_FILE));
    }
    c
}

/// Streams `package`'s `-dbg` package and keeps only its vmlinux, as
/// `into` (written whole: a `.partial` renamed at the end).
fn fetch_dbg(package: &str, arch: Arch, into: &Path) -> Result<(), String> {
    let (dbg, uri) = kernel::dbg_uri(package, arch)?;
    eprintln!(
        "trig-init: streaming the vmlinux out of {dbg} into {}",
        into.display()
    );
    let start = std::time::Instant::now();
    let mut child = Command::new("curl")
        .args(["-sSfL", "--", &uri])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run curl to fetch {dbg}: {e}"))?;
    let partial = into.with_extension("partial");
    let stdout = child.stdout.take().expect("piped");
    let got = extract_vmlinux(stdout, &partial);
    // the rest of the package is not wanted: curl stops on its pipe
    let _ = child.kill();
    let out = child.wait_with_output();
    let size = got.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        let curl = out
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
            .filter(|s| !s.is_empty())
            .map(|s| format!(" (curl: {s})"))
            .unwrap_or_default();
        format!("{dbg} from {uri}: {e}{curl}")
    })?;
    std::fs::rename(&partial, into).map_err(|e| format!("{}: {e}", into.display()))?;
    eprintln!(
        "trig-init: {} MB of vmlinux from {dbg} in {:.1} s",
        size >> 20,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Whether a package's path is its vmlinux's.
fn is_vmlinux(name: &str) -> bool {
    name.trim_start_matches("./")
        .strip_prefix("usr/lib/debug/boot/vmlinux-")
        .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
}

/// Reads a .deb (an `ar` archive) from `deb` up to its vmlinux, writes
/// that to `out` and returns its size; nothing else is kept.
pub(crate) fn extract_vmlinux(mut deb: impl Read, out: &Path) -> Result<u64, String> {
    let mut magic = [0u8; 8];
    deb.read_exact(&mut magic)
        .map_err(|e| format!("not a Debian package: {e}"))?;
    if &magic != b"!<arch>\n" {
        return Err("not a Debian package (no ar header)".into());
    }
    loop {
        let mut h = [0u8; 60];
        deb.read_exact(&mut h)
            .map_err(|_| "the package ended before its data.tar.xz".to_string())?;
        let name = String::from_utf8_lossy(&h[..16]).trim().to_string();
        let size: u64 = String::from_utf8_lossy(&h[48..58])
            .trim()
            .parse()
            .map_err(|_| "a malformed ar member header".to_string())?;
        let member = (&mut deb).take(size);
        match name.trim_end_matches('/') {
            "data.tar.xz" => return from_tar(xz2::read::XzDecoder::new(member), out),
            "data.tar" => return from_tar(member, out),
            n if n.starts_with("data.tar") => {
                return Err(format!(
                    "its {n} is compressed in a way not read here (xz is)"
                ))
            }
            _ => skip(&mut deb, size + (size & 1))?,
        }
    }
}

fn skip(r: &mut impl Read, n: u64) -> Result<(), String> {
    let got = std::io::copy(&mut r.take(n), &mut std::io::sink())
        .map_err(|e| format!("reading the package: {e}"))?;
    if got < n {
        return Err("the package is truncated".into());
    }
    Ok(())
}

/// A tar header's octal number.
fn octal(field: &[u8]) -> Option<u64> {
    let s = String::from_utf8_lossy(field);
    let s = s.trim_matches(|c: char| c == '\0' || c == ' ');
    u64::from_str_radix(s, 8).ok()
}

/// A NUL-terminated name.
fn cstr(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// Walks a tar stream to its vmlinux: ustar names (with prefix) and GNU
/// long names (`L`), whose next entry they name.
fn from_tar(mut tar: impl Read, out: &Path) -> Result<u64, String> {
    let mut long: Option<String> = None;
    loop {
        let mut h = [0u8; 512];
        tar.read_exact(&mut h)
            .map_err(|e| format!("its data ended before the vmlinux: {e}"))?;
        if h.iter().all(|&b| b == 0) {
            return Err("the package has no usr/lib/debug/boot/vmlinux-*".into());
        }
        let size = octal(&h[124..136]).ok_or("a malformed tar header")?;
        let padded = size.div_ceil(512) * 512;
        let name = long.take().unwrap_or_else(|| {
            let (prefix, name) = (cstr(&h[345..500]), cstr(&h[..100]));
            match prefix.is_empty() {
                true => name,
                false => format!("{prefix}/{name}"),
            }
        });
        match h[156] {
            b'L' => {
                let mut n = vec![0u8; padded as usize];
                tar.read_exact(&mut n).map_err(|e| e.to_string())?;
                long = Some(cstr(&n[..size as usize]));
            }
            b'0' | 0 if is_vmlinux(&name) => {
                write_member(&mut tar, size, out)?;
                return Ok(size);
            }
            _ => skip(&mut tar, padded)?,
        }
    }
}

fn write_member(tar: &mut impl Read, size: u64, out: &Path) -> Result<(), String> {
    let f = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut w = std::io::BufWriter::new(f);
    let got = std::io::copy(&mut tar.take(size), &mut w)
        .map_err(|e| format!("its vmlinux into {}: {e}", out.display()))?;
    w.flush().map_err(|e| format!("{}: {e}", out.display()))?;
    if got < size {
        return Err(format!("its vmlinux is truncated ({got} of {size} bytes)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar entry's header: ustar, the checksum left out (not read).
    fn tar_header(name: &str, size: usize, kind: u8) -> Vec<u8> {
        let mut h = vec![0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        let size = format!("{size:011o}\0");
        h[124..136].copy_from_slice(size.as_bytes());
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h
    }

    fn entry(tar: &mut Vec<u8>, name: &str, data: &[u8], kind: u8) {
        tar.extend(tar_header(name, data.len(), kind));
        tar.extend(data);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }

    /// An ar member.
    fn member(ar: &mut Vec<u8>, name: &str, data: &[u8]) {
        ar.extend(
            format!(
                "{name:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                0,
                0,
                0,
                100644,
                data.len()
            )
            .as_bytes(),
        );
        ar.extend(data);
        if data.len() % 2 == 1 {
            ar.push(b'\n');
        }
    }

    /// A -dbg package: a module with a GNU long name before the vmlinux.
    fn deb(vmlinux: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut tar = Vec::new();
        entry(&mut tar, "./usr/lib/debug/boot/", b"", b'5');
        entry(
            &mut tar,
            "./usr/lib/debug/boot/System.map-6.1.0-57-amd64",
            b"ffff T x\n",
            b'0',
        );
        let long = format!("./usr/lib/debug/lib/modules/{}/x.ko\0", "d".repeat(120));
        entry(&mut tar, "././@LongLink", long.as_bytes(), b'L');
        entry(&mut tar, "ignored", b"a module", b'0');
        entry(
            &mut tar,
            "./usr/lib/debug/boot/vmlinux-6.1.0-57-amd64",
            vmlinux,
            b'0',
        );
        tar.extend([0u8; 1024]);
        let mut xz = xz2::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(&tar).unwrap();
        let mut ar = b"!<arch>\n".to_vec();
        member(&mut ar, "debian-binary", b"2.0\n");
        member(&mut ar, "control.tar.xz", b"not read");
        member(&mut ar, "data.tar.xz", &xz.finish().unwrap());
        ar
    }

    #[test]
    fn only_the_vmlinux_comes_out_of_the_package() {
        let out = std::env::temp_dir().join(format!("trig-dbg-{}", std::process::id()));
        let vmlinux: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let size = extract_vmlinux(&deb(&vmlinux)[..], &out).unwrap();
        assert_eq!(size, 5000);
        assert_eq!(std::fs::read(&out).unwrap(), vmlinux);
        let _ = std::fs::remove_file(&out);
    }

    #[test]
    fn a_cut_or_foreign_package_is_named() {
        let out = std::env::temp_dir().join(format!("trig-dbg-cut-{}", std::process::id()));
        let whole = deb(&[7u8; 3000]);
        let e = extract_vmlinux(&whole[..whole.len() - 200], &out).unwrap_err();
        assert!(e.contains("ended") || e.contains("truncated"), "{e}");
        let e = extract_vmlinux(&b"<html>not found</html>"[..], &out).unwrap_err();
        assert!(e.contains("not a Debian package"), "{e}");
        let mut no_data = b"!<arch>\n".to_vec();
        member(&mut no_data, "debian-binary", b"2.0\n");
        let e = extract_vmlinux(&no_data[..], &out).unwrap_err();
        assert!(e.contains("before its data.tar.xz"), "{e}");
        let _ = std::fs::remove_file(&out);
    }

    #[test]
    fn only_the_boot_vmlinux_is_the_vmlinux() {
        assert!(is_vmlinux(
            "./usr/lib/debug/boot/vmlinux-6.12.118+deb12-amd64"
        ));
        assert!(!is_vmlinux(
            "./usr/lib/debug/boot/System.map-6.1.0-57-amd64"
        ));
        assert!(!is_vmlinux("./usr/lib/debug/boot/vmlinux-x/y"));
        assert!(!is_vmlinux("./usr/lib/debug/lib/modules/vmlinux-1"));
    }

    #[test]
    fn a_kernel_without_debug_info_says_where_it_was_looked_for() {
        let dir = std::env::temp_dir().join(format!("trig-dbg-none-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let image = dir.join("bzImage");
        std::fs::write(&image, b"not an ELF").unwrap();
        let k = Kernel {
            path: image.clone(),
            format: kernel::Format::BzImage,
            spec: image.display().to_string(),
            package: None,
        };
        let e = find(&k, Arch::X86_64, false).unwrap_err();
        assert!(e.contains("no vmlinux with DWARF"), "{e}");
        // a vmlinux beside it without DWARF is named with its cause
        std::fs::write(dir.join("vmlinux"), b"\x7fELF cut").unwrap();
        let e = find(&k, Arch::X86_64, false).unwrap_err();
        assert!(e.contains("not a complete ELF"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
