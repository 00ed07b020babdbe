//! Task-rename overhead, from bpf/rename.bpf.c: the producer writes a name
//! to /proc/self/comm, which goes through __set_task_comm().

use super::{hit_slots, open_failed, syscall_loop, Ctx};
use crate::bpf::{skel::rename::RenameSkelBuilder, Failure};
use crate::sampler::{self, Body, Measured};
use libbpf_rs::skel::SkelBuilder;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::sync::Arc;

const COMM: &str = "/proc/self/comm";
/// 14 bytes, as upstream's bench writes.
const NAME: &[u8] = b"test_rename_xx";
/// Writes between two updates of the producer's count.
pub const BATCH: u64 = 16;

fn open_comm() -> Result<File, Failure> {
    OpenOptions::new()
        .write(true)
        .open(COMM)
        .map_err(|e| Failure::Failed(format!("opening {COMM}: {e}")))
}

pub fn producer(spins: u32) -> Result<Body, Failure> {
    let file = open_comm()?;
    Ok(Arc::new(move |count, stop| {
        sampler::produce(count, stop, 1, BATCH, || {
            syscall_loop::write_loop(file.as_fd(), NAME, BATCH, spins)
        })
    }))
}

pub fn run(ctx: &Ctx) -> Result<Measured, Failure> {
    let mut obj = MaybeUninit::uninit();
    let open = RenameSkelBuilder::default()
        .open(&mut obj)
        .map_err(open_failed)?;
    let original = std::fs::read(COMM).unwrap_or_default();
    let measured = ctx.load_and_measure(open, None, |skel| hit_slots!(skel));
    // Put the name back: the comm shows up in the guest's own messages.
    let _ = open_comm().map(|mut f| f.write(original.trim_ascii_end()));
    measured
}
