//! The profiling wing: what the QEMU plugin counted in the measured
//! windows, made into each benchmark's profile.
//!
//! - [`plugin`]: the plugin found, tried and given its arguments;
//! - [`windows`]: its output read, window by window;
//! - [`functions`]: the blocks named by the guest's kernel symbols, and
//!   made into instructions, calls, traps and entries per event and per
//!   function (`--profile`), with accesses and misses (`--cache`);
//! - [`caches`]: the caches `--cache` simulates for the pinned CPU model
//!   (the simulation itself is `trig_model::caches`);
//! - [`coherence`]: `-p N` under icount, the coherence directory's
//!   counts (`trig_model::coherence`) made into a result's contention;
//! - [`source_lines`]: each profiled function's source lines, from the
//!   vmlinux's DWARF.

pub mod caches;
pub mod coherence;
pub mod functions;
pub mod plugin;
pub mod source_lines;
pub mod windows;
