//! Task local storage's cache against a hash map's lookup
//! (bpf/local_storage.bpf.c), set up as upstream's bench_local_storage.c
//! sets it up: `--nr_maps` inner maps in an array of maps, each getpgid()
//! `--nr_loops` gets of them in turn (upstream's 10,000, which `bench`
//! keeps; the matrix's 1000).

use crate::bpf::{skel::local_storage::LocalStorageSkelBuilder, Failure};
use crate::matrix::{mapped, open_failed, update_all, Ctx};
use crate::options::RunOptions;
use crate::registry::Bench;
use crate::sampler::{counters::BpfSlots, Measured};
use libbpf_rs::libbpf_sys;
use libbpf_rs::skel::{Skel, SkelBuilder};
use libbpf_rs::{AsRawLibbpf, MapHandle, MapType};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd};

/// Gets a getpgid() makes: upstream's (no knob there), and the matrix's
/// where `--nr_loops` does not say. At upstream's 10,000 a getpgid() is
/// 2 to 3 * 10^6 instructions, which a one-CPU guest's sampler waits for:
/// an icount sample held 6 to 13 of them and the rates moved 5% (0.3% for
/// the hash maps' 4 * 10^5); the syscall's own cost is then 0.2% of a
/// get's instead of 0.02%.
pub const UPSTREAM_GETS: u32 = 10_000;
const MATRIX_GETS: u32 = 1_000;

/// Keys a batch update of the control's maps carries.
const FILL_BATCH: u32 = 65_536;

/// What each benchmark asks of the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Case {
    use_hashmap: bool,
    interleave: bool,
}

impl Case {
    fn of(bench: &Bench) -> Case {
        Case {
            use_hashmap: bench.name.ends_with("hashmap-control"),
            interleave: bench.name.ends_with("int-get"),
        }
    }
}

/// The gets `bench` makes: of how many maps, of which keys (the
/// control's) and how many a getpgid(), its defaults where not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gets {
    pub nr_maps: u32,
    pub keys_used: u32,
    pub gets: u32,
}

/// Maps the get benchmarks cycle through: upstream's default, which
/// `bench` keeps, and the matrix's, where `--nr_maps` does not say. At
/// 1000 a getpgid() is 10^8 instructions of list walks (a sample of the
/// icount meter holds one or none); 17 is one more than a task's cache
/// holds, so that the cache's hits, its evictions and the walk all run.
pub const UPSTREAM_MAPS: u32 = 1000;
const MATRIX_MAPS: u32 = 17;

impl Gets {
    pub fn of(bench: &Bench, opts: &RunOptions) -> Gets {
        // the control runs with one map, as upstream's script runs it
        let default_maps = match Case::of(bench).use_hashmap {
            true => 1,
            false => MATRIX_MAPS,
        };
        Gets {
            nr_maps: opts.nr_maps.unwrap_or(default_maps),
            keys_used: opts.hashmap_nr_keys_used.unwrap_or(1000),
            gets: opts.nr_loops.unwrap_or(MATRIX_GETS),
        }
    }

    /// Whether `bench` cycles through maps of task storage, whose number
    /// upstream's bench defaults to [`UPSTREAM_MAPS`].
    pub fn gets_storage(bench: &Bench) -> bool {
        !Case::of(bench).use_hashmap
    }

    /// What each result records of them.
    pub fn extra(&self) -> Vec<(String, String)> {
        vec![
            ("nr_maps".into(), self.nr_maps.to_string()),
            ("hashmap_nr_keys_used".into(), self.keys_used.to_string()),
            ("nr_loops".into(), self.gets.to_string()),
        ]
    }
}

/// The hits and the important hits (gets of the first map) a getpgid()
/// makes: the interleaved case gets the first map again after every map
/// whose index is a multiple of 3.
pub fn per_syscall(bench: &Bench, opts: &RunOptions) -> (u64, u64) {
    let (case, knobs) = (Case::of(bench), Gets::of(bench, opts));
    let n = u64::from(knobs.nr_maps);
    (0..u64::from(knobs.gets))
        .map(|i| i % n)
        .fold((0, 0), |(hits, important), m| {
            let again = u64::from(case.interleave && m % 3 == 0);
            (hits + 1 + again, important + u64::from(m == 0) + again)
        })
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let (case, knobs) = (Case::of(ctx.bench()), Gets::of(ctx.bench(), ctx.opts));
    let mut obj = MaybeUninit::uninit();
    let mut open = LocalStorageSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let ro = mapped(open.maps.rodata_data.as_deref_mut(), ".rodata")?;
    ro.use_hashmap = u32::from(case.use_hashmap);
    ro.interleave = u32::from(case.interleave);
    ro.num_maps = knobs.nr_maps;
    ro.hashmap_num_keys = knobs.keys_used;
    ro.gets = knobs.gets;
    // the template's types, which libbpf drops once the outer map exists
    let types = match case.use_hashmap {
        true => template_types(&open.maps.hash_maps),
        false => template_types(&open.maps.local_storage_maps),
    }?;
    let progs = ctx.bench().programs(ctx.opts.stacktrace);
    let mut skel = crate::bpf::load(open, &progs, ctx.bench(), ctx.caps)?;
    let outer = match case.use_hashmap {
        true => &skel.maps.hash_maps,
        false => &skel.maps.local_storage_maps,
    };
    // kept open until the measurement ends (the outer map holds them too)
    let _inner = inner_maps(skel.object(), outer, types, case, knobs)?;
    let bss = mapped(skel.maps.bss_data.as_deref_mut(), ".bss")?;
    // SAFETY: `counter` starts with its u64; the skeleton outlives the
    // measurement.
    let slots = unsafe { BpfSlots::new(&mut bss.hits).with_important(&mut bss.important_hits) };
    ctx.attach_and_measure(skel.object(), None, slots)
}

/// The BTF key and value types of the inner map template of `outer`,
/// which task storage maps need.
fn template_types<T: AsRawLibbpf<LibbpfType = libbpf_sys::bpf_map>>(
    outer: &T,
) -> Result<(u32, u32), Failure> {
    // SAFETY: the pointer comes from the open object, which outlives this
    // call; libbpf only reads it.
    unsafe {
        let template = libbpf_sys::bpf_map__inner_map(outer.as_libbpf_object().as_ptr());
        if template.is_null() {
            return Err(Failure::Failed("no inner map template".into()));
        }
        Ok((
            libbpf_sys::bpf_map__btf_key_type_id(template),
            libbpf_sys::bpf_map__btf_value_type_id(template),
        ))
    }
}

/// Creates the `nr_maps` inner maps of `outer`'s kind (with the types of
/// its template, `types`), fills the control's with the keys it looks
/// up, and puts them into `outer`, as upstream's setup does.
fn inner_maps(
    obj: &libbpf_rs::Object,
    outer: &libbpf_rs::Map,
    types: (u32, u32),
    case: Case,
    knobs: Gets,
) -> Result<Vec<MapHandle>, Failure> {
    // SAFETY: zeroed opts with their size set are libbpf's empty options.
    let mut opts: libbpf_sys::bpf_map_create_opts = unsafe { std::mem::zeroed() };
    opts.sz = std::mem::size_of::<libbpf_sys::bpf_map_create_opts>() as _;
    // SAFETY: the loaded object outlives this call; libbpf only reads it.
    opts.btf_fd = unsafe { libbpf_sys::bpf_object__btf_fd(obj.as_libbpf_object().as_ptr()) } as u32;
    (opts.btf_key_type_id, opts.btf_value_type_id) = types;
    // the template's flags, which an inner map must share: no
    // preallocation for either
    opts.map_flags = libbpf_sys::BPF_F_NO_PREALLOC;
    // the control's maps full, as upstream's 4M-entry maps are, but of
    // the keys looked up alone: as many keys a bucket (about one), and
    // what upstream's are not, small (preallocated, each is 320 MiB,
    // more than a guest has, and 64 MiB of buckets even empty, whose
    // freeing after the run took 7% of the next benchmark's window)
    let (kind, entries) = match case.use_hashmap {
        true => (MapType::Hash, knobs.keys_used),
        false => (MapType::TaskStorage, 0),
    };
    let failed =
        |what: String| move |e: libbpf_rs::Error| Failure::Failed(format!("{what}: {e:#}"));
    let maps = (0..knobs.nr_maps)
        .map(|i| {
            let map = MapHandle::create(kind, None::<&str>, 4, 4, entries, &opts)
                .map_err(failed(format!("Error creating map {i}")))?;
            if case.use_hashmap {
                fill(&map, knobs.keys_used)
                    .map_err(failed("Error prepopulating hashmap".into()))?;
            }
            Ok(map)
        })
        .collect::<Result<Vec<MapHandle>, Failure>>()?;
    // in one batch: an update of a map of maps from user space waits for
    // an RCU grace period (10 ms each here, 11 s for upstream's 1000),
    // a batch's for one at most; one at a time where batches are refused
    let keys: Vec<u8> = (0..knobs.nr_maps).flat_map(|i| i.to_ne_bytes()).collect();
    let fds: Vec<u8> = maps
        .iter()
        .flat_map(|m| m.as_fd().as_raw_fd().to_ne_bytes())
        .collect();
    update_all(outer, &keys, &fds, knobs.nr_maps)
        .map_err(|(i, e)| failed(format!("Error updating array-of-maps w/ map {i}"))(e))?;
    Ok(maps)
}

/// The control's keys 0..`keys`, each its own value, in batches (upstream
/// fills its maps one update a key).
fn fill(map: &MapHandle, keys: u32) -> libbpf_rs::Result<()> {
    let mut from = 0;
    while from < keys {
        let n = FILL_BATCH.min(keys - from);
        let bytes: Vec<u8> = (from..from + n).flat_map(|k| k.to_ne_bytes()).collect();
        update_all(map, &bytes, &bytes, n).map_err(|(_, e)| e)?;
        from += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    fn bench(name: &str) -> &'static Bench {
        registry::find(name).unwrap()
    }

    fn with_maps(n: u32) -> RunOptions {
        RunOptions {
            nr_maps: Some(n),
            nr_loops: Some(UPSTREAM_GETS),
            ..RunOptions::default()
        }
    }

    #[test]
    fn hits_a_syscall_are_upstreams() {
        // one map: every get is the first map's; interleaved, twice each
        let seq = bench("local-storage-cache-seq-get");
        let int = bench("local-storage-cache-int-get");
        assert_eq!(per_syscall(seq, &with_maps(1)), (10_000, 10_000));
        assert_eq!(per_syscall(int, &with_maps(1)), (20_000, 20_000));
        // 1000 maps: 10 of the first; every third map again
        assert_eq!(per_syscall(seq, &with_maps(1000)), (10_000, 10));
        assert_eq!(per_syscall(int, &with_maps(1000)), (13_340, 3_350));
    }

    #[test]
    fn the_control_runs_one_map_unless_asked() {
        let control = bench("local-storage-cache-hashmap-control");
        let k = Gets::of(control, &RunOptions::default());
        assert_eq!((k.nr_maps, k.keys_used, k.gets), (1, 1000, 1000));
        assert_eq!(Gets::of(control, &with_maps(3)).nr_maps, 3);
        let seq = bench("local-storage-cache-seq-get");
        assert_eq!(Gets::of(seq, &RunOptions::default()).nr_maps, 17);
        assert!(Case::of(control).use_hashmap && !Case::of(control).interleave);
    }
}
