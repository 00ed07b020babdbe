//! What a report records of the run options: the type is the schema's,
//! the values come from the options table (`init/guest/options.rs`, each row's
//! `record`), so that readers of reports need not know the options.

use serde::{Deserialize, Serialize};

/// The knobs a run used; two reports are comparable only if their
/// [`Params::signature`]s match.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Params {
    pub filter: Vec<String>,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// The measured window was lengthened to hold this many updates of the
    /// count, up to twice `duration_s` (0: `duration_s` exactly).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_counts: u32,
    pub producers: Vec<usize>,
    pub affinity: bool,
    pub batch_iters: u32,
    /// The loop benchmarks' iterations a call, where not each one's
    /// default (`--nr_loops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_loops: Option<u32>,
    /// The Bloom filter benchmarks' entries, hash functions and value
    /// size, where not upstream's defaults (`--nr_entries`,
    /// `--nr_hash_funcs`, `--value_size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_entries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_hash_funcs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_size: Option<u32>,
    /// bpf-hashmap-lookup's key size, map flags and map size, where not
    /// upstream's defaults (`--key_size`, `--map_flags`, `--max_entries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_flags: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_entries: Option<u32>,
    /// The local storage benchmarks' maps and the hash map control's
    /// keys, where not their defaults (`--nr_maps`,
    /// `--hashmap_nr_keys_used`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_maps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hashmap_nr_keys_used: Option<u32>,
    /// The LPM trie's prefix length where not 32 (`--prefix_len`), and its
    /// keys taken at random (`--random`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_len: Option<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random: bool,
    /// htab-mem's value size, use case and preallocation, where not
    /// upstream's defaults (`--value-size`, `--use-case`,
    /// `--preallocated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub htab_value_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_case: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preallocated: bool,
    pub cmp_str_lens: Vec<u32>,
    pub rename_thread: String,
    pub timeout_s: u32,
    /// A deliberate slowdown (`BENCH:SPINS`), for validating comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject: Option<String>,
    /// The producers' CPUs (`--prod-affinity`), as a CPU set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prod_affinity: Option<String>,
    /// The programs walked the kernel stack on every event (`--stacktrace`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stacktrace: bool,
}

fn sorted<T: Ord + Clone>(points: &[T]) -> Vec<T> {
    let mut v = points.to_vec();
    v.sort_unstable();
    v
}

pub(crate) fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Params {
    /// The benchmarks asked for, as one value: the filters in any order,
    /// or the default selection.
    pub fn benchmark_set(&self) -> String {
        let mut f: Vec<&str> = self.filter.iter().map(String::as_str).collect();
        f.sort_unstable();
        f.dedup();
        if f.is_empty() {
            "default".into()
        } else {
            f.join(" ")
        }
    }

    /// Whether `self` and `other` are two parts of one split run: equal
    /// but in their watchdog, which counts each part's own points.
    pub fn same_run(&self, other: &Params) -> bool {
        let run_of = |p: &Params| Params {
            timeout_s: 0,
            ..p.clone()
        };
        run_of(self) == run_of(other)
    }

    /// A split run's parameters from its parts' (which [`Params::same_run`]
    /// found the same): the first's, with the longest watchdog of theirs.
    pub fn of_parts<'a>(parts: impl IntoIterator<Item = &'a Params>) -> Option<Params> {
        parts.into_iter().fold(None, |run: Option<Params>, p| {
            Some(match run {
                None => p.clone(),
                Some(run) => Params {
                    timeout_s: run.timeout_s.max(p.timeout_s),
                    ..run
                },
            })
        })
    }

    /// The recorded parameters that must match for two reports' figures
    /// to be comparable, as `compare` names them. The points of `-p` and
    /// `--cmp-str-len` in either order are the same points: each result
    /// names its own.
    pub fn signature(&self) -> String {
        [
            format!("warmup {} s", self.warmup_s),
            format!("duration {} s", self.duration_s),
        ]
        .into_iter()
        // named only when set, as the knobs below
        .chain(
            (self.min_counts > 0)
                .then(|| format!("window lengthened to {} counts", self.min_counts)),
        )
        .chain([
            format!("producers {:?}", sorted(&self.producers)),
            format!("affinity {}", self.affinity),
            format!("batch iters {}", self.batch_iters),
            format!("string lengths {:?}", sorted(&self.cmp_str_lens)),
            format!("rename thread {}", self.rename_thread),
        ])
        // named only when set, so that results from before these knobs
        // keep their signature
        .chain(
            self.prod_affinity
                .as_ref()
                .map(|c| format!("producer CPUs {c}")),
        )
        .chain(
            self.stacktrace
                .then(|| "stack walked per event".to_string()),
        )
        .chain(self.nr_loops.map(|n| format!("{n} loop iterations a call")))
        .chain(self.nr_entries.map(|n| format!("{n} map entries")))
        .chain(self.nr_hash_funcs.map(|n| format!("{n} hash functions")))
        .chain(self.value_size.map(|n| format!("{n}-byte values")))
        .chain(self.key_size.map(|n| format!("{n}-byte keys")))
        .chain(self.map_flags.map(|n| format!("map flags {n:#x}")))
        .chain(self.max_entries.map(|n| format!("maps of {n} entries")))
        .chain(self.nr_maps.map(|n| format!("{n} local storage maps")))
        .chain(
            self.hashmap_nr_keys_used
                .map(|n| format!("{n} control keys")),
        )
        .chain(self.prefix_len.map(|n| format!("{n}-bit prefixes")))
        .chain(self.random.then(|| "random keys".to_string()))
        .chain(
            self.htab_value_size
                .map(|n| format!("{n}-byte htab-mem values")),
        )
        .chain(self.use_case.as_ref().map(|c| format!("use case {c}")))
        .chain(self.preallocated.then(|| "preallocated".to_string()))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

#[cfg(any(test, feature = "test-support"))]
impl Params {
    /// What a run of one benchmark at `trig-init run`'s defaults records
    /// (options.rs checks that it is), for the tests of what reads reports.
    pub fn run_defaults() -> Params {
        Params {
            filter: Vec::new(),
            warmup_s: 1.0,
            duration_s: 5.0,
            min_counts: 0,
            producers: vec![1],
            affinity: false,
            batch_iters: 100,
            nr_loops: None,
            nr_entries: None,
            nr_hash_funcs: None,
            value_size: None,
            key_size: None,
            map_flags: None,
            max_entries: None,
            nr_maps: None,
            hashmap_nr_keys_used: None,
            prefix_len: None,
            random: false,
            htab_value_size: None,
            use_case: None,
            preallocated: false,
            cmp_str_lens: vec![1, 8, 64, 512, 2048, 4095],
            rename_thread: "worker".into(),
            timeout_s: 76,
            inject: None,
            prod_affinity: None,
            stacktrace: false,
        }
    }
}
