//! The boots of a command: up to `--jobs` side by side, each judged and
//! added to its kernel's results file as it ends, a KVM that cannot boot
//! given up for TCG.

use super::launch::{default_jobs, launch, Launch};
use super::options::{AccelChoice, VmOptions};
use super::schedule::{boots, Scheduled};
use super::session::{Pending, Session};
use super::{infra, temp_file, Error};
use crate::judge::{add_profiles, judge_boot};
use crate::kernel::Kernel;
use crate::machine::{self, Boot, BootEvent, BootSpec};
use crate::merge::{merge, Parts};
use crate::profiling::caches::Caches;
use crate::profiling::plugin;
use crate::qemu::{self, Accel};
use crate::results::Target;
use crate::signals;
use nix::sys::signal::Signal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use trig_guest::split::Part;
use trig_schema::files::TempFile;
use trig_schema::{Pairing, RunRecord};

/// What each worker of [`Session::side_by_side`] shares: the boots to do,
/// whether to start more, and what launching one needs.
struct Crew<'c, 'a> {
    queue: Mutex<std::vec::IntoIter<Scheduled>>,
    stop: AtomicBool,
    launches: &'c [(Kernel, Vec<String>)],
    launcher: &'c Launcher<'a>,
    initrd: &'c TempFile,
    events: &'c Sender<BootEvent>,
}

/// A boot that ended, or why it could not be launched, with its counts.
type Ended = (Scheduled, Result<(Boot, Option<TempFile>), Error>);

impl Crew<'_, '_> {
    /// Launches boots off the queue, one at a time, until it is empty or
    /// the command stops, each sent to `tx` as it ends.
    fn work(&self, tx: &Sender<Ended>) {
        loop {
            if self.stop.load(Ordering::SeqCst) || signals::caught().is_some() {
                break;
            }
            let next = self.queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some(this) = next else {
                break;
            };
            let (kernel, cmdlines) = &self.launches[this.k];
            let cmdline = &cmdlines[this.part.index - 1];
            let r = self.launcher.counts_file(&this).and_then(|counts| {
                let b = self.launcher.launch(
                    kernel,
                    cmdline,
                    &this,
                    self.initrd,
                    counts.as_ref(),
                    self.events,
                )?;
                Ok((b, counts))
            });
            if tx.send((this, r)).is_err() {
                break;
            }
        }
    }
}

/// How long a KVM guest may take to reach /init before KVM is judged
/// unusable (a working one takes about a second).
const KVM_PROBE: Duration = Duration::from_secs(30);

impl<'a> Session<'a> {
    /// Boots the schedule, until done or interrupted; returns the signal.
    /// A KVM that may still fail boots alone, since falling back to TCG
    /// changes how every later boot runs; then `--jobs` boots go side by
    /// side, the one that found KVM wanting among them. The runs whose
    /// parts did not all end are merged from those that did, whatever
    /// stopped the schedule.
    pub(super) fn boot_all(
        &mut self,
        targets: &mut [Target],
        initrd: &TempFile,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Signal>, Error> {
        let r = self.boot_schedule(targets, initrd, events);
        self.flush(targets, events);
        r
    }

    fn boot_schedule(
        &mut self,
        targets: &mut [Target],
        initrd: &TempFile,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Signal>, Error> {
        let mut todo =
            boots(self.opts.order, targets.len(), self.opts.runs, self.parts()).into_iter();
        while self.opts.accel == AccelChoice::Auto && self.accel == Accel::Kvm && !self.kvm_works {
            let Some(this) = todo.next() else {
                return Ok(None);
            };
            let counts = self.launcher().counts_file(&this)?;
            let Some(b) = self.try_kvm(&targets[this.k], &this, initrd, counts.as_ref(), events)?
            else {
                // nothing was recorded yet: the whole schedule again under
                // TCG, split where the icount meter makes that faster
                drop((this, todo));
                self.plan_split(targets.len())?;
                let all = boots(self.opts.order, targets.len(), self.opts.runs, self.parts());
                return self.side_by_side(targets, all, initrd, events);
            };
            let sig = self.record(&mut targets[this.k], &this, b, counts, events);
            if sig.is_some() || self.unsaved.is_some() {
                return Ok(sig);
            }
        }
        self.side_by_side(targets, todo.collect(), initrd, events)
    }

    /// Boots `todo` up to `--jobs` at a time, each recorded as it ends;
    /// a signal, a results file that cannot be written or a QEMU that
    /// cannot run starts no more, and what the boots under way measured
    /// is kept.
    fn side_by_side(
        &mut self,
        targets: &mut [Target],
        todo: Vec<Scheduled>,
        initrd: &TempFile,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Signal>, Error> {
        let jobs = self
            .opts
            .jobs
            .unwrap_or_else(|| default_jobs(self.launch.meter))
            .clamp(1, todo.len().max(1));
        let launcher = self.launcher();
        let launches = self.launches(targets);
        let crew = Crew {
            queue: Mutex::new(todo.into_iter()),
            stop: AtomicBool::new(false),
            launches: &launches,
            launcher: &launcher,
            initrd,
            events,
        };
        let (tx, done) = mpsc::channel();
        std::thread::scope(|s| {
            for _ in 0..jobs {
                let (tx, crew) = (tx.clone(), &crew);
                s.spawn(move || crew.work(&tx));
            }
            drop(tx);
            // each boot is judged and saved as it ends, whatever its place
            let (mut failed, mut interrupted) = (None, None);
            for (this, r) in done {
                match r {
                    Ok((b, counts)) => {
                        let sig = self.record(&mut targets[this.k], &this, b, counts, events);
                        interrupted = interrupted.or(sig);
                    }
                    Err(e) => failed = failed.or(Some(e)),
                }
                if failed.is_some() || interrupted.is_some() || self.unsaved.is_some() {
                    crew.stop.store(true, Ordering::SeqCst);
                }
            }
            failed.map_or(Ok(interrupted), Err)
        })
    }

    /// Each kernel and the command line of each of its parts: what a
    /// boot needs, apart from the targets that take the results.
    fn launches(&self, targets: &[Target]) -> Vec<(Kernel, Vec<String>)> {
        let parts = self.parts();
        (0..targets.len())
            .map(|k| {
                let cmdlines = (1..=parts)
                    .map(|index| self.part_cmdline(k, Part { index, of: parts }))
                    .collect();
                (targets[k].kernel.clone(), cmdlines)
            })
            .collect()
    }

    /// What the boots need of the session, apart from it (boots side by
    /// side use it while the session records their results).
    fn launcher(&self) -> Launcher<'a> {
        Launcher {
            opts: self.opts,
            accel: self.accel,
            launch: self.launch.clone(),
            plugin: self.plugin.clone(),
            id: self.id.clone(),
            kvm_works: self.kvm_works,
        }
    }

    /// Judges a boot and adds it to the kernel's results (a part of a
    /// split run once all its parts have ended); returns the signal that
    /// interrupted it.
    fn record(
        &mut self,
        target: &mut Target,
        this: &Scheduled,
        b: Boot,
        counts: Option<TempFile>,
        events: &Sender<BootEvent>,
    ) -> Option<Signal> {
        let mut rec = judge_boot(this.round, &b, self.launch.timeout);
        if let Some(counts) = &counts {
            let debug = self.debug.get(this.k);
            if let Some(c) = add_profiles(&mut rec, &b.console.frames, counts.path(), debug) {
                self.lines_cost.addresses += c.addresses;
                self.lines_cost.seconds += c.seconds;
            }
        }
        let _ = events.send(BootEvent::Judged {
            label: this.label.clone(),
            kernel: target.kernel.spec.clone(),
            status: rec.status,
            wall_s: rec.wall_s,
            message: rec.message.clone(),
        });
        if this.part.of == 1 {
            self.save(
                target,
                this.k,
                &this.tag,
                rec,
                &[Some(b.console.log)],
                events,
            );
            return b.interrupted;
        }
        let now = Instant::now();
        let took = Duration::try_from_secs_f64(rec.wall_s).unwrap_or_default();
        let start = now.checked_sub(took).unwrap_or(now);
        let group = self
            .pending
            .entry((this.round, this.k))
            .or_insert_with(|| Pending {
                parts: vec![None; this.part.of],
                start,
                end: now,
            });
        (group.start, group.end) = (group.start.min(start), now);
        group.parts[this.part.index - 1] = Some((rec, b.console.log));
        if group.parts.iter().all(Option::is_some) {
            self.merge_run(target, (this.round, this.k), &this.tag, events);
        }
        b.interrupted
    }

    /// Merges the parts of run (round, kernel) that have ended into the
    /// run and saves it.
    fn merge_run(
        &mut self,
        target: &mut Target,
        (round, k): (usize, usize),
        tag: &str,
        events: &Sender<BootEvent>,
    ) {
        let (Some(group), Some(plan)) = (self.pending.remove(&(round, k)), &self.plan) else {
            return;
        };
        let (records, logs): (Vec<_>, Vec<_>) = group
            .parts
            .into_iter()
            .map(|p| p.map_or((None, None), |(r, log)| (Some(r), Some(log))))
            .unzip();
        let parts = Parts {
            plan,
            whole: &self.opts.run,
            records,
        };
        let wall = group.end.duration_since(group.start).as_secs_f64();
        let rec = merge(round, &parts, wall);
        self.save(target, k, tag, rec, &logs, events);
    }

    /// Every run whose parts did not all end (the schedule stopped),
    /// merged from those that did.
    fn flush(&mut self, targets: &mut [Target], events: &Sender<BootEvent>) {
        let runs: Vec<(usize, usize)> = self.pending.keys().copied().collect();
        for (round, k) in runs {
            let tag = if targets.len() > 1 {
                format!("-k{}", k + 1)
            } else {
                String::new()
            };
            self.merge_run(&mut targets[k], (round, k), &tag, events);
        }
    }

    /// Adds a run of the k-th kernel to its results, with its consoles.
    fn save(
        &mut self,
        target: &mut Target,
        k: usize,
        tag: &str,
        mut rec: RunRecord,
        logs: &[Option<String>],
        events: &Sender<BootEvent>,
    ) {
        rec.pairing = Some(Pairing {
            session: self.id.clone(),
            round: rec.index,
        });
        target.set.vm.append = self.cmdline(k);
        target.set.vm.accel = self.accel.as_str().into();
        let (machine, cpu) = qemu::model(self.opts.arch, self.accel);
        (target.set.vm.machine, target.set.vm.cpu) = (Some(machine.into()), Some(cpu.into()));
        (target.set.vm.meter, target.set.vm.cpus) = (self.launch.meter, self.launch.cpus);
        if self.unsaved.is_none() {
            match target.add(&self.opts.out, &self.stem, tag, rec, logs) {
                Ok(Some(why)) => {
                    let _ = events.send(BootEvent::Notice(format!("warning: {why}")));
                }
                Ok(None) => {}
                Err(e) => self.unsaved = Some(e),
            }
        }
    }

    /// One boot under KVM; None when KVM cannot reach /init, which is
    /// then given up for TCG (the caller boots it again there).
    fn try_kvm(
        &mut self,
        target: &Target,
        this: &Scheduled,
        initrd: &TempFile,
        counts: Option<&TempFile>,
        events: &Sender<BootEvent>,
    ) -> Result<Option<Boot>, Error> {
        let cmdline = self.part_cmdline(this.k, this.part);
        let b = self
            .launcher()
            .launch(&target.kernel, &cmdline, this, initrd, counts, events)?;
        if b.console.reached_init || b.interrupted.is_some() {
            self.kvm_works |= b.console.reached_init;
            return Ok(Some(b));
        }
        if let Some(refusal) = qemu_refusal(&b.qemu_stderr) {
            return Err(infra(format!("QEMU refused to start: {refusal}")));
        }
        let why = b
            .qemu_stderr
            .lines()
            .last()
            .unwrap_or("the guest never reached /init")
            .to_string();
        self.accel = Accel::Tcg;
        self.launch = launch(self.opts, self.meter_choice, self.accel)?;
        // a machine without usable KVM says so on every run: one quiet
        // line, QEMU's (often an assertion) behind -v
        let said = if self.opts.verbose {
            format!("; QEMU said: {why}")
        } else {
            " (-v says why)".into()
        };
        let _ = events.send(BootEvent::Notice(format!(
            "KVM cannot run this guest here: using TCG, meter {}{said}",
            self.launch.meter.as_str()
        )));
        Ok(None)
    }
}

/// What a boot needs of the session: the accelerator at hand and how the
/// guests launch under it.
struct Launcher<'a> {
    opts: &'a VmOptions,
    accel: Accel,
    launch: Launch,
    plugin: Option<PathBuf>,
    /// The session's id.
    id: String,
    kvm_works: bool,
}

impl Launcher<'_> {
    /// The caches `--cache` simulates.
    fn caches(&self) -> Option<Caches> {
        self.opts.cache.then(|| Caches::of(self.opts.arch))
    }

    /// The plugin, where this launch runs it: `--profile`, or the
    /// coherence model of several producers under icount (a KVM that
    /// failed may have turned the meter to icount since the session
    /// found the plugin).
    fn plugin(&self) -> Option<&PathBuf> {
        self.plugin
            .as_ref()
            .filter(|_| self.opts.profile || self.launch.coherence)
    }

    /// The file the plugin counts a boot's instructions into.
    fn counts_file(&self, this: &Scheduled) -> Result<Option<TempFile>, Error> {
        self.plugin()
            .map(|_| {
                temp_file(
                    self.opts
                        .out
                        .join(format!(".profile-{}-{}.txt", self.id, this.n)),
                    b"",
                )
            })
            .transpose()
    }

    /// Runs one boot of `kernel` with this command line under the
    /// accelerator at hand.
    fn launch(
        &self,
        kernel: &Kernel,
        cmdline: &str,
        this: &Scheduled,
        initrd: &TempFile,
        counts: Option<&TempFile>,
        events: &Sender<BootEvent>,
    ) -> Result<Boot, Error> {
        let vm = qemu::Vm {
            kernel,
            initrd: initrd.path(),
            cpus: self.launch.cpus,
            memory: &self.opts.memory,
            cmdline,
            meter: self.launch.meter,
            icount_shift: self.opts.icount_shift,
            plugin: self.plugin().zip(counts).map(|(p, c)| {
                plugin::qemu_arg(p, c.path(), self.caches().as_ref(), self.launch.coherence)
            }),
        };
        // a KVM not yet known to work gets a deadline to reach /init
        let give_up =
            (self.opts.accel == AccelChoice::Auto && self.accel == Accel::Kvm && !self.kvm_works)
                .then_some(KVM_PROBE);
        let spec = BootSpec {
            arch: self.opts.arch,
            args: &qemu::args(&vm, self.accel),
            timeout: self.launch.timeout,
            give_up,
            label: &this.label,
        };
        machine::boot(&spec, events).map_err(infra)
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
