//! A hash map's memory under churn (bpf/htab_mem.bpf.c), set up as
//! upstream's bench_htab_mem.c sets it up: the process joins a memory
//! cgroup of its own before the map is made, the producers' getpgid()
//! (and, for add_del_on_diff_cpu, their partners' getppid()) write or
//! delete 64 keys a run, and each sample reads the cgroup's memory.

use crate::bpf::{skel::htab_mem::HtabMemSkelBuilder, Failure};
use crate::caps::Feature;
use crate::matrix::{hit_slots, open_failed, Ctx};
use crate::memcg::MemCgroup;
use crate::options::{RunOptions, USE_CASES};
use crate::registry::Bench;
use crate::sampler::{Body, Gauge, Measured};
use libbpf_rs::skel::{Skel, SkelBuilder};
use libbpf_rs::{libbpf_sys, Link};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use trig_schema::Figures;

/// The cgroup a run joins (upstream's "/htab_mem"), the process's id
/// after it: two runs at once keep their memory apart.
const CGROUP: &str = "trig-init-htab-mem";

/// The knobs of a run, upstream's defaults where not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Churn {
    pub value_size: u32,
    pub use_case: String,
    pub preallocated: bool,
}

impl Churn {
    pub fn of(opts: &RunOptions) -> Churn {
        Churn {
            value_size: opts.htab_value_size.unwrap_or(8),
            use_case: opts.use_case.clone(),
            preallocated: opts.preallocated,
        }
    }

    /// The programs of the use case: its one, or the adder and deleter.
    fn programs(&self) -> &'static [&'static str] {
        match self.use_case.as_str() {
            "batch_add_batch_del" => &["batch_add_batch_del"],
            "add_del_on_diff_cpu" => &["add_only", "del_only"],
            _ => &["overwrite"],
        }
    }

    fn paired(&self) -> bool {
        self.use_case == USE_CASES[2]
    }

    /// What each result records of them.
    pub fn extra(&self) -> Vec<(String, String)> {
        vec![
            ("value_size".into(), self.value_size.to_string()),
            ("use_case".into(), self.use_case.clone()),
            ("preallocated".into(), self.preallocated.to_string()),
        ]
    }
}

/// Operations a getpgid() counts: a run's, two where it adds and deletes.
pub fn per_syscall(opts: &RunOptions) -> u64 {
    match Churn::of(opts).use_case.as_str() {
        "batch_add_batch_del" => 2,
        _ => 1,
    }
}

/// Upstream's validate(), in its words.
fn check(bench: &Bench, churn: &Churn, producers: usize) -> Result<(), Failure> {
    if bench.feature == Feature::ResizableHashMemory && churn.preallocated {
        return Err(Failure::Failed(
            "rhash map does not support preallocation".into(),
        ));
    }
    if churn.paired() && producers % 2 == 1 {
        return Err(Failure::Failed(format!(
            "{} needs an even number of producers",
            churn.use_case
        )));
    }
    Ok(())
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let churn = Churn::of(ctx.opts);
    check(ctx.bench(), &churn, ctx.point.producers)?;
    // joined before the map is made: its memory is charged where it was
    let name = format!("{CGROUP}.{}", std::process::id());
    let cgroup = Arc::new(MemCgroup::join(&name)?);
    let mut obj = MaybeUninit::uninit();
    let mut open = HtabMemSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let ro = crate::matrix::mapped(open.maps.rodata_data.as_deref_mut(), ".rodata")?;
    ro.nr_thread = ctx.point.producers as u32;
    shape(ctx.bench(), &churn, &mut open.maps.htab)?;
    let mut skel = crate::bpf::load(open, churn.programs(), ctx.bench(), ctx.caps)?;
    let _links = churn
        .programs()
        .iter()
        .map(|p| {
            crate::bpf::program(skel.object(), p)?
                .attach()
                .map_err(attach_failed(p))
        })
        .collect::<Result<Vec<Link>, Failure>>()?;
    let slots: Result<_, Failure> = hit_slots!(skel);
    let body = match churn.paired() {
        true => pairs(),
        false => ctx.producer(None)?,
    };
    let reader = cgroup.clone();
    let gauge: Gauge = Arc::new(move || reader.current().unwrap_or(0));
    let mut measured = ctx.measure_gauged(Some(slots?), body, Some(gauge));
    let charged: Vec<u64> = measured
        .samples
        .iter()
        .filter(|s| !s.warmup)
        .map(|s| s.memory_bytes)
        .collect();
    measured.figures = Some(Figures::memory(&charged, cgroup.peak()));
    Ok(measured)
}

fn attach_failed(prog: &str) -> impl FnOnce(libbpf_rs::Error) -> Failure + '_ {
    move |e| Failure::Failed(format!("attaching {prog}: {e:#}"))
}

/// The map as upstream sizes it: `--value-size` values, room for every
/// CPU's keys (max(8192, 64 * CPUs)), preallocated or not, resizable for
/// rhtab-mem.
fn shape(bench: &Bench, churn: &Churn, map: &mut libbpf_rs::OpenMapMut) -> Result<(), Failure> {
    let sized = |e| Failure::Failed(format!("sizing the map: {e:#}"));
    map.set_value_size(churn.value_size).map_err(sized)?;
    let cpus = crate::matrix::guest_cpus() as u32;
    map.set_max_entries(8192.max(64 * cpus)).map_err(sized)?;
    if bench.feature == Feature::ResizableHashMemory {
        // the template's BPF_F_NO_PREALLOC stays
        super::make_resizable(map)?;
    } else if churn.preallocated {
        map.set_map_flags(map.map_flags() & !libbpf_sys::BPF_F_NO_PREALLOC)
            .map_err(sized)?;
    }
    Ok(())
}

/// Whose turn it is in a pair: the adder's (false) or the deleter's.
type Turn = (Mutex<bool>, Condvar);

/// How long a producer waits for its partner before it looks at the stop
/// flag again (a partner that stopped never hands the turn back).
const STOP_POLL: Duration = Duration::from_millis(10);

/// add_del_on_diff_cpu's producers: in pairs, in the order they start
/// (upstream's thread index), the first of each adding with getpgid() and
/// its partner then deleting the same keys with getppid(), in turn, as
/// upstream's two barrier waits a round keep them.
fn pairs() -> Body {
    let next = Arc::new(AtomicUsize::new(0));
    let turns: Arc<Mutex<Vec<Arc<Turn>>>> = Arc::default();
    Arc::new(move |count: &AtomicU64, stop: &AtomicBool| {
        let seq = next.fetch_add(1, Ordering::Relaxed);
        let turn = {
            let mut all = turns.lock().expect("pairs' turns");
            while all.len() <= seq / 2 {
                all.push(Arc::default());
            }
            all[seq / 2].clone()
        };
        let deleter = seq % 2 == 1;
        while wait_turn(&turn, deleter, stop) {
            match deleter {
                true => {
                    nix::unistd::getppid();
                }
                false => crate::matrix::syscall_loop::getpgid_loop(1, 0),
            }
            count.fetch_add(1, Ordering::Relaxed);
            let (lock, cv) = &*turn;
            *lock.lock().expect("a pair's turn") = !deleter;
            cv.notify_all();
        }
    })
}

/// Waits for the turn of the deleter (or the adder) of a pair; false once
/// told to stop.
fn wait_turn(turn: &Turn, deleter: bool, stop: &AtomicBool) -> bool {
    let (lock, cv) = turn;
    let mut whose = lock.lock().expect("a pair's turn");
    while *whose != deleter {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        whose = cv.wait_timeout(whose, STOP_POLL).expect("a pair's turn").0;
    }
    !stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn upstreams_rules_in_its_words() {
        let (htab, rhtab) = (
            registry::find("htab-mem").unwrap(),
            registry::find("rhtab-mem").unwrap(),
        );
        let churn = |use_case: &str, preallocated| Churn {
            value_size: 8,
            use_case: use_case.into(),
            preallocated,
        };
        let why = |r: Result<(), Failure>| match r {
            Err(Failure::Failed(why)) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            why(check(htab, &churn("add_del_on_diff_cpu", false), 3)),
            "add_del_on_diff_cpu needs an even number of producers"
        );
        assert!(check(htab, &churn("add_del_on_diff_cpu", false), 4).is_ok());
        assert!(check(htab, &churn("overwrite", true), 1).is_ok());
        assert_eq!(
            why(check(rhtab, &churn("overwrite", true), 1)),
            "rhash map does not support preallocation"
        );
    }

    #[test]
    fn a_pair_takes_turns_and_stops() {
        let body = pairs();
        let (adds, dels, stop) = (AtomicU64::new(0), AtomicU64::new(0), AtomicBool::new(false));
        std::thread::scope(|s| {
            s.spawn(|| body(&adds, &stop));
            s.spawn(|| body(&dels, &stop));
            // a few turns each, however loaded the host (10 s at most: a
            // pair that never hands its turn over fails below)
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            let calls = || adds.load(Ordering::Relaxed) + dels.load(Ordering::Relaxed);
            while calls() < 8 && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            stop.store(true, Ordering::Relaxed);
        });
        // in turn: the deleter at most one behind the adder (which of the
        // two threads started first and so adds, the scheduler decides)
        let (x, y) = (adds.load(Ordering::Relaxed), dels.load(Ordering::Relaxed));
        let (a, d) = (x.max(y), x.min(y));
        assert!(a + d >= 8 && a - d <= 1, "{x} and {y} calls");
    }

    #[test]
    fn a_batch_counts_two_operations() {
        let opts = |c: &str| RunOptions {
            use_case: c.into(),
            ..RunOptions::default()
        };
        assert_eq!(per_syscall(&opts("batch_add_batch_del")), 2);
        assert_eq!(per_syscall(&opts("overwrite")), 1);
        assert_eq!(
            Churn::of(&opts("add_del_on_diff_cpu")).programs(),
            ["add_only", "del_only"]
        );
    }
}
