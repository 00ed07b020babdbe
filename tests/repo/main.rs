//! The repository's own rules, checked without booting anything: CI's
//! setup and workflows (`ci`), the pages' links and paths (`docs`), the
//! kernel config fragments (`kconfigs`), what the crates may depend on
//! (`layers`) and the house rules of the sources (`house`: function
//! length, circles of imports, crowded folders). One test binary:
//! `cargo test --test repo`.

#[path = "../synth/mod.rs"]
mod synth;

mod ci;
mod docs;
mod house;
mod kconfigs;
mod layers;
