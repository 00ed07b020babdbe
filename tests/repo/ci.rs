//! The CI side of the project: scripts/setup.sh's choice of apt suites by
//! distribution (its `--dry-run`, with a stubbed os-release), and its word
//! on a QEMU too old for the profiling plugin.

use crate::synth;

use std::path::Path;
use std::process::Command;

const SETUP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/setup.sh");
const TRIXIE: &str =
    "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\nVERSION_CODENAME=trixie\n";

/// `setup.sh --dry-run --kernel-tools` as if on the distribution that
/// `os_release` describes, with a QEMU of `qemu`: its exit status and
/// what it said (stdout, then stderr).
fn dry_run(dir: &Path, os_release: &str, qemu: &str) -> (Option<i32>, String) {
    dry_run_at(dir, os_release, qemu, "")
}

/// [`dry_run`] with `TRIG_APT_SNAPSHOT` set to `snapshot` (empty: unset).
fn dry_run_at(dir: &Path, os_release: &str, qemu: &str, snapshot: &str) -> (Option<i32>, String) {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("os-release");
    std::fs::write(&file, os_release).unwrap();
    let o = Command::new(SETUP)
        .args(["--dry-run", "--kernel-tools"])
        .env("TRIG_OS_RELEASE", &file)
        .env("TRIG_APT_SNAPSHOT", snapshot)
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
    let (status, said) = dry_run(&dir.join("debian"), TRIXIE, "10.0.2");
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

/// The image pins the distribution, not its packages: apt-get in it
/// installed the live archive's QEMU, which moved from 10.0.2 to 10.0.13
/// between point releases. With TRIG_APT_SNAPSHOT, setup.sh's one apt
/// source is Debian's archive at that time (release, updates, security),
/// and no live suite is a fallback; a bad time or a non-Debian system is
/// refused by name.
#[test]
fn setup_installs_from_debian_as_of_the_snapshot_alone() {
    let dir = std::env::temp_dir().join(format!("trig-ci-snapshot-{}", std::process::id()));
    let (status, said) = dry_run_at(&dir.join("ok"), TRIXIE, "10.0.2", "20251117T000000Z");
    assert_eq!(status, Some(0), "{said}");
    for uri in [
        "URIs: http://snapshot.debian.org/archive/debian/20251117T000000Z\nSuites: trixie trixie-updates\n",
        "URIs: http://snapshot.debian.org/archive/debian-security/20251117T000000Z\nSuites: trixie-security\n",
    ] {
        assert!(said.contains(uri), "{said}");
    }
    assert!(
        !said.contains("deb.debian.org") && !said.contains("backports"),
        "{said}"
    );
    let (status, said) = dry_run_at(&dir.join("bad"), TRIXIE, "10.0.2", "2025-11-17");
    assert_eq!(status, Some(2), "{said}");
    assert!(said.contains("not '2025-11-17'"), "{said}");
    let (status, said) = dry_run_at(
        &dir.join("ubuntu"),
        "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n",
        "8.2.2",
        "20251117T000000Z",
    );
    assert_eq!(status, Some(2), "{said}");
    assert!(said.contains("not for Ubuntu 24.04.1 LTS"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The jobs of a workflow file: (name, text), by the two-space indent of
/// the names under `jobs:`.
fn jobs(workflow: &str) -> Vec<(String, String)> {
    let body = &workflow[workflow.find("\njobs:\n").expect("jobs:") + 7..];
    let mut out: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        let name = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':'));
        match name {
            Some(n) if !n.starts_with([' ', '#']) => out.push((n.to_string(), String::new())),
            _ => {
                if let Some((_, text)) = out.last_mut() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    out
}

/// The pinned image, as the workflows and the docs name it.
const IMAGE: &str = "debian:trixie-20251117";
/// Debian's archive on the image's date, which setup.sh installs from.
const SNAPSHOT: &str = "20251117T000000Z";

/// Every job that builds or boots (calls setup.sh) runs in the one pinned
/// image, whose QEMU the docs' `docker run` reproduces; the boots are
/// under --meter icount, which the runner's CPU and KVM do not reach; the
/// matrices are static (a local runner expands no `fromJSON`), and every
/// artifact is one file (a local runner uploads no directory).
#[test]
fn the_workflows_build_and_boot_in_the_pinned_image_under_icount() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    // sweep-search.yml's matrix is the previous job's `sweep next`: no
    // local runner runs it, but it builds and boots in the image too
    for file in [
        "examples/sweep-range.yml",
        "examples/nightly-kernel.yml",
        "examples/sweep-search.yml",
    ] {
        let text = read(file);
        let local = !file.ends_with("sweep-search.yml");
        // the packages as of the image's date, QEMU's version with them
        assert!(
            text.contains(&format!("\n  TRIG_APT_SNAPSHOT: \"{SNAPSHOT}\"\n")),
            "{file}: no TRIG_APT_SNAPSHOT {SNAPSHOT} for the jobs in {IMAGE}"
        );
        assert!(
            !local || !text.contains("fromJSON"),
            "{file}: a matrix from fromJSON"
        );
        let jobs = jobs(&text);
        assert!(jobs.len() >= 3, "{file}: {jobs:?}");
        for (name, body) in &jobs {
            let builds = body.contains("./scripts/setup.sh");
            let pinned = body.contains(&format!("\n    container: {IMAGE}\n"));
            assert_eq!(
                builds, pinned,
                "{file}: job {name}: setup.sh, not in {IMAGE}, or the other way"
            );
            assert!(
                !body.contains("sudo "),
                "{file}: job {name}: the container runs as root, without sudo"
            );
            // what a local runner deletes with the job's directory, kept
            // for scripts/proofs/wrkflw.sh to check (a green job proves nothing)
            if local && ["slice", "bench"].contains(&name.as_str()) {
                assert!(
                    body.contains("cp ") && body.contains("\"$LOCAL_KEEP/\""),
                    "{file}: job {name} keeps nothing for LOCAL_KEEP"
                );
            }
            // the jobs a local runner runs: one file an artifact
            if local && ["build", "slice", "bench"].contains(&name.as_str()) {
                for upload in body.split("uses: actions/upload-artifact").skip(1) {
                    let path = upload.lines().find_map(|l| l.trim().strip_prefix("path: "));
                    assert!(
                        path.is_some_and(|p| p.ends_with(".tar")),
                        "{file}: job {name}: upload of {path:?}, not one file"
                    );
                }
            }
        }
    }
    let nightly = read("examples/nightly-kernel.yml");
    assert!(nightly.contains("./scripts/nightly.sh") && nightly.contains("--meter icount"));
    assert!(read("scripts/sweep.sh").contains("--meter icount --runs 1"));
    for doc in ["docs/sweep.md", "docs/nightly.md"] {
        let text = read(doc);
        assert!(
            text.contains("docker run")
                && text.contains(IMAGE)
                && text.contains(&format!("TRIG_APT_SNAPSHOT={SNAPSHOT}")),
            "{doc}: how to reproduce a figure with {IMAGE}"
        );
    }
}
