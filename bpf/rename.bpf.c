// SPDX-License-Identifier: GPL-2.0
/* Task-rename overhead: what each attach type adds to __set_task_comm(),
 * which every write to /proc/self/comm goes through. */
#include "common.h"

SEC("?kprobe/__set_task_comm")
int rename_kprobe(void *ctx) { inc_hits(); return 0; }

SEC("?kretprobe/__set_task_comm")
int rename_kretprobe(void *ctx) { inc_hits(); return 0; }

SEC("?raw_tp/task_rename")
int rename_rawtp(void *ctx) { inc_hits(); return 0; }

SEC("?fentry/__set_task_comm")
int rename_fentry(void *ctx) { inc_hits(); return 0; }

SEC("?fexit/__set_task_comm")
int rename_fexit(void *ctx) { inc_hits(); return 0; }

