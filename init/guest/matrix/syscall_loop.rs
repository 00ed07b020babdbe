//! The producers' system call loops, in assembly: the getpgid() of the
//! trigger benchmarks and the write() of the rename ones. Compiled from
//! Rust (closures over nix's and std's wrappers) they cost 19 to 23
//! instructions a getpgid() and 36 to 56 a write as the rest of the crate
//! changed around them, so another build of trig-init moved rename-* by up
//! to 1.8% and trig-base by 1.3% on one kernel; written out, they cost the
//! same in every build: `mov`, `syscall`, `dec`, `jnz` on x86-64 (the
//! system call preserves every register but rax, rcx and r11), `mov`,
//! `svc`, `subs`, `b.ne` on arm64 (every register but x0).
//! docs/parity.md ("The producer loops") has them beside upstream's.

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    // trig_syscall_loop(a0, a1, a2, nr, n): n system calls nr(a0, a1, a2)
    // (n > 0); their results are dropped. The arguments stay in rdi, rsi
    // and rdx; nr moves to rbx, as rcx does not survive a syscall.
    ".text",
    ".p2align 4",
    ".globl trig_syscall_loop",
    "trig_syscall_loop:",
    "push rbx",
    "mov rbx, rcx",
    "2:",
    "mov rax, rbx",
    "syscall",
    "dec r8",
    "jnz 2b",
    "pop rbx",
    "ret",
);

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    // trig_syscall_loop(a0, a1, a2, nr, n): as on x86-64; x0 is the
    // result, so a0 is kept in x5 and put back before each call.
    ".text",
    ".p2align 4",
    ".globl trig_syscall_loop",
    "trig_syscall_loop:",
    "mov x8, x3",
    "mov x5, x0",
    "2:",
    "mov x0, x5",
    "svc #0",
    "subs x4, x4, #1",
    "b.ne 2b",
    "ret",
);

extern "C" {
    fn trig_syscall_loop(a0: usize, a1: usize, a2: usize, nr: usize, n: u64);
}

/// Makes `n` system calls `nr` with the arguments `args`, their results
/// dropped.
///
/// # Safety
/// The call must be sound for the process `n` times over: arguments that
/// are pointers must point at what `nr` reads (this module's callers pass
/// none, or a buffer that outlives the loop) and nothing `nr` writes may
/// break what Rust assumes of memory.
unsafe fn syscall_loop(nr: i64, args: [usize; 3], n: u64) {
    if n > 0 {
        // SAFETY: as the caller promises; the loop itself touches no memory
        // but its stack slot
        unsafe { trig_syscall_loop(args[0], args[1], args[2], nr as usize, n) }
    }
}

/// `n` getpgid(0) calls: the trigger benchmarks' event.
pub fn getpgid_loop(n: u64) {
    // SAFETY: getpgid takes a pid and touches no memory
    unsafe { syscall_loop(nix::libc::SYS_getpgid, [0; 3], n) }
}

/// `n` writes of `buf` to `fd`: the rename benchmarks' event, on
/// /proc/self/comm.
pub fn write_loop(fd: std::os::fd::BorrowedFd<'_>, buf: &[u8], n: u64) {
    use std::os::fd::AsRawFd;
    let args = [fd.as_raw_fd() as usize, buf.as_ptr() as usize, buf.len()];
    // SAFETY: write only reads `buf`, which is borrowed for the loop, from
    // an fd that is open for the loop
    unsafe { syscall_loop(nix::libc::SYS_write, args, n) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_write_loop_writes_n_times() {
        let (mut r, w) = std::io::pipe().unwrap();
        use std::os::fd::AsFd;
        write_loop(w.as_fd(), b"ab", 100);
        write_loop(w.as_fd(), b"ab", 0);
        drop(w);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"ab".repeat(100));
    }
}
