//! Exit statuses of trig-init, for scripts and `git bisect run`: one
//! table for `run` and `vm` alike.

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
