//! Kernels to boot: files given by path (detected by their headers) or
//! Debian packages fetched with apt into a cache.

use crate::debian::{self, run};
use crate::le_uint;
use std::path::{Path, PathBuf};
use std::process::Command;
use trig_guest::registry::Bench;
use trig_schema::error::{infra, usage, Error};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl std::str::FromStr for Arch {
    type Err = Error;

    /// `--arch`, as argh parses it into the typed flag.
    fn from_str(s: &str) -> Result<Arch, Error> {
        match s {
            "x86_64" | "amd64" => Ok(Arch::X86_64),
            "aarch64" | "arm64" => Ok(Arch::Aarch64),
            _ => Err(usage(format!(
                "unknown architecture '{s}' (x86_64 or aarch64)"
            ))),
        }
    }
}

impl Arch {
    pub fn host() -> Arch {
        if cfg!(target_arch = "aarch64") {
            Arch::Aarch64
        } else {
            Arch::X86_64
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The most CPUs QEMU's machine for the architecture takes (pc:
    /// 255, virt with GICv3: 512).
    pub fn max_cpus(self) -> usize {
        match self {
            Arch::X86_64 => 255,
            Arch::Aarch64 => 512,
        }
    }

    /// Whether the guest binary of this architecture runs `bench`: the
    /// host's registry lists what the host's own architecture runs.
    pub fn runs(self, bench: &Bench) -> bool {
        bench.runs_on(self == Arch::X86_64)
    }

    /// Debian's name for the architecture.
    pub fn debian(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Aarch64 => "arm64",
        }
    }
}

/// What kind of image a kernel file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// x86 bzImage (boot protocol header "HdrS").
    BzImage,
    /// arm64 Image ("ARM\x64" magic), plain or gzip-compressed.
    ArmImage,
    /// An uncompressed vmlinux ELF of this architecture.
    Elf(Arch),
}

impl Format {
    pub fn arch(self) -> Arch {
        match self {
            Format::BzImage => Arch::X86_64,
            Format::ArmImage => Arch::Aarch64,
            Format::Elf(a) => a,
        }
    }
}

/// Detects a kernel image from its first bytes.
pub fn detect_bytes(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"\x7fELF") {
        use object::read::elf::FileHeader;
        use object::LittleEndian as LE;
        let header = object::elf::FileHeader64::<LE>::parse(head).ok()?;
        return match header.e_machine(LE) {
            object::elf::EM_X86_64 => Some(Format::Elf(Arch::X86_64)),
            object::elf::EM_AARCH64 => Some(Format::Elf(Arch::Aarch64)),
            _ => None,
        };
    }
    if head.get(0x202..0x206) == Some(b"HdrS") {
        return Some(Format::BzImage);
    }
    if head.get(0x38..0x3c) == Some(b"ARM\x64") || head.starts_with(&[0x1f, 0x8b]) {
        // Debian ships arm64 kernels gzip-compressed; QEMU unpacks them.
        return Some(Format::ArmImage);
    }
    None
}

pub(crate) fn detect(path: &Path) -> Result<Format, String> {
    use std::io::Read;
    let mut head = vec![0u8; 4096];
    let mut f = std::fs::File::open(path).map_err(|e| format!("kernel {}: {e}", path.display()))?;
    let n = f
        .read(&mut head)
        .map_err(|e| format!("kernel {}: {e}", path.display()))?;
    head.truncate(n);
    detect_bytes(&head).ok_or_else(|| {
        format!(
            "{} is not a kernel image (no bzImage, arm64 Image or vmlinux ELF header)",
            path.display()
        )
    })
}

/// The vmlinux ELF inside an xz- or zstd-compressed bzImage (Debian uses
/// xz for 6.1, zstd for 6.12). Under TCG, QEMU boots
/// the ELF through its PVH entry in about a third of the time, because the
/// kernel's own decompressor is slow when emulated.
pub(crate) fn extract_vmlinux(bzimage: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read;
    // boot protocol: setup sectors, then payload_offset/length (2.08+)
    let setup_sects = usize::from(*bzimage.get(0x1f1).ok_or("bzImage too short")?).max(4);
    let (Some(off), Some(len)) = (le_uint(bzimage, 0x248, 4), le_uint(bzimage, 0x24c, 4)) else {
        return Err("bzImage too short".into());
    };
    let start = (setup_sects + 1) * 512 + off;
    let payload = bzimage
        .get(start..start + len)
        .ok_or("bzImage payload out of range")?;
    // the build appends the decompressed size as 4 bytes after the stream
    let stream = &payload[..payload.len().saturating_sub(4)];
    let mut elf = Vec::new();
    let unpacked = if payload.starts_with(b"\xfd7zXZ\x00") {
        xz2::read::XzDecoder::new(stream)
            .read_to_end(&mut elf)
            .map_err(|e| e.to_string())
    } else if payload.starts_with(b"\x28\xb5\x2f\xfd") {
        ruzstd::decoding::StreamingDecoder::new(stream)
            .map_err(|e| e.to_string())
            .and_then(|mut d| d.read_to_end(&mut elf).map_err(|e| e.to_string()))
    } else {
        return Err("bzImage payload is neither xz- nor zstd-compressed".into());
    };
    unpacked.map_err(|e| format!("decompressing the bzImage payload: {e}"))?;
    if detect_bytes(&elf) != Some(Format::Elf(Arch::X86_64)) {
        return Err("the bzImage payload is not an x86-64 ELF".into());
    }
    Ok(elf)
}

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub path: PathBuf,
    pub format: Format,
    /// How the user named it (`debian:6.1`, a path).
    pub spec: String,
    /// The Debian package it came from, if any.
    pub package: Option<String>,
}

fn cache_dir() -> PathBuf {
    std::env::var_os("TRIG_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("trig-init")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/trig-init")))
        .unwrap_or_else(|| PathBuf::from("/tmp/trig-init-cache"))
}

/// `package` as apt names it for `arch`: qualified where that is not the
/// host's.
fn for_arch(package: &str, arch: Arch) -> String {
    if arch == Arch::host() {
        package.to_string()
    } else {
        format!("{package}:{}", arch.debian())
    }
}

/// Compares Debian ABI strings like 6.1.0-54 numerically, part by part.
fn version_key(v: &str) -> Vec<u64> {
    v.split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The unsigned image packages' names: `linux-image-ABI-ARCH-unsigned`
/// up to Debian 13, `linux-binary-unsigned-ABI-ARCH` in testing and
/// unstable since (where `linux-image-ABI-ARCH` is a meta-package).
const NAMINGS: &[(&str, &str)] = &[
    ("linux-image-", "-unsigned"),
    ("linux-binary-unsigned-", ""),
];

/// The ABI of an unsigned image package of `arch`, in either naming.
fn image_abi(name: &str, arch: Arch) -> Option<&str> {
    NAMINGS.iter().find_map(|(head, tail)| {
        name.strip_prefix(head)?
            .strip_suffix(tail)?
            .strip_suffix(&format!("-{}", arch.debian()))
    })
}

/// Picks the newest unsigned image package among `names` whose ABI
/// starts with `prefix`.
pub fn pick_package(names: &[String], arch: Arch, prefix: &str) -> Option<String> {
    names
        .iter()
        .filter_map(|n| {
            let abi = image_abi(n, arch)?;
            // plain flavour only: "6.1.0-54", "6.12.57+deb12"; not cloud or rt
            let plain = abi.chars().next()?.is_ascii_digit()
                && !abi.contains("-cloud")
                && !abi.contains("-rt");
            // "6.1" matches 6.1.0-54 but not 6.12.57: the prefix must end
            // where a version component ends
            let matches = prefix.is_empty()
                || abi.starts_with(prefix)
                    && abi[prefix.len()..]
                        .chars()
                        .next()
                        .is_none_or(|c| !c.is_ascii_digit());
            (plain && matches).then(|| (version_key(abi), n.clone()))
        })
        .max()
        .map(|(_, n)| n)
}

/// The Debian suites that `-k debian:SUITE` names, newest kernels last;
/// a version that the host's sources lack is looked for in them too.
pub const SUITES: &[&str] = &["testing", "unstable"];

/// Where a suite's private apt configuration verifies the archive.
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// How often a suite's package lists are fetched again: unstable gets a
/// new kernel every few weeks.
const LISTS_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// One apt to ask: the host's own sources (with private lists for a
/// foreign architecture), or a suite's private configuration under the
/// cache, which never reads or writes the host's sources, lists or
/// package cache.
struct Apt {
    /// What it is, for messages: "the host's apt sources", "Debian unstable".
    name: String,
    opts: Vec<String>,
    /// Its private lists, if it has any (else the host's are used).
    lists: Option<PathBuf>,
    /// Fetch the lists again when older than this (never: once).
    max_age: Option<std::time::Duration>,
}

impl Apt {
    fn host(arch: Arch, cache: &Path) -> Apt {
        if arch == Arch::host() {
            return Apt {
                name: "the host's apt sources".into(),
                opts: Vec::new(),
                lists: None,
                max_age: None,
            };
        }
        // another architecture's package lists, without adding it to the
        // system: the host's sources into a private lists directory
        let lists = cache.join(format!("apt-lists-{}", arch.debian()));
        Apt {
            name: format!("the host's apt sources for {}", arch.debian()),
            opts: vec![
                format!("-oAPT::Architectures::={}", arch.debian()),
                format!("-oDir::State::Lists={}", lists.display()),
            ],
            lists: Some(lists),
            max_age: None,
        }
    }

    /// `suite`'s configuration in `cache/apt-SUITE-ARCH`: its own
    /// sources.list, no sources.list.d, its own lists and package cache.
    fn suite(suite: &str, arch: Arch, cache: &Path) -> Apt {
        let dir = cache.join(format!("apt-{suite}-{}", arch.debian()));
        let mut opts = vec![
            format!(
                "-oDir::Etc::SourceList={}",
                dir.join("sources.list").display()
            ),
            "-oDir::Etc::SourceParts=-".into(),
            format!("-oDir::State::Lists={}", dir.join("lists").display()),
            format!("-oDir::Cache={}", dir.join("cache").display()),
        ];
        if arch != Arch::host() {
            opts.push(format!("-oAPT::Architectures::={}", arch.debian()));
        }
        Apt {
            name: format!("Debian {suite}"),
            opts,
            lists: Some(dir.join("lists")),
            max_age: Some(LISTS_MAX_AGE),
        }
    }

    /// The suite's sources.list: the main archive, verified with Debian's
    /// keyring (a suite's configuration only).
    fn sources(suite: &str) -> String {
        format!("deb [signed-by={KEYRING}] http://deb.debian.org/debian {suite} main\n")
    }

    /// Writes a suite's sources.list and fetches its lists when it has
    /// none yet or they are too old; a foreign architecture's host lists
    /// once.
    fn prepare(&self, suite: Option<&str>) -> Result<(), String> {
        let Some(lists) = &self.lists else {
            return Ok(());
        };
        let mkdir =
            |d: &Path| std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()));
        if let Some(suite) = suite {
            if !Path::new(KEYRING).exists() {
                return Err(format!(
                    "{}: no {KEYRING} to verify Debian's archive with (apt-get install debian-archive-keyring)",
                    self.name
                ));
            }
            let dir = lists
                .parent()
                .expect("a suite's lists are in its directory");
            mkdir(&dir.join("cache/archives/partial"))?;
            trig_schema::files::replace(&dir.join("sources.list"), Self::sources(suite).as_bytes())
                .map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        // dated by a mark that only a complete update leaves
        let mark = lists.with_extension("updated");
        let fresh = std::fs::metadata(&mark)
            .and_then(|m| m.modified())
            .is_ok_and(|t| {
                self.max_age
                    .is_none_or(|age| t.elapsed().is_ok_and(|e| e < age))
            });
        if !fresh {
            mkdir(&lists.join("partial"))?;
            run(
                Command::new("apt-get").args(&self.opts).arg("update"),
                &format!("apt-get update of {}", self.name),
            )?;
            trig_schema::files::replace(&mark, b"")
                .map_err(|e| format!("{}: {e}", mark.display()))?;
        }
        Ok(())
    }

    /// The newest unsigned image package apt knows for `prefix`.
    fn find(&self, arch: Arch, prefix: &str) -> Option<String> {
        let pattern = search_pattern(prefix, arch);
        let found = run(
            Command::new("apt-cache")
                .args(&self.opts)
                .args(["search", "--names-only", &pattern]),
            "apt-cache search",
        )
        .ok()?;
        let names: Vec<String> = found
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect();
        pick_package(&names, arch, prefix)
    }
}

/// apt-cache's regular expression for the image packages of `prefix`, in
/// which the prefix's dots and pluses (`7.2.13+deb14`) are literal.
fn search_pattern(prefix: &str, arch: Arch) -> String {
    let literal: String = prefix
        .chars()
        .flat_map(|c| {
            (!c.is_ascii_alphanumeric())
                .then_some('\\')
                .into_iter()
                .chain([c])
        })
        .collect();
    format!(
        "^linux-(image|binary-unsigned)-{literal}.*-{}",
        arch.debian()
    )
}

/// Why no package was found for `prefix` in any of `searched`: its
/// version is matched by whole components, which a glob would not say.
fn no_package(arch: Arch, prefix: &str, searched: &[String]) -> String {
    format!(
        "no Debian kernel package of version {prefix} (linux-image-{prefix}[-N]-{arch}-unsigned or \
         linux-binary-unsigned-{prefix}[-N]-{arch}, whole version components: {prefix} does not \
         match {prefix}7) in {}",
        searched.join(", "),
        arch = arch.debian()
    )
}

/// Fetches `package` and unpacks it under `dir/root`, which appears only
/// once complete (and checked against apt's hash).
fn unpack_package(dir: &Path, package: &str, arch: Arch, apt: &Apt) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let pkg = for_arch(package, arch);
    trig_schema::stderrln!(
        "trig-init: fetching {pkg} from {} into {}",
        apt.name,
        dir.display()
    );
    let loc = debian::locate(&apt.opts, &pkg).map_err(|e| format!("{}: {e}", apt.name))?;
    let partial = dir.join("root.partial");
    let _ = std::fs::remove_dir_all(&partial);
    debian::unpack(&loc, &partial)?;
    std::fs::rename(&partial, dir.join("root")).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The kernel image in an unpacked package: `boot/vmlinuz-ABI` up to
/// Debian 13, `usr/lib/modules/ABI/vmlinuz*` in the newer packages.
fn image_in(root: &Path) -> Result<PathBuf, String> {
    let entries = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default()
    };
    let named = |p: &PathBuf, head: &str| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(head))
    };
    let modules = entries(&root.join("usr/lib/modules"));
    entries(&root.join("boot"))
        .into_iter()
        .find(|p| named(p, "vmlinuz-"))
        .or_else(|| {
            modules
                .iter()
                .flat_map(|m| entries(m))
                .find(|p| named(p, "vmlinuz"))
        })
        .ok_or_else(|| {
            format!(
                "no vmlinuz in {} or {}/usr/lib/modules/*",
                root.join("boot").display(),
                root.display()
            )
        })
}

/// The image to boot from an unpacked package: its vmlinuz, or on x86-64
/// the vmlinux ELF extracted from it (cached next to it), which boots
/// faster under TCG.
fn boot_image(dir: &Path, arch: Arch) -> Result<PathBuf, String> {
    let image = image_in(&dir.join("root"))?;
    if arch != Arch::X86_64 {
        return Ok(image);
    }
    let elf = dir.join("vmlinux");
    if !elf.exists() {
        let bz = std::fs::read(&image).map_err(|e| format!("{}: {e}", image.display()))?;
        match extract_vmlinux(&bz) {
            Ok(bytes) => trig_schema::files::replace(&elf, &bytes)
                .map_err(|e| format!("{}: {e}", elf.display()))?,
            Err(e) => trig_schema::stderrln!("trig-init: booting the bzImage ({e})"),
        }
    }
    Ok(if elf.exists() { elf } else { image })
}

/// Fetches (or finds in the cache) the newest Debian kernel of `what`:
/// a suite's (`unstable`, `testing`; `sid` is unstable), or the one whose
/// ABI starts with a version prefix, from the host's sources or else the
/// suites'.
/// Nothing found is the caller's (2: a missing kernel); a package that
/// cannot be unpacked, the host's (4).
fn debian(arch: Arch, what: &str) -> Result<Kernel, Error> {
    let cache = cache_dir();
    let suite = match what {
        "sid" => Some("unstable"),
        _ => SUITES.iter().copied().find(|s| *s == what),
    };
    let (prefix, sources) = match suite {
        Some(s) => ("", vec![(Some(s), Apt::suite(s, arch, &cache))]),
        None => (
            what,
            std::iter::once((None, Apt::host(arch, &cache)))
                .chain(
                    SUITES
                        .iter()
                        .map(|s| (Some(*s), Apt::suite(s, arch, &cache))),
                )
                .collect(),
        ),
    };
    let search = newest_package(&sources, arch, prefix);
    if let Some((package, apt)) = search.found {
        let dir = cache.join("kernels").join(&package);
        if !dir.join("root").exists() {
            unpack_package(&dir, &package, arch, apt).map_err(infra)?;
        }
        let image = boot_image(&dir, arch).map_err(infra)?;
        return Ok(Kernel {
            format: detect(&image).map_err(infra)?,
            path: image,
            spec: format!("debian:{what}"),
            package: Some(package),
        });
    }
    let mut searched = search.searched;
    if searched.is_empty() {
        searched.push("no apt that answered".into());
    }
    let mut why = match suite {
        Some(_) => format!(
            "no Debian {what} kernel for {} in {}",
            arch.debian(),
            searched.join(", ")
        ),
        None => no_package(
            arch,
            if what.is_empty() { "(any)" } else { prefix },
            &searched,
        ),
    };
    for e in search.errors {
        why.push_str(&format!("; {e}"));
    }
    Err(usage(why))
}

/// What a search of the apt sources found: the package and the apt that
/// has it, the sources searched, and those that could not be.
struct Search<'a> {
    found: Option<(String, &'a Apt)>,
    searched: Vec<String>,
    errors: Vec<String>,
}

/// The newest kernel image package whose ABI starts with `prefix` in
/// `sources`: the host's own (a source without a suite) wins where it has
/// one, else the newest of the suites'.
fn newest_package<'a>(sources: &'a [(Option<&str>, Apt)], arch: Arch, prefix: &str) -> Search<'a> {
    let mut search = Search {
        found: None,
        searched: Vec::new(),
        errors: Vec::new(),
    };
    for (suite, apt) in sources {
        if let Err(e) = apt.prepare(*suite) {
            search.errors.push(e);
            continue;
        }
        search.searched.push(apt.name.clone());
        let Some(package) = apt.find(arch, prefix) else {
            continue;
        };
        let abi = |p: &str| version_key(image_abi(p, arch).unwrap_or(""));
        if search
            .found
            .as_ref()
            .is_none_or(|(f, _)| abi(&package) > abi(f))
        {
            search.found = Some((package, apt));
        }
        if suite.is_none() {
            break;
        }
    }
    search
}

/// Where a Debian package's kernel is cached (and its `-dbg` vmlinux,
/// init/boot/profiling/source_lines/debuginfo.rs).
pub(crate) fn package_dir(package: &str) -> PathBuf {
    cache_dir().join("kernels").join(package)
}

/// The `-dbg` package of an image package (`linux-image-ABI-ARCH-dbg`)
/// and the address apt would download it from: the host's sources first,
/// then the suites' (their lists as `-k debian:SUITE` left them).
pub(crate) fn dbg_package(package: &str, arch: Arch) -> Result<debian::Located, String> {
    let abi = image_abi(package, arch)
        .ok_or_else(|| format!("{package} is not a Debian image package"))?;
    let dbg = format!("linux-image-{abi}-{}-dbg", arch.debian());
    let pkg = for_arch(&dbg, arch);
    let cache = cache_dir();
    let apts = std::iter::once(Apt::host(arch, &cache))
        .chain(SUITES.iter().map(|s| Apt::suite(s, arch, &cache)));
    let mut why = Vec::new();
    for apt in apts {
        match debian::locate(&apt.opts, &pkg) {
            Ok(loc) => return Ok(loc),
            Err(e) => why.push(format!("{}: {e}", apt.name)),
        }
    }
    Err(format!("no {dbg} to fetch: {}", why.join("; ")))
}

/// Resolves `-k`: a path, `debian`, `debian:PREFIX` or `debian:SUITE`.
pub fn resolve(spec: &str, arch: Arch) -> Result<Kernel, Error> {
    if spec == "debian" || spec.starts_with("debian:") {
        let what = spec
            .strip_prefix("debian")
            .unwrap_or("")
            .trim_start_matches(':');
        return debian(arch, what);
    }
    let path = PathBuf::from(spec);
    if !path.exists() {
        return Err(usage(format!("kernel {spec}: no such file")));
    }
    let format = detect(&path).map_err(usage)?;
    if format.arch() != arch {
        return Err(usage(format!(
            "kernel {spec} is for {}, not {} (use --arch)",
            format.arch().as_str(),
            arch.as_str()
        )));
    }
    Ok(Kernel {
        path,
        format,
        spec: spec.into(),
        package: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arm64_guest_runs_no_x86_only_benchmark() {
        let nop5 = trig_guest::registry::find("trig-uprobe-nop5").unwrap();
        let nop = trig_guest::registry::find("trig-uprobe-nop").unwrap();
        assert!(Arch::X86_64.runs(nop5) && Arch::X86_64.runs(nop));
        assert!(!Arch::Aarch64.runs(nop5) && Arch::Aarch64.runs(nop));
    }

    #[test]
    fn no_package_says_components_are_matched_whole() {
        let why = no_package(Arch::X86_64, "6.1.0-5", &["the host's apt sources".into()]);
        assert!(!why.contains("6.1.0-5*"), "{why}");
        assert!(why.contains("does not match 6.1.0-57"), "{why}");
    }

    #[test]
    fn detects_headers() {
        let mut bz = vec![0u8; 0x300];
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        assert_eq!(detect_bytes(&bz), Some(Format::BzImage));
        let mut arm = vec![0u8; 0x40];
        arm[0x38..0x3c].copy_from_slice(b"ARM\x64");
        assert_eq!(detect_bytes(&arm), Some(Format::ArmImage));
        let mut elf = vec![0u8; 64];
        elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        elf[18] = 62;
        assert_eq!(detect_bytes(&elf), Some(Format::Elf(Arch::X86_64)));
        elf[18] = 183;
        assert_eq!(detect_bytes(&elf), Some(Format::Elf(Arch::Aarch64)));
        assert_eq!(detect_bytes(b"#!/bin/sh\necho hi\n"), None);
    }

    /// A bzImage whose payload is `compressed` plus the 4-byte size.
    fn bzimage(compressed: &[u8]) -> Vec<u8> {
        let mut bz = vec![0u8; 5 * 512];
        bz[0x1f1] = 4;
        bz[0x248..0x24c].copy_from_slice(&0u32.to_le_bytes());
        bz[0x24c..0x250].copy_from_slice(&(compressed.len() as u32 + 4).to_le_bytes());
        bz.extend_from_slice(compressed);
        bz.extend_from_slice(&[0; 4]);
        bz
    }

    #[test]
    fn unpacks_xz_and_zstd_payloads() {
        use std::io::Write;
        let mut elf = vec![0u8; 4096];
        elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        elf[18] = 62;
        let mut xz = xz2::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(&elf).unwrap();
        let xz = xz.finish().unwrap();
        assert_eq!(extract_vmlinux(&bzimage(&xz)).unwrap(), elf);
        let zst = ruzstd::encoding::compress_to_vec(
            &elf[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        assert_eq!(extract_vmlinux(&bzimage(&zst)).unwrap(), elf);
        let e = extract_vmlinux(&bzimage(b"plain bytes")).unwrap_err();
        assert!(e.contains("neither xz- nor zstd"), "{e}");
        let mut not_elf = xz2::write::XzEncoder::new(Vec::new(), 1);
        not_elf.write_all(b"hello").unwrap();
        let e = extract_vmlinux(&bzimage(&not_elf.finish().unwrap())).unwrap_err();
        assert!(e.contains("not an x86-64 ELF"), "{e}");
    }

    #[test]
    fn not_a_kernel_is_named() {
        let p = std::env::temp_dir().join("trig-init-not-a-kernel");
        std::fs::write(&p, b"hello").unwrap();
        let e = resolve(p.to_str().unwrap(), Arch::X86_64).unwrap_err();
        assert!(e.message.contains("is not a kernel image"), "{e}");
        let e = resolve("/nonexistent/bzImage", Arch::X86_64).unwrap_err();
        assert!(e.message.contains("no such file"), "{e}");
    }

    #[test]
    fn picks_newest_plain_flavour() {
        let names: Vec<String> = [
            "linux-image-6.1.0-9-amd64-unsigned",
            "linux-image-6.1.0-54-amd64-unsigned",
            "linux-image-6.1.0-47-amd64-unsigned",
            "linux-image-6.12.57+deb12-amd64-unsigned",
            "linux-image-6.12.57+deb12-cloud-amd64-unsigned",
            "linux-image-6.12.9+deb12-amd64-unsigned",
            "linux-image-6.1.0-54-rt-amd64-unsigned",
        ]
        .map(String::from)
        .to_vec();
        let pick = |p| pick_package(&names, Arch::X86_64, p);
        assert_eq!(
            pick("6.1").as_deref(),
            Some("linux-image-6.1.0-54-amd64-unsigned")
        );
        assert_eq!(
            pick("6.12").as_deref(),
            Some("linux-image-6.12.57+deb12-amd64-unsigned")
        );
        assert_eq!(
            pick("6.1.0").as_deref(),
            Some("linux-image-6.1.0-54-amd64-unsigned")
        );
        assert_eq!(
            pick("6.1.0-47").as_deref(),
            Some("linux-image-6.1.0-47-amd64-unsigned")
        );
        assert_eq!(
            pick("").as_deref(),
            Some("linux-image-6.12.57+deb12-amd64-unsigned")
        );
        assert_eq!(pick("5."), None);
        // testing's and unstable's naming
        let newer: Vec<String> = [
            "linux-binary-unsigned-7.2.13+deb14-amd64",
            "linux-binary-unsigned-7.2.13+deb14-cloud-amd64",
            "linux-binary-unsigned-7.1.4+deb14-amd64",
            "linux-binary-unsigned-7.2.13+deb14-arm64-16k",
            "linux-binary-unsigned-7.2.13+deb14-arm64",
            "linux-binary-7.2.13+deb14-amd64",
            "linux-image-7.2.13+deb14-amd64",
        ]
        .map(String::from)
        .to_vec();
        let pick = |a, p| pick_package(&newer, a, p);
        let x86 = Some("linux-binary-unsigned-7.2.13+deb14-amd64");
        assert_eq!(pick(Arch::X86_64, "").as_deref(), x86);
        assert_eq!(pick(Arch::X86_64, "7.2").as_deref(), x86);
        assert_eq!(
            pick(Arch::X86_64, "7.1").as_deref(),
            Some("linux-binary-unsigned-7.1.4+deb14-amd64")
        );
        assert_eq!(
            pick(Arch::Aarch64, "7.2.13+deb14").as_deref(),
            Some("linux-binary-unsigned-7.2.13+deb14-arm64")
        );
    }

    #[test]
    fn a_version_with_a_plus_is_searched_for_literally() {
        assert_eq!(
            search_pattern("7.2.13+deb14", Arch::X86_64),
            r"^linux-(image|binary-unsigned)-7\.2\.13\+deb14.*-amd64"
        );
        assert_eq!(
            search_pattern("", Arch::Aarch64),
            "^linux-(image|binary-unsigned)-.*-arm64"
        );
    }

    #[test]
    fn the_image_is_found_in_either_layout() {
        let root = std::env::temp_dir().join(format!("trig-image-in-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let e = image_in(&root).unwrap_err();
        assert!(e.contains("no vmlinuz in"), "{e}");
        let newer = root.join("usr/lib/modules/7.2.13+deb14-amd64");
        std::fs::create_dir_all(&newer).unwrap();
        std::fs::write(newer.join("vmlinuz.unsigned"), b"").unwrap();
        assert_eq!(image_in(&root).unwrap(), newer.join("vmlinuz.unsigned"));
        std::fs::create_dir_all(root.join("boot")).unwrap();
        std::fs::write(root.join("boot/vmlinuz-6.12.57+deb12-amd64"), b"").unwrap();
        assert_eq!(
            image_in(&root).unwrap(),
            root.join("boot/vmlinuz-6.12.57+deb12-amd64")
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A suite's apt never reads the host's sources nor writes its lists
    /// or package cache: every one of those is a path under the cache.
    #[test]
    fn a_suite_has_its_own_apt_configuration() {
        let cache = Path::new("/c");
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let apt = Apt::suite("unstable", arch, cache);
            let opt = |key: &str| {
                apt.opts
                    .iter()
                    .find_map(|o| o.strip_prefix(&format!("-o{key}=")))
                    .unwrap_or_else(|| panic!("no {key}"))
                    .to_string()
            };
            let dir = format!("/c/apt-unstable-{}", arch.debian());
            assert_eq!(opt("Dir::Etc::SourceList"), format!("{dir}/sources.list"));
            assert_eq!(opt("Dir::Etc::SourceParts"), "-");
            assert_eq!(opt("Dir::State::Lists"), format!("{dir}/lists"));
            assert_eq!(opt("Dir::Cache"), format!("{dir}/cache"));
            assert_eq!(apt.lists, Some(PathBuf::from(format!("{dir}/lists"))));
        }
        assert!(Apt::sources("testing").contains(" testing main"));
        assert!(Apt::sources("testing").contains(&format!("signed-by={KEYRING}")));
    }
}
