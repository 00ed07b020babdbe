//! trig-plugin: a QEMU TCG plugin that counts the guest kernel's executed
//! instructions and executions per translated block, only inside the
//! windows trig-init marks (init/guest/sampler/marker.rs), and writes each
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
//! maps the counts to source lines (init/boot/lines.rs).
//!
//! ```text
//! shape ffffffff81234560 0 4 7 12
//! ```
//!
//! With `l1i=`, `l1d=` and `ll=` (`SIZE:WAYS:LINE`, `vm --cache`) it also
//! runs every kernel and user access of the windows through simulated
//! caches (init/boot/cache_sim.rs): a kernel block's line then carries its
//! loads, stores and L1i, L1d and last-level misses, and a `user` line
//! before `end` the same of user space, the block address left out.
//!
//! Helper callbacks, not per-vCPU inline counters: those abort QEMU under
//! `thread=single` with two vCPUs. Under `thread=single` one host thread
//! runs every vCPU, so plain loads and stores on the counters are exact.

#[path = "../../init/boot/cache_sim.rs"]
mod cache_sim;
#[path = "../../init/guest/sampler/marker.rs"]
mod marker;

use cache_sim::{Geometry, Hierarchy, Misses};
use qemu_plugin::{
    install::{Args, Info, Value},
    plugin::{HasCallbacks, Register},
    register, MemRW, PluginId, Result, TranslationBlock,
};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

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
        lines.push_str(&format!("end {window}\n"));
        // a full disk loses the profile, never the run: the host notices
        // the missing `end` line
        let Some(out) = self.out.as_mut() else { return };
        let _ = out.write_all(lines.as_bytes()).and_then(|()| out.flush());
    }
}

struct Plugin;

impl Register for Plugin {
    fn register(&mut self, _id: PluginId, args: &Args, _info: &Info) -> Result<()> {
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
        // after the model is set: the counts hold its counters only then
        counts();
        Ok(())
    }
}

impl HasCallbacks for Plugin {
    fn on_translation_block_translate(
        &mut self,
        _id: PluginId,
        tb: TranslationBlock,
    ) -> Result<()> {
        let vaddr = tb.vaddr();
        let cache = counts().mem.is_some();
        // the block's code bytes, for the instruction fetch (none without
        // the model)
        let len = if cache {
            tb.instructions()
                .map(|i| i.vaddr() + i.size() as u64)
                .max()
                .map_or(0, |end| end - vaddr)
        } else {
            0
        };
        // a kernel block's slot, by its start and its instructions'
        // offsets; user space counts as one
        let slot = is_kernel(vaddr).then(|| {
            let offsets = tb
                .instructions()
                .map(|i| (i.vaddr() - vaddr) as u32)
                .collect();
            state().slot(vaddr, offsets)
        });
        if slot.is_some() || cache {
            let n = tb.size() as u64;
            tb.register_execute_callback(move |vcpu| {
                let c = counts();
                if !c.open.load(Relaxed) {
                    return;
                }
                if let Some(slot) = slot {
                    let (s, e) = (&c.insns[slot], &c.execs[slot]);
                    s.store(s.load(Relaxed) + n, Relaxed);
                    e.store(e.load(Relaxed) + 1, Relaxed);
                }
                if let Some(m) = &c.mem {
                    let misses = caches().fetch(vcpu as usize, vaddr, len);
                    m.add_misses(slot, L1I, misses);
                }
            });
        }
        for insn in tb.instructions() {
            if slot.is_none() {
                if let Some(kind) = marker::kind_of(&insn.data()) {
                    insn.register_execute_callback(move |_| state().mark(kind));
                }
            }
            if cache {
                insn.register_memory_access_callback(
                    move |vcpu, info, addr| {
                        let c = counts();
                        let Some(m) = c.mem.as_ref().filter(|_| c.open.load(Relaxed)) else {
                            return;
                        };
                        m.add(slot, if info.is_store() { STORES } else { LOADS }, 1);
                        let size = 1u64 << info.size_shift();
                        m.add_misses(slot, L1D, caches().data(vcpu as usize, addr, size));
                    },
                    MemRW::QEMU_PLUGIN_MEM_RW,
                );
            }
        }
        Ok(())
    }
}

register!(Plugin);
