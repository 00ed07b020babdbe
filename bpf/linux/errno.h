/* SPDX-License-Identifier: GPL-2.0 */
/* libbpf's usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> lives
 * in the host's per-architecture include directory (absent for a target
 * that is not the host's). BPF programs use the generic numbers. */
#pragma once
#include <asm-generic/errno.h>
