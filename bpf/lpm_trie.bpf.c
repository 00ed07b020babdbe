// SPDX-License-Identifier: GPL-2.0
/* The LPM trie (upstream's bench_lpm_trie_map.c): each BPF_PROG_TEST_RUN
 * of run_bench, an XDP program on an empty frame, makes up to `runs`
 * (upstream's 10,000) operations of one kind in a bpf_loop() on keys 0..nr_entries-1 of
 * prefix_len bits, in turn or at random, and times them with
 * bpf_ktime_get_ns() as upstream's does (under the icount meter that
 * clock counts instructions, 2^shift ns each: user space corrects).
 *
 * Unlike upstream's, the run returns the operations it made, so that the
 * producers count them too (upstream's returns 0, an error, or REINIT),
 * REINIT as a flag above them: the insertion of the last key or the
 * deletion of it, after which user space empties or refills the trie
 * outside the timed runs.
 *
 * lpm-trie-free times the kernel's free of a whole trie that user space
 * made, filled and closed: from fentry to fexit of bpf_map_free_deferred()
 * on a trie named trie_free_map, as upstream's; a hit a free. */
#include "common.h"
#include "lpm_trie.h"
#include <bpf/bpf_core_read.h>

#define BPF_OBJ_NAME_LEN 16U

#define REINIT (1 << 16)

enum op { NOOP, BASELINE, LOOKUP, INSERT, UPDATE, DELETE };

LPM_TRIE(trie_map);

/* What the runs timed, in ns of bpf_ktime_get_ns(), a CPU each. */
struct counter timed[MAX_CPUS];

/* Set by user space before the load. */
const volatile __u32 nr_entries = 1;
const volatile __u32 prefixlen = 32;
const volatile bool random;
const volatile __u32 op;
const volatile __u32 runs = 10000;

/* When the free of the trie being freed began; 0: none is. One
 * producer frees one trie at a time (upstream's rule), so one will do. */
__u64 free_start;

/* The next key of the sequence, shared by every CPU as upstream's. */
__u32 cur_key;

struct run {
	int err;
	bool reinit;
};

static __always_inline void next_key(struct trie_key *key)
{
	key->prefixlen = prefixlen;
	if (random)
		key->data = bpf_get_prandom_u32() % nr_entries;
	else
		key->data = cur_key++ % nr_entries;
}

/* Ends the run where an operation failed, or after the last key where
 * `last` (the trie must then be reset); 0 goes on. */
static __always_inline int done(struct run *run, int err, bool last)
{
	if (err) {
		run->err = err;
		return 1;
	}
	if (last) {
		run->reinit = true;
		return 1;
	}
	return 0;
}

/* One callback an operation, as upstream's: the operation is chosen once
 * a run, not tested at every iteration (each test of the constant costs
 * its load and branch: 4 instructions an operation). */
static int noop(__u32 index, struct run *run)
{
	return 0;
}

static int baseline(__u32 index, struct run *run)
{
	struct trie_key key;

	next_key(&key);
	/* keep the key, and its modulo, from being optimised out */
	barrier_var(key.data);
	return 0;
}

static int lookup(__u32 index, struct run *run)
{
	struct trie_key key;

	next_key(&key);
	return done(run, bpf_map_lookup_elem(&trie_map, &key) ? 0 : -2 /* ENOENT */, false);
}

static int insert(__u32 index, struct run *run)
{
	struct trie_key key;
	__u32 value = 1;
	int err;

	next_key(&key);
	err = bpf_map_update_elem(&trie_map, &key, &value, BPF_NOEXIST);
	return done(run, err, key.data == nr_entries - 1);
}

static int update(__u32 index, struct run *run)
{
	struct trie_key key;
	__u32 value = 1;

	next_key(&key);
	return done(run, bpf_map_update_elem(&trie_map, &key, &value, BPF_EXIST), false);
}

static int delete(__u32 index, struct run *run)
{
	struct trie_key key;
	int err;

	next_key(&key);
	err = bpf_map_delete_elem(&trie_map, &key);
	return done(run, err, key.data == nr_entries - 1);
}

SEC("?xdp")
int run_bench(struct xdp_md *ctx)
{
	struct run run = {};
	__u64 start = bpf_ktime_get_ns();
	long made;
	__u32 cpu;

	/* a callback the verifier sees at each call site (one picked into a
	 * variable fails to load), so that it inlines the loop with it */
	switch (op) {
	case NOOP: made = bpf_loop(runs, noop, &run, 0); break;
	case BASELINE: made = bpf_loop(runs, baseline, &run, 0); break;
	case LOOKUP: made = bpf_loop(runs, lookup, &run, 0); break;
	case INSERT: made = bpf_loop(runs, insert, &run, 0); break;
	case UPDATE: made = bpf_loop(runs, update, &run, 0); break;
	case DELETE: made = bpf_loop(runs, delete, &run, 0); break;
	default: return -22 /* EINVAL */;
	}
	cpu = bpf_get_smp_processor_id() & (MAX_CPUS - 1);
	__sync_add_and_fetch(&timed[cpu].value, bpf_ktime_get_ns() - start);
	if (made > 0)
		add_hits(made);
	if (run.err)
		return run.err;
	return made | (run.reinit ? REINIT : 0);
}

SEC("?fentry/bpf_map_free_deferred")
int BPF_PROG(trie_free_entry, struct work_struct *work)
{
	struct bpf_map *map = container_of(work, struct bpf_map, work);
	char name[BPF_OBJ_NAME_LEN];

	if (BPF_CORE_READ(map, map_type) != BPF_MAP_TYPE_LPM_TRIE)
		return 0;
	/* the map's id is gone by now: its name tells ours from others' */
	BPF_CORE_READ_STR_INTO(&name, map, name);
	if (bpf_strncmp(name, BPF_OBJ_NAME_LEN, "trie_free_map"))
		return 0;
	free_start = bpf_ktime_get_ns();
	return 0;
}

SEC("?fexit/bpf_map_free_deferred")
int BPF_PROG(trie_free_exit, struct work_struct *work)
{
	__u64 start = free_start;
	__u32 cpu = bpf_get_smp_processor_id() & (MAX_CPUS - 1);

	if (!start)
		return 0;
	free_start = 0;
	__sync_add_and_fetch(&timed[cpu].value, bpf_ktime_get_ns() - start);
	inc_hits();
	return 0;
}
