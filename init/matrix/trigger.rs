//! The trigger matrix: syscall-driven, batched in-kernel and uprobe
//! benchmarks, all from bpf/trigger.bpf.c.

use super::{utarget, Ctx};
use crate::bpf::{self, skel::trigger::TriggerSkelBuilder, Failure};
use crate::engine::{counters::BpfSlots, Measured};
use crate::registry::Trigger;
use libbpf_rs::skel::{Skel, SkelBuilder};
use std::mem::MaybeUninit;

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let bench = ctx.bench();
    let mut obj = MaybeUninit::uninit();
    let mut open = TriggerSkelBuilder::default()
        .open(&mut obj)
        .map_err(|e| Failure::Failed(format!("open BPF object: {e:#}")))?;
    if let Some(ro) = open.maps.rodata_data.as_deref_mut() {
        ro.batch_iters = ctx.opts.batch_iters;
    }
    let mut progs: Vec<&str> = bench.prog.into_iter().collect();
    let mut offset = None;
    match bench.trigger {
        Trigger::TestRun(driver) => progs.push(driver),
        Trigger::Call(target) if bench.prog.is_some() => {
            let addr = utarget::function(target) as usize;
            offset = Some(utarget::file_offset(addr).map_err(Failure::Failed)?);
        }
        _ => {}
    }
    let mut skel = bpf::load(open, &progs, bench, ctx.caps)?;
    let _link = bpf::attach(skel.object(), bench, offset, ctx.caps)?;
    let body = ctx.producer(skel.object())?;
    let bss = skel
        .maps
        .bss_data
        .as_deref_mut()
        .ok_or_else(|| Failure::Failed("BPF object has no .bss mapping".into()))?;
    // SAFETY: `counter` starts with its u64; `skel` outlives the measurement.
    let slots = unsafe { BpfSlots::new(&mut bss.hits) };
    Ok(ctx.measure(bench.counts_in_bpf().then_some(slots), body))
}
