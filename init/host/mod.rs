//! The host side: boot kernels with trig-init as /init and collect the
//! results.

pub mod console;
pub mod initramfs;
pub mod kernel;
pub mod qemu;
pub mod table;
pub mod vm;

/// Exit statuses of `trig-init vm`, for scripts and `git bisect run`.
pub mod exit {
    /// Every boot reported, every benchmark ok or unsupported.
    pub const OK: u8 = 0;
    /// Results collected, but some benchmarks failed or timed out.
    pub const BENCH_FAILED: u8 = 1;
    /// Bad command line or kernel argument.
    pub const USAGE: u8 = 2;
    /// The kernel did not boot, crashed, hung, or gave no valid report.
    pub const NO_BOOT: u8 = 3;
    /// QEMU or the host tools could not be run.
    pub const INFRA: u8 = 4;
}
