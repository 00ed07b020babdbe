//! `coherence=on`: every access of a window through the coherence
//! directory (init/model/coherence.rs) in its own order, and
//! what it counted, per kernel block, per vCPU and per line:
//!
//! ```text
//! coh ffffffff81234560 12 3        a kernel block's coherence misses, HITMs
//! vcpu 1 900 100 12 3 0 0 1200     instructions kernel, user; misses, HITMs kernel, user; clock
//! span 1000                        the clock every vCPU reached: what was counted
//! line ffff888003a1c040 40 20 ffffffff81234560:w:20 user:r:20
//!                                  a line's misses, HITMs; who missed: block or user, load or store
//! ```

use rustc_hash::FxHashMap;
use trig_model::coherence::{Access, Interleaver, Stall, Transfer, CACHE_LINE_SHIFT};

/// Lines and blocks are addresses no outside input picks: a multiply
/// hash (rustc-hash's) spreads them far cheaper than SipHash.
type AddrMap<V> = FxHashMap<u64, V>;
use crate::Block;
use std::fmt::Write;

/// A user-space access's site: user space counts as one.
pub const USER: u32 = u32::MAX;

/// Lines written out a window, the most missed first.
const HOT_LINES: usize = 32;

#[derive(Default, Clone, Copy)]
struct Pair {
    coherence: u64,
    hitm: u64,
}

impl Pair {
    fn add(&mut self, o: Transfer) {
        self.coherence += o.coherence as u64;
        self.hitm += o.hitm as u64;
    }
}

#[derive(Default, Clone, Copy)]
struct PerVcpu {
    kernel_insns: u64,
    user_insns: u64,
    kernel: Pair,
    user: Pair,
}

impl PerVcpu {
    fn insns(&self) -> u64 {
        self.kernel_insns + self.user_insns
    }
}

#[derive(Default)]
struct HotCacheLine {
    misses: Pair,
    /// Per (site, store): the misses taken there.
    sites: Vec<(u32, bool, u64)>,
}

/// A window's model and tallies.
#[derive(Default)]
pub struct Model {
    /// The machine's vCPUs.
    machine: usize,
    interleaver: Interleaver<rustc_hash::FxBuildHasher>,
    /// The vCPU whose blocks came last: a switch is a new turn, when the
    /// others' pending accesses may go through.
    last: usize,
    vcpus: Vec<PerVcpu>,
    blocks: AddrMap<Pair>,
    lines: AddrMap<HotCacheLine>,
}

/// Whether `insn` halts its vCPU until an interrupt: x86 `hlt`, arm64 `wfi`.
pub fn halts(insn: &[u8]) -> bool {
    insn == [0xf4] || insn == 0xd503_207fu32.to_le_bytes()
}

/// Whether `insn` marks a spin loop's wait for another CPU: x86 `pause`
/// (cpu_relax()), arm64 `yield` and `wfe` (smp_cond_load's wait).
pub fn waits(insn: &[u8]) -> bool {
    insn == [0xf3, 0x90]
        || insn == 0xd503_203fu32.to_le_bytes()
        || insn == 0xd503_205fu32.to_le_bytes()
}

impl Model {
    pub fn new(vcpus: usize, stall: Stall) -> Model {
        Model {
            machine: vcpus,
            interleaver: Interleaver::new(stall),
            ..Default::default()
        }
    }

    /// A window opens: clocks from zero, no line held, nothing tallied.
    /// Every vCPU counts as running (which ran before is not tracked,
    /// as that costs a register read a block): the interleaving waits for each
    /// one's first block, or its halt, at most a tick away.
    pub fn open(&mut self) {
        self.interleaver.restart();
        for v in 0..self.machine.max(1) {
            self.interleaver.block(v, 0);
        }
        self.vcpus.clear();
        self.blocks.clear();
        self.lines.clear();
    }

    fn vcpu(&mut self, v: usize) -> &mut PerVcpu {
        if self.vcpus.len() <= v {
            self.vcpus.resize(v + 1, PerVcpu::default());
        }
        &mut self.vcpus[v]
    }

    /// `vcpu`, whose per-CPU base is `base` (its ties go by it), runs
    /// block `b`; one that spins does not move the interleaving's clock
    /// (directory.rs says why).
    pub fn block(&mut self, vcpu: usize, base: u64, b: &Block) {
        let (insns, kernel) = (b.insns, b.slot.is_some());
        if vcpu != self.last {
            self.last = vcpu;
            self.advance(self.interleaver.limit());
        }
        self.interleaver.tie_by(vcpu, base);
        self.interleaver
            .block(vcpu, if b.waits { 0 } else { insns });
        let v = self.vcpu(vcpu);
        if kernel {
            v.kernel_insns += insns;
        } else {
            v.user_insns += insns;
        }
    }

    pub fn halt(&mut self, vcpu: usize) {
        self.interleaver.halt(vcpu);
        self.advance(self.interleaver.limit());
    }

    pub fn access(&mut self, vcpu: usize, index: u64, addr: u64, store: bool, site: u32) {
        self.interleaver
            .access(vcpu, index, addr >> CACHE_LINE_SHIFT, store, site);
    }

    /// Runs the accesses stamped before `limit` through the directory and
    /// tallies their misses.
    fn advance(&mut self, limit: u64) {
        let (vcpus, blocks, lines) = (&mut self.vcpus, &mut self.blocks, &mut self.lines);
        self.interleaver.advance_to(limit, &mut |v, a: &Access, o| {
            if !o.coherence {
                return;
            }
            if vcpus.len() <= v {
                vcpus.resize(v + 1, PerVcpu::default());
            }
            if a.site == USER {
                vcpus[v].user.add(o);
            } else {
                vcpus[v].kernel.add(o);
                blocks.entry(u64::from(a.site)).or_default().add(o);
            }
            let line = lines.entry(a.line).or_default();
            line.misses.add(o);
            match line
                .sites
                .iter_mut()
                .find(|s| s.0 == a.site && s.1 == a.store)
            {
                Some(s) => s.2 += 1,
                None => line.sites.push((a.site, a.store, 1)),
            }
        });
    }

    /// The window closes: what its common span holds goes through
    /// (init/model/coherence.rs: `Interleaver::span`), the rest is dropped, and its
    /// lines, with `addr` naming a kernel block's slot and `cpus` the CPU
    /// of each vCPU number (vcpu.rs), by which they are written.
    pub fn close(&mut self, addr: impl Fn(u32) -> u64, cpus: &[usize]) -> String {
        // the busy vCPUs: the producers; an idle one woken for a tick, or
        // to close the window, runs a sliver of theirs
        let most = self.vcpus.iter().map(PerVcpu::insns).max().unwrap_or(0);
        let busy = |i: usize| self.vcpus.get(i).is_some_and(|v| v.insns() * 4 >= most);
        let span = self.interleaver.span(busy);
        self.advance(span);
        self.interleaver.drop_pending();
        let mut out = String::new();
        self.write_blocks(&mut out, &addr);
        self.write_vcpus(&mut out, cpus);
        let _ = writeln!(out, "span {span}");
        self.write_hot_lines(&mut out, &addr);
        out
    }

    /// `coh` lines: each kernel block's coherence misses and HITMs.
    fn write_blocks(&self, out: &mut String, addr: &impl Fn(u32) -> u64) {
        let mut blocks: Vec<_> = self.blocks.iter().collect();
        blocks.sort_by_key(|(slot, _)| **slot);
        for (slot, p) in blocks {
            let _ = writeln!(
                out,
                "coh {:x} {} {}",
                addr(*slot as u32),
                p.coherence,
                p.hitm
            );
        }
    }

    /// `vcpu` lines, by CPU: each one's instructions, misses and clock.
    fn write_vcpus(&self, out: &mut String, cpus: &[usize]) {
        let mut by_cpu: Vec<_> = self
            .vcpus
            .iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    cpus.get(i).copied().unwrap_or(i),
                    self.interleaver.clock(i),
                    v,
                )
            })
            .collect();
        by_cpu.sort_by_key(|(cpu, ..)| *cpu);
        for (cpu, clock, v) in by_cpu {
            let _ = writeln!(
                out,
                "vcpu {cpu} {} {} {} {} {} {} {clock}",
                v.kernel_insns,
                v.user_insns,
                v.kernel.coherence,
                v.kernel.hitm,
                v.user.coherence,
                v.user.hitm
            );
        }
    }

    /// `line` lines: the most-missed cache lines, each with the sites
    /// that read (`r`) and wrote (`w`) it.
    fn write_hot_lines(&self, out: &mut String, addr: &impl Fn(u32) -> u64) {
        let mut hot: Vec<_> = self.lines.iter().collect();
        hot.sort_by(|a, b| {
            b.1.misses
                .coherence
                .cmp(&a.1.misses.coherence)
                .then(a.0.cmp(b.0))
        });
        for (line, h) in hot.into_iter().take(HOT_LINES) {
            let _ = write!(
                out,
                "line {:x} {} {}",
                line << CACHE_LINE_SHIFT,
                h.misses.coherence,
                h.misses.hitm
            );
            let mut sites = h.sites.clone();
            sites.sort();
            for (site, store, n) in sites {
                let rw = if store { 'w' } else { 'r' };
                match site {
                    USER => {
                        let _ = write!(out, " user:{rw}:{n}");
                    }
                    s => {
                        let _ = write!(out, " {:x}:{rw}:{n}", addr(s));
                    }
                }
            }
            out.push('\n');
        }
    }
}
