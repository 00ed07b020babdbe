//! Bloom filter maps, and a hash map with one in front and without
//! (bpf/bloom.bpf.c): the maps sized and filled as upstream's
//! bench_bloom_filter_map.c fills them, from a seeded generator instead of
//! getrandom(), so that a benchmark's entries, and with the maps' zero hash
//! seeds its figures, are the same whatever ran before it in a boot.

use crate::bpf::{skel::bloom::BloomSkelBuilder, Failure};
use crate::matrix::{mapped, open_failed, Ctx};
use crate::options::RunOptions;
use crate::registry::Bench;
use crate::sampler::{counters::BpfSlots, Measured};
use libbpf_rs::skel::{Skel, SkelBuilder};
use libbpf_rs::{ErrorKind, MapCore, MapFlags};
use std::mem::MaybeUninit;

/// Random lookups a run of the hash map benchmarks (LOOKUPS of
/// bpf/bloom.bpf.c).
pub const LOOKUPS: u64 = 1024;

/// The family's knobs, upstream's defaults where not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    pub nr_entries: u32,
    pub nr_hash_funcs: u32,
    pub value_size: u32,
}

impl Knobs {
    pub fn of(opts: &RunOptions) -> Knobs {
        Knobs {
            nr_entries: opts.nr_entries.unwrap_or(1000),
            nr_hash_funcs: opts.nr_hash_funcs.unwrap_or(3),
            value_size: opts.value_size.unwrap_or(8),
        }
    }

    /// As each result records them.
    pub fn extra(&self) -> [(String, String); 3] {
        [
            ("nr_entries".into(), self.nr_entries.to_string()),
            ("nr_hash_funcs".into(), self.nr_hash_funcs.to_string()),
            ("value_size".into(), self.value_size.to_string()),
        ]
    }
}

/// What a benchmark fills and asks, upstream's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Case {
    /// The values to walk are in the array (bloom-lookup, bloom-update),
    /// else the hash map holds them.
    array: bool,
    /// The hash map's lookups ask the filter first.
    use_bloom: bool,
    count_false_hits: bool,
}

impl Case {
    fn of(bench: &Bench) -> Case {
        let (array, use_bloom, count_false_hits) = match bench.name {
            "bloom-lookup" | "bloom-update" => (true, false, false),
            "bloom-false-positive" => (false, true, true),
            "hashmap-with-bloom" => (false, true, false),
            _ => (false, false, false),
        };
        Case {
            array,
            use_bloom,
            count_false_hits,
        }
    }
}

/// Events a getpgid() makes: an operation on every entry, or the hash
/// map's lookups.
pub fn per_syscall(bench: &Bench, opts: &RunOptions) -> u64 {
    match Case::of(bench).array {
        true => u64::from(Knobs::of(opts).nr_entries),
        false => LOOKUPS,
    }
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let (knobs, case) = (Knobs::of(ctx.opts), Case::of(ctx.bench()));
    let mut obj = MaybeUninit::uninit();
    let mut open = BloomSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let ro = mapped(open.maps.rodata_data.as_deref_mut(), ".rodata")?;
    ro.value_size = knobs.value_size;
    ro.hashmap_use_bloom = case.use_bloom;
    ro.count_false_hits = case.count_false_hits;
    let maps = &mut open.maps;
    let sized = |e| Failure::Failed(format!("sizing the maps: {e:#}"));
    for map in [&mut maps.array_map, &mut maps.bloom_map, &mut maps.hashmap] {
        map.set_max_entries(knobs.nr_entries).map_err(sized)?;
        map.set_value_size(knobs.value_size).map_err(sized)?;
    }
    maps.hashmap.set_key_size(knobs.value_size).map_err(sized)?;
    maps.bloom_map
        .set_map_extra(u64::from(knobs.nr_hash_funcs))
        .map_err(sized)?;
    let progs = ctx.bench().programs(ctx.opts.stacktrace);
    let mut skel = crate::bpf::load(open, &progs, ctx.bench(), ctx.caps)?;
    fill(&skel, &knobs, case).map_err(|e| Failure::Failed(format!("filling the maps: {e:#}")))?;
    let bss = mapped(skel.maps.bss_data.as_deref_mut(), ".bss")?;
    Values::new(LOOKED_UP).fill(&mut bss.rand_vals);
    // SAFETY: `counter` starts with its u64; the skeleton outlives the
    // measurement.
    let slots =
        unsafe { BpfSlots::new(&mut bss.hits).with_outcomes(&mut bss.drops, &mut bss.false_hits) };
    let measured = ctx.attach_and_measure(skel.object(), None, slots)?;
    match skel.maps.bss_data.as_deref().map_or(0, |b| b.error) {
        0 => Ok(measured),
        error => Err(Failure::Failed(format!(
            "error ({error}) when searching the bloom filter"
        ))),
    }
}

/// Fills the maps as upstream's populate_maps() does: `nr_entries`
/// distinct values, into the array by index, into the hash map as their
/// own keys, and into the filter where it is asked.
fn fill(
    skel: &crate::bpf::skel::bloom::BloomSkel,
    knobs: &Knobs,
    case: Case,
) -> libbpf_rs::Result<()> {
    let maps = &skel.maps;
    let mut values = Values::new(ENTRIES);
    let mut value = vec![0; knobs.value_size as usize];
    for i in 0..knobs.nr_entries {
        loop {
            values.fill(&mut value);
            if case.array {
                break;
            }
            match maps.hashmap.update(&value, &value, MapFlags::NO_EXIST) {
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                other => break other?,
            }
        }
        if case.array {
            maps.array_map
                .update(&i.to_ne_bytes(), &value, MapFlags::ANY)?;
        }
        if case.array || case.use_bloom {
            maps.bloom_map.update(&[], &value, MapFlags::ANY)?;
        }
    }
    Ok(())
}

/// The seeds of the maps' entries and of the keys looked up, apart: the
/// same stream would look the entries up.
const ENTRIES: u64 = 0x7472_6967_2d69_6e69;
const LOOKED_UP: u64 = 0x626c_6f6f_6d2d_6b65;

/// A seeded generator of bytes (splitmix64): the same stream every run.
struct Values(u64);

impl Values {
    fn new(seed: u64) -> Values {
        Values(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn fill(&mut self, bytes: &mut [u8]) {
        for chunk in bytes.chunks_mut(8) {
            let word = self.next().to_ne_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn each_benchmark_fills_and_asks_as_upstreams() {
        let case = |name| Case::of(find(name).unwrap());
        assert!(case("bloom-lookup").array && case("bloom-update").array);
        assert!(case("bloom-false-positive").count_false_hits);
        assert!(case("hashmap-with-bloom").use_bloom);
        let without = case("hashmap-without-bloom");
        assert!(!without.array && !without.use_bloom);
        let opts = RunOptions {
            nr_entries: Some(5000),
            ..RunOptions::default()
        };
        assert_eq!(per_syscall(find("bloom-update").unwrap(), &opts), 5000);
        assert_eq!(
            per_syscall(find("hashmap-with-bloom").unwrap(), &opts),
            1024
        );
    }

    #[test]
    fn the_values_are_the_same_every_run_and_differ() {
        let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
        Values::new(ENTRIES).fill(&mut a);
        Values::new(ENTRIES).fill(&mut b);
        assert_eq!(a, b);
        Values::new(LOOKED_UP).fill(&mut b);
        assert_ne!(a, b);
        let mut v = Values::new(ENTRIES);
        let draws: std::collections::HashSet<u64> = (0..1000).map(|_| v.next()).collect();
        assert_eq!(draws.len(), 1000);
    }
}
