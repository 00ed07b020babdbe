// SPDX-License-Identifier: GPL-2.0
/* bpf_strncmp() against a bounded loop, on the getpgid syscall tracepoint.
 * User space fills `target` and `str` so that they differ only in the last
 * of cmp_str_len characters (str's is one smaller): the whole length is
 * compared and the result must be negative. A hit counts only then. */
#include "common.h"

#define STR_SZ 4096

const volatile __u32 cmp_str_len = 32;
const char target[STR_SZ];
char str[STR_SZ];

static __always_inline int local_strncmp(const char *s1, __u32 sz, const char *s2)
{
	int ret = 0;

	for (__u32 i = 0; i < sz; i++) {
		ret = (unsigned char)s1[i] - (unsigned char)s2[i];
		if (ret || !s1[i])
			break;
	}
	return ret;
}

/* Everything but the comparison: the read of the string and the count. */
SEC("?tp/syscalls/sys_enter_getpgid")
int strncmp_baseline(void *ctx)
{
	if ((unsigned char)str[0] != 0xff)
		inc_hits();
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int strncmp_no_helper(void *ctx)
{
	if (local_strncmp(str, cmp_str_len + 1, target) < 0)
		inc_hits();
	return 0;
}

SEC("?tp/syscalls/sys_enter_getpgid")
int strncmp_helper(void *ctx)
{
	if (bpf_strncmp(str, cmp_str_len + 1, target) < 0)
		inc_hits();
	return 0;
}
