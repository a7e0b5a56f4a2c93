/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: fair.c's load balancing between busy CPUs (sched_balance_domains() and
 * sched_balance_rq() as a CPU_NOT_IDLE balance), the idle balance a nohz kick asks
 * for with its active balance, and the migration rules every balance of ours shares
 * (can_migrate_task(), task_hot(), detach_tasks()).
 *
 * The domains are built from the loaded topology, lowest first, each degenerate one
 * (no wider than its child) left out as the kernel folds it: SMT (groups: CPUs), LLC
 * (groups: cores), NODE (the package level, groups: LLCs) and SYS (the NUMA level,
 * groups: nodes).
 */

enum sd_level { SD_LVL_SMT, SD_LVL_LLC, SD_LVL_NODE, SD_LVL_SYS, NR_SD_LEVELS };

/* group_type, in the kernel's order; the kinds without a counterpart here are left out */
enum sis_group_type { GROUP_HAS_SPARE, GROUP_FULLY_BUSY, GROUP_OVERLOADED };

enum sis_migration_type { MIGRATE_LOAD, MIGRATE_UTIL };

enum lb_consts {
	BUSY_FACTOR = 16,	/* sd->busy_factor */
	NR_MIGRATE = 32,	/* sysctl_sched_nr_migrate: tasks looked at per balance */
	DETACH_MAX = 8,		/* differs: tasks moved per balance (fair.c: up to NR_MIGRATE) */
};

/* How long an active balance's mark waits for its task to come back to sis_enqueue. */
#define PUSH_TTL_NS	(2 * tick_ns)
#define MAX_PINNED_INTERVAL_MS	512	/* fair.c's MAX_PINNED_INTERVAL */

/* The struct sched_domain fields a balance keeps, per CPU and level. */
struct sd_ctx {
	u64 last_balance;	/* sd->last_balance, ns */
	u32 balance_interval;	/* sd->balance_interval, ms; 0: not set up yet */
	u32 nr_balance_failed;
	/* sched_balance_newidle()'s figures (newidle.bpf.h); times in ns */
	u64 max_newidle_lb_cost;
	u64 last_decay_max_lb_cost;
	u64 newidle_stamp;
	u32 newidle_call;
	u32 newidle_success;
	u32 newidle_ratio;
};
struct sd_ctx sd_ctxs[MAX_CPUS][NR_SD_LEVELS];

/* struct sg_lb_stats: one group's figures, summed over its CPUs. */
struct sis_sg_stats {
	u64 avg_load;
	u64 group_load;
	u64 group_capacity;
	u64 group_util;
	u64 group_runnable;
	u32 sum_nr_running;
	u32 sum_h_nr_running;
	u32 idle_cpus;
	u32 group_weight;
	u32 group_type;
	s32 first_cpu;		/* group_balance_cpu() */
	/* find_busiest_queue()'s candidates, gathered on the way: CPUs with a task waiting */
	s32 load_cpu;		/* the highest load / capacity */
	s32 util_cpu;		/* the highest util */
	u64 load_best, cap_best, util_best;
	/* sched_balance_find_dst_group()'s: the least loaded CPU */
	s32 min_cpu;
	u64 min_load;
	/* the idle balance's: should_we_balance()'s CPU, find_busiest_queue()'s for migrate_task */
	s32 first_idle;		/* the lowest idle CPU */
	s32 run_cpu;		/* the CPU with the most tasks of ours runnable */
	u32 run_nr;
};

/* sched_balance_rq()'s sd_lb_stats: the local, busiest and current group, off the stack. */
struct lb_scratch {
	struct sis_sg_stats local, busiest, sg;
	/* calculate_imbalance()'s outcome, for the detach loop of balance_level() */
	s64 imbalance;
	s32 src;
	u32 type;
	/* counters in memory, so the verifier does not walk a loop once per count */
	u32 moved;
	u32 seen;
	u64 picked_lru;		/* pick_detach()'s choice, as attach_task() must find it */
};

/*
 * Per CPU, indexed by the running CPU: no map lookup (and no key) on the balances'
 * stacks. select_cpu and dispatch never nest on a CPU (both run with interrupts off),
 * and each use starts by resetting what it reads.
 */
struct lb_scratch lb_scratchs[MAX_CPUS];

static __always_inline struct lb_scratch *lb_scratch(void)
{
	return &lb_scratchs[CPU_IDX(bpf_get_smp_processor_id())];
}

static __always_inline void set_overloaded(s32 cpu);

/* sd_init(): cache_nice_tries, 0 at SMT, 2 at NUMA, 1 between. */
static __always_inline u32 cache_nice_tries(u32 lvl)
{
	return lvl == SD_LVL_SMT ? 0 : lvl == SD_LVL_SYS ? 2 : 1;
}

/* sd_init(): imbalance_pct, 110 at SMT, 117 above. */
static __always_inline u32 sd_imbalance_pct(u32 lvl)
{
	return lvl == SD_LVL_SMT ? 110 : 117;
}

/* Must @p run where it is: a single-CPU task, or one with migration disabled. */
static __always_inline bool bound_to_cpu(struct task_struct *p)
{
	/* on current, one migrate_disable() may be the BPF prolog's, not the task's */
	return p->nr_cpus_allowed == 1 ||
	       p->migration_disabled > (p == bpf_get_current_task_btf() ? 1 : 0);
}

/*
 * task_hot(): @p ran on @src within sysctl_sched_migration_cost; SMT siblings share cache.
 * A task that moved since it last ran is not hot: migrate_task_rq_fair() zeroes its
 * exec_start, which sched_ext leaves stamped by another CPU's clock.
 */
static __always_inline bool task_hot(struct task_struct *p, struct task_ctx *tctx, s32 src,
				     u32 lvl)
{
	if (lvl == SD_LVL_SMT || task_has_idle_policy(p) || tctx->exec_cpu != src)
		return false;
	return (s64)(rq_clock_task(src) - p->se.exec_start) < (s64)MIGRATION_COST_NS;
}

/*
 * can_migrate_task() for a task waiting on @src's queue: allowed on @dst, and not cache
 * hot unless this level's balance failed more than cache_nice_tries times.
 * differs: no task_is_ineligible_on_dst_cpu(), NUMA locality or CACHE_HOT_BUDDY.
 */
static __always_inline bool can_migrate_task(struct task_struct *p, struct task_ctx *tctx, s32 src,
					     s32 dst, u32 lvl, bool newidle)
{
	u32 failed = sd_ctxs[CPU_IDX(dst)][lvl & (NR_SD_LEVELS - 1)].nr_balance_failed;

	if (bound_to_cpu(p) || !test_cpu(p->cpus_ptr, dst))
		return false;
	if (!task_hot(p, tctx, src, lvl) || failed > cache_nice_tries(lvl))
		return true;
	stat_inc(newidle ? STAT_NI_HOT : STAT_LB_HOT);
	return false;
}

/* What @tctx weighs for a balance of @type: task_h_load() at least 1, or its util. */
static __always_inline u64 task_weight(struct task_ctx *tctx, u32 type)
{
	if (type == MIGRATE_UTIL)
		return tctx->avg.util_avg;
	return tctx->avg.load_avg ?: 1;
}

/*
 * detach_tasks()'s choice on @src's queue: of the tasks that may move to @dst and fit
 * @budget (load or util, shifted right by the failures as shr_bound() does), the one
 * queued or moved the longest ago, fair.c's cfs_tasks tail. Returns its pid, 0 for none.
 * differs: util_avg, not task_util_est().
 */
static __always_inline u32 pick_detach(s32 src, s32 dst, u32 lvl, u32 type, s64 budget,
				       u32 failed, bool newidle)
{
	struct lb_scratch *sc = lb_scratch();
	struct task_struct *q;
	struct task_ctx *qctx;
	u64 oldest = ~0ULL, w;
	u32 pid = 0;

	sc->seen = 0;
	sc->picked_lru = 0;
	bpf_for_each(scx_dsq, q, CPU_DSQ_BASE + src, 0) {
		if (++sc->seen > NR_MIGRATE)
			break;
		qctx = bpf_task_storage_get(&task_ctxs, q, 0, 0);
		if (!qctx || qctx->lru_at >= oldest || !can_migrate_task(q, qctx, src, dst, lvl, newidle))
			continue;
		w = task_weight(qctx, type);
		if (budget >= 0 && (s64)(w >> (failed < 63 ? failed : 63)) > budget)
			continue;
		oldest = qctx->lru_at;
		sc->picked_lru = oldest;
		pid = q->pid;
	}
	return pid;
}

/*
 * attach_task() for the task @pid waiting on @src, still movable to @dst and not queued
 * again since @lru: into @dst's local DSQ when @dst is about to idle, else onto @dst's
 * queue, keyed at its deadline's distance from V carried over, then placed there as a
 * migration places it. Returns what it weighed + 1, 0 when it did not move.
 */
static __always_inline u64 attach_task(s32 src, s32 dst, u32 pid, u64 lru, u32 type,
				       bool to_local, struct sis_ctl *feats)
{
	struct task_struct *q;
	struct task_ctx *qctx;
	u64 w, key;

	bpf_for_each(scx_dsq, q, CPU_DSQ_BASE + src, 0) {
		if (q->pid != pid)
			continue;
		qctx = bpf_task_storage_get(&task_ctxs, q, 0, 0);
		/* it may have run and been queued again, its affinity changed, since the pick */
		if (!qctx || qctx->lru_at != lru || bound_to_cpu(q) || !test_cpu(q->cpus_ptr, dst))
			return 0;
		w = task_weight(qctx, type) + 1;
		if (to_local)
			return scx_bpf_dsq_move(BPF_FOR_EACH_ITER, q, SCX_DSQ_LOCAL, 0) ? w : 0;
		key = qctx->deadline - avg_vruntime(src) + avg_vruntime(dst);
		scx_bpf_dsq_move_set_vtime(BPF_FOR_EACH_ITER, key);
		/*
		 * Counted on @dst before it can be seen there, on @src until it has left. One
		 * such move of a task at a time: a second puller that took it from @dst before
		 * the first had moved its count would have that count taken from its own queue.
		 */
		if (__sync_lock_test_and_set(&qctx->moving, 1))
			return 0;
		__sync_fetch_and_add(dsq_count(CPU_COUNT(dst)), 1);
		if (!scx_bpf_dsq_move_vtime(BPF_FOR_EACH_ITER, q, CPU_DSQ_BASE + dst, 0)) {
			__sync_fetch_and_sub(dsq_count(CPU_COUNT(dst)), 1);
			__sync_lock_test_and_set(&qctx->moving, 0);
			return 0;
		}
		dsq_count_move(qctx, CPU_COUNT(dst) + 1);
		__sync_lock_test_and_set(&qctx->moving, 0);
		/* moved: its sums follow (a move that failed changed nothing) */
		follow_migration(q, qctx, dst, feats);
		pelt_follow(qctx, dst, rq_clock_task(dst));
		qctx->lru_at = scx_bpf_now();
		return w;
	}
	return 0;
}

/* detach_task()'s @flags: what a task weighs, and where it goes (local: a newidle pull) */
enum detach_flags { DETACH_UTIL = 1, DETACH_TO_LOCAL = 2 };

/*
 * detach_tasks()' step and attach_task(): the task pick_detach() chooses on @src's queue
 * (@budget < 0: no budget) moved to @dst. Returns its weight + 1, 0 when none moved.
 * Global, as the two balances: the verifier checks it once, not on every path of theirs.
 */
__noinline u64 detach_task(s32 src, s32 dst, u32 lvl, u32 flags, s64 budget)
{
	u32 type = flags & DETACH_UTIL ? MIGRATE_UTIL : MIGRATE_LOAD, failed, pid;

	if (!valid_cpu(src) || !valid_cpu(dst) || cpu_dsq_nr_queued(src) <= 0)
		return 0;
	failed = sd_ctxs[CPU_IDX(dst)][lvl & (NR_SD_LEVELS - 1)].nr_balance_failed;
	pid = pick_detach(src, dst, lvl, type, budget, failed, flags & DETACH_TO_LOCAL);
	if (!pid)
		return 0;
	return attach_task(src, dst, pid, lb_scratch()->picked_lru, type, flags & DETACH_TO_LOCAL,
			   lookup_ctl());
}

/* A newidle pull of one task from @src at level @lvl (queue.bpf.h's pulls). */
static __always_inline bool detach_one(s32 src, s32 dst, u32 lvl)
{
	return detach_task(src, dst, lvl, DETACH_TO_LOCAL, -1);
}

/* Where update_sg_lb_stats() sums: the scratch's local group or the current one. */
enum sg_which { SG_LOCAL, SG_CUR };

static __always_inline struct sis_sg_stats *sg_slot(u32 slot)
{
	struct lb_scratch *sc = lb_scratch();

	return slot == SG_LOCAL ? &sc->local : &sc->sg;
}

/* One CPU's part of update_sg_lb_stats(), into @slot; global, like that. */
__noinline int sg_add_cpu(u32 slot, s32 c, u64 now)
{
	struct sis_sg_stats *s = sg_slot(slot);
	struct cpu_pelt *pc = &cpu_pelts[CPU_IDX(c)];
	u64 load, cap, util;
	u32 nr;

	if (!valid_cpu(c) || READ_ONCE(cpu_ctxs[CPU_IDX(c)].offline))
		return 0;
	nr = rq_nr_running(c);
	load = cpu_load(c);
	cap = capacity_of(c);
	util = cpu_util_cfs(c, now);
	if (s->first_cpu < 0 || c < s->first_cpu)
		s->first_cpu = c;
	s->group_weight++;
	s->sum_nr_running += nr;
	s->sum_h_nr_running += READ_ONCE(pc->nr_runnable);
	s->group_load += load;
	s->group_util += util;
	s->group_runnable += READ_ONCE(pc->avg.runnable_avg);
	s->group_capacity += cap;
	if (!nr) {
		s->idle_cpus++;
		if (s->first_idle < 0 || c < s->first_idle)
			s->first_idle = c;
	} else if (READ_ONCE(pc->nr_runnable) > s->run_nr) {
		s->run_nr = READ_ONCE(pc->nr_runnable);
		s->run_cpu = c;
	}
	if (s->min_cpu < 0 || load < s->min_load) {
		s->min_cpu = c;
		s->min_load = load;
	}
	if (cpu_dsq_nr_queued(c) <= 0)
		return 0;
	if (s->load_cpu < 0 || load * s->cap_best > s->load_best * cap) {
		s->load_cpu = c;
		s->load_best = load;
		s->cap_best = cap;
	}
	if (s->util_cpu < 0 || util > s->util_best) {
		s->util_cpu = c;
		s->util_best = util;
	}
	return 0;
}

static __always_inline void sg_add_llc(u32 slot, u32 llc, u64 now)
{
	u32 off = llc_off[LLC_IDX(llc)], i;

	bpf_for(i, 0, llc_nr[LLC_IDX(llc)])
		sg_add_cpu(slot, llc_cpus[CPU_IDX(off + i)], now);
}

static __always_inline void sg_init(struct sis_sg_stats *s)
{
	__builtin_memset(s, 0, sizeof(*s));
	s->first_cpu = s->load_cpu = s->util_cpu = s->min_cpu = s->first_idle = s->run_cpu = -1;
}

/* The number of NUMA nodes the topology uses: the highest node index + 1. */
static __always_inline u32 nr_nodes(void)
{
	u32 n = 0, l;

	bpf_for(l, 0, nr_llcs)
		if (llc_node[LLC_IDX(l)] + 1 > n)
			n = llc_node[LLC_IDX(l)] + 1;
	return n < MAX_NODES ? n : MAX_NODES;
}

/*
 * Group @g of level @lvl (a CPU, a core, an LLC, a node), its figures summed into
 * @slot. Global, as the group and domain steps: the verifier checks each once, not in
 * every state of the loops around it.
 */
__noinline int update_sg_lb_stats(u32 slot, u32 lvl, u32 g, u64 now)
{
	u32 i, off;

	sg_init(sg_slot(slot));
	switch (lvl) {
	case SD_LVL_SMT:
		sg_add_cpu(slot, g, now);
		break;
	case SD_LVL_LLC:
		off = core_off[CPU_IDX(g)];
		bpf_for(i, 0, core_nr[CPU_IDX(g)] < MAX_SIBLINGS ? core_nr[CPU_IDX(g)] : MAX_SIBLINGS)
			sg_add_cpu(slot, core_cpus[CPU_IDX(off + i)], now);
		break;
	case SD_LVL_NODE:
		sg_add_llc(slot, g, now);
		break;
	default:
		bpf_for(i, 0, nr_llcs)
			if (llc_node[LLC_IDX(i)] == g)
				sg_add_llc(slot, i, now);
	}
	return 0;
}

/* The group of level @lvl that holds @cpu. */
static __always_inline u32 group_of(u32 lvl, s32 cpu)
{
	switch (lvl) {
	case SD_LVL_SMT:
		return cpu;
	case SD_LVL_LLC:
		return cpu_core[CPU_IDX(cpu)];
	case SD_LVL_NODE:
		return cpu_llc[CPU_IDX(cpu)];
	default:
		return cpu_node[CPU_IDX(cpu)];
	}
}

/* Candidates for the groups of @cpu's domain at @lvl: how many to try (domain_group()). */
static __always_inline u32 domain_nr(u32 lvl, s32 cpu)
{
	switch (lvl) {
	case SD_LVL_SMT:
		return nr_siblings(cpu);
	case SD_LVL_LLC:
		return llc_nr[LLC_IDX(cpu_llc[CPU_IDX(cpu)])];
	case SD_LVL_NODE:
		return nr_llcs;
	default:
		return nr_nodes();
	}
}

/* The @i-th candidate: its group, if it is a group of the domain; else -1. */
static __always_inline s64 domain_group(u32 lvl, s32 cpu, u32 i)
{
	u32 llc = LLC_IDX(cpu_llc[CPU_IDX(cpu)]), c, core;

	switch (lvl) {
	case SD_LVL_SMT:
		return sibling(cpu, i);
	case SD_LVL_LLC:
		c = llc_cpus[CPU_IDX(llc_off[llc] + i)];
		core = cpu_core[CPU_IDX(c)];
		/* a core is met once: at its first sibling */
		return core_cpus[CPU_IDX(core_off[CPU_IDX(core)])] == c ? core : -1;
	case SD_LVL_NODE:
		return llc_node[LLC_IDX(i)] == llc_node[llc] ? i : -1;
	default:
		return i;
	}
}

/* group_is_overloaded(), group_has_capacity() and group_classify()'s order for these. */
static __always_inline u32 group_classify(struct sis_sg_stats *s, u32 pct)
{
	if (s->sum_nr_running > s->group_weight &&
	    (s->group_capacity * 100 < s->group_util * pct ||
	     s->group_capacity * pct < s->group_runnable * 100))
		return GROUP_OVERLOADED;
	if (s->sum_nr_running < s->group_weight)
		return GROUP_HAS_SPARE;
	if (s->group_capacity * pct < s->group_runnable * 100)
		return GROUP_FULLY_BUSY;
	return s->group_capacity * 100 > s->group_util * pct ? GROUP_HAS_SPARE : GROUP_FULLY_BUSY;
}

static __always_inline void sg_finish(struct sis_sg_stats *s, u32 lvl)
{
	s->group_type = group_classify(s, sd_imbalance_pct(lvl));
	if (s->group_type != GROUP_HAS_SPARE && s->group_capacity)
		s->avg_load = s->group_load * CAPACITY_SCALE / s->group_capacity;
}

/*
 * One group of update_sd_lb_stats()'s walk over @cpu's domain at @lvl (and of
 * sched_balance_find_dst_group()'s): the @i-th candidate, summed and classified into
 * the scratch's current group. False when it is no group of the domain, @cpu's own, an
 * empty one, or (@fork) a node beyond node_reclaim_distance, which no SD_BALANCE_FORK
 * domain spans.
 */
__noinline bool update_sd_group(s32 cpu, u32 lvl, u32 i, u64 now, bool fork)
{
	u32 mine = group_of(lvl, cpu);
	s64 g = domain_group(lvl, cpu, i);

	if (g < 0 || g == mine || (fork && lvl == SD_LVL_SYS && node_far_of(mine, g)))
		return false;
	update_sg_lb_stats(SG_CUR, lvl, g, now);
	if (!lb_scratch()->sg.group_weight)
		return false;
	sg_finish(&lb_scratch()->sg, lvl);
	return true;
}

/* The weight of @cpu's domain at @lvl; 0 when the level folds into its child. */
static __always_inline u32 sd_weight(u32 lvl, s32 cpu)
{
	u32 llc = LLC_IDX(cpu_llc[CPU_IDX(cpu)]), w = 0, child, l;

	switch (lvl) {
	case SD_LVL_SMT:
		w = nr_siblings(cpu);
		child = 1;
		break;
	case SD_LVL_LLC:
		w = llc_nr[llc];
		child = nr_siblings(cpu);
		break;
	case SD_LVL_NODE:
		w = node_weight(llc_node[llc]);
		child = llc_nr[llc];
		break;
	default:
		bpf_for(l, 0, nr_llcs)
			w += llc_nr[LLC_IDX(l)];
		child = node_weight(llc_node[llc]);
	}
	return w > child ? w : 0;
}

/*
 * sched_balance_rq() for a busy @cpu at @lvl: the busiest overloaded group of the
 * domain, calculate_imbalance()'s migrate_load or migrate_util and the busiest queue of
 * that group, left in the scratch for detach_tasks(). Returns 1 for an imbalance, 0 for
 * none, -1 when should_we_balance() says another CPU of the local group balances.
 * differs: only the rules a busy CPU reaches (an idle one pulls in sis_dispatch and
 * balances running tasks in sched_balance_idle()).
 */
static __always_inline int sched_balance_rq(s32 cpu, u32 lvl, u64 now)
{
	u32 i, mine = group_of(lvl, cpu), type;
	u64 total_load, total_cap, sds_avg, w;
	u32 pct = sd_imbalance_pct(lvl);
	struct sis_sg_stats *local, *busiest, *sg;
	struct lb_scratch *sc;
	s64 imbalance;
	s32 src;

	sc = lb_scratch();
	local = &sc->local;
	busiest = &sc->busiest;
	sg = &sc->sg;
	update_sg_lb_stats(SG_LOCAL, lvl, mine, now);
	/* should_we_balance(): an idle CPU of the group balances for it, else its first */
	if (local->idle_cpus || local->first_cpu != cpu)
		return -1;
	sg_finish(local, lvl);
	total_load = local->group_load;
	total_cap = local->group_capacity;
	sg_init(busiest);
	bpf_for(i, 0, domain_nr(lvl, cpu)) {
		if (!update_sd_group(cpu, lvl, i, now, false))
			continue;
		total_load += sg->group_load;
		total_cap += sg->group_capacity;
		/* update_sd_pick_busiest(): a busy CPU pulls only from an overloaded group */
		if (sg->group_type == GROUP_OVERLOADED && sg->sum_h_nr_running &&
		    (busiest->first_cpu < 0 || sg->avg_load > busiest->avg_load))
			__builtin_memcpy(busiest, sg, sizeof(*sg));
	}
	if (busiest->first_cpu < 0 || !total_cap || !local->group_capacity)
		return 0;
	sds_avg = total_load * CAPACITY_SCALE / total_cap;
	/* sched_balance_find_src_group()'s tests for an overloaded local group */
	if (local->group_type == GROUP_OVERLOADED &&
	    (local->avg_load >= busiest->avg_load || local->avg_load >= sds_avg ||
	     100 * busiest->avg_load <= pct * local->avg_load))
		return 0;
	/* calculate_imbalance() */
	if (local->group_type == GROUP_HAS_SPARE) {
		/* below the package level a busy CPU evens idle CPUs: it has none to give */
		if (lvl <= SD_LVL_LLC)
			return 0;
		type = MIGRATE_UTIL;
		w = local->group_capacity > local->group_util ? local->group_capacity :
								 local->group_util;
		imbalance = w - local->group_util;
		src = busiest->util_cpu;
	} else {
		if (local->group_type == GROUP_FULLY_BUSY) {
			local->avg_load = local->group_load * CAPACITY_SCALE / local->group_capacity;
			if (local->avg_load >= busiest->avg_load || local->avg_load >= sds_avg)
				return 0;
		}
		if (busiest->avg_load <= sds_avg)
			return 0;
		type = MIGRATE_LOAD;
		w = (busiest->avg_load - sds_avg) * busiest->group_capacity;
		if ((sds_avg - local->avg_load) * local->group_capacity < w)
			w = (sds_avg - local->avg_load) * local->group_capacity;
		imbalance = w / CAPACITY_SCALE;
		src = busiest->load_cpu;
	}
	if (imbalance <= 0 || src < 0 || src == cpu)
		return 0;
	sc->imbalance = imbalance;
	sc->src = src;
	sc->type = type;
	return 1;
}

/*
 * detach_tasks() for the imbalance sched_balance_rq() found, onto @cpu's queue.
 * Returns the tasks moved, or -2 when none could be.
 */
static __always_inline int detach_tasks(s32 cpu, u32 lvl)
{
	struct lb_scratch *sc = lb_scratch();
	u64 w;
	u32 i;

	sc->moved = 0;
	bpf_for(i, 0, DETACH_MAX) {
		w = detach_task(sc->src, cpu, lvl, sc->type == MIGRATE_UTIL ? DETACH_UTIL : 0,
				sc->imbalance);
		if (!w)
			break;
		sc->moved++;
		sc->imbalance -= w - 1;
		if (sc->imbalance <= 0)
			break;
	}
	if (!sc->moved)
		return -2;
	stat_add(STAT_LB_SMT + lvl, sc->moved);
	set_overloaded(cpu);
	return sc->moved;
}

/*
 * sibling_imbalance(): the tasks running in @busiest beyond its share against @local.
 * differs: shared by CPUs, not cores (the same where every core has the same threads).
 */
static __always_inline s64 sibling_imbalance(struct sis_sg_stats *local,
					     struct sis_sg_stats *busiest)
{
	s64 nl = local->group_weight, nb = busiest->group_weight, imb;

	if (!busiest->sum_nr_running || !nl || !nb)
		return 0;
	if (nl == nb)
		return busiest->sum_nr_running > local->sum_nr_running ?
			       busiest->sum_nr_running - local->sum_nr_running : 0;
	imb = nl * busiest->sum_nr_running - nb * local->sum_nr_running;
	if (imb < 0)
		imb = 0;
	imb = (2 * imb + nl + nb) / (nl + nb);
	if (imb <= 1 && !local->sum_nr_running && busiest->sum_nr_running > 1)
		imb = 2;
	return imb;
}

/*
 * update_sd_pick_busiest() between groups with nothing waiting: one running tasks of
 * ours, of the busier type, then the fewer idle CPUs, then the more tasks running.
 * differs: no group_smt_balance type and no avg_load order between fully busy groups.
 */
static __always_inline bool busier_spare(struct sis_sg_stats *sg, struct sis_sg_stats *busiest)
{
	if (!sg->sum_h_nr_running)
		return false;
	if (busiest->first_cpu < 0)
		return true;
	if (sg->group_type != busiest->group_type)
		return sg->group_type > busiest->group_type;
	if (sg->idle_cpus != busiest->idle_cpus)
		return sg->idle_cpus < busiest->idle_cpus;
	return sg->sum_nr_running > busiest->sum_nr_running;
}

/* spare_imbalance()'s verdicts other than an imbalance (>= 0) */
enum spare_ret {
	SPARE_NOT_OURS = -1,
	SPARE_BALANCED = -2,
	SPARE_OVERLOADED = -3,
	SPARE_LOCAL_BUSY = -4,
};

/*
 * sched_balance_rq() for an idle @cpu at @lvl between groups with spare capacity, up to
 * calculate_imbalance()'s migrate_task: the tasks to move (before halving), or a verdict.
 * A newly idle CPU (@newidle) balances whatever its group; an idle one only when
 * should_we_balance() picks it.
 * differs: should_we_balance() takes the group's first idle CPU, not the first of an
 * idle core.
 */
static __always_inline s64 spare_imbalance(s32 cpu, u32 lvl, u64 now, bool newidle)
{
	struct lb_scratch *sc = lb_scratch();
	struct sis_sg_stats *local = &sc->local, *busiest = &sc->busiest, *sg = &sc->sg;
	u32 i;
	s64 imb;

	update_sg_lb_stats(SG_LOCAL, lvl, group_of(lvl, cpu), now);
	if (!newidle && local->first_idle != cpu)
		return SPARE_NOT_OURS;
	sg_finish(local, lvl);
	if (local->group_type != GROUP_HAS_SPARE)
		return SPARE_LOCAL_BUSY;
	sg_init(busiest);
	bpf_for(i, 0, domain_nr(lvl, cpu)) {
		if (!update_sd_group(cpu, lvl, i, now, false))
			continue;
		if (sg->group_type == GROUP_OVERLOADED)
			return SPARE_OVERLOADED;
		if (busier_spare(sg, busiest))
			__builtin_memcpy(busiest, sg, sizeof(*sg));
	}
	if (busiest->first_cpu < 0)
		return SPARE_BALANCED;
	imb = sibling_imbalance(local, busiest);
	/* prefer_sibling above SMT; at SMT, groups of one CPU take the same branch */
	if (imb <= 1 && ((busiest->group_weight > 1 &&
			  local->idle_cpus <= busiest->idle_cpus + 1) ||
			 busiest->sum_h_nr_running <= 1))
		return SPARE_BALANCED;
	/* calculate_imbalance(): a small imbalance between nodes is allowed, then half */
	if (lvl == SD_LVL_SYS)
		imb = adjust_numa_imbalance(imb, local->sum_nr_running + 1,
					    imb_numa_nr(cpu_node[CPU_IDX(cpu)], cpu_llc[CPU_IDX(cpu)]));
	return imb;
}

/*
 * sched_balance_rq() for an idle @cpu at @lvl (CPU_IDLE): the CPU to take a running
 * task from, -2 when balanced, -1 when should_we_balance() leaves it to another CPU.
 * differs: only the case sis_dispatch's pulls leave, nothing waiting in any group (one
 * overloaded group makes the domain balanced here).
 */
static __always_inline s32 sched_balance_rq_idle(s32 cpu, u32 lvl, u64 now)
{
	struct sis_sg_stats *busiest = &lb_scratch()->busiest;
	s64 imb = spare_imbalance(cpu, lvl, now, false);

	if (imb == SPARE_NOT_OURS)
		return -1;
	if (imb < 0 || busiest->run_cpu < 0 || busiest->run_cpu == cpu)
		return -2;
	return imb >> 1 ? busiest->run_cpu : -2;
}

/*
 * sched_balance_rq() for a newly idle @cpu at the NUMA level, before it takes a task
 * waiting on another node: an overloaded node gives, and so does a node whose imbalance
 * adjust_numa_imbalance() does not allow. 1: pull, 0: leave it there.
 * differs: one verdict for the walk over the other nodes' LLCs (the first overloaded
 * node, else the busiest), not one per group; a node of ours without spare capacity
 * pulls with no avg_load test.
 */
__noinline int numa_newidle_allows(s32 cpu)
{
	s64 imb;

	if (!known_cpu(cpu))
		return 1;
	imb = spare_imbalance(cpu, SD_LVL_SYS, scx_bpf_now(), true);
	if (imb == SPARE_OVERLOADED || imb == SPARE_LOCAL_BUSY || (imb >= 0 && imb >> 1))
		return 1;
	stat_inc(STAT_NI_NUMA_KEPT);
	return 0;
}

/* What active_balance() did. */
enum active_ret { ACTIVE_KICKED, ACTIVE_PINNED, ACTIVE_PENDING };

/*
 * need_active_balance()'s start: mark the running task of @src for @dst (busiest->
 * active_balance, push_cpu) and preempt it; sis_dispatch lets it go and sis_enqueue
 * pushes it (active_load_balance_cpu_stop()). ACTIVE_PINNED when it may not move
 * there (LBF_ALL_PINNED), or another class runs on @src.
 */
static __always_inline int active_balance(s32 dst, s32 src, u32 lvl)
{
	struct rq *rq = bpf_per_cpu_ptr(&runqueues, src);
	struct cpu_ctx *c = &cpu_ctxs[CPU_IDX(src)];
	struct task_struct *curr;
	u64 now = scx_bpf_now();

	if (!rq || rq->nr_running != rq->scx.nr_running)
		return ACTIVE_PINNED;
	/* signed: push_at is another CPU's clock, which may run ahead of this one's */
	if (READ_ONCE(c->push_mark) && time_before(now, READ_ONCE(c->push_at) + PUSH_TTL_NS))
		return ACTIVE_PENDING;
	curr = rq->curr;
	if (!curr || !curr->pid || curr->nr_cpus_allowed == 1 || curr->migration_disabled ||
	    !test_cpu(curr->cpus_ptr, dst))
		return ACTIVE_PINNED;
	WRITE_ONCE(c->push_at, now);
	/* an exchange: a full barrier, so a reader of the mark sees push_at */
	__sync_lock_test_and_set(&c->push_mark, (u64)curr->pid << 32 | (u64)(lvl & 0xff) << 24 |
						    ((u32)dst & 0xffffff));
	scx_bpf_kick_cpu(src, SCX_KICK_PREEMPT);
	return ACTIVE_KICKED;
}

/* The mark of @cpu when it is for @p and not stale, else 0. */
static __always_inline u64 push_mark_for(struct task_struct *p, s32 cpu)
{
	struct cpu_ctx *c = &cpu_ctxs[CPU_IDX(cpu)];
	u64 mark = READ_ONCE(c->push_mark);

	if (!mark || (u32)(mark >> 32) != (u32)p->pid ||
	    !time_before(scx_bpf_now(), READ_ONCE(c->push_at) + PUSH_TTL_NS))
		return 0;
	return mark;
}

/* Is @p the task an active balance asked @cpu to let go (rq->active_balance)? */
static __always_inline bool push_pending(struct task_struct *p, s32 cpu)
{
	return push_mark_for(p, cpu) != 0;
}

/*
 * active_load_balance_cpu_stop(): @p, let go on @src for an active balance, goes
 * straight to the local queue of the CPU that asked, if it may run there; that CPU's
 * level counts no more failures.
 * differs: a migration_disabled of 1 on current is the prolog's only with PREEMPT_RCU.
 */
static __always_inline bool active_push(struct task_struct *p, s32 src)
{
	struct cpu_ctx *c = &cpu_ctxs[CPU_IDX(src)];
	u64 mark = push_mark_for(p, src);
	u32 lvl = (mark >> 24) & 0xff;
	s32 dst = mark & 0xffffff;

	if (!mark || __sync_val_compare_and_swap(&c->push_mark, mark, 0) != mark)
		return false;
	if (!valid_cpu(dst) || dst == src || p->nr_cpus_allowed == 1 ||
	    p->migration_disabled > (CONFIG_PREEMPT_RCU ? 1 : 0) ||
	    !test_cpu(p->cpus_ptr, dst) || READ_ONCE(cpu_ctxs[CPU_IDX(dst)].offline))
		return false;
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | dst, slice_ns, 0);
	sd_ctxs[CPU_IDX(dst)][lvl & (NR_SD_LEVELS - 1)].nr_balance_failed = 0;
	stat_inc(STAT_LB_ACTIVE);
	return true;
}

/*
 * get_sd_balance_interval(), ns: the interval in jiffies, busy_factor times that for a
 * busy CPU. differs: rounded down to ticks with no jiffy taken off; a CPU running only
 * SCHED_IDLE tasks counts as busy.
 */
static __always_inline u64 sd_interval_ns(u32 interval_ms, bool busy)
{
	u64 ns = (u64)interval_ms * (busy ? BUSY_FACTOR : 1) * 1000000ULL;
	u64 max = (u64)nr_cpu_ids * 100000000ULL;	/* max_load_balance_interval: HZ * n / 10 */

	ns = ns / tick_ns * tick_ns;
	return ns < tick_ns ? tick_ns : ns > max ? max : ns;
}

/* sched_balance_trigger()'s test: is a level of @cpu due (rq->next_balance)? */
static __always_inline bool balance_due(s32 cpu)
{
	return valid_cpu(cpu) && scx_bpf_now() >= READ_ONCE(cpu_ctxs[CPU_IDX(cpu)].next_balance);
}

/*
 * update_pick_idlest(): is @sg idler than @idlest? The lower group type; between busy
 * groups the lower avg_load, between groups with spare capacity more idle CPUs, then
 * less util.
 */
static __always_inline bool pick_idlest(struct sis_sg_stats *idlest, struct sis_sg_stats *sg)
{
	if (sg->group_type != idlest->group_type)
		return sg->group_type < idlest->group_type;
	if (sg->group_type != GROUP_HAS_SPARE)
		return sg->avg_load < idlest->avg_load;
	if (sg->idle_cpus != idlest->idle_cpus)
		return sg->idle_cpus > idlest->idle_cpus;
	return sg->group_util < idlest->group_util;
}

/*
 * sched_balance_find_dst_group()'s choice between the local group and the idlest:
 * the lower group_type, and between two busy groups the lighter by avg_load beyond
 * the imbalance_pct margin, the local node kept across nodes within it, and between
 * nodes with spare capacity while adjust_numa_imbalance() finds none.
 * differs: imb_numa_nr is not capped by the task's allowed CPUs (the walk has no task).
 */
static __always_inline bool prefer_idlest(struct sis_sg_stats *local, struct sis_sg_stats *idlest,
					  u32 lvl, s32 cpu)
{
	u64 imb = CAPACITY_SCALE * (sd_imbalance_pct(lvl) - 100) / 100;
	s64 idle_diff = (s64)idlest->idle_cpus - local->idle_cpus;

	if (local->group_type != idlest->group_type)
		return local->group_type > idlest->group_type;
	if (local->group_type == GROUP_HAS_SPARE) {
		if (lvl == SD_LVL_SYS &&
		    !adjust_numa_imbalance(idle_diff < 0 ? -idle_diff : idle_diff,
					   local->sum_nr_running + 1,
					   imb_numa_nr(cpu_node[CPU_IDX(cpu)], cpu_llc[CPU_IDX(cpu)])))
			return false;
		return idle_diff > 0;
	}
	if (lvl == SD_LVL_SYS && idlest->avg_load + imb >= local->avg_load)
		return false;
	if (idlest->avg_load >= local->avg_load + imb)
		return false;
	return 100 * local->avg_load > sd_imbalance_pct(lvl) * idlest->avg_load;
}

/*
 * One level of sched_balance_find_dst_cpu() for a fork that found nothing idle: the
 * idlest group of @cpu's domain at @lvl when prefer_idlest() says so, and its least
 * loaded CPU (sched_balance_find_dst_group()); else @cpu. The caller walks the
 * levels from the top down, each from the CPU the one above chose.
 * differs: the least loaded CPU of the group, whatever the task's affinity (the caller
 * keeps prev when it may not run there), where fair.c takes an idle CPU first, then one
 * running only SCHED_IDLE work, then the least loaded (such a CPU's load, about 3, is
 * mostly the least here, and may beat an idle CPU's blocked load).
 */
static __always_inline s32 sched_balance_find_dst_group(s32 cpu, u32 lvl)
{
	struct sis_sg_stats *local, *idlest, *sg;
	struct lb_scratch *sc;
	u32 i;
	u64 now;

	sc = lb_scratch();
	if (!known_cpu(cpu) || !sd_weight(lvl, cpu))
		return cpu;
	now = scx_bpf_now();
	local = &sc->local;
	idlest = &sc->busiest;
	sg = &sc->sg;
	update_sg_lb_stats(SG_LOCAL, lvl, group_of(lvl, cpu), now);
	sg_finish(local, lvl);
	sg_init(idlest);
	bpf_for(i, 0, domain_nr(lvl, cpu)) {
		if (!update_sd_group(cpu, lvl, i, now, true))
			continue;
		if (idlest->first_cpu < 0 || pick_idlest(idlest, sg))
			__builtin_memcpy(idlest, sg, sizeof(*sg));
	}
	if (idlest->first_cpu >= 0 && idlest->min_cpu >= 0 && prefer_idlest(local, idlest, lvl, cpu))
		return idlest->min_cpu;
	return cpu;
}

/*
 * The balances and the fork walk once per level, each a global function with its level
 * a constant: the verifier checks each once, with no branch for the other levels. The
 * deepest chains, dispatch -> sched_balance_domains -> sched_balance_rq_* ->
 * update_sd_group -> update_sg_lb_stats -> sg_add_cpu and select_cpu's fork walk, stay
 * within the verifier's 512-byte combined stack (select_cpu's own frame is 248).
 */
#define SD_LEVEL_FUNCS(name, lvl)							\
	__noinline int sched_balance_rq_##name(s32 cpu)				\
	{									\
		return valid_cpu(cpu) ? sched_balance_rq(cpu, lvl, scx_bpf_now()) : 0;	\
	}									\
	__noinline s32 sched_balance_find_dst_group_##name(s32 cpu)			\
	{									\
		return sched_balance_find_dst_group(cpu, lvl);				\
	}									\
	__noinline s32 sched_balance_rq_idle_##name(s32 cpu)				\
	{									\
		return valid_cpu(cpu) ? sched_balance_rq_idle(cpu, lvl, scx_bpf_now()) : -1; \
	}
SD_LEVEL_FUNCS(smt, SD_LVL_SMT)
SD_LEVEL_FUNCS(llc, SD_LVL_LLC)
SD_LEVEL_FUNCS(node, SD_LVL_NODE)
SD_LEVEL_FUNCS(sys, SD_LVL_SYS)

/* sched_balance_rq() at level @lvl, a constant where this is inlined */
static __always_inline int sched_balance_rq_at(s32 cpu, u32 lvl)
{
	switch (lvl) {
	case SD_LVL_SMT:
		return sched_balance_rq_smt(cpu);
	case SD_LVL_LLC:
		return sched_balance_rq_llc(cpu);
	case SD_LVL_NODE:
		return sched_balance_rq_node(cpu);
	default:
		return sched_balance_rq_sys(cpu);
	}
}

/* sched_balance_rq_idle() at level @lvl, a constant where this is inlined */
static __always_inline s32 sched_balance_rq_idle_at(s32 cpu, u32 lvl)
{
	switch (lvl) {
	case SD_LVL_SMT:
		return sched_balance_rq_idle_smt(cpu);
	case SD_LVL_LLC:
		return sched_balance_rq_idle_llc(cpu);
	case SD_LVL_NODE:
		return sched_balance_rq_idle_node(cpu);
	default:
		return sched_balance_rq_idle_sys(cpu);
	}
}

/*
 * One level of sched_balance_domains(): balance when due, tune the interval and
 * nr_balance_failed by the outcome as sched_balance_rq() does, and lower *@next to
 * when the level is due again. False: should_we_balance() refused, the walk ends.
 * differs: an imbalance whose tasks were all pinned counts as a failure (no out_all_pinned).
 */
static __always_inline bool balance_level(s32 cpu, u32 lvl, u64 now, u64 *next)
{
	struct sd_ctx *sd = &sd_ctxs[CPU_IDX(cpu)][lvl];
	u32 weight = sd_weight(lvl, cpu);
	int ret = 0;
	u64 due;

	if (!weight)
		return true;
	if (!sd->balance_interval)
		sd->balance_interval = weight;
	if (!time_before(now, sd->last_balance + sd_interval_ns(sd->balance_interval, true))) {
		stat_inc(STAT_LB_RUNS);
		ret = sched_balance_rq_at(cpu, lvl);
		if (ret > 0)
			ret = detach_tasks(cpu, lvl);
		sd->last_balance = now;
		if (ret > 0 || ret == -2) {
			/* moved, or an imbalance it could not move: back to min_interval */
			sd->nr_balance_failed = ret > 0 ? 0 : sd->nr_balance_failed + 1;
			sd->balance_interval = weight;
		} else {
			/* balanced (or left to another CPU): the interval doubles up to max_interval */
			sd->nr_balance_failed = 0;
			if (sd->balance_interval < 2 * weight)
				sd->balance_interval *= 2;
		}
	}
	due = sd->last_balance + sd_interval_ns(sd->balance_interval, true);
	if (due < *next)
		*next = due;
	return ret != -1;
}

/*
 * sched_balance_domains() for a busy @cpu (prev still runnable at its pick), from the
 * lowest level up, each level at its own interval; a level whose should_we_balance()
 * refuses ends the walk.
 * differs: run at the CPU's next pick (at most a slice after the tick that would have
 * raised SCHED_SOFTIRQ), under its own rq lock; the busiest CPU is not locked.
 */
__noinline int sched_balance_domains(s32 cpu)
{
	u64 now = scx_bpf_now(), next = ~0ULL;

	if (!known_cpu(cpu))
		return 0;
	if (balance_level(cpu, SD_LVL_SMT, now, &next) &&
	    balance_level(cpu, SD_LVL_LLC, now, &next) &&
	    balance_level(cpu, SD_LVL_NODE, now, &next))
		balance_level(cpu, SD_LVL_SYS, now, &next);
	cpu_ctxs[CPU_IDX(cpu)].next_balance = next == ~0ULL ? now + sd_interval_ns(1, true) : next;
	return 0;
}

/*
 * One level of sched_balance_domains() for an idle @cpu (CPU_IDLE) at the idle interval:
 * an imbalance of running tasks is a failure (nothing waits to detach), past
 * cache_nice_tries + 2 of them an active balance. False: should_we_balance() refused.
 */
static __always_inline bool balance_idle_level(s32 cpu, u32 lvl, u64 now, u64 *next)
{
	struct sd_ctx *sd = &sd_ctxs[CPU_IDX(cpu)][lvl];
	u32 weight = sd_weight(lvl, cpu);
	s32 src = -2;
	u64 due;

	if (!weight)
		return true;
	if (!sd->balance_interval)
		sd->balance_interval = weight;
	if (!time_before(now, sd->last_balance + sd_interval_ns(sd->balance_interval, false))) {
		src = sched_balance_rq_idle_at(cpu, lvl);
		sd->last_balance = now;
		if (src >= 0) {
			/* out_one_pinned: a task that may not move here backs the level off */
			if (++sd->nr_balance_failed > cache_nice_tries(lvl) + 2 &&
			    active_balance(cpu, src, lvl) == ACTIVE_PINNED) {
				if (sd->balance_interval < MAX_PINNED_INTERVAL_MS)
					sd->balance_interval *= 2;
			} else {
				sd->balance_interval = weight;
			}
		} else if (src == -2) {
			sd->nr_balance_failed = 0;
			if (sd->balance_interval < 2 * weight)
				sd->balance_interval *= 2;
		}
	}
	due = sd->last_balance + sd_interval_ns(sd->balance_interval, false);
	if (due < *next)
		*next = due;
	return src != -1;
}

/*
 * The nohz idle balance (_nohz_idle_balance()) of an idle @cpu a busy CPU kicked,
 * for itself: sched_balance_domains() as CPU_IDLE, every level, and nohz.next_balance
 * set to when one is due again.
 */
__noinline int sched_balance_idle(s32 cpu)
{
	u64 now = scx_bpf_now(), next = ~0ULL;

	if (!known_cpu(cpu))
		return 0;
	if (balance_idle_level(cpu, SD_LVL_SMT, now, &next) &&
	    balance_idle_level(cpu, SD_LVL_LLC, now, &next) &&
	    balance_idle_level(cpu, SD_LVL_NODE, now, &next))
		balance_idle_level(cpu, SD_LVL_SYS, now, &next);
	/* at least a tick on, however the levels ended */
	WRITE_ONCE(nohz_next_balance, next > now + tick_ns && next != ~0ULL ? next : now + tick_ns);
	return 0;
}
