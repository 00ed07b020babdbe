//! trig-plugin: a QEMU TCG plugin that counts the guest kernel's executed
//! instructions and executions per translated block, only inside the
//! windows trig-init marks (init/model/marker.rs), and writes each
//! window's counts to the file given as `out=`:
//!
//! ```text
//! window 0
//! ffffffff81234560 1234 56  block start address (hex), instructions, executions
//! end 0
//! ```
//! The host maps block addresses to functions with the guest's kallsyms;
//! the executions of the block at a function's start are its entries.
//!
//! A block is counted per start address and instruction boundaries (a
//! block retranslated shorter, under icount's I/O or after a static key
//! flipped, counts apart), and before a block's first counts a `shape`
//! line gives its instructions' offsets from its start, once a run:
//! each of its instructions ran as often as the block, which is what
//! maps the counts to source lines (init/boot/profiling/source_lines/).
//!
//! ```text
//! shape ffffffff81234560 0 4 7 12
//! ```
//!
//! With `l1i=`, `l1d=` and `ll=` (`SIZE:WAYS:LINE`, `vm --cache`) it also
//! runs every kernel and user access of the windows through simulated
//! caches (init/model/caches.rs): a kernel block's line then carries its
//! loads, stores and L1i, L1d and last-level misses, and a `user` line
//! before `end` the same of user space, the block address left out.
//!
//! With `coherence=on` (`-p N` under icount) every access of the windows
//! also goes through a coherence directory of its own order
//! (plugin/src/coherence.rs says what it writes).
//!
//! Helper callbacks, not per-vCPU inline counters: those abort QEMU under
//! `thread=single` with two vCPUs. Under `thread=single` one host thread
//! runs every vCPU, so plain loads and stores on the counters are exact.

mod coherence;
mod vcpu;

use qemu_plugin::{
    install::{Args, Info, Value},
    plugin::{HasCallbacks, Register},
    register, CallbackFlags, MemRW, PluginId, Result, TranslationBlock, VCPUIndex,
};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};
use trig_model::caches::{Geometry, Hierarchy, Misses};
use trig_model::{coherence as directory, marker};

/// Distinct kernel block start addresses a run may execute; beyond this
/// they share the last slot (written as address 0).
const SLOTS: usize = 1 << 20;

struct Counts {
    open: AtomicBool,
    insns: Box<[AtomicU64]>,
    execs: Box<[AtomicU64]>,
    mem: Option<Mem>,
}

/// What the cache model counts, in the order of the output's columns.
const LOADS: usize = 0;
const STORES: usize = 1;
const L1I: usize = 2;
const L1D: usize = 3;
const LL: usize = 4;

/// The cache model's counts: per kernel block slot, and user space's.
struct Mem {
    kernel: [Box<[AtomicU64]>; 5],
    user: [AtomicU64; 5],
}

impl Mem {
    fn counter(&self, slot: Option<usize>, what: usize) -> &AtomicU64 {
        match slot {
            Some(s) => &self.kernel[what][s],
            None => &self.user[what],
        }
    }

    fn add(&self, slot: Option<usize>, what: usize, n: u64) {
        let c = self.counter(slot, what);
        c.store(c.load(Relaxed) + n, Relaxed);
    }

    fn add_misses(&self, slot: Option<usize>, l1: usize, m: Misses) {
        self.add(slot, l1, m.l1);
        self.add(slot, LL, m.ll);
    }
}

fn zeros(n: usize) -> Box<[AtomicU64]> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

static COUNTS: OnceLock<Counts> = OnceLock::new();
static CACHES: OnceLock<Mutex<Hierarchy>> = OnceLock::new();
static COHERENCE: OnceLock<Mutex<coherence::Model>> = OnceLock::new();

fn coherence() -> Option<std::sync::MutexGuard<'static, coherence::Model>> {
    COHERENCE
        .get()
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
}

fn counts() -> &'static Counts {
    COUNTS.get_or_init(|| Counts {
        open: AtomicBool::new(false),
        insns: zeros(SLOTS),
        execs: zeros(SLOTS),
        mem: CACHES.get().map(|_| Mem {
            kernel: std::array::from_fn(|_| zeros(SLOTS)),
            user: std::array::from_fn(|_| AtomicU64::new(0)),
        }),
    })
}

fn caches() -> std::sync::MutexGuard<'static, Hierarchy> {
    CACHES
        .get()
        .expect("memory callbacks only with a cache model")
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

#[derive(Default)]
struct Profiler {
    /// Slot of each block (start address and its instructions' offsets),
    /// the address of each slot, its offsets and whether its `shape` line
    /// was written.
    slot_of: HashMap<(u64, Vec<u32>), usize>,
    addrs: Vec<u64>,
    shapes: Vec<(Vec<u32>, bool)>,
    out: Option<BufWriter<File>>,
    windows: u64,
}

static STATE: OnceLock<Mutex<Profiler>> = OnceLock::new();

fn state() -> std::sync::MutexGuard<'static, Profiler> {
    STATE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Kernel addresses have the top bit set on x86-64 and arm64 alike.
fn is_kernel(vaddr: u64) -> bool {
    vaddr >> 63 == 1
}

impl Profiler {
    fn slot(&mut self, vaddr: u64, offsets: Vec<u32>) -> usize {
        let next = self.addrs.len().min(SLOTS - 1);
        *self
            .slot_of
            .entry((vaddr, offsets.clone()))
            .or_insert_with(|| {
                if next < SLOTS - 1 {
                    self.addrs.push(vaddr);
                    self.shapes.push((offsets, false));
                }
                next
            })
    }

    /// The `shape` line of slot `i`, the first time it has counts.
    fn shape_line(&mut self, i: usize, addr: u64) -> Option<String> {
        let (offsets, written) = self.shapes.get_mut(i)?;
        if std::mem::replace(written, true) {
            return None;
        }
        let offsets: Vec<String> = offsets.iter().map(u32::to_string).collect();
        Some(format!("shape {addr:x} {}\n", offsets.join(" ")))
    }

    fn mark(&mut self, kind: u8) {
        let c = counts();
        if kind == marker::START {
            let used = self.addrs.len().min(SLOTS);
            let arrays = [&c.insns, &c.execs]
                .into_iter()
                .chain(c.mem.iter().flat_map(|m| &m.kernel));
            for a in arrays {
                for slot in a[..used].iter().chain(&a[SLOTS - 1..]) {
                    slot.store(0, Relaxed);
                }
            }
            for u in c.mem.iter().flat_map(|m| &m.user) {
                u.store(0, Relaxed);
            }
            if let Some(mut m) = coherence() {
                m.open();
            }
            c.open.store(true, Relaxed);
        } else if c.open.swap(false, Relaxed) {
            self.write_window();
        }
    }

    fn write_window(&mut self) {
        let c = counts();
        let window = self.windows;
        self.windows += 1;
        if self.out.is_none() {
            return;
        }
        let mut lines = format!("window {window}\n");
        let spill = (self.addrs.len() == SLOTS - 1).then_some(0);
        let addrs: Vec<u64> = self.addrs.iter().copied().chain(spill).collect();
        for (i, addr) in addrs.into_iter().enumerate() {
            let (n, e) = (c.insns[i].load(Relaxed), c.execs[i].load(Relaxed));
            if n > 0 {
                if let Some(shape) = self.shape_line(i, addr) {
                    lines.push_str(&shape);
                }
                lines.push_str(&format!("{addr:x} {n} {e}"));
                if let Some(m) = &c.mem {
                    for what in &m.kernel {
                        lines.push_str(&format!(" {}", what[i].load(Relaxed)));
                    }
                }
                lines.push('\n');
            }
        }
        if let Some(m) = &c.mem {
            let user: Vec<String> = m.user.iter().map(|u| u.load(Relaxed).to_string()).collect();
            lines.push_str(&format!("user {}\n", user.join(" ")));
        }
        if let Some(mut m) = coherence() {
            lines.push_str(&m.close(
                |slot| self.addrs.get(slot as usize).copied().unwrap_or(0),
                &vcpu::cpus(),
            ));
        }
        lines.push_str(&format!("end {window}\n"));
        // a full disk loses the profile, never the run: the host notices
        // the missing `end` line
        let Some(out) = self.out.as_mut() else { return };
        let _ = out.write_all(lines.as_bytes()).and_then(|()| out.flush());
    }
}

struct Plugin;

impl Register for Plugin {
    fn register(&mut self, _id: PluginId, args: &Args, info: &Info) -> Result<()> {
        let mut s = state();
        let arg = |key: &str| match args.parsed.get(key) {
            Some(Value::String(v)) => Some(v.clone()),
            _ => None,
        };
        if let Some(path) = arg("out") {
            // QEMU prints the error and refuses to start
            s.out = Some(BufWriter::new(File::create(path)?));
        }
        let geometry = |key: &str| arg(key).map(|g| Geometry::parse(&g));
        let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
        match (geometry("l1i"), geometry("l1d"), geometry("ll")) {
            (None, None, None) => {}
            (Some(i), Some(d), Some(ll)) => {
                let h = Hierarchy::new(i?, d?, ll?);
                let _ = CACHES.set(Mutex::new(h));
            }
            _ => Err(refuse(
                "trig-plugin: l1i=, l1d= and ll= come together".into(),
            ))?,
        }
        match args.parsed.get("coherence") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                let vcpus = info
                    .system
                    .as_ref()
                    .map_or(1, |s| s.smp_vcpus.max(1) as usize);
                let cycles = |key: &str| match args.parsed.get(key) {
                    Some(Value::Integer(n)) if *n >= 0 => Ok(*n as u64),
                    _ => Err(refuse(format!(
                        "trig-plugin: coherence=on takes {key}=CYCLES (what a miss stalls)"
                    ))),
                };
                let stall = directory::Stall {
                    miss: cycles("miss")?,
                    hitm: cycles("hitm")?,
                };
                let model = coherence::Model::new(vcpus, stall);
                let _ = COHERENCE.set(Mutex::new(model));
            }
            Some(_) => Err(refuse("trig-plugin: coherence= is on or off".into()))?,
        }
        // after the model is set: the counts hold its counters only then
        counts();
        Ok(())
    }
}

impl HasCallbacks for Plugin {
    fn on_vcpu_init(&mut self, _id: PluginId, _vcpu: VCPUIndex) -> Result<()> {
        vcpu::init();
        Ok(())
    }

    fn on_translation_block_translate(
        &mut self,
        _id: PluginId,
        tb: TranslationBlock,
    ) -> Result<()> {
        let vaddr = tb.vaddr();
        let block = Block {
            vaddr,
            insns: tb.size() as u64,
            // a kernel block's slot, by its start and its instructions'
            // offsets; user space counts as one
            slot: is_kernel(vaddr).then(|| {
                let offsets = tb
                    .instructions()
                    .map(|i| (i.vaddr() - vaddr) as u32)
                    .collect();
                state().slot(vaddr, offsets)
            }),
            // the block's code bytes, for the instruction fetch (none
            // without the model)
            len: if counts().mem.is_some() {
                tb.instructions()
                    .map(|i| i.vaddr() + i.size() as u64)
                    .max()
                    .map_or(0, |end| end - vaddr)
            } else {
                0
            },
            waits: COHERENCE.get().is_some()
                && tb.instructions().any(|i| coherence::waits(&i.data())),
        };
        on_block(&tb, block);
        for (index, insn) in tb.instructions().enumerate() {
            on_instruction(&insn, block.slot, index as u64);
        }
        Ok(())
    }
}

/// What a block's callbacks need of it.
#[derive(Clone, Copy)]
pub struct Block {
    vaddr: u64,
    pub insns: u64,
    pub slot: Option<usize>,
    len: u64,
    /// A spin loop's block (coherence.rs)
    pub waits: bool,
}

/// Whether a model tells vCPUs apart: the running one is read from its
/// registers (vcpu.rs), which costs, so only then.
fn per_vcpu() -> bool {
    counts().mem.is_some() || COHERENCE.get().is_some()
}

/// The block's execution callback: its counts, its fetch through the
/// caches, its vCPU's clock.
fn on_block(tb: &TranslationBlock, b: Block) {
    let per_vcpu = per_vcpu();
    if b.slot.is_none() && !per_vcpu {
        return;
    }
    let flags = if per_vcpu {
        CallbackFlags::QEMU_PLUGIN_CB_R_REGS
    } else {
        CallbackFlags::QEMU_PLUGIN_CB_NO_REGS
    };
    tb.register_execute_callback_flags(
        move |given| {
            let c = counts();
            if !c.open.load(Relaxed) {
                return;
            }
            let (vcpu, base) = if per_vcpu {
                vcpu::running_at(given as usize)
            } else {
                (given as usize, 0)
            };
            if let Some(mut m) = coherence() {
                m.block(vcpu, base, &b);
            }
            if let Some(slot) = b.slot {
                let (s, e) = (&c.insns[slot], &c.execs[slot]);
                s.store(s.load(Relaxed) + b.insns, Relaxed);
                e.store(e.load(Relaxed) + 1, Relaxed);
            }
            if let Some(m) = &c.mem {
                let misses = caches().fetch(vcpu, b.vaddr, b.len);
                m.add_misses(b.slot, L1I, misses);
            }
        },
        flags,
    );
}

/// An instruction's callbacks: a window mark, a halt, its accesses.
fn on_instruction(insn: &qemu_plugin::Instruction, slot: Option<usize>, index: u64) {
    let data = insn.data();
    if slot.is_none() {
        if let Some(kind) = marker::kind_of(&data) {
            insn.register_execute_callback(move |_| state().mark(kind));
        }
    }
    let coh = COHERENCE.get().is_some();
    if coh && coherence::halts(&data) {
        insn.register_execute_callback_flags(
            move |given| {
                if counts().open.load(Relaxed) {
                    if let Some(mut m) = coherence() {
                        m.halt(vcpu::running(given as usize));
                    }
                }
            },
            CallbackFlags::QEMU_PLUGIN_CB_R_REGS,
        );
    }
    if !per_vcpu() {
        return;
    }
    let site = slot.map_or(coherence::USER, |s| s as u32);
    insn.register_memory_access_callback(
        move |_, info, addr| {
            let c = counts();
            if !c.open.load(Relaxed) {
                return;
            }
            // set by this block's callback
            let vcpu = vcpu::current();
            if let Some(m) = c.mem.as_ref() {
                m.add(slot, if info.is_store() { STORES } else { LOADS }, 1);
                let size = 1u64 << info.size_shift();
                m.add_misses(slot, L1D, caches().data(vcpu, addr, size));
            }
            if let Some(mut m) = coherence() {
                m.access(vcpu, index, addr, info.is_store(), site);
            }
        },
        MemRW::QEMU_PLUGIN_MEM_RW,
    );
}

register!(Plugin);
