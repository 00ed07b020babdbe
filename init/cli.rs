//! The command line (argh): `trig-init [run|list|vm|...]`.

use argh::FromArgs;

/// BPF trigger/rename/strncmp benchmarks for kernel regression hunting.
/// With no subcommand, runs the whole matrix in the running kernel.
#[derive(FromArgs, Debug)]
pub struct TrigInit {
    #[argh(subcommand)]
    pub cmd: Option<Cmd>,
}

#[derive(FromArgs, Debug)]
#[argh(subcommand)]
pub enum Cmd {
    Run(RunCmd),
    List(ListCmd),
    Vm(VmCmd),
}

/// Run benchmarks in the running kernel; JSON to stdout, summary to stderr.
#[derive(FromArgs, Debug, Default)]
#[argh(subcommand, name = "run")]
pub struct RunCmd {
    /// benchmark name or glob (repeatable); default: all
    #[argh(option)]
    pub filter: Vec<String>,
    /// warm-up seconds (default 1)
    #[argh(option, short = 'w')]
    pub warmup: Option<u32>,
    /// measured seconds (default 5)
    #[argh(option, short = 'd')]
    pub duration: Option<u32>,
    /// producer counts, e.g. 1,2,4,8 (default 1)
    #[argh(option, short = 'p')]
    pub producers: Option<String>,
    /// pin producers to CPUs round-robin
    #[argh(switch, short = 'a')]
    pub affinity: bool,
    /// driver loop iterations per BPF_PROG_TEST_RUN (default 100, 1..1000)
    #[argh(option)]
    pub batch_iters: Option<u32>,
    /// strncmp string lengths, e.g. 32 or 1,64 (default sweep 1,8,64,512,2048,4095)
    #[argh(option)]
    pub cmp_str_len: Option<String>,
    /// rename producer thread: main or worker (default worker)
    #[argh(option)]
    pub rename_thread: Option<String>,
    /// overall watchdog in seconds (default: from the matrix size)
    #[argh(option)]
    pub timeout: Option<u32>,
    /// where the JSON report goes: a path, or - for stdout (default)
    #[argh(option, default = "String::from(\"-\")")]
    pub json: String,
    /// per-second progress lines and libbpf messages
    #[argh(switch, short = 'v')]
    pub verbose: bool,
}

/// List every benchmark with its group, attach point, trigger and needs.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "list")]
pub struct ListCmd {}

/// Boot a kernel under QEMU with trig-init as /init and collect results.
/// Run options go after `--`, as for `trig-init run`.
#[derive(FromArgs, Debug)]
#[argh(subcommand, name = "vm")]
pub struct VmCmd {
    /// kernel: a bzImage, arm64 Image or vmlinux path, `debian` (newest),
    /// or `debian:ABI-PREFIX` such as debian:6.1.0-54 (default: debian)
    #[argh(option, short = 'k', default = "String::from(\"debian\")")]
    pub kernel: String,
    /// guest architecture: x86_64 or aarch64 (default: the host's)
    #[argh(option)]
    pub arch: Option<String>,
    /// guest CPUs (default 2)
    #[argh(option, default = "2")]
    pub cpus: usize,
    /// guest memory (default 1G)
    #[argh(option, default = "String::from(\"1G\")")]
    pub memory: String,
    /// boots of the kernel (default 1)
    #[argh(option, default = "1")]
    pub runs: usize,
    /// directory for results and console logs (default results/)
    #[argh(option, default = "String::from(\"results\")")]
    pub out: String,
    /// accelerator: auto, kvm or tcg (default auto: KVM, else TCG)
    #[argh(option, default = "String::from(\"auto\")")]
    pub accel: String,
    /// seconds a boot may take before QEMU is killed (default: the
    /// guest's watchdog plus two minutes)
    #[argh(option)]
    pub timeout: Option<u64>,
    /// the static binary to use as /init (default: this one)
    #[argh(option)]
    pub init: Option<String>,
    /// more kernel command-line arguments
    #[argh(option, default = "String::new()")]
    pub append: String,
    /// no progress or table on stderr
    #[argh(switch, short = 'q')]
    pub quiet: bool,
    /// also write the results document here (- for stdout)
    #[argh(option)]
    pub json: Option<String>,
    /// run options for the guest, after --
    #[argh(positional, greedy)]
    pub run_args: Vec<String>,
}
