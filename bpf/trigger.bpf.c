// SPDX-License-Identifier: GPL-2.0
/* The trigger matrix: one program per way of attaching. Every program has
 * autoload off ("?"), so a benchmark loads only the one it measures and a
 * kernel that refuses another attach type does not fail it. */
#include "common.h"
#include <bpf/usdt.bpf.h>

/* Iterations of the driver loop per BPF_PROG_TEST_RUN (set before load). */
const volatile __u32 batch_iters = 100;

/* --- syscall-driven: the producer loops getpgid() --- */

SEC("?tp/syscalls/sys_enter_getpgid")
int trig_tp(void *ctx) { inc_hits(); return 0; }

SEC("?raw_tp/sys_enter")
int trig_rawtp(struct bpf_raw_tracepoint_args *ctx)
{
	/* args[1] is the syscall number; count getpgid only */
	if (ctx->args[1] == NR_GETPGID)
		inc_hits();
	return 0;
}

SEC("?kprobe/" SYS_GETPGID)
int trig_kprobe(void *ctx) { inc_hits(); return 0; }

SEC("?kretprobe/" SYS_GETPGID)
int trig_kretprobe(void *ctx) { inc_hits(); return 0; }

SEC("?kprobe.multi/" SYS_GETPGID)
int trig_kprobe_multi(void *ctx) { inc_hits(); return 0; }

SEC("?kretprobe.multi/" SYS_GETPGID)
int trig_kretprobe_multi(void *ctx) { inc_hits(); return 0; }

SEC("?fentry/" SYS_GETPGID)
int trig_fentry(void *ctx) { inc_hits(); return 0; }

SEC("?fexit/" SYS_GETPGID)
int trig_fexit(void *ctx) { inc_hits(); return 0; }

/* Returning 0 lets the syscall run as usual. */
SEC("?fmod_ret/" SYS_GETPGID)
int trig_fmodret(void *ctx) { inc_hits(); return 0; }

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

SEC("?kprobe/bpf_get_numa_node_id")
int trig_batch_kprobe(void *ctx) { inc_hits(); return 0; }

SEC("?kretprobe/bpf_get_numa_node_id")
int trig_batch_kretprobe(void *ctx) { inc_hits(); return 0; }

SEC("?kprobe.multi/bpf_get_numa_node_id")
int trig_batch_kprobe_multi(void *ctx) { inc_hits(); return 0; }

SEC("?kretprobe.multi/bpf_get_numa_node_id")
int trig_batch_kretprobe_multi(void *ctx) { inc_hits(); return 0; }

SEC("?fentry/bpf_get_numa_node_id")
int trig_batch_fentry(void *ctx) { inc_hits(); return 0; }

SEC("?fexit/bpf_get_numa_node_id")
int trig_batch_fexit(void *ctx) { inc_hits(); return 0; }

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

SEC("?fmod_ret/bpf_modify_return_test_tp")
int trig_batch_fmodret(void *ctx) { inc_hits(); return -22; }

SEC("?tp/bpf_test_run/bpf_trigger_tp")
int trig_batch_tp(void *ctx) { inc_hits(); return 0; }

SEC("?raw_tp/bpf_trigger_tp")
int trig_batch_rawtp(void *ctx) { inc_hits(); return 0; }

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
