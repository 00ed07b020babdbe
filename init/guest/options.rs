//! Run options: what to run and how, from the command line of `trig-init
//! run` or from `trig.*` kernel parameters, which the host writes with
//! [`RunOptions::to_kernel_args`] and the guest reads back. Every option
//! is one row of the table below, from which the flag, the parameter,
//! the check and the value recorded in the report's [`Params`] all come
//! (that type, and compare's signature of it, are the report schema's).

use crate::clock::Clock;
use crate::part::Part;
use trig_schema::error::{usage, Error};
use trig_schema::Params;

pub const DEFAULT_STR_LENS: &[u32] = &[1, 8, 64, 512, 2048, 4095];
pub const MAX_STR_LEN: u32 = 4095;
/// Bounds of `-w` and `-d`: an hour each is more than any benchmark wants,
/// and keeps every derived figure (samples, watchdog) far from overflow.
pub const MAX_SECONDS: f64 = 3600.0;
/// Below a millisecond the sampling thread's own wake-ups dominate.
pub const MIN_DURATION: f64 = 0.001;
/// A thread each: more than the kernel's largest CPU count (NR_CPUS) is
/// a typo, not a scaling run.
pub const MAX_PRODUCERS: usize = MAX_CPU + 1;
/// A million counts is more than any meter needs.
pub const MAX_MIN_COUNTS: u32 = 1_000_000;
/// A window `--min-counts` lengthens is at most this many times -d long,
/// whatever the count asks: the icount default's is never longer than the
/// 0.2 s it was before.
pub const MAX_STRETCH: f64 = 2.0;
/// The most `trig.icount_shift` (and `vm --icount-shift`) takes: at 16
/// ns an instruction a 250 Hz tick comes every 250,000 instructions
/// already; past it the kernel's tick work would crowd the benchmarks.
pub const MAX_ICOUNT_SHIFT: u32 = 4;

/// The loops' iterations a call: bpf_loop() and bpf_for() do nothing past
/// the kernel's limit (BPF_MAX_LOOPS), which upstream's bench would count
/// all the same.
pub const MAX_NR_LOOPS: u32 = 1 << 23;

/// The Bloom filter map's most hash functions (the kernel's limit).
pub const MAX_HASH_FUNCS: u32 = 15;
/// The Bloom filter benchmarks' largest value, upstream's bound.
pub const MAX_VALUE_SIZE: u32 = 256;

/// bpf-hashmap-lookup's largest key, upstream's bound (its key buffer).
pub const MAX_KEY_SIZE: u32 = 1024;

/// The local storage benchmarks' most maps (upstream's outer map's size)
/// and the hash map control's most keys (its maps' size).
pub const MAX_NR_MAPS: u32 = 1000;
pub const MAX_HASHMAP_KEYS: u32 = 4_194_304;

/// htab-mem's largest value, upstream's bound (its zeroed value).
pub const MAX_HTAB_VALUE_SIZE: u32 = 4096;

/// htab-mem's use cases, upstream's names; the first the default.
pub const USE_CASES: [&str; 3] = ["overwrite", "batch_add_batch_del", "add_del_on_diff_cpu"];

/// A watchdog longer than a week is a typo.
pub const MAX_TIMEOUT: u32 = 7 * 24 * 3600;

/// Defines every run option from one row each: its `trig-init run` flag
/// (the `cli` part: help text, argh attributes, field), its field and
/// default in [`RunOptions`], its `trig.*` kernel parameter (`parse` and
/// `show`, by default its type's [`Param`] ones; `emit`, by default only
/// when not the default value), its `check`, and, for the ones a report
/// records, the value of its [`Params`] field. A row may lack the `cli`
/// part (set only by the host) or everything else (a flag of `run`
/// alone).
macro_rules! run_options {
    ($(
        {
            $( cli $(#[$cmeta:meta])* $cname:ident : [$($cty:tt)*] ; )?
            $(
                option $(#[$fmeta:meta])* $field:ident : $ty:ty = $default:expr ;
                key $key:ident ;
                $( parse $parse:expr ; )?
                $( show $show:expr ; )?
                $( emit $emit:expr ; )?
                $( check $check:expr ; )?
                $( record $pfield:ident = $record:expr ; )?
            )?
        }
    )*) => {
        /// Run benchmarks in the running kernel; JSON to stdout, summary to stderr.
        #[derive(argh::FromArgs, Debug, Default)]
        #[argh(subcommand, name = "run")]
        pub struct RunCmd {
            $($( $(#[$cmeta])* pub $cname: $($cty)*, )?)*
        }

        #[derive(Debug, Clone, PartialEq)]
        pub struct RunOptions {
            $($( $(#[$fmeta])* pub $field: $ty, )?)*
        }

        impl Default for RunOptions {
            fn default() -> Self {
                RunOptions { $($( $field: $default, )?)* }
            }
        }

        /// The `trig.*` keys, as [`RunOptions::set`] takes them.
        const KEYS: &[&str] = &[$($( stringify!($key), )?)*];

        /// The flags of `run`, named as their `trig.*` keys are.
        const FLAGS: &[&str] = &[$($( stringify!($cname), )?)*];

        impl RunCmd {
            /// The options these flags ask for, validated.
            pub fn options(&self) -> Result<RunOptions, Error> {
                let mut o = RunOptions::default();
                $($(
                    let key = stringify!($cname);
                    if let Some(v) = CliValue::given(&self.$cname).filter(|_| KEYS.contains(&key)) {
                        o.set(key, &v)?;
                    }
                )?)*
                o.validate()?;
                Ok(o)
            }
        }

        impl RunOptions {
            /// Applies one `key=value` option (the `trig.` prefix already removed).
            pub fn set(&mut self, key: &str, value: &str) -> Result<(), Error> {
                match key {
                    $($(
                        stringify!($key) => {
                            let parse: fn(&str, &str) -> Result<$ty, String> =
                                or_else!(<$ty as Param>::parse; $($parse)?);
                            self.$field = parse(key, value).map_err(usage)?;
                        }
                    )?)*
                    _ => return Err(usage(format!("unknown option trig.{key}"))),
                }
                Ok(())
            }

            /// The `trig.*` kernel parameters that reproduce these options:
            /// first the ones always written, then the others that differ
            /// from their defaults, each in table order.
            pub fn to_kernel_args(&self) -> Vec<String> {
                let default = RunOptions::default();
                let mut args = [Vec::new(), Vec::new()];
                $($(
                    let show: fn(&$ty) -> String = or_else!(<$ty as Param>::show; $($show)?);
                    match or_else!(Emit::IfChanged; $($emit)?) {
                        Emit::Always => args[0].push(format!("trig.{}={}", stringify!($key), show(&self.$field))),
                        Emit::IfChanged if self.$field != default.$field => {
                            args[1].push(format!("trig.{}={}", stringify!($key), show(&self.$field)))
                        }
                        Emit::IfChanged => {}
                    }
                )?)*
                args.concat()
            }

            pub fn validate(&self) -> Result<(), Error> {
                $($(
                    let check: fn(&$ty) -> Result<(), String> = or_else!(any; $($check)?);
                    check(&self.$field).map_err(usage)?;
                )?)*
                self.check_prod_affinity()
                    .and_then(|()| self.check_unique_values())
                    .map_err(usage)
            }

            /// What a report records of these options, with the watchdog
            /// for `points` benchmark runs.
            pub fn params(&self, points: usize) -> Params {
                Params {
                    $($($(
                        $pfield: {
                            let record: fn(&RunOptions, usize) -> _ = $record;
                            record(self, points)
                        },
                    )?)?)*
                }
            }
        }
    };
}

/// The row's own expression, or the default.
macro_rules! or_else {
    ($default:expr;) => {
        $default
    };
    ($default:expr; $given:expr) => {
        $given
    };
}

/// When [`RunOptions::to_kernel_args`] writes an option.
enum Emit {
    Always,
    IfChanged,
}

/// A `run` flag's value as `set` takes it, if the flag was given.
trait CliValue {
    fn given(&self) -> Option<String>;
}

impl CliValue for bool {
    fn given(&self) -> Option<String> {
        self.then(|| "1".into())
    }
}

impl CliValue for String {
    fn given(&self) -> Option<String> {
        Some(self.clone())
    }
}

impl CliValue for Vec<String> {
    fn given(&self) -> Option<String> {
        (!self.is_empty()).then(|| self.join(","))
    }
}

impl<T: ToString> CliValue for Option<T> {
    fn given(&self) -> Option<String> {
        self.as_ref().map(ToString::to_string)
    }
}

/// How an option's type reads and writes a `trig.*` parameter's value.
trait Param: Sized {
    fn parse(key: &str, value: &str) -> Result<Self, String>;
    fn show(&self) -> String;
}

/// A switch: written as 1, read as 1, true or yes.
impl Param for bool {
    fn parse(_: &str, v: &str) -> Result<Self, String> {
        Ok(matches!(v, "1" | "true" | "yes"))
    }
    fn show(&self) -> String {
        "1".into()
    }
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Param for $t {
            fn parse(key: &str, v: &str) -> Result<Self, String> {
                num(key, v)
            }
            fn show(&self) -> String {
                self.to_string()
            }
        }

        /// A comma-separated list.
        impl Param for Vec<$t> {
            fn parse(key: &str, v: &str) -> Result<Self, String> {
                list(key, v)
            }
            fn show(&self) -> String {
                joined(self)
            }
        }
    )*};
}

numbers!(f64, u32, usize);

/// A number that has no default of its own: each benchmark's applies
/// (emitted only when set).
impl Param for Option<u32> {
    fn parse(key: &str, v: &str) -> Result<Self, String> {
        num(key, v).map(Some)
    }
    fn show(&self) -> String {
        self.map_or_else(String::new, |n| n.to_string())
    }
}

/// Benchmark names or globs, comma-separated.
impl Param for String {
    fn parse(_: &str, v: &str) -> Result<Self, String> {
        Ok(v.to_string())
    }
    fn show(&self) -> String {
        self.clone()
    }
}

impl Param for Vec<String> {
    fn parse(_: &str, v: &str) -> Result<Self, String> {
        Ok(v.split(',').map(str::to_string).collect())
    }
    fn show(&self) -> String {
        self.join(",")
    }
}

/// `I/N`.
impl Param for Part {
    fn parse(key: &str, v: &str) -> Result<Self, String> {
        Part::parse(v).map_err(|e| format!("{key}: {e}"))
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

/// `BENCH:SPINS,...`.
impl Param for Vec<Inject> {
    fn parse(_: &str, v: &str) -> Result<Self, String> {
        v.split(',')
            .filter(|s| !s.is_empty())
            .map(parse_inject)
            .collect()
    }
    fn show(&self) -> String {
        joined(self)
    }
}

fn joined<T: std::fmt::Display>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(ToString::to_string).collect();
    items.join(",")
}

/// `what` is `v` seconds, which must be in `lo..=MAX_SECONDS`.
fn seconds_in(what: &str, v: f64, lo: f64) -> Result<(), String> {
    if (lo..=MAX_SECONDS).contains(&v) {
        Ok(())
    } else {
        Err(format!("{what} {v} s is not in {lo}..{MAX_SECONDS} s"))
    }
}

fn any<T>(_: &T) -> Result<(), String> {
    Ok(())
}

run_options! {
    {
        cli
        /// benchmark name or glob (repeatable); default: all
        #[argh(option)]
        filter: [Vec<String>];
        option filter: Vec<String> = Vec::new();
        key filter;
        check |patterns| {
            match patterns.iter().find(|p| p.is_empty() || p.contains(char::is_whitespace)) {
                Some(p) => Err(format!("invalid benchmark filter '{p}'")),
                None => Ok(()),
            }
        };
        record filter = |o, _| o.filter.clone();
    }
    {
        cli
        /// warm-up seconds, fractions allowed (default 1)
        #[argh(option, short = 'w')]
        warmup: [Option<String>];
        option
        /// Seconds; fractions allowed (sub-second runs suit the icount meter).
        warmup: f64 = 1.0;
        key warmup;
        emit Emit::Always;
        check |&w| seconds_in("warmup", w, 0.0);
        record warmup_s = |o, _| o.warmup;
    }
    {
        cli
        /// measured seconds, fractions allowed (default 5; vm's under the
        /// icount meter: 0.1, with --min-counts 10000)
        #[argh(option, short = 'd')]
        duration: [Option<String>];
        option duration: f64 = 5.0;
        key duration;
        emit Emit::Always;
        check |&d| seconds_in("duration", d, MIN_DURATION);
        record duration_s = |o, _| o.duration;
    }
    {
        cli
        /// producer counts, e.g. 1,2,4,8 (default 1)
        #[argh(option, short = 'p')]
        producers: [Option<String>];
        option producers: Vec<usize> = vec![1];
        key producers;
        emit Emit::Always;
        check |p| match p.iter().find(|&&n| n == 0 || n > MAX_PRODUCERS) {
            Some(n) => Err(format!("producers {n} is out of range (1 to {MAX_PRODUCERS})")),
            None if p.is_empty() => Err("producers: no count given".into()),
            None => Ok(()),
        };
        record producers = |o, _| o.producers.clone();
    }
    {
        cli
        /// pin producers to CPUs round-robin
        #[argh(switch, short = 'a')]
        affinity: [bool];
        option affinity: bool = false;
        key affinity;
        record affinity = |o, _| o.affinity || !o.prod_affinity.is_empty();
    }
    {
        cli
        /// pin producer i to the i-th CPU of this set, e.g. 0-3,6 (implies
        /// -a; a producer without a CPU of its own is an error)
        #[argh(option)]
        prod_affinity: [Option<String>];
        option
        /// The CPUs of `--prod-affinity`, in order; empty: round-robin over
        /// all (with `-a`) or unpinned.
        prod_affinity: Vec<usize> = Vec::new();
        key prod_affinity;
        parse |_, v| parse_cpu_set(v);
        show |cpus| cpu_set_text(cpus);
        record prod_affinity = |o, _| (!o.prod_affinity.is_empty()).then(|| cpu_set_text(&o.prod_affinity));
    }
    {
        cli
        /// the kprobe, kretprobe, multi, fentry, fexit, fmodret, tp and
        /// rawtp programs also call bpf_get_stack() on every event
        #[argh(switch)]
        stacktrace: [bool];
        option
        /// Measure with the programs' twins that walk the kernel stack.
        stacktrace: bool = false;
        key stacktrace;
        record stacktrace = |o, _| o.stacktrace;
    }
    {
        cli
        /// lengthen each measured window until it holds this many updates
        /// of the count (events, or the producers' batches where they
        /// count), at most twice -d: the icount meter's default (10000,
        /// with -w 0.02 -d 0.1) bounds what an event cut at a window's
        /// ends moves a rate by to 0.01% where twice -d holds that many; 0
        /// (run's default): -d exactly
        #[argh(option)]
        min_counts: [Option<u32>];
        option min_counts: u32 = 0;
        key min_counts;
        check |&n| {
            if n <= MAX_MIN_COUNTS {
                Ok(())
            } else {
                Err(format!("min_counts {n} is above {MAX_MIN_COUNTS}"))
            }
        };
        record min_counts = |o, _| o.min_counts;
    }
    {
        cli
        /// driver loop iterations per BPF_PROG_TEST_RUN (default 100, 1..1000)
        #[argh(option)]
        batch_iters: [Option<u32>];
        option batch_iters: u32 = 100;
        key batch_iters;
        emit Emit::Always;
        check |&b| {
            if (1..=1000).contains(&b) {
                Ok(())
            } else {
                Err(format!("batch_iters {b} is not in 1..1000"))
            }
        };
        record batch_iters = |o, _| o.batch_iters;
    }
    {
        cli
        /// iterations a loop call of bpf-loop and bpf-for, operations a run
        /// of bpf-hashmap-full-update and -lookup (default: 10 and 1000,
        /// upstream's; 1000 and 2500, shorter runs than upstream's;
        /// 1..8388608)
        #[argh(option)]
        nr_loops: [Option<u32>];
        option
        /// The loop benchmarks' iterations a call; none: each one's default.
        nr_loops: Option<u32> = None;
        key nr_loops;
        check |n| match n {
            Some(n) if !(1..=MAX_NR_LOOPS).contains(n) => Err(format!(
                "nr_loops {n} is out of range (1 to {MAX_NR_LOOPS}: the kernel's loop limit)"
            )),
            _ => Ok(()),
        };
        record nr_loops = |o, _| o.nr_loops;
    }
    {
        cli
        /// the Bloom filter's entries and bpf-hashmap-lookup's keys
        /// (default 1000 and 500, upstream's; 1..4294967295)
        #[argh(option)]
        nr_entries: [Option<u32>];
        option
        /// The Bloom filter's entries; none: upstream's default.
        nr_entries: Option<u32> = None;
        key nr_entries;
        check |n| match n {
            Some(0) => Err("nr_entries 0 is out of range (1 to 4294967295)".into()),
            _ => Ok(()),
        };
        record nr_entries = |o, _| o.nr_entries;
    }
    {
        cli
        /// the Bloom filter's hash functions (default 3, upstream's; 1..15)
        #[argh(option)]
        nr_hash_funcs: [Option<u32>];
        option
        /// The Bloom filter's hash functions; none: upstream's default.
        nr_hash_funcs: Option<u32> = None;
        key nr_hash_funcs;
        check |n| match n {
            Some(n) if !(1..=MAX_HASH_FUNCS).contains(n) => Err(format!(
                "nr_hash_funcs {n} is out of range (1 to {MAX_HASH_FUNCS}: the filter's limit)"
            )),
            _ => Ok(()),
        };
        record nr_hash_funcs = |o, _| o.nr_hash_funcs;
    }
    {
        cli
        /// the Bloom filter benchmarks' value size in bytes (default 8,
        /// upstream's; 2..256)
        #[argh(option)]
        value_size: [Option<u32>];
        option
        /// The Bloom filter benchmarks' value size; none: upstream's default.
        value_size: Option<u32> = None;
        key value_size;
        check |n| match n {
            Some(n) if !(2..=MAX_VALUE_SIZE).contains(n) => Err(format!(
                "value_size {n} is out of range (2 to {MAX_VALUE_SIZE} bytes)"
            )),
            _ => Ok(()),
        };
        record value_size = |o, _| o.value_size;
    }
    {
        cli
        /// bpf-hashmap-lookup's key size in bytes (default 4, upstream's;
        /// 1..1024)
        #[argh(option)]
        key_size: [Option<u32>];
        option
        /// The hash map lookup's key size; none: upstream's default.
        key_size: Option<u32> = None;
        key key_size;
        check |n| match n {
            Some(n) if !(1..=MAX_KEY_SIZE).contains(n) => Err(format!(
                "key_size {n} is out of range (1 to {MAX_KEY_SIZE} bytes)"
            )),
            _ => Ok(()),
        };
        record key_size = |o, _| o.key_size;
    }
    {
        cli
        /// bpf-hashmap-lookup's map flags for BPF_MAP_CREATE, decimal or
        /// 0x hex (default 0)
        #[argh(option)]
        map_flags: [Option<String>];
        option
        /// The hash map lookup's map flags; none: upstream's default, 0.
        map_flags: Option<u32> = None;
        key map_flags;
        parse |key, v| parse_flags(key, v).map(Some);
        record map_flags = |o, _| o.map_flags;
    }
    {
        cli
        /// bpf-hashmap-lookup's map size (default 1000, upstream's;
        /// 1..4294967295)
        #[argh(option)]
        max_entries: [Option<u32>];
        option
        /// The hash map lookup's max entries; none: upstream's default.
        max_entries: Option<u32> = None;
        key max_entries;
        check |n| match n {
            Some(0) => Err("max_entries 0 is out of range (1 to 4294967295)".into()),
            _ => Ok(()),
        };
        record max_entries = |o, _| o.max_entries;
    }
    {
        cli
        /// the local storage benchmarks' maps (default 1000, upstream's; the
        /// hash map control 1, as run_bench_local_storage.sh; 1..1000)
        #[argh(option)]
        nr_maps: [Option<u32>];
        option
        /// The local storage benchmarks' maps; none: each one's default.
        nr_maps: Option<u32> = None;
        key nr_maps;
        check |n| match n {
            Some(n) if !(1..=MAX_NR_MAPS).contains(n) => Err(format!(
                "nr_maps {n} is out of range (1 to {MAX_NR_MAPS}: upstream's outer map)"
            )),
            _ => Ok(()),
        };
        record nr_maps = |o, _| o.nr_maps;
    }
    {
        cli
        /// the keys local-storage-cache-hashmap-control looks up (default
        /// 1000, upstream's; 1..4194304)
        #[argh(option)]
        hashmap_nr_keys_used: [Option<u32>];
        option
        /// The hash map control's keys; none: upstream's default.
        hashmap_nr_keys_used: Option<u32> = None;
        key hashmap_nr_keys_used;
        check |n| match n {
            Some(n) if !(1..=MAX_HASHMAP_KEYS).contains(n) => Err(format!(
                "hashmap_nr_keys_used {n} is out of range (1 to {MAX_HASHMAP_KEYS}: the map's size)"
            )),
            _ => Ok(()),
        };
        record hashmap_nr_keys_used = |o, _| o.hashmap_nr_keys_used;
    }
    {
        cli
        /// the LPM trie benchmarks' prefix length in bits (default 32,
        /// upstream's; 1..32)
        #[argh(option)]
        prefix_len: [Option<u32>];
        option
        /// The LPM trie's prefix length; none: upstream's default.
        prefix_len: Option<u32> = None;
        key prefix_len;
        check |n| match n {
            Some(n) if !(1..=32).contains(n) => Err(format!(
                "prefix_len {n} is out of range (1 to 32: the trie's keys are 32 bits)"
            )),
            _ => Ok(()),
        };
        record prefix_len = |o, _| o.prefix_len;
    }
    {
        cli
        /// the LPM trie benchmarks take their keys at random, not in turn
        /// (not insert or delete, as upstream's)
        #[argh(switch)]
        random: [bool];
        option
        /// The LPM trie's keys at random.
        random: bool = false;
        key random;
        record random = |o, _| o.random;
    }
    {
        cli
        /// htab-mem's value size in bytes (upstream's --value-size:
        /// default 8; 0..4096)
        #[argh(option)]
        htab_value_size: [Option<u32>];
        option
        /// htab-mem's value size; none: upstream's default.
        htab_value_size: Option<u32> = None;
        key htab_value_size;
        check |n| match n {
            Some(n) if *n > MAX_HTAB_VALUE_SIZE => Err(format!("too big value size {n}")),
            _ => Ok(()),
        };
        record htab_value_size = |o, _| o.htab_value_size;
    }
    {
        cli
        /// htab-mem's use case: overwrite (the default),
        /// batch_add_batch_del or add_del_on_diff_cpu (even producers)
        #[argh(option)]
        use_case: [Option<String>];
        option
        /// htab-mem's use case, upstream's name.
        use_case: String = USE_CASES[0].into();
        key use_case;
        check |c| match USE_CASES.contains(&c.as_str()) {
            true => Ok(()),
            false => Err(format!(
                "no such use-case: {c} (available use case: {})",
                USE_CASES.join(" ")
            )),
        };
        record use_case = |o, _| (o.use_case != USE_CASES[0]).then(|| o.use_case.clone());
    }
    {
        cli
        /// htab-mem's map preallocated (not rhtab-mem's, as upstream's)
        #[argh(switch)]
        preallocated: [bool];
        option
        /// htab-mem's map preallocated.
        preallocated: bool = false;
        key preallocated;
        record preallocated = |o, _| o.preallocated;
    }
    {
        cli
        /// strncmp string lengths, e.g. 32 or 1,64 (default sweep 1,8,64,512,2048,4095)
        #[argh(option)]
        cmp_str_len: [Option<String>];
        option cmp_str_lens: Vec<u32> = DEFAULT_STR_LENS.to_vec();
        key cmp_str_len;
        emit Emit::Always;
        check |lens| {
            if lens.is_empty() || lens.iter().any(|&l| l == 0 || l > MAX_STR_LEN) {
                Err(format!("cmp_str_len must be in 1..{MAX_STR_LEN}"))
            } else {
                Ok(())
            }
        };
        record cmp_str_lens = |o, _| o.cmp_str_lens.clone();
    }
    {
        cli
        /// rename producer thread: main or worker (default worker)
        #[argh(option)]
        rename_thread: [Option<String>];
        option
        /// Run the rename producer on the main thread instead of a worker.
        rename_on_main: bool = false;
        key rename_thread;
        parse |_, v| parse_rename_thread(v);
        show |&main| rename_thread_name(main).into();
        emit Emit::Always;
        record rename_thread = |o, _| o.rename_thread().into();
    }
    {
        cli
        /// overall watchdog in seconds (default: from the matrix size)
        #[argh(option)]
        timeout: [Option<u32>];
        option
        /// Overall watchdog in seconds; 0 picks one from the matrix size.
        timeout: u32 = 0;
        key timeout;
        check |&t| {
            if t > MAX_TIMEOUT {
                Err(format!("timeout {t} s is over {MAX_TIMEOUT} s"))
            } else {
                Ok(())
            }
        };
        record timeout_s = |o, points| o.watchdog_secs(points);
    }
    {
        cli
        /// where the JSON report goes: a path, or - for stdout (default)
        #[argh(option, default = "String::from(\"-\")")]
        json: [String];
    }
    {
        cli
        /// per-second progress lines and libbpf messages
        #[argh(switch, short = 'v')]
        verbose: [bool];
        option
        /// Per-second progress lines and libbpf's messages on stderr.
        verbose: bool = false;
        key verbose;
    }
    {
        cli
        /// also time a bare getpgid loop and report trig-base's counting cost
        #[argh(switch)]
        harness: [bool];
        option
        /// After the matrix, time a bare getpgid loop that counts nothing, to
        /// put trig-base's counting overhead in the report.
        harness: bool = false;
        key harness;
    }
    {
        option
        /// Which part of the selection this boot runs, when `vm --split`
        /// spreads one kernel's matrix over several boots (set by the
        /// host, not a flag of `run`; the report does not record it: the
        /// host merges the parts into one run).
        part: Part = Part::WHOLE;
        key part;
    }
    {
        option
        /// Mark each measured window for the QEMU plugin behind `vm
        /// --profile` (which sets it; not a flag of `run`), and hand the
        /// host the kernel's symbols.
        profile: bool = false;
        key profile;
    }
    {
        option
        /// QEMU's `-icount shift`: an instruction takes 2^shift ns of
        /// guest time (set by the host from `vm --icount-shift`; not a
        /// flag of `run`, and not in the report: the host records it with
        /// the machine). The sampler times in 10^9-instruction seconds
        /// whatever the shift ([`RunOptions::clock`]).
        icount_shift: u32 = 0;
        key icount_shift;
        check |&s| {
            if s <= MAX_ICOUNT_SHIFT {
                Ok(())
            } else {
                Err(format!("icount_shift {s} is above {MAX_ICOUNT_SHIFT}"))
            }
        };
    }
    {
        cli
        /// slow benchmarks down on purpose: BENCH:SPINS[,BENCH:SPINS...] spin
        /// iterations per triggered call (to validate comparisons)
        #[argh(option)]
        inject: [Option<String>];
        option
        /// Known slowdowns for validating comparisons: spin iterations per
        /// triggered call in the named benchmarks' producers.
        inject: Vec<Inject> = Vec::new();
        key inject;
        record inject = |o, _| (!o.inject.is_empty()).then(|| o.inject_list());
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Inject {
    pub bench: String,
    pub spins: u32,
}

impl std::fmt::Display for Inject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.bench, self.spins)
    }
}

fn parse_inject(v: &str) -> Result<Inject, String> {
    let (bench, spins) = v
        .rsplit_once(':')
        .ok_or_else(|| format!("inject: '{v}' is not BENCH:SPINS"))?;
    if crate::registry::find(bench).is_none() {
        return Err(format!("inject: unknown benchmark '{bench}'"));
    }
    Ok(Inject {
        bench: bench.into(),
        spins: num("inject", spins)?,
    })
}

/// The largest CPU number a set may name (the kernel's NR_CPUS limit).
const MAX_CPU: usize = 8191;

/// A CPU set as taskset and upstream's bench write it: `0-3,6`, each CPU
/// once, in the order given.
fn parse_cpu_set(v: &str) -> Result<Vec<usize>, String> {
    let bad = |why: &str| format!("prod_affinity '{v}': {why} (a CPU set such as 0-3,6)");
    let mut cpus = Vec::new();
    for part in v.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (Ok(lo), Ok(hi)) = (lo.trim().parse::<usize>(), hi.trim().parse::<usize>()) else {
            return Err(bad(&format!("'{part}' is not a CPU or a range")));
        };
        if lo > hi || hi > MAX_CPU {
            return Err(bad(&format!(
                "'{part}' is not a range of CPUs 0..{MAX_CPU}"
            )));
        }
        for cpu in lo..=hi {
            if cpus.contains(&cpu) {
                return Err(bad(&format!("CPU {cpu} is named twice")));
            }
            cpus.push(cpu);
        }
    }
    Ok(cpus)
}

/// `cpus` written back as a set, consecutive runs as ranges.
pub fn cpu_set_text(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A comma-separated list of points, each named once: an empty entry
/// (`1,,2`) is a slip, and a point named twice would run twice under one
/// name.
fn list<T: std::str::FromStr + PartialEq>(key: &str, v: &str) -> Result<Vec<T>, String> {
    let mut points: Vec<T> = Vec::new();
    for s in v.split(',') {
        if s.is_empty() {
            return Err(format!(
                "{key} '{v}': an empty entry (a list such as 1,2,4)"
            ));
        }
        let n = num(key, s)?;
        if points.contains(&n) {
            return Err(format!("{key} '{v}': {s} is named twice"));
        }
        points.push(n);
    }
    Ok(points)
}

/// The number `what` (a key, a flag) is given as `v`, or a usage error
/// that says whether it is out of range or no number at all.
pub fn number<T: std::str::FromStr>(what: &str, v: &str) -> Result<T, Error> {
    num(what, v).map_err(usage)
}

/// A number, or why not: out of its type's range (all digits, too many
/// of them, or a sign an unsigned count cannot take) or no number at all.
fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| {
        let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
        let whole = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if whole {
            format!("{key} {v} is out of range")
        } else {
            format!("{key}: '{v}' is not a number")
        }
    })
}

/// Whether `key` is a `trig.*` key that no flag of `run` sets: the host
/// sets it from its own options (`vm --split`, `--profile`,
/// `--icount-shift`), never by hand.
pub fn set_by_host(key: &str) -> bool {
    KEYS.contains(&key) && !FLAGS.contains(&key)
}

/// Windows under the icount meter, when not given: 20 ms of guest time
/// settle the first calls, and the measured window is 0.1 s (four
/// samples), lengthened to 10^4 updates of the count, at most 0.2 s, so
/// that an event cut at either end moves the rate by at most 0.01%
/// (0.03% for the slowest, the 4095-byte strncmp, 3,200 events in 0.2 s).
/// Figures repeat from boot to boot to the last digit, and agree with
/// 0.2 s windows' (docs/meter.md, "Windows only as long as the meter
/// needs").
pub const ICOUNT_WARMUP: f64 = 0.02;
pub const ICOUNT_DURATION: f64 = 0.1;
pub const ICOUNT_MIN_COUNTS: u32 = 10_000;

impl RunOptions {
    /// Reads `trig.*` parameters from a kernel command line.
    pub fn from_kernel_cmdline(cmdline: &str) -> Result<Self, Error> {
        let mut opts = RunOptions::default();
        for word in cmdline.split_whitespace() {
            if let Some(kv) = word.strip_prefix("trig.") {
                let (k, v) = kv.split_once('=').unwrap_or((kv, "1"));
                opts.set(k, v)?;
            }
        }
        opts.validate()?;
        Ok(opts)
    }

    /// `BENCH:SPINS,...`, as `trig.inject=` takes it.
    pub fn inject_list(&self) -> String {
        self.inject.show()
    }

    /// Spin iterations injected into `bench`'s producers (0: none).
    pub fn spins(&self, bench: &str) -> u32 {
        self.inject
            .iter()
            .filter(|i| i.bench == bench)
            .map(|i| i.spins)
            .sum()
    }

    /// Upstream's rule: values of fewer than 8 bytes have too few
    /// distinct ones for many entries (the hash map needs each once).
    fn check_unique_values(&self) -> Result<(), String> {
        let (entries, size) = (self.nr_entries, self.value_size);
        match (entries, size) {
            (Some(n), Some(v)) if v < 8 && u64::from(n) > 1 << (8 * v) => Err(format!(
                "nr_entries {n}: not enough unique values of {v} bytes (at most {})",
                1u64 << (8 * v)
            )),
            _ => Ok(()),
        }
    }

    /// Upstream's rule: each producer gets a CPU of `--prod-affinity` of
    /// its own, never a shared one.
    fn check_prod_affinity(&self) -> Result<(), String> {
        let most = self.producers.iter().max().copied().unwrap_or(1);
        let cpus = self.prod_affinity.len();
        if cpus > 0 && most > cpus {
            return Err(format!(
                "prod_affinity {} has {cpus} CPU{} for {most} producers: name one CPU per producer",
                cpu_set_text(&self.prod_affinity),
                if cpus == 1 { "" } else { "s" }
            ));
        }
        Ok(())
    }

    /// The CPU producer `i` is pinned to: the i-th of `--prod-affinity`,
    /// or with `-a` the next of the `cpus` round-robin; none unpinned.
    pub fn producer_cpu(&self, i: usize, cpus: usize) -> Option<usize> {
        if !self.prod_affinity.is_empty() {
            self.prod_affinity.get(i).copied()
        } else {
            self.affinity.then(|| i % cpus.max(1))
        }
    }

    pub fn rename_thread(&self) -> &'static str {
        rename_thread_name(self.rename_on_main)
    }

    /// What the windows, rates and watchdog are timed in.
    pub fn clock(&self) -> Clock {
        Clock::of_icount_shift(self.icount_shift)
    }

    /// The longest a measured window may be: `min_counts` lengthens it up
    /// to [`MAX_STRETCH`] durations (sampler::window_length).
    pub fn longest_window(&self) -> f64 {
        match self.min_counts {
            0 => self.duration,
            _ => MAX_STRETCH * self.duration,
        }
    }

    /// The watchdog for `points` benchmark runs: each one's time with room
    /// for loading and attaching, plus a minute; saturates rather than
    /// wraps for absurd inputs.
    pub fn watchdog_secs(&self, points: usize) -> u32 {
        if self.timeout > 0 {
            return self.timeout;
        }
        let secs = (self.warmup + self.longest_window() + 10.0).ceil() * points as f64 + 60.0;
        secs.min(f64::from(u32::MAX)) as u32
    }
}

fn rename_thread_name(on_main: bool) -> &'static str {
    if on_main {
        "main"
    } else {
        "worker"
    }
}

/// Map flags as upstream's strtol(base 0) reads them: decimal or 0x hex.
fn parse_flags(key: &str, v: &str) -> Result<u32, String> {
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => v.parse(),
    };
    parsed.map_err(|_| {
        format!("{key} must be a number of 0 to 4294967295 (decimal or 0x hex), not '{v}'")
    })
}

fn parse_rename_thread(v: &str) -> Result<bool, String> {
    match v {
        "main" => Ok(true),
        "worker" => Ok(false),
        _ => Err(format!(
            "rename_thread must be 'main' or 'worker', not '{v}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_upstream() {
        let o = RunOptions::from_kernel_cmdline("console=ttyS0 quiet").unwrap();
        assert_eq!((o.warmup, o.duration, o.batch_iters), (1.0, 5.0, 100));
        assert_eq!(o.producers, vec![1]);
        assert!(!o.affinity && !o.rename_on_main);
    }

    #[test]
    fn kernel_args_round_trip() {
        let o = RunOptions {
            filter: vec!["trig-*".into(), "rename-base".into()],
            warmup: 0.05,
            duration: 0.2,
            producers: vec![1, 2, 4],
            affinity: true,
            prod_affinity: vec![2, 3, 4, 0],
            stacktrace: true,
            min_counts: 10_000,
            batch_iters: 50,
            nr_loops: Some(500),
            nr_entries: Some(20000),
            nr_hash_funcs: Some(5),
            value_size: Some(4),
            key_size: Some(16),
            map_flags: Some(1),
            max_entries: Some(30000),
            nr_maps: Some(17),
            hashmap_nr_keys_used: Some(10),
            prefix_len: Some(24),
            random: true,
            htab_value_size: Some(4096),
            use_case: "batch_add_batch_del".into(),
            preallocated: true,
            cmp_str_lens: vec![8, 4095],
            rename_on_main: true,
            timeout: 99,
            verbose: true,
            harness: true,
            part: Part { index: 2, of: 3 },
            profile: true,
            icount_shift: 2,
            inject: vec![
                Inject {
                    bench: "trig-kprobe".into(),
                    spins: 300,
                },
                Inject {
                    bench: "rename-base".into(),
                    spins: 7,
                },
            ],
        };
        // the order the host has always written them in (reports record
        // the guest's command line)
        assert_eq!(
            o.to_kernel_args().join(" "),
            "trig.warmup=0.05 trig.duration=0.2 trig.producers=1,2,4 trig.batch_iters=50 \
             trig.cmp_str_len=8,4095 trig.rename_thread=main trig.filter=trig-*,rename-base \
             trig.affinity=1 trig.prod_affinity=2-4,0 trig.stacktrace=1 trig.min_counts=10000 trig.nr_loops=500 \
             trig.nr_entries=20000 trig.nr_hash_funcs=5 trig.value_size=4 \
             trig.key_size=16 trig.map_flags=1 trig.max_entries=30000 \
             trig.nr_maps=17 trig.hashmap_nr_keys_used=10 trig.prefix_len=24 trig.random=1 \
             trig.htab_value_size=4096 trig.use_case=batch_add_batch_del trig.preallocated=1 \
             trig.timeout=99 \
             trig.verbose=1 trig.harness=1 trig.part=2/3 trig.profile=1 trig.icount_shift=2 \
             trig.inject=trig-kprobe:300,rename-base:7"
        );
        let line = format!("console=ttyS0 {} panic=-1", o.to_kernel_args().join(" "));
        assert_eq!(RunOptions::from_kernel_cmdline(&line).unwrap(), o);
    }

    #[test]
    fn flags_make_the_same_options_as_parameters() {
        use argh::FromArgs;
        let cmd = RunCmd::from_args(
            &["run"],
            &[
                "-w",
                "0.5",
                "-p",
                "1,2",
                "-a",
                "--rename-thread",
                "main",
                "--filter",
                "trig-*",
                "--filter",
                "rename-base",
                "-v",
                "--inject",
                "trig-kprobe:3",
                "--json",
                "x.json",
                "--prod-affinity",
                "1,0",
                "--stacktrace",
            ],
        )
        .unwrap();
        let line = "trig.warmup=0.5 trig.producers=1,2 trig.affinity=1 trig.rename_thread=main \
                    trig.filter=trig-*,rename-base trig.verbose=1 trig.inject=trig-kprobe:3 \
                    trig.prod_affinity=1,0 trig.stacktrace=1";
        assert_eq!(
            cmd.options().unwrap(),
            RunOptions::from_kernel_cmdline(line).unwrap()
        );
        assert_eq!(RunCmd::default().options().unwrap(), RunOptions::default());
        let e = RunCmd::from_args(&["run"], &["--batch-iters", "0"])
            .unwrap()
            .options();
        assert!(e.unwrap_err().message.contains("batch_iters 0"));
    }

    #[test]
    fn params_and_signature_keep_their_form() {
        let p = RunOptions::default().params(2);
        assert_eq!(
            p.signature(),
            "warmup 1 s, duration 5 s, producers [1], affinity false, batch iters 100, \
             string lengths [1, 8, 64, 512, 2048, 4095], rename thread worker"
        );
        assert_eq!(RunOptions::default().params(1), Params::run_defaults());
        // the points of -p in either order are the same points
        let at = |p: &[usize]| {
            let o = RunOptions {
                producers: p.to_vec(),
                ..RunOptions::default()
            };
            o.params(1).signature()
        };
        assert_eq!(at(&[4, 2]), at(&[2, 4]));
        assert_ne!(at(&[4, 2]), at(&[4]));
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"filter":[],"warmup_s":1.0,"duration_s":5.0,"producers":[1],"affinity":false,"batch_iters":100,"cmp_str_lens":[1,8,64,512,2048,4095],"rename_thread":"worker","timeout_s":92}"#
        );
    }

    #[test]
    fn prod_affinity_is_upstreams_cpu_set() {
        assert_eq!(parse_cpu_set("0-3,6").unwrap(), [0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_set("5,1").unwrap(), [5, 1]);
        assert_eq!(cpu_set_text(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        for (bad, why) in [
            ("", "'' is not a CPU"),
            ("1-", "'1-' is not a CPU"),
            ("3-1", "not a range"),
            ("x", "'x' is not a CPU"),
            ("0,0-1", "CPU 0 is named twice"),
            ("9000", "not a range of CPUs"),
        ] {
            let e = parse_cpu_set(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        // one CPU per producer, checked before anything runs
        let e = RunOptions::from_kernel_cmdline("trig.producers=1,4 trig.prod_affinity=0-2")
            .unwrap_err();
        assert!(e.message.contains("3 CPUs for 4 producers"), "{e}");
        let o = RunOptions::from_kernel_cmdline("trig.producers=2 trig.prod_affinity=3,1").unwrap();
        assert_eq!(
            (o.producer_cpu(0, 4), o.producer_cpu(1, 4)),
            (Some(3), Some(1))
        );
        // it implies -a in what the report records
        let p = o.params(1);
        assert!(p.affinity);
        assert_eq!(p.prod_affinity.as_deref(), Some("3,1"));
        let plain = RunOptions::from_kernel_cmdline("trig.affinity=1").unwrap();
        assert_eq!(plain.producer_cpu(5, 4), Some(1));
        assert_eq!(RunOptions::default().producer_cpu(0, 4), None);
    }

    #[test]
    fn bad_options_are_named() {
        let e = RunOptions::from_kernel_cmdline("trig.durration=3").unwrap_err();
        assert!(e.message.contains("trig.durration"), "{e}");
        let e = RunOptions::from_kernel_cmdline("trig.producers=1,x").unwrap_err();
        assert!(e.message.contains("'x'"), "{e}");
        assert!(RunOptions::from_kernel_cmdline("trig.batch_iters=0").is_err());
        assert!(RunOptions::from_kernel_cmdline("trig.cmp_str_len=4096").is_err());
        assert!(RunOptions::from_kernel_cmdline("trig.producers=0").is_err());
        assert!(RunOptions::from_kernel_cmdline("trig.rename_thread=both").is_err());
        let e = RunOptions::from_kernel_cmdline("trig.inject=trig-nope:10").unwrap_err();
        assert!(e.message.contains("unknown benchmark 'trig-nope'"), "{e}");
        assert!(RunOptions::from_kernel_cmdline("trig.inject=trig-base").is_err());
    }

    #[test]
    fn absurd_durations_are_refused_before_anything_runs() {
        for bad in [
            "trig.duration=0",
            "trig.duration=-1",
            "trig.duration=NaN",
            "trig.duration=inf",
            "trig.duration=200000000",
            "trig.warmup=-0.5",
            "trig.warmup=1e12",
            "trig.timeout=4294967295",
            "trig.icount_shift=5",
        ] {
            assert!(RunOptions::from_kernel_cmdline(bad).is_err(), "{bad}");
        }
        for key in ["part", "profile", "icount_shift"] {
            assert!(set_by_host(key), "{key}");
        }
        for key in ["duration", "inject", "json", "nosuch"] {
            assert!(!set_by_host(key), "{key}");
        }
        let o = RunOptions::from_kernel_cmdline("trig.warmup=3600 trig.duration=3600").unwrap();
        // the largest accepted options keep the watchdog arithmetic finite
        assert!(o.watchdog_secs(usize::MAX) == u32::MAX);
        assert!(o.watchdog_secs(100) > 720_000);
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        /// An entry of a generated `-p` list: a count in or out of range,
        /// nothing, too many digits, or no number.
        fn entry() -> impl Strategy<Value = String> {
            prop_oneof![
                (0u64..9000).prop_map(|n| n.to_string()),
                Just(String::new()),
                Just("99999999999999999999".to_string()),
                "[ a-z+.-]{1,3}",
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(300))]

            /// A `-p` list is taken exactly when each entry is a count
            /// from 1 to the most, none empty and none twice; a refusal is
            /// one line that names what is wrong.
            #[test]
            fn a_producers_list_is_taken_exactly_when_its_entries_are_points(
                entries in proptest::collection::vec(entry(), 0..6)
            ) {
                let text = entries.join(",");
                let mut o = RunOptions::default();
                let got = o.set("producers", &text).and_then(|()| o.validate());
                let counts: Option<Vec<u64>> = entries.iter().map(|e| e.parse().ok()).collect();
                let points = counts.is_some_and(|c| {
                    let mut unique = c.clone();
                    unique.sort_unstable();
                    unique.dedup();
                    !c.is_empty()
                        && unique.len() == c.len()
                        && c.iter().all(|&n| (1..=MAX_PRODUCERS as u64).contains(&n))
                });
                match got {
                    Ok(()) => {
                        prop_assert!(points, "{text:?} taken");
                        prop_assert_eq!(joined(&o.producers), text);
                    }
                    Err(e) => {
                        prop_assert!(!points, "{text:?}: {e}");
                        prop_assert!(!e.message.contains('\n'), "{e}");
                        let said = ["empty entry", "named twice", "out of range", "not a number", "no count"];
                        prop_assert!(said.iter().any(|s| e.message.contains(s)), "{e}");
                    }
                }
            }

            /// A CPU set, generated: taken with each CPU once and in order,
            /// or refused in one line; never more producers than CPUs.
            #[test]
            fn a_cpu_set_is_taken_or_refused_in_one_line(
                set in "[0-9,\\- ]{0,12}",
                producers in 1usize..6,
            ) {
                let mut o = RunOptions { producers: vec![producers], ..RunOptions::default() };
                match o.set("prod_affinity", &set).and_then(|()| o.validate()) {
                    Ok(()) => {
                        let mut unique = o.prod_affinity.clone();
                        unique.sort_unstable();
                        unique.dedup();
                        prop_assert_eq!(unique.len(), o.prod_affinity.len());
                        prop_assert!(o.prod_affinity.len() >= producers);
                    }
                    Err(e) => prop_assert!(!e.message.contains('\n'), "{e}"),
                }
            }
        }
    }
}
