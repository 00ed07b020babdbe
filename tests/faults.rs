//! The fault catalogue (README): how `vm` and `run` behave when things go
//! wrong, with a stand-in for QEMU, a shell script first in PATH whose
//! console output each test writes, so that no kernel boots.

mod common;
use common::{stderr, trig_init};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The guest's first words, which tell the host /init was reached.
const INIT: &str = "echo 'trig-init 0.1.0 as PID 1'";

struct Fake {
    dir: PathBuf,
    out: PathBuf,
}

impl Fake {
    /// A directory with a fake `qemu-system-x86_64` that runs `script` (sh)
    /// and notes its pid, a fake kernel and init, and an output directory.
    fn new(name: &str, script: &str) -> Fake {
        let dir = std::env::temp_dir().join(format!("trig-faults-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let qemu = dir.join("bin/qemu-system-x86_64");
        std::fs::write(
            &qemu,
            format!("#!/bin/sh\necho $$ >> '{}/pids'\n{script}\n", dir.display()),
        )
        .unwrap();
        std::fs::set_permissions(&qemu, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        // an x86-64 ELF header with no program headers: a "vmlinux" to
        // -k and a "static executable" to --init
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[18] = 62;
        std::fs::write(dir.join("elf"), elf).unwrap();
        let out = dir.join("out");
        Fake { dir, out }
    }

    fn command(&self, vm_args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_trig-init"));
        let elf = self.dir.join("elf");
        c.args(["vm", "-k"])
            .arg(&elf)
            .arg("--init")
            .arg(&elf)
            .args(["--accel", "tcg", "--out"])
            .arg(&self.out)
            .args(vm_args)
            .args(["--", "-w", "0", "-d", "0.1", "--filter", "trig-base"])
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    self.dir.join("bin").display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            );
        c
    }

    fn vm(&self, vm_args: &[&str]) -> Output {
        self.command(vm_args).output().unwrap()
    }

    fn spawn(&self, vm_args: &[&str]) -> Child {
        self.command(vm_args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Pids of the fake QEMUs started so far.
    fn qemus(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("pids"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect()
    }

    fn wait_for_qemus(&self, n: usize) {
        let start = Instant::now();
        while self.qemus().len() < n {
            assert!(start.elapsed() < Duration::from_secs(60), "no QEMU {n}");
            std::thread::sleep(Duration::from_millis(50));
        }
        // let it print and the host read it
        std::thread::sleep(Duration::from_millis(500));
    }

    /// Every file name in the output directory.
    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.out)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// The results documents in the output directory.
    fn results(&self) -> Vec<Value> {
        self.files()
            .iter()
            .filter(|f| f.ends_with(".json"))
            .map(|f| serde_json::from_slice(&std::fs::read(self.out.join(f)).unwrap()).unwrap())
            .collect()
    }

    /// No temporary file (initramfs, boot log, half-written results) left.
    fn assert_no_leftovers(&self) {
        let files = self.files();
        assert!(
            files.iter().all(|f| !f.starts_with('.')),
            "leftovers: {files:?}"
        );
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        for pid in self.qemus() {
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a process is gone (or a zombie nobody reaped yet).
fn dead(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

fn wait_dead(pid: i32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn wait(child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    let pid = child.id() as i32;
    while !dead(pid) {
        assert!(
            start.elapsed() < limit,
            "trig-init still running after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn two_runs_into_one_directory_keep_their_own_files() {
    let fake = Fake::new("same-second", &format!("{INIT}; sleep 0.3"));
    let (a, b) = (fake.spawn(&["--runs", "2"]), fake.spawn(&["--runs", "2"]));
    let (a, b) = (
        wait(a, Duration::from_secs(60)),
        wait(b, Duration::from_secs(60)),
    );
    // no report from the fake guest: bad output, but every boot kept
    assert_eq!(
        (a.status.code(), b.status.code()),
        (Some(3), Some(3)),
        "{}",
        stderr(&a)
    );
    let path = |o: &Output| {
        stderr(o)
            .lines()
            .find_map(|l| l.strip_prefix("results: ").map(str::to_string))
            .unwrap_or_else(|| panic!("{}", stderr(o)))
    };
    assert_ne!(path(&a), path(&b));
    let docs = fake.results();
    assert_eq!(docs.len(), 2, "{:?}", fake.files());
    let mut sessions = Vec::new();
    for doc in &docs {
        let runs = doc["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{doc}");
        for r in runs {
            assert!(
                Path::new(r["console_log"].as_str().unwrap()).exists(),
                "{r}"
            );
            sessions.push(r["pairing"]["session"].as_str().unwrap().to_string());
        }
    }
    assert_ne!(sessions[0], sessions[2], "two commands never pair");
    fake.assert_no_leftovers();
}

#[test]
fn sigterm_kills_qemu_keeps_finished_boots_and_says_interrupted() {
    // the first boot ends (without a report), the second hangs
    let script = format!(
        "{INIT}; [ $(wc -l < \"$(dirname \"$0\")/../pids\") -ge 2 ] && exec sleep 600; exit 0"
    );
    let fake = Fake::new("sigterm", &script);
    let child = fake.spawn(&["--runs", "3", "--timeout", "600"]);
    fake.wait_for_qemus(2);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::SIGTERM).unwrap();
    let o = wait(child, Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("interrupted by SIGTERM"),
        "{}",
        stderr(&o)
    );
    assert!(wait_dead(fake.qemus()[1]), "QEMU outlived trig-init");
    assert_eq!(fake.qemus().len(), 2, "no boot after the signal");
    let docs = fake.results();
    let runs = docs[0]["runs"].as_array().unwrap();
    let statuses: Vec<&str> = runs.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["bad-output", "interrupted"]);
    fake.assert_no_leftovers();
}

#[test]
fn qemu_dies_with_a_killed_trig_init() {
    let fake = Fake::new("sigkill", &format!("{INIT}; exec sleep 600"));
    let child = fake.spawn(&["--timeout", "600"]);
    fake.wait_for_qemus(1);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::SIGKILL).unwrap();
    let _ = wait(child, Duration::from_secs(10));
    assert!(wait_dead(fake.qemus()[0]), "QEMU outlived trig-init");
}

#[test]
fn a_panic_ends_the_boot_soon_and_quiet_still_says_why() {
    let fake = Fake::new(
        "panic",
        &format!(
            "{INIT}; echo '[    1.0] Kernel panic - not syncing: Attempted to kill init!'; exec sleep 600"
        ),
    );
    let start = Instant::now();
    let o = fake.vm(&["--quiet", "--timeout", "300"]);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "waited {:?}",
        start.elapsed()
    );
    assert_eq!(o.status.code(), Some(3));
    let e = stderr(&o);
    assert!(
        e.contains("crashed") && e.contains("Attempted to kill init"),
        "{e}"
    );
    assert!(wait_dead(fake.qemus()[0]));
    fake.assert_no_leftovers();
}

#[test]
fn quiet_hang_still_says_why() {
    let fake = Fake::new("hang", &format!("{INIT}; exec sleep 600"));
    let o = fake.vm(&["-q", "--timeout", "2"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("did not finish within 2 s"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn usage_errors_come_before_any_boot_and_leave_nothing() {
    let fake = Fake::new("usage", &format!("{INIT}; exit 0"));
    for (args, says) in [
        (&["--cpus", "0"][..], "--cpus"),
        (&["--memory", "garbage"], "--memory 'garbage'"),
        (&["--memory", "1GB"], "--memory '1GB'"),
        (&["--runs", "0"], "--runs"),
        (&["--timeout", "0"], "--timeout"),
        (&["--append", "trig.duration=9"], "--append trig.duration=9"),
        (
            &["--kernel-append", "trig.nosuch=1"],
            "unknown option trig.nosuch",
        ),
        (
            &["--kernel-append", "a", "--kernel-append", "b"],
            "2 --kernel-append for 1 kernels",
        ),
    ] {
        let o = fake.vm(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // before the kernel is even looked for
    let o = trig_init(&["vm", "-k", "/nonexistent", "--runs", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--runs must be at least 1"),
        "{}",
        stderr(&o)
    );
    assert!(fake.qemus().is_empty(), "booted anyway");
    fake.assert_no_leftovers();
}

#[test]
fn profile_refusals_name_their_cause_before_any_boot() {
    // the fake QEMU refuses plugins as a QEMU without them does
    let fake = Fake::new(
        "profile",
        &format!(
            "case \"$*\" in *'-M none'*) echo 'qemu: -plugin: invalid option' >&2; exit 1;; esac; {INIT}; exit 0"
        ),
    );
    let plugin = fake.dir.join("libtrig_plugin.so");
    std::fs::write(&plugin, b"").unwrap();
    for (args, env, says) in [
        (
            &["--profile", "--meter", "time"][..],
            None,
            "needs the icount meter",
        ),
        (
            &["--profile"],
            Some("/nonexistent.so"),
            "TRIG_INIT_PLUGIN=/nonexistent.so: no such file",
        ),
        (
            &["--profile"],
            Some(plugin.to_str().unwrap()),
            "cannot load the profiling plugin",
        ),
    ] {
        let mut c = fake.command(args);
        if let Some(p) = env {
            c.env("TRIG_INIT_PLUGIN", p);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    assert!(
        stderr(
            &fake
                .command(&["--profile"])
                .env("TRIG_INIT_PLUGIN", &plugin)
                .output()
                .unwrap()
        )
        .contains("invalid option"),
        "QEMU's own words are quoted"
    );
    fake.assert_no_leftovers();
}

#[test]
fn a_flooding_guest_is_capped() {
    let fake = Fake::new(
        "flood",
        &format!("{INIT}; head -c 100000000 /dev/zero | tr '\\0' x; echo; exit 0"),
    );
    let o = fake.vm(&[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let docs = fake.results();
    let run = &docs[0]["runs"][0];
    assert!(
        run["message"].as_str().unwrap().contains("not kept"),
        "{run}"
    );
    let log = std::fs::metadata(run["console_log"].as_str().unwrap()).unwrap();
    assert!(log.len() <= (64 << 20) + 4096, "{}", log.len());
}

#[test]
fn run_on_sigterm_emits_what_it_has() {
    let json = std::env::temp_dir().join(format!("trig-faults-run-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&json);
    let child = Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args([
            "run",
            "--filter",
            "trig-usermode-count",
            "-w",
            "0",
            "-d",
            "60",
            "--json",
        ])
        .arg(&json)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::SIGTERM).unwrap();
    let o = wait(child, Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["outcome"]["status"], "interrupted", "{doc}");
    let _ = std::fs::remove_file(&json);
}

#[test]
fn pid_1_of_a_namespace_runs_the_subcommand() {
    let o = Command::new("timeout")
        .args(["60", "unshare", "-pfm", "--mount-proc"])
        .arg(env!("CARGO_BIN_EXE_trig-init"))
        .arg("list")
        .output()
        .unwrap();
    if stderr(&o).contains("unshare failed") {
        eprintln!("skipped: no namespaces here: {}", stderr(&o));
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("trig-base"));
}

/// An `--out` that cannot be written is refused (exit 4) before any boot;
/// a `--json` file that cannot be written exits 4 after the boots, whose
/// results are kept in `--out`.
#[test]
fn unwritable_outputs_exit_4() {
    let mut fake = Fake::new("unwritable", &format!("{INIT}; exit 0"));
    let out = std::mem::replace(&mut fake.out, fake.dir.join("elf/out"));
    // a path under a regular file cannot be made, by root either
    let o = fake.vm(&[]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("elf/out"), "{}", stderr(&o));
    assert!(fake.qemus().is_empty(), "booted anyway");
    fake.out = out;
    let json = fake.dir.join("no-such-dir/results.json");
    let o = fake.vm(&["--json", json.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_eq!(fake.results().len(), 1, "the boots' results are kept");
}
