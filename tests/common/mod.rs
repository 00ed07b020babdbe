//! Helpers for tests that run the built binary and boot real kernels.

use std::process::{Command, Output};
use std::sync::Mutex;

/// Boots run one at a time: the machines here have two cores, and two
/// guests at once would skew each other's numbers.
pub static BOOTS: Mutex<()> = Mutex::new(());

/// The kernel the boot tests use: Debian's newest 6.1 unless overridden.
pub fn test_kernel() -> String {
    std::env::var("TRIG_TEST_KERNEL").unwrap_or_else(|_| "debian:6.1.0".into())
}

pub fn trig_init(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(args)
        .output()
        .expect("run trig-init")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
