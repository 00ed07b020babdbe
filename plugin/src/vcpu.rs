//! Which vCPU executes. Under `thread=single` QEMU 10.0 compiles the
//! vCPU index into each translated block as a constant (it assumes a
//! serial context has one vCPU), and vCPUs share blocks: a callback's
//! `vcpu` is the vCPU that translated the block, not the one running it
//! (measured: two producers pinned to two vCPUs were both counted on the
//! first). The running vCPU is told by its kernel per-CPU base instead:
//! x86-64's GS base (`gs_base` in the kernel, `k_gs_base` in user space),
//! arm64's `TPIDR_EL1`; vCPUs are numbered in the order their bases are
//! first seen, which never renumbers one (ranked by base, a vCPU first
//! seen mid-window moved the others' numbers, and the models took two
//! vCPUs for one: 0.089 misses per getpgid() at `-p 4`).

use qemu_plugin::{qemu_plugin_get_registers, RegisterDescriptor};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

/// The registers that hold the per-CPU base, once a vCPU is up.
static REGISTERS: OnceLock<Vec<RegisterDescriptor<'static>>> = OnceLock::new();

/// Every per-CPU base seen, first seen first: a vCPU's number is its
/// place.
static BASES: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// The vCPU of the block running now, for its memory callbacks.
static CURRENT: AtomicUsize = AtomicUsize::new(0);

const NAMES: [&str; 3] = ["gs_base", "k_gs_base", "TPIDR_EL1"];

/// Finds the registers; QEMU lists them only from a vCPU's context.
pub fn init() {
    if REGISTERS.get().is_none() {
        if let Ok(regs) = qemu_plugin_get_registers() {
            let found = regs
                .into_iter()
                .filter(|r| NAMES.contains(&r.name.as_str()));
            let _ = REGISTERS.set(found.collect());
        }
    }
}

/// The per-CPU base: x86-64's kernel one of its two GS bases (the one
/// with the top bit set), arm64's only one.
fn base() -> Option<u64> {
    let values = REGISTERS
        .get()?
        .iter()
        .filter_map(|r| r.read().ok())
        .filter_map(|b| Some(u64::from_le_bytes(b.get(..8)?.try_into().ok()?)));
    let all: Vec<u64> = values.collect();
    all.iter()
        .copied()
        .find(|v| v >> 63 == 1)
        .or(all.first().copied())
}

/// The vCPU running the current block (call from a callback registered
/// with register reads); `given` where the registers cannot tell.
pub fn running(given: usize) -> usize {
    let (v, _) = running_at(given);
    v
}

/// [`running`], and the vCPU's per-CPU base (0 where unknown), whose
/// order is the CPUs'.
pub fn running_at(given: usize) -> (usize, u64) {
    let (v, b) = base().map_or((given, 0), |b| {
        let mut bases = BASES.lock().unwrap_or_else(|e| e.into_inner());
        let v = bases.iter().position(|&x| x == b).unwrap_or_else(|| {
            bases.push(b);
            bases.len() - 1
        });
        (v, b)
    });
    CURRENT.store(v, Relaxed);
    (v, b)
}

/// The CPU number of each vCPU so far numbered, by its place among the
/// bases seen: the kernel allocates per-CPU areas in CPU order, and the
/// lowest CPUs, where the producers run, are seen in every window that
/// has them.
pub fn cpus() -> Vec<usize> {
    let bases = BASES.lock().unwrap_or_else(|e| e.into_inner());
    bases
        .iter()
        .map(|b| bases.iter().filter(|x| *x < b).count())
        .collect()
}

/// The vCPU of the last block [`running`] saw.
pub fn current() -> usize {
    CURRENT.load(Relaxed)
}
