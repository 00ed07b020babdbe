// SPDX-License-Identifier: GPL-2.0
/* The trigger matrix: one program per way of attaching. Every program has
 * autoload off ("?"), so a benchmark loads only the one it measures and a
 * kernel that refuses another attach type does not fail it. */
#include "common.h"
#include <bpf/usdt.bpf.h>

/* Iterations of the driver loop per BPF_PROG_TEST_RUN (set before load). */
const volatile __u32 batch_iters = 100;

/* --stacktrace (upstream's, 7.0): the kprobe, kretprobe, multi, fentry,
 * fexit, fmod_ret, tp and raw_tp programs also walk the kernel stack with
 * bpf_get_stack() on every event. Each such program has a twin NAME_stack
 * that does, rather than a flag tested at run time, so that the default
 * programs stay instruction for instruction what they were (a flag in
 * .rodata costs a load and a branch per event that the verifier keeps). */
#define STACK_DEPTH 127 /* PERF_MAX_STACK_DEPTH */
__u64 stack[STACK_DEPTH];

static __always_inline void walk_stack(void *ctx)
{
	bpf_get_stack(ctx, stack, sizeof(stack), 0);
}

/* NAME at SEC, counting every event and returning RET, and its twin. */
#define COUNTING(sec, name, ret)					\
	SEC(sec) int name(void *ctx) { inc_hits(); return ret; }	\
	SEC(sec) int name##_stack(void *ctx)				\
	{ walk_stack(ctx); inc_hits(); return ret; }

/* --- syscall-driven: the producer loops getpgid() --- */

COUNTING("?tp/syscalls/sys_enter_getpgid", trig_tp, 0)

/* args[1] is the syscall number; count getpgid only */
SEC("?raw_tp/sys_enter")
int trig_rawtp(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] == NR_GETPGID)
		inc_hits();
	return 0;
}

SEC("?raw_tp/sys_enter")
int trig_rawtp_stack(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] == NR_GETPGID) {
		walk_stack(ctx);
		inc_hits();
	}
	return 0;
}

COUNTING("?kprobe/" SYS_GETPGID, trig_kprobe, 0)
COUNTING("?kretprobe/" SYS_GETPGID, trig_kretprobe, 0)
COUNTING("?kprobe.multi/" SYS_GETPGID, trig_kprobe_multi, 0)
COUNTING("?kretprobe.multi/" SYS_GETPGID, trig_kretprobe_multi, 0)
COUNTING("?fentry/" SYS_GETPGID, trig_fentry, 0)
COUNTING("?fexit/" SYS_GETPGID, trig_fexit, 0)
/* Returning 0 lets the syscall run as usual. */
COUNTING("?fmod_ret/" SYS_GETPGID, trig_fmodret, 0)

/* Sleepable: the verifier allows it only on functions of the
 * error-injection list (CONFIG_FUNCTION_ERROR_INJECTION), as syscalls are. */
SEC("?fentry.s/" SYS_GETPGID)
int trig_fentry_sleep(void *ctx) { inc_hits(); return 0; }

/* --- batched in-kernel: a never-attached driver run by BPF_PROG_TEST_RUN --- */

SEC("?raw_tp")
int trig_driver(void *ctx)
{
	for (__u32 i = 0; i < batch_iters; i++)
		(void)bpf_get_numa_node_id(); /* the attach point */
	return 0;
}

/* The driver loop alone: the ceiling of the batched benchmarks. */
SEC("?raw_tp")
int trig_kernel_count(void *ctx)
{
	for (__u32 i = 0; i < batch_iters; i++)
		inc_hits();
	return 0;
}

COUNTING("?kprobe/bpf_get_numa_node_id", trig_batch_kprobe, 0)
COUNTING("?kretprobe/bpf_get_numa_node_id", trig_batch_kretprobe, 0)
COUNTING("?kprobe.multi/bpf_get_numa_node_id", trig_batch_kprobe_multi, 0)
COUNTING("?kretprobe.multi/bpf_get_numa_node_id", trig_batch_kretprobe_multi, 0)
COUNTING("?fentry/bpf_get_numa_node_id", trig_batch_fentry, 0)
COUNTING("?fexit/bpf_get_numa_node_id", trig_batch_fexit, 0)

/* The -all benchmarks (upstream's, 6.18): one more kprobe_multi link, of
 * a program that does nothing, on every function the kernel can trace but
 * the attach point (matrix/everywhere.rs picks them), so that the attach
 * point's cost is measured with every other function probed too. */
SEC("?kprobe.multi/bpf_get_numa_node_id")
int trig_kprobe_multi_empty(void *ctx) { return 0; }

SEC("?kretprobe.multi/bpf_get_numa_node_id")
int trig_kretprobe_multi_empty(void *ctx) { return 0; }

/* 6.10+: a test kfunc and a test tracepoint made for this benchmark. Weak,
 * so that the object still opens on kernels without them. */
extern int bpf_modify_return_test_tp(int nonce) __ksym __weak;

SEC("?raw_tp")
int trig_driver_kfunc(void *ctx)
{
	for (__u32 i = 0; i < batch_iters; i++)
		(void)bpf_modify_return_test_tp(i); /* the attach point */
	return 0;
}

COUNTING("?fmod_ret/bpf_modify_return_test_tp", trig_batch_fmodret, -22)
COUNTING("?tp/bpf_test_run/bpf_trigger_tp", trig_batch_tp, 0)
COUNTING("?raw_tp/bpf_trigger_tp", trig_batch_rawtp, 0)

/* --- user-space probes: attached by the loader to a file offset --- */

SEC("?uprobe")
int trig_uprobe(void *ctx) { inc_hits(); return 0; }

SEC("?uretprobe")
int trig_uretprobe(void *ctx) { inc_hits(); return 0; }

SEC("?uprobe.multi")
int trig_uprobe_multi(void *ctx) { inc_hits(); return 0; }

SEC("?uretprobe.multi")
int trig_uretprobe_multi(void *ctx) { inc_hits(); return 0; }

/* A USDT probe, provider trig, name usdt, in the producer's target function
 * (matrix/utarget.rs writes its ELF note); libbpf reads the note from the
 * binary and puts a uprobe on the probe's nop, in every process. */
SEC("?usdt//proc/self/exe:trig:usdt")
int trig_usdt(void *ctx) { inc_hits(); return 0; }

/* x86-64: the probes trig:usdt_nop5 (a nop and a nop5, upstream's 7.1
 * form, which libbpf moves to the nop5 where the kernel optimises those)
 * and trig:usdt_nop10 (the 10-byte nop that 7.2 optimises). */
SEC("?usdt//proc/self/exe:trig:usdt_nop5")
int trig_usdt_nop5(void *ctx) { inc_hits(); return 0; }

SEC("?usdt//proc/self/exe:trig:usdt_nop10")
int trig_usdt_nop10(void *ctx) { inc_hits(); return 0; }
