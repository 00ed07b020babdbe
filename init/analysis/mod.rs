//! Analysis of results files: `compare` (two sides, benchmark by
//! benchmark), `history` (change points over nights), the decisions of a
//! bisect step and the ab-proof.

pub mod ab_proof;
pub mod bisect;
pub mod changepoint;
pub mod compare;
pub mod history;
pub mod steps;
