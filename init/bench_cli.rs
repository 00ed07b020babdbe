//! Upstream's bench command line, for `bench` (a link to trig-init named
//! as upstream's binary) and `trig-init bench`: positional benchmark names
//! and upstream's flags, as tools/testing/selftests/bpf/bench.c takes them
//! (docs/upstream-bench.md says what differs).

use lexopt::prelude::*;
use std::ffi::OsString;
use trig_guest::options::RunOptions;

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
    let mut opts = RunOptions {
        cmp_str_lens: vec![UPSTREAM_CMP_STR_LEN],
        ..RunOptions::default()
    };
    let (mut names, mut consumers, mut quiet, mut json) = (Vec::new(), 0, false, None);
    let mut list = false;
    while let Some(arg) = parser.next()? {
        // the options' own checks, named as upstream's flags are
        let mut set = |key: &str, flag: &str, value: String| {
            opts.set(key, &value)
                .map_err(|e| BadBenchLine(format!("{flag} {value}: {e}")))
        };
        match arg {
            Short('w') | Long("warmup") => set("warmup", "-w", parser.value()?.string()?)?,
            Short('d') | Long("duration") => set("duration", "-d", parser.value()?.string()?)?,
            Short('p') | Long("producers") => {
                let count: usize = number(&mut parser, "-p")?;
                set("producers", "-p", count.to_string())?
            }
            Short('c') | Long("consumers") => consumers = number(&mut parser, "-c")?,
            Short('a') | Long("affinity") => opts.affinity = true,
            Long("prod-affinity") => {
                set(
                    "prod_affinity",
                    "--prod-affinity",
                    parser.value()?.string()?,
                )?;
                opts.affinity = true;
            }
            // no benchmark here has consumers: the set, checked as
            // upstream's is, only implies -a
            Long("cons-affinity") => {
                let cpus = parser.value()?.string()?;
                RunOptions::default()
                    .set("prod_affinity", &cpus)
                    .map_err(|_| {
                        BadBenchLine(format!(
                            "--cons-affinity {cpus}: not a CPU set such as 0-3,6"
                        ))
                    })?;
                opts.affinity = true;
            }
            Short('s') | Long("stacktrace") => opts.stacktrace = true,
            Long("trig-batch-iters") => {
                let n: u32 = number(&mut parser, "--trig-batch-iters")?;
                set("batch_iters", "--trig-batch-iters", n.to_string())?
            }
            Long("cmp-str-len") => {
                let n: u32 = number(&mut parser, "--cmp-str-len")?;
                set("cmp_str_len", "--cmp-str-len", n.to_string())?
            }
            Short('q') | Long("quiet") => quiet = true,
            Short('v') | Long("verbose") => opts.verbose = true,
            Long("json") => json = Some(parser.value()?.string()?),
            // after the whole line is read: argp refuses a bad one first
            Short('l') | Long("list") => list = true,
            Short('h') | Long("help") | Long("usage") => return Ok(BenchCall::Help),
            Short('V') | Long("version") => return Ok(BenchCall::Version),
            Value(name) => names.push(name.string()?),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if list {
        return Ok(BenchCall::List);
    }
    opts.validate().map_err(|e| BadBenchLine(e.message))?;
    Ok(BenchCall::Run(Box::new(BenchRun {
        names,
        opts,
        consumers,
        quiet,
        json,
    })))
}

/// The whole number that `flag` takes, as upstream's strtol reads one
/// but refusing what it would silently cut (`-p 1,2` is not 1).
fn number<T: std::str::FromStr>(
    parser: &mut lexopt::Parser,
    flag: &str,
) -> Result<T, BadBenchLine> {
    let value = parser.value()?.string()?;
    value
        .parse()
        .map_err(|_| BadBenchLine(format!("{flag} '{value}': not a whole number")))
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
            ("-p x trig-base", "x"),
            ("-p 1,2 trig-base", "1,2"),
            ("-p0 trig-base", "producers must be"),
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
}
