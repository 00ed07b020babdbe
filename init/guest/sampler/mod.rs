//! The benchmark sampler: producer threads, one read-and-reset of the
//! counters per second, warm-up marking, and the totals for the hit check.

pub mod counters;

use crate::clock::Clock;
use crate::options::MAX_STRETCH;
use crate::registry::Reporter;
use crate::upstream;
use counters::{BpfSlots, UserSlots};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};
use trig_model::marker;
use trig_schema::Sample;

/// A producer: loops until `stop`, adding the events it triggered to its
/// count now and then (see [`produce`]).
pub type Body = Arc<dyn Fn(&AtomicU64, &AtomicBool) + Send + Sync>;

/// A reading taken with every sample beside the counts (htab-mem's
/// memory cgroup's memory.current, bytes).
pub type Gauge = Arc<dyn Fn() -> u64 + Send + Sync>;

pub struct Sampling {
    /// Seconds of `clock`.
    pub warmup: f64,
    pub duration: f64,
    pub producers: usize,
    /// The CPU each producer is pinned to, by index; none: unpinned.
    pub pins: Vec<usize>,
    /// Run the (single) producer on the calling thread.
    pub on_main: bool,
    /// Whether BPF's counter is the benchmark's count (else the producers').
    pub count_bpf: bool,
    /// What is printed as samples are taken.
    pub progress: Progress,
    /// Mark the measured window for the profiling plugin ([`Window`]).
    pub profile: bool,
    /// The sampler shares the producers' one CPU: the time it runs
    /// itself (waking, reading the counters, going back to sleep) is
    /// taken from them, so it is left out of each sample's rate.
    pub shares_cpu: bool,
    /// Lengthen the measured window to this many updates of the count
    /// ([`window_length`]; 0: `duration` exactly).
    pub min_counts: u32,
    /// Events a count update adds: 1 where BPF counts each event, the
    /// batch where the producers count or a system call runs many.
    pub grain: u64,
    /// Events a producer adds to its own count at once: a stopped
    /// producer finishes such a batch first (a bpf-loop getpgid() of
    /// 1000 loop calls, each counted by BPF as it ends, is one batch).
    pub batch: u64,
    /// What the windows and rates are timed in.
    pub clock: Clock,
    /// Read with each sample, after its counts ([`Sample::memory_bytes`]).
    pub gauge: Option<Gauge>,
    /// How long BPF's count may lag the producers' once they stopped:
    /// an event the kernel completes later (a map's deferred free) is
    /// counted by BPF after the producer counted it.
    pub settle: Duration,
}

/// What the sampler prints as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Nothing: the report carries every sample.
    Silent,
    /// An `Iter` line a sample on stderr, warm-up ones marked (`run -v`).
    Stderr,
    /// As upstream's bench: `Benchmark 'NAME' started.` (unless `quiet`)
    /// and an `Iter` line a sample, on stdout.
    Upstream {
        bench: String,
        quiet: bool,
        report: Reporter,
    },
}

pub struct Measured {
    pub samples: Vec<Sample>,
    /// Totals over the whole run, including what came after the last
    /// sample, for the BPF-versus-user agreement check.
    pub total_bpf: u64,
    pub total_user: u64,
    /// Producers that did not stop in time were abandoned.
    pub hung: bool,
    /// The profiled window that covered the measured samples.
    pub window: Option<u32>,
    /// Each producer's events in the measured samples.
    pub producer_events: Vec<u64>,
    /// The CPU each producer thread ran on when it stopped.
    pub producer_cpus: Vec<usize>,
    /// The family's own figures, which its runner adds (the hash map
    /// benchmarks' timed runs).
    pub figures: Option<trig_schema::Figures>,
    /// What the runner decided as it ran, for the result's `extra`
    /// (bpf-nop's calibrated iterations a run).
    pub extra: Vec<(String, String)>,
}

/// What the sample loop hands back: the samples, the profiled window,
/// and each producer's events in the measured ones.
struct Sampled {
    samples: Vec<Sample>,
    window: Option<u32>,
    producer_events: Vec<u64>,
}

/// How long, in the meter's seconds, stopped producers get to notice
/// before they are abandoned: at least this, and three times what a
/// producer's batch of the count took, up to the longest; the longest
/// where the run counted nothing.
const GRACE_S: f64 = 5.0;
const LONGEST_GRACE_S: f64 = 120.0;

/// The grace of producers measured in `samples`: a batch in flight at the
/// stop ends before it is counted, and a batch can take seconds
/// (run_bench_bpf_loop.sh's `-p 4 --nr_loops 500000`, each getpgid() 5 *
/// 10^8 iterations, 10 s each on 2 cores: abandoned after 5 s, the run
/// was `timeout` and printed no Summary line for the script's sed).
fn grace(plan: &Sampling, samples: &[Sample]) -> f64 {
    let elapsed: f64 = samples.iter().map(|s| s.interval_s).sum();
    let events: u64 = samples.iter().map(|s| s.user).sum();
    let per_producer = events as f64 / plan.producers.max(1) as f64 / elapsed;
    match per_producer {
        r if r > 0.0 && r.is_finite() => {
            (3.0 * plan.batch.max(1) as f64 / r).clamp(GRACE_S, LONGEST_GRACE_S)
        }
        // nothing counted: a batch took the whole run at least, and how
        // much longer nothing says (run_bench_bpf_loop.sh's -p 1 --nr_loops
        // 1000000 under load: three runs' time was too short)
        _ => LONGEST_GRACE_S,
    }
}

/// The producer loop: call `trigger` `inner` times between checks of
/// `stop`, counting `per_call` events per call. Batching keeps the count's
/// atomic add and the flag's load out of the hot path of fast triggers.
pub fn produce(
    count: &AtomicU64,
    stop: &AtomicBool,
    inner: u64,
    per_call: u64,
    mut trigger: impl FnMut(),
) {
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..inner {
            trigger();
        }
        count.fetch_add(inner * per_call, Ordering::Relaxed);
    }
}

/// Busy work that the compiler cannot drop: the injected slowdown.
pub fn spin(iterations: u32) {
    for i in 0..iterations {
        std::hint::black_box(i);
    }
}

/// The rate, in M a second of `clock`, of events `trigger` makes
/// `per_call` a call, called in a loop for `seconds` on this thread with
/// nothing counted but a local: the reference that trig-base's counting
/// overhead is measured against.
pub fn bare_rate(clock: Clock, seconds: f64, per_call: u64, mut trigger: impl FnMut()) -> f64 {
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(clock.guest(seconds));
            stop.store(true, Ordering::Relaxed);
        });
        let start = Instant::now();
        let mut events = 0u64;
        // the same batching as `produce`, minus the shared counter
        while !stop.load(Ordering::Relaxed) {
            trigger();
            events += per_call;
        }
        events as f64 / clock.meter(start.elapsed()) / 1e6
    })
}

fn pin_to(cpu: usize) {
    use nix::sched::{sched_setaffinity, CpuSet};
    let mut set = CpuSet::new();
    if set.set(cpu).is_ok() {
        // best effort: a CPU that went away leaves the thread unpinned
        let _ = sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
    }
}

/// How often counters are read: once a second as upstream does, or, for
/// sub-second runs, four times in the measured window, so that a short run
/// still has a spread to report.
pub fn sample_period(duration: f64) -> f64 {
    if duration >= 1.0 {
        1.0
    } else {
        duration / 4.0
    }
}

/// When each sample ends, in seconds from the start, and whether it is
/// warm-up: whole periods, the last one of each phase cut to its end.
pub fn sample_ends(warmup: f64, duration: f64) -> Vec<(f64, bool)> {
    let mut ends = phase_ends(0.0, warmup, sample_period(duration), true);
    ends.extend(phase_ends(warmup, duration, sample_period(duration), false));
    ends
}

/// The ends of one phase of `len` seconds from `from`, a `period` apart.
fn phase_ends(from: f64, len: f64, period: f64, warm: bool) -> Vec<(f64, bool)> {
    // a sliver under 1% of a period is not worth a sample of its own
    let n = ((len / period) - 0.01).ceil().max(0.0) as usize;
    (1..=n)
        .map(|k| ((from + k as f64 * period).min(from + len), warm))
        .collect()
}

/// The measured window's length: the plan's duration or, with
/// `min_counts`, as long as the warm-up's rate (`warm_counts` updates of
/// the count in `warm_s`) takes to make that many, within one to
/// [`MAX_STRETCH`] durations. An event in progress at either end of the window is not
/// counted, or counted whole: a count made of many of them is moved by
/// one at most. Without a warm-up the duration is taken as it is.
pub fn window_length(plan: &Sampling, warm_counts: f64, warm_s: f64) -> f64 {
    if plan.min_counts == 0 || !(warm_s > 0.0 && warm_s.is_finite()) {
        return plan.duration;
    }
    let longest = MAX_STRETCH * plan.duration;
    if !(warm_counts > 0.0 && warm_counts.is_finite()) {
        return longest;
    }
    (f64::from(plan.min_counts) * warm_s / warm_counts).clamp(plan.duration, longest)
}

/// Windows marked so far in this process; the plugin numbers them alike.
static WINDOWS: AtomicU32 = AtomicU32::new(0);

/// Time the run's watchdog grants on top of its own, in ns: how far late
/// samples moved the schedules of this process, and how long stops waited
/// for producers' batches in flight (a slow run is not a hung one).
static GRANTED_NS: AtomicU64 = AtomicU64::new(0);

/// The time late samples and stops have added to this process's runs so far.
pub fn granted() -> Duration {
    Duration::from_nanos(GRANTED_NS.load(Ordering::Relaxed))
}

fn grant(time: Duration) {
    GRANTED_NS.fetch_add(nanos(time), Ordering::Relaxed);
}

/// Takes back what a grant did not use: the watchdog keeps only the time
/// waited (a whole grace kept after each run would outlast a short
/// `--timeout`).
fn refund(time: Duration) {
    GRANTED_NS.fetch_sub(nanos(time), Ordering::Relaxed);
}

fn nanos(time: Duration) -> u64 {
    u64::try_from(time.as_nanos()).unwrap_or(u64::MAX)
}

/// Executes a window mark (`trig_model::marker`): a no-op unless QEMU runs the
/// plugin, which then counts kernel instructions from START to END.
#[inline(never)]
fn mark(kind: u8) {
    // SAFETY: both encodings are no-ops that touch no memory, register
    // or flag (a NOP with a displacement; a move to the zero register).
    unsafe {
        #[cfg(target_arch = "x86_64")]
        match kind {
            marker::START => {
                std::arch::asm!(".byte 0x0f, 0x1f, 0x80, {k}, 0x69, 0x72, 0x74", k = const marker::START, options(nomem, nostack, preserves_flags))
            }
            _ => {
                std::arch::asm!(".byte 0x0f, 0x1f, 0x80, {k}, 0x69, 0x72, 0x74", k = const marker::END, options(nomem, nostack, preserves_flags))
            }
        }
        #[cfg(target_arch = "aarch64")]
        match kind {
            marker::START => {
                std::arch::asm!(".inst {w}", w = const u32::from_le_bytes(marker::aarch64(marker::START)), options(nomem, nostack, preserves_flags))
            }
            _ => {
                std::arch::asm!(".inst {w}", w = const u32::from_le_bytes(marker::aarch64(marker::END)), options(nomem, nostack, preserves_flags))
            }
        }
    }
}

/// The profiled window: opened when the measured samples start, closed
/// (and numbered) when dropped after the last one.
struct Window(u32);

impl Window {
    fn open() -> Window {
        mark(marker::START);
        Window(WINDOWS.fetch_add(1, Ordering::Relaxed))
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        mark(marker::END);
    }
}

/// The samples taken so far, and where the last one ended.
struct Taken {
    last: Instant,
    /// The sampler's own CPU time at the last sample.
    last_own: Duration,
    /// The time between samples (the clock's, as `start + end` is).
    period: Duration,
    /// How far the schedule has moved: a sample more than half a period
    /// late starts it again from itself, so the samples after it each
    /// still hold a period, not the catching-up's nothing.
    shift: Duration,
    samples: Vec<Sample>,
}

impl Taken {
    /// Sleeps until `end` seconds after `start` (and the shift), then reads
    /// and resets the counts as one sample; returns each producer's events
    /// in it.
    fn take(
        &mut self,
        plan: &Sampling,
        (start, end): (Instant, f64),
        warmup: bool,
        bpf: Option<BpfSlots>,
        user: &UserSlots,
    ) -> Vec<u64> {
        let deadline = start + plan.clock.guest(end) + self.shift;
        if let Some(left) = deadline.checked_duration_since(Instant::now()) {
            thread::sleep(left);
        }
        let (now, own) = (Instant::now(), own_time());
        let memory_bytes = plan.gauge.as_ref().map_or(0, |g| g());
        let late = now.saturating_duration_since(deadline);
        if late > self.period / 2 {
            self.shift += late;
            grant(late);
        }
        let each = user.take_each();
        let (b, u) = (
            bpf.map(|b| b.take()).unwrap_or_default(),
            each.iter().sum::<u64>(),
        );
        let interval = plan.clock.meter(now.duration_since(self.last));
        self.last = now;
        let sampler_s = match plan.shares_cpu {
            true => plan
                .clock
                .meter(own.saturating_sub(self.last_own))
                .min(interval / 2.0),
            false => 0.0,
        };
        self.last_own = own;
        let counted = if plan.count_bpf { b.events } else { u };
        // a zero interval (a clock that did not move) counts nothing
        let mps = match interval - sampler_s {
            t if t > 0.0 => counted as f64 / t / 1e6,
            _ => 0.0,
        };
        let sample = Sample {
            t_s: plan.clock.meter(now.duration_since(start)),
            interval_s: interval,
            sampler_s,
            warmup,
            bpf: b.events,
            user: u,
            mps,
            drops: b.drops,
            false_hits: b.false_hits,
            important_hits: b.important,
            timed_s: plan.clock.meter(Duration::from_nanos(b.timed_ns)),
            memory_bytes,
        };
        let late_us = plan.clock.meter(now.duration_since(deadline)) * 1e6;
        progress(plan, self.samples.len(), late_us, &sample);
        self.samples.push(sample);
        each
    }
}

/// Shows sample `i`, `late_us` late, as the plan's progress says.
fn progress(plan: &Sampling, i: usize, late_us: f64, sample: &Sample) {
    match plan.progress {
        Progress::Silent => {}
        Progress::Upstream { report, .. } => {
            if let Some(line) = upstream::iter(i, late_us, sample, plan.producers, report) {
                let _ = trig_schema::stdoutln!("{line}");
            }
        }
        _ => trig_schema::stderrln!(
            "{}{}",
            upstream::iter_hits(i, late_us, sample.mps, plan.producers),
            if sample.warmup { " (warm-up)" } else { "" }
        ),
    }
}

/// Samples until the last end; `go` holds the producers until both
/// counts are reset. A producer that ran before would leave a batch
/// counted by BPF before the reset and by itself after it (or the other
/// way round), and the totals' agreement check would fail on a count
/// that was never wrong (seen on arm64: BPF 264192 against 261120).
fn sample_loop(plan: &Sampling, bpf: Option<BpfSlots>, user: &UserSlots, go: &Barrier) -> Sampled {
    // start from zero: nothing counted during setup is measured
    if let Some(b) = bpf {
        b.take();
    }
    user.take();
    if let Progress::Upstream {
        bench,
        quiet: false,
        ..
    } = &plan.progress
    {
        let _ = trig_schema::stdoutln!("{}", upstream::started(bench));
    }
    go.wait();
    let start = Instant::now();
    let period = sample_period(plan.duration);
    let mut at = Taken {
        last: start,
        last_own: own_time(),
        period: plan.clock.guest(period),
        shift: Duration::ZERO,
        samples: Vec::new(),
    };
    let mut window = None;
    let mut producer_events = vec![0; plan.producers];
    for (end, _) in phase_ends(0.0, plan.warmup, period, true) {
        at.take(plan, (start, end), true, bpf, user);
    }
    let warm = at.samples.iter();
    let (counted, warm_s) = warm.fold((0.0, 0.0), |(c, t), s| {
        (c + s.events(), t + s.interval_s - s.sampler_s)
    });
    let len = window_length(plan, counted / plan.grain.max(1) as f64, warm_s);
    // as many samples as the duration would have had
    let period = period * len / plan.duration;
    at.period = plan.clock.guest(period);
    for (end, _) in phase_ends(plan.warmup, len, period, false) {
        if plan.profile && window.is_none() {
            window = Some(Window::open());
        }
        let each = at.take(plan, (start, end), false, bpf, user);
        for (total, n) in producer_events.iter_mut().zip(&each) {
            *total += n;
        }
    }
    let samples = at.samples;
    Sampled {
        samples,
        window: window.map(|w| w.0),
        producer_events,
    }
}

/// BPF's count after the last sample: what it has, or up to `owed` once
/// it caught up with the producers, waiting at most `settle` for it.
fn tail(bpf: BpfSlots, settle: Duration, owed: u64) -> u64 {
    let deadline = Instant::now() + settle;
    let mut counted = bpf.take().events;
    while counted < owed && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
        counted += bpf.take().events;
    }
    counted
}

/// The calling thread's CPU time: under the icount meter on one CPU, the
/// instructions it ran. Zero where the clock cannot be read, which leaves
/// the rates as they would be without it.
fn own_time() -> Duration {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

/// Runs `body` on `plan.producers` producers for warm-up plus the
/// measured window ([`window_length`]), sampling as [`sample_ends`] says
/// of the duration, with as many samples in a lengthened window.
pub fn measure(plan: &Sampling, bpf: Option<BpfSlots>, body: Body) -> Measured {
    let producers = if plan.on_main { 1 } else { plan.producers };
    let crew = Crew {
        user: Arc::new(UserSlots::new(plan.producers)),
        stop: Arc::new(AtomicBool::new(false)),
        go: Arc::new(Barrier::new(producers + 1)),
        cpus: Arc::new((0..producers).map(|_| AtomicUsize::new(0)).collect()),
    };
    let (sampled, hung) = if plan.on_main {
        (crew.on_main(plan, bpf, &body), false)
    } else {
        crew.on_threads(plan, bpf, &body)
    };
    // what the producers counted after the last sample
    let samples = sampled.samples;
    let total_user = samples.iter().map(|s| s.user).sum::<u64>() + crew.user.take();
    let sampled_bpf = samples.iter().map(|s| s.bpf).sum::<u64>();
    Measured {
        total_bpf: sampled_bpf
            + bpf.map_or(0, |b| {
                tail(b, plan.settle, total_user.saturating_sub(sampled_bpf))
            }),
        total_user,
        samples,
        hung,
        window: sampled.window,
        producer_events: sampled.producer_events,
        producer_cpus: crew
            .cpus
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect(),
        figures: None,
        extra: Vec::new(),
    }
}

/// What the producers and the sampler share: the producers' counters,
/// the stop flag, the barrier they start at and the CPU each ran on.
struct Crew {
    user: Arc<UserSlots>,
    stop: Arc<AtomicBool>,
    go: Arc<Barrier>,
    cpus: Arc<Vec<AtomicUsize>>,
}

impl Crew {
    /// The one producer on the calling thread (`--rename-thread main`),
    /// the sampler beside it.
    fn on_main(&self, plan: &Sampling, bpf: Option<BpfSlots>, body: &Body) -> Sampled {
        thread::scope(|s| {
            let sampler = s.spawn(|| {
                let measured = sample_loop(plan, bpf, &self.user, &self.go);
                self.stop.store(true, Ordering::Relaxed);
                (measured, Instant::now())
            });
            self.go.wait();
            body(self.user.slot(0), &self.stop);
            note_cpu(&self.cpus[0]);
            let (measured, stopped) = sampler.join().expect("sampler thread panicked");
            grant(stopped.elapsed());
            measured
        })
    }

    /// A thread a producer, the sampler on the calling thread; whether a
    /// producer was still running a grace period after the stop (hung).
    fn on_threads(&self, plan: &Sampling, bpf: Option<BpfSlots>, body: &Body) -> (Sampled, bool) {
        let handles: Vec<_> = (0..plan.producers)
            .map(|i| {
                let (user, stop, body, go) = (
                    self.user.clone(),
                    self.stop.clone(),
                    body.clone(),
                    self.go.clone(),
                );
                let cpus = self.cpus.clone();
                let pin = plan.pins.get(i).copied();
                thread::spawn(move || {
                    if let Some(cpu) = pin {
                        pin_to(cpu);
                    }
                    go.wait();
                    body(user.slot(i), &stop);
                    note_cpu(&cpus[i]);
                })
            })
            .collect();
        let measured = sample_loop(plan, bpf, &self.user, &self.go);
        self.stop.store(true, Ordering::Relaxed);
        // granted before the wait, so that the watchdog does not end the
        // run in it, and what it did not use taken back after
        let grace = plan.clock.guest(grace(plan, &measured.samples));
        grant(grace);
        let stopped = Instant::now();
        while handles.iter().any(|h| !h.is_finished()) && stopped.elapsed() < grace {
            thread::sleep(Duration::from_millis(10));
        }
        refund(grace.saturating_sub(stopped.elapsed()));
        let hung = handles.iter().any(|h| !h.is_finished());
        if !hung {
            for h in handles {
                // a producer that panicked has already printed why
                let _ = h.join();
            }
        }
        (measured, hung)
    }
}

/// Where the calling thread runs now.
fn note_cpu(cpu: &AtomicUsize) {
    if let Ok(c) = nix::sched::sched_getcpu() {
        cpu.store(c, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by the tests that run [`measure`]: each grants its stop's grace
    /// and takes back the rest, which a test of the grant must not see.
    static GRANTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn grants() -> std::sync::MutexGuard<'static, ()> {
        GRANTS.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One producer, unpinned, silent, counted in user space, a grain of
    /// one, the guest's clock: what each test changes of it, it names.
    fn plan(warmup: f64, duration: f64) -> Sampling {
        Sampling {
            warmup,
            duration,
            producers: 1,
            pins: vec![],
            on_main: false,
            count_bpf: false,
            progress: Progress::Silent,
            profile: false,
            shares_cpu: false,
            min_counts: 0,
            grain: 1,
            batch: 1,
            clock: Clock::GUEST,
            gauge: None,
            settle: Duration::ZERO,
        }
    }

    #[test]
    fn a_count_the_kernel_completes_later_is_waited_for() {
        #[repr(C, align(128))]
        struct Counter {
            value: AtomicU64,
        }
        let mut slots: Vec<Counter> = (0..2).map(|_| Counter { value: 0.into() }).collect();
        // SAFETY: each Counter starts with its u64; `slots` outlives `bpf`
        let bpf = unsafe { BpfSlots::new(&mut slots) };
        let late = &slots[1].value as *const AtomicU64 as usize;
        thread::scope(|s| {
            s.spawn(move || {
                thread::sleep(Duration::from_millis(30));
                // SAFETY: `slots` outlives the scope
                unsafe { &*(late as *const AtomicU64) }.fetch_add(2, Ordering::Relaxed);
            });
            // without a settle, what is there; with one, the frees owed
            assert_eq!(tail(bpf, Duration::ZERO, 2), 0);
            assert_eq!(tail(bpf, Duration::from_secs(10), 2), 2);
        });
        // nothing owed: no wait
        let start = Instant::now();
        assert_eq!(tail(bpf, Duration::from_secs(10), 0), 0);
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_long_batch_gets_a_long_grace() {
        // the producers' batch, not BPF's grain: bpf-loop at --nr_loops
        // 1000000 counts 10^6 in BPF at a time, but a getpgid() is 10^9
        // (11 s here, abandoned after 5 s as timeout: no Summary line)
        let plan = |batch| Sampling {
            producers: 4,
            grain: 1_000_000,
            batch,
            ..plan(1.0, 1.0)
        };
        // 200 M events a second over 4 producers, 5 * 10^8 a batch: 10 s
        let samples = vec![Sample {
            interval_s: 1.0,
            user: 200_000_000,
            ..Sample::default()
        }];
        assert_eq!(grace(&plan(500_000_000), &samples), 30.0);
        assert_eq!(grace(&plan(64), &samples), GRACE_S);
        assert_eq!(grace(&plan(u64::MAX), &samples), LONGEST_GRACE_S);
        // nothing counted in 2 s: a batch outlasted the run, by how much
        // nothing says (the run's length three times was too short)
        let idle = vec![Sample {
            interval_s: 2.0,
            ..Sample::default()
        }];
        assert_eq!(grace(&plan(64), &idle), LONGEST_GRACE_S);
        assert_eq!(grace(&plan(64), &[]), LONGEST_GRACE_S);
    }

    #[test]
    fn counts_match_calls_and_warmup_is_marked() {
        let _serial = grants();
        let calls = Arc::new(AtomicU64::new(0));
        let c = calls.clone();
        let body: Body = Arc::new(move |count, stop| {
            produce(count, stop, 16, 1, || {
                c.fetch_add(1, Ordering::Relaxed);
            })
        });
        let plan = Sampling {
            producers: 2,
            pins: vec![0, 1],
            ..plan(1.0, 1.0)
        };
        let m = measure(&plan, None, body);
        assert!(!m.hung);
        assert_eq!(m.samples.len(), 2);
        assert!(m.samples[0].warmup && !m.samples[1].warmup);
        // the producers start after the counts are reset: every call is
        // counted, once (a producer scheduled before the reset lost some)
        let calls = calls.load(Ordering::Relaxed);
        assert!(calls > 0);
        assert_eq!(m.total_user, calls);
        assert_eq!(m.total_user % 16, 0, "whole batches only");
        // on a loaded host a producer may miss a whole sample; the counts
        // must still all be user-space ones and add up (above)
        assert!(m.samples.iter().all(|s| s.bpf == 0));
        assert!(m.samples.iter().any(|s| s.mps > 0.0));
    }

    #[test]
    fn a_window_holds_its_counts_within_one_to_two_durations() {
        let plan = |min_counts| Sampling {
            count_bpf: true,
            shares_cpu: true,
            min_counts,
            ..plan(0.02, 0.05)
        };
        // 0: the duration as given, whatever the rate
        assert_eq!(window_length(&plan(0), 10.0, 0.02), 0.05);
        // fast: 10^4 counts in well under the duration
        assert_eq!(window_length(&plan(10_000), 1e5, 0.02), 0.05);
        // 10^4 counts at 2e5 a second take 0.05 s; at 1.6e5, 0.0625 s
        assert!((window_length(&plan(10_000), 3200.0, 0.02) - 0.0625).abs() < 1e-12);
        // slow, or nothing counted in the warm-up: the longest
        assert_eq!(window_length(&plan(10_000), 40.0, 0.02), 0.1);
        assert_eq!(window_length(&plan(10_000), 0.0, 0.02), 0.1);
        // no warm-up, no rate: the duration
        assert_eq!(window_length(&plan(10_000), 0.0, 0.0), 0.05);
    }

    #[test]
    fn a_sampler_sharing_the_cpu_leaves_its_own_time_out_of_the_rate() {
        let _serial = grants();
        let body: Body = Arc::new(|count, stop| {
            produce(count, stop, 16, 1, || {
                std::hint::black_box(0u64);
            })
        });
        let plan = Sampling {
            shares_cpu: true,
            grain: 16,
            ..plan(0.0, 0.2)
        };
        let m = measure(&plan, None, body);
        assert_eq!(m.samples.len(), 4);
        for s in &m.samples {
            // the sampler ran (waking, reading, sleeping), and no more
            // than half the interval is ever taken out
            assert!(
                s.sampler_s > 0.0 && s.sampler_s <= s.interval_s / 2.0,
                "{s:?}"
            );
            // the rate is the count over the rest: the events it stands for
            // are the ones counted
            assert_eq!(s.events(), s.user as f64, "{s:?}");
        }
    }

    #[test]
    fn a_late_sample_starts_the_schedule_again() {
        // a sampler starved for 2 s (upstream's bpf-loop at -p 4 and
        // 500,000 loops on 2 CPUs: 11 s): the samples due meanwhile are
        // not taken at once, each over nothing
        let plan = plan(0.0, 0.4);
        let period = Duration::from_millis(100);
        let start = Instant::now() - Duration::from_secs(2);
        let mut at = Taken {
            last: start,
            last_own: own_time(),
            period,
            shift: Duration::ZERO,
            samples: Vec::new(),
        };
        let user = UserSlots::new(1);
        for end in [0.1, 0.2, 0.3] {
            at.take(&plan, (start, end), false, None, &user);
        }
        assert!(at.samples[0].interval_s >= 2.0, "{:?}", at.samples[0]);
        // and the run's watchdog waits that much longer
        assert!(granted() >= Duration::from_millis(1900));
        // each later one about a period (a sleep's overshoot moves the
        // next end's share of it), where catching up gave nothing
        for s in &at.samples[1..] {
            assert!(s.interval_s >= 0.05, "{s:?}");
        }
    }

    #[test]
    fn a_stop_that_waits_for_a_batch_is_granted_to_the_watchdog() {
        let _serial = grants();
        // run_bench_bpf_loop.sh's -p 12 --nr_loops 1000000 on 16 vCPUs of
        // 2 host cores: each getpgid() ran 90 s, the stop waited for them
        // within its grace and the watchdog, which had not granted that
        // wait, ended the run first
        for on_main in [false, true] {
            let mut plan = plan(0.0, 0.1);
            plan.on_main = on_main;
            let before = granted();
            let body: Body = Arc::new(|slot: &AtomicU64, stop: &AtomicBool| {
                while !stop.load(Ordering::Relaxed) {
                    slot.fetch_add(1, Ordering::Relaxed);
                    thread::sleep(Duration::from_millis(1));
                }
                thread::sleep(Duration::from_millis(600));
            });
            assert!(!measure(&plan, None, body).hung);
            assert!(
                granted().saturating_sub(before) >= Duration::from_millis(500),
                "on_main {on_main}"
            );
        }
    }

    #[test]
    fn sample_schedule() {
        let ends = |w, d| sample_ends(w, d);
        // upstream's: one sample a second
        assert_eq!(
            ends(1.0, 2.0),
            vec![(1.0, true), (2.0, false), (3.0, false)]
        );
        // fractions: the last sample of a phase is cut to its end
        assert_eq!(ends(0.0, 1.5), vec![(1.0, false), (1.5, false)]);
        let short = ends(0.1, 0.2);
        assert_eq!(short.iter().filter(|(_, w)| *w).count(), 2);
        assert_eq!(short.iter().filter(|(_, w)| !*w).count(), 4);
        assert!((short.last().unwrap().0 - 0.3).abs() < 1e-12);
        // the largest accepted options stay a modest list
        assert_eq!(ends(3600.0, 3600.0).len(), 7200);
    }

    #[test]
    fn main_thread_producer() {
        let _serial = grants();
        let body: Body = Arc::new(|count, stop| produce(count, stop, 1, 3, thread::yield_now));
        let plan = Sampling {
            on_main: true,
            ..plan(0.0, 0.2)
        };
        let m = measure(&plan, None, body);
        assert_eq!(m.samples.len(), 4, "a sub-second run is sampled four times");
        assert!(m.total_user > 0 && m.total_user.is_multiple_of(3));
    }
}
