//! The runners of the map families: each sizes, fills and churns its
//! maps before and while the producers run, and frees them after (the
//! matrix gives the kernel a moment to, outside every window: `settle`).

pub mod bloom;
pub mod hashmap;
pub mod htab_mem;
pub mod local_storage;
pub mod lpm_trie;

use crate::bpf::Failure;
use libbpf_rs::{libbpf_sys, AsRawLibbpf, OpenMapMut};

/// 7.2's resizable hash map, newer than libbpf-sys's bindings: the
/// uapi's number.
const BPF_MAP_TYPE_RHASH: u32 = 35;

/// Makes `map` of an open object a resizable hash map (`bpf-rhashmap-*`,
/// `rhtab-mem`); its flags are the caller's (the type requires
/// BPF_F_NO_PREALLOC, which the maps of both objects have or are given).
fn make_resizable(map: &mut OpenMapMut) -> Result<(), Failure> {
    // SAFETY: the map belongs to an open, not yet loaded, object.
    let rc = unsafe {
        libbpf_sys::bpf_map__set_type(map.as_libbpf_object().as_ptr(), BPF_MAP_TYPE_RHASH)
    };
    match rc {
        0 => Ok(()),
        rc => Err(Failure::Failed(format!(
            "setting the map's type: error {rc}"
        ))),
    }
}
