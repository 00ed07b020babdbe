//! The LPM trie's operations (bpf/lpm_trie.bpf.c), set up as upstream's
//! bench_lpm_trie_map.c sets them up: an XDP program run by
//! BPF_PROG_TEST_RUN makes a run of one operation on the keys of a trie
//! that user space fills, empties and refills between runs.

use crate::bpf::skel::lpm_trie::{LpmTrieSkel, LpmTrieSkelBuilder};
use crate::bpf::skel::lpm_trie_map::LpmTrieMapSkelBuilder;
use crate::bpf::Failure;
use crate::matrix::{mapped, open_failed, update_all, Ctx};
use crate::options::RunOptions;
use crate::registry::Bench;
use crate::sampler::{counters::BpfSlots, Body, Measured};
use libbpf_rs::libbpf_sys;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use trig_schema::Figures;

/// Operations a test run makes: upstream's (NR_LOOPS, no knob there),
/// which `bench` keeps, and the matrix's where `--nr-loops` does not say.
/// A run holds a one-CPU guest's sampler back until it ends, so a sample
/// counts whole runs: at 1000 updates (1.6 * 10^6 instructions) 30 a
/// sample, which spread 1.6%; at 250, 0.5%. A test run's own cost (6600
/// instructions on 6.1) is then 26 instructions an operation, which the
/// baseline carries too.
pub const UPSTREAM_RUNS: u32 = 10_000;
const MATRIX_RUNS: u32 = 250;

/// The trie's keys where `--nr-entries` does not say: upstream has no
/// default; its published figures used 10,000.
const MATRIX_ENTRIES: u32 = 10_000;

/// What a key costs, user space's copy and the kernel's node with the
/// inner nodes between (the trie's nodes come from kmalloc-64 and -96 on
/// 6.1): a bound, to refuse a trie that the guest's memory cannot hold
/// before filling it drives the only process, PID 1, out of memory.
const BYTES_A_KEY: u64 = 12 + 2 * 96;

/// The flag above a run's operations: the trie must be emptied or
/// refilled (REINIT of bpf/lpm_trie.bpf.c).
const REINIT: u32 = 1 << 16;

/// What each benchmark does a run (bpf/lpm_trie.bpf.c's `enum op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Noop,
    Baseline,
    Lookup,
    Insert,
    Update,
    Delete,
    Free,
}

impl Op {
    fn of(bench: &Bench) -> Op {
        match bench.name.trim_start_matches("lpm-trie-") {
            "noop" => Op::Noop,
            "baseline" => Op::Baseline,
            "lookup" => Op::Lookup,
            "insert" => Op::Insert,
            "update" => Op::Update,
            "free" => Op::Free,
            _ => Op::Delete,
        }
    }

    /// Whether the trie starts full (the others start empty).
    fn filled(self) -> bool {
        matches!(self, Op::Lookup | Op::Update | Op::Delete)
    }

    /// Whether it takes one producer and keys in turn: insert and delete
    /// walk the keys once through and then need the trie reset; free
    /// fills a trie a time.
    fn single(self) -> bool {
        matches!(self, Op::Insert | Op::Delete | Op::Free)
    }
}

/// The family's knobs, their defaults where not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trie {
    pub nr_entries: u32,
    pub prefix_len: u32,
    pub random: bool,
    pub runs: u32,
}

impl Trie {
    pub fn of(opts: &RunOptions) -> Trie {
        Trie {
            nr_entries: opts.nr_entries.unwrap_or(MATRIX_ENTRIES),
            prefix_len: opts.prefix_len.unwrap_or(32),
            random: opts.random,
            runs: opts.nr_loops.unwrap_or(MATRIX_RUNS),
        }
    }

    /// What each result records of them.
    pub fn extra(&self) -> Vec<(String, String)> {
        vec![
            ("nr_entries".into(), self.nr_entries.to_string()),
            ("prefix_len".into(), self.prefix_len.to_string()),
            ("random".into(), self.random.to_string()),
            ("nr_loops".into(), self.runs.to_string()),
        ]
    }

    /// Upstream's validate(), its words, and whether the trie fits half
    /// the memory free.
    fn check(&self, bench: &Bench, producers: usize) -> Result<(), Failure> {
        let refuse = |why: String| Err(Failure::Failed(why));
        let free = nix::sys::sysinfo::sysinfo().map_or(u64::MAX, |i| i.ram_unused());
        let needs = u64::from(self.nr_entries) * BYTES_A_KEY;
        if needs > free / 2 {
            return refuse(format!(
                "nr_entries {} needs about {} MiB, more than half the {} MiB of memory free",
                self.nr_entries,
                needs >> 20,
                free >> 20
            ));
        }
        if self.prefix_len < 64 && (1u64 << self.prefix_len) < u64::from(self.nr_entries) {
            return refuse("prefix_len value too small for nr_entries".into());
        }
        if Op::of(bench).single() && producers != 1 {
            return refuse(format!("{} requires a single producer", bench.name));
        }
        if Op::of(bench).single() && self.random {
            return refuse(format!("{} does not support --random", bench.name));
        }
        Ok(())
    }
}

/// Operations a count update adds: a run's.
pub fn per_run(opts: &RunOptions) -> u64 {
    u64::from(Trie::of(opts).runs)
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let (op, trie) = (Op::of(ctx.bench()), Trie::of(ctx.opts));
    trie.check(ctx.bench(), ctx.point.producers)?;
    let mut obj = MaybeUninit::uninit();
    let mut open = LpmTrieSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let ro = mapped(open.maps.rodata_data.as_deref_mut(), ".rodata")?;
    ro.nr_entries = trie.nr_entries;
    ro.prefixlen = trie.prefix_len;
    ro.random = trie.random;
    ro.op = op as u32;
    ro.runs = trie.runs;
    let mut progs = ctx.bench().programs(ctx.opts.stacktrace);
    // lpm-trie-free times each free from its fentry to this fexit
    if op == Op::Free {
        progs.push("trie_free_exit");
    }
    let mut skel = crate::bpf::load(open, &progs, ctx.bench(), ctx.caps)?;
    let fault = Arc::new(Mutex::new(None));
    let (body, _exit) = match op {
        Op::Free => {
            // a kernel that cannot attach trampolines refuses this one
            // first: unsupported, as the fentry's own attach would say
            let exit = crate::bpf::program(skel.object(), "trie_free_exit")?
                .attach()
                .map_err(|e| crate::bpf::classify("attach", &e, ctx.bench(), ctx.caps))?;
            (freer(Keys::new(trie), fault.clone()), Some(exit))
        }
        _ => (test_runs(&skel, op, trie, fault.clone())?, None),
    };
    let bss = mapped(skel.maps.bss_data.as_deref_mut(), ".bss")?;
    // SAFETY: `counter` starts with its u64; the skeleton outlives the
    // measurement.
    let slots = unsafe { BpfSlots::new(&mut bss.hits).with_timing(&mut bss.timed) };
    let measured = ctx.attach_and_measure_with(skel.object(), slots, body)?;
    timed_figures(measured, &fault)
}

/// Producers that test-run the program on the trie, filled first where
/// the operation needs it.
fn test_runs(
    skel: &LpmTrieSkel,
    op: Op,
    trie: Trie,
    fault: Arc<Mutex<Option<String>>>,
) -> Result<Body, Failure> {
    let keys = Keys::new(trie);
    let map = MapHandle::try_from(&skel.maps.trie_map)
        .map_err(|e| Failure::Failed(format!("the trie's fd: {e:#}")))?;
    if op.filled() {
        keys.fill(&map).map_err(Failure::Failed)?;
    }
    let prog = crate::bpf::program(skel.object(), "run_bench")?;
    Ok(producer(prog.as_fd().as_raw_fd(), map, op, keys, fault))
}

/// The measurement with what the program timed an operation, in the
/// meter's ns, or the producers' first fault.
fn timed_figures(
    mut measured: Measured,
    fault: &Mutex<Option<String>>,
) -> Result<Measured, Failure> {
    if let Some(why) = fault.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(Failure::Failed(why));
    }
    let (ops, timed) = measured
        .samples
        .iter()
        .filter(|s| !s.warmup)
        .fold((0, 0.0), |(n, t), s| (n + s.bpf, t + s.timed_s));
    measured.figures = (ops > 0).then(|| Figures {
        timed_per_op: Some(timed * 1e9 / ops as f64),
        ..Figures::default()
    });
    Ok(measured)
}

/// lpm-trie-free's producers: each makes a trie of upstream's
/// (lpm_trie_map.c's trie_free_map), fills it with every key and closes
/// it, counting it then; the kernel frees it later on a kworker, where
/// BPF counts it (the sampler waits for those last frees: `settle`). The
/// first fault stops them and is kept in `fault`.
fn freer(keys: Keys, fault: Arc<Mutex<Option<String>>>) -> Body {
    Arc::new(move |count, stop| {
        while !stop.load(Ordering::Relaxed) {
            match make_filled_trie(&keys) {
                // the trie closed: the kernel frees it from here
                Ok(()) => {
                    count.fetch_add(1, Ordering::Relaxed);
                }
                Err(why) => {
                    *fault.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    return;
                }
            }
        }
    })
}

/// One trie as upstream's producer makes it: its object
/// (bpf/lpm_trie_map.bpf.c) opened and loaded, filled, and closed with
/// the object, from which the kernel frees it.
fn make_filled_trie(keys: &Keys) -> Result<(), String> {
    let mut obj = MaybeUninit::uninit();
    let skel = LpmTrieMapSkelBuilder::default()
        .open(&mut obj)
        .and_then(|open| open.load())
        .map_err(|e| format!("failed to open skeleton: {e:#}"))?;
    keys.fill(&skel.maps.trie_free_map)
}

/// The trie's keys and values, as upstream's setup makes them: key i is
/// `prefix_len` bits of i, each value 1.
#[derive(Clone)]
struct Keys {
    keys: Vec<u8>,
    values: Vec<u8>,
    count: u32,
}

impl Keys {
    fn new(trie: Trie) -> Keys {
        Keys {
            keys: (0..trie.nr_entries)
                .flat_map(|i| [trie.prefix_len.to_ne_bytes(), i.to_ne_bytes()].concat())
                .collect(),
            values: (0..trie.nr_entries)
                .flat_map(|_| 1u32.to_ne_bytes())
                .collect(),
            count: trie.nr_entries,
        }
    }

    /// Every key into the trie, in one batch (one at a time where a
    /// kernel has no batches for tries).
    fn fill(&self, map: &impl MapCore) -> Result<(), String> {
        update_all(map, &self.keys, &self.values, self.count)
            .map_err(|(_, e)| format!("failed to update keys to map: {e:#}"))
    }

    /// Every key out of the trie.
    fn empty(&self, map: &MapHandle) {
        if map
            .delete_batch(&self.keys, self.count, MapFlags::ANY, MapFlags::ANY)
            .is_ok()
        {
            return;
        }
        for key in self.keys.chunks(8) {
            // a key the run did not insert is not there
            let _ = map.delete(key);
        }
    }
}

/// Producers that run the program on an empty frame, count the operations
/// each run made, and empty or refill the trie where a run asks; the
/// first fault stops them and is kept in `fault`.
fn producer(
    prog: i32,
    map: MapHandle,
    op: Op,
    keys: Keys,
    fault: Arc<Mutex<Option<String>>>,
) -> Body {
    Arc::new(move |count, stop| {
        while !stop.load(Ordering::Relaxed) {
            let outcome = test_run(prog).and_then(|ret| {
                match (ret & REINIT != 0, op) {
                    (false, _) => {}
                    (true, Op::Insert) => keys.empty(&map),
                    (true, _) => keys.fill(&map)?,
                }
                Ok(ret & (REINIT - 1))
            });
            match outcome {
                Ok(done) => {
                    count.fetch_add(u64::from(done), Ordering::Relaxed);
                }
                Err(why) => {
                    *fault.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    return;
                }
            }
        }
    })
}

/// One BPF_PROG_TEST_RUN of the XDP program behind `fd` on a zeroed
/// Ethernet header (ETH_HLEN bytes, as upstream's): its return value, or
/// what failed.
fn test_run(fd: i32) -> Result<u32, String> {
    let mut frame = [0u8; 14];
    // SAFETY: zeroed opts with their size set, and a frame that outlives
    // the call.
    let mut opts: libbpf_sys::bpf_test_run_opts = unsafe { std::mem::zeroed() };
    opts.sz = std::mem::size_of::<libbpf_sys::bpf_test_run_opts>() as _;
    opts.data_in = frame.as_mut_ptr().cast();
    opts.data_size_in = frame.len() as u32;
    opts.repeat = 1;
    let rc = unsafe { libbpf_sys::bpf_prog_test_run_opts(fd, &mut opts) };
    match (rc, opts.retval as i32) {
        (rc, _) if rc < 0 => Err(format!("failed to run BPF prog: {rc}")),
        (_, ret) if ret < 0 => Err(format!("BPF prog returned error: {ret}")),
        (_, ret) => Ok(ret as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn upstreams_checks_in_its_words() {
        let bench = |name| registry::find(name).unwrap();
        let trie = |opts: RunOptions| Trie::of(&opts);
        let fails = |r: Result<(), Failure>| match r {
            Err(Failure::Failed(why)) => why,
            _ => String::new(),
        };
        let small = trie(RunOptions {
            nr_entries: Some(300),
            prefix_len: Some(8),
            ..RunOptions::default()
        });
        assert_eq!(
            fails(small.check(bench("lpm-trie-lookup"), 1)),
            "prefix_len value too small for nr_entries"
        );
        let t = trie(RunOptions::default());
        assert_eq!((t.nr_entries, t.prefix_len, t.runs), (10_000, 32, 250));
        assert_eq!(
            fails(t.check(bench("lpm-trie-insert"), 2)),
            "lpm-trie-insert requires a single producer"
        );
        assert!(t.check(bench("lpm-trie-update"), 4).is_ok());
        let random = trie(RunOptions {
            random: true,
            ..RunOptions::default()
        });
        assert_eq!(
            fails(random.check(bench("lpm-trie-delete"), 1)),
            "lpm-trie-delete does not support --random"
        );
        // a trie past the machine's memory is refused, not filled
        let huge = trie(RunOptions {
            nr_entries: Some(u32::MAX),
            ..RunOptions::default()
        });
        let why = fails(huge.check(bench("lpm-trie-lookup"), 1));
        assert!(
            why.starts_with("nr_entries 4294967295 needs about "),
            "{why}"
        );
    }

    #[test]
    fn keys_are_upstreams() {
        let keys = Keys::new(Trie {
            nr_entries: 3,
            prefix_len: 24,
            random: false,
            runs: 1,
        });
        assert_eq!(keys.count, 3);
        assert_eq!(
            &keys.keys[8..16],
            [24u32.to_ne_bytes(), 1u32.to_ne_bytes()].concat()
        );
        assert_eq!(keys.values.len(), 12);
    }
}
