//! The trigger matrix: syscall-driven, batched in-kernel and uprobe
//! benchmarks, all from bpf/trigger.bpf.c.

use super::{hit_slots, open_failed, utarget, Ctx};
use crate::bpf::skel::trigger::{OpenTriggerSkel, TriggerSkel, TriggerSkelBuilder};
use crate::bpf::Failure;
use crate::caps;
use crate::options::RunOptions;
use crate::registry::{Bench, RunPoint, Runner, Trigger};
use crate::sampler::counters::BpfSlots;
use crate::sampler::Measured;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::OpenObject;
use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use trig_schema::Capability;

/// The trigger object loaded once for every point of a run that it serves:
/// one parse of the kernel's BTF (its kfunc extern needs it) and one
/// verification where each point loading its own took most of its time
/// (docs/meter.md). Each point attaches its program, measures and
/// detaches, as before; only what is loaded beside it changes, and a
/// program loaded but not attached never runs.
pub struct TriggerObject {
    skel: TriggerSkel<'static>,
    slots: BpfSlots,
    progs: Vec<&'static str>,
}

impl TriggerObject {
    /// Loads every program that the trigger points need and that the probe
    /// found the kernel able to run; without the trampoline ones (fentry,
    /// fexit, fmod_ret) where those stop the load, as a kernel without BTF
    /// or an arm64 one before 6.4 does; `None` where there is nothing to
    /// load, or it does not load: each point then loads its own, and says
    /// what fails.
    pub fn load(
        points: &[RunPoint],
        opts: &RunOptions,
        caps: &BTreeMap<String, Capability>,
    ) -> Option<TriggerObject> {
        let wanted = |trampolines: bool| {
            let mut progs: Vec<&'static str> = points
                .iter()
                .map(|p| p.bench)
                .filter(|b| b.family.runner == Runner::Trigger && caps::has(caps, b.feature))
                .filter(|b| {
                    trampolines
                        || !matches!(
                            b.attach_kind(),
                            "fentry" | "fentry.s" | "fexit" | "fmod_ret"
                        )
                })
                .flat_map(|b| b.programs(opts.stacktrace))
                .collect();
            progs.sort_unstable();
            progs.dedup();
            progs
        };
        let (all, fewer) = (wanted(true), wanted(false));
        let retry = fewer != all;
        Self::load_these(all, opts).or_else(|| retry.then(|| Self::load_these(fewer, opts))?)
    }

    fn load_these(progs: Vec<&'static str>, opts: &RunOptions) -> Option<TriggerObject> {
        if progs.is_empty() {
            return None;
        }
        // the skeleton borrows its object's storage for as long as it
        // lives: once a run
        let mut open = open(Box::leak(Box::new(MaybeUninit::uninit())), opts).ok()?;
        crate::bpf::set_autoload(&mut open, &progs);
        let mut skel = match open.load() {
            Ok(skel) => skel,
            Err(e) => {
                if opts.verbose {
                    trig_schema::stderrln!(
                        "trig-init: {} trigger programs did not load together: {e}",
                        progs.len()
                    );
                }
                return None;
            }
        };
        let slots = (|| -> Result<BpfSlots, Failure> { hit_slots!(skel) })().ok()?;
        Some(TriggerObject { skel, slots, progs })
    }

    fn serves(&self, bench: &Bench, stacktrace: bool) -> bool {
        bench
            .programs(stacktrace)
            .iter()
            .all(|p| self.progs.contains(p))
    }
}

/// The trigger object opened, its knob set.
fn open<'obj>(
    storage: &'obj mut MaybeUninit<OpenObject>,
    opts: &RunOptions,
) -> Result<OpenTriggerSkel<'obj>, libbpf_rs::Error> {
    let mut open = TriggerSkelBuilder::default().open(storage)?;
    if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
        ro.batch_iters = opts.batch_iters;
    }
    Ok(open)
}

pub fn run(ctx: &Ctx, loaded: Option<&TriggerObject>) -> Result<Measured, Failure> {
    let bench = ctx.bench();
    let offset = match bench.trigger {
        Trigger::Call(target) if bench.prog.is_some() => {
            let addr = utarget::function(target) as usize;
            Some(utarget::file_offset(addr).map_err(Failure::Failed)?)
        }
        _ => None,
    };
    if let Some(l) = loaded.filter(|l| l.serves(bench, ctx.opts.stacktrace)) {
        return ctx.attach_and_measure(l.skel.object(), offset, l.slots);
    }
    let mut obj = MaybeUninit::uninit();
    let open = open(&mut obj, ctx.opts).map_err(open_failed)?;
    ctx.load_and_measure(open, offset, |skel| hit_slots!(skel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{self, Sweep};

    /// Every program the shared load names is one of the object's, so
    /// that it serves every trigger benchmark, the stack twins too.
    #[test]
    fn the_shared_load_names_the_objects_programs() {
        for b in registry::all().filter(|b| b.family.runner == Runner::Trigger) {
            assert_eq!(b.family.sweep, Sweep::None);
            for stacktrace in [false, true] {
                for p in b.programs(stacktrace) {
                    assert!(
                        registry::section_of(b.family, p).is_some(),
                        "{}: {p}",
                        b.name
                    );
                }
            }
        }
        let kernel_count = registry::find("trig-kernel-count").unwrap();
        assert_eq!(kernel_count.programs(false), ["trig_kernel_count"]);
        let all = registry::find("trig-kprobe-multi-all").unwrap();
        assert_eq!(
            all.programs(true),
            [
                "trig_batch_kprobe_multi_stack",
                "trig_kprobe_multi_empty",
                "trig_driver"
            ]
        );
    }
}
