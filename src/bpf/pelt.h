/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PELT's arithmetic (kernel/sched/pelt.c, sched-pelt.h), plain C with no BPF or kernel
 * headers: the BPF scheduler includes it (pelt.bpf.h) and the loader's unit tests build
 * it for the host (build.rs, src/pelt.rs), so the figures the tests check are the ones
 * the scheduler computes. 1024 us periods, y^32 = 1/2, sums in 1024 ns units.
 */
#ifndef __PELT_H
#define __PELT_H

#include "intf.h"

#define LOAD_AVG_PERIOD		32
#define LOAD_AVG_MAX		47742
#define PELT_MIN_DIVIDER	(LOAD_AVG_MAX - 1024)
#define SCHED_CAPACITY_SHIFT	10

/* sched-pelt.h: runnable_avg_yN_inv[n] = (2^32 - 1) * y^n, y = 2^(-1/32), truncated. */
static const u32 runnable_avg_yN_inv[LOAD_AVG_PERIOD] = {
	0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6,
	0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85,
	0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
	0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
	0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80,
	0x85aac367, 0x82cd8698,
};

/* mul_u64_u32_shr(a, mul, 32), exact: split @a so that no product overflows. */
static inline u64 pelt_mul_shr32(u64 a, u32 mul)
{
	return (a >> 32) * mul + (((a & 0xffffffffULL) * mul) >> 32);
}

/* decay_load(): val * y^n. */
static inline u64 decay_load(u64 val, u64 n)
{
	u32 local_n;

	if (n > LOAD_AVG_PERIOD * 63)
		return 0;
	local_n = (u32)n;
	if (local_n >= LOAD_AVG_PERIOD) {
		val >>= local_n / LOAD_AVG_PERIOD;
		local_n %= LOAD_AVG_PERIOD;
	}
	return pelt_mul_shr32(val, runnable_avg_yN_inv[local_n & (LOAD_AVG_PERIOD - 1)]);
}

/* __accumulate_pelt_segments(): d1 y^p + 1024 * sum(y^n, n = 1 .. p-1) + d3. */
static inline u32 __accumulate_pelt_segments(u64 periods, u32 d1, u32 d3)
{
	u32 c1 = (u32)decay_load((u64)d1, periods);
	u32 c2 = LOAD_AVG_MAX - (u32)decay_load(LOAD_AVG_MAX, periods) - 1024;

	return c1 + c2 + d3;
}

/* get_pelt_divider(): the sum's maximum at this point of the period. */
static inline u32 get_pelt_divider(const struct sis_sched_avg *sa)
{
	return PELT_MIN_DIVIDER + sa->period_contrib;
}

/* accumulate_sum(): decay the sums over the periods crossed, add this segment. */
static inline u64 accumulate_sum(u64 delta, struct sis_sched_avg *sa, u64 load, u64 runnable,
				 int running)
{
	u32 contrib = (u32)delta;	/* no period crossed: delta < 1024 */
	u64 periods;

	delta += sa->period_contrib;
	periods = delta / 1024;
	if (periods) {
		sa->load_sum = decay_load(sa->load_sum, periods);
		sa->runnable_sum = decay_load(sa->runnable_sum, periods);
		sa->util_sum = decay_load(sa->util_sum, periods);
		delta %= 1024;
		if (load)
			contrib = __accumulate_pelt_segments(periods, 1024 - sa->period_contrib,
							     (u32)delta);
	}
	sa->period_contrib = (u32)delta;
	if (load)
		sa->load_sum += load * contrib;
	if (runnable)
		sa->runnable_sum += (runnable * contrib) << SCHED_CAPACITY_SHIFT;
	if (running)
		sa->util_sum += (u64)contrib << SCHED_CAPACITY_SHIFT;
	return periods;
}

/*
 * ___update_load_sum(): advance @sa to @now (ns) with what held since its last update:
 * @load (weight, or 1 for an entity), @runnable (count), @running. True when a period
 * boundary was crossed (the averages are then due).
 */
static inline int ___update_load_sum(u64 now, struct sis_sched_avg *sa, u64 load, u64 runnable,
				     int running)
{
	u64 delta = now - sa->last_update_time;

	if ((s64)delta < 0) {
		sa->last_update_time = now;
		return 0;
	}
	delta >>= 10;
	if (!delta)
		return 0;
	sa->last_update_time += delta << 10;
	if (!load)
		runnable = running = 0;
	return accumulate_sum(delta, sa, load, runnable, running) != 0;
}

/* ___update_load_avg(): the averages from the sums; @load is an entity's weight, 1 for a rq. */
static inline void ___update_load_avg(struct sis_sched_avg *sa, u64 load)
{
	u32 divider = get_pelt_divider(sa);

	sa->load_avg = load * sa->load_sum / divider;
	sa->runnable_avg = sa->runnable_sum / divider;
	sa->util_avg = sa->util_sum / divider;
}

/* sub_positive(): subtract, flooring at zero. */
static inline u64 pelt_sub_positive(u64 a, u64 b)
{
	return a > b ? a - b : 0;
}

#endif /* __PELT_H */
