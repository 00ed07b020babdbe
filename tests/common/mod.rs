//! Helpers for tests that run the built binary and boot real kernels.

use std::process::{Command, Output};

#[allow(dead_code)] // not every test binary that includes common uses it
pub fn trig_init(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(args)
        .output()
        .expect("run trig-init")
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
