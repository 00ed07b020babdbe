// SPDX-License-Identifier: GPL-2.0
/* Loops with an empty body, on the getpgid syscall tracepoint: each run
 * makes LOOP_CALLS calls of nr_loops iterations and counts every
 * iteration, so that the syscall and the attachment are spread over
 * LOOP_CALLS * nr_loops events (upstream attaches by fentry, which arm64
 * kernels before 6.4 lack; spread this thin, the two cost the same). */
#include "common.h"

#if defined(__TARGET_ARCH_arm64)
/* The arm64 vmlinux.h is 6.1's, from before open-coded iterators: the
 * kernel's uapi type, which the verifier matches by name and size. */
struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));
#endif

/* Calls a run, as upstream's bench: user space multiplies by it. */
#define LOOP_CALLS 1000

/* Set through the mapped .bss after the load, as upstream's: a value the
 * verifier does not know, so that it walks one iteration of each loop,
 * not every one. */
__u32 nr_loops;

static int empty_callback(__u32 index, void *data)
{
	return 0;
}

/* bpf_loop(): a helper call, and an indirect one per iteration (inlined
 * by the verifier since 5.19). Upstream's is a loop of 1000 calls, which
 * the verifier of 6.7 and later refuses as too large (E2BIG): it walks on
 * from every callback's return, and the loop counter it must track keeps
 * those walks apart. Unrolled whole, every kernel takes it, but inlining
 * 1000 calls took 38 s of a TCG guest's load; 20 rounds of 50 unrolled
 * took 25 ms on this host against 200 ms unrolled whole (and 32 ms for
 * 10 of 100, 40 ms for 40 of 25). */
#define ROUNDS 20
#define CALLS_A_ROUND (LOOP_CALLS / ROUNDS)

SEC("?tp/syscalls/sys_enter_getpgid")
int bpf_loop_bench(void *ctx)
{
	struct counter *slot = &hits[bpf_get_smp_processor_id() & (MAX_CPUS - 1)];

	for (int round = 0; round < ROUNDS; round++) {
#pragma clang loop unroll(full)
		for (int i = 0; i < CALLS_A_ROUND; i++) {
			bpf_loop(nr_loops, empty_callback, NULL, 0);
			__sync_add_and_fetch(&slot->value, nr_loops);
		}
	}
	return 0;
}

/* bpf_for(): the numeric iterator's kfuncs, a next() per iteration. */
static int for_loop(__u32 index, void *data)
{
	int i;

	bpf_for(i, 0, nr_loops)
		;
	add_hits(nr_loops);
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int bpf_for_bench(void *ctx)
{
	bpf_loop(LOOP_CALLS, for_loop, NULL, 0);
	return 0;
}
