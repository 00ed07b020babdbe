//! A full hash map's update and a hash map's lookup (bpf/hashmap.bpf.c),
//! set up as upstream's bench_bpf_hashmap_full_update.c and
//! bench_bpf_hashmap_lookup.c set them up; the program times its own runs,
//! which become the results' timed figures.

use crate::bpf::{skel::hashmap::HashmapSkelBuilder, Failure};
use crate::caps::Feature;
use crate::matrix::{mapped, open_failed, Ctx};
use crate::options::RunOptions;
use crate::registry::{Bench, Reporter};
use crate::sampler::{counters::BpfSlots, Measured};
use libbpf_rs::skel::{Skel, SkelBuilder};
use libbpf_rs::{libbpf_sys, MapCore, MapFlags, OpenMapMut};
use std::mem::MaybeUninit;
use trig_schema::Figures;

/// Entries of its full map (FULL_ENTRIES of bpf/hashmap.bpf.c).
const FULL_ENTRIES: u32 = 1000;

/// Operations a run in upstream's bench, which `bench` keeps:
/// bpf-hashmap-full-update's updates (MAX_LOOP_NUM, no knob there) and
/// bpf-hashmap-lookup's lookups. Runs that long (4 * 10^6 and 10^8
/// instructions) hold a one-CPU guest's sampler back until they end, so
/// a sample holds a whole number of them and its rate moves by one in
/// the few a sample holds (seen: 2.3% from sample to sample, the mean
/// of the samples 4% above what the runs' own timing allows).
pub const UPSTREAM_FULL_UPDATES: u32 = 10_000;
pub const UPSTREAM_LOOKUPS: u32 = 1_000_000;
/// The matrix's, where `--nr_loops` does not say: runs of about 4 * 10^5
/// instructions (5 rounds of 500 lookups).
const MATRIX_FULL_UPDATES: u32 = 1_000;
const MATRIX_LOOKUPS: u32 = 2_500;

/// bpf-hashmap-lookup's knobs, upstream's defaults where not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup {
    pub key_size: u32,
    pub map_flags: u32,
    pub max_entries: u32,
    pub nr_entries: u32,
    /// Lookups a run, of which whole rounds of `nr_entries` are made.
    pub nr_loops: u32,
}

impl Lookup {
    pub fn of(opts: &RunOptions) -> Lookup {
        Lookup {
            key_size: opts.key_size.unwrap_or(4),
            map_flags: opts.map_flags.unwrap_or(0),
            max_entries: opts.max_entries.unwrap_or(1000),
            nr_entries: opts.nr_entries.unwrap_or(500),
            nr_loops: opts.nr_loops.unwrap_or(MATRIX_LOOKUPS),
        }
    }

    /// The rounds of `nr_entries` lookups a run makes.
    fn rounds(&self) -> u32 {
        self.nr_loops / self.nr_entries
    }
}

fn is_lookup(bench: &Bench) -> bool {
    bench.reporter == Reporter::Lookup
}

/// Makes the map a resizable one where the benchmark is `bpf-rhashmap-*`,
/// with the flag it requires (upstream's rhash_setup); returns the flags
/// the map then takes.
fn map_type(bench: &Bench, map: &mut OpenMapMut, flags: u32) -> Result<u32, Failure> {
    if bench.feature != Feature::ResizableHash {
        return Ok(flags);
    }
    super::make_resizable(map)?;
    Ok(flags | libbpf_sys::BPF_F_NO_PREALLOC)
}

/// bpf-hashmap-full-update's updates a run.
fn full_updates(opts: &RunOptions) -> u32 {
    opts.nr_loops.unwrap_or(MATRIX_FULL_UPDATES)
}

/// Operations a getpgid() makes: a run's updates, or its rounds of
/// lookups.
pub fn per_syscall(bench: &Bench, opts: &RunOptions) -> u64 {
    match is_lookup(bench) {
        true => {
            let l = Lookup::of(opts);
            u64::from(l.rounds()) * u64::from(l.nr_entries)
        }
        false => u64::from(full_updates(opts)),
    }
}

/// Operations one update of the program's count adds: a run, or a
/// round of lookups.
pub fn grain(bench: &Bench, opts: &RunOptions) -> u64 {
    match is_lookup(bench) {
        true => u64::from(Lookup::of(opts).nr_entries),
        false => u64::from(full_updates(opts)),
    }
}

/// What each result records of the knobs.
pub fn extra(bench: &Bench, opts: &RunOptions) -> Vec<(String, String)> {
    let pairs = match is_lookup(bench) {
        true => {
            let l = Lookup::of(opts);
            vec![
                ("key_size", l.key_size.to_string()),
                ("map_flags", format!("{:#x}", l.map_flags)),
                ("max_entries", l.max_entries.to_string()),
                ("nr_entries", l.nr_entries.to_string()),
                ("nr_loops", l.nr_loops.to_string()),
            ]
        }
        false => vec![("nr_loops", full_updates(opts).to_string())],
    };
    pairs.into_iter().map(|(k, v)| (k.into(), v)).collect()
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let lookup = is_lookup(ctx.bench()).then(|| Lookup::of(ctx.opts));
    if let Some(l) = lookup.filter(|l| l.nr_entries > l.max_entries) {
        return Err(Failure::Failed(format!(
            "args.nr_entries is too big! (max {}, got {})",
            l.max_entries, l.nr_entries
        )));
    }
    let mut obj = MaybeUninit::uninit();
    let mut open = HashmapSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let sized = |e| Failure::Failed(format!("sizing the map: {e:#}"));
    if let Some(l) = lookup {
        let map = &mut open.maps.lookup_map;
        map.set_max_entries(l.max_entries).map_err(sized)?;
        map.set_key_size(l.key_size).map_err(sized)?;
        let flags = map_type(ctx.bench(), map, l.map_flags)?;
        map.set_map_flags(flags).map_err(sized)?;
    } else {
        let map = &mut open.maps.full_map;
        let flags = map_type(ctx.bench(), map, 0)?;
        map.set_map_flags(flags).map_err(sized)?;
    }
    let progs = ctx.bench().programs(ctx.opts.stacktrace);
    let mut skel = crate::bpf::load(open, &progs, ctx.bench(), ctx.caps)?;
    let updates = full_updates(ctx.opts);
    fill(&mut skel, lookup, updates)
        .map_err(|e| Failure::Failed(format!("filling the map: {e:#}")))?;
    let bss = mapped(skel.maps.bss_data.as_deref_mut(), ".bss")?;
    // SAFETY: `counter` starts with its u64; the skeleton outlives the
    // measurement.
    let slots = unsafe { BpfSlots::new(&mut bss.hits) };
    let mut measured = ctx.attach_and_measure(skel.object(), None, slots)?;
    let bss = mapped(skel.maps.bss_data.as_deref(), ".bss")?;
    let rings = bss.times.iter().map(|t| (&t.ns[..], t.runs));
    let runs = crate::matrix::ring_runs(rings, ctx.opts.clock());
    measured.figures = Figures::timed(runs, per_syscall(ctx.bench(), ctx.opts));
    Ok(measured)
}

/// Sets the runs' sizes and fills the map, as upstream does: the full
/// map with keys 0..1000, or the lookup's `nr_entries` keys (the index
/// from 1, then upstream's fixed words) with their index as the value.
fn fill(
    skel: &mut crate::bpf::skel::hashmap::HashmapSkel,
    lookup: Option<Lookup>,
    updates: u32,
) -> libbpf_rs::Result<()> {
    let bss = skel.maps.bss_data.as_deref_mut().expect("a .bss");
    let Some(l) = lookup else {
        bss.nr_loops = updates;
        for i in 0..FULL_ENTRIES {
            let value = u64::from(i);
            skel.maps
                .full_map
                .update(&i.to_ne_bytes(), &value.to_ne_bytes(), MapFlags::ANY)?;
        }
        return Ok(());
    };
    bss.nr_loops = l.rounds();
    bss.nr_entries = l.nr_entries;
    for (i, word) in bss
        .key
        .iter_mut()
        .enumerate()
        .skip(1)
        .take((l.key_size as usize / 4).saturating_sub(1))
    {
        *word = 2_654_435_761u32.wrapping_mul(i as u32);
    }
    let mut key: Vec<u8> = bss.key.iter().flat_map(|w| w.to_ne_bytes()).collect();
    key.truncate(l.key_size as usize);
    for i in 0..l.nr_entries {
        let index = (i + 1).to_ne_bytes();
        let n = index.len().min(key.len());
        key[..n].copy_from_slice(&index[..n]);
        skel.maps
            .lookup_map
            .update(&key, &u64::from(i).to_ne_bytes(), MapFlags::ANY)?;
    }
    Ok(())
}
