//! The CI side of the project: scripts/setup.sh's choice of apt suites by
//! distribution (its `--dry-run`, with a stubbed os-release), and its word
//! on a QEMU too old for the profiling plugin.

mod synth;

use std::path::Path;
use std::process::Command;

const SETUP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/setup.sh");

/// `setup.sh --dry-run --kernel-tools` as if on the distribution that
/// `os_release` describes, with a QEMU of `qemu`: its exit status and
/// what it said (stdout, then stderr).
fn dry_run(dir: &Path, os_release: &str, qemu: &str) -> (Option<i32>, String) {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("os-release");
    std::fs::write(&file, os_release).unwrap();
    let o = Command::new(SETUP)
        .args(["--dry-run", "--kernel-tools"])
        .env("TRIG_OS_RELEASE", &file)
        .env("PATH", synth::qemu_of_version(dir, qemu))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), said)
}

/// setup.sh's fallback wrote a Debian `${VERSION_CODENAME}-backports`
/// line whatever the distribution: on Ubuntu `noble-backports` of
/// deb.debian.org, a suite that does not exist. Now Debian gets its
/// backports, Ubuntu no Debian suite, and a distribution that is
/// neither is refused by name; Ubuntu's QEMU 8.2 is said to be too old
/// for the plugin.
#[test]
fn setup_writes_a_debian_suite_for_debian_only() {
    let dir = std::env::temp_dir().join(format!("trig-ci-setup-{}", std::process::id()));
    let (status, said) = dry_run(
        &dir.join("debian"),
        "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\nVERSION_CODENAME=trixie\n",
        "10.0.2",
    );
    assert_eq!(status, Some(0), "{said}");
    assert!(
        said.contains("deb http://deb.debian.org/debian trixie-backports main"),
        "{said}"
    );
    assert!(!said.contains("plugin"), "{said}");
    let (status, said) = dry_run(
        &dir.join("ubuntu"),
        "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n",
        "8.2.2",
    );
    assert_eq!(status, Some(0), "{said}");
    assert!(
        !said.contains("deb.debian.org") && !said.contains("backports"),
        "{said}"
    );
    assert!(said.contains("no fallback suite on ubuntu"), "{said}");
    assert_eq!(said.matches("needs TCG plugin API 4").count(), 1, "{said}");
    // a derivative of Ubuntu is Ubuntu
    let (_, said) = dry_run(
        &dir.join("mint"),
        "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\nVERSION_CODENAME=wilma\n",
        "8.2.2",
    );
    assert!(!said.contains("deb.debian.org"), "{said}");
    let (status, said) = dry_run(
        &dir.join("fedora"),
        "ID=fedora\nPRETTY_NAME=Fedora\n",
        "9.2.0",
    );
    assert_eq!(status, Some(2), "{said}");
    assert!(
        said.contains("Fedora is neither Debian nor Ubuntu"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
