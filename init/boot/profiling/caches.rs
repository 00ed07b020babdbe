//! `vm --cache`: the caches of the pinned CPU models, which the profiling
//! plugin simulates (init/model/caches.rs), and the line that records
//! them and the cycle weights in the results.

use crate::kernel::Arch;
use trig_model::caches::Geometry;
use trig_schema::CycleWeights;

/// The simulated caches of one machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Caches {
    pub l1i: Geometry,
    pub l1d: Geometry,
    /// The last level, shared by the vCPUs.
    pub ll: Geometry,
}

const fn kib(size: u64, ways: u64) -> Geometry {
    Geometry {
        size: size << 10,
        ways,
        line: 64,
    }
}

impl Caches {
    /// The caches the pinned TCG CPU model (boot/qemu.rs) tells the guest
    /// it has, so that the model is the machine the kernel tuned itself
    /// for.
    pub fn of(arch: Arch) -> Caches {
        match arch {
            // qemu64 is an AMD part: the guest reads CPUID 0x80000005 and
            // 0x80000006, QEMU's legacy AMD caches (target/i386/cpu.c)
            Arch::X86_64 => Caches {
                l1i: kib(64, 2),
                l1d: kib(64, 2),
                ll: kib(16 << 10, 16),
            },
            // neoverse-n1's CCSIDR registers (target/arm/cpu64.c)
            Arch::Aarch64 => Caches {
                l1i: kib(64, 4),
                l1d: kib(64, 4),
                ll: kib(1 << 10, 8),
            },
        }
    }

    /// The plugin's arguments.
    pub fn plugin_args(&self) -> String {
        let g = |g: Geometry| format!("{}:{}:{}", g.size, g.ways, g.line);
        format!("l1i={},l1d={},ll={}", g(self.l1i), g(self.l1d), g(self.ll))
    }

    /// What results record (`vm.cache`): the model and its weights.
    pub fn describe(&self) -> String {
        format!(
            "L1i {}, L1d {}, LL {}, {} B lines, LRU; {}",
            self.l1i,
            self.l1d,
            self.ll,
            self.l1d.line,
            CycleWeights::MODEL
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_reads_back_what_the_host_asks_for() {
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let c = Caches::of(arch);
            let args: Vec<Geometry> = c
                .plugin_args()
                .split(',')
                .map(|kv| Geometry::parse(kv.split_once('=').unwrap().1).unwrap())
                .collect();
            assert_eq!(args, [c.l1i, c.l1d, c.ll]);
        }
        assert_eq!(
            Caches::of(Arch::X86_64).describe(),
            "L1i 64 KiB 2-way, L1d 64 KiB 2-way, LL 16 MiB 16-way, 64 B lines, LRU; \
             cycles = insns + 10 an L1 miss + 100 an LL miss + 500 a trap"
        );
    }
}
