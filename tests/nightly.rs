//! scripts/nightly.sh end to end, nights simulated: a git tree with one
//! commit a night, a `trig-init` whose `vm` hands back the night's
//! prepared results (every other command is the real one), and a history
//! that keeps growing. Checks the regressed night in the history, one
//! alert for its change point, and the script's exit status for each
//! status of the steps it runs.

mod synth;

use std::path::{Path, PathBuf};
use std::process::Command;

const NIGHTLY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/nightly.sh");

struct Nightly {
    dir: PathBuf,
    tree: PathBuf,
    history: PathBuf,
    commits: Vec<String>,
}

fn git(tree: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

impl Nightly {
    /// A tree of `n` commits and a history of its first `seeded` nights,
    /// trig-kprobe at 0.8 M/s.
    fn new(name: &str, n: usize, seeded: usize) -> Nightly {
        let dir = std::env::temp_dir().join(format!("trig-nightly-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (tree, history) = (dir.join("linux"), dir.join("history"));
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::create_dir_all(&history).unwrap();
        git(&tree, &["init", "-q"]);
        let commits = (0..n)
            .map(|i| {
                git(
                    &tree,
                    &["commit", "-q", "--allow-empty", "-m", &format!("night {i}")],
                );
                git(&tree, &["rev-parse", "HEAD"])
            })
            .collect();
        std::fs::write(dir.join("bzImage"), b"a kernel").unwrap();
        // the fake: vm copies $FAKE_RESULTS into --out and exits
        // $FAKE_VM_STATUS (no results at 2 and above); the rest is real
        std::fs::write(
            dir.join("trig-init"),
            format!(
                r#"#!/usr/bin/env bash
if [ "$1" = vm ]; then
  [ -z "${{FAKE_VM_ARGS:-}}" ] || echo "$*" >>"$FAKE_VM_ARGS"
  while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
  status=${{FAKE_VM_STATUS:-0}}
  [ "$status" -ge 2 ] || cp "$FAKE_RESULTS" "$out/$(basename "$FAKE_RESULTS")"
  exit "$status"
fi
exec {} "$@"
"#,
                env!("CARGO_BIN_EXE_trig-init")
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.join("trig-init"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let mut night = Nightly {
            dir,
            tree,
            history,
            commits,
        };
        for i in 0..seeded {
            let f = night.results(i, 0.8);
            std::fs::rename(&f, night.history.join(f.file_name().unwrap())).unwrap();
        }
        night
    }

    /// Night `i`'s results file, at its commit, trig-kprobe at `kprobe`
    /// M/s give or take 1% from night to night.
    fn results(&mut self, i: usize, kprobe: f64) -> PathBuf {
        let wobble = [1.0, 1.01, 0.99, 1.005, 0.995][i % 5];
        let doc = synth::results(
            &format!("6.1.{i}"),
            &self.commits[i],
            &format!("202611{:02}T020000Z", i + 1),
            kprobe * wobble,
            5,
            0.01,
        );
        let f = self.dir.join(format!("night-{i:02}.json"));
        std::fs::write(&f, doc.to_string()).unwrap();
        f
    }

    /// nightly.sh on night `i` (the tree at its commit): its exit status
    /// and stderr.
    fn run(&mut self, i: usize, kprobe: f64, vm_status: i32) -> (i32, String) {
        git(&self.tree, &["checkout", "-q", &self.commits[i]]);
        let results = self.results(i, kprobe);
        let tree = self.tree.clone();
        self.run_in(&tree, &results, vm_status)
    }

    fn run_in(&self, tree: &Path, results: &Path, vm_status: i32) -> (i32, String) {
        self.run_with(tree, results, vm_status, Command::new(NIGHTLY), &[])
    }

    /// nightly.sh as `cmd` (its environment added) on `tree` with the
    /// options `extra` too, booting the fake `vm` that hands back
    /// `results`.
    fn run_with(
        &self,
        tree: &Path,
        results: &Path,
        vm_status: i32,
        mut cmd: Command,
        extra: &[&str],
    ) -> (i32, String) {
        let o = cmd
            .arg(tree)
            .args(extra)
            .arg("--history")
            .arg(&self.history)
            .arg("--image")
            .arg(self.dir.join("bzImage"))
            .arg("--bmf")
            .arg(self.dir.join("bmf.json"))
            .arg("--repo-url")
            .arg("https://git.example/linux")
            .env("TRIG_INIT", self.dir.join("trig-init"))
            .env("FAKE_RESULTS", results)
            .env("FAKE_VM_STATUS", vm_status.to_string())
            .output()
            .expect("nightly.sh");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (o.status.code().unwrap_or(-1), err)
    }

    fn read(&self, f: &str) -> String {
        std::fs::read_to_string(self.history.join(f)).unwrap_or_default()
    }

    fn nights(&self) -> usize {
        std::fs::read_dir(&self.history)
            .unwrap()
            .filter(|e| {
                let n = e.as_ref().unwrap().file_name();
                let n = n.to_string_lossy();
                n.starts_with("night-") && n.ends_with(".json")
            })
            .count()
    }
}

impl Drop for Nightly {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_regressed_night_is_kept_and_its_change_point_alerted_once() {
    let mut n = Nightly::new("alert", 16, 12);
    // night 12: trig-kprobe 15% slower; compare flags it against night 11
    let (status, err) = n.run(12, 0.68, 0);
    assert_eq!(status, 1, "{err}");
    assert_eq!(n.nights(), 13, "the regressed night is in the history");
    assert!(
        n.read("latest.md").contains("trig-kprobe"),
        "{}",
        n.read("latest.md")
    );
    assert!(n
        .read("changepoints.md")
        .contains("show from 12 results on, 3 of them after the step"));
    assert!(!n.read("changepoints.md").contains("ALERT"));
    // night 13: the same level; nothing against night 12, no change point
    // yet with 2 results after the step
    let (status, err) = n.run(13, 0.68, 0);
    assert_eq!(status, 0, "{err}\n{}", n.read("changepoints.md"));
    // night 14: the change point at night 12 shows, alerted
    let (status, err) = n.run(14, 0.68, 0);
    assert_eq!(status, 1, "{err}\n{}", n.read("changepoints.md"));
    let cp = n.read("changepoints.md");
    assert_eq!(cp.matches("**ALERT**").count(), 1, "{cp}");
    assert!(
        cp.contains("**ALERT**: trig-kprobe rate -15.") && cp.contains("(worse) from #13 6.1.12"),
        "{cp}"
    );
    let alerts: serde_json::Value = serde_json::from_str(&n.read("alerts.json")).unwrap();
    assert_eq!(alerts.as_array().unwrap().len(), 1);
    assert_eq!(alerts[0]["commit"], n.commits[12].as_str());
    // night 15: still there, not alerted again
    let (status, err) = n.run(15, 0.68, 0);
    assert_eq!(status, 0, "{err}\n{}", n.read("changepoints.md"));
    let cp = n.read("changepoints.md");
    assert!(!cp.contains("ALERT") && cp.contains("| earlier |"), "{cp}");
    assert_eq!(n.nights(), 16);
    // the report links commits, and tonight's figures are in BMF
    let html = n.read("report.html");
    assert!(html.contains(&format!(
        "https://git.example/linux/commit/{}",
        n.commits[12]
    )));
    let bmf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(n.dir.join("bmf.json")).unwrap()).unwrap();
    assert!(
        bmf["trig-kprobe"]["rate-m-per-s"]["value"]
            .as_f64()
            .unwrap()
            < 0.7
    );
}

#[test]
fn each_exit_status_of_the_steps() {
    let mut n = Nightly::new("status", 6, 2);
    // the first night of a history compares with nothing
    let mut first = Nightly::new("first", 1, 0);
    assert_eq!(first.run(0, 0.8, 0).0, 0);
    assert!(first.read("latest.md").contains("nothing to compare"));
    assert!(first.read("changepoints.md").contains("needs at least 12"));
    // vm 3 and above: the kernel did not boot; nothing is recorded
    let (status, err) = n.run(2, 0.8, 3);
    assert_eq!(status, 3, "{err}");
    assert!(err.contains("did not boot or report"), "{err}");
    assert_eq!(n.nights(), 2);
    // vm 2: usage
    assert_eq!(n.run(2, 0.8, 2).0, 2);
    // vm 1: a benchmark failed; recorded, and the night fails
    let (status, err) = n.run(2, 0.8, 1);
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("some benchmark failed"), "{err}");
    assert_eq!(n.nights(), 3);
    // a clean night
    assert_eq!(n.run(3, 0.8, 0).0, 0);
    // a results file whose commit the tree does not know: history --git
    // and report fail, and so does the night, after compare ran
    let f = n.results(4, 0.8);
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace(&n.commits[4], "0123456789abcdef");
    std::fs::write(&f, text).unwrap();
    git(&n.tree, &["checkout", "-q", &n.commits[4]]);
    let tree = n.tree.clone();
    let (status, err) = n.run_in(&tree, &f, 0);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("nightly.sh: history failed (exit 2)"), "{err}");
    assert!(err.contains("is not in the tree's history"), "{err}");
    std::fs::remove_file(n.history.join(f.file_name().unwrap())).unwrap();
    // a shallow clone: refused before anything runs
    let shallow = n.dir.join("shallow");
    let url = format!("file://{}", n.tree.display());
    git(
        &n.dir,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    let f = n.results(5, 0.8);
    let (status, err) = n.run_in(&shallow, &f, 0);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("shallow clone"), "{err}");
    assert_eq!(n.nights(), 4);
}

/// Ubuntu 24.04's QEMU 8.2 cannot load the profiling plugin (API 4 needs
/// 9.2): nightly.sh said nothing and every profiled boot failed. It says
/// so once, before anything runs, and boots unprofiled under the meter
/// asked for; --require-profile stops before the boot instead; a QEMU of
/// 9.2 or newer profiles.
#[test]
fn a_qemu_older_than_9_2_is_said_once_and_the_night_runs_unprofiled() {
    let mut n = Nightly::new("old-qemu", 3, 0);
    // the plugin is built: nightly.sh would profile
    std::fs::write(n.dir.join("libtrig_plugin.so"), b"a plugin").unwrap();
    let vm_args = n.dir.join("vm-args");
    let night = |n: &mut Nightly, i: usize, qemu: &str, extra: &[&str]| {
        let _ = std::fs::remove_file(&vm_args);
        git(&n.tree, &["checkout", "-q", &n.commits[i]]);
        let results = n.results(i, 0.8);
        let mut cmd = Command::new(NIGHTLY);
        cmd.env("PATH", synth::qemu_of_version(&n.dir, qemu))
            .env("FAKE_VM_ARGS", &vm_args);
        let (status, err) = n.run_with(&n.tree.clone(), &results, 0, cmd, extra);
        (status, err, std::fs::read_to_string(&vm_args).ok())
    };
    let (status, err, args) = night(&mut n, 0, "8.2.2", &["--meter", "icount"]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(err.matches("needs TCG plugin API 4").count(), 1, "{err}");
    assert_eq!(err.matches("measuring unprofiled").count(), 1, "{err}");
    assert!(err.contains("QEMU 8.2"), "{err}");
    let args = args.expect("vm ran");
    assert!(
        args.contains("--meter icount") && !args.contains("--profile"),
        "{args}"
    );
    // --require-profile: stopped before the boot, nothing recorded
    let (status, err, args) = night(
        &mut n,
        1,
        "8.2.2",
        &["--meter", "icount", "--require-profile"],
    );
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("--require-profile") && args.is_none(), "{err}");
    assert_eq!(n.nights(), 1);
    // QEMU 9.2 loads it: profiled, and nothing said
    let (status, err, args) = night(&mut n, 1, "9.2.0", &["--meter", "icount"]);
    assert_eq!(status, 0, "{err}");
    assert!(args.unwrap().contains("--profile"), "{err}");
    assert!(!err.contains("plugin"), "{err}");
    // the time meter counts no instructions: no profile, nothing said
    let (_, err, args) = night(&mut n, 2, "8.2.2", &["--meter", "time"]);
    assert!(
        !args.unwrap().contains("--profile") && !err.contains("plugin"),
        "{err}"
    );
}

/// stderr a socket (journald, some CI agents): the kernel's build was
/// sent to /dev/stderr, which cannot be reopened on a socket, so
/// nightly.sh said "does not build" without building. The build now
/// writes to the stderr it was given.
#[test]
fn a_socket_as_stderr_gets_the_build_and_its_messages() {
    use std::io::Read;
    let n = Nightly::new("socket", 1, 0);
    let (mut ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let status = Command::new(NIGHTLY)
        .arg(&n.tree)
        .arg("--history")
        .arg(&n.history)
        .env("TRIG_INIT", n.dir.join("trig-init"))
        .stderr(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs,
        )))
        .status()
        .expect("nightly.sh");
    let mut err = String::new();
    ours.read_to_string(&mut err).unwrap();
    // the tree is no kernel: make ran and said so, on that socket
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(err.contains("No rule to make target"), "{err}");
    assert!(err.contains("does not build"), "{err}");
}
