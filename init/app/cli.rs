//! The command line (argh): `trig-init [run|list|vm|...]`.

use argh::FromArgs;
use std::io::IsTerminal;
use trig_analysis::compare::MetricChoice;
use trig_boot::kernel::Arch;
use trig_boot::vm::{AccelChoice, MeterChoice, Order};
use trig_export::sweep::SweepFormat;
use trig_export::{ComparisonFormat, HistoryFormat};
use trig_schema::error::{usage, Error};

/// BPF trigger/rename/strncmp benchmarks for kernel regression hunting.
/// With no subcommand, runs the whole matrix in the running kernel with
/// the defaults of `trig-init run` (how `vmtest -k bzImage ./trig-init`
/// and a PID 1 call it), and says so on stderr. `trig-init bench ...`, or
/// trig-init linked as `bench`, takes upstream's bench command line and
/// prints what it prints (`bench --help`).
#[derive(FromArgs, Debug)]
pub struct TrigInit {
    /// print the version and git revision, and exit
    #[argh(switch)]
    pub version: bool,
    #[argh(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(FromArgs, Debug)]
#[argh(subcommand)]
pub enum Cmd {
    Run(RunCmd),
    List(ListCmd),
    Vm(VmCmd),
    Ab(AbCmd),
    Compare(CompareCmd),
    History(HistoryCmd),
    Report(ReportCmd),
    Bisect(BisectCmd),
    AbProof(AbProofCmd),
    Sweep(SweepCmd),
    Profile(ProfileCmd),
}

/// `run`'s flags come from the options table, with the `trig.*` parameters.
pub use trig_guest::options::RunCmd;

/// List every benchmark with upstream's name for it, its group, attach
/// point, trigger and needs.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "list")]
pub struct ListCmd {
    /// upstream's names as the bench of this kernel version has them
    /// (6.10 renamed; default: the running kernel's)
    #[argh(option)]
    pub kernel: Option<String>,
}

/// `vm` and `ab` take the same options; argh cannot share fields between
/// subcommands, so one field list makes both structs.
macro_rules! vm_commands {
    ($($field:ident),* ; { $($body:tt)* }) => {
        /// Boot a kernel under QEMU with trig-init as /init and collect results.
        /// Run options go after `--`, as for `trig-init run`.
        #[derive(FromArgs, Debug)]
        #[argh(subcommand, name = "vm")]
        pub struct VmCmd { $($body)* }

        /// Boot two or more kernels interleaved (A B A B ...), --runs times
        /// each, and compare each with the first, paired by round: `trig-init
        /// ab -k A -k B [-- run options]` (under the icount meter one boot
        /// a kernel decides; under the time meter use --runs 6). Exit as vm,
        /// or 1 when a kernel regressed against the first; run `compare` on
        /// the results files for other compare settings.
        #[derive(FromArgs, Debug)]
        #[argh(subcommand, name = "ab")]
        pub struct AbCmd { $($body)* }

        impl From<AbCmd> for VmCmd {
            fn from(a: AbCmd) -> Self {
                VmCmd { $($field: a.$field),* }
            }
        }
    };
}

vm_commands! {
    kernel, order, seed, commit, arch, cpus, memory, runs, jobs, split, out, accel, meter, icount_shift, timeout, init, append, kaslr, kernel_append, profile, debuginfo, cache, quiet, verbose, tables, metric, threshold_entries, json, export_kcidb, color, run_args;
    {
    /// kernel: a bzImage, arm64 Image or vmlinux path, `debian` (newest),
    /// `debian:ABI-PREFIX` such as debian:6.1.0-54 or debian:7.2 (the
    /// host's apt, else Debian testing and unstable), or
    /// `debian:unstable` / `debian:testing` (default: debian);
    /// repeat to boot several kernels interleaved
    #[argh(option, short = 'k')]
    pub kernel: Vec<String>,
    /// with several kernels: alternate (A B A B ...) or random (a seeded
    /// random order within each round); default alternate
    #[argh(option, default = "Order::Alternate")]
    pub order: Order,
    /// seed of --order random (default 1)
    #[argh(option, default = "1")]
    pub seed: u64,
    /// the kernel's source commit (or any label), recorded in the results
    /// for history and bisect and naming the kernel in comparisons; once,
    /// or once per -k in the same order
    #[argh(option)]
    pub commit: Vec<String>,
    /// guest architecture: x86_64 or aarch64 (default: the host's)
    #[argh(option)]
    pub arch: Option<Arch>,
    /// guest CPUs (default under the icount meter: 1, or one a producer for
    /// -p N; else 2)
    #[argh(option)]
    pub cpus: Option<usize>,
    /// guest memory (default 1G)
    #[argh(option, default = "String::from(\"1G\")")]
    pub memory: String,
    /// boots of each kernel (default 1; at most 10000 boots in all)
    #[argh(option, default = "1")]
    pub runs: usize,
    /// boots run side by side (default under the icount meter: the
    /// host's cores, at most the boots there are; under the time meter
    /// 1, since guests side by side slow each other's clocks)
    #[argh(option)]
    pub jobs: Option<usize>,
    /// boots each run of a kernel is split into, run side by side, their
    /// results merged into the one run (1: no split; default under the
    /// icount meter: as many as the cores the boots leave free, where the
    /// selection is large enough to gain; under the time meter 1)
    #[argh(option)]
    pub split: Option<usize>,
    /// directory for results and console logs (default results/)
    #[argh(option, default = "String::from(\"results\")")]
    pub out: String,
    /// accelerator: auto, kvm or tcg (default auto: KVM, else TCG)
    #[argh(option, default = "AccelChoice::Auto")]
    pub accel: AccelChoice,
    /// what rates are per: time (wall clock), icount (guest instructions
    /// counted by TCG, one per virtual ns: deterministic) or auto (time
    /// under KVM, icount under TCG; the default)
    #[argh(option, default = "MeterChoice::Auto")]
    pub meter: MeterChoice,
    /// under the icount meter, an instruction takes 2^N ns of guest time
    /// (QEMU's -icount shift, 0 to 4; default 0): windows hold the same
    /// instructions and rates stay per 10^9 of them, but the guest's timer
    /// ticks come 2^N times as often per instruction and QEMU's turns
    /// between vCPUs are 2^N times shorter; part of a result's identity
    #[argh(option, default = "0")]
    pub icount_shift: u32,
    /// seconds a guest may go without progress (no line of trig-init's
    /// on its console) before it is hung and QEMU killed; a guest still
    /// writing is never cut, however long its boot (default: 5 minutes
    /// plus, for each measured second of a benchmark, 20 s under icount
    /// and 1 s under the time meter)
    #[argh(option)]
    pub timeout: Option<u64>,
    /// the static binary to use as /init (default: this one)
    #[argh(option)]
    pub init: Option<String>,
    /// more kernel command-line arguments
    #[argh(option, default = "String::new()")]
    pub append: String,
    /// keep KASLR (default: boot with nokaslr, because a kernel laid out
    /// anew at every boot can move the numbers from boot to boot)
    #[argh(switch)]
    pub kaslr: bool,
    /// more command line for one kernel: the first --kernel-append goes
    /// to the first -k, and so on (e.g. trig.inject=... on one side)
    #[argh(option)]
    pub kernel_append: Vec<String>,
    /// count each benchmark's kernel instructions per function (icount
    /// meter; a QEMU TCG plugin, built by scripts/build.sh); results get
    /// a per-function profile and compare names the functions that moved
    #[argh(switch)]
    pub profile: bool,
    /// with --profile: for a debian:... kernel, stream the vmlinux of its
    /// -dbg package into the cache (once; about 630 MB for 6.1) so that
    /// the movers name source lines; other kernels' DWARF is found beside
    /// the image
    #[argh(switch)]
    pub debuginfo: bool,
    /// as --profile, and every access through simulated caches of the
    /// pinned CPU model: loads, stores, L1i, L1d and last-level misses
    /// per event and function, and an estimate of cycles (a model; boots
    /// several times slower)
    #[argh(switch)]
    pub cache: bool,
    /// no progress or table on stderr
    #[argh(switch, short = 'q')]
    pub quiet: bool,
    /// say QEMU's own words where trig-init sums them up (why KVM was not
    /// used)
    #[argh(switch, short = 'v')]
    pub verbose: bool,
    /// ab: also print each kernel's own table before the comparison (vm
    /// always prints it; the results files keep it either way)
    #[argh(switch)]
    pub tables: bool,
    /// ab: what the kernels are compared on, as compare's --metric: rate,
    /// overhead, both, kernel, kernel-overhead, traps, syscalls,
    /// interrupts or one of those three with -overhead, loads, stores,
    /// l1i-misses, l1d-misses, ll-misses or cycles (default both)
    #[argh(option)]
    pub metric: Option<MetricChoice>,
    /// ab: smallest change of traps, syscalls, interrupts, loads, stores
    /// or misses per event that counts, an absolute figure: they are
    /// exact counts (default 0.5, so one trap more per event is flagged)
    #[argh(option)]
    pub threshold_entries: Option<f64>,
    /// also write the results document here (- for stdout)
    #[argh(option)]
    pub json: Option<String>,
    /// also write the results (ab: and each kernel's verdicts against the
    /// first) as a KCIDB document here, for KernelCI (docs/kcidb.md)
    #[argh(option)]
    pub export_kcidb: Option<String>,
    /// colour the comparison table: auto (on a terminal, unless NO_COLOR
    /// is set), always or never
    #[argh(option, default = "Color::Auto")]
    pub color: Color,
    /// run options for the guest, after --
    #[argh(positional, greedy)]
    pub run_args: Vec<String>,}
}

/// One function of profiled results (`vm`/`ab --profile` with debug
/// info) line by line, BASE against NEW: each source line's instructions
/// per event on both sides as an annotated diff, the lines aligned across
/// files whose numbers moved (`+` NEW alone, `-` BASE alone, `!` changed)
#[derive(FromArgs, Debug, Default)]
#[argh(subcommand, name = "profile")]
pub struct ProfileCmd {
    /// the function (as the movers name it)
    #[argh(option)]
    pub lines: String,
    /// the benchmark (default: every one whose profile has the function)
    #[argh(option)]
    pub bench: Option<String>,
    /// NEW's kernel sources: each line's text beside it
    #[argh(option)]
    pub source: Option<String>,
    /// BASE's kernel sources, for the lines BASE alone has
    #[argh(option)]
    pub base_source: Option<String>,
    /// BASE and NEW results (files or directories)
    #[argh(positional)]
    pub paths: Vec<String>,
}

/// Compare NEW against BASE results (files or directories from `vm` or
/// `ab`) with statistics; exit 0: nothing regressed, 1: a regression,
/// 2: unreadable or incomparable input.
#[derive(FromArgs, Debug, Default)]
#[argh(subcommand, name = "compare")]
pub struct CompareCmd {
    /// BASE then NEW: results files or directories of them
    #[argh(positional)]
    pub paths: Vec<String>,
    /// compare the two newest results in this history directory instead
    #[argh(option)]
    pub previous: Option<String>,
    /// smallest change in percent that counts as a regression (default:
    /// the meter's, 3 for time, 0.25 for icount)
    #[argh(option)]
    pub threshold: Option<f64>,
    /// significance level (default 0.05)
    #[argh(option, default = "0.05")]
    pub alpha: f64,
    /// coefficient of variation above which a benchmark is unstable, in
    /// percent (default: the meter's, 10 for time, 0.1 for icount)
    #[argh(option)]
    pub cv_limit: Option<f64>,
    /// rate, overhead, both, kernel or kernel-overhead (the kernel's
    /// instructions per event of --profile'd results, in all or over the
    /// baseline's: comparable across trig-init builds), traps, syscalls or
    /// interrupts (the kernel's entries per event of --profile'd results),
    /// each of those three with -overhead (over the baseline's), loads,
    /// stores, l1i-misses, l1d-misses or ll-misses (the kernel's, per
    /// event, of --cache'd results) or cycles (the event's estimated
    /// cycles, a model); default both
    #[argh(option, default = "MetricChoice::default()")]
    pub metric: MetricChoice,
    /// smallest change of traps, syscalls, interrupts, loads, stores
    /// or misses per event that counts, an absolute figure: they are
    /// exact counts (default 0.5, so one trap more per event is flagged)
    #[argh(option)]
    pub threshold_entries: Option<f64>,
    /// table, markdown, email (plain text in 72 columns for a mailing
    /// list), json or bmf (Bencher Metric Format: NEW's figures, for
    /// `bencher run --adapter json`); default table
    #[argh(option, default = "ComparisonFormat::Table")]
    pub format: ComparisonFormat,
    /// colour the table: auto (on a terminal, unless NO_COLOR is set),
    /// always or never
    #[argh(option, default = "Color::Auto")]
    pub color: Color,
    /// compare even when architecture, accelerator or parameters differ
    #[argh(switch)]
    pub force: bool,
    /// ignore the pairing of interleaved boots (unpaired tests)
    #[argh(switch)]
    pub unpaired: bool,
    /// also write the output (in --format) here
    #[argh(option, short = 'o')]
    pub output: Option<String>,
    /// also write the comparison as JSON to this file; the --export-*
    /// options combine, so one run writes several formats
    #[argh(option)]
    pub export_json: Option<String>,
    /// also write it as markdown to this file
    #[argh(option)]
    pub export_markdown: Option<String>,
    /// also write the table (uncoloured) to this file
    #[argh(option)]
    pub export_table: Option<String>,
    /// also write NEW's figures in Bencher Metric Format to this file
    #[argh(option)]
    pub export_bmf: Option<String>,
    /// also write NEW's figures and verdicts as a KCIDB document to this
    /// file, for KernelCI (docs/kcidb.md)
    #[argh(option)]
    pub export_kcidb: Option<String>,
}

/// Change points over a history directory of results (one file per
/// night): per benchmark and metric, where the series stepped, by how
/// much, and what moved with it. Exit 0: no new regression, 1: a new
/// regression change point, 2: bad input.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "history")]
pub struct HistoryCmd {
    /// the history directory
    #[argh(positional)]
    pub dir: String,
    #[argh(option)]
    /// order results by the kernel commits' order in this git tree
    /// (default: by when they ran)
    pub git: Option<String>,
    /// significance level of the permutation test (default 0.01)
    #[argh(option, default = "0.01")]
    pub alpha: f64,
    /// smallest step in percent that is reported (default: 5 under the
    /// time meter, 0.25 when every result was counted by icount)
    #[argh(option)]
    pub min_change: Option<f64>,
    /// change points in the newest N results are new (default 3)
    #[argh(option, default = "3")]
    pub new: usize,
    /// rate, overhead, both, kernel or kernel-overhead (the kernel's
    /// instructions per event of --profile'd results, in all or over the
    /// baseline's: comparable across trig-init builds), traps, syscalls or
    /// interrupts (the kernel's entries per event of --profile'd results),
    /// each of those three with -overhead (over the baseline's), loads,
    /// stores, l1i-misses, l1d-misses or ll-misses (the kernel's, per
    /// event, of --cache'd results) or cycles (the event's estimated
    /// cycles, a model); default both
    #[argh(option, default = "MetricChoice::default()")]
    pub metric: MetricChoice,
    /// smallest change of traps, syscalls, interrupts, loads, stores
    /// or misses per event that counts, an absolute figure: they are
    /// exact counts (default 0.5, so one trap more per event is flagged)
    #[argh(option)]
    pub threshold_entries: Option<f64>,
    /// table, markdown, json or bmf (Bencher Metric Format: the newest
    /// result's figures); default table
    #[argh(option, default = "HistoryFormat::Table")]
    pub format: HistoryFormat,
    /// also write every result of the history as a KCIDB document to this
    /// file, change points in their tests (docs/kcidb.md)
    #[argh(option)]
    pub export_kcidb: Option<String>,
    /// alert once per change point: report the ones not yet recorded in
    /// DIR/alerts.json, record them there, and exit 1 only for a change
    /// for the worse seen for the first time
    #[argh(switch)]
    pub alert: bool,
}

/// Write one self-contained HTML page for a history directory: a trend
/// chart per benchmark with change points, and the latest comparison.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "report")]
pub struct ReportCmd {
    /// the history directory
    #[argh(positional)]
    pub dir: String,
    /// where the page goes (default report.html)
    #[argh(option, short = 'o', default = "String::from(\"report.html\")")]
    pub output: String,
    /// order results by the kernel commits' order in this git tree
    #[argh(option)]
    pub git: Option<String>,
    /// link commits to this repository's web pages: URL/commit/HASH
    /// (e.g. https://github.com/torvalds/linux)
    #[argh(option)]
    pub repo_url: Option<String>,
    /// draw every chart on one scale, in percent of the series' first
    /// median, so that 3% noise does not look like a 10% step
    #[argh(switch)]
    pub common_scale: bool,
    /// the series drawn and the latest comparison's metrics, as compare's
    /// --metric (default: every metric the results have; the comparison
    /// on both)
    #[argh(option)]
    pub metric: Option<MetricChoice>,
}

/// The decisions of scripts/bisect.sh under `git bisect run`, from
/// comparisons that `compare --export-json` wrote.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "bisect")]
pub struct BisectCmd {
    #[argh(subcommand)]
    pub cmd: BisectSub,
}

#[derive(FromArgs, Debug)]
#[argh(subcommand)]
pub enum BisectSub {
    Effect(BisectEffectCmd),
    Verdict(BisectVerdictCmd),
}

/// Print BAD's effect: each benchmark and metric that the comparison of
/// GOOD with BAD judged regressed, with its change in percent, as one
/// JSON object (an empty one when nothing regressed). Exit 0, or 2 when
/// the comparison cannot be read.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "effect")]
pub struct BisectEffectCmd {
    /// the comparison of GOOD with BAD (compare --export-json)
    #[argh(positional)]
    pub comparison: String,
}

/// Judge one commit against BAD's effect: print `good`, `bad` or `skip`,
/// a colon and why, on one line. Bad when the commit's change on BAD's
/// regressed benchmarks is typically (the median) more than half of
/// BAD's; skip when the comparison cannot be read or measured none of
/// them. Exit 0 with a verdict; 2 when the effect cannot be read or is
/// empty, which is never a verdict.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "verdict")]
pub struct BisectVerdictCmd {
    /// BAD's effect, as `bisect effect` printed it
    #[argh(option)]
    pub effect: String,
    /// the comparison of GOOD with the commit (compare --export-json)
    #[argh(positional)]
    pub comparison: String,
}

/// Analyse the ab run of scripts/proofs/ab-proof.sh in DIR (*-k1.json and
/// *-k2.json one kernel booted twice, *-k3.json on the same kernel with
/// slowdowns injected, or other kernels): what compare flags in A/A,
/// and each injected benchmark's change and verdict. Exit 0, or 2 when
/// the results cannot be read or compared.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "ab-proof")]
pub struct AbProofCmd {
    /// the results directory of the ab run
    #[argh(positional)]
    pub dir: String,
}

/// Every commit of a range measured once (scripts/sweep.sh builds and
/// boots; these are its plan, the merge of its slices and the report).
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "sweep")]
pub struct SweepCmd {
    #[argh(subcommand)]
    pub cmd: SweepSub,
}

#[derive(FromArgs, Debug)]
#[argh(subcommand)]
pub enum SweepSub {
    Plan(SweepPlanCmd),
    Merge(SweepMergeCmd),
    Report(SweepReportCmd),
    Next(SweepNextCmd),
}

/// Write a slice's manifest (the range BASE..TIP of the git tree, BASE
/// first) into OUT and print the slice's commits, one `COMMIT STEM` a
/// line in the range's order: scripts/sweep.sh writes STEM.json (vm
/// results) or STEM.skip (why not) for each.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "plan")]
pub struct SweepPlanCmd {
    /// the kernel's git tree
    #[argh(positional)]
    pub tree: String,
    /// BASE..TIP
    #[argh(positional)]
    pub range: String,
    /// every N-th commit of the range from the K-th, as K/N (default
    /// 1/1: all)
    #[argh(option)]
    pub slice: Option<String>,
    /// start a search instead: write the manifest and print nothing;
    /// `sweep next` then says which commits to measure
    #[argh(switch)]
    pub search: bool,
    /// the sweep directory
    #[argh(option)]
    pub out: String,
}

/// Join slice directories of one range into OUT (new or empty). Refuses
/// another range, a commit that is not of the range or in two slices, and
/// results measured otherwise than the first (the field named). Exit 0,
/// or 2 when refused.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "merge")]
pub struct SweepMergeCmd {
    /// the merged directory
    #[argh(option, short = 'o')]
    pub out: String,
    /// slice directories (scripts/sweep.sh --out)
    #[argh(positional)]
    pub dirs: Vec<String>,
}

/// Name each commit of a sweep directory where a benchmark stepped
/// against the previous measured commit beyond compare's threshold: its
/// size, verdict and (profiled) the functions that moved; commits not
/// built or booted are named and the step measured across them. Exit 0,
/// 1 when a step regressed, 2 on bad input.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "report")]
pub struct SweepReportCmd {
    /// a sweep directory (merged, or one slice of 1/1)
    #[argh(positional)]
    pub dir: String,
    /// smallest change in percent that is a step (default: the meter's,
    /// 0.25 for icount, 3 for time)
    #[argh(option)]
    pub threshold: Option<f64>,
    /// what a step is measured on, as compare's --metric (default both)
    #[argh(option, default = "MetricChoice::default()")]
    pub metric: MetricChoice,
    /// smallest change of traps, syscalls, interrupts, loads, stores
    /// or misses per event that counts, an absolute figure: they are
    /// exact counts (default 0.5, so one trap more per event is flagged)
    #[argh(option)]
    pub threshold_entries: Option<f64>,
    /// table, markdown, email, json or html (default table)
    #[argh(option, default = "SweepFormat::Table")]
    pub format: SweepFormat,
    /// also write the output (in --format) here
    #[argh(option, short = 'o')]
    pub output: Option<String>,
    /// also write the report as JSON to this file
    #[argh(option)]
    pub export_json: Option<String>,
    /// also write it as markdown to this file
    #[argh(option)]
    pub export_markdown: Option<String>,
    /// also write it as HTML to this file
    #[argh(option)]
    pub export_html: Option<String>,
}

/// Print the commits a search should measure next, one `COMMIT STEM` a
/// line as `sweep plan` prints them, and nothing when it is done: BASE
/// and TIP first, then the commits inside each interval whose ends
/// differ beyond compare's threshold on a benchmark (an interval whose
/// ends agree is taken to hold no step), stepping over commits that did
/// not build or boot. Exit 0, 2 on bad input.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "next")]
pub struct SweepNextCmd {
    /// a search's directory (`sweep plan --search`)
    #[argh(positional)]
    pub dir: String,
    /// runners idle for the next round: an interval is split into as
    /// few parts as finish the search in one round more than N+1 parts
    /// would, or more when runners would be idle (default 1: halving,
    /// the fewest boots)
    #[argh(option, default = "1")]
    pub runners: usize,
    /// smallest change in percent that differs (default: the meter's,
    /// 0.25 for icount)
    #[argh(option)]
    pub threshold: Option<f64>,
}

/// `--color`: auto colours a terminal unless NO_COLOR is set and not
/// empty (no-color.org); always and never override both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

impl std::str::FromStr for Color {
    type Err = Error;

    fn from_str(s: &str) -> Result<Color, Error> {
        match s {
            "auto" => Ok(Color::Auto),
            "always" => Ok(Color::Always),
            "never" => Ok(Color::Never),
            c => Err(usage(format!(
                "--color must be auto, always or never, not '{c}'"
            ))),
        }
    }
}

impl Color {
    /// Whether to colour stdout.
    pub fn on(self) -> bool {
        match self {
            Color::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
            Color::Always => true,
            Color::Never => false,
        }
    }
}
