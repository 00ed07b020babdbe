/* SPDX-License-Identifier: GPL-2.0 */
/* The LPM trie of lpm_trie.bpf.c and lpm_trie_map.bpf.c: upstream's key, and
 * its trie (BPF_F_NO_PREALLOC, 10^8 entries at most) under NAME. */
#pragma once

struct trie_key {
	__u32 prefixlen;
	__u32 data;
};

#define LPM_TRIE(NAME)                                  \
	struct {                                        \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);    \
		__type(key, struct trie_key);           \
		__type(value, __u32);                   \
		__uint(map_flags, BPF_F_NO_PREALLOC);   \
		__uint(max_entries, 100000000);         \
	} NAME SEC(".maps")
