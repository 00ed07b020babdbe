//! The formats for machines: the comparison as JSON, Bencher's metric
//! format for a bencher server, and KernelCI's KCIDB.

pub mod bmf;
pub mod json;
pub mod kcidb;
