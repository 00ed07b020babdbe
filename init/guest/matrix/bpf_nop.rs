//! An empty loop's iteration (bpf/bpf_nop.bpf.c), run as upstream's
//! bench_bpf_nop.c runs it: each producer test-runs the program, which
//! loops `batch_iters` times and times the loop. `bench` calibrates the
//! batch to about 10 ms a run, as upstream's bpf_bench_calibrate(); the
//! matrix, where `--nr-loops` does not say, makes runs of 10,000.

use super::{mapped, open_failed, test_run, Ctx};
use crate::bpf::{skel::bpf_nop::BpfNopSkelBuilder, Failure};
use crate::caps::Feature;
use crate::options::RunOptions;
use crate::registry::running_version;
use crate::sampler::{self, Body, Measured, Progress};
use libbpf_rs::skel::{Skel, SkelBuilder};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;
use trig_schema::Figures;

/// The matrix's iterations a run: about 5 * 10^4 instructions, a few
/// hundred runs a sample.
const MATRIX_ITERS: u32 = 10_000;

/// Upstream's calibration: a seed batch run five times, the median's
/// rate scaled to 10 ms a run, within 100 to 10^7 iterations.
const SEED_ITERS: u32 = 100;
const CALIBRATION_RUNS: usize = 5;
const TARGET_NS: u64 = 10_000_000;
const MIN_ITERS: u64 = 100;
const MAX_ITERS: u64 = 10_000_000;

/// Iterations a run where nothing is calibrated: `--nr-loops`, or the
/// matrix's.
pub fn per_run(opts: &RunOptions) -> u64 {
    u64::from(opts.nr_loops.unwrap_or(MATRIX_ITERS))
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    if running_version().is_ok_and(|v| v < (6, 9)) {
        return Err(Failure::Unsupported(format!(
            "needs {}",
            Feature::MayGoto.needs()
        )));
    }
    let mut obj = MaybeUninit::uninit();
    let open = BpfNopSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let progs = ctx.bench().programs(ctx.opts.stacktrace);
    let mut skel = crate::bpf::load(open, &progs, ctx.bench(), ctx.caps)?;
    let fd = crate::bpf::program(skel.object(), "bench_nop")?
        .as_fd()
        .as_raw_fd();
    let ran = |e: std::io::Error| Failure::Failed(format!("BPF_PROG_TEST_RUN of bench_nop: {e}"));
    let iters = match (ctx.opts.nr_loops, ctx.progress) {
        (None, Progress::Upstream { .. }) => calibrate(&mut skel, fd).map_err(ran)?,
        _ => per_run(ctx.opts),
    };
    let bss = mapped(skel.maps.bss_data.as_deref_mut(), ".bss")?;
    bss.batch_iters = iters as u32;
    bss.times.iter_mut().for_each(|t| t.runs = 0);
    // SAFETY: `counter` starts with its u64; the skeleton outlives the
    // measurement.
    let slots = unsafe { sampler::counters::BpfSlots::new(&mut bss.hits) };
    let body: Body = Arc::new(move |count, stop| {
        sampler::produce(count, stop, 1, iters, || {
            let _ = test_run(fd);
        })
    });
    let mut measured = ctx.measure(Some(slots), body);
    let bss = mapped(skel.maps.bss_data.as_deref(), ".bss")?;
    let rings = bss.times.iter().map(|t| (&t.ns[..], t.runs));
    let runs = super::ring_runs(rings, ctx.opts.clock());
    measured.figures = Figures::timed(runs, iters);
    measured.extra = vec![("batch_iters".into(), iters.to_string())];
    Ok(measured)
}

/// Upstream's batch: the seed's median run over its iterations, scaled
/// to 10 ms a run.
fn calibrate(skel: &mut crate::bpf::skel::bpf_nop::BpfNopSkel, fd: i32) -> std::io::Result<u64> {
    let bss = skel.maps.bss_data.as_deref_mut().expect("a .bss");
    bss.batch_iters = SEED_ITERS;
    bss.times.iter_mut().for_each(|t| t.runs = 0);
    for _ in 0..CALIBRATION_RUNS {
        test_run(fd)?;
    }
    let mut seed: Vec<u64> = bss
        .times
        .iter()
        .flat_map(|t| t.ns.iter().take(t.runs.min(t.ns.len() as u64) as usize))
        .copied()
        .collect();
    seed.sort_unstable();
    let per_op = seed.get(seed.len() / 2).copied().unwrap_or(0) / u64::from(SEED_ITERS);
    Ok(match per_op {
        0 => MIN_ITERS,
        ns => (TARGET_NS / ns).clamp(MIN_ITERS, MAX_ITERS),
    })
}
