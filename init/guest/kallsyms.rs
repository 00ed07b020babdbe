//! The running kernel's text symbols, for the host to name the addresses
//! the profiling plugin counted (Debian's System.map files are placeholders
//! and its vmlinux has no symbol table; the guest's kallsyms always works).

use trig_schema::KernelSymbols;

/// Reads `/proc/kallsyms` with addresses shown to root: its text
/// symbols, and its data symbols too when `data` (CONFIG_KALLSYMS_ALL
/// lists them).
pub(crate) fn read(data: bool) -> Result<(KernelSymbols, Option<KernelSymbols>), String> {
    // 0 shows addresses to CAP_SYSLOG; a kernel without the knob shows them
    let _ = std::fs::write("/proc/sys/kernel/kptr_restrict", "0");
    let text = std::fs::read_to_string("/proc/kallsyms")
        .map_err(|e| format!("/proc/kallsyms: {e} (needs CONFIG_KALLSYMS)"))?;
    let syms = parse(&text);
    if syms.names.is_empty() {
        return Err("/proc/kallsyms lists no text symbols with addresses".into());
    }
    Ok((syms, data.then(|| parse_data(&text))))
}

/// The core kernel's text symbols (`t`/`T`, no module) of a kallsyms
/// listing, sorted, and the image's end.
pub fn parse(text: &str) -> KernelSymbols {
    parse_kinds(text, |k| matches!(k, "t" | "T"))
}

/// The core kernel's data symbols (initialized, zeroed, read-only), per-CPU
/// offsets left out: they are no address.
pub fn parse_data(text: &str) -> KernelSymbols {
    parse_kinds(text, |k| matches!(k, "d" | "D" | "b" | "B" | "r" | "R"))
}

fn parse_kinds(text: &str, kept: fn(&str) -> bool) -> KernelSymbols {
    // a kernel address has its top bit set on x86-64 and arm64 alike
    let kernel = |addr: u64| addr >> 63 == 1;
    let mut text_syms = Vec::new();
    let mut end = 0;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name), None) = (f.next(), f.next(), f.next(), f.next())
        else {
            // four fields: a module's symbol, `name [module]`
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        if !kernel(addr) {
            continue;
        }
        if name == "_end" {
            end = addr;
        } else if kept(kind) {
            text_syms.push((addr, name.to_string()));
        }
    }
    text_syms.sort();
    let base = text_syms.first().map_or(0, |s| s.0);
    let mut last = base;
    let mut syms = KernelSymbols {
        base,
        end,
        ..Default::default()
    };
    for (addr, name) in text_syms {
        syms.deltas.push(addr - last);
        syms.names.push(name);
        last = addr;
    }
    if syms.end <= last {
        // no `_end`: past the last symbol is unknown, not the last function
        syms.end = last + 1;
    }
    syms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_symbols_sorted_and_delta_encoded() {
        let s = parse(
            "ffffffff81000010 T second\n\
             ffffffff81000000 t first\n\
             ffffffff82000000 D some_data\n\
             ffffffffa0001000 t bpf_prog_abc_x\t[bpf]\n\
             0000000000000000 T hidden\n\
             ffffffff83000000 B _end\n",
        );
        assert_eq!(s.base, 0xffffffff81000000);
        assert_eq!(s.deltas, [0, 0x10]);
        assert_eq!(s.names, ["first", "second"]);
        assert_eq!(s.end, 0xffffffff83000000);
    }
}
