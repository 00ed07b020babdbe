// SPDX-License-Identifier: GPL-2.0
/* The trie that lpm-trie-free's producer makes, fills and closes, again and
 * again: an object of its own, opened and loaded for each trie as
 * upstream's lpm_trie_map.c is (its BTF loaded, the map made by libbpf
 * with it), so that the guest does beside each free what upstream's does.
 * The free's latency, timed under icount, counts every vCPU's
 * instructions while the kworker frees: the producer's among them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lpm_trie.h"

LPM_TRIE(trie_free_map);
