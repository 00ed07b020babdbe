//! `--profile`: where each benchmark's instructions went. The QEMU plugin
//! (plugin/) counts the guest kernel's instructions and executions per
//! translated block inside the windows the guest marks around its
//! measured samples; the guest hands over its kallsyms; this module names
//! the blocks and turns them into instructions and calls per event, per
//! function, and the traps, syscalls and interrupts per event; with
//! `--cache`, also the accesses and simulated misses per event and
//! function, and the cycle estimate.

use super::coherence;
use super::windows::{parse_windows, Window};
use std::collections::HashMap;
use trig_schema::contention::CoherenceMisses;
use trig_schema::{
    Accesses, CycleWeights, Entries, EntryKind, FunctionCost, KernelSymbols, Memory, Profile,
    Report, Status,
};

/// Code outside the kernel image: BPF programs, trampolines, kprobe slots.
pub const JIT: &str = "[jit]";

/// Names addresses: the function a text address is in, or [`JIT`].
pub struct Symbolizer {
    addrs: Vec<u64>,
    names: Vec<String>,
    end: u64,
}

impl Symbolizer {
    pub(crate) fn new(s: &KernelSymbols) -> Result<Self, String> {
        if s.deltas.len() != s.names.len() {
            return Err("kernel symbols: addresses and names do not pair up".into());
        }
        let mut at = s.base;
        let addrs = s
            .deltas
            .iter()
            .map(|d| {
                at = at.saturating_add(*d);
                at
            })
            .collect();
        Ok(Symbolizer {
            addrs,
            names: s.names.clone(),
            end: s.end,
        })
    }

    pub fn name(&self, addr: u64) -> &str {
        if addr >= self.end {
            return JIT;
        }
        match self.addrs.partition_point(|&a| a <= addr) {
            0 => JIT,
            i => &self.names[i - 1],
        }
    }

    /// The symbol `addr` falls in and the offset into it; none past the
    /// image or before its first symbol.
    pub fn containing(&self, addr: u64) -> Option<(&str, u64)> {
        if addr >= self.end {
            return None;
        }
        let i = self.addrs.partition_point(|&a| a <= addr).checked_sub(1)?;
        Some((&self.names[i], addr - self.addrs[i]))
    }

    /// The address of the symbol `name`, if kallsyms has it.
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.addrs[i])
    }

    /// The symbols that start at `addr` (aliases share an address).
    pub fn starting_at(&self, addr: u64) -> &[String] {
        if addr >= self.end {
            return &[];
        }
        let from = self.addrs.partition_point(|&a| a < addr);
        let to = self.addrs.partition_point(|&a| a <= addr);
        &self.names[from..to]
    }
}

/// The kernel's entry points of each kind, by symbol (a trailing `*`
/// matches any rest). x86-64's and arm64's names do not clash; arm64's are
/// the C handlers its vectors call (a boot test asserts `el0_svc` and
/// `el0_dbg`; the aborts are from the sources).
const ENTRY_POINTS: [(EntryKind, &[&str]); 3] = [
    (
        EntryKind::Trap,
        &[
            "asm_exc_int3",
            "asm_exc_debug",
            "asm_exc_page_fault",
            "el0_dbg",
            "el0_da",
            "el0_ia",
            "el1_dbg",
            "el1_abort",
        ],
    ),
    (EntryKind::Syscall, &["entry_SYSCALL_64", "el0_svc"]),
    (
        EntryKind::Interrupt,
        &[
            "asm_common_interrupt",
            "asm_sysvec_*",
            "el0_interrupt",
            "el1_interrupt",
        ],
    ),
];

/// The kind of entry point `symbol` is, if it is one.
fn entry_kind(symbol: &str) -> Option<EntryKind> {
    let named = |p: &&str| match p.strip_suffix('*') {
        Some(prefix) => symbol.starts_with(prefix),
        None => symbol == *p,
    };
    ENTRY_POINTS
        .iter()
        .find(|(_, names)| names.iter().any(named))
        .map(|(kind, _)| *kind)
}

/// Whether entering `symbol` is a call of its function: not a jump into
/// the function's split-off part (`.cold`, `.part.0`), which its function
/// reaches from inside.
fn is_call(symbol: &str) -> bool {
    !symbol.contains(".cold") && !symbol.contains(".part")
}

/// The events and instructions of a result's measured samples: under the
/// icount meter a guest nanosecond is one instruction. The instructions
/// are the whole window's, the sampler's own (`sampler_s`) included, as
/// the plugin counts them; the rate leaves those out.
pub(crate) fn window_totals(samples: &[trig_schema::Sample]) -> (f64, f64) {
    samples
        .iter()
        .filter(|s| !s.warmup)
        .fold((0.0, 0.0), |(events, insns), s| {
            (events + s.events(), insns + s.interval_s * 1e9)
        })
}

/// A function's name without the suffixes of the compiler's clones and
/// split parts (`.constprop.0`, `.isra.0`, `.part.0`, `.cold`), which come
/// and go between builds: one function, one figure.
pub fn function_of(symbol: &str) -> &str {
    symbol.split('.').next().unwrap_or(symbol)
}

/// A function's counts in a window.
#[derive(Default)]
struct FunctionCounts {
    insns: u64,
    calls: u64,
    memory: Option<Accesses>,
    /// Coherence misses and HITMs.
    coherence: Option<(u64, u64)>,
}

/// One window's counts, function by function: a function's calls are
/// the executions of the block at its start, and so are the entries
/// (per event); its coherence misses are counted per address, not per
/// block (blocks of one address in two shapes share its line of misses).
fn by_function<'s>(
    w: &Window,
    sym: &'s Symbolizer,
    events: f64,
) -> (HashMap<&'s str, FunctionCounts>, Entries) {
    let mut by_fn: HashMap<&str, FunctionCounts> = HashMap::new();
    let mut entries = Entries::default();
    for b in &w.blocks {
        let f = by_fn.entry(function_of(sym.name(b.addr))).or_default();
        f.insns += b.insns;
        let starting = sym.starting_at(b.addr);
        if starting.iter().any(|s| is_call(s)) {
            f.calls += b.execs;
        }
        if let Some(m) = &b.memory {
            f.memory = Some(f.memory.unwrap_or_default().plus(m));
        }
        if w.coherence.is_some() {
            f.coherence.get_or_insert_default();
        }
        if let Some(kind) = starting.iter().find_map(|s| entry_kind(s)) {
            *entries.of_mut(kind) += b.execs as f64 / events;
        }
    }
    for (addr, (m, h)) in w.coherence.iter().flat_map(|c| &c.blocks) {
        let f = by_fn.entry(function_of(sym.name(*addr))).or_default();
        let (fm, fh) = f.coherence.unwrap_or_default();
        f.coherence = Some((fm + m, fh + h));
    }
    (by_fn, entries)
}

/// One window's counts as a profile per event ([`by_function`]); the
/// coherence misses per event of the span they were counted in
/// (`coherence_events`: [`coherence::WindowCounts::events_in_span`]).
pub fn profile(
    w: &Window,
    sym: &Symbolizer,
    events: f64,
    insns: f64,
    coherence_events: f64,
) -> Profile {
    let (by_fn, entries) = by_function(w, sym, events);
    let kernel = by_fn.values().map(|f| f.insns).sum::<u64>() as f64 / events;
    let memory = w.user.map(|user| {
        let kernel = by_fn
            .values()
            .filter_map(|f| f.memory)
            .fold(Accesses::default(), |a, m| a.plus(&m))
            .times(1.0 / events);
        let user = user.times(1.0 / events);
        Memory {
            kernel,
            user,
            cycles: CycleWeights::MODEL.cycles(insns / events, &kernel.plus(&user), entries.traps),
        }
    });
    let mut functions: Vec<FunctionCost> = by_fn
        .into_iter()
        .map(|(name, f)| FunctionCost {
            name: name.to_string(),
            insn: f.insns as f64 / events,
            calls: f.calls as f64 / events,
            memory: f.memory.map(|m| m.times(1.0 / events)),
            coherence: f.coherence.map(|(m, h)| CoherenceMisses {
                misses: m as f64 / coherence_events,
                hitm: h as f64 / coherence_events,
            }),
            lines: Vec::new(),
        })
        .filter(|f| f.insn >= Profile::FLOOR)
        .collect();
    functions.sort_by(|a, b| b.insn.total_cmp(&a.insn).then(a.name.cmp(&b.name)));
    Profile {
        total: insns / events,
        kernel,
        functions,
        entries: Some(entries),
        memory,
        contention: None,
        source: None,
    }
}

/// Fills in the profile of every `ok` result with a window; an error says
/// what could not be profiled, for the boot's message (results are kept).
pub(crate) fn attach(
    report: &mut Report,
    syms: &KernelSymbols,
    data: Option<&KernelSymbols>,
    plugin_out: &str,
) -> Result<(), String> {
    let sym = Symbolizer::new(syms)?;
    let data = data.map(Symbolizer::new).transpose()?;
    let windows = parse_windows(plugin_out)?;
    let mut missing = Vec::new();
    for r in &mut report.results {
        let Some(w) = r.window else { continue };
        if r.status != Status::Ok {
            continue;
        }
        let (events, insns) = window_totals(&r.samples);
        match windows.get(&w) {
            Some(counts) if events > 0.0 => {
                let counted = counts.coherence.as_ref().map_or(events, |c| {
                    c.events_in_span(events, &r.producer_events, &r.producer_cpus)
                });
                let mut p = profile(counts, &sym, events, insns, counted);
                p.contention = counts.coherence.as_ref().map(|c| {
                    coherence::contention(&coherence::Inputs {
                        counts: c,
                        text: &|a| function_of(sym.name(a)).to_string(),
                        data: &|a| {
                            let (name, off) = data.as_ref()?.containing(a)?;
                            Some((name.to_string(), off))
                        },
                        events,
                        counted,
                        producers: r.producers,
                        spin: p
                            .functions
                            .iter()
                            .filter(|f| coherence::is_spin_wait(&f.name))
                            .map(|f| f.insn)
                            .sum(),
                    })
                });
                r.profile = Some(p);
            }
            _ => missing.push(r.name.clone()),
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "no complete profile window for {}",
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profiling::windows::BlockCount;
    use trig_guest::kallsyms;

    /// A window of `(address, instructions, executions)` blocks.
    pub(crate) fn window(blocks: &[(u64, u64, u64)]) -> Window {
        Window {
            blocks: blocks
                .iter()
                .map(|&(addr, insns, execs)| BlockCount {
                    addr,
                    insns,
                    execs,
                    memory: None,
                })
                .collect(),
            user: None,
            coherence: None,
        }
    }

    fn syms() -> KernelSymbols {
        kallsyms::parse(
            "ffffffff81000000 T do_syscall_64\n\
             ffffffff81000100 t strnlen\n\
             ffffffff81000200 T sized_strscpy\n\
             ffffffff82000000 B _end\n",
        )
    }

    #[test]
    fn addresses_are_named_by_the_function_they_fall_in() {
        let s = Symbolizer::new(&syms()).unwrap();
        assert_eq!(s.name(0xffffffff81000000), "do_syscall_64");
        assert_eq!(s.name(0xffffffff810000ff), "do_syscall_64");
        assert_eq!(s.name(0xffffffff81000150), "strnlen");
        assert_eq!(s.name(0xffffffff81ffffff), "sized_strscpy");
        // BPF JIT and trampolines live outside the image, on both sides
        assert_eq!(s.name(0xffffffffa0001000), JIT);
        assert_eq!(s.name(0xffff800000001000), JIT);
    }

    #[test]
    fn compiler_clones_count_as_their_function() {
        assert_eq!(
            function_of("syscall_trace_enter.constprop.0"),
            "syscall_trace_enter"
        );
        assert_eq!(
            function_of("perf_call_bpf_enter.isra.0"),
            "perf_call_bpf_enter"
        );
        assert_eq!(function_of("do_syscall_64"), "do_syscall_64");
        assert_eq!(function_of(JIT), JIT);
    }

    #[test]
    fn windows_parse_and_a_cut_one_is_left_out() {
        let w = parse_windows(
            "window 0\nffffffff81000000 30 3\nend 0\nwindow 1\nffffffff81000100 5 1\n",
        )
        .unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(w[&0], window(&[(0xffffffff81000000, 30, 3)]));
        assert!(parse_windows("window 0\nnonsense\n").is_err());
        // an older plugin's lines have no executions: refused, not read as none
        assert!(parse_windows("window 0\nffffffff81000000 30\nend 0\n").is_err());
        assert!(parse_windows("window 0\nend 1\n").is_err());
        // a cache model's columns come five at a time
        assert!(parse_windows("window 0\nffffffff81000000 30 3 1 2\nend 0\n").is_err());
        assert!(parse_windows("window 0\nuser 1 2 3\nend 0\n").is_err());
    }

    #[test]
    fn a_cache_model_s_counts_become_accesses_and_cycles_per_event() {
        let w = parse_windows(
            "window 0\n\
             ffffffff81000000 100 10 40 20 2 10 1\n\
             ffffffff81000100 50 10 10 0 0 5 0\n\
             user 30 10 1 3 0\n\
             end 0\n",
        )
        .unwrap();
        let s = Symbolizer::new(&syms()).unwrap();
        let p = profile(&w[&0], &s, 10.0, 4000.0, 10.0);
        let m = p.memory.unwrap();
        let kernel = Accesses {
            loads: 5.0,
            stores: 2.0,
            l1i_misses: 0.2,
            l1d_misses: 1.5,
            ll_misses: 0.1,
        };
        assert_eq!(m.kernel, kernel);
        assert_eq!(m.user.loads, 3.0);
        // 400 instructions, 0.2 + 1.5 + 0.1 + 0.3 L1 misses, 0.1 LL, no trap
        assert!(
            (m.cycles - (400.0 + 10.0 * 2.1 + 100.0 * 0.1)).abs() < 1e-9,
            "{}",
            m.cycles
        );
        let f = |name: &str| {
            p.functions
                .iter()
                .find(|f| f.name == name)
                .unwrap()
                .memory
                .unwrap()
        };
        assert_eq!(f("strnlen").l1d_misses, 0.5);
        assert_eq!(f("do_syscall_64").loads, 4.0);
        // no cache model, no memory
        let plain = parse_windows("window 0\nffffffff81000000 100 10\nend 0\n").unwrap();
        assert_eq!(profile(&plain[&0], &s, 10.0, 4000.0, 10.0).memory, None);
    }

    #[test]
    fn a_function_s_coherence_misses_are_per_event_of_the_span_as_the_contention_s() {
        // CPU 1 ran twice CPU 0's clock: half its events fell past the
        // span, where nothing was counted
        // the block in two shapes: two slots, two lines of misses
        let w = parse_windows(
            "window 0\n\
             ffffffff81000000 60 6\n\
             ffffffff81000000 40 4\n\
             coh ffffffff81000000 30 8\n\
             coh ffffffff81000000 10 2\n\
             vcpu 0 100 0 20 5 0 0 100\n\
             vcpu 1 200 0 20 5 0 0 200\n\
             span 100\n\
             end 0",
        )
        .unwrap();
        let s = Symbolizer::new(&syms()).unwrap();
        let coh = w[&0].coherence.as_ref().unwrap();
        let counted = coh.events_in_span(30.0, &[10, 20], &[0, 1]);
        let p = profile(&w[&0], &s, 30.0, 4000.0, counted);
        let c = coherence::contention(&coherence::Inputs {
            counts: coh,
            text: &|_| String::new(),
            data: &|_| None,
            events: 30.0,
            counted,
            producers: 2,
            spin: 0.0,
        });
        let f = p
            .functions
            .iter()
            .find(|f| f.name == "do_syscall_64")
            .unwrap();
        assert_eq!(f.coherence.unwrap().misses, 2.0);
        assert_eq!(f.coherence.unwrap().misses, c.kernel.misses);
    }

    #[test]
    fn counts_become_instructions_per_event() {
        let s = Symbolizer::new(&syms()).unwrap();
        let counts = [
            (0xffffffff81000000, 100, 10),
            (0xffffffff81000010, 100, 10),
            (0xffffffff81000100, 50, 10),
            (0xffffffffa0000000, 30, 10),
            // under the floor: counted in `kernel`, not listed
            (0xffffffff81000200, 0, 0),
        ];
        let p = profile(&window(&counts), &s, 10.0, 4000.0, 10.0);
        assert_eq!(p.total, 400.0);
        assert_eq!(p.kernel, 28.0);
        let listed: Vec<(&str, f64)> = p
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.insn))
            .collect();
        assert_eq!(
            listed,
            [("do_syscall_64", 20.0), ("strnlen", 5.0), (JIT, 3.0)]
        );
        assert_eq!(p.kernel_rest(), 0.0);
    }

    #[test]
    fn calls_and_entries_are_the_executions_of_a_function_s_first_block() {
        let s = Symbolizer::new(&kallsyms::parse(
            "ffffffff81000000 T asm_exc_int3\n\
             ffffffff81000040 T entry_SYSCALL_64\n\
             ffffffff81000040 T entry_SYSCALL_64_alias\n\
             ffffffff81000100 T asm_sysvec_apic_timer_interrupt\n\
             ffffffff81000200 t uprobe_notify_resume\n\
             ffffffff81000300 t uprobe_notify_resume.cold\n\
             ffffffff82000000 B _end\n",
        ))
        .unwrap();
        let counts = [
            (0xffffffff81000000, 60, 10),
            // a later block of the trap's entry: no entry
            (0xffffffff81000010, 40, 10),
            // an alias at the same address still names the syscall entry
            (0xffffffff81000040, 50, 5),
            (0xffffffff81000100, 10, 1),
            (0xffffffff81000200, 100, 10),
            // a jump into the cold part is no call
            (0xffffffff81000300, 20, 2),
            (0xffffffffa0000000, 30, 10),
        ];
        let p = profile(&window(&counts), &s, 10.0, 4000.0, 10.0);
        assert_eq!(
            p.entries,
            Some(Entries {
                traps: 1.0,
                syscalls: 0.5,
                interrupts: 0.1
            })
        );
        let calls = |name: &str| p.functions.iter().find(|f| f.name == name).unwrap().calls;
        assert_eq!(calls("asm_exc_int3"), 1.0);
        assert_eq!(calls("uprobe_notify_resume"), 1.0);
        assert_eq!(calls(JIT), 0.0);
    }
}
