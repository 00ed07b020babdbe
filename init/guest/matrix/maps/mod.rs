//! The runners of the map families: each sizes, fills and churns its
//! maps before and while the producers run, and frees them after (the
//! matrix gives the kernel a moment to, outside every window: `settle`).

pub mod bloom;
pub mod hashmap;
pub mod htab_mem;
pub mod local_storage;
pub mod lpm_trie;
