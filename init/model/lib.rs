//! The simulated machine: what the QEMU plugin (plugin/) runs on every
//! access of a measured window, and what the guest and the host must
//! agree with it on. Std only, so that the plugin (a cdylib inside QEMU),
//! the static guest and the host all build the same code.
//!
//! - [`caches`]: the set-associative caches of `vm --cache`;
//! - [`coherence`]: the coherence directory of `-p N` under icount, fed
//!   in the vCPUs' own order;
//! - [`marker`]: the guest's instructions that open and close a window.

pub mod caches;
pub mod coherence;
pub mod marker;
