//! The fault catalogue (docs/faults.md): how `vm` and `run` behave when things go
//! wrong, with a stand-in for QEMU, a shell script first in PATH whose
//! console output each test writes, so that no kernel boots.

// a test's own output: a failed write there fails the test
#![allow(clippy::disallowed_macros)]

mod common;
mod synth;
use common::{assert_kcidb_valid, stderr, trig_init};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The guest's first words, which tell the host /init was reached.
const INIT: &str = "echo 'trig-init 0.1.0 as PID 1'";

/// `qemu-system-* --version`, which `vm` asks before booting (recorded in
/// the results): answered before the script, not counted as a boot.
const VERSION: &str =
    "[ \"$1\" = --version ] && { echo 'QEMU emulator version 10.0.2 (fake)'; exit 0; }";

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
        // an x86-64 ELF header with no program headers: a "vmlinux" to
        // -k and a "static executable" to --init
        let mut elf = vec![0u8; 64];
        elf[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        elf[18] = 62;
        std::fs::write(dir.join("elf"), elf).unwrap();
        let out = dir.join("out");
        let fake = Fake { dir, out };
        fake.script(script);
        fake
    }

    /// Makes the fake QEMU run `script`.
    fn script(&self, script: &str) {
        let qemu = self.dir.join("bin/qemu-system-x86_64");
        std::fs::write(
            &qemu,
            format!(
                "#!/bin/sh\n{VERSION}\necho $$ >> '{}/pids'\n{script}\n",
                self.dir.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&qemu, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }

    fn command(&self, vm_args: &[&str]) -> Command {
        self.command_of("vm", &["elf"], vm_args)
    }

    /// `trig-init SUB` with a `-k` for each of `kernels` (files of the
    /// fake's directory, made as copies of its ELF).
    fn command_of(&self, sub: &str, kernels: &[&str], vm_args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_trig-init"));
        let elf = self.dir.join("elf");
        c.arg(sub);
        for k in kernels {
            let path = self.dir.join(k);
            if !path.exists() {
                std::fs::copy(&elf, &path).unwrap();
            }
            c.arg("-k").arg(path);
        }
        c.arg("--init")
            .arg(&elf)
            .args(["--accel", "tcg", "--out"])
            .arg(&self.out)
            .args(vm_args)
            .args(["--", "-w", "0", "-d", "0.1", "--filter", "trig-base"])
            .env("PATH", self.path());
        c
    }

    /// PATH with the fake QEMU first.
    fn path(&self) -> String {
        format!(
            "{}:{}",
            self.dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
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
    // one boot after the other, so that the second is the one that hangs
    let child = fake.spawn(&["--runs", "3", "--timeout", "600", "--jobs", "1"]);
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

/// `vm --export-kcidb`: a bad origin is refused before any boot; a kernel
/// that crashed still gets its checkout and build, in a document that
/// kcidb-io accepts.
#[test]
fn kcidb_export_of_a_crashed_kernel() {
    let fake = Fake::new(
        "kcidb",
        &format!(
            "{INIT}; echo '[    1.0] Kernel panic - not syncing: Attempted to kill init!'; exec sleep 600"
        ),
    );
    let doc = fake.dir.join("kcidb.json");
    let args = [
        "-q",
        "--timeout",
        "300",
        "--export-kcidb",
        doc.to_str().unwrap(),
    ];
    let o = fake
        .command(&args)
        .env("TRIG_INIT_KCIDB_ORIGIN", "Bad Origin")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("TRIG_INIT_KCIDB_ORIGIN"),
        "{}",
        stderr(&o)
    );
    assert!(fake.qemus().is_empty(), "booted anyway");
    let o = fake.vm(&args);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_kcidb_valid(&[&doc]);
    let d: Value = serde_json::from_slice(&std::fs::read(&doc).unwrap()).unwrap();
    assert_eq!(d["builds"].as_array().unwrap().len(), 1, "{d}");
    assert!(d["tests"].as_array().unwrap().is_empty(), "{d}");
    // named by its results file, not merged with other kernels
    let id = d["checkouts"][0]["id"].as_str().unwrap();
    let stem = fake
        .files()
        .into_iter()
        .find(|f| f.ends_with(".json"))
        .unwrap();
    assert_eq!(id, format!("trig_init:{}", stem.trim_end_matches(".json")));
}

#[test]
fn quiet_hang_still_says_why() {
    let fake = Fake::new("hang", &format!("{INIT}; exec sleep 600"));
    let o = fake.vm(&["-q", "--timeout", "2"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("made no progress for 2 s"),
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
        // QEMU's own refusals, which KVM was blamed for
        (&["--memory", "64T"], "more than this host's"),
        (&["--memory", "1"], "at least 128M"),
        (&["--cpus", "1000"], "at most 255"),
        // output paths, refused only after the boot before
        (
            &["--json", "/nonexistent/x.json"],
            "--json /nonexistent/x.json",
        ),
        (&["--runs", "0"], "--runs"),
        // its schedule of boots ran out of memory and aborted, leaving
        // the initramfs behind
        (
            &["--runs", "18446744073709551615"],
            "--runs 18446744073709551615: 18446744073709551615 boots",
        ),
        (&["--runs", "10001"], "at most 10000"),
        (&["--jobs", "0"], "--jobs must be at least 1"),
        (
            &["--split", "0"],
            "--split 0: from 1 (no split) to 64 boots a run",
        ),
        (
            &["--split", "65"],
            "--split 65: from 1 (no split) to 64 boots a run",
        ),
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
        (
            &["--icount-shift", "5"],
            "--icount-shift 5: from 0 to 4 (an instruction takes 1 to 16 ns",
        ),
        (
            &["--meter", "time", "--icount-shift", "1"],
            "--icount-shift sets the icount meter's ns an instruction: it needs the icount meter",
        ),
        // the guest would time in 4-ns units an instruction QEMU gives 1 ns
        (
            &["--kernel-append", "trig.icount_shift=2"],
            "--kernel-append trig.icount_shift=2: trig-init sets this itself",
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
    // --out naming a file said "File exists (os error 17)"
    let file = fake.dir.join("elf");
    let o = trig_init(&["vm", "-k", "/nonexistent", "--out", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a file, not a directory"),
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
    // a usage error is 2; a plugin or QEMU that cannot be run, the host's
    // tools (README's table): 4
    for (args, env, says, status) in [
        (
            &["--profile", "--meter", "time"][..],
            None,
            "needs the icount meter",
            2,
        ),
        (
            &["--profile"],
            Some("/nonexistent.so"),
            "TRIG_INIT_PLUGIN=/nonexistent.so: no such file",
            4,
        ),
        (
            &["--profile"],
            Some("/tmp"),
            "TRIG_INIT_PLUGIN=/tmp is a directory",
            4,
        ),
        (
            &["--profile"],
            Some(""),
            "TRIG_INIT_PLUGIN is set but empty",
            4,
        ),
        (
            &["--profile"],
            Some(plugin.to_str().unwrap()),
            "cannot load the profiling plugin",
            4,
        ),
    ] {
        let mut c = fake.command(args);
        if let Some(p) = env {
            c.env("TRIG_INIT_PLUGIN", p);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(status), "{args:?}: {}", stderr(&o));
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

/// No QEMU on the PATH is the host's (exit 4), whatever needs it first:
/// the boot (`-p 1`), or the plugin's probe (`-p 2`'s coherence model,
/// `--profile`); what the model cannot honour is refused (exit 2) before
/// QEMU is looked for.
#[test]
fn a_missing_qemu_is_the_hosts_and_the_models_bounds_come_first() {
    let fake = Fake::new("noqemu", &format!("{INIT}; exit 0"));
    let plugin = fake.dir.join("libtrig_plugin.so");
    std::fs::write(&plugin, b"").unwrap();
    let without_qemu = |vm_args: &[&str], run_args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_trig-init"));
        c.args(["vm", "-k"])
            .arg(fake.dir.join("elf"))
            .arg("--init")
            .arg(fake.dir.join("elf"))
            .arg("--out")
            .arg(&fake.out)
            .args(vm_args)
            .arg("--")
            .args(run_args)
            .env("PATH", "/nonexistent")
            .env("TRIG_INIT_PLUGIN", &plugin);
        c.output().unwrap()
    };
    for (vm_args, run_args) in [
        (&[][..], &["-p", "1"][..]),
        (&[], &["-p", "2"]),
        (&["--profile"], &["-p", "1"]),
        (&["--profile", "--meter", "icount"], &["-p", "1,2"]),
    ] {
        let o = without_qemu(vm_args, run_args);
        assert_eq!(
            o.status.code(),
            Some(4),
            "{vm_args:?} {run_args:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("qemu-system-x86_64"), "{}", stderr(&o));
    }
    for (vm_args, run_args, says) in [
        (
            &[][..],
            &["-p", "65"][..],
            "-p 65: the coherence model of -p N under the icount meter",
        ),
        (&[], &["-p", "2,65"], "at most 64 vCPUs and producers"),
        (
            &["--cpus", "65"],
            &["-p", "2"],
            "--cpus 65: the coherence model",
        ),
        (&[], &["-p", "1,1"], "1 is named twice"),
        (&[], &["-p", "1,"], "an empty entry"),
        (&[], &["-p", ",1"], "an empty entry"),
        (&[], &["-p", "1,,2"], "an empty entry"),
    ] {
        let o = without_qemu(vm_args, run_args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{vm_args:?} {run_args:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(says), "{run_args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    // the time meter has no model to bound
    let o = without_qemu(&["--meter", "time", "--accel", "tcg"], &["-p", "65"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(fake.qemus().is_empty());
}

mod generated {
    use super::*;
    use proptest::prelude::*;

    /// A value of a generated vm command line: a count in or out of
    /// range, a list, a size, text.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u64..100).prop_map(|n| n.to_string()),
            Just("99999999999999999999".to_string()),
            Just("65".to_string()),
            Just("1,1".to_string()),
            Just("2,".to_string()),
            Just("1G".to_string()),
            "[0-9a-zA-Z,.-]{0,5}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any values for vm's flags and the guest's: refused (2) in one
        /// line or a list led by `trig-init: error:`, or taken and then
        /// stopped by the missing QEMU (4); never a panic, never a boot.
        #[test]
        fn a_generated_vm_line_is_refused_or_reaches_qemu(
            vm in proptest::collection::vec((prop::sample::select(vec![
                "--cpus", "--memory", "--runs", "--jobs", "--split", "--timeout",
                "--icount-shift", "--meter", "--accel",
            ]), value()), 0..3),
            run in proptest::collection::vec((prop::sample::select(vec![
                "-p", "-w", "-d", "--prod-affinity", "--cmp-str-len", "--batch-iters", "--min-counts",
            ]), value()), 0..3),
        ) {
            let dir = std::env::temp_dir().join(format!("trig-faults-gen-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let elf = dir.join("elf");
            if !elf.exists() {
                let mut bytes = vec![0u8; 64];
                bytes[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
                bytes[18] = 62;
                std::fs::write(&elf, bytes).unwrap();
            }
            let mut c = Command::new(env!("CARGO_BIN_EXE_trig-init"));
            c.args(["vm", "-k"]).arg(&elf).arg("--init").arg(&elf).arg("--out").arg(dir.join("out"));
            for (f, v) in &vm {
                c.arg(f).arg(v);
            }
            c.arg("--");
            for (f, v) in &run {
                c.arg(f).arg(v);
            }
            let o = c.env("PATH", "/nonexistent").output().unwrap();
            let err = stderr(&o);
            prop_assert!(matches!(o.status.code(), Some(2) | Some(4)), "{vm:?} {run:?}: {o:?}");
            prop_assert!(!err.contains("panicked"), "{err}");
            // what it said before the error is its own lines; the error
            // is one line, or a list indented under it
            let at = err.find("trig-init: error: ");
            prop_assert!(at.is_some(), "{vm:?} {run:?}: {err}");
            let (before, error) = err.split_at(at.unwrap());
            prop_assert!(before.lines().all(|l| l.starts_with("trig-init: ")), "{err}");
            for line in error.lines().skip(1) {
                prop_assert!(line.starts_with("  "), "{vm:?} {run:?}: {err}");
            }
        }
    }
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

/// An `--out` that cannot be made (a path under a regular file, which
/// holds for root too) is refused with exit 4, could not write, before
/// any boot.
#[test]
fn an_out_that_cannot_be_made_exits_4_before_any_boot() {
    let mut fake = Fake::new("unwritable", &format!("{INIT}; exit 0"));
    fake.out = fake.dir.join("elf/out");
    let o = fake.vm(&[]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("elf/out"), "{}", stderr(&o));
    assert!(fake.qemus().is_empty(), "booted anyway");
}

/// The console lines of a guest that reports trig-base and trig-kprobe
/// (the report of a synthetic results file), for a fake QEMU to `cat`.
fn report_lines(fake: &Fake) -> PathBuf {
    report_lines_as(fake, "console.txt", |_| {})
}

/// [`report_lines`] in the file `name`, the report changed by `edit`.
fn report_lines_as(fake: &Fake, name: &str, edit: impl Fn(&mut Value)) -> PathBuf {
    let doc = synth::results("6.1.0-test", "c0ffee", "20261201T000000Z", 1.0, 1, 0.0);
    let mut report = doc["runs"][0]["report"].clone();
    edit(&mut report);
    let json = report.to_string();
    let path = fake.dir.join(name);
    let mut text = "trig-init 0.1.0 as PID 1\n".to_string();
    text.extend(trig_schema::frame::encode(
        trig_schema::frame::REPORT,
        &json,
    ));
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `command` with `fake.out` on a fresh 1 MiB tmpfs of its own
/// mount namespace, after the shell commands `before` (which may fill
/// it, or the fake QEMU does); returns the output and the listing (`ls
/// -A`) of the directory as the command left it, or None where
/// namespaces are not allowed.
fn on_a_full_disk(fake: &Fake, before: &str, command: &Command) -> Option<(Output, String)> {
    std::fs::create_dir_all(&fake.out).unwrap();
    let listing = fake.dir.join("listing");
    let script = format!(
        "mount -t tmpfs -o size=1m tmpfs '{out}' || exit 99; {before}; \"$@\"; rc=$?; ls -A '{out}' > '{listing}'; exit $rc",
        out = fake.out.display(),
        listing = listing.display()
    );
    let mut c = Command::new("unshare");
    c.args(["-rm", "sh", "-c", &script, "sh"])
        .arg(command.get_program())
        .args(command.get_args());
    for (k, v) in command.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    let o = c.output().unwrap();
    if o.status.code() == Some(99) || stderr(&o).contains("unshare failed") {
        eprintln!("skipped: no mount namespace here: {}", stderr(&o));
        return None;
    }
    Some((o, std::fs::read_to_string(listing).unwrap_or_default()))
}

/// An `ab` comparison that cannot be made after the boots (the second
/// kernel's report comes from another trig-init build, whose code icount
/// counts too) is a gate that did not pass: 1, not 2, which is a usage
/// error found before anything boots. Both kernels' results are kept.
#[test]
fn an_ab_comparison_that_cannot_be_made_after_the_boots_exits_1() {
    let fake = Fake::new("ab-incomparable", "");
    let a = report_lines(&fake);
    let b = report_lines_as(&fake, "other-build.txt", |r| {
        r["tool"]["git_rev"] = "another-build".into()
    });
    fake.script(&format!(
        "case \"$*\" in *elf2*) cat '{}' ;; *) cat '{}' ;; esac\nexit 0",
        b.display(),
        a.display()
    ));
    let o = fake
        .command_of("ab", &["elf", "elf2"], &["--runs", "1"])
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("trig-init build") && err.contains("the gate fails"),
        "says why: {err}"
    );
    assert_eq!(fake.results().len(), 2, "both kernels' results: {err}");
}

#[test]
fn a_full_disk_on_the_first_write_leaves_no_empty_file_and_prints_the_figures() {
    let fake = Fake::new("full-disk", "");
    let console = report_lines(&fake);
    // the guest reports, then the disk fills before the host writes
    let qemu = fake.dir.join("bin/qemu-system-x86_64");
    std::fs::write(
        &qemu,
        format!(
            "#!/bin/sh\n{VERSION}\ncat '{}'\ncat /dev/zero > '{}/fill' 2>/dev/null\nexit 0\n",
            console.display(),
            fake.out.display()
        ),
    )
    .unwrap();
    let Some((o, listing)) = on_a_full_disk(&fake, ":", &fake.command(&[])) else {
        return;
    };
    let (out, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert_eq!(o.status.code(), Some(4), "{out}{err}");
    assert!(err.contains("No space left on device"), "says why: {err}");
    // the figures measured are shown though they could not be kept
    assert!(
        format!("{out}{err}").contains("trig-kprobe"),
        "no table: {out}{err}"
    );
    assert!(
        !listing.contains(".json"),
        "a results file left half-written: {listing}"
    );
    assert!(
        listing.lines().all(|f| !f.starts_with('.')),
        "temporary files left: {listing}"
    );
}

/// `vm --json -` and `ab`'s comparison into a stdout that cannot be
/// written (a full disk, a closed pipe): exit 4 with one line, "cannot
/// write standard output", and the results files kept (both printed a
/// panic and a backtrace).
#[test]
fn vm_and_ab_into_a_stdout_that_cannot_be_written_exit_4_and_keep_the_results() {
    let fake = Fake::new("stdout", "");
    let console = report_lines(&fake);
    fake.script(&format!("cat '{}'; exit 0", console.display()));
    for (sub, kernels, extra) in [
        ("vm", &["elf"][..], &["--json", "-"][..]),
        ("ab", &["elf", "elf2"][..], &[][..]),
    ] {
        for closed in [false, true] {
            let _ = std::fs::remove_dir_all(&fake.out);
            let o = fake
                .command_of(sub, kernels, extra)
                .stdout(common::unwritable_stdout(closed))
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            let err = stderr(&o);
            let what = format!("{sub} (closed pipe: {closed})");
            assert_eq!(o.status.code(), Some(4), "{what}: {err}");
            assert!(!err.contains("panicked"), "{what}: {err}");
            let said = err
                .lines()
                .filter(|l| l.contains("cannot write standard output"));
            assert_eq!(said.count(), 1, "{what}: {err}");
            assert_eq!(
                fake.results().len(),
                kernels.len(),
                "{what}: the results files"
            );
        }
    }
}

/// `history --alert` whose alerts file cannot be saved (the disk filled)
/// exits 4, "could not write", after printing the history: not 2.
#[test]
fn an_alerts_file_that_cannot_be_saved_exits_4() {
    let fake = Fake::new("alerts-full", "");
    let nights = fake.dir.join("nights");
    std::fs::create_dir_all(&nights).unwrap();
    // ten nights at 0.8 M/s, then three at 0.68: a change point to alert on
    for night in 1..=13 {
        let created = format!("202611{night:02}T000000Z");
        let kprobe = if night <= 10 { 0.8 } else { 0.68 };
        let doc = synth::results("6.1.0", &format!("c{night}"), &created, kprobe, 5, 0.01);
        std::fs::write(nights.join(format!("{created}.json")), doc.to_string()).unwrap();
    }
    let fill = format!(
        "cp '{}'/*.json '{out}' && cat /dev/zero > '{out}/fill' 2>/dev/null",
        nights.display(),
        out = fake.out.display()
    );
    let mut history = Command::new(env!("CARGO_BIN_EXE_trig-init"));
    history.args(["history", "--alert"]).arg(&fake.out);
    let Some((o, listing)) = on_a_full_disk(&fake, &fill, &history) else {
        return;
    };
    let (out, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert_eq!(o.status.code(), Some(4), "{out}{err}");
    assert!(
        err.contains("alerts.json") && err.contains("No space left on device"),
        "says what and why: {err}"
    );
    assert!(out.contains("trig-kprobe"), "the history is printed: {out}");
    assert!(!listing.contains("alerts.json"), "{listing}");
}

#[test]
fn an_init_of_another_architecture_is_a_usage_error_before_any_boot() {
    let fake = Fake::new("init-arch", &format!("{INIT}; exit 0"));
    let mut arm = std::fs::read(fake.dir.join("elf")).unwrap();
    arm[18] = 183;
    let arm_kernel = fake.dir.join("arm-elf");
    std::fs::write(&arm_kernel, arm).unwrap();
    let o = trig_init(&[
        "vm",
        "-k",
        arm_kernel.to_str().unwrap(),
        "--arch",
        "aarch64",
        "--init",
        fake.dir.join("elf").to_str().unwrap(),
        "--out",
        fake.out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("built for x86_64, not --arch aarch64"),
        "{}",
        stderr(&o)
    );
    assert!(fake.files().is_empty(), "{:?}", fake.files());
}

#[test]
fn a_guest_that_says_nothing_still_gets_a_reason() {
    // a truncated kernel: QEMU starts, the console stays empty
    let fake = Fake::new("silent", "exit 0");
    let o = fake.vm(&["-q"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let docs = fake.results();
    let why = docs[0]["runs"][0]["message"].as_str().unwrap().to_string();
    assert!(why.contains("never reached /init: "), "{why}");
    assert!(!why.trim_end().ends_with(':'), "an empty reason: {why}");
    assert!(
        stderr(&o).contains("console stayed empty"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_killed_runs_initramfs_is_removed_by_the_next_run() {
    let fake = Fake::new("stale", &format!("{INIT}; exit 0"));
    std::fs::create_dir_all(&fake.out).unwrap();
    // what `vm` killed by SIGKILL left, and one of a run still going
    let gone = {
        let mut c = Command::new("true").spawn().unwrap();
        c.wait().unwrap();
        c.id()
    };
    let stale = format!(".initramfs-20261201T000000Z-{gone}.cpio");
    let alive = format!(".initramfs-20261201T000000Z-{}.cpio", std::process::id());
    for n in [&stale, &alive] {
        std::fs::write(fake.out.join(n), b"cpio").unwrap();
    }
    let o = fake.vm(&["-q"]);
    assert!(
        stderr(&o).contains(&format!("removed {stale}")),
        "{}",
        stderr(&o)
    );
    let files = fake.files();
    assert!(!files.contains(&stale), "{files:?}");
    assert!(
        files.contains(&alive),
        "a living run's file stays: {files:?}"
    );
}

#[test]
fn a_qemu_refusal_under_kvm_is_not_blamed_on_kvm() {
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_err()
    {
        eprintln!("skipped: no usable /dev/kvm here");
        return;
    }
    let fake = Fake::new(
        "refusal",
        &format!(
            "echo \"qemu-system-x86_64: Invalid SMP CPUs 300. The max CPUs supported by machine 'pc' is 255\" >&2; exit 1; {INIT}"
        ),
    );
    let elf = fake.dir.join("elf");
    let o = Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(["vm", "--accel", "auto", "--meter", "time", "-k"])
        .arg(&elf)
        .arg("--init")
        .arg(&elf)
        .arg("--out")
        .arg(&fake.out)
        .args(["--", "-w", "0", "-d", "0.1", "--filter", "trig-base"])
        .env("PATH", fake.path())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{e}");
    assert!(
        e.contains("QEMU refused to start") && e.contains("Invalid SMP CPUs"),
        "{e}"
    );
    assert!(!e.contains("KVM is present but unusable"), "{e}");
    assert_eq!(fake.qemus().len(), 1, "not tried again under TCG");
    assert!(fake.results().is_empty(), "{:?}", fake.files());
}

/// A guest still writing when `--timeout` has passed is read to its end:
/// the timeout bounds a silence, not the boot (a profiled boot under load
/// was cut inside its 3 MiB of kernel symbols).
#[test]
fn a_guest_still_writing_past_the_timeout_is_read_whole() {
    let fake = Fake::new("slow", "");
    let console = report_lines(&fake);
    let lines = std::fs::read_to_string(&console).unwrap().lines().count();
    // a line every 0.7 s: twice the timeout or more, never silent for it
    assert!(lines >= 6, "{lines}");
    fake.script(&format!(
        "while IFS= read -r l; do printf '%s\\n' \"$l\"; sleep 0.7; done < '{}'",
        console.display()
    ));
    let o = fake.vm(&["--timeout", "2"]);
    let docs = fake.results();
    let run = &docs[0]["runs"][0];
    assert_eq!(run["status"], "ok", "{run}\n{}", stderr(&o));
    assert_eq!(run["report"]["outcome"]["status"], "complete");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A guest that writes only what is not trig-init's (a kernel repeating a
/// warning) makes no progress: hung after the timeout, not run forever.
#[test]
fn a_guest_repeating_kernel_messages_makes_no_progress() {
    let fake = Fake::new(
        "noise",
        &format!("{INIT}; exec yes '[ 1.0] WARNING: noise'"),
    );
    let o = fake.vm(&["--timeout", "2"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("made no progress for 2 s"),
        "{}",
        stderr(&o)
    );
}

/// QEMU makes its stdout non-blocking, and a serial port whose write is
/// refused leaves the guest waiting while icount jumps its clock: the
/// host's load became guest time (a watchdog that fired, a report cut).
/// The console is a file that takes every write, however late the host
/// reads it: here `dd oflag=nonblock` writes as QEMU does, in 1 MiB
/// writes, and dies at the first refused one.
#[test]
fn the_console_never_refuses_a_write_however_late_the_host_reads() {
    let fake = Fake::new("nonblock", "");
    let report = std::fs::read_to_string(report_lines(&fake)).unwrap();
    let mut text = String::from("trig-init 0.1.0 as PID 1\n");
    // a kernel's symbols: 3 MiB of lines
    for i in 0..16_000 {
        text.push_str(&format!("{i:>8} {}\n", "k".repeat(190)));
    }
    text.push_str(
        report
            .lines()
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n")
            .as_str(),
    );
    text.push('\n');
    let console = fake.dir.join("burst.txt");
    std::fs::write(&console, text).unwrap();
    fake.script(&format!(
        "dd if='{}' oflag=nonblock bs=1M status=none",
        console.display()
    ));
    let o = fake.vm(&[]);
    let docs = fake.results();
    let run = &docs[0]["runs"][0];
    assert_eq!(run["status"], "ok", "{run}\n{}", stderr(&o));
}
