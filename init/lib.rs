//! trig-init: the kernel's BPF trigger, rename and strncmp benchmarks as a
//! static PID 1 for VM images, and the host side that boots kernels with
//! it and compares them.

pub mod analysis;
pub mod boot;
pub mod bpf;
pub mod caps;
pub mod cpu;
pub mod error;
pub mod exit;
pub mod export;
pub mod files;
pub mod guest;
pub mod matrix;
pub mod options;
pub mod registry;
pub mod report;
pub mod runner;
pub mod sampler;
pub mod stats;
