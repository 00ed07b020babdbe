//! The producers' system call loops, in assembly: the getpgid() of the
//! trigger benchmarks and the write() of the rename ones. Compiled from
//! Rust (closures over nix's and std's wrappers) they cost 19 to 23
//! instructions a getpgid() and 36 to 56 a write as the rest of the crate
//! changed around them, so another build of trig-init moved rename-* by up
//! to 1.8% and trig-base by 1.3% on one kernel; written out, they cost the
//! same in every build: `mov`, `syscall`, `dec`, `jnz` on x86-64 (the
//! system call preserves every register but rax, rcx and r11), `mov`,
//! `svc`, `subs`, `b.ne` on arm64 (every register but x0). An injected
//! slowdown (`trig.inject=`) spins in assembly too, six instructions an
//! iteration, so that it adds what it says whatever the build.
//! docs/parity.md ("The producer loops") has them beside upstream's.

/// A loop's assembly: `$name`'s entry, the architecture's head, then the
/// `$spin` lines (none in the plain loop) before each system call and its
/// tail, so that the spinning loop is the plain one and its spin, to the
/// instruction.
macro_rules! syscall_loop_asm {
    ($name:literal $(, $spin:literal)*) => {
        concat!(
            ".p2align 4\n",
            ".globl ", $name, "\n",
            $name, ":\n",
            loop_head!(),
            $($spin, "\n",)*
            loop_tail!(),
        )
    };
}

#[cfg(target_arch = "x86_64")]
macro_rules! loop_head {
    () => {
        "push rbx\nmov rbx, rcx\n2:\n"
    };
}

#[cfg(target_arch = "x86_64")]
macro_rules! loop_tail {
    () => {
        "mov rax, rbx\nsyscall\ndec r8\njnz 2b\npop rbx\nret\n"
    };
}

#[cfg(target_arch = "aarch64")]
macro_rules! loop_head {
    () => {
        "mov x8, x3\nmov x6, x0\n2:\n"
    };
}

#[cfg(target_arch = "aarch64")]
macro_rules! loop_tail {
    () => {
        "mov x0, x6\nsvc #0\nsubs x4, x4, #1\nb.ne 2b\nret\n"
    };
}

// trig_syscall_loop(a0, a1, a2, nr, n): n system calls nr(a0, a1, a2)
// (n > 0); their results are dropped. On x86-64 the arguments stay in
// rdi, rsi and rdx, and nr moves to rbx, as rcx does not survive a
// syscall; on arm64 x0 is the result, so a0 is kept in x6 and put back
// before each call. trig_syscall_spin_loop(a0, a1, a2, nr, n, spins): the
// same, with an injected slowdown of spins (> 0) iterations of six
// instructions before each call, counted down in r10 (which getpgid and
// write do not read, and a syscall preserves) or x7.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    syscall_loop_asm!("trig_syscall_loop"),
    syscall_loop_asm!(
        "trig_syscall_spin_loop",
        "mov r10, r9",
        "3:",
        "nop",
        "nop",
        "nop",
        "nop",
        "dec r10",
        "jnz 3b"
    ),
);

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".text",
    syscall_loop_asm!("trig_syscall_loop"),
    syscall_loop_asm!(
        "trig_syscall_spin_loop",
        "mov x7, x5",
        "3:",
        "nop",
        "nop",
        "nop",
        "nop",
        "subs x7, x7, #1",
        "b.ne 3b"
    ),
);

extern "C" {
    fn trig_syscall_loop(a0: usize, a1: usize, a2: usize, nr: usize, n: u64);
    fn trig_syscall_spin_loop(a0: usize, a1: usize, a2: usize, nr: usize, n: u64, spins: u64);
}

/// Makes `n` system calls `nr` with the arguments `args`, their results
/// dropped, each after `spins` iterations of an injected spin (six
/// instructions each, and one a call to start them).
///
/// # Safety
/// The call must be sound for the process `n` times over: arguments that
/// are pointers must point at what `nr` reads (this module's callers pass
/// none, or a buffer that outlives the loop) and nothing `nr` writes may
/// break what Rust assumes of memory.
unsafe fn syscall_loop(nr: i64, args: [usize; 3], n: u64, spins: u32) {
    let [a0, a1, a2] = args;
    // SAFETY: as the caller promises; the loops touch no memory but their
    // stack slot
    unsafe {
        match (n, spins) {
            (0, _) => {}
            (_, 0) => trig_syscall_loop(a0, a1, a2, nr as usize, n),
            _ => trig_syscall_spin_loop(a0, a1, a2, nr as usize, n, u64::from(spins)),
        }
    }
}

/// `n` getpgid(0) calls: the trigger benchmarks' event; `spins`: the
/// injected slowdown (`trig.inject=`) before each.
pub fn getpgid_loop(n: u64, spins: u32) {
    // SAFETY: getpgid takes a pid and touches no memory
    unsafe { syscall_loop(nix::libc::SYS_getpgid, [0; 3], n, spins) }
}

/// `n` writes of `buf` to `fd`: the rename benchmarks' event, on
/// /proc/self/comm; `spins` as for [`getpgid_loop`].
pub fn write_loop(fd: std::os::fd::BorrowedFd<'_>, buf: &[u8], n: u64, spins: u32) {
    use std::os::fd::AsRawFd;
    let args = [fd.as_raw_fd() as usize, buf.as_ptr() as usize, buf.len()];
    // SAFETY: write only reads `buf`, which is borrowed for the loop, from
    // an fd that is open for the loop
    unsafe { syscall_loop(nix::libc::SYS_write, args, n, spins) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_write_loop_writes_n_times() {
        let (mut r, w) = std::io::pipe().unwrap();
        use std::os::fd::AsFd;
        write_loop(w.as_fd(), b"ab", 100, 0);
        write_loop(w.as_fd(), b"ab", 0, 0);
        // injected: as many writes, each after its spin
        write_loop(w.as_fd(), b"ab", 50, 3);
        drop(w);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"ab".repeat(150));
    }
}
