//! The end of PID 1: flush, then power off. PID 1 must never return (the
//! kernel would panic) and never hang (the host would wait for a timeout).

use nix::sys::reboot::{reboot, RebootMode};
use std::io::Write;

pub fn power_off() -> ! {
    // What was written to the console may still wait in the kernel's
    // buffer (4 KiB) and the UART's FIFO, which the power-off drops (a
    // report cut mid-line, "reboot: Power down" printed inside a line
    // before the rest): wait until the UART has taken it all.
    let mut out = std::io::stdout();
    let _ = out.flush();
    let _ = nix::sys::termios::tcdrain(&out);
    nix::unistd::sync();
    let err = reboot(RebootMode::RB_POWER_OFF);
    trig_schema::stderrln!("trig-init: power-off failed ({err:?}); halting");
    let _ = reboot(RebootMode::RB_HALT_SYSTEM);
    // Nothing left to do: the host's timeout will end the VM.
    loop {
        std::thread::park();
    }
}
