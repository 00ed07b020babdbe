//! Exit statuses of trig-init, for scripts and `git bisect run`: one
//! table for `run` and `vm` alike, and the signals that end either early
//! (shared by the guest's PID 1 and the host's `vm`).

use nix::sys::signal::Signal;

/// Every boot reported, every benchmark ok or unsupported.
pub const OK: u8 = 0;
/// A gate did not pass: some benchmark failed, timed out, regressed or
/// went missing, or nothing was compared (README, "Exit statuses").
pub const FAILED: u8 = 1;
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

/// The status of a command that several outcomes make (its boots, then a
/// comparison, then an export): the gravest, in the order of README's
/// table, which is the numbers' order: a signal that ended the run, then
/// what the host could not do (4), a kernel that gave no report (3), a
/// usage error (2), a gate that did not pass (1), and 0 only when every
/// outcome was 0.
pub fn gravest(a: u8, b: u8) -> u8 {
    a.max(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gravest_outcome_decides() {
        let sigint = exit_status(Signal::SIGINT);
        let order = [OK, FAILED, USAGE, NO_BOOT, INFRA, sigint];
        for (i, &a) in order.iter().enumerate() {
            for &b in &order[..=i] {
                assert_eq!(gravest(a, b), a, "{a} over {b}");
                assert_eq!(gravest(b, a), a, "{a} over {b}");
            }
        }
    }
}
