//! SIGINT, SIGTERM and SIGHUP during `vm`: noted, so that the boot in
//! progress is ended, QEMU killed and what was measured kept; and QEMU
//! dies with trig-init whatever kills it.

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};
use trig_schema::error::{infra, Error};

pub use trig_schema::exit::{exit_status, SIGNALS};

static CAUGHT: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(sig: nix::libc::c_int) {
    CAUGHT.store(sig, Ordering::SeqCst);
}

/// Notes the first of [`SIGNALS`] instead of dying of it; a second one
/// kills as usual (SA_RESETHAND), for a user who insists.
pub fn install() -> Result<(), Error> {
    let action = SigAction::new(
        SigHandler::Handler(note),
        SaFlags::SA_RESETHAND | SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in SIGNALS {
        // SAFETY: the handler only stores into an atomic
        unsafe { sigaction(sig, &action) }.map_err(|e| infra(format!("sigaction {sig}: {e}")))?;
    }
    Ok(())
}

/// The signal noted, if any.
pub fn caught() -> Option<Signal> {
    Signal::try_from(CAUGHT.load(Ordering::SeqCst)).ok()
}

/// Makes the child get SIGKILL when trig-init dies, by a signal it does
/// not catch (SIGKILL, OOM) as well.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as nix::libc::pid_t;
    // SAFETY: prctl, getppid and kill are async-signal-safe
    unsafe {
        cmd.pre_exec(move || {
            use nix::libc;
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // the parent died before prctl: nobody will send the signal
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
}
