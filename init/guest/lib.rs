//! The guest side of trig-init: what to run (the benchmark registry and
//! the run options), the runners of each family over their BPF objects,
//! the sampler, the probe of what the kernel can attach, and PID 1 of a
//! benchmark VM around the same run as the plain command (`runner`).
//! Nothing here reads results: the host's crates depend on this one for
//! the registry and the options, never the reverse.

pub mod bpf;
pub mod caps;
pub mod clock;
pub mod cpu;
pub mod kallsyms;
pub mod matrix;
pub mod memcg;
pub mod options;
pub mod part;
pub mod pid1;
pub mod recorder;
pub mod registry;
pub mod sampler;
pub mod split;
pub mod upstream;

use trig_schema::Tool;

/// This build of trig-init.
pub fn this_build() -> Tool {
    Tool {
        name: "trig-init".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_rev: GIT_REV.into(),
    }
}

/// `git describe` of the tree this build came from (build.rs).
pub const GIT_REV: &str = env!("TRIG_GIT_REV");
