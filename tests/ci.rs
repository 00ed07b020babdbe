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

/// Every job that builds or boots (calls setup.sh) runs in the one pinned
/// image, whose QEMU the docs' `docker run` reproduces; the boots are
/// under --meter icount, which the runner's CPU and KVM do not reach; the
/// matrices are static (a local runner expands no `fromJSON`), and every
/// artifact is one file (a local runner uploads no directory).
#[test]
fn the_workflows_build_and_boot_in_the_pinned_image_under_icount() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    for file in ["examples/sweep-range.yml", "examples/nightly-kernel.yml"] {
        let text = read(file);
        assert!(!text.contains("fromJSON"), "{file}: a matrix from fromJSON");
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
            // the jobs a local runner runs: one file an artifact
            if ["build", "slice", "bench"].contains(&name.as_str()) {
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
            text.contains("docker run") && text.contains(IMAGE),
            "{doc}: how to reproduce a figure with {IMAGE}"
        );
    }
}
