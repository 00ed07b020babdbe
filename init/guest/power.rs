//! The end of PID 1: flush, then power off. PID 1 must never return (the
//! kernel would panic) and never hang (the host would wait for a timeout).

use nix::sys::reboot::{reboot, RebootMode};

pub fn power_off() -> ! {
    nix::unistd::sync();
    let err = reboot(RebootMode::RB_POWER_OFF);
    eprintln!("trig-init: power-off failed ({err:?}); halting");
    let _ = reboot(RebootMode::RB_HALT_SYSTEM);
    // Nothing left to do: the host's timeout will end the VM.
    loop {
        std::thread::park();
    }
}
