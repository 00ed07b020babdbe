//! Uprobe targets: functions in this binary whose first instruction is
//! chosen on purpose, because the kernel handles each differently: a nop
//! is emulated, a push is emulated on x86 (or single-stepped), a bare ret
//! probes the return path, x86's 5-byte nop is optimised by 6.18 to 7.1
//! and its 10-byte nop by 7.2 (a call into a trampoline instead of a
//! trap), and a USDT probe is a nop that an ELF note names.
//! They are written in assembly so that the compiler cannot inline or
//! reshape them, and found by address, so stripping the binary is harmless.
//!
//! The loop that calls them is assembly too (`call_loop`): upstream's
//! producer is `call; jmp` around the target, and a compiled Rust loop
//! (an up-counter compared against the batch) cost one or two
//! instructions more per call. Ours counts down: `call`, the target,
//! `dec`, `jnz`; docs/parity.md ("The producer loops") shows the
//! disassembly.

use crate::registry::UTarget;

// A USDT probe, provider `trig`, name `$name`, as <sys/sdt.h> writes
// one: an instruction where the probe is (label 990, just before) and a
// .note.stapsdt entry that gives its address (with .stapsdt.base, for
// prelink) and names, from which libbpf finds where to put the uprobe.
// The note is not loaded; the same assembly serves both architectures. A
// macro of the template rather than an assembler one: global_asm! blocks
// may land in different objects.
macro_rules! usdt_note {
    ($name:literal) => {
        concat!(
            ".pushsection .note.stapsdt, \"\", \"note\"\n",
            ".balign 4\n",
            ".4byte 992f - 991f, 994f - 993f, 3\n",
            "991: .asciz \"stapsdt\"\n",
            "992: .balign 4\n",
            "993: .8byte 990b\n",
            ".8byte _.stapsdt.base\n",
            // no semaphore
            ".8byte 0\n",
            ".asciz \"trig\"\n",
            ".asciz \"",
            $name,
            "\"\n",
            // no arguments
            ".asciz \"\"\n",
            "994: .balign 4\n",
            ".popsection\n",
            ".ifndef _.stapsdt.base\n",
            ".pushsection .stapsdt.base, \"aG\", \"progbits\", .stapsdt.base, comdat\n",
            ".weak _.stapsdt.base\n",
            ".hidden _.stapsdt.base\n",
            "_.stapsdt.base: .space 1\n",
            ".size _.stapsdt.base, 1\n",
            ".popsection\n",
            ".endif",
        )
    };
}

std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl trig_uprobe_target_usdt",
    "trig_uprobe_target_usdt:",
    "990: nop",
    "ret",
    usdt_note!("usdt"),
);

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl trig_uprobe_target_nop",
    "trig_uprobe_target_nop:",
    "nop",
    "ret",
    ".p2align 4",
    ".globl trig_uprobe_target_push",
    "trig_uprobe_target_push:",
    "push rbp",
    "mov rbp, rsp",
    "call trig_uprobe_target_ret",
    "pop rbp",
    "ret",
    ".p2align 4",
    ".globl trig_uprobe_target_ret",
    "trig_uprobe_target_ret:",
    "ret",
    ".p2align 4",
    ".globl trig_uprobe_target_nop5",
    "trig_uprobe_target_nop5:",
    ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
    "ret",
    // nopw %cs:0(%rax,%rax,1): the only 10-byte nop that 7.2 optimises
    // (is_optimizable_nop10), 16-byte aligned so it never crosses a page
    ".p2align 4",
    ".globl trig_uprobe_target_nop10",
    "trig_uprobe_target_nop10:",
    ".byte 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00",
    "ret",
    // the USDT probes trig:usdt_nop5, upstream's nop then nop5, and
    // trig:usdt_nop10, on the 10-byte nop itself
    ".p2align 4",
    ".globl trig_uprobe_target_usdt_nop5",
    "trig_uprobe_target_usdt_nop5:",
    "990: nop",
    ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00",
    "ret",
    usdt_note!("usdt_nop5"),
    ".p2align 4",
    ".globl trig_uprobe_target_usdt_nop10",
    "trig_uprobe_target_usdt_nop10:",
    "990: .byte 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00",
    "ret",
    usdt_note!("usdt_nop10"),
    // trig_call_loop(f, n): calls f n times (n > 0). rbx and r12 are
    // callee-saved, so they hold whatever any target does; the three
    // pushes leave the stack 16-byte aligned at each call.
    ".p2align 4",
    ".globl trig_call_loop",
    "trig_call_loop:",
    "push rbx",
    "push r12",
    "push rax",
    "mov rbx, rdi",
    "mov r12, rsi",
    "2:",
    "call rbx",
    "dec r12",
    "jnz 2b",
    "pop rax",
    "pop r12",
    "pop rbx",
    "ret",
);

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl trig_uprobe_target_nop",
    "trig_uprobe_target_nop:",
    "nop",
    "ret",
    ".p2align 4",
    ".globl trig_uprobe_target_push",
    "trig_uprobe_target_push:",
    "stp x29, x30, [sp, #-16]!",
    "mov x29, sp",
    "bl trig_uprobe_target_ret",
    "ldp x29, x30, [sp], #16",
    "ret",
    ".p2align 4",
    ".globl trig_uprobe_target_ret",
    "trig_uprobe_target_ret:",
    "ret",
    // trig_call_loop(f, n): calls f n times (n > 0), from callee-saved
    // registers; x29/x30 saved because blr overwrites the link register.
    ".p2align 4",
    ".globl trig_call_loop",
    "trig_call_loop:",
    "stp x29, x30, [sp, #-32]!",
    "stp x19, x20, [sp, #16]",
    "mov x29, sp",
    "mov x19, x0",
    "mov x20, x1",
    "2:",
    "blr x19",
    "subs x20, x20, #1",
    "b.ne 2b",
    "ldp x19, x20, [sp, #16]",
    "ldp x29, x30, [sp], #32",
    "ret",
);

extern "C" {
    fn trig_uprobe_target_usdt();
    fn trig_uprobe_target_nop();
    fn trig_uprobe_target_push();
    fn trig_uprobe_target_ret();
    #[cfg(target_arch = "x86_64")]
    fn trig_uprobe_target_nop5();
    #[cfg(target_arch = "x86_64")]
    fn trig_uprobe_target_nop10();
    #[cfg(target_arch = "x86_64")]
    fn trig_uprobe_target_usdt_nop5();
    #[cfg(target_arch = "x86_64")]
    fn trig_uprobe_target_usdt_nop10();
    fn trig_call_loop(f: extern "C" fn(), n: u64);
}

/// Calls `f` `n` times (nothing when `n` is 0) in the assembly loop above:
/// per call the `call`, the target, and a count-down `dec`/`jnz` (x86-64;
/// `blr`, the target, `subs`/`b.ne` on arm64).
pub fn call_loop(f: extern "C" fn(), n: u64) {
    if n > 0 {
        // SAFETY: the loop only calls `f`, one of the targets above, which
        // only return; it restores every register it uses.
        unsafe { trig_call_loop(f, n) }
    }
}

/// The function to call for `target`.
pub fn function(target: UTarget) -> extern "C" fn() {
    // SAFETY: each target only returns; it touches no state.
    let f: unsafe extern "C" fn() = match target {
        UTarget::Nop => trig_uprobe_target_nop,
        UTarget::Push => trig_uprobe_target_push,
        UTarget::Ret => trig_uprobe_target_ret,
        UTarget::Usdt => trig_uprobe_target_usdt,
        #[cfg(target_arch = "x86_64")]
        UTarget::Nop5 => trig_uprobe_target_nop5,
        #[cfg(target_arch = "x86_64")]
        UTarget::Nop10 => trig_uprobe_target_nop10,
        #[cfg(target_arch = "x86_64")]
        UTarget::UsdtNop5 => trig_uprobe_target_usdt_nop5,
        #[cfg(target_arch = "x86_64")]
        UTarget::UsdtNop10 => trig_uprobe_target_usdt_nop10,
        // the registry runs these on x86-64 only
        #[cfg(not(target_arch = "x86_64"))]
        UTarget::Nop5 | UTarget::Nop10 => trig_uprobe_target_nop,
        #[cfg(not(target_arch = "x86_64"))]
        UTarget::UsdtNop5 | UTarget::UsdtNop10 => trig_uprobe_target_usdt,
    };
    unsafe { std::mem::transmute::<unsafe extern "C" fn(), extern "C" fn()>(f) }
}

/// The offset of `addr` in the file mapped at it, from /proc/self/maps.
pub(crate) fn file_offset(addr: usize) -> Result<usize, String> {
    let maps = std::fs::read_to_string("/proc/self/maps")
        .map_err(|e| format!("reading /proc/self/maps: {e}"))?;
    offset_in_maps(&maps, addr).ok_or_else(|| format!("address {addr:#x} is in no file mapping"))
}

fn offset_in_maps(maps: &str, addr: usize) -> Option<usize> {
    maps.lines().find_map(|line| {
        // start-end perms offset dev inode path
        let mut f = line.split_whitespace();
        let (start, end) = f.next()?.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        let offset = usize::from_str_radix(f.nth(1)?, 16).ok()?;
        let path = f.nth(2)?;
        (start <= addr && addr < end && path.starts_with('/')).then(|| addr - start + offset)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lookup() {
        let maps = "55d0a000-55d0b000 r--p 00000000 08:01 42 /init\n\
                    55d0b000-55d0f000 r-xp 00001000 08:01 42 /init\n\
                    7ffd000-7ffe000 rw-p 00000000 00:00 0 [stack]\n";
        assert_eq!(offset_in_maps(maps, 0x55d0b010), Some(0x1010));
        assert_eq!(offset_in_maps(maps, 0x7ffd010), None);
    }

    #[test]
    fn call_loop_calls_n_times() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static CALLS: AtomicU64 = AtomicU64::new(0);
        extern "C" fn count() {
            CALLS.fetch_add(1, Ordering::Relaxed);
        }
        call_loop(count, 0);
        assert_eq!(CALLS.load(Ordering::Relaxed), 0);
        call_loop(count, 1000);
        assert_eq!(CALLS.load(Ordering::Relaxed), 1000);
        for t in ALL {
            call_loop(function(t), 3);
        }
    }

    const ALL: [UTarget; 8] = [
        UTarget::Nop,
        UTarget::Push,
        UTarget::Ret,
        UTarget::Nop5,
        UTarget::Nop10,
        UTarget::Usdt,
        UTarget::UsdtNop5,
        UTarget::UsdtNop10,
    ];

    #[test]
    fn targets_are_callable_and_in_our_file() {
        for t in ALL {
            let f = function(t);
            f();
            assert!(file_offset(f as usize).is_ok());
        }
    }

    #[test]
    fn the_usdt_note_is_in_the_binary() {
        let exe = std::fs::read("/proc/self/exe").unwrap();
        let at = |needle: &[u8]| exe.windows(needle.len()).position(|w| w == needle);
        // the note's name, then provider, name and empty arguments
        assert!(at(b"stapsdt\0").is_some());
        assert!(at(b"trig\0usdt\0\0").is_some());
        if cfg!(target_arch = "x86_64") {
            assert!(at(b"trig\0usdt_nop5\0\0").is_some());
            assert!(at(b"trig\0usdt_nop10\0\0").is_some());
        }
    }

    /// The first bytes of each x86-64 target are what the kernel decides
    /// on: 7.2 optimises only this nop10, and libbpf moves a USDT probe
    /// only from a nop followed by exactly this nop5.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x86_targets_start_with_their_nops() {
        let head = |t| {
            let f = function(t) as usize as *const u8;
            // SAFETY: each target is longer than 12 bytes of code
            unsafe { std::slice::from_raw_parts(f, 12) }.to_vec()
        };
        let nop5 = [0x0f, 0x1f, 0x44, 0x00, 0x00];
        let nop10 = [0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0];
        assert_eq!(head(UTarget::Nop5)[..6], [&nop5[..], &[0xc3]].concat());
        assert_eq!(head(UTarget::Nop10)[..11], [&nop10[..], &[0xc3]].concat());
        assert_eq!(head(UTarget::UsdtNop5)[..6], [&[0x90][..], &nop5].concat());
        assert_eq!(head(UTarget::UsdtNop10)[..10], nop10);
    }
}
