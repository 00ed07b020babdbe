//! Upstream's bench command line, for `bench` (a link to trig-init named
//! as upstream's binary) and `trig-init bench`: positional benchmark names
//! and upstream's flags, as tools/testing/selftests/bpf/bench.c takes them
//! (docs/upstream-bench.md says what differs).

use lexopt::prelude::*;
use std::ffi::OsString;
use trig_guest::options::{self, RunOptions};

/// What upstream's strncmp benchmarks compare by default (`--cmp-str-len`).
const UPSTREAM_CMP_STR_LEN: u32 = 32;

/// A parsed `bench` command line.
#[derive(Debug, PartialEq)]
pub enum BenchCall {
    Run(Box<BenchRun>),
    List,
    Help,
    Version,
}

#[derive(Debug, PartialEq)]
pub struct BenchRun {
    /// As given: upstream's names, another version's, or ours.
    pub names: Vec<String>,
    pub opts: RunOptions,
    pub consumers: usize,
    pub quiet: bool,
    /// Where the JSON report goes, if anywhere (`--json`, ours).
    pub json: Option<String>,
    /// The families' own options given (long names), which upstream's
    /// second parse takes only from the chosen benchmark's family.
    pub knobs: Vec<&'static str>,
}

/// A command line upstream's argp would refuse, with why (exit 64 there).
#[derive(Debug, PartialEq)]
pub struct BadBenchLine(pub String);

pub const HELP: &str = "\
Usage: bench [OPTION...] BENCHMARK...
Runs the named benchmarks in the running kernel, as upstream's bench does
(tools/testing/selftests/bpf/bench), with its output.

  -l, --list                 list the benchmarks (upstream's names for this kernel)
  -w, --warmup=SEC           warm-up period, seconds (default 1; fractions allowed)
  -d, --duration=SEC         duration of benchmark, seconds (default 5; fractions allowed)
  -p, --producers=NUM        number of producer threads (default 1)
  -c, --consumers=NUM        number of consumer threads (none of these benchmarks has any)
  -a, --affinity             pin producer threads to CPUs round-robin
      --prod-affinity=CPUSET CPUs for producer threads, e.g. 0-3,6; implies -a
      --cons-affinity=CPUSET CPUs for consumer threads; implies -a
  -s, --stacktrace           the programs also take a stack trace
      --trig-batch-iters=N   in-kernel iterations per driver test run (default 100)
      --cmp-str-len=N        length of the compared string (default 32)
      --nr_loops=N           iterations a loop call (bpf-loop 10, bpf-for 1000),
                             lookups a run (bpf-hashmap-lookup, 1000000)
      --nr_entries=N         entries of the Bloom filter and hash map (default 1000),
                             keys looked up (bpf-hashmap-lookup, 500)
      --nr_hash_funcs=N      the Bloom filter's hash functions (default 3, 1..15)
      --value_size=N         bytes a Bloom filter value (default 8, 2..256)
      --key_size=N           bytes a bpf-hashmap-lookup key (default 4, 1..1024)
      --map_flags=FLAGS      bpf-hashmap-lookup's map flags (default 0; 0x hex too)
      --max_entries=N        bpf-hashmap-lookup's map size (default 1000)
      --nr_maps=N            local storage maps (default 1000, 1..1000)
      --hashmap_nr_keys_used=N  keys the hash map control looks up (default 1000)
      --prefix_len=N         the LPM trie's prefix bits (default 32, 1..32)
      --random               the LPM trie's keys at random, not in turn
      --value-size=N         bytes an htab-mem value (default 8, 0..4096)
      --use-case=CASE        htab-mem's: overwrite (default), batch_add_batch_del,
                             add_del_on_diff_cpu
      --preallocated         htab-mem's map preallocated
  -q, --quiet                no setup lines
  -v, --verbose              libbpf's debug messages
      --json=PATH            also write trig-init's JSON report (- for stdout)
  -h, --help                 this help
  -V, --version              trig-init's version
";

impl From<lexopt::Error> for BadBenchLine {
    fn from(e: lexopt::Error) -> Self {
        BadBenchLine(e.to_string())
    }
}

/// Parses `args` (without the program's name).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<BenchCall, BadBenchLine> {
    let mut parser = lexopt::Parser::from_args(args);
    let mut line = Said {
        opts: RunOptions {
            cmp_str_lens: vec![UPSTREAM_CMP_STR_LEN],
            ..RunOptions::default()
        },
        ..Said::default()
    };
    while let Some(arg) = parser.next()? {
        let name = match arg {
            Short(c) => SHORT
                .iter()
                .find(|(s, _)| *s == c)
                .map(|(_, long)| *long)
                .ok_or_else(|| BadBenchLine::from(Short(c).unexpected()))?,
            // argp's unambiguous abbreviations (--dur=1 for --duration=1)
            Long(name) => match long_name(name)? {
                Some(known) => known,
                None => return Err(Long(name).unexpected().into()),
            },
            Value(name) => {
                line.names.push(name.string()?);
                continue;
            }
        };
        if let Some(call) = take(name, &mut parser, &mut line)? {
            return Ok(call);
        }
    }
    if line.list {
        return Ok(BenchCall::List);
    }
    line.opts.validate().map_err(|e| BadBenchLine(e.message))?;
    Ok(BenchCall::Run(Box::new(BenchRun {
        names: line.names,
        opts: line.opts,
        consumers: line.consumers,
        quiet: line.quiet,
        json: line.json,
        knobs: line.knobs,
    })))
}

/// What a command line said so far.
#[derive(Default)]
struct Said {
    names: Vec<String>,
    opts: RunOptions,
    consumers: usize,
    quiet: bool,
    json: Option<String>,
    list: bool,
    knobs: Vec<&'static str>,
}

/// The options that set a run option from their value: the long name,
/// the run option's key, and whether the value is a whole number (read as
/// strtol reads one).
const VALUED: &[(&str, &str, bool)] = &[
    ("warmup", "warmup", false),
    ("duration", "duration", false),
    ("producers", "producers", true),
    ("trig-batch-iters", "batch_iters", true),
    ("nr_loops", "nr_loops", true),
    ("nr_entries", "nr_entries", true),
    ("nr_hash_funcs", "nr_hash_funcs", true),
    ("value_size", "value_size", true),
    ("key_size", "key_size", true),
    // strtol's base 0: 0x hex too
    ("map_flags", "map_flags", false),
    ("max_entries", "max_entries", true),
    ("nr_maps", "nr_maps", true),
    ("hashmap_nr_keys_used", "hashmap_nr_keys_used", true),
    ("prefix_len", "prefix_len", true),
    ("value-size", "htab_value_size", true),
    ("use-case", "use_case", false),
    ("cmp-str-len", "cmp_str_len", true),
    ("prod-affinity", "prod_affinity", false),
];

/// Whether `long` is an option of a family's own parser upstream (the
/// registry's `Family::knobs`), not the harness's.
fn is_family_knob(long: &str) -> bool {
    trig_guest::registry::FAMILIES
        .iter()
        .any(|f| f.knobs.unwrap_or_default().contains(&long))
}

/// Upstream's short options and their long names.
const SHORT: &[(char, &str)] = &[
    ('w', "warmup"),
    ('d', "duration"),
    ('p', "producers"),
    ('c', "consumers"),
    ('a', "affinity"),
    ('s', "stacktrace"),
    ('q', "quiet"),
    ('v', "verbose"),
    ('l', "list"),
    ('h', "help"),
    ('V', "version"),
];

/// The option `name` (its long name) as messages name it: upstream's
/// short form where it has one.
fn shown_flag(name: &str) -> String {
    match SHORT.iter().find(|(_, long)| *long == name) {
        Some((c, _)) => format!("-{c}"),
        None => format!("--{name}"),
    }
}

/// Takes the option `name` (and its value) into `line`; the call it ends
/// the line with, for `--help` and `--version`.
fn take(
    name: &str,
    parser: &mut lexopt::Parser,
    line: &mut Said,
) -> Result<Option<BenchCall>, BadBenchLine> {
    let flag = shown_flag(name);
    if let Some(&(long, key, whole)) = VALUED.iter().find(|(long, ..)| *long == name) {
        if is_family_knob(long) {
            line.knobs.push(long);
        }
        let value = if whole {
            number::<u64>(parser, &flag)?.to_string()
        } else {
            parser.value()?.string()?
        };
        // the options' own checks, named as upstream's flags are
        line.opts
            .set(key, blanks_skipped(&value))
            .map_err(|e| BadBenchLine(format!("{flag} {value}: {e}")))?;
        line.opts.affinity |= key == "prod_affinity";
        return Ok(None);
    }
    match name {
        "consumers" => line.consumers = number(parser, &flag)?,
        "affinity" => line.opts.affinity = true,
        // no benchmark here has consumers: the set, checked as upstream's
        // is, only implies -a
        "cons-affinity" => {
            let cpus = parser.value()?.string()?;
            RunOptions::default()
                .set("prod_affinity", &cpus)
                .map_err(|_| {
                    BadBenchLine(format!(
                        "--cons-affinity {cpus}: not a CPU set such as 0-3,6"
                    ))
                })?;
            line.opts.affinity = true;
        }
        "stacktrace" => line.opts.stacktrace = true,
        "random" => {
            line.knobs.push("random");
            line.opts.random = true
        }
        "preallocated" => {
            line.knobs.push("preallocated");
            line.opts.preallocated = true
        }
        "quiet" => line.quiet = true,
        "verbose" => line.opts.verbose = true,
        "json" => line.json = Some(parser.value()?.string()?),
        // after the whole line is read: argp refuses a bad one first
        "list" => line.list = true,
        "help" | "usage" => return Ok(Some(BenchCall::Help)),
        "version" => return Ok(Some(BenchCall::Version)),
        _ => return Err(BadBenchLine(format!("invalid option '--{name}'"))),
    }
    Ok(None)
}

/// The long options, as argp knows them.
const LONG: &[&str] = &[
    "warmup",
    "duration",
    "producers",
    "consumers",
    "affinity",
    "prod-affinity",
    "cons-affinity",
    "stacktrace",
    "trig-batch-iters",
    "nr_loops",
    "nr_entries",
    "nr_hash_funcs",
    "value_size",
    "key_size",
    "map_flags",
    "max_entries",
    "nr_maps",
    "hashmap_nr_keys_used",
    "prefix_len",
    "random",
    "value-size",
    "use-case",
    "preallocated",
    "cmp-str-len",
    "quiet",
    "verbose",
    "json",
    "list",
    "help",
    "usage",
    "version",
];

/// A long option's full name: its own, or the one option it is the start
/// of, as argp takes it; None for an unknown one, and an ambiguous one
/// refused with the options it could be.
fn long_name(name: &str) -> Result<Option<&'static str>, BadBenchLine> {
    if let Some(known) = LONG.iter().find(|l| **l == name) {
        return Ok(Some(known));
    }
    let could: Vec<&&'static str> = if name.is_empty() {
        Vec::new()
    } else {
        LONG.iter().filter(|l| l.starts_with(name)).collect()
    };
    match could.as_slice() {
        [one] => Ok(Some(one)),
        [] => Ok(None),
        many => {
            let many: Vec<String> = many.iter().map(|l| format!("--{l}")).collect();
            Err(BadBenchLine(format!(
                "option '--{name}' is ambiguous; possibilities: {}",
                many.join(" ")
            )))
        }
    }
}

/// A number's text as strtol reads it: blanks before it skipped (isspace),
/// none after.
fn blanks_skipped(value: &str) -> &str {
    value.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r'])
}

/// The whole number that `flag` takes, as upstream's strtol reads one
/// but refusing what it would silently cut (`-p 1,2` is not 1), and
/// saying a number out of range from no number.
fn number<T: std::str::FromStr>(
    parser: &mut lexopt::Parser,
    flag: &str,
) -> Result<T, BadBenchLine> {
    let value = parser.value()?.string()?;
    options::number(flag, blanks_skipped(&value)).map_err(|e| BadBenchLine(e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> BenchRun {
        match parse(line.split_whitespace().map(OsString::from)) {
            Ok(BenchCall::Run(r)) => *r,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn refused(line: &str) -> String {
        match parse(line.split_whitespace().map(OsString::from)) {
            Err(BadBenchLine(why)) => why,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn every_family_knob_is_read_here() {
        let knobs = trig_guest::registry::FAMILIES
            .iter()
            .flat_map(|f| f.knobs.unwrap_or_default());
        for knob in knobs {
            // the switches among them, the LPM trie's and htab-mem's
            let switch = ["random", "preallocated"].contains(knob);
            assert!(
                switch || VALUED.iter().any(|(long, ..)| long == knob),
                "{knob}"
            );
            assert!(is_family_knob(knob), "{knob}");
        }
        assert!(!is_family_knob("producers"));
        let r = run("--random --nr_entries 10 lpm-trie-lookup");
        assert!(r.opts.random);
        assert_eq!(r.knobs, ["random", "nr_entries"]);
        let r = run("--use-case batch_add_batch_del --value-size 64 --preallocated htab-mem");
        assert_eq!(r.knobs, ["use-case", "value-size", "preallocated"]);
        assert_eq!(r.opts.use_case, "batch_add_batch_del");
        assert_eq!(
            (r.opts.htab_value_size, r.opts.preallocated),
            (Some(64), true)
        );
        assert!(refused("--use-case everything htab-mem").contains("no such use-case: everything"));
        assert!(refused("--value-size 4097 htab-mem").contains("too big value size 4097"));
    }

    #[test]
    fn upstreams_forms_of_each_flag() {
        let r = run("-w1 -d3 -p8 -a trig-uprobe-nop");
        assert_eq!(r.names, ["trig-uprobe-nop"]);
        assert_eq!((r.opts.warmup, r.opts.duration), (1.0, 3.0));
        assert_eq!(
            (r.opts.producers.as_slice(), r.opts.affinity),
            (&[8][..], true)
        );
        let spaced = run("-w 1 --duration=3 --producers 8 --affinity trig-uprobe-nop");
        assert_eq!(spaced, r);
        // grouped switches, as getopt takes them
        let g = run("-aqs -v trig-base");
        assert!(g.opts.affinity && g.quiet && g.opts.stacktrace && g.opts.verbose);
        let k = run("--trig-batch-iters=10 --cmp-str-len 7 --prod-affinity 2,0 -p2 -c0 x");
        assert_eq!(k.opts.batch_iters, 10);
        assert_eq!(k.opts.cmp_str_lens, [7]);
        assert_eq!(
            (k.opts.prod_affinity.as_slice(), k.opts.affinity),
            (&[2, 0][..], true)
        );
        // upstream's defaults, strncmp's one length among them
        let d = run("strncmp-helper");
        assert_eq!(
            (d.opts.warmup, d.opts.duration, d.opts.producers.as_slice()),
            (1.0, 5.0, &[1][..])
        );
        assert_eq!(d.opts.cmp_str_lens, [32]);
        assert_eq!((d.quiet, d.consumers, d.json.as_deref()), (false, 0, None));
        // fractions, and more than one benchmark, are ours
        let f = run("-w0.1 -d0.2 trig-base trig-usermode-count --json -");
        assert_eq!((f.opts.warmup, f.opts.duration), (0.1, 0.2));
        assert_eq!(f.names.len(), 2);
        assert_eq!(f.json.as_deref(), Some("-"));
        for (line, call) in [
            ("-l", BenchCall::List),
            ("--list x", BenchCall::List),
            ("-h", BenchCall::Help),
            ("-V", BenchCall::Version),
        ] {
            assert_eq!(
                parse(line.split_whitespace().map(OsString::from)),
                Ok(call),
                "{line}"
            );
        }
    }

    #[test]
    fn what_upstream_refuses_is_refused_with_its_cause() {
        for (line, why) in [
            ("--bogus trig-base", "--bogus"),
            ("-x trig-base", "-x"),
            ("trig-base -w", "-w"),
            ("-p x trig-base", "-p: 'x' is not a number"),
            ("-p 1,2 trig-base", "-p: '1,2' is not a number"),
            ("-p0 trig-base", "producers 0 is out of range (1 to 8192)"),
            ("-p 8193 trig-base", "producers 8193 is out of range"),
            (
                "-p 99999999999999999999 trig-base",
                "-p 99999999999999999999 is out of range",
            ),
            (
                "--trig-batch-iters 99999999999 trig-base",
                "batch_iters 99999999999 is out of range",
            ),
            ("-d 1x trig-base", "is not a number"),
            (
                "--p 2 trig-base",
                "'--p' is ambiguous; possibilities: --producers --prod-affinity",
            ),
            ("--c 2 trig-base", "ambiguous"),
            ("-d0 trig-base", "duration 0"),
            ("-w -1 trig-base", "warmup -1"),
            ("--trig-batch-iters=5000 trig-base", "batch_iters 5000"),
            ("--cmp-str-len 4096 strncmp-helper", "cmp_str_len"),
            (
                "--prod-affinity 0-1 -p 3 trig-base",
                "2 CPUs for 3 producers",
            ),
        ] {
            let e = refused(line);
            assert!(e.contains(why), "{line}: {e}");
        }
    }

    /// argp's habits: a long option by any unambiguous start of its name,
    /// and strtol's blanks before a number (not after: `-p '1 '` and
    /// `-p 1,2` stay errors).
    #[test]
    fn argps_abbreviations_and_strtols_blanks() {
        let full = run("--duration=1 --producers=2 --warmup 0 --quiet trig-base");
        for line in [
            "--dur=1 --produc=2 --warm 0 --q trig-base",
            "--d 1 --producers 2 --w=0 --qu trig-base",
        ] {
            assert_eq!(run(line), full, "{line}");
        }
        let blanks =
            parse(["-d", " 1", "-p", "\t2", "-w", "\n0", "-q", "trig-base"].map(OsString::from))
                .unwrap();
        assert_eq!(blanks, BenchCall::Run(Box::new(full)));
        for bad in [["-p", "2 "], ["-d", "1 "]] {
            let line = [bad[0], bad[1], "trig-base"].map(OsString::from);
            assert!(parse(line).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse(["--vers"].map(OsString::from)),
            Ok(BenchCall::Version)
        );
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        /// What a value of a generated command line may be: a number with
        /// blanks before or after, out of range, a list, text.
        fn value() -> impl Strategy<Value = String> {
            prop_oneof![
                (0u64..5000).prop_map(|n| n.to_string()),
                ("[ \t]{0,2}", 0u32..100).prop_map(|(b, n)| format!("{b}{n}")),
                (0u32..100).prop_map(|n| format!("{n} ")),
                Just("99999999999999999999".to_string()),
                Just("-1".to_string()),
                "[0-9.,a-z-]{0,6}",
            ]
        }

        /// A flag that takes a value, by any of its names and starts.
        fn flag() -> impl Strategy<Value = &'static str> {
            prop::sample::select(vec![
                "-w",
                "-d",
                "-p",
                "-c",
                "--warmup",
                "--dur",
                "--producers",
                "--produc",
                "--consumers",
                "--trig-batch-iters",
                "--trig",
                "--cmp-str-len",
                "--cmp",
                "--prod-affinity",
                "--prod-",
                "--cons-affinity",
                "--p",
                "--c",
            ])
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(400))]

            /// Any line of generated flags and values is taken or refused
            /// in one line that names its cause, never a panic; what is
            /// taken is what the numbers said, blanks before them skipped.
            #[test]
            fn a_generated_line_is_taken_or_refused_in_one_line(
                pairs in proptest::collection::vec((flag(), value()), 0..4)
            ) {
                let mut line: Vec<OsString> = Vec::new();
                for (f, v) in &pairs {
                    line.push(f.into());
                    line.push(v.into());
                }
                line.push("trig-base".into());
                match parse(line) {
                    Ok(BenchCall::Run(r)) => {
                        let is_p = |f: &&str| matches!(*f, "-p" | "--producers" | "--produc");
                        if let Some((_, v)) = pairs.iter().rev().find(|(f, _)| is_p(f)) {
                            let n = blanks_skipped(v).parse::<usize>().unwrap();
                            prop_assert_eq!(r.opts.producers.clone(), vec![n]);
                        }
                        for (f, v) in &pairs {
                            let cpus = f.contains("affinity") || f.ends_with('-');
                            prop_assert!(!v.ends_with(' ') || cpus, "{f} {v:?} taken");
                        }
                    }
                    Ok(other) => prop_assert!(false, "{other:?}"),
                    Err(BadBenchLine(why)) => {
                        prop_assert!(!why.contains('\n') && !why.is_empty(), "{why}");
                    }
                }
            }
        }
    }
}
