//! Helpers for tests that run the built binary and boot real kernels.

use std::process::{Command, Output};

pub fn trig_init(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trig-init"))
        .args(args)
        .output()
        .expect("run trig-init")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
