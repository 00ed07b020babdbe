// SPDX-License-Identifier: GPL-2.0
/* Task local storage's cache (upstream's bench_local_storage.c): each
 * getpgid() makes `gets` (upstream's 10,000) bpf_task_storage_get() calls
 * on num_maps maps in
 * turn (a task keeps 16 of its storages in a cache; the rest are found by
 * walking its list), or, as the control, as many lookups of random keys
 * in hash maps. The program sits on the syscall tracepoint (upstream's on
 * fentry, which arm64 kernels before 6.4 lack). Hits count every get,
 * important hits those of the first map, which the interleaved case gets
 * again every third call. */
#include "common.h"

#define NR_MAPS 1000

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, NR_MAPS);
	__type(key, int);
	__type(value, int);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
		__uint(map_flags, BPF_F_NO_PREALLOC);
		__type(key, int);
		__type(value, int);
	});
} local_storage_maps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, NR_MAPS);
	__type(key, int);
	__type(value, int);
	__array(values, struct {
		/* user space creates the maps, with these flags; the
		 * template's size is not checked */
		__uint(type, BPF_MAP_TYPE_HASH);
		__uint(map_flags, BPF_F_NO_PREALLOC);
		__uint(max_entries, 1);
		__type(key, int);
		__type(value, int);
	});
} hash_maps SEC(".maps");

/* The gets of the first map, beside the hits of common.h. */
struct counter important_hits[MAX_CPUS];

/* Set by user space before the load. */
const volatile __u32 use_hashmap;
const volatile __u32 hashmap_num_keys;
const volatile __u32 num_maps;
const volatile __u32 interleave;
const volatile __u32 gets = 10000;

struct gets {
	struct task_struct *task;
	__u64 hits;
	__u64 important;
};

static __always_inline void get(__u32 elem, struct gets *g)
{
	void *inner;
	int idx = 0;

	inner = bpf_map_lookup_elem(use_hashmap ? (void *)&hash_maps : (void *)&local_storage_maps,
				    &elem);
	if (!inner)
		return;
	if (use_hashmap) {
		idx = bpf_get_prandom_u32() % hashmap_num_keys;
		bpf_map_lookup_elem(inner, &idx);
	} else {
		bpf_task_storage_get(inner, g->task, &idx, BPF_LOCAL_STORAGE_GET_F_CREATE);
	}
	g->hits++;
	if (!elem)
		g->important++;
}

static long one_get(__u32 index, void *ctx)
{
	__u32 elem = index % num_maps;

	get(elem, ctx);
	if (interleave && elem % 3 == 0)
		get(0, ctx);
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int get_local(void *ctx)
{
	struct gets g = { .task = bpf_get_current_task_btf() };

	bpf_loop(gets, one_get, &g, 0);
	add_hits(g.hits);
	__sync_add_and_fetch(&important_hits[bpf_get_smp_processor_id() & (MAX_CPUS - 1)].value,
			     g.important);
	return 0;
}
