//! Helpers for tests that run the built binary and boot real kernels.

// a test's own output: a failed write there fails the test
#![allow(clippy::disallowed_macros)]

use std::ffi::OsStr;
use std::process::{Command, Output};

#[allow(dead_code)] // not every test binary that includes common uses it
pub fn trig_init(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(args)
        .output()
        .expect("run trig-init")
}

/// What a run of the binary said.
#[allow(dead_code)] // not every test binary that includes common uses it
pub struct Ran {
    pub code: i32,
    pub out: String,
    pub err: String,
}

#[allow(dead_code)] // not every test binary that includes common uses it
impl Ran {
    pub fn both(&self) -> String {
        format!("{}{}", self.out, self.err)
    }
}

/// The real binary under `timeout`, killed after `secs`: a command that
/// hangs (a fifo it waits on) fails the test instead of hanging it. No
/// colour, no KCIDB settings of the environment.
#[allow(dead_code)] // not every test binary that includes common uses it
pub fn bounded<S: AsRef<OsStr>>(secs: u32, args: &[S]) -> Ran {
    let o = Command::new("timeout")
        .args(["-k", "2", &secs.to_string()])
        .arg(env!("CARGO_BIN_EXE_trig-init"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("TRIG_INIT_KCIDB_ORIGIN")
        .env_remove("TRIG_INIT_KCIDB_CONFIG")
        .env_remove("TRIG_INIT_KCIDB_TREE")
        .env_remove("TRIG_INIT_KCIDB_REPO")
        .output()
        .expect("run timeout(1)");
    Ran {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[allow(dead_code)] // not every test binary that includes common uses it
/// The names of a report's `results`, in order.
pub fn names(results: &[serde_json::Value]) -> Vec<&str> {
    results
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Validates KCIDB documents with kcidb-io (scripts/kcidb-validate.py).
/// Without kcidb-io the check is skipped, loudly, unless
/// TRIG_INIT_REQUIRE_KCIDB is set (CI sets it: scripts/setup.sh installs
/// kcidb-io).
#[allow(dead_code)] // not every test binary that includes common uses it
pub fn assert_kcidb_valid(files: &[&std::path::Path]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kcidb-validate.py");
    let o = Command::new("python3").arg(script).args(files).output();
    let missing = match &o {
        Err(_) => true,
        Ok(o) => o.status.code() == Some(3),
    };
    if missing && std::env::var_os("TRIG_INIT_REQUIRE_KCIDB").is_none() {
        eprintln!("\n*** SKIPPED: KCIDB validation: python3 or kcidb-io is missing (pip install kcidb-io) ***\n");
        return;
    }
    let o = o.expect("python3 runs");
    assert!(
        o.status.success(),
        "{}{}",
        stderr(&o),
        String::from_utf8_lossy(&o.stdout)
    );
}

/// A stdout that cannot be written: a full disk (`/dev/full`), or a pipe
/// whose reader is gone.
#[allow(dead_code)] // not every test binary that includes common uses it
pub fn unwritable_stdout(closed_pipe: bool) -> std::process::Stdio {
    if closed_pipe {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer.into()
    } else {
        std::fs::File::create("/dev/full").unwrap().into()
    }
}
