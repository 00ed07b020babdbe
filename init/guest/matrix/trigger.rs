//! The trigger matrix: syscall-driven, batched in-kernel and uprobe
//! benchmarks, all from bpf/trigger.bpf.c.

use super::{hit_slots, open_failed, utarget, Ctx};
use crate::bpf::{skel::trigger::TriggerSkelBuilder, Failure};
use crate::registry::{Attach, Trigger};
use crate::sampler::Measured;
use libbpf_rs::skel::SkelBuilder;
use std::mem::MaybeUninit;

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let bench = ctx.bench();
    let mut obj = MaybeUninit::uninit();
    let mut open = TriggerSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
        ro.batch_iters = ctx.opts.batch_iters;
    }
    let mut others = Vec::new();
    if let Attach::AlsoEverywhere { empty } = bench.attach {
        others.push(empty);
    }
    let mut offset = None;
    match bench.trigger {
        Trigger::TestRun(driver) => others.push(driver),
        Trigger::Call(target) if bench.prog.is_some() => {
            let addr = utarget::function(target) as usize;
            offset = Some(utarget::file_offset(addr).map_err(Failure::Failed)?);
        }
        _ => {}
    }
    ctx.load_and_measure(open, &others, offset, |skel| hit_slots!(skel))
}
