// SPDX-License-Identifier: GPL-2.0
/* A hash map's update when it is full, and its lookup (upstream's
 * bench_bpf_hashmap_full_update.c and bench_bpf_hashmap_lookup.c), on the
 * getpgid syscall tracepoint (upstream attaches by fentry, which arm64
 * kernels before 6.4 lack): each run makes nr_loops operations, so that
 * the syscall and the attachment are spread over thousands, and times
 * them with bpf_ktime_get_ns(), as upstream does (under the icount meter
 * that clock counts instructions, 2^shift ns each: user space corrects). */
#include "common.h"

/* Set through the mapped .bss after the load: operations a run (the
 * lookup's in outer iterations of nr_entries each) and the lookup's
 * keys. */
__u32 nr_loops;
__u32 nr_entries;

/* The key looked up: its first word the index from 1, the rest (up to
 * --key_size, 1024 bytes) fixed words that user space writes. */
__u32 key[256];

/* Each CPU's last TIMES runs, in ns of bpf_ktime_get_ns(), and how many
 * it made: upstream's percpu_times. */
#define TIMES 32
struct times {
	__u64 ns[TIMES];
	__u64 runs;
} __attribute__((aligned(256)));

struct times times[MAX_CPUS];

/* Full with keys 0..FULL_ENTRIES-1 (user space fills it): an update of
 * any other key fails, which is the path measured. */
#define FULL_ENTRIES 1000
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, FULL_ENTRIES);
} full_map SEC(".maps");

/* Sized by user space before the load (--key_size, --max_entries,
 * --map_flags). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 4);
	__uint(value_size, 8);
	__uint(max_entries, 1000);
} lookup_map SEC(".maps");

static __always_inline void record(__u32 cpu, __u64 start)
{
	struct times *t = &times[cpu & (MAX_CPUS - 1)];

	t->ns[t->runs % TIMES] = bpf_ktime_get_ns() - start;
	t->runs++;
}

static int update_one(__u32 index, void *ctx)
{
	__u64 one = 1;

	bpf_map_update_elem(&full_map, ctx, &one, BPF_ANY);
	return 0;
}

/* nr_loops updates of a key the full map lacks (each CPU its own, as
 * upstream's), each failing with E2BIG. */
SEC("?tp/syscalls/sys_enter_getpgid")
int full_update(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 absent = cpu + FULL_ENTRIES;
	__u64 start = bpf_ktime_get_ns();

	bpf_loop(nr_loops, update_one, &absent, 0);
	record(cpu, start);
	add_hits(nr_loops);
	return 0;
}

static int lookup_one(__u32 index, void *ctx)
{
	key[0] = index + 1;
	return bpf_map_lookup_elem(&lookup_map, key) ? 0 : 1;
}

/* nr_entries lookups, counted; a miss ends them. */
static int lookup_all(__u32 index, void *ctx)
{
	long done = bpf_loop(nr_entries, lookup_one, NULL, 0);

	if (done > 0)
		add_hits(done);
	return done == nr_entries ? 0 : 1;
}

/* nr_loops outer iterations of nr_entries lookups. */
SEC("?tp/syscalls/sys_enter_getpgid")
int lookup(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 start = bpf_ktime_get_ns();

	bpf_loop(nr_loops, lookup_all, NULL, 0);
	record(cpu, start);
	return 0;
}
