//! QEMU command lines, one small function per concern, and the choice of
//! accelerator.

use crate::kernel::{Arch, Kernel};
use std::path::Path;
use trig_schema::Meter;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

pub fn binary(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "qemu-system-x86_64",
        Arch::Aarch64 => "qemu-system-aarch64",
    }
}

/// Whether /dev/kvm can be opened and KVM could serve this guest. It may
/// still fail to run one; the caller falls back to TCG then.
pub fn kvm_present(arch: Arch) -> bool {
    arch == Arch::host()
        && std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/kvm")
            .is_ok()
}

/// The fixed wall-clock date an icount guest starts at: the real date is
/// a host input that reaches the guest (RTC, file times).
const ICOUNT_EPOCH: &str = "2020-01-01T00:00:00";

/// The x86-64 machine type: a versioned one, since the `pc` alias moves
/// with QEMU's version; 7.2 (Debian 12's QEMU) is the oldest QEMU that
/// scripts/setup.sh installs, and later ones keep it.
const X86_MACHINE: &str = "pc-i440fx-7.2";

/// The x86-64 CPU under TCG: a versioned named model (whose definition
/// QEMU never changes) with the features that steer the kernel's usual
/// paths named one by one, each one that TCG emulates in QEMU 7.2 to 10.0
/// (fsrm, rdpid and sha-ni are left out: 7.2 lacks them). `-cpu max` grows with
/// QEMU's version instead: under it QEMU 7.2 read rename-base 3.14% below
/// 10.0 on one kernel. Not an Intel model: TCG lacks their pcid,
/// tsc-deadline, invpcid and spec-ctrl, and, without ARCH_CAPABILITIES, a
/// Skylake takes the kernel's Meltdown and MDS mitigations (PTI, VERW),
/// +2 to +6% instructions an event and twice the wall time; qemu64 is an
/// AMD family 15 part, as unaffected as `max` (docs/meter.md).
const X86_TCG_CPU: &str = "qemu64-v1,+ssse3,+sse4.1,+sse4.2,+popcnt,+movbe,+aes,+pclmulqdq,\
                           +avx,+avx2,+f16c,+fma,+bmi1,+bmi2,+adx,+abm,+erms,+smep,+smap,\
                           +fsgsbase,+umip,+rdrand,+clflushopt,+clwb,+xsave,+xsaveopt,\
                           +xgetbv1,+rdtscp,+pdpe1gb,+pku,+arat";

const ARM64_MACHINE: &str = "virt-7.2,gic-version=3";

/// The emulated machine: `-machine` and `-cpu`.
pub fn model(arch: Arch, accel: Accel) -> (&'static str, &'static str) {
    match (arch, accel) {
        (Arch::X86_64, Accel::Kvm) => (X86_MACHINE, "host"),
        (Arch::X86_64, Accel::Tcg) => (X86_MACHINE, X86_TCG_CPU),
        (Arch::Aarch64, Accel::Kvm) => (ARM64_MACHINE, "host"),
        // neoverse-n1, a fixed model: -cpu max is 4x slower under TCG
        // (pointer auth)
        (Arch::Aarch64, Accel::Tcg) => (ARM64_MACHINE, "neoverse-n1"),
    }
}

/// QEMU's version as `--version` prints it ("10.0.2 (Debian ...)"); None
/// when the binary does not run.
pub fn version(arch: Arch) -> Option<String> {
    let out = std::process::Command::new(binary(arch))
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?.trim();
    Some(
        line.strip_prefix("QEMU emulator version ")
            .unwrap_or(line)
            .into(),
    )
}

fn machine_args(arch: Arch, accel: Accel, meter: Meter, icount_shift: u32) -> Vec<String> {
    let (machine, cpu) = model(arch, accel);
    let mut a: Vec<String> = ["-machine", machine, "-cpu", cpu]
        .map(String::from)
        .to_vec();
    match meter {
        Meter::Time => a.extend(["-accel".into(), accel.as_str().into()]),
        // One thread runs every vCPU in turn, and the virtual clock
        // advances by 2^shift nanoseconds per instruction (one unless
        // --icount-shift) and never sleeps;
        // what else of the host could reach the guest is pinned: the RNG
        // behind RDRAND/RNDR and the kernel's entropy (-seed), and the
        // RTC's date, ticking with the virtual clock.
        Meter::Icount => a.extend(
            [
                "-accel",
                "tcg,thread=single",
                "-icount",
                &format!("shift={icount_shift},sleep=off"),
                "-seed",
                "1",
                "-rtc",
                &format!("base={ICOUNT_EPOCH},clock=vm"),
            ]
            .map(String::from),
        ),
    }
    a
}

pub fn console_device(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "ttyS0",
        Arch::Aarch64 => "ttyAMA0",
    }
}

/// The kernel command line: console, die on panic, quiet boot, then ours.
pub fn kernel_cmdline(arch: Arch, run_args: &[String], kaslr: bool, extra: &str) -> String {
    let mut parts = vec![
        format!("console={}", console_device(arch)),
        "panic=-1".into(),
        "quiet".into(),
    ];
    // A layout randomised at every boot (text, direct map, vmalloc) is a
    // new set of cache and TLB aliases at every boot: one source of
    // boot-to-boot spread that a benchmark of kernels does not want. (Under
    // TCG here it was lost in the host's own noise: docs/meter.md, "The
    // accelerator and KASLR".)
    if !kaslr {
        parts.push("nokaslr".into());
    }
    parts.extend(run_args.iter().cloned());
    if !extra.is_empty() {
        parts.push(extra.into());
    }
    parts.join(" ")
}

/// The length every icount guest's command line is padded to. Its length
/// moves the kernel's early allocations: a boot whose command line was 60
/// bytes longer ran the uprobe benchmarks 1.7 to 1.9% faster, and an
/// injected slowdown (`trig.inject=`, 100 bytes) moved uprobe benchmarks
/// it was not injected into by up to 4%.
pub const ICOUNT_CMDLINE_LEN: usize = 1024;

/// `cmdline` padded to [`ICOUNT_CMDLINE_LEN`] with a parameter that
/// nothing reads (a dotted name is an unknown module parameter to the
/// kernel, so it is not passed on to /init either).
fn padded(cmdline: &str) -> String {
    const PAD: &str = " trig_pad.x=";
    let fill = ICOUNT_CMDLINE_LEN.saturating_sub(cmdline.len() + PAD.len());
    if fill == 0 {
        return cmdline.to_string();
    }
    format!("{cmdline}{PAD}{}", "x".repeat(fill))
}

pub struct Vm<'a> {
    pub kernel: &'a Kernel,
    pub initrd: &'a Path,
    pub cpus: usize,
    pub memory: &'a str,
    pub cmdline: &'a str,
    pub meter: Meter,
    /// `-icount shift=` under the icount meter.
    pub icount_shift: u32,
    /// `-plugin` (see `profiling::plugin::qemu_arg`).
    pub plugin: Option<String>,
}

/// Every argument after the QEMU binary.
pub fn args(vm: &Vm, accel: Accel) -> Vec<String> {
    let arch = vm.kernel.format.arch();
    let mut a = machine_args(arch, accel, vm.meter, vm.icount_shift);
    a.extend(
        [
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-serial",
            "stdio",
            // power-off, reboot and panic all end QEMU
            "-no-reboot",
        ]
        .map(String::from),
    );
    a.extend([
        "-smp".into(),
        vm.cpus.to_string(),
        "-m".into(),
        vm.memory.into(),
    ]);
    a.extend(["-kernel".into(), vm.kernel.path.display().to_string()]);
    a.extend(["-initrd".into(), vm.initrd.display().to_string()]);
    let cmdline = match vm.meter {
        Meter::Icount => padded(vm.cmdline),
        Meter::Time => vm.cmdline.to_string(),
    };
    a.extend(["-append".into(), cmdline]);
    if let Some(p) = &vm.plugin {
        a.extend(["-plugin".into(), p.clone()]);
    }
    // a vmlinux ELF needs nothing more: QEMU boots it through its PVH
    // entry, which skips the slow decompression under TCG
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Format;
    use std::path::PathBuf;

    fn kernel(format: Format) -> Kernel {
        Kernel {
            path: PathBuf::from("/k"),
            format,
            spec: "/k".into(),
            package: None,
        }
    }

    #[test]
    fn x86_tcg_args() {
        let k = kernel(Format::BzImage);
        let vm = Vm {
            kernel: &k,
            initrd: Path::new("/i"),
            cpus: 2,
            memory: "1G",
            cmdline: "console=ttyS0",
            meter: Meter::Time,
            icount_shift: 0,
            plugin: None,
        };
        let a = args(&vm, Accel::Tcg).join(" ");
        assert!(
            a.starts_with("-machine pc-i440fx-7.2 -cpu qemu64-v1,+ssse3,"),
            "{a}"
        );
        assert!(a.contains(",+pku,+arat -accel tcg"), "{a}");
        assert!(!a.contains("icount"), "{a}");
        assert!(a.contains("-smp 2 -m 1G -kernel /k -initrd /i -append console=ttyS0"));
        assert!(a.contains("-no-reboot"));
        let a = args(&vm, Accel::Kvm).join(" ");
        assert!(a.contains("-cpu host -accel kvm"));
        let vm = Vm {
            meter: Meter::Icount,
            ..vm
        };
        let a = args(&vm, Accel::Tcg).join(" ");
        assert!(
            a.contains("-accel tcg,thread=single -icount shift=0,sleep=off -seed 1"),
            "{a}"
        );
        assert!(a.contains("-rtc base=2020-01-01T00:00:00,clock=vm"), "{a}");
        // the command line is the same length whatever it says
        let line = |v: &Vm| args(v, Accel::Tcg).last().unwrap().clone();
        let short = line(&vm);
        let long = line(&Vm {
            cmdline: "console=ttyS0 trig.inject=trig-kprobe:1,rename-kprobe:1",
            ..vm
        });
        assert_eq!(short.len(), ICOUNT_CMDLINE_LEN);
        assert_eq!(long.len(), ICOUNT_CMDLINE_LEN);
        assert!(long.starts_with("console=ttyS0 trig.inject=") && long.contains(" trig_pad.x=x"));
    }

    #[test]
    fn arm64_args_and_console() {
        let k = kernel(Format::ArmImage);
        let vm = Vm {
            kernel: &k,
            initrd: Path::new("/i"),
            cpus: 1,
            memory: "512M",
            cmdline: "",
            meter: Meter::Icount,
            icount_shift: 0,
            plugin: None,
        };
        let a = args(&vm, Accel::Tcg).join(" ");
        assert!(a.contains("virt-7.2,gic-version=3 -cpu neoverse-n1"), "{a}");
        assert!(a.contains("-icount shift=0,sleep=off"), "{a}");
        let shifted = Vm {
            icount_shift: 2,
            ..vm
        };
        let a = args(&shifted, Accel::Tcg).join(" ");
        assert!(a.contains("-icount shift=2,sleep=off"), "{a}");
        assert_eq!(console_device(Arch::Aarch64), "ttyAMA0");
    }

    #[test]
    fn cmdline_carries_run_options_and_extra() {
        let c = kernel_cmdline(
            Arch::X86_64,
            &["trig.duration=1".into()],
            false,
            "root=/dev/nope",
        );
        assert_eq!(
            c,
            "console=ttyS0 panic=-1 quiet nokaslr trig.duration=1 root=/dev/nope"
        );
        let c = kernel_cmdline(Arch::Aarch64, &[], true, "");
        assert_eq!(c, "console=ttyAMA0 panic=-1 quiet");
    }
}
