//! QEMU command lines, one small function per concern, and the choice of
//! accelerator.

use super::kernel::{Arch, Kernel};
use std::path::Path;

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

fn machine_args(arch: Arch, accel: Accel) -> Vec<String> {
    let (machine, cpu) = match (arch, accel) {
        (Arch::X86_64, Accel::Kvm) => ("pc", "host"),
        // a modern model, so that the kernel takes its usual paths
        (Arch::X86_64, Accel::Tcg) => ("pc", "max"),
        (Arch::Aarch64, Accel::Kvm) => ("virt,gic-version=3", "host"),
        // neoverse-n1: -cpu max is 4x slower under TCG (pointer auth)
        (Arch::Aarch64, Accel::Tcg) => ("virt,gic-version=3", "neoverse-n1"),
    };
    ["-machine", machine, "-cpu", cpu, "-accel", accel.as_str()]
        .map(String::from)
        .to_vec()
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
    // TCG here it was lost in the host's own noise: README.)
    if !kaslr {
        parts.push("nokaslr".into());
    }
    parts.extend(run_args.iter().cloned());
    if !extra.is_empty() {
        parts.push(extra.into());
    }
    parts.join(" ")
}

pub struct Vm<'a> {
    pub kernel: &'a Kernel,
    pub initrd: &'a Path,
    pub cpus: usize,
    pub memory: &'a str,
    pub cmdline: &'a str,
}

/// Every argument after the QEMU binary.
pub fn args(vm: &Vm, accel: Accel) -> Vec<String> {
    let arch = vm.kernel.format.arch();
    let mut a = machine_args(arch, accel);
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
    a.extend(["-append".into(), vm.cmdline.into()]);
    // a vmlinux ELF needs nothing more: QEMU boots it through its PVH
    // entry, which skips the slow decompression under TCG
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::kernel::Format;
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
        };
        let a = args(&vm, Accel::Tcg).join(" ");
        assert!(a.starts_with("-machine pc -cpu max -accel tcg"), "{a}");
        assert!(a.contains("-smp 2 -m 1G -kernel /k -initrd /i -append console=ttyS0"));
        assert!(a.contains("-no-reboot"));
        let a = args(&vm, Accel::Kvm).join(" ");
        assert!(a.contains("-cpu host -accel kvm"));
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
        };
        let a = args(&vm, Accel::Tcg).join(" ");
        assert!(a.contains("virt,gic-version=3 -cpu neoverse-n1"), "{a}");
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
