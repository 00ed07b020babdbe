//! The boots of a command: each in its turn, judged and added to its
//! kernel's results file, a KVM that cannot boot given up for TCG.

use super::guest::guest;
use super::options::AccelChoice;
use super::schedule::{boots, Scheduled};
use super::setup::Setup;
use super::{infra, temp_file, Error};
use crate::boot::judge::{add_profiles, judge_boot};
use crate::boot::machine::{self, Boot, BootEvent, BootSpec};
use crate::boot::profile;
use crate::boot::qemu::{self, Accel};
use crate::boot::results::Target;
use crate::files::TempFile;
use crate::report::Pairing;
use nix::sys::signal::Signal;
use std::sync::mpsc::Sender;
use std::time::Duration;

/// How long a KVM guest may take to reach /init before KVM is judged
/// unusable (a working one takes about a second).
const KVM_PROBE: Duration = Duration::from_secs(30);

impl<'a> Setup<'a> {
    /// Boots the schedule, until done or interrupted; returns the signal.
    pub(super) fn boot_all(
        &mut self,
        targets: &mut [Target],
        initrd: &TempFile,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Signal>, Error> {
        for this in boots(self.opts.order, targets.len(), self.opts.runs) {
            if let Some(sig) = self.boot_one(&mut targets[this.k], &this, initrd, events)? {
                return Ok(Some(sig));
            }
            if self.unsaved.is_some() {
                break;
            }
        }
        Ok(None)
    }

    /// Boots a kernel once, judges the boot and adds it to the kernel's
    /// results; returns the signal that interrupted it.
    fn boot_one(
        &mut self,
        target: &mut Target,
        this: &Scheduled,
        initrd: &TempFile,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Signal>, Error> {
        let counts = match &self.plugin {
            Some(_) => Some(temp_file(
                self.opts
                    .out
                    .join(format!(".profile-{}-{}.txt", self.session, this.n)),
                b"",
            )?),
            None => None,
        };
        let b = self.boot_with_fallback(target, this, initrd, counts.as_ref(), events)?;
        let index = target.set.runs.len() + 1;
        let mut rec = judge_boot(index, &b, self.guest.timeout);
        if let Some(counts) = &counts {
            add_profiles(&mut rec, &b.console.frames, counts.path());
        }
        rec.pairing = Some(Pairing {
            session: self.session.clone(),
            round: this.round,
        });
        let _ = events.send(BootEvent::Judged {
            label: this.label.clone(),
            kernel: target.kernel.spec.clone(),
            status: rec.status,
            wall_s: rec.wall_s,
            message: rec.message.clone(),
        });
        target.set.vm.accel = self.accel.as_str().into();
        let (machine, cpu) = qemu::model(self.opts.arch, self.accel);
        (target.set.vm.machine, target.set.vm.cpu) = (Some(machine.into()), Some(cpu.into()));
        (target.set.vm.meter, target.set.vm.cpus) = (self.guest.meter, self.guest.cpus);
        match target.add(&self.opts.out, &self.stem, &this.tag, rec, &b.console.log) {
            Ok(Some(why)) => {
                let _ = events.send(BootEvent::Notice(format!("warning: {why}")));
            }
            Ok(None) => {}
            Err(e) => self.unsaved = Some(e),
        }
        Ok(b.interrupted)
    }

    /// One boot; a KVM that cannot reach /init is given up for TCG, and
    /// the boot made again there.
    fn boot_with_fallback(
        &mut self,
        target: &mut Target,
        this: &Scheduled,
        initrd: &TempFile,
        counts: Option<&TempFile>,
        events: &Sender<BootEvent>,
    ) -> Result<Boot, Error> {
        loop {
            target.set.vm.append = self.cmdline(this.k);
            let vm = qemu::Vm {
                kernel: &target.kernel,
                initrd: initrd.path(),
                cpus: self.guest.cpus,
                memory: &self.opts.memory,
                cmdline: &target.set.vm.append,
                meter: self.guest.meter,
                plugin: self
                    .plugin
                    .as_ref()
                    .zip(counts)
                    .map(|(p, c)| profile::qemu_arg(p, c.path())),
            };
            let give_up = (self.opts.accel == AccelChoice::Auto && self.accel == Accel::Kvm)
                .then_some(KVM_PROBE);
            let spec = BootSpec {
                arch: self.opts.arch,
                args: &qemu::args(&vm, self.accel),
                timeout: self.guest.timeout,
                give_up,
                label: &this.label,
            };
            let b = machine::boot(&spec, events).map_err(infra)?;
            if give_up.is_none() || b.console.reached_init || b.interrupted.is_some() {
                return Ok(b);
            }
            let why = b
                .qemu_stderr
                .lines()
                .last()
                .unwrap_or("the guest never reached /init")
                .to_string();
            if let Some(refusal) = qemu_refusal(&b.qemu_stderr) {
                return Err(infra(format!("QEMU refused to start: {refusal}")));
            }
            self.accel = Accel::Tcg;
            self.guest = guest(self.opts, self.meter_choice, self.points, self.accel)?;
            // a machine without usable KVM says so on every run: one quiet
            // line, QEMU's (often an assertion) behind -v
            let said = if self.opts.verbose {
                format!("; QEMU said: {why}")
            } else {
                " (-v says why)".into()
            };
            let _ = events.send(BootEvent::Notice(format!(
                "KVM cannot run this guest here: using TCG, meter {}{said}",
                self.guest.meter.as_str()
            )));
        }
    }
}

/// QEMU's own error, when it refused the configuration for a reason that
/// is not KVM's (TCG would refuse it as well): its lines other than
/// warnings, none of which names KVM.
fn qemu_refusal(stderr: &str) -> Option<String> {
    let errors: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("warning"))
        .collect();
    let kvm = errors
        .iter()
        .any(|l| l.to_ascii_lowercase().contains("kvm"));
    (!errors.is_empty() && !kvm).then(|| errors.join(" / "))
}
