/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: the budget and the sampling of sched_balance_newidle(). A CPU with nothing
 * of its own to run looks further, level by level, only while its average idle time
 * (rq->avg_idle) pays for what the levels have cost so far plus the dearest pull the
 * next level has made (max_newidle_lb_cost); NI_RANDOM passes a level over as often as
 * its pulls have failed, and NI_RATE counts slow sampling as success. A CPU kicked to
 * pull a waiting task walks ungated, as the kernel's nohz idle balance is. The pulls
 * themselves are queue.bpf.h's.
 */

#define NSEC_PER_SEC_ 1000000000ULL
/* sd_init(): newidle_call, newidle_success and newidle_ratio start at a 50 % success rate */
#define NEWIDLE_CALL_INIT	512
#define NEWIDLE_RATIO_MAX	1024

/* One newidle balance in progress, per CPU: sched_balance_newidle()'s locals. */
struct ni_walk {
	u64 avg_idle;		/* this_rq->avg_idle */
	u64 curr_cost;		/* ns spent in the levels balanced so far */
	u64 t0;			/* ns, when the level being balanced began */
	u32 weight;		/* NI_RANDOM: what one success of this level counts */
	u16 stop;		/* not begun, a pull succeeded, or the budget ran out */
	u16 ungated;		/* kicked to pull, or a CPU without domains: no budget, no dice */
};
struct ni_walk ni_walks[MAX_CPUS];

static __always_inline struct ni_walk *ni_walk(s32 cpu)
{
	return &ni_walks[CPU_IDX(cpu)];
}

/*
 * Before a CPU's queues are read: no walk has begun (nor cost anything); a kick to pull
 * is taken up.
 */
static __always_inline void ni_reset(s32 cpu)
{
	struct ni_walk *w = ni_walk(cpu);

	w->stop = 1;
	w->ungated = 0;
	w->curr_cost = 0;
	if (READ_ONCE(cpu_ctxs[CPU_IDX(cpu)].pull_kick)) {
		WRITE_ONCE(cpu_ctxs[CPU_IDX(cpu)].pull_kick, 0);
		w->ungated = 1;
	}
}

static __always_inline bool ni_feat(u64 f)
{
	struct sis_ctl *feats = lookup_ctl();

	return feats && feat(feats, f);
}

static __always_inline struct sd_ctx *ni_sd(s32 cpu, u32 lvl)
{
	/* the mask must survive clang's knowing @lvl's range: the verifier does not */
	barrier_var(lvl);
	return &sd_ctxs[CPU_IDX(cpu)][lvl & (NR_SD_LEVELS - 1)];
}

/* sd_init()'s newidle fields, for every level of @cpu. */
static __always_inline void newidle_init(s32 cpu)
{
	u64 now = bpf_ktime_get_ns();
	u32 lvl;

	for (lvl = 0; lvl < NR_SD_LEVELS; lvl++) {
		struct sd_ctx *sd = ni_sd(cpu, lvl);

		sd->newidle_call = NEWIDLE_CALL_INIT;
		sd->newidle_success = NEWIDLE_CALL_INIT / 2;
		sd->newidle_ratio = NEWIDLE_CALL_INIT;
		sd->max_newidle_lb_cost = 0;
		sd->newidle_stamp = now;
		sd->last_decay_max_lb_cost = now;
	}
}

/*
 * build_sched_domains() after a CPU hotplug: every CPU's newidle figures start again
 * from sd_init()'s, as the kernel's rebuilt domains do. A CPU counting meanwhile may
 * lose an update; the counts recover within 1024 calls.
 */
static __always_inline void newidle_rebuild(void)
{
	s32 cpu;

	bpf_for(cpu, 0, nr_cpu_ids)
		newidle_init(cpu);
}

/*
 * update_newidle_stats(): when 1024 calls have gathered, the successes among them become
 * the ratio NI_RANDOM samples at and both counts are halved (so from then on every 512
 * calls); NI_RATE adds one per 4.2 ms those calls took, so a rarely idle level is
 * sampled more.
 */
static __always_inline void update_newidle_stats(struct sd_ctx *sd, u32 success)
{
	u64 now, ratio = 0;

	sd->newidle_call++;
	sd->newidle_success += success;
	if (sd->newidle_call < NEWIDLE_RATIO_MAX)
		return;
	now = bpf_ktime_get_ns();
	if (ni_feat(FEAT_NI_RATE) && now > sd->newidle_stamp)
		ratio = (now - sd->newidle_stamp) >> 22;
	sd->newidle_stamp = now;
	ratio += sd->newidle_success;
	sd->newidle_ratio = ratio < NEWIDLE_RATIO_MAX ? ratio : NEWIDLE_RATIO_MAX;
	sd->newidle_call /= 2;
	sd->newidle_success /= 2;
}

/*
 * update_newidle_cost(): a level's dearest pull, decayed by 253/256 each second it is
 * not beaten. True when it decayed.
 */
static __always_inline bool update_newidle_cost(struct sd_ctx *sd, u64 cost, u32 success,
						u64 now)
{
	if (cost)
		update_newidle_stats(sd, success);
	if (cost > sd->max_newidle_lb_cost) {
		sd->max_newidle_lb_cost = cost;
		sd->last_decay_max_lb_cost = now;
	} else if (time_before(sd->last_decay_max_lb_cost + NSEC_PER_SEC_, now)) {
		sd->max_newidle_lb_cost = sd->max_newidle_lb_cost * 253 / 256;
		sd->last_decay_max_lb_cost = now;
		return true;
	}
	return false;
}

/*
 * sched_balance_domains()'s decay of the newidle costs: each level's once a second, and
 * max_idle_balance_cost (avg_idle's cap) back to their sum, sysctl_sched_migration_cost
 * at least.
 * differs: run when the CPU next begins a newidle walk, not at its periodic balance.
 */
static __always_inline void newidle_decay(s32 cpu, u64 now)
{
	struct cpu_ctx *rq = &cpu_ctxs[CPU_IDX(cpu)];
	u64 max_cost = 0;
	bool need_decay = false;
	u32 lvl;

	for (lvl = 0; lvl < NR_SD_LEVELS; lvl++) {
		struct sd_ctx *sd = ni_sd(cpu, lvl);

		need_decay |= update_newidle_cost(sd, 0, 0, now);
		max_cost += sd->max_newidle_lb_cost;
	}
	if (need_decay)
		rq->max_idle_balance_cost = max_cost > MIGRATION_COST_NS ? max_cost : MIGRATION_COST_NS;
}

/*
 * The start of sched_balance_newidle(): nothing is pulled when avg_idle is below the
 * dearest pull of the lowest level.
 */
__noinline int ni_begin(s32 cpu)
{
	struct ni_walk *w = ni_walk(cpu);
	u64 now = bpf_ktime_get_ns();
	u32 lvl;

	w->avg_idle = cpu_ctxs[CPU_IDX(cpu)].avg_idle;
	w->curr_cost = 0;
	w->t0 = now;
	w->weight = 1;
	w->stop = 0;
	/* a CPU the topology does not know has no domains: nothing to gate */
	if (!known_cpu(cpu))
		w->ungated = 1;
	if (w->ungated)
		return 0;
	stat_inc(STAT_NI_RUNS);
	newidle_decay(cpu, now);
	for (lvl = 0; lvl < NR_SD_LEVELS; lvl++) {
		if (!sd_weight(lvl, cpu))
			continue;
		if (w->avg_idle < ni_sd(cpu, lvl)->max_newidle_lb_cost) {
			stat_inc(STAT_NI_COST);
			w->stop = 1;
		}
		break;
	}
	return 0;
}

/*
 * May the walk balance @lvl? Not when the budget is spent (the walk ends there) or
 * NI_RANDOM's 1024-sided dice rolls above 1 + newidle_ratio (the next level may). A
 * level the topology folds away is let through and costs nothing.
 */
__noinline int ni_level(s32 cpu, u32 lvl)
{
	struct ni_walk *w = ni_walk(cpu);
	struct sd_ctx *sd;
	u32 weight;

	if (w->stop)
		return 0;
	if (w->ungated || !sd_weight(lvl, cpu))
		return 1;
	sd = ni_sd(cpu, lvl);
	if (w->avg_idle < w->curr_cost + sd->max_newidle_lb_cost) {
		stat_inc(STAT_NI_COST);
		w->stop = 1;
		return 0;
	}
	w->weight = 1;
	if (ni_feat(FEAT_NI_RANDOM) && sd->newidle_ratio < NEWIDLE_RATIO_MAX) {
		weight = 1 + sd->newidle_ratio;
		if (bpf_get_prandom_u32() % NEWIDLE_RATIO_MAX > weight) {
			update_newidle_stats(sd, 0);
			stat_inc(STAT_NI_RANDOM);
			return 0;
		}
		/* a success of a level sampled 1 in N times counts N times */
		w->weight = (NEWIDLE_RATIO_MAX + weight / 2) / weight;
	}
	return 1;
}

/* Has a walk begun and not ended: may a level be balanced, budget and dice allowing? */
static __always_inline bool ni_walking(s32 cpu)
{
	return !ni_walk(cpu)->stop;
}

/* After @lvl was balanced: its cost and outcome; a pull ends the walk. */
__noinline int ni_done(s32 cpu, u32 lvl, int pulled)
{
	struct ni_walk *w = ni_walk(cpu);
	u64 t1;

	if (pulled)
		w->stop = 1;
	if (w->ungated || !sd_weight(lvl, cpu))
		return 0;
	t1 = bpf_ktime_get_ns();
	w->curr_cost += t1 - w->t0;
	update_newidle_cost(ni_sd(cpu, lvl), t1 - w->t0, pulled ? w->weight : 0, t1);
	w->t0 = t1;
	return 0;
}

/* The end of sched_balance_newidle(): max_idle_balance_cost keeps the dearest walk. */
static __always_inline void ni_end(s32 cpu)
{
	struct cpu_ctx *rq = &cpu_ctxs[CPU_IDX(cpu)];
	u64 cost = ni_walk(cpu)->curr_cost;

	if (cost > rq->max_idle_balance_cost)
		rq->max_idle_balance_cost = cost;
}
