//! Where a kernel's DWARF comes from, for the source lines of
//! `--profile`: the image itself (an x86-64 vmlinux that
//! scripts/build-kernel.sh built keeps its DWARF), a `vmlinux` beside the
//! image or above it (arm64's `arch/arm64/boot/Image` under the build
//! directory), or for `-k debian:...` the vmlinux of the matching `-dbg`
//! package in the cache, which `--debuginfo` streams out of the package:
//! only the vmlinux reaches the disk, never the package (860 MB for 6.1,
//! mostly modules' DWARF). Each is checked against the image's GNU build
//! id before a line is read from it.

use crate::debian;
use crate::kernel::{self, Arch, Kernel};
use crate::profiling::source_lines::{check, image_build_id, DebugInfo};
use std::path::{Path, PathBuf};

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
    let loc = kernel::dbg_package(package, arch)?;
    trig_schema::stderrln!(
        "trig-init: streaming the vmlinux out of {} into {}",
        loc.package,
        into.display()
    );
    let start = std::time::Instant::now();
    let partial = into.with_extension("partial");
    let size = debian::extract(&loc, is_vmlinux, &partial).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    std::fs::rename(&partial, into).map_err(|e| format!("{}: {e}", into.display()))?;
    trig_schema::stderrln!(
        "trig-init: {} MB of vmlinux from {} in {:.1} s",
        size >> 20,
        loc.package,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A -dbg package's vmlinux comes out of it alone, a module with a
    /// GNU long name before it left behind.
    #[test]
    fn only_the_vmlinux_comes_out_of_a_dbg_package() {
        let out = std::env::temp_dir().join(format!("trig-dbg-{}", std::process::id()));
        let long = format!("./usr/lib/debug/lib/modules/{}/x.ko", "d".repeat(120));
        let vmlinux: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let deb = crate::debian::tests::package_of(&[
            ("./usr/lib/debug/boot/", b""),
            (
                "./usr/lib/debug/boot/System.map-6.1.0-57-amd64",
                b"ffff T x\n",
            ),
            (&long, b"a module"),
            ("./usr/lib/debug/boot/vmlinux-6.1.0-57-amd64", &vmlinux),
        ]);
        let size = crate::debian::extract_from(&deb[..], is_vmlinux, &out).unwrap();
        assert_eq!(size, 5000);
        assert_eq!(std::fs::read(&out).unwrap(), vmlinux);
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
