//! Uprobe targets: functions in this binary whose first instruction is
//! chosen on purpose, because the kernel handles each differently: a nop
//! is emulated, a push is emulated on x86 (or single-stepped), a bare ret
//! probes the return path, x86's 5-byte nop can be optimised away, and a
//! USDT probe is a nop that an ELF note names.
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

// A USDT probe, provider `trig`, name `usdt`, as <sys/sdt.h> writes one:
// a nop where the probe is and a .note.stapsdt entry that gives its
// address (with .stapsdt.base, for prelink) and names, from which libbpf
// finds where to put the uprobe. The note is not loaded; the same
// assembly serves both architectures.
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl trig_uprobe_target_usdt",
    "trig_uprobe_target_usdt:",
    "990: nop",
    "ret",
    ".pushsection .note.stapsdt, \"\", \"note\"",
    ".balign 4",
    ".4byte 992f - 991f, 994f - 993f, 3",
    "991: .asciz \"stapsdt\"",
    "992: .balign 4",
    "993: .8byte 990b",
    ".8byte _.stapsdt.base",
    // no semaphore
    ".8byte 0",
    ".asciz \"trig\"",
    ".asciz \"usdt\"",
    // no arguments
    ".asciz \"\"",
    "994: .balign 4",
    ".popsection",
    ".ifndef _.stapsdt.base",
    ".pushsection .stapsdt.base, \"aG\", \"progbits\", .stapsdt.base, comdat",
    ".weak _.stapsdt.base",
    ".hidden _.stapsdt.base",
    "_.stapsdt.base: .space 1",
    ".size _.stapsdt.base, 1",
    ".popsection",
    ".endif",
);

extern "C" {
    fn trig_uprobe_target_usdt();
    fn trig_uprobe_target_nop();
    fn trig_uprobe_target_push();
    fn trig_uprobe_target_ret();
    #[cfg(target_arch = "x86_64")]
    fn trig_uprobe_target_nop5();
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
        #[cfg(not(target_arch = "x86_64"))]
        UTarget::Nop5 => trig_uprobe_target_nop,
    };
    unsafe { std::mem::transmute::<unsafe extern "C" fn(), extern "C" fn()>(f) }
}

/// The offset of `addr` in the file mapped at it, from /proc/self/maps.
pub fn file_offset(addr: usize) -> Result<usize, String> {
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
        for t in [UTarget::Nop, UTarget::Push, UTarget::Ret, UTarget::Nop5] {
            call_loop(function(t), 3);
        }
    }

    #[test]
    fn targets_are_callable_and_in_our_file() {
        for t in [
            UTarget::Nop,
            UTarget::Push,
            UTarget::Ret,
            UTarget::Nop5,
            UTarget::Usdt,
        ] {
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
    }
}
