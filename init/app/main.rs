//! `trig-init`: PID 1 of a benchmark VM, or a command on a running kernel
//! or on the host.

mod bench_cli;
mod called;
mod cli;
mod commands;

use called::Called;
use std::process::ExitCode;

fn main() -> ExitCode {
    // args_os: std::env::args panics on an argument that is not UTF-8
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match called::how(&argv) {
        Called::Bench(args) => commands::bench::bench(args),
        Called::Appliance => trig_guest::pid1::pid1_main(),
        Called::Command(args) => commands::dispatch(*args),
        Called::Done(code) => code,
    }
}
