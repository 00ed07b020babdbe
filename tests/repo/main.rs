//! The repository's own rules, checked without booting anything: CI's
//! setup and workflows (`ci`), the pages' links and paths (`docs`), the
//! kernel config fragments (`kconfigs`) and what the crates may depend on
//! (`layers`). One test binary: `cargo test --test repo`.

#[path = "../synth/mod.rs"]
mod synth;

mod ci;
mod docs;
mod kconfigs;
mod layers;
