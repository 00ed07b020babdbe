// SPDX-License-Identifier: GPL-2.0
/* An empty loop iteration (upstream's bench_bpf_nop.c and its
 * BENCH_BPF_LOOP): each test run of the syscall program loops batch_iters
 * times, bounded by may_goto (6.9) as upstream's can_loop, and times the
 * loop with bpf_ktime_get_ns(), which under the icount meter counts
 * instructions (user space corrects for the shift). */
#include "common.h"

/* may_goto in bytes, as bpf_may_goto.h writes it for compilers without
 * the mnemonic (little-endian: x86-64 and arm64). */
#define can_loop							\
	({ __label__ l_break, l_continue;				\
	bool ret = true;						\
	asm volatile goto("1:.byte 0xe5;				\
		      .byte 0;						\
		      .long ((%l[l_break] - 1b - 8) / 8) & 0xffff;	\
		      .short 0"						\
		      :::: l_break);					\
	goto l_continue;						\
	l_break: ret = false;						\
	l_continue:;							\
	ret;								\
	})

/* Iterations a run, set by user space between runs (calibrated by
 * `bench`, as upstream's). */
volatile __u32 batch_iters;

/* Each CPU's last RUNS runs, in ns of bpf_ktime_get_ns(), and how many it
 * made (upstream keeps 4096 a CPU and reports the first 200 a producer). */
#define RUNS 256
struct runs {
	__u64 ns[RUNS];
	__u64 runs;
} __attribute__((aligned(256)));

struct runs times[MAX_CPUS];

SEC("?syscall")
int bench_nop(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct runs *t = &times[cpu & (MAX_CPUS - 1)];
	__u64 start = bpf_ktime_get_ns();
	__u32 i;

	for (i = 0; i < batch_iters && can_loop; i++)
		;
	t->ns[t->runs % RUNS] = bpf_ktime_get_ns() - start;
	t->runs++;
	add_hits(i);
	return 0;
}
