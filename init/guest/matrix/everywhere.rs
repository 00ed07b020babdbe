//! The functions the `-all` benchmarks probe with a program that does
//! nothing: every function the kernel can trace (ftrace's
//! available_filter_functions), less modules' and the ones upstream's
//! bench skips (trace_helpers.c: probing them makes RCU complain or
//! recurses through the probe itself), and less the attach point, which
//! the program under test probes.

use std::sync::OnceLock;

/// Functions that upstream's bench leaves unprobed, and why: the idle
/// loop and RCU's own (suspicious RCU usage), XDP's dispatcher, and the
/// helpers every probe's entry calls (their probes would fire inside the
/// probe), then bpf_get_numa_node_id, the attach point.
const SKIPPED: &[&str] = &[
    "arch_cpu_idle",
    "default_idle",
    "bpf_dispatcher_xdp_func",
    "migrate_disable",
    "migrate_enable",
    "rcu_read_unlock_strict",
    "preempt_count_add",
    "preempt_count_sub",
    "__rcu_read_lock",
    "__rcu_read_unlock",
    "bpf_get_numa_node_id",
];

/// Where tracefs lists the traceable functions (PID 1 mounts both).
const LISTS: &[&str] = &[
    "/sys/kernel/tracing/available_filter_functions",
    "/sys/kernel/debug/tracing/available_filter_functions",
];

/// The functions to probe, from the kernel's list: read once a run (tens
/// of thousands of lines, which each `-all` benchmark reads twice, to
/// count and to attach).
pub(crate) fn functions() -> Result<&'static [String], &'static str> {
    static FUNCTIONS: OnceLock<Result<Vec<String>, String>> = OnceLock::new();
    match FUNCTIONS.get_or_init(read_functions) {
        Ok(names) => Ok(names),
        Err(why) => Err(why),
    }
}

fn read_functions() -> Result<Vec<String>, String> {
    let text = LISTS
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .ok_or_else(|| format!("cannot read {} (tracefs, CONFIG_FTRACE)", LISTS[0]))?;
    let names = probed(&text);
    if names.is_empty() {
        return Err(format!("{}: no function to probe", LISTS[0]));
    }
    Ok(names)
}

/// The names of `list` (available_filter_functions: one a line, a
/// module's with ` [module]` after it) to probe, each once, in order.
fn probed(list: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    list.lines()
        .filter(|l| !l.contains('['))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| {
            !SKIPPED.contains(n)
                && !n.starts_with("rcu_")
                && !n.starts_with("__ftrace_invalid_address__")
        })
        .filter(|n| seen.insert(*n))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_what_upstream_skips_and_modules_and_repeats() {
        let list = "do_sys_open\n\
                    rcu_note_context_switch\n\
                    __rcu_read_lock\n\
                    __ftrace_invalid_address___824\n\
                    bpf_get_numa_node_id\n\
                    e1000_probe [e1000]\n\
                    ksys_read\n\
                    do_sys_open\n\
                    default_idle\n";
        assert_eq!(probed(list), ["do_sys_open", "ksys_read"]);
        assert!(probed("").is_empty());
    }
}
