//! Exit statuses of trig-init, for scripts and `git bisect run`: one
//! table for `run` and `vm` alike, and the signals that end either early
//! (shared by the guest's PID 1 and the host's `vm`).

use nix::sys::signal::Signal;

/// Every boot reported, every benchmark ok or unsupported.
pub const OK: u8 = 0;
/// Results collected, but some benchmarks failed or timed out.
pub const BENCH_FAILED: u8 = 1;
/// Bad command line or kernel argument.
pub const USAGE: u8 = 2;
/// `vm`: the kernel did not boot, crashed, hung, or gave no valid report;
/// `run`: its watchdog ended it (what the host would see as a hang).
pub const NO_BOOT: u8 = 3;
/// QEMU or the host tools could not be run.
pub const INFRA: u8 = 4;

/// The signals that end a run early.
pub const SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// The shell's convention for a death by `sig`: 128 + its number.
pub fn exit_status(sig: Signal) -> u8 {
    128 + sig as u8
}
