// SPDX-License-Identifier: GPL-2.0
/* Bloom filter maps, and a hash map with and without one in front of it
 * (upstream's bench_bloom_filter_map.c), on the getpgid syscall
 * tracepoint: each run walks every entry (lookup, update) or makes
 * LOOKUPS lookups of random keys (the hash map ones), so that the
 * syscall and the attachment are spread over a thousand operations
 * (upstream attaches by fentry, which arm64 kernels before 6.4 lack).
 * User space sets the maps' sizes, the hash functions and the value size
 * before the load, and fills the maps and rand_vals after it. */
#include "common.h"

/* Random lookups a run of bloom_hashmap_lookup, as upstream's. */
#define LOOKUPS 1024
/* rand_vals' bytes: a lookup reads value_size of them from an offset
 * below 2^21, so that the verifier sees every read in bounds. */
#define RAND_BYTES 2500000
#define RAND_MASK ((1U << 21) - 1)

/* Set before the load: every map's value size (the hash map's key is its
 * value), whether the hash map's lookups ask the filter first, and
 * whether a filter's false positive is counted. */
const volatile __u32 value_size = 8;
const volatile bool hashmap_use_bloom;
const volatile bool count_false_hits;

/* Filled from user space after the load. */
__u8 rand_vals[RAND_BYTES];

/* Operations that found nothing (upstream's drops), and lookups the filter
 * let through that the hash map did not hold: apart from `hits`, which
 * counts the ones that found what they looked for, each CPU its own line. */
struct counter drops[MAX_CPUS];
struct counter false_hits[MAX_CPUS];

/* Nonzero once a map operation failed as it cannot when the benchmark is
 * sound: 1, a filter's lookup or update; 2, the filter of the hash map. */
int error;

/* Zero seeds: the kernel draws each map's hash seed otherwise, and the
 * filter's false positives and the hash map's chains would move with
 * whatever drew from the kernel's RNG before (the rest of the boot). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 8);
	__uint(max_entries, 1000);
} array_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_BLOOM_FILTER);
	__uint(value_size, 8);
	__uint(max_entries, 1000);
	__uint(map_extra, 3);
	__uint(map_flags, BPF_F_ZERO_SEED);
} bloom_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 8);
	__uint(value_size, 8);
	__uint(max_entries, 1000);
	__uint(map_flags, BPF_F_ZERO_SEED);
} hashmap SEC(".maps");

static __always_inline void count(struct counter *slots)
{
	__u32 cpu = bpf_get_smp_processor_id();

	__sync_add_and_fetch(&slots[cpu & (MAX_CPUS - 1)].value, 1);
}

static __u64 lookup_callback(struct bpf_map *map, __u32 *key, void *val, void *data)
{
	if (bpf_map_peek_elem(&bloom_map, val)) {
		error |= 1;
		return 1;
	}
	inc_hits();
	return 0;
}

static __u64 update_callback(struct bpf_map *map, __u32 *key, void *val, void *data)
{
	if (bpf_map_push_elem(&bloom_map, val, 0)) {
		error |= 1;
		return 1;
	}
	inc_hits();
	return 0;
}

/* Looks every value of array_map up in the filter: a hit each, as the
 * filter has no false negatives. */
SEC("?tp/syscalls/sys_enter_getpgid")
int bloom_lookup(void *ctx)
{
	bpf_for_each_map_elem(&array_map, lookup_callback, NULL, 0);
	return 0;
}

/* Adds every value of array_map to the filter again. */
SEC("?tp/syscalls/sys_enter_getpgid")
int bloom_update(void *ctx)
{
	bpf_for_each_map_elem(&array_map, update_callback, NULL, 0);
	return 0;
}

/* LOOKUPS keys from random bytes, from a random offset on: the filter is
 * asked first where it is in front, and what it rules out is a hit, as
 * upstream counts it; what the hash map lacks is a drop. */
SEC("?tp/syscalls/sys_enter_getpgid")
int bloom_hashmap_lookup(void *ctx)
{
	__u32 index = bpf_get_prandom_u32();
	int err;

	for (int i = 0; i < LOOKUPS; i++, index += value_size) {
		index &= RAND_MASK;
		if (hashmap_use_bloom) {
			err = bpf_map_peek_elem(&bloom_map, rand_vals + index);
			if (err) {
				if (err != -2 /* ENOENT */) {
					error |= 2;
					return 0;
				}
				inc_hits();
				continue;
			}
		}
		if (bpf_map_lookup_elem(&hashmap, rand_vals + index)) {
			inc_hits();
			continue;
		}
		if (hashmap_use_bloom && count_false_hits)
			count(false_hits);
		count(drops);
	}
	return 0;
}
