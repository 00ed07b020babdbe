//! trig-plugin: a QEMU TCG plugin that counts the guest kernel's executed
//! instructions and executions per translated block, only inside the
//! windows trig-init marks (init/sampler/marker.rs), and writes each
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
//! Helper callbacks, not per-vCPU inline counters: those abort QEMU under
//! `thread=single` with two vCPUs. Under `thread=single` one host thread
//! runs every vCPU, so plain loads and stores on the counters are exact.

#[path = "../../init/sampler/marker.rs"]
mod marker;

use qemu_plugin::{
    install::{Args, Info, Value},
    plugin::{HasCallbacks, Register},
    register, PluginId, Result, TranslationBlock,
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
}

static COUNTS: OnceLock<Counts> = OnceLock::new();

fn counts() -> &'static Counts {
    COUNTS.get_or_init(|| Counts {
        open: AtomicBool::new(false),
        insns: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        execs: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
    })
}

#[derive(Default)]
struct Profiler {
    /// Slot of each block start address, and the address of each slot.
    slot_of: HashMap<u64, usize>,
    addrs: Vec<u64>,
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
    fn slot(&mut self, vaddr: u64) -> usize {
        let next = self.addrs.len().min(SLOTS - 1);
        *self.slot_of.entry(vaddr).or_insert_with(|| {
            if next < SLOTS - 1 {
                self.addrs.push(vaddr);
            }
            next
        })
    }

    fn mark(&mut self, kind: u8) {
        let c = counts();
        if kind == marker::START {
            let used = self.addrs.len().min(SLOTS);
            for slot in c.insns[..used].iter().chain(&c.execs[..used]) {
                slot.store(0, Relaxed);
            }
            c.insns[SLOTS - 1].store(0, Relaxed);
            c.execs[SLOTS - 1].store(0, Relaxed);
            c.open.store(true, Relaxed);
        } else if c.open.swap(false, Relaxed) {
            self.write_window();
        }
    }

    fn write_window(&mut self) {
        let c = counts();
        let window = self.windows;
        self.windows += 1;
        let Some(out) = self.out.as_mut() else { return };
        let mut lines = format!("window {window}\n");
        let spill = (self.addrs.len() == SLOTS - 1).then_some(0);
        for (i, addr) in self.addrs.iter().copied().chain(spill).enumerate() {
            let (n, e) = (c.insns[i].load(Relaxed), c.execs[i].load(Relaxed));
            if n > 0 {
                lines.push_str(&format!("{addr:x} {n} {e}\n"));
            }
        }
        lines.push_str(&format!("end {window}\n"));
        // a full disk loses the profile, never the run: the host notices
        // the missing `end` line
        let _ = out.write_all(lines.as_bytes()).and_then(|()| out.flush());
    }
}

struct Plugin;

impl Register for Plugin {
    fn register(&mut self, _id: PluginId, args: &Args, _info: &Info) -> Result<()> {
        let mut s = state();
        if let Some(Value::String(path)) = args.parsed.get("out") {
            // QEMU prints the error and refuses to start
            s.out = Some(BufWriter::new(File::create(path)?));
        }
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
        if is_kernel(vaddr) {
            let n = tb.size() as u64;
            let slot = state().slot(vaddr);
            tb.register_execute_callback(move |_| {
                let c = counts();
                if c.open.load(Relaxed) {
                    let (s, e) = (&c.insns[slot], &c.execs[slot]);
                    s.store(s.load(Relaxed) + n, Relaxed);
                    e.store(e.load(Relaxed) + 1, Relaxed);
                }
            });
            return Ok(());
        }
        for insn in tb.instructions() {
            if let Some(kind) = marker::kind_of(&insn.data()) {
                insn.register_execute_callback(move |_| state().mark(kind));
            }
        }
        Ok(())
    }
}

register!(Plugin);
