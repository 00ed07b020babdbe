//! Loops with an empty body (bpf/loops.bpf.c): `--nr_loops` iterations a
//! call, [`CALLS`] calls a getpgid(), every iteration an event.

use super::{hit_slots, open_failed, Ctx};
use crate::bpf::{skel::loops::LoopsSkelBuilder, Failure};
use crate::registry::Bench;
use crate::sampler::Measured;
use libbpf_rs::skel::SkelBuilder;
use std::mem::MaybeUninit;

/// Loop calls a program run makes (LOOP_CALLS of bpf/loops.bpf.c).
pub const CALLS: u64 = 1000;

/// The iterations a call of `bench` where `--nr_loops` does not say:
/// upstream's defaults, bpf-for's large so that the iterator's next()
/// outweighs the call around it.
fn default_loops(bench: &Bench) -> u32 {
    match bench.name {
        "bpf-for" => 1000,
        _ => 10,
    }
}

/// The iterations a call of `bench` under `nr_loops` (`--nr_loops`).
pub fn loops(bench: &Bench, nr_loops: Option<u32>) -> u32 {
    nr_loops.unwrap_or_else(|| default_loops(bench))
}

/// Events one getpgid() makes at `loops` iterations a call.
pub fn per_syscall(loops: u32) -> u64 {
    CALLS * u64::from(loops)
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let mut obj = MaybeUninit::uninit();
    let open = LoopsSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let n = loops(ctx.bench(), ctx.opts.nr_loops);
    // into the loaded object's .bss, where the verifier did not see it
    ctx.load_and_measure(open, None, |skel| {
        if let Some(bss) = skel.maps.bss_data.as_deref_mut() {
            bss.nr_loops = n;
        }
        hit_slots!(skel)
    })
}
