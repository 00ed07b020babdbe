//! Debian packages, fetched one way. apt says where a package is and its
//! SHA-256 (`apt-get --print-uris download`, from the archive's signed
//! indexes); curl streams it; the package (an `ar` archive) and its
//! data.tar are read as they come. A kernel image package is unpacked
//! whole and its hash checked at its end; a `-dbg` package (860 MB) gives
//! up its vmlinux alone, which reaches disk as it streams, and the rest is
//! never read.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// Where a package is, as apt said.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Located {
    /// The package, as asked for (`NAME` or `NAME:ARCH`).
    pub(crate) package: String,
    pub(crate) uri: String,
    /// Hex; None where apt printed none.
    pub(crate) sha256: Option<String>,
}

/// Runs one of apt's tools (or dpkg's): its stdout, or why not, named
/// `what`.
pub(crate) fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Where apt (`apt-get` with `opts`) would fetch `package` from.
pub(crate) fn locate(opts: &[String], package: &str) -> Result<Located, String> {
    let printed = run(
        Command::new("apt-get")
            .args(opts)
            .args(["--print-uris", "download", package]),
        &format!("apt-get --print-uris download {package}"),
    )?;
    parse_uris(package, &printed)
}

/// apt's `'URI' FILE SIZE SHA256:HEX` line.
fn parse_uris(package: &str, printed: &str) -> Result<Located, String> {
    let line = printed
        .lines()
        .find(|l| l.starts_with('\''))
        .ok_or_else(|| format!("apt gave no address for {package}"))?;
    let mut quoted = line.split('\'');
    let uri = quoted.nth(1).filter(|u| u.contains("://"));
    let uri = uri.ok_or_else(|| format!("apt gave no address for {package}"))?;
    let sha256 = line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("SHA256:"))
        .map(str::to_lowercase);
    Ok(Located {
        package: package.into(),
        uri: uri.into(),
        sha256,
    })
}

/// Unpacks the whole package `loc` into `into` (which must not exist),
/// its SHA-256 checked against apt's once the stream has ended.
pub(crate) fn unpack(loc: &Located, into: &Path) -> Result<(), String> {
    streamed(loc, |deb| unpack_from(deb, loc.sha256.as_deref(), into))
}

/// Streams the package `loc` and writes its first file whose path
/// `wanted` takes to `out`; its size.
pub(crate) fn extract(loc: &Located, wanted: fn(&str) -> bool, out: &Path) -> Result<u64, String> {
    streamed(loc, |deb| extract_from(deb, wanted, out))
}

/// `read` over curl's stream of `loc`; curl is stopped once `read` is
/// done, whatever it left unread.
fn streamed<T>(
    loc: &Located,
    read: impl FnOnce(&mut dyn Read) -> Result<T, String>,
) -> Result<T, String> {
    let mut child = Command::new("curl")
        .args(["-sSfL", "--", &loc.uri])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run curl to fetch {}: {e}", loc.package))?;
    let mut stdout = child.stdout.take().expect("piped");
    let got = read(&mut stdout);
    drop(stdout);
    let _ = child.kill();
    let out = child.wait_with_output();
    got.map_err(|e| {
        let curl = out
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
            .filter(|s| !s.is_empty())
            .map(|s| format!(" (curl: {s})"))
            .unwrap_or_default();
        format!("{} from {}: {e}{curl}", loc.package, loc.uri)
    })
}

/// A reader that hashes what passes through it.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// Unpacks the package read from `deb` into `into`; with `sha256`, the
/// whole stream must hash to it (else `into` is removed).
pub(crate) fn unpack_from(deb: impl Read, sha256: Option<&str>, into: &Path) -> Result<(), String> {
    let mut deb = Hashing {
        inner: deb,
        hash: Sha256::new(),
    };
    let unpacked = with_data_tar(&mut deb, |mut tar| {
        tar.unpack(into)
            .map_err(|e| format!("unpacking into {}: {e}", into.display()))
    })
    .and_then(|()| {
        // the package's end: the hash covers every byte
        std::io::copy(&mut deb, &mut std::io::sink())
            .map(drop)
            .map_err(|e| format!("reading the package: {e}"))
    })
    .and_then(|()| {
        let got = format!("{:x}", deb.hash.finalize_reset());
        match sha256 {
            Some(want) if want != got => Err(format!(
                "its SHA-256 is {got}, not {want} as the archive's index says"
            )),
            _ => Ok(()),
        }
    });
    if unpacked.is_err() {
        let _ = std::fs::remove_dir_all(into);
    }
    unpacked
}

/// Reads the package from `deb` up to its first file whose path `wanted`
/// takes, writes that to `out` and returns its size; nothing else is
/// kept, and the rest of the stream is not read.
pub(crate) fn extract_from(
    deb: impl Read,
    wanted: fn(&str) -> bool,
    out: &Path,
) -> Result<u64, String> {
    with_data_tar(deb, |mut tar| {
        let entries = tar
            .entries()
            .map_err(|e| format!("its data is no tar archive: {e}"))?;
        for entry in entries {
            let mut entry =
                entry.map_err(|e| format!("its data ended before the file wanted: {e}"))?;
            let path = entry
                .path()
                .map_err(|e| format!("a malformed tar entry: {e}"))?
                .to_string_lossy()
                .into_owned();
            if entry.header().entry_type().is_file() && wanted(&path) {
                let size = entry.size();
                write_file(&mut entry, size, out)?;
                return Ok(size);
            }
        }
        Err("the package has no such file".into())
    })
}

/// `read` over the package's data.tar (xz-compressed, or plain).
fn with_data_tar<T>(
    deb: impl Read,
    read: impl FnOnce(tar::Archive<Box<dyn Read + '_>>) -> Result<T, String>,
) -> Result<T, String> {
    let mut ar = ar::Archive::new(deb);
    while let Some(member) = ar.next_entry() {
        let member = member.map_err(|e| format!("not a Debian package ({e})"))?;
        let name = String::from_utf8_lossy(member.header().identifier()).into_owned();
        let data: Box<dyn Read> = match name.trim_end_matches('/') {
            "data.tar.xz" => Box::new(xz2::read::XzDecoder::new(member)),
            "data.tar" => Box::new(member),
            n if n.starts_with("data.tar") => {
                return Err(format!(
                    "its {n} is compressed in a way not read here (xz is)"
                ))
            }
            // the next entry skips what is left of this one
            _ => continue,
        };
        return read(tar::Archive::new(data));
    }
    Err("the package ended before its data.tar.xz".into())
}

fn write_file(from: &mut impl Read, size: u64, out: &Path) -> Result<(), String> {
    let f = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut w = std::io::BufWriter::new(f);
    let got = std::io::copy(&mut from.take(size), &mut w)
        .map_err(|e| format!("its file into {}: {e}", out.display()))?;
    w.flush().map_err(|e| format!("{}: {e}", out.display()))?;
    if got < size {
        return Err(format!("its file is truncated ({got} of {size} bytes)"));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tar entry of `kind` (GNU headers: a long name gets its `L` entry).
    fn entry(tar: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8], kind: tar::EntryType) {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        tar.append_data(&mut h, name, data).unwrap();
    }

    /// A package whose data.tar.xz holds `files` (`NAME/` a directory).
    pub(crate) fn package_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        use tar::EntryType::{Directory, Regular};
        let mut tar = tar::Builder::new(Vec::new());
        for (name, data) in files {
            let kind = if name.ends_with('/') {
                Directory
            } else {
                Regular
            };
            entry(&mut tar, name, data, kind);
        }
        let mut xz = xz2::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(&tar.into_inner().unwrap()).unwrap();
        ar_of(&[
            ("debian-binary", b"2.0\n".to_vec()),
            ("control.tar.xz", b"not read".to_vec()),
            ("data.tar.xz", xz.finish().unwrap()),
        ])
    }

    /// An ar archive of `members`, as dpkg-deb writes a package.
    pub(crate) fn ar_of(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut ar = ar::Builder::new(Vec::new());
        for (name, data) in members {
            let header = ar::Header::new(name.as_bytes().to_vec(), data.len() as u64);
            ar.append(&header, &data[..]).unwrap();
        }
        ar.into_inner().unwrap()
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("trig-deb-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn apts_address_and_hash_are_read() {
        let printed = "'http://deb.debian.org/debian/pool/main/l/linux/linux-image-6.1.0-57-amd64-unsigned_6.1.158-1_amd64.deb' \
                       linux-image-6.1.0-57-amd64-unsigned_6.1.158-1_amd64.deb 68734196 SHA256:ABCdef01\n";
        let l = parse_uris("linux-image-6.1.0-57-amd64-unsigned", printed).unwrap();
        assert!(l.uri.starts_with("http://deb.debian.org/"));
        assert_eq!(l.sha256.as_deref(), Some("abcdef01"));
        assert!(parse_uris("x", "")
            .unwrap_err()
            .contains("no address for x"));
    }

    #[test]
    fn a_package_is_unpacked_whole_and_its_hash_checked() {
        let deb = package_of(&[
            ("./boot/", b""),
            ("./boot/vmlinuz-6.1.0-57-amd64", b"an image"),
            ("./boot/System.map-6.1.0-57-amd64", b"ffff T x\n"),
        ]);
        let sha = format!("{:x}", Sha256::digest(&deb));
        let into = scratch("whole");
        unpack_from(&deb[..], Some(&sha), &into).unwrap();
        let image = into.join("boot/vmlinuz-6.1.0-57-amd64");
        assert_eq!(std::fs::read(image).unwrap(), b"an image");
        let _ = std::fs::remove_dir_all(&into);
        let e = unpack_from(&deb[..], Some("00ff"), &into).unwrap_err();
        assert!(e.contains("SHA-256") && e.contains("not 00ff"), "{e}");
        assert!(!into.exists(), "a package that fails its hash is removed");
    }

    #[test]
    fn only_the_file_wanted_comes_out_of_the_package() {
        let long = format!("./usr/lib/debug/lib/modules/{}/x.ko", "d".repeat(120));
        let vmlinux: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let deb = package_of(&[
            ("./usr/lib/debug/boot/", b""),
            (&long, b"a module"),
            ("./usr/lib/debug/boot/vmlinux-6.1.0-57-amd64", &vmlinux),
        ]);
        let out = scratch("one");
        let wanted = |p: &str| p.ends_with("vmlinux-6.1.0-57-amd64");
        assert_eq!(extract_from(&deb[..], wanted, &out).unwrap(), 5000);
        assert_eq!(std::fs::read(&out).unwrap(), vmlinux);
        let _ = std::fs::remove_file(&out);
    }

    #[test]
    fn a_cut_or_foreign_package_is_named() {
        let out = scratch("cut");
        let wanted = |p: &str| p.ends_with("vmlinux");
        let whole = package_of(&[("./vmlinux", &[7u8; 3000])]);
        let e = extract_from(&whole[..whole.len() - 200], wanted, &out).unwrap_err();
        assert!(
            e.contains("ended") || e.contains("truncated") || e.contains("not a Debian"),
            "{e}"
        );
        let e = extract_from(&b"<html>not found</html>"[..], wanted, &out).unwrap_err();
        assert!(e.contains("not a Debian package"), "{e}");
        let no_data = ar_of(&[("debian-binary", b"2.0\n".to_vec())]);
        let e = extract_from(&no_data[..], wanted, &out).unwrap_err();
        assert!(e.contains("before its data.tar.xz"), "{e}");
        let _ = std::fs::remove_file(&out);
    }
}
