/* SPDX-License-Identifier: GPL-2.0 */
/* pelt.h and preempt.h for the host: the loader's unit tests (src/pelt.rs, src/kcompat.rs) call these. */
#include <stdint.h>
typedef uint64_t u64;
typedef uint32_t u32;
typedef int32_t s32;
typedef int64_t s64;
#define __VMLINUX_H__
#include "pelt.h"
#include "preempt.h"

u64 sis_pelt_decay_load(u64 val, u64 n)
{
	return decay_load(val, n);
}

u32 sis_pelt_table(u32 n)
{
	return runnable_avg_yN_inv[n % LOAD_AVG_PERIOD];
}

/* update_load_avg()'s two steps for one signal, as pelt.bpf.h calls them. */
int sis_pelt_update(u64 now, struct sis_sched_avg *sa, u64 load, u64 runnable, int running,
		    u64 weight)
{
	if (!___update_load_sum(now, sa, load, runnable, running))
		return 0;
	___update_load_avg(sa, weight);
	return 1;
}

int sis_pc_in_task(u32 pc, int new_layout)
{
	return pc_in_task(pc, new_layout);
}
