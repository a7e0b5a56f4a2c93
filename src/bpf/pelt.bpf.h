/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: PELT for our tasks and CPUs, as update_load_avg() keeps se->avg and
 * cfs_rq->avg: each task's signals and its CPU's are advanced together, to the CPU's
 * rq->clock_task, at runnable (enqueue_entity), running (set_next_entity), stopping
 * (put_prev_entity), quiescent (dequeue_entity) and the tick (entity_tick). A sleeping
 * task's load stays in its CPU's sums (blocked load) and decays there; a task that
 * moves leaves it in the old CPU's `removed` sums and is attached to the new one.
 * differs: no task group hierarchy: every task counts as the root cgroup's
 * (task_h_load() is the task's load_avg); no UTIL_EST; no frequency or capacity
 * scaling of the clock (rq_clock_pelt() is clock_task on a CPU at full capacity).
 * differs: a task the kernel moved while queued is detached from its old CPU at its
 * first event on the new one (enqueue, running), not at the move (DO_DETACH).
 */
#include "pelt.h"

/* cfs_rq->avg and what feeds it, for one CPU; written under that CPU's rq lock only. */
struct cpu_pelt {
	struct sis_sched_avg avg;
	u64 load_weight;	/* cfs_rq->load.weight (scaled down): runnable tasks' weights */
	u32 nr_runnable;	/* cfs_rq->h_nr_runnable */
	u32 curr;		/* cfs_rq->curr != NULL: a task of ours runs */
	/* cfs_rq->removed: what tasks that left took with them, from any CPU, atomically */
	u64 removed_load;
	u64 removed_runnable;
	u64 removed_util;
	u64 removed_weight;	/* ... and, for a task that left while runnable, its weight */
	u64 removed_nr;
	u64 removed_any;
} __attribute__((aligned(64)));
struct cpu_pelt cpu_pelts[MAX_CPUS];

#define PELT_NO_CPU	((u32)-1)

static __always_inline void pelt_update_avg(struct sis_sched_avg *sa, u64 now, u64 load,
					    u64 runnable, int running, u64 weight)
{
	if (___update_load_sum(now, sa, load, runnable, running))
		___update_load_avg(sa, weight);
}

/*
 * One signal's departure from a CPU's sums (dequeue_load_avg(), the removed sums):
 * subtract @avg and @sum, flooring at zero, and keep the sum no lower than the average
 * needs (PELT_MIN_DIVIDER).
 */
static __always_inline void sub_signal(u64 *avg_p, u64 *sum_p, u64 avg, u64 sum)
{
	*avg_p = pelt_sub_positive(*avg_p, avg);
	*sum_p = pelt_sub_positive(*sum_p, sum);
	if (*sum_p < *avg_p * PELT_MIN_DIVIDER)
		*sum_p = *avg_p * PELT_MIN_DIVIDER;
}

/* What departed tasks left in one of a CPU's `removed` sums, taken at @div. */
static __always_inline void take_removed(u64 *avg_p, u64 *sum_p, u64 *removed, u64 div)
{
	u64 r = __sync_lock_test_and_set(removed, 0);

	sub_signal(avg_p, sum_p, r, r * div);
}

/*
 * update_cfs_rq_load_avg(): take what departed tasks left in `removed`, then advance
 * the sums with the weight and counts that held since the last update.
 */
static __always_inline void update_cfs_rq_load_avg(struct cpu_pelt *c, u64 now)
{
	struct sis_sched_avg *sa = &c->avg;

	if (READ_ONCE(c->removed_any)) {
		u64 div = get_pelt_divider(sa), r;

		WRITE_ONCE(c->removed_any, 0);
		take_removed(&sa->load_avg, &sa->load_sum, &c->removed_load, div);
		take_removed(&sa->util_avg, &sa->util_sum, &c->removed_util, div);
		take_removed(&sa->runnable_avg, &sa->runnable_sum, &c->removed_runnable, div);
		/* a task moved while runnable left at the last update (its sync point) */
		c->load_weight = pelt_sub_positive(c->load_weight,
						   __sync_lock_test_and_set(&c->removed_weight, 0));
		r = __sync_lock_test_and_set(&c->removed_nr, 0);
		c->nr_runnable = r < c->nr_runnable ? c->nr_runnable - (u32)r : 0;
	}
	pelt_update_avg(sa, now, c->load_weight, c->nr_runnable, c->curr != 0, 1);
}

/* __update_load_avg_se(): the task's signals to @now, with what held since its update. */
static __always_inline void update_se_load_avg(struct task_ctx *tctx, u64 now)
{
	pelt_update_avg(&tctx->avg, now, tctx->pelt_runnable, tctx->pelt_runnable,
			tctx->pelt_running, tctx->pelt_weight);
}

/* update_load_avg(): the task and its CPU, to the CPU's task clock @now. */
static __always_inline void update_load_avg(struct task_ctx *tctx, s32 cpu, u64 now)
{
	update_se_load_avg(tctx, now);
	update_cfs_rq_load_avg(&cpu_pelts[CPU_IDX(cpu)], now);
}

/*
 * remove_entity_load_avg(): sync the task to its CPU's last update (as it was there:
 * blocked, or runnable for one moved while queued) and leave its signals, and its
 * weight if it was runnable, in that CPU's `removed` sums; safe from any CPU.
 */
static __always_inline void remove_entity_load_avg(struct task_ctx *tctx)
{
	u32 cpu = tctx->avg.cpu;
	struct cpu_pelt *c;

	if (cpu >= nr_cpu_ids)
		return;
	c = &cpu_pelts[CPU_IDX(cpu)];
	update_se_load_avg(tctx, READ_ONCE(c->avg.last_update_time));
	__sync_fetch_and_add(&c->removed_load, tctx->avg.load_avg);
	__sync_fetch_and_add(&c->removed_util, tctx->avg.util_avg);
	__sync_fetch_and_add(&c->removed_runnable, tctx->avg.runnable_avg);
	if (tctx->pelt_runnable) {
		__sync_fetch_and_add(&c->removed_weight, tctx->pelt_weight);
		__sync_fetch_and_add(&c->removed_nr, 1);
	}
	/* a full barrier after the sums: the drainer that sees the flag sees them */
	__sync_fetch_and_or(&c->removed_any, 1);
	tctx->avg.cpu = PELT_NO_CPU;
}

/*
 * post_init_entity_util_avg(): a new task starts at half the capacity its CPU has left,
 * shared by weight when the CPU is busy; runnable as util.
 */
static __always_inline void post_init_entity_util_avg(struct task_ctx *tctx, struct cpu_pelt *c)
{
	s64 cap = ((s64)CAPACITY_SCALE - (s64)c->avg.util_avg) / 2;
	u64 util = 0;

	if (cap > 0) {
		util = (u64)cap;
		if (c->avg.util_avg) {
			util = c->avg.util_avg * tctx->pelt_weight / (c->avg.load_avg + 1);
			if (util > (u64)cap)
				util = (u64)cap;
		}
	}
	tctx->avg.util_avg = util;
	tctx->avg.runnable_avg = util;
}

/*
 * attach_entity_load_avg(): the task joins @cpu's sums, aligned to its last update,
 * its sums rebuilt from its averages; a runnable one adds its weight.
 * differs: fair.c does not decay a woken migrating task over the time since its old
 * CPU's last update either, but estimates it when that CPU was idle (migrate_se_pelt_lag());
 * a task back from another class is attached without aging its averages (ATTACH_AGE_LOAD).
 */
static __always_inline void attach_entity_load_avg(struct task_ctx *tctx, s32 cpu)
{
	struct cpu_pelt *c = &cpu_pelts[CPU_IDX(cpu)];
	struct sis_sched_avg *se = &tctx->avg;
	u64 div = get_pelt_divider(&c->avg), w = tctx->pelt_weight ?: 1;

	if (tctx->pelt_new) {
		post_init_entity_util_avg(tctx, c);
		tctx->pelt_new = false;
	}
	se->last_update_time = c->avg.last_update_time;
	se->period_contrib = c->avg.period_contrib;
	se->util_sum = se->util_avg * div;
	se->runnable_sum = se->runnable_avg * div;
	se->load_sum = se->load_avg * div;
	se->load_sum = w < se->load_sum ? se->load_sum / w : 1;
	c->avg.load_avg += se->load_avg;
	c->avg.load_sum += w * se->load_sum;
	c->avg.util_avg += se->util_avg;
	c->avg.util_sum += se->util_sum;
	c->avg.runnable_avg += se->runnable_avg;
	c->avg.runnable_sum += se->runnable_sum;
	if (tctx->pelt_runnable) {
		c->load_weight += tctx->pelt_weight;
		c->nr_runnable++;
	}
	se->cpu = cpu;
}

/*
 * migrate_task_rq_fair() as seen from the task's new CPU @cpu (rq locked): a task
 * whose sums are another CPU's moved (a wakeup elsewhere, a pull, the kernel's own
 * move) and is attached here, or is new to us.
 */
static __always_inline void pelt_follow(struct task_ctx *tctx, s32 cpu, u64 now)
{
	if (tctx->avg.cpu == (u32)cpu)
		return;
	remove_entity_load_avg(tctx);
	update_cfs_rq_load_avg(&cpu_pelts[CPU_IDX(cpu)], now);
	attach_entity_load_avg(tctx, cpu);
}

/*
 * reweight_entity()'s PELT part: the task's load at a new weight, its CPU's sums with it.
 * differs: done when the task next becomes runnable (fair.c reweights a sleeper at once).
 */
static __always_inline void pelt_reweight(struct task_ctx *tctx, s32 cpu, u32 weight)
{
	struct cpu_pelt *c = &cpu_pelts[CPU_IDX(cpu)];
	struct sis_sched_avg *se = &tctx->avg;
	u64 div = get_pelt_divider(se);

	sub_signal(&c->avg.load_avg, &c->avg.load_sum, se->load_avg, tctx->pelt_weight * se->load_sum);
	if (tctx->pelt_runnable)
		c->load_weight = pelt_sub_positive(c->load_weight, tctx->pelt_weight) + weight;
	tctx->pelt_weight = weight;
	se->load_avg = (u64)weight * se->load_sum / div;
	c->avg.load_avg += se->load_avg;
	c->avg.load_sum += (u64)weight * se->load_sum;
}

/* update_load_avg() where each op begins: the task follows to @cpu, then both to @now. */
static __always_inline void pelt_sync(struct task_ctx *tctx, s32 cpu, u64 now)
{
	pelt_follow(tctx, cpu, now);
	update_load_avg(tctx, cpu, now);
}

/* enqueue_entity(): the task becomes runnable on @cpu at rq_clock_task() @now. */
static __always_inline void pelt_enqueue(struct task_struct *p, struct task_ctx *tctx, s32 cpu,
					 u64 now)
{
	u32 w = se_weight(p);

	pelt_sync(tctx, cpu, now);
	if (w != tctx->pelt_weight)
		pelt_reweight(tctx, cpu, w);
	if (!tctx->pelt_runnable) {
		struct cpu_pelt *c = &cpu_pelts[CPU_IDX(cpu)];

		tctx->pelt_runnable = true;
		c->load_weight += w;
		c->nr_runnable++;
	}
}

/* dequeue_entity(): the task sleeps (or leaves for an attribute change); its load stays. */
static __always_inline void pelt_dequeue(struct task_ctx *tctx, s32 cpu, u64 now)
{
	struct cpu_pelt *c = &cpu_pelts[CPU_IDX(cpu)];

	pelt_sync(tctx, cpu, now);
	/* a task that ran until now stops being curr after this update, not before */
	if (tctx->pelt_running) {
		tctx->pelt_running = false;
		c->curr = false;
	}
	if (!tctx->pelt_runnable)
		return;
	tctx->pelt_runnable = false;
	c->load_weight = pelt_sub_positive(c->load_weight, tctx->pelt_weight);
	if (c->nr_runnable)
		c->nr_runnable--;
}

/*
 * set_next_entity() (@running) and put_prev_entity() (!@running) of a task that stays
 * runnable; entity_tick() (same state). @now: @cpu's rq_clock_task(). A curr that sleeps
 * is left to pelt_dequeue(), as put_prev_entity() updates no load for a dequeued prev.
 */
static __always_inline void pelt_set_curr(struct task_ctx *tctx, s32 cpu, bool running, u64 now)
{
	pelt_sync(tctx, cpu, now);
	tctx->pelt_running = running;
	cpu_pelts[CPU_IDX(cpu)].curr = running;
}

/* The task leaves us (exit, another class): task_dead_fair()'s remove_entity_load_avg(). */
static __always_inline void pelt_detach(struct task_ctx *tctx)
{
	remove_entity_load_avg(tctx);
	tctx->pelt_runnable = false;
	tctx->pelt_running = false;
}

/*
 * init_entity_runnable_average() for a fork: load at full weight, util set at the first
 * attach; a task that was the kernel's keeps the averages fair.c kept for it.
 */
static __always_inline void pelt_init_task(struct task_struct *p, struct task_ctx *tctx,
					   bool fork)
{
	tctx->avg.cpu = PELT_NO_CPU;
	tctx->pelt_weight = se_weight(p);
	if (fork) {
		tctx->avg.load_avg = tctx->pelt_weight;
		tctx->pelt_new = true;
		return;
	}
	tctx->avg.load_avg = p->se.avg.load_avg;
	tctx->avg.runnable_avg = p->se.avg.runnable_avg;
	tctx->avg.util_avg = p->se.avg.util_avg;
}

/*
 * cpu_load(): the CPU's load_avg, blocked load included, as last updated (fair.c's read).
 * differs: nothing refreshes an idle CPU's blocked load (fair.c's update_blocked_averages()
 * from the nohz balancer); WA_WEIGHT reads it only for CPUs WA_IDLE found busy.
 */
static __always_inline u64 cpu_load(s32 cpu)
{
	return READ_ONCE(cpu_pelts[CPU_IDX(cpu)].avg.load_avg);
}

/*
 * cpu_util_cfs() for SIS_UTIL: util_avg as last updated, decayed over the time since
 * the CPU went idle (@now, scx_bpf_now()'s clock: the blocked util that fair.c's nohz
 * balancer decays on idle CPUs). differs: no UTIL_EST term; between a wakeup's
 * enqueue and its running the idle time is decayed twice (over-decayed, briefly).
 */
static __always_inline u64 cpu_util_cfs(s32 cpu, u64 now)
{
	u64 util = READ_ONCE(cpu_pelts[CPU_IDX(cpu)].avg.util_avg);
	u64 idle = READ_ONCE(cpu_ctxs[CPU_IDX(cpu)].idle_stamp);

	if (idle && now > idle)
		util = decay_load(util, (now - idle) >> 20);
	return util < CAPACITY_SCALE ? util : CAPACITY_SCALE;
}
