// SPDX-License-Identifier: GPL-2.0
/* A hash map's memory under churn (upstream's bench_htab_mem.c): each
 * program run writes or deletes OP_BATCH keys of the map, a CPU its own
 * keys (from its CPU number, a stride of the producers apart), counting
 * one operation a run (two for a batch added and deleted). User space
 * reads the map's memory from its memory cgroup. */
#include "common.h"

#define OP_BATCH 64

struct update_ctx {
	__u32 from;
	__u32 step;
};

/* Typed, value size and entries set by user space before the load
 * (--value-size; max(8192, 64 * CPUs)); not preallocated unless
 * --preallocated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 4);
	__uint(value_size, 8);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} htab SEC(".maps");

/* The value written, as large as --value-size may be. */
__u8 zeroed_value[4096];

/* The producers, set before the load. */
const volatile __u32 nr_thread = 1;

static int write_htab(__u32 i, struct update_ctx *ctx, __u64 flags)
{
	bpf_map_update_elem(&htab, &ctx->from, zeroed_value, flags);
	ctx->from += ctx->step;
	return 0;
}

static int overwrite_htab(__u32 i, struct update_ctx *ctx)
{
	return write_htab(i, ctx, BPF_ANY);
}

static int newwrite_htab(__u32 i, struct update_ctx *ctx)
{
	return write_htab(i, ctx, BPF_NOEXIST);
}

static int del_htab(__u32 i, struct update_ctx *ctx)
{
	bpf_map_delete_elem(&htab, &ctx->from);
	ctx->from += ctx->step;
	return 0;
}

/* overwrite: the same keys written again, a run of OP_BATCH. */
SEC("?tp/syscalls/sys_enter_getpgid")
int overwrite(void *ctx)
{
	struct update_ctx update = {
		.from = bpf_get_smp_processor_id(),
		.step = nr_thread,
	};

	bpf_loop(OP_BATCH, overwrite_htab, &update, 0);
	inc_hits();
	return 0;
}

/* batch_add_batch_del: OP_BATCH keys written, then deleted. */
SEC("?tp/syscalls/sys_enter_getpgid")
int batch_add_batch_del(void *ctx)
{
	struct update_ctx update = {
		.from = bpf_get_smp_processor_id(),
		.step = nr_thread,
	};

	bpf_loop(OP_BATCH, overwrite_htab, &update, 0);
	update.from = bpf_get_smp_processor_id();
	bpf_loop(OP_BATCH, del_htab, &update, 0);
	add_hits(2);
	return 0;
}

/* add_del_on_diff_cpu: a pair of producers, one adding on getpgid(), its
 * partner deleting the same keys on getppid() on the next CPU, so that
 * elements are freed on a CPU other than the one that allocated them. */
SEC("?tp/syscalls/sys_enter_getpgid")
int add_only(void *ctx)
{
	struct update_ctx update = {
		.from = bpf_get_smp_processor_id() / 2,
		.step = nr_thread / 2,
	};

	bpf_loop(OP_BATCH, newwrite_htab, &update, 0);
	inc_hits();
	return 0;
}

SEC("?tp/syscalls/sys_enter_getppid")
int del_only(void *ctx)
{
	struct update_ctx update = {
		.from = bpf_get_smp_processor_id() / 2,
		.step = nr_thread / 2,
	};

	bpf_loop(OP_BATCH, del_htab, &update, 0);
	inc_hits();
	return 0;
}
