/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by every benchmark object: hit counters and per-arch names. */
#pragma once
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define MAX_CPUS 256

/* One 128-byte slot per CPU, as upstream's bench, so that CPUs counting
 * at the same time never share a cache line. User space reads and resets
 * the slots once a second through the mmap'ed .bss. */
struct counter {
	__u64 value;
} __attribute__((aligned(128)));

struct counter hits[MAX_CPUS];

static __always_inline void add_hits(__u64 n)
{
	__u32 cpu = bpf_get_smp_processor_id();

	__sync_add_and_fetch(&hits[cpu & (MAX_CPUS - 1)].value, n);
}

static __always_inline void inc_hits(void)
{
	add_hits(1);
}

/* The syscall entry function and number of getpgid differ per arch. */
#if defined(__TARGET_ARCH_x86)
#define SYS_GETPGID "__x64_sys_getpgid"
#define NR_GETPGID 121
#elif defined(__TARGET_ARCH_arm64)
#define SYS_GETPGID "__arm64_sys_getpgid"
#define NR_GETPGID 155
#else
#error "unsupported architecture"
#endif

char LICENSE[] SEC("license") = "GPL";
