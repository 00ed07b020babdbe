//! The matrices: running each point of the selection (registry::points)
//! with its family's runner, and the figures derived from a measurement.

pub mod bpf_nop;
pub mod count;
pub mod everywhere;
pub mod loops;
pub mod maps;
pub mod rename;
pub mod strncmp;
pub mod syscall_loop;
pub mod trigger;
pub mod utarget;

use crate::bpf::{Failure, Targets};
use crate::options::RunOptions;
use crate::registry::{Attach, Bench, Producers, Reporter, RunPoint, Runner, Trigger, Version};
use crate::sampler::{self, counters::BpfSlots, Body, Gauge, Measured, Progress, Sampling};
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::{MapCore, MapFlags, Object};
use maps::{bloom, hashmap, htab_mem, local_storage, lpm_trie};
use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use trig_schema::stats;
use trig_schema::{BenchResult, Capability, Figures, HitCheck, Status, Summary};

/// BPF's hit slots in a loaded skeleton's .bss (`hits` of bpf/common.h).
macro_rules! hit_slots {
    ($skel:expr) => {{
        let bss = crate::matrix::mapped($skel.maps.bss_data.as_deref_mut(), ".bss")?;
        // SAFETY: `counter` starts with its u64; the skeleton outlives the
        // measurement.
        Ok(unsafe { crate::sampler::counters::BpfSlots::new(&mut bss.hits) })
    }};
}
pub(crate) use hit_slots;

/// A section of a skeleton's object mapped for user space, which every
/// object of bpf/ has where a runner asks for it.
pub fn mapped<T>(data: Option<T>, section: &str) -> Result<T, Failure> {
    data.ok_or_else(|| Failure::Failed(format!("BPF object has no {section} mapping")))
}

/// Puts `count` keys and their values (each key and each value of one
/// size) into `map`: in one batch, or one at a time where the kernel
/// refuses batches for the map. The error names the element that failed
/// (the first, for a failed one at a time).
pub fn update_all<M: MapCore>(
    map: &M,
    keys: &[u8],
    values: &[u8],
    count: u32,
) -> Result<(), (usize, libbpf_rs::Error)> {
    if count == 0
        || map
            .update_batch(keys, values, count, MapFlags::ANY, MapFlags::ANY)
            .is_ok()
    {
        return Ok(());
    }
    let (key_size, value_size) = (keys.len() / count as usize, values.len() / count as usize);
    let pairs = keys.chunks(key_size).zip(values.chunks(value_size));
    for (i, (key, value)) in pairs.enumerate() {
        map.update(key, value, MapFlags::ANY).map_err(|e| (i, e))?;
    }
    Ok(())
}

/// Opening a skeleton fails only if the embedded object is broken.
pub fn open_failed(e: libbpf_rs::Error) -> Failure {
    Failure::Failed(format!("open BPF object: {e:#}"))
}

/// What a matrix runner needs to run one point.
pub struct Ctx<'a> {
    pub point: &'a RunPoint,
    pub opts: &'a RunOptions,
    pub caps: &'a BTreeMap<String, Capability>,
    pub progress: &'a Progress,
    /// What is loaded once a run for the points it serves.
    pub loaded: &'a Loaded,
}

/// What is loaded once a run and serves several points: the trigger
/// object (its family is two thirds of the matrix, and its load the most
/// costly, [`trigger::TriggerObject`]).
#[derive(Default)]
pub struct Loaded {
    trigger: Option<trigger::TriggerObject>,
}

impl Loaded {
    pub fn load(
        points: &[RunPoint],
        opts: &RunOptions,
        caps: &BTreeMap<String, Capability>,
    ) -> Loaded {
        Loaded {
            trigger: trigger::TriggerObject::load(points, opts, caps),
        }
    }
}

impl Ctx<'_> {
    pub fn bench(&self) -> &'static Bench {
        self.point.bench
    }

    /// Measures with the producers of the benchmark's trigger.
    pub fn measure(&self, bpf: Option<BpfSlots>, body: Body) -> Measured {
        self.measure_gauged(bpf, body, None)
    }

    /// Measures, reading `gauge` with every sample.
    pub fn measure_gauged(
        &self,
        bpf: Option<BpfSlots>,
        body: Body,
        gauge: Option<Gauge>,
    ) -> Measured {
        let on_main = self.bench().family.producers == Producers::One && self.opts.rename_on_main;
        let cpus = guest_cpus();
        let plan = Sampling {
            warmup: self.opts.warmup,
            duration: self.opts.duration,
            producers: self.point.producers,
            pins: (0..self.point.producers)
                .filter_map(|i| self.opts.producer_cpu(i, cpus))
                .collect(),
            on_main,
            count_bpf: self.bench().counts_in_bpf(),
            progress: self.progress.clone(),
            profile: self.opts.profile,
            shares_cpu: cpus == 1,
            min_counts: self.opts.min_counts,
            grain: self.grain(),
            batch: self.batch(),
            clock: self.opts.clock(),
            gauge,
            // a trie's free comes after its producer closed it
            settle: match self.bench().trigger {
                Trigger::MapFree => Duration::from_secs(5),
                _ => Duration::ZERO,
            },
        };
        sampler::measure(&plan, bpf, body)
    }

    /// Events one update of the benchmark's count adds: BPF counts each
    /// event, but a BPF_PROG_TEST_RUN's iterations run in one system
    /// call; the producers count a batch at a time.
    fn grain(&self) -> u64 {
        let iters = u64::from(self.opts.batch_iters);
        match (self.bench().counts_in_bpf(), self.bench().trigger) {
            (_, Trigger::TestRun(_)) => iters,
            (_, Trigger::Packet(_)) => lpm_trie::per_run(self.opts),
            (_, Trigger::Run(_)) => bpf_nop::per_run(self.opts),
            (_, Trigger::MapFree) => 1,
            // an iteration's count is added once a loop call
            (true, _) if self.bench().family.runner == Runner::Loop => {
                u64::from(loops::loops(self.bench(), self.opts.nr_loops))
            }
            (true, _) if self.bench().family.runner == Runner::Hashmap => {
                hashmap::grain(self.bench(), self.opts)
            }
            // the gets of a getpgid() are added at once
            (true, _) if self.bench().family.runner == Runner::LocalStorage => self.per_syscall(),
            (true, _) if self.bench().family.runner == Runner::HtabMem => self.per_syscall(),
            (true, _) => 1,
            (false, _) => self.batch(),
        }
    }

    /// Events a producer adds to its own count at once (a batch of
    /// calls), which a stopped producer finishes first.
    fn batch(&self) -> u64 {
        match self.bench().trigger {
            Trigger::Getpgid => self.getpgid_batch() * self.per_syscall(),
            Trigger::TestRun(_) => u64::from(self.opts.batch_iters),
            Trigger::Packet(_) => lpm_trie::per_run(self.opts),
            Trigger::Run(_) => bpf_nop::per_run(self.opts),
            Trigger::MapFree => 1,
            Trigger::Call(_) => CALL_BATCH,
            Trigger::Rename => rename::BATCH,
            Trigger::Count { shared: true } => count::BATCH,
            Trigger::Count { shared: false } => 1,
        }
    }

    /// Events a getpgid() makes: one, but a loop benchmark's program
    /// counts every iteration of its calls, and a Bloom filter's every
    /// operation.
    fn per_syscall(&self) -> u64 {
        match self.bench().family.runner {
            Runner::Loop => loops::per_syscall(loops::loops(self.bench(), self.opts.nr_loops)),
            Runner::Bloom => bloom::per_syscall(self.bench(), self.opts),
            Runner::Hashmap => hashmap::per_syscall(self.bench(), self.opts),
            Runner::LocalStorage => local_storage::per_syscall(self.bench(), self.opts).0,
            Runner::HtabMem => htab_mem::per_syscall(self.opts),
            _ => 1,
        }
    }

    /// The program under test: its stack-walking twin under
    /// `--stacktrace`.
    pub fn program(&self) -> Option<&'static str> {
        self.bench().program(self.opts.stacktrace)
    }

    /// Loads the benchmark's programs from `open` and measures with the hit
    /// slots that `slots` finds in the loaded skeleton.
    pub fn load_and_measure<'o, S: OpenSkel<'o>>(
        &self,
        open: S,
        uprobe_offset: Option<usize>,
        slots: impl FnOnce(&mut S::Output) -> Result<BpfSlots, Failure>,
    ) -> Result<Measured, Failure> {
        let progs = self.bench().programs(self.opts.stacktrace);
        let mut skel = crate::bpf::load(open, &progs, self.bench(), self.caps)?;
        let slots = slots(&mut skel)?;
        self.attach_and_measure(skel.object(), uprobe_offset, slots)
    }

    /// Attaches what the benchmark attaches in the loaded `obj` (the
    /// program runs only by test runs), and measures with its hit `slots`
    /// and the producers `body` that the family's runner made.
    pub fn attach_and_measure_with(
        &self,
        obj: &Object,
        slots: BpfSlots,
        body: Body,
    ) -> Result<Measured, Failure> {
        let targets = Targets {
            uprobe_offset: None,
            everywhere: &[],
        };
        let _links = crate::bpf::attach(obj, self.bench(), self.program(), targets, self.caps)?;
        Ok(self.measure(Some(slots), body))
    }

    /// Attaches the program under test in the loaded `obj`, measures with
    /// its hit `slots`, and detaches.
    pub fn attach_and_measure(
        &self,
        obj: &Object,
        uprobe_offset: Option<usize>,
        slots: BpfSlots,
    ) -> Result<Measured, Failure> {
        let bench = self.bench();
        let targets = Targets {
            uprobe_offset,
            everywhere: match bench.attach {
                Attach::AlsoEverywhere { .. } => {
                    everywhere::functions().map_err(|why| Failure::Failed(why.into()))?
                }
                _ => &[],
            },
        };
        let _links = crate::bpf::attach(obj, bench, self.program(), targets, self.caps)?;
        let body = self.producer(Some(obj))?;
        Ok(self.measure(bench.counts_in_bpf().then_some(slots), body))
    }

    /// Producers that loop getpgid(), counting a batch of calls at a time:
    /// a loop benchmark's getpgid() is 1000 loop calls, so one a batch,
    /// and a stop waits for one call, not 64 (at --nr_loops 10000, 64 took
    /// 7 s here, past the stop's grace).
    fn getpgid_producer(&self, spins: u32) -> Body {
        let (batch, per_call) = (self.getpgid_batch(), self.batch());
        Arc::new(move |count, stop| {
            sampler::produce(count, stop, 1, per_call, || {
                syscall_loop::getpgid_loop(batch, spins)
            })
        })
    }

    /// getpgid() calls a producer makes between updates of its count.
    fn getpgid_batch(&self) -> u64 {
        match self.per_syscall() {
            1 => GETPGID_BATCH,
            _ => 1,
        }
    }

    /// The producer body of the benchmark's trigger, for programs in `obj`
    /// (a test_run driver needs its object), slowed down by the injected
    /// spin when this is the injected benchmark.
    pub fn producer(&self, obj: Option<&Object>) -> Result<Body, Failure> {
        let spins = self.opts.spins(self.bench().name);
        Ok(match self.bench().trigger {
            Trigger::Getpgid => self.getpgid_producer(spins),
            Trigger::TestRun(driver) => {
                let obj = obj.ok_or_else(|| {
                    Failure::Failed(format!("test_run of {driver}: no BPF object loaded"))
                })?;
                let fd = crate::bpf::program(obj, driver)?.as_fd().as_raw_fd();
                // one call up front: a driver that cannot run fails here,
                // not silently in every producer
                test_run(fd).map_err(|e| {
                    Failure::Unsupported(format!(
                        "BPF_PROG_TEST_RUN of {driver}: {e}; needs test_run of raw_tp (5.10+)"
                    ))
                })?;
                let iters = u64::from(self.opts.batch_iters);
                Arc::new(move |count, stop| {
                    sampler::produce(count, stop, 1, iters, || {
                        sampler::spin(spins);
                        let _ = test_run(fd);
                    })
                })
            }
            Trigger::Call(target) => {
                let f = utarget::function(target);
                if spins == 0 {
                    // the assembly count-down loop: call, target, dec, jnz
                    Arc::new(move |count, stop| {
                        sampler::produce(count, stop, 1, CALL_BATCH, || {
                            utarget::call_loop(f, CALL_BATCH)
                        })
                    })
                } else {
                    // injected: a spin before every call (and the compiled
                    // loop's one more instruction per call)
                    Arc::new(move |count, stop| {
                        sampler::produce(count, stop, CALL_BATCH, 1, || {
                            sampler::spin(spins);
                            f()
                        })
                    })
                }
            }
            Trigger::Rename => return rename::producer(spins),
            Trigger::Count { shared } => count::producer(shared, spins),
            Trigger::Packet(_) | Trigger::Run(_) | Trigger::MapFree => {
                return Err(Failure::Failed(format!(
                    "{}: its family's runner makes the producers",
                    self.bench().trigger.describe()
                )))
            }
        })
    }
}

/// Each CPU's ring of the program's last timed runs (`ns`, and the runs
/// it made in all) as timed runs, oldest first, in the meter's ns (the
/// guest's less the shift's stretch): the hash maps' and bpf-nop's.
pub fn ring_runs<'a>(
    rings: impl Iterator<Item = (&'a [u64], u64)>,
    clock: crate::clock::Clock,
) -> Vec<trig_schema::TimedRuns> {
    rings
        .take(guest_cpus())
        .enumerate()
        .filter_map(|(cpu, (ring, runs))| {
            let kept = runs.min(ring.len() as u64) as usize;
            let ns: Vec<u64> = (0..kept)
                .map(|k| ring[(runs as usize - kept + k) % ring.len()])
                .map(|ns| (clock.meter(Duration::from_nanos(ns)) * 1e9).round() as u64)
                .collect();
            (!ns.is_empty()).then_some(trig_schema::TimedRuns { cpu, ns })
        })
        .collect()
}

/// The running kernel's version, asked once.
fn running_version() -> Option<Version> {
    static VERSION: OnceLock<Option<Version>> = OnceLock::new();
    *VERSION.get_or_init(|| crate::registry::running_version().ok())
}

/// Calls of a uprobe target between two updates of the producer's count.
const CALL_BATCH: u64 = 1024;

/// getpgid() calls between two updates of the producer's count.
pub const GETPGID_BATCH: u64 = 64;

/// One BPF_PROG_TEST_RUN of the program behind `fd`; the fd stays owned by
/// the loaded object, which outlives the measurement.
fn test_run(fd: i32) -> std::io::Result<()> {
    use libbpf_rs::libbpf_sys;
    // SAFETY: zeroed opts with their size set is the documented empty input.
    let mut opts: libbpf_sys::bpf_test_run_opts = unsafe { std::mem::zeroed() };
    opts.sz = std::mem::size_of::<libbpf_sys::bpf_test_run_opts>() as _;
    let rc = unsafe { libbpf_sys::bpf_prog_test_run_opts(fd, &mut opts) };
    if rc < 0 {
        Err(std::io::Error::from_raw_os_error(-rc))
    } else {
        Ok(())
    }
}

/// A point's result before it runs: its name and parameters, and what a
/// reader needs to place its figures.
pub fn new_result(point: &RunPoint, opts: &RunOptions) -> BenchResult {
    let bench = point.bench;
    let mut result = bench.result(&point.name, point.producers);
    if let Some(len) = point.str_len {
        result.extra.insert("cmp_str_len".into(), len.to_string());
    }
    // what upstream's bench of this kernel calls it, to map figures quoted
    // from it to ours
    if let Some(up) = running_version().and_then(|v| bench.upstream_name(v)) {
        result.extra.insert("upstream".into(), up.into());
    }
    // how many functions the -all benchmarks probe besides the attach point
    if let Attach::AlsoEverywhere { .. } = bench.attach {
        if let Ok(functions) = everywhere::functions() {
            result
                .extra
                .insert("probed_functions".into(), functions.len().to_string());
        }
    }
    match bench.family.runner {
        Runner::Loop => {
            let n = loops::loops(bench, opts.nr_loops);
            result.extra.insert("nr_loops".into(), n.to_string());
        }
        Runner::Bloom => result.extra.extend(bloom::Knobs::of(opts).extra()),
        Runner::Hashmap => result.extra.extend(hashmap::extra(bench, opts)),
        Runner::LocalStorage => result
            .extra
            .extend(local_storage::Gets::of(bench, opts).extra()),
        Runner::LpmTrie => result.extra.extend(lpm_trie::Trie::of(opts).extra()),
        Runner::HtabMem => result.extra.extend(htab_mem::Churn::of(opts).extra()),
        _ => {}
    }
    // which results the knob changed: the programs with a twin
    if opts.stacktrace && bench.program(true) != bench.program(false) {
        result
            .extra
            .insert("stacktrace".into(), "bpf_get_stack".into());
    }
    if bench.family.producers == Producers::One {
        result
            .extra
            .insert("rename_thread".into(), opts.rename_thread().into());
    }
    let cpus = guest_cpus();
    if point.producers > cpus {
        result.extra.insert(
            "oversubscribed".into(),
            format!("{} producers on {cpus} CPUs", point.producers),
        );
    }
    result
}

/// Opens the family's BPF object, sets its knobs, and measures one point.
fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    match ctx.bench().family.runner {
        Runner::Trigger => trigger::run(ctx, ctx.loaded.trigger.as_ref()),
        Runner::Rename => rename::run(ctx),
        Runner::Strncmp => strncmp::run(ctx),
        // nothing to load: the producers count
        Runner::Count => Ok(ctx.measure(None, ctx.producer(None)?)),
        Runner::Loop => loops::run(ctx),
        Runner::Bloom => bloom::run(ctx),
        Runner::Hashmap => hashmap::run(ctx),
        Runner::LocalStorage => local_storage::run(ctx),
        Runner::LpmTrie => lpm_trie::run(ctx),
        Runner::HtabMem => htab_mem::run(ctx),
        Runner::Nop => bpf_nop::run(ctx),
    }
}

/// How long the kernel gets to free a map family's maps (a trie of
/// 10,000 nodes, 1000-entry hash maps) before the next benchmark: freed
/// in a worker, they ran inside its window instead (the LPM trie's
/// update spread 0.9% after insert, 0.15% after lookup).
const SETTLE_S: f64 = 0.02;

/// Gives the kernel's deferred frees of the maps that the point's runner
/// dropped a moment to run, outside every window.
fn settle(ctx: &Ctx) {
    let maps = matches!(
        ctx.bench().family.runner,
        Runner::Bloom | Runner::Hashmap | Runner::LocalStorage | Runner::LpmTrie | Runner::HtabMem
    );
    if maps {
        std::thread::sleep(ctx.opts.clock().guest(SETTLE_S));
    }
}

/// Runs the family's measurement; a failure or a panic becomes the status
/// and reason of the result.
fn measure_point(ctx: &Ctx) -> Result<Measured, (Status, String)> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        producers_allowed(ctx).and_then(|()| run(ctx))
    }));
    settle(ctx);
    match outcome {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(Failure::Unsupported(why))) => Err((Status::Unsupported, why)),
        Ok(Err(Failure::Failed(why))) => Err((Status::Failed, why)),
        Err(panic) => Err((
            Status::Failed,
            format!("panicked: {}", panic_message(&*panic)),
        )),
    }
}

/// A family's figures that its samples give: a filter's false positives,
/// the rate of local storage's important hits.
fn own_figures(bench: &Bench, samples: &[trig_schema::Sample]) -> Option<Figures> {
    let measured = samples.iter().filter(|s| !s.warmup);
    match bench.reporter {
        Reporter::FalseHits => {
            let (events, false_hits) =
                measured.fold((0, 0), |(e, f), s| (e + s.bpf, f + s.false_hits));
            Figures::filter(events, false_hits)
        }
        Reporter::LocalStorage => {
            let important: Vec<f64> = measured.map(|s| s.important_mps()).collect();
            Some(Figures::important(stats::summarize(&important).mean))
        }
        _ => None,
    }
}

/// Fills the result from a measurement: the summary of the measured
/// samples, the BPF/user hit check, and a failure when the figures cannot
/// be trusted.
fn record(result: &mut BenchResult, measured: Measured, point: &RunPoint) {
    // where upstream's figure is what the program timed (the LPM trie's
    // insert and delete, whose runs leave user space the trie to reset),
    // so is the result's rate
    let rate = match point.bench.reporter {
        Reporter::TimedOps | Reporter::TimedFrees => trig_schema::Sample::timed_mps,
        _ => |s: &trig_schema::Sample| s.mps,
    };
    let rates: Vec<f64> = measured
        .samples
        .iter()
        .filter(|s| !s.warmup)
        .map(rate)
        .collect();
    let s = stats::summarize(&rates);
    let mean = s.mean;
    result.summary = Some(Summary {
        mean,
        stddev: s.stddev,
        per_producer: mean / point.producers as f64,
        cv: s.cv,
        samples: s.n,
    });
    if point.bench.counts_in_bpf() {
        let (b, u) = (measured.total_bpf, measured.total_user);
        result.hits = Some(HitCheck {
            bpf: b,
            user: u,
            agree: u > 0 && b.abs_diff(u) * 100 <= u,
        });
    }
    result.figures = own_figures(point.bench, &measured.samples).or(measured.figures);
    result.extra.extend(measured.extra);
    result.samples = measured.samples;
    result.window = measured.window;
    if point.producers > 1 {
        result.producer_events = measured.producer_events;
        result.producer_cpus = measured.producer_cpus;
    }
    verdict(result, measured.hung);
}

/// A failure where the figures cannot be trusted: producers that did not
/// stop, nothing counted, or BPF's count against the producers'.
fn verdict(result: &mut BenchResult, hung: bool) {
    let mean = result.summary.as_ref().map_or(0.0, |s| s.mean);
    if hung {
        result.status = Status::Timeout;
        result.reason = Some("producers did not stop; abandoned".into());
    } else if mean == 0.0 {
        result.status = Status::Failed;
        result.reason = Some("no events were counted".into());
    } else if result.hits.as_ref().is_some_and(|h| !h.agree) {
        let h = result.hits.as_ref().expect("checked above");
        result.status = Status::Failed;
        // a program counts every process's events: more than ours were
        // someone else's
        let why = if h.bpf > h.user {
            " (another process hit the same attach point: a second run at once?)"
        } else {
            ""
        };
        result.reason = Some(format!(
            "BPF counted {} events but producers triggered {}{why}",
            h.bpf, h.user
        ));
    }
}

/// Runs one point and turns whatever happens into a result.
pub fn run_point(
    point: &RunPoint,
    opts: &RunOptions,
    caps: &BTreeMap<String, Capability>,
    progress: &Progress,
    loaded: &Loaded,
) -> BenchResult {
    let mut result = new_result(point, opts);
    let ctx = Ctx {
        point,
        opts,
        caps,
        progress,
        loaded,
    };
    match measure_point(&ctx) {
        Ok(measured) => record(&mut result, measured, point),
        Err((status, why)) => {
            result.status = status;
            result.reason = Some(why);
        }
    }
    result
}

/// The CPUs this runs on.
fn guest_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The family's producer rule: a one-producer family fails at any other
/// count, as upstream's bench refuses it; and `--prod-affinity` may name
/// only CPUs there are (a producer pinned nowhere would measure unpinned).
fn producers_allowed(ctx: &Ctx) -> Result<(), Failure> {
    let cpus = guest_cpus();
    if let Some(cpu) = ctx.opts.prod_affinity.iter().find(|&&c| c >= cpus) {
        return Err(Failure::Failed(format!(
            "prod_affinity names CPU {cpu}, but this machine has CPUs 0-{} only",
            cpus - 1
        )));
    }
    let family = ctx.bench().family;
    if family.producers == Producers::One && ctx.point.producers != 1 {
        // unsupported at that -p, not failed: the kernel is not at fault
        return Err(Failure::Unsupported(format!(
            "needs exactly one producer: {} benchmarks run with one, as upstream's (got {})",
            family.name, ctx.point.producers
        )));
    }
    Ok(())
}

pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::registry::find;

    /// An ok result of `bench` at `mean` M/s.
    pub(crate) fn ok(name: &str, bench: &str, mean: f64) -> BenchResult {
        BenchResult {
            summary: Some(Summary {
                mean,
                stddev: 0.0,
                per_producer: mean,
                cv: 0.0,
                samples: 1,
            }),
            ..find(bench).expect("a benchmark").result(name, 1)
        }
    }

    #[test]
    fn overhead_against_baseline_at_same_parameters() {
        let mut rs = vec![
            ok("trig-base", "trig-base", 4.0),
            ok("trig-kprobe", "trig-kprobe", 2.0),
            ok("strncmp-baseline/len=8", "strncmp-baseline", 5.0),
            ok("strncmp-helper/len=8", "strncmp-helper", 4.0),
            ok("strncmp-helper/len=64", "strncmp-helper", 3.0),
        ];
        trig_schema::add_overheads(&mut rs);
        // 1000/2 - 1000/4 = 250 ns
        assert_eq!(rs[1].overhead_ns.as_ref().unwrap().ns_per_event, 250.0);
        assert_eq!(rs[3].overhead_ns.as_ref().unwrap().ns_per_event, 50.0);
        assert!(rs[4].overhead_ns.is_none(), "no baseline at len=64");
        assert!(rs[0].overhead_ns.is_none());
    }
}
