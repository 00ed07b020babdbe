//! Analysis of results files: `compare` (two sides, benchmark by
//! benchmark), `history` (change points over nights), the decisions of a
//! bisect step and the ab-proof, and a commit-range sweep (`sweep`: its
//! directory, steps and search); `input` reads the results files they all
//! start from (`split_params` mends older split runs' parameters);
//! `assessment` holds the verdict they share; `gate` turns
//! what each counted into its exit status; `git` runs git on a kernel
//! tree.

pub mod ab_proof;
pub mod assessment;
pub mod bisect;
pub mod changepoint;
pub mod compare;
#[cfg(any(test, feature = "test-support"))]
pub mod fixtures;
pub mod gate;
pub mod git;
pub mod history;
pub mod input;
pub mod split_params;
pub mod steps;
pub mod sweep;
