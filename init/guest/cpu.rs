//! The CPU as the guest sees it, for the report: part of what an icount
//! figure depends on (see `report::identity`).

use trig_schema::Cpu;

/// The CPU of the running system, from /proc/cpuinfo's first processor
/// and (x86-64) CPUID itself; None when /proc/cpuinfo cannot be read.
pub fn seen() -> Option<Cpu> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    Some(from_cpuinfo(&text, cpuid_words()))
}

/// The model and sorted flags of the first processor in `text`.
fn from_cpuinfo(text: &str, cpuid: Option<String>) -> Cpu {
    let first = text.split("\n\n").next().unwrap_or_default();
    let field = |names: &[&str]| {
        first.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            names.contains(&k.trim()).then(|| v.trim().to_string())
        })
    };
    let mut flags: Vec<String> = field(&["flags", "Features"])
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    flags.sort();
    Cpu {
        model: field(&["model name", "CPU part"]).unwrap_or_default(),
        flags,
        cpuid,
    }
}

/// The CPUID leaves that say what the CPU offers, `LEAF.SUB:EAX,EBX,ECX,EDX`
/// each, with the bits that are not the CPU's but the running system's
/// cleared: leaf 1's EBX (APIC id, logical count), OSXSAVE (CR4 as the
/// kernel set it) and OSPKE (likewise). arm64 has no such view: user space
/// reads ID registers through the kernel, which shows only fields it knows.
#[cfg(target_arch = "x86_64")]
fn cpuid_words() -> Option<String> {
    use std::arch::x86_64::__cpuid_count;
    const OSXSAVE: u32 = 1 << 27;
    const OSPKE: u32 = 1 << 4;
    // SAFETY: CPUID exists on every x86-64 CPU; leaves past the maximum
    // return another leaf's data, never fault
    #[allow(unused_unsafe)]
    let leaf = |l: u32, s: u32| unsafe { __cpuid_count(l, s) };
    let max = leaf(0, 0).eax;
    let max_ext = leaf(0x8000_0000, 0).eax;
    let mut words = Vec::new();
    for (l, s) in [
        (1, 0),
        (7, 0),
        (7, 1),
        (0xd, 1),
        (0x8000_0001, 0),
        (0x8000_0008, 0),
    ] {
        let present = if l >= 0x8000_0000 {
            l <= max_ext
        } else {
            l <= max
        };
        if !present {
            continue;
        }
        let mut r = leaf(l, s);
        match (l, s) {
            (1, 0) => {
                r.ebx = 0;
                r.ecx &= !OSXSAVE;
            }
            (7, 0) => r.ecx &= !OSPKE,
            _ => {}
        }
        words.push(format!(
            "{l:x}.{s}:{:x},{:x},{:x},{:x}",
            r.eax, r.ebx, r.ecx, r.edx
        ));
    }
    Some(words.join(" "))
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_words() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_processor_model_and_sorted_flags() {
        let text = "processor\t: 0\nmodel name\t: Intel Core Processor (Haswell)\n\
                    flags\t\t: sse2 fpu avx2\n\nprocessor\t: 1\nflags\t: other\n";
        let c = from_cpuinfo(text, None);
        assert_eq!(c.model, "Intel Core Processor (Haswell)");
        assert_eq!(c.flags, ["avx2", "fpu", "sse2"]);
        let arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm\nCPU part\t: 0xd0c\n";
        let c = from_cpuinfo(arm, None);
        assert_eq!((c.model.as_str(), c.flags.len()), ("0xd0c", 3));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn cpuid_words_repeat_and_name_leaf_one() {
        let w = cpuid_words().unwrap();
        assert!(w.starts_with("1.0:"), "{w}");
        assert_eq!(w, cpuid_words().unwrap());
    }
}
