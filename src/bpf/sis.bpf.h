/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: the fair.c port. select_idle_sibling() and the functions it calls, the
 * fork slow path, wake_affine_idle(), the has_idle_cores hint and SIS_UTIL's scan
 * bound, top to bottom in fair.c's order of use. Included by main.bpf.c after the
 * topology, the maps and the helpers these read.
 */

/*
 * Claim an idle CPU for this wakeup. Always the last test of a check: it clears
 * the CPU's idle bit, so a second waker cannot stack on it. differs: fair.c never
 * claims, which lets two wakers pick the same idle CPU.
 */
static __always_inline bool claim(s32 cpu)
{
	if (scx_bpf_test_and_clear_cpu_idle(cpu))
		return true;
	stat_inc(STAT_LOST_CLAIM);
	return false;
}

/*
 * choose_idle_cpu(): an idle CPU, claimed; or, for a wakee not SCHED_IDLE itself, a CPU
 * whose rq runs only SCHED_IDLE tasks (select_cpu then preempts them at once).
 */
static __always_inline bool choose_idle_cpu(struct task_struct *p, const struct cpumask *idle,
					    s32 cpu)
{
	if (available_idle_cpu(idle, cpu))
		return claim(cpu);
	return !task_has_idle_policy(p) && sched_idle_cpu(cpu);
}

/*
 * The first CPU of LLC @llc that @p may use and @mask (an idle mask) holds, claimed;
 * -1 if none. @count_lost: a lost claim is a placement's (counted), not a kick's.
 */
static __always_inline s32 claim_in_llc(struct task_struct *p, u32 llc,
					const struct cpumask *mask, bool count_lost)
{
	u32 off = llc_off[LLC_IDX(llc)], nr = llc_nr[LLC_IDX(llc)], i;

	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)];

		if (!allowed(p, c) || !test_cpu(mask, c))
			continue;
		if (count_lost ? claim(c) : scx_bpf_test_and_clear_cpu_idle(c))
			return c;
	}
	return -1;
}

/* test_idle_cores(); IDLE_CORE off means the hint is never consulted. */
static __always_inline bool test_idle_cores(struct sis_ctl *feats, s32 cpu)
{
	if (!feat(feats, FEAT_IDLE_CORE))
		return false;
	return llc_ctxs[LLC_IDX(cpu_llc[CPU_IDX(cpu)])].has_idle_cores;
}

/* set_idle_cores() */
static __always_inline void set_idle_cores(s32 cpu, u32 val)
{
	struct llc_ctx *llc = &llc_ctxs[LLC_IDX(cpu_llc[CPU_IDX(cpu)])];

	if (val && !llc->has_idle_cores)
		stat_inc(STAT_HINT_SET);
	if (llc->has_idle_cores != val)
		WRITE_ONCE(llc->has_idle_cores, val);
}

/*
 * select_idle_core(): @cpu's whole core idle → @cpu; else remember the first idle
 * allowed sibling in *idle_cpu.
 */
static __always_inline s32 select_idle_core(struct task_struct *p, const struct cpumask *idle,
					    s32 cpu, s32 *idle_cpu, u32 *scanned)
{
	bool all_idle = true;
	u32 i;

	bpf_for(i, 0, nr_siblings(cpu)) {
		s32 sib = sibling(cpu, i);

		(*scanned)++;
		if (!available_idle_cpu(idle, sib)) {
			all_idle = false;
			/* choose_sched_idle_rq(): never a whole idle core, but the fallback */
			if (*idle_cpu < 0 && allowed(p, sib) && !task_has_idle_policy(p) &&
			    sched_idle_cpu(sib)) {
				*idle_cpu = sib;
				break;
			}
			if (*idle_cpu >= 0)
				break;
			continue;
		}
		if (*idle_cpu < 0 && allowed(p, sib))
			*idle_cpu = sib;
	}
	if (all_idle && claim(cpu))
		return cpu;
	return -1;
}

/* select_idle_smt(): an idle, allowed sibling of @target inside the LLC. */
static __always_inline s32 select_idle_smt(struct task_struct *p, const struct cpumask *idle,
					   s32 target, u32 *scanned)
{
	u32 i;

	bpf_for(i, 0, nr_siblings(target)) {
		s32 sib = sibling(target, i);

		if (sib == target || !allowed(p, sib) || !cpus_share_cache(sib, target))
			continue;
		(*scanned)++;
		if (choose_idle_cpu(p, idle, sib))
			return sib;
	}
	return -1;
}

/* update_avg() of core.c: an average with weight 1/8 for the new sample */
static __always_inline void update_avg(u64 *avg, u64 sample)
{
	s64 diff = sample - *avg;

	*avg += diff >> 3;
}

/*
 * The idle-time averages SIS_AVG_CPU and SIS_PROP read. sched_balance_newidle() stamps
 * idle_stamp when it pulls nothing (see newidle_failed); ttwu_do_activate() folds the
 * idle period into avg_idle with update_avg(), capped at twice max_idle_balance_cost,
 * and wake_avg_idle restarts at half of avg_idle.
 * differs: the period ends when a task of ours starts running on the CPU, not at the
 * first wakeup activated on its rq.
 */
static __always_inline void end_idle(struct cpu_ctx *rq, u64 now)
{
	if (now > rq->idle_stamp)
		update_avg(&rq->avg_idle, now - rq->idle_stamp);
	if (rq->avg_idle > 2 * rq->max_idle_balance_cost)
		rq->avg_idle = 2 * rq->max_idle_balance_cost;
	rq->wake_avg_idle = rq->avg_idle / 2;
	rq->wake_stamp = bpf_jiffies64();
	rq->idle_stamp = 0;
}

/*
 * The scan bounds before SIS_UTIL, on the waking CPU's rq (this_rq) and its own
 * sd_llc's avg_scan_cost, as select_idle_cpu() had them:
 * SIS_AVG_CPU (4.13 to 5.11): no walk when avg_idle / 512 < avg_scan_cost + 1;
 * SIS_PROP (its last form, 5.13 to 6.6): walk span_weight * wake_avg_idle /
 * (avg_scan_cost + 1) CPUs, at least 4, wake_avg_idle halved for each jiffy since
 * this CPU last left idle. Returns false when SIS_AVG_CPU skips the walk.
 * differs: 4.13 to 5.11 had SIS_AVG_CPU beside an older SIS_PROP (avg_idle / 512), not
 * this wake_avg_idle form (5.13 on, SIS_AVG_CPU gone); with both on, both apply.
 */
static __always_inline bool sis_prop_limit(struct cpu_ctx *rq, u32 span_weight,
					   struct sis_ctl *feats)
{
	u64 avg_cost = rq->avg_scan_cost + 1, now, span_avg, nr = SIS_PROP_MIN_NR;
	u32 i;

	if (feat(feats, FEAT_SIS_AVG_CPU) && rq->avg_idle / SIS_AVG_CPU_DIV < avg_cost) {
		stat_inc(STAT_SIS_AVG_CPU_CUT);
		return false;
	}
	if (!feat(feats, FEAT_SIS_PROP))
		return true;
	/* a busy CPU's last idle period predicts nothing: age it away */
	now = bpf_jiffies64();
	bpf_for(i, 0, 64) {
		if (rq->wake_stamp >= now || !rq->wake_avg_idle)
			break;
		rq->wake_stamp++;
		rq->wake_avg_idle >>= 1;
	}
	span_avg = (u64)span_weight * rq->wake_avg_idle;
	if (span_avg > SIS_PROP_MIN_NR * avg_cost)
		nr = span_avg / avg_cost < MAX_CPUS ? span_avg / avg_cost : MAX_CPUS;
	WRITE_ONCE(rq->scan_nr, nr);
	WRITE_ONCE(rq->scan_cut, STAT_SIS_PROP_CUT);
	return true;
}

/* After a timed walk: avg_scan_cost learns its cost, wake_avg_idle pays for it. */
static __always_inline void account_scan(struct cpu_ctx *rq)
{
	u64 start = READ_ONCE(rq->scan_start), time;

	if (!start)
		return;
	time = bpf_ktime_get_ns() - start;
	rq->wake_avg_idle -= rq->wake_avg_idle < time ? rq->wake_avg_idle : time;
	update_avg(&rq->avg_scan_cost, time);
	stat_inc(STAT_SCAN_TIMED);
	stat_add(STAT_SCAN_NS, time);
}

/* select_idle_cpu()'s cores already tested, per running CPU: off select_cpu's stack. */
u64 sis_seen_cores[MAX_CPUS][MAX_CPUS / 64];

/*
 * select_idle_cpu(): walk target's LLC from target + 1, wrapping. With the idle-core
 * hint look for a whole idle core (unbounded, as in fair.c); without it test single
 * CPUs, at most as many as the bounds that are on allow: SIS_AVG_CPU and SIS_PROP
 * (earlier kernels, off by default), then SIS_UTIL, which overrides SIS_PROP's count
 * as it did in 5.20 to 6.6. All three off: the unbounded walk of 2016 (`masterx`).
 */
static __always_inline s32 select_idle_cpu(struct task_struct *p, const struct cpumask *idle,
					   bool has_idle_core, s32 target, u32 *step, u32 *scanned,
					   struct sis_ctl *feats)
{
	u32 llc = LLC_IDX(cpu_llc[CPU_IDX(target)]);
	u32 off = llc_off[llc], nr_llc = llc_nr[llc], pos = cpu_llc_pos[CPU_IDX(target)];
	u64 *seen_cores = sis_seen_cores[CPU_IDX(bpf_get_smp_processor_id())];
	struct cpu_ctx *this_rq = &cpu_ctxs[CPU_IDX(bpf_get_smp_processor_id())];
	s32 idle_cpu = -1;
	int nr;
	u32 i;

	if (!known_cpu(target))
		return -1;
	stat_inc(STAT_SCAN_CALLS);
	WRITE_ONCE(this_rq->scan_nr, MAX_CPUS);
	WRITE_ONCE(this_rq->scan_cut, STAT_SIS_UTIL_CUT);
	WRITE_ONCE(this_rq->scan_start, 0);
	if (!has_idle_core && (feat(feats, FEAT_SIS_AVG_CPU) || feat(feats, FEAT_SIS_PROP))) {
		if (!sis_prop_limit(this_rq, nr_llc, feats))
			return -1;
		WRITE_ONCE(this_rq->scan_start, bpf_ktime_get_ns());
	}
	if (feat(feats, FEAT_SIS_UTIL)) {
		/* because !--nr is the condition to stop the scan */
		nr = llc_ctxs[llc].nr_idle_scan + 1;
		/* an overloaded LLC is unlikely to have an idle CPU or core */
		if (nr == 1) {
			stat_inc(STAT_SIS_UTIL_CUT);
			return -1;
		}
		WRITE_ONCE(this_rq->scan_nr, nr);
		WRITE_ONCE(this_rq->scan_cut, STAT_SIS_UTIL_CUT);
	}
	nr = READ_ONCE(this_rq->scan_nr);
	if (has_idle_core)
		__builtin_memset(seen_cores, 0, sizeof(sis_seen_cores[0]));

	bpf_for(i, 1, nr_llc + 1) {
		s32 cpu = llc_cpus[CPU_IDX(off + (pos + i) % nr_llc)];

		if (!allowed(p, cpu))
			continue;
		if (has_idle_core) {
			u32 core = CPU_IDX(cpu_core[CPU_IDX(cpu)]);
			u64 bit = 1ULL << (core & 63);

			/* differs: fair.c clears the core from a cpumask copy; we mark it seen. */
			if (seen_cores[core / 64] & bit)
				continue;
			seen_cores[core / 64] |= bit;
			if (select_idle_core(p, idle, cpu, &idle_cpu, scanned) >= 0) {
				stat_inc(STAT_HINT_TRUE);
				*step = STAT_IDLE_CORE;
				return cpu;
			}
		} else {
			/* a cut walk returns unaccounted, as in fair.c */
			if (--nr <= 0) {
				stat_inc(READ_ONCE(this_rq->scan_cut));
				return -1;
			}
			(*scanned)++;
			if (choose_idle_cpu(p, idle, cpu)) {
				idle_cpu = cpu;
				break;
			}
		}
	}

	if (has_idle_core) {
		/* a full core scan failed: the hint was wrong */
		stat_inc(STAT_HINT_FALSE);
		set_idle_cores(target, 0);
		if (idle_cpu >= 0 && !choose_idle_cpu(p, idle, idle_cpu))
			idle_cpu = -1;
	}
	/* differs: timed only while a bound reads it (fair.c 4.13 to 5.12 timed every walk) */
	account_scan(this_rq);
	return idle_cpu;
}

#ifndef PF_EXITING
#define PF_EXITING 0x00000004	/* include/linux/sched.h */
#endif

/* fair.c's `current->flags & PF_EXITING` test of the waker */
static __always_inline bool waker_exiting(void)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	return cur && (cur->flags & PF_EXITING);
}

#include "preempt.h"

/* The x86 preempt count (per CPU since 6.15: every kernel we load on; a long since 7.3). */
extern const int __preempt_count __ksym __weak;
/* Defined from 7.3 on, whose count has HARDIRQ_DISABLE_BITS below the hard irq bits. */
extern unsigned long local_interrupt_disable_state __ksym __weak;

/*
 * in_task(): not in NMI, hard irq or softirq processing, in either layout (preempt.h).
 * differs: false where the kernel has no per-CPU __preempt_count; on PREEMPT_RT a
 * softirq served in task context counts as a task (its count lives in the task there).
 */
static __always_inline bool in_task(void)
{
	if (!bpf_ksym_exists(&__preempt_count))
		return false;
	return pc_in_task(*(const u32 *)bpf_this_cpu_ptr(&__preempt_count),
			  bpf_ksym_exists(&local_interrupt_disable_state));
}

/* is_per_cpu_kthread(): a kernel thread bound to one CPU. */
static __always_inline bool is_per_cpu_kthread(struct task_struct *p)
{
	return (p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1;
}

/* rq->nr_running of @cpu, every class's tasks, read without its lock as fair.c reads it. */
static __always_inline u32 rq_nr_running(s32 cpu)
{
	struct rq *rq = bpf_per_cpu_ptr(&runqueues, cpu);

	return rq ? rq->nr_running : 0;
}

/*
 * capacity_of(). differs: the CPU's full capacity, without what RT, deadline and irq
 * time take: with every task ours the kernel stops updating rq->cpu_capacity.
 */
static __always_inline u64 capacity_of(s32 cpu)
{
	u32 cap = scx_bpf_cpuperf_cap(cpu);

	return cap ? cap : CAPACITY_SCALE;
}

/*
 * The imbalance_pct of the lowest domain spanning both CPUs, as sd_init() sets it:
 * 110 for SMT siblings, 117 above.
 */
static __always_inline u64 imbalance_pct(s32 a, s32 b)
{
	bool siblings = smt_enabled && cpu_core[CPU_IDX(a)] == cpu_core[CPU_IDX(b)];

	return siblings ? 110 : SIS_IMBALANCE_PCT;
}

/*
 * record_wakee(): the waker (current) counts a flip whenever it wakes another task than
 * last time, halved once a second (HZ jiffies); returns the waker's context, if ours.
 * differs: last_wakee is a pid, not a task pointer; a waker not ours (the idle task
 * of an irq wakeup) keeps no flips, so its wakeups are never wide.
 */
static __always_inline struct task_ctx *record_wakee(struct task_struct *p)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct task_ctx *w = cur ? bpf_task_storage_get(&task_ctxs, cur, 0, 0) : NULL;
	u64 now = bpf_jiffies64(), hz = tick_ns ? 1000000000ULL / tick_ns : 250;

	if (!w)
		return NULL;
	if (time_after(now, w->wakee_flip_decay_ts + hz)) {
		w->wakee_flips >>= 1;
		w->wakee_flip_decay_ts = now;
	}
	if (w->last_wakee != (u64)p->pid) {
		w->last_wakee = p->pid;
		w->wakee_flips++;
	}
	return w;
}

/*
 * wake_wide(): a waker and wakee that switch partners more often than the LLC has CPUs
 * (one of them at least LLC-size times the other) are a 1:N pattern: spread, do not
 * pull the wakee to the waker.
 */
static __always_inline bool wake_wide(struct task_ctx *tctx, struct task_ctx *waker, s32 this_cpu)
{
	u32 master = waker ? waker->wakee_flips : 0, slave = tctx->wakee_flips, t;
	u32 factor = known_cpu(this_cpu) ? llc_nr[LLC_IDX(cpu_llc[CPU_IDX(this_cpu)])] : 1;

	if (master < slave) {
		t = master;
		master = slave;
		slave = t;
	}
	return slave >= factor && master >= slave * factor;
}

/*
 * wake_affine_idle(): the waker's CPU when it is idle and shares the cache (prev if that
 * is idle too), or when a sync waker runs alone there; prev when it is idle; else -1.
 * differs: "alone" is rq->nr_running == 1, fair.c's less its delayed tasks: we have none.
 */
static __always_inline s32 wake_affine_idle(s32 this_cpu, s32 prev_cpu, bool sync,
					    const struct cpumask *idle)
{
	if (available_idle_cpu(idle, this_cpu) && cpus_share_cache(this_cpu, prev_cpu))
		return available_idle_cpu(idle, prev_cpu) ? prev_cpu : this_cpu;
	if (sync && rq_nr_running(this_cpu) == 1)
		return this_cpu;
	if (available_idle_cpu(idle, prev_cpu))
		return prev_cpu;
	return -1;
}

/*
 * wake_affine_weight(): the waker's CPU when its load with the wakee (less a sync waker's
 * own) is below prev's without it, each scaled by the other's capacity; WA_BIAS weighs
 * prev's by half the domain's imbalance_pct more. -1: prev.
 */
static __always_inline s32 wake_affine_weight(struct task_ctx *tctx, struct task_ctx *waker,
					      s32 this_cpu, s32 prev_cpu, bool sync,
					      struct sis_ctl *feats)
{
	s64 this_eff_load = cpu_load(this_cpu), prev_eff_load;
	s64 task_load = tctx->avg.load_avg;

	if (sync) {
		s64 current_load = waker ? waker->avg.load_avg : 0;

		if (current_load > this_eff_load)
			return this_cpu;
		this_eff_load -= current_load;
	}
	this_eff_load += task_load;
	if (feat(feats, FEAT_WA_BIAS))
		this_eff_load *= 100;
	this_eff_load *= capacity_of(prev_cpu);

	prev_eff_load = cpu_load(prev_cpu);
	prev_eff_load -= task_load;
	if (feat(feats, FEAT_WA_BIAS))
		prev_eff_load *= 100 + (imbalance_pct(this_cpu, prev_cpu) - 100) / 2;
	prev_eff_load *= capacity_of(this_cpu);
	/* a tie lets select_idle_sibling() consider stacking the wakee on the waker */
	if (sync)
		prev_eff_load += 1;
	return this_eff_load < prev_eff_load ? this_cpu : -1;
}

/*
 * Whether no SD_WAKE_AFFINE (nor SD_BALANCE_FORK) domain spans CPUs @a and @b: sd_init()
 * clears both on the NUMA levels beyond node_reclaim_distance.
 */
_Static_assert(MAX_NODES <= 64, "node_far holds one bit per node in a u64");

static __always_inline bool node_far_of(u32 na, u32 nb)
{
	return na != nb && ((node_far[na & (MAX_NODES - 1)] >> (nb & 63)) & 1);
}

static __always_inline bool nodes_far(s32 a, s32 b)
{
	return node_far_of(cpu_node[CPU_IDX(a)], cpu_node[CPU_IDX(b)]);
}

/*
 * wake_affine(): the waker's CPU or prev_cpu as select_idle_sibling()'s target, by
 * WA_IDLE, then WA_WEIGHT. WAKE_AFFINE off, or no SD_WAKE_AFFINE domain spanning both
 * CPUs: prev_cpu, as select_task_rq_fair() then has no affine domain.
 */
static __always_inline s32 wake_affine(struct task_struct *p, struct task_ctx *tctx,
				       struct task_ctx *waker, s32 prev_cpu, u64 wake_flags,
				       const struct cpumask *idle, struct sis_ctl *feats)
{
	s32 this_cpu = bpf_get_smp_processor_id(), target = -1;
	bool sync = (wake_flags & SCX_WAKE_SYNC) && !waker_exiting();

	if (!feat(feats, FEAT_WAKE_AFFINE) || this_cpu == prev_cpu || !allowed(p, this_cpu))
		return prev_cpu;
	if (nodes_far(this_cpu, prev_cpu)) {
		stat_inc(STAT_WAKE_FAR);
		return prev_cpu;
	}
	if (feat(feats, FEAT_WA_IDLE))
		target = wake_affine_idle(this_cpu, prev_cpu, sync, idle);
	if (feat(feats, FEAT_WA_WEIGHT) && target < 0) {
		target = wake_affine_weight(tctx, waker, this_cpu, prev_cpu, sync, feats);
		if (target == this_cpu)
			stat_inc(STAT_WA_WEIGHT);
	}
	return target == this_cpu ? this_cpu : prev_cpu;
}

/* Whether the step that placed a wakeup claimed its CPU (or preempts SCHED_IDLE work there). */
static __always_inline bool step_claims(u32 step)
{
	return step != STAT_FALLBACK && step != STAT_KTHREAD && step != STAT_CURRENT_CPU;
}

/*
 * select_task_rq_fair(): a wakeup flagged WF_CURRENT_CPU (wake_up_poll_on_current_cpu(),
 * complete_on_current_cpu(): seccomp's synchronous user notifications) goes to the
 * waker's CPU when the wakee may run there, before any other step. Unclaimed: that
 * CPU runs the waker, so the wakee waits on its queue.
 */
static __always_inline bool wake_current_cpu(struct task_struct *p, u64 wake_flags)
{
	return (wake_flags & SCX_WAKE_TTWU) && (wake_flags & WF_CURRENT_CPU) &&
	       allowed(p, bpf_get_smp_processor_id());
}

/* select_idle_sibling()'s per-CPU kthread test: the waker, on prev, is alone there. */
static __always_inline bool kthread_stack(struct task_struct *p, s32 prev)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	return cur && is_per_cpu_kthread(cur) && in_task() &&
	       prev == bpf_get_smp_processor_id() && rq_nr_running(prev) <= 1 &&
	       allowed(p, prev);
}

/* select_idle_sibling(), step by step; returns the CPU and the step that chose it. */
static __always_inline s32 select_idle_sibling(struct task_struct *p, struct task_ctx *tctx,
					       s32 prev, s32 target,
					       const struct cpumask *idle, u32 *step,
					       u32 *scanned, struct sis_ctl *feats)
{
	bool has_idle_core = false;
	s32 recent, i;

	*step = STAT_TARGET;
	if (allowed(p, target) && choose_idle_cpu(p, idle, target))
		return target;

	*step = STAT_PREV;
	if (prev != target && cpus_share_cache(prev, target) && allowed(p, prev) &&
	    choose_idle_cpu(p, idle, prev))
		return prev;

	/*
	 * A per-CPU kthread waking a task whose prev is its own CPU: the wakee queued work
	 * that is now complete, essentially a sync wakeup (IO completions). Stack on prev,
	 * unclaimed: the wakee waits on prev's queue.
	 * differs: no asym_fits_cpu() (no asymmetric capacity here); prev must be allowed
	 * (fair.c leaves a disallowed prev to select_fallback_rq()).
	 */
	*step = STAT_KTHREAD;
	if (kthread_stack(p, prev))
		return prev;

	*step = STAT_RECENT;
	recent = tctx->recent_used_cpu;
	tctx->recent_used_cpu = prev;
	if (feat(feats, FEAT_RECENT_USED) && recent != prev && recent != target &&
	    valid_cpu(recent) && cpus_share_cache(recent, target) &&
	    allowed(p, recent) && choose_idle_cpu(p, idle, recent))
		return recent;

	if (smt_enabled) {
		has_idle_core = test_idle_cores(feats, target);
		*step = STAT_IDLE_SMT;
		if (!has_idle_core && feat(feats, FEAT_IDLE_SMT) && cpus_share_cache(prev, target)) {
			i = select_idle_smt(p, idle, prev, scanned);
			if (i >= 0)
				return i;
		}
	}

	/* a core walk that finds no whole idle core may still return an idle CPU */
	*step = STAT_IDLE_CPU;
	i = select_idle_cpu(p, idle, has_idle_core, target, step, scanned, feats);
	if (i >= 0)
		return i;

	*step = STAT_FALLBACK;
	return target;
}

/* Scratch for the fork slow path: allowed idle CPUs per LLC and per node. */
struct idlest_scratch {
	u32 llc_idle[MAX_LLCS];
	u32 node_idle[MAX_NODES];
	u32 node_allowed[MAX_NODES];	/* the task's allowed CPUs per node */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct idlest_scratch);
} idlest_scratch SEC(".maps");

#define NODE_IDX(n) ((u32)(n) & (MAX_NODES - 1))

/*
 * update_sg_wakeup_stats()'s idle_cpus, for every LLC and node: allowed CPUs in the idle
 * mask; and the allowed CPUs of each node, for imb_numa_nr.
 */
static __always_inline void count_idle(struct task_struct *p, const struct cpumask *idle,
				       struct idlest_scratch *sc)
{
	const struct cpumask *allowed_mask = p->cpus_ptr;
	u32 words = (nr_cpu_ids + 63) / 64, llc, n;

	bpf_for(n, 0, MAX_NODES)
		sc->node_idle[NODE_IDX(n)] = sc->node_allowed[NODE_IDX(n)] = 0;
	bpf_for(llc, 0, nr_llcs) {
		u32 cnt = 0, allowed = 0;
		int w;

#pragma unroll
		for (w = 0; w < MAX_CPUS / 64; w++) {
			if (w >= words)
				break;
			cnt += __builtin_popcountll(llc_mask[LLC_IDX(llc)][w] &
						    allowed_mask->bits[w] & idle->bits[w]);
			allowed += __builtin_popcountll(llc_mask[LLC_IDX(llc)][w] &
							allowed_mask->bits[w]);
		}
		sc->llc_idle[LLC_IDX(llc)] = cnt;
		sc->node_idle[NODE_IDX(llc_node[LLC_IDX(llc)])] += cnt;
		sc->node_allowed[NODE_IDX(llc_node[LLC_IDX(llc)])] += allowed;
	}
}

/* The CPUs of node @node. */
static __always_inline u32 node_weight(u32 node)
{
	u32 w = 0, l;

	bpf_for(l, 0, nr_llcs)
		if (llc_node[LLC_IDX(l)] == node)
			w += llc_nr[LLC_IDX(l)];
	return w;
}

/* update_sg_wakeup_stats()'s sum_nr_running for node @node: its CPUs' tasks, every class. */
static __always_inline u32 node_nr_running(u32 node)
{
	u32 nr = 0, llc, i, off;

	bpf_for(llc, 0, nr_llcs) {
		if (llc_node[LLC_IDX(llc)] != node)
			continue;
		off = llc_off[LLC_IDX(llc)];
		bpf_for(i, 0, llc_nr[LLC_IDX(llc)])
			nr += rq_nr_running(llc_cpus[CPU_IDX(off + i)]);
	}
	return nr;
}

/*
 * sd->imb_numa_nr of the NUMA level over node @node, whose CPUs' LLC is @llc
 * (build_sched_domains()): the node's LLCs, or an eighth of the node when it is one
 * LLC; at least 1. The node level sits between, degenerate or not, on x86.
 * differs: one NUMA level (the kernel scales the figure by span on the wider ones).
 */
static __always_inline u32 imb_numa_nr(u32 node, u32 llc)
{
	u32 nw = node_weight(node), lw = llc_nr[LLC_IDX(llc)], imb;

	if (!lw || nw < lw)
		return 1;
	imb = nw / lw == 1 ? nw >> 3 : nw / lw;
	return imb ? imb : 1;
}

#define NUMA_IMBALANCE_MIN 2

/*
 * adjust_numa_imbalance(): an imbalance of at most NUMA_IMBALANCE_MIN tasks between
 * nodes is none while the destination runs at most @imb_numa_nr, so that a
 * communicating pair stays on one node.
 */
static __always_inline s64 adjust_numa_imbalance(s64 imbalance, u32 dst_running, u32 imb_nr)
{
	if (dst_running > imb_nr)
		return imbalance;
	return imbalance <= NUMA_IMBALANCE_MIN ? 0 : imbalance;
}

/*
 * sched_balance_find_dst_group()'s NUMA rule for a fork whose node has idle CPUs while
 * @best has more: stay when adjust_numa_imbalance() finds no imbalance, with
 * imb_numa_nr capped by the task's allowed CPUs on its node.
 */
static __always_inline bool numa_keep_local(struct idlest_scratch *sc, u32 my_node, u32 best,
					    u32 my_llc)
{
	u32 imb_nr = imb_numa_nr(my_node, my_llc);

	if (sc->node_allowed[my_node] < imb_nr)
		imb_nr = sc->node_allowed[my_node];
	return !adjust_numa_imbalance(sc->node_idle[best] - sc->node_idle[my_node],
				      node_nr_running(my_node) + 1, imb_nr);
}

/*
 * sched_balance_find_dst_group_cpu() inside the chosen LLC: a CPU of a wholly idle core
 * first (the SMT level prefers the core with the most idle CPUs), then any idle CPU; a
 * CPU running only SCHED_IDLE work comes after every idle one, as there.
 * differs: first in CPU order, not the shallowest idle state (a guest has none) or the
 * latest idle_stamp.
 */
static __always_inline s32 idlest_in_llc(struct task_struct *p, u32 llc)
{
	const struct cpumask *mask = scx_bpf_get_idle_smtmask();
	s32 found = claim_in_llc(p, llc, mask, true);

	scx_bpf_put_idle_cpumask(mask);
	if (found >= 0)
		return found;
	mask = scx_bpf_get_idle_cpumask();
	found = claim_in_llc(p, llc, mask, true);
	scx_bpf_put_idle_cpumask(mask);
	return found;
}

/*
 * select_task_rq_fair()'s slow path for fork, sched_balance_find_dst_cpu(): from the
 * top down, the node and then the LLC with the most idle CPUs, the parent's own when
 * it has at least as many (sched_balance_find_dst_group() keeps the local group on
 * ties), then an idle core and an idle CPU in that LLC; with nothing idle, the least
 * loaded CPU by the same walk on load. sched_ext never asks us on exec
 * (select_task_rq_scx() keeps an exec'ing task where it is).
 * The nodes beyond node_reclaim_distance of the parent's are out (no SD_BALANCE_FORK
 * domain spans them).
 * Between nodes, adjust_numa_imbalance() keeps a fork on its node while that node runs
 * few tasks (numa_keep_local()).
 * differs: while CPUs are idle, groups are compared by idle CPUs only (not load or
 * util); when the chosen LLC's idle CPUs went meanwhile, the other LLCs within reach
 * are searched in index order.
 */
__noinline s32 sched_balance_find_dst_group_sys(s32 cpu);
__noinline s32 sched_balance_find_dst_group_node(s32 cpu);
__noinline s32 sched_balance_find_dst_group_llc(s32 cpu);
__noinline s32 sched_balance_find_dst_group_smt(s32 cpu);

/* sched_balance_find_dst_cpu()'s walk on load (balance.bpf.h), from the top level down. */
static __always_inline s32 sched_balance_find_dst_cpu(s32 cpu)
{
	cpu = sched_balance_find_dst_group_sys(cpu);
	cpu = sched_balance_find_dst_group_node(cpu);
	cpu = sched_balance_find_dst_group_llc(cpu);
	return sched_balance_find_dst_group_smt(cpu);
}

static __always_inline s32 find_idlest_cpu(struct task_struct *p, s32 prev_cpu,
					   const struct cpumask *idle, u32 *step)
{
	struct idlest_scratch *sc;
	u32 zero = 0, my_llc, my_node, best_node, best_llc = NO_LLC, llc, n;
	s32 cpu;

	*step = STAT_IDLEST;
	sc = bpf_map_lookup_elem(&idlest_scratch, &zero);
	if (sc && known_cpu(prev_cpu)) {
		count_idle(p, idle, sc);
		my_llc = LLC_IDX(cpu_llc[CPU_IDX(prev_cpu)]);
		my_node = NODE_IDX(llc_node[my_llc]);
		best_node = my_node;
		bpf_for(n, 0, MAX_NODES) {
			if (node_far_of(my_node, n))
				continue;
			if (sc->node_idle[NODE_IDX(n)] > sc->node_idle[best_node])
				best_node = NODE_IDX(n);
		}
		if (best_node != my_node && sc->node_idle[my_node] &&
		    numa_keep_local(sc, my_node, best_node, my_llc)) {
			stat_inc(STAT_FORK_NUMA_LOCAL);
			best_node = my_node;
		}
		if (best_node == my_node)
			best_llc = my_llc;
		bpf_for(llc, 0, nr_llcs) {
			if (NODE_IDX(llc_node[LLC_IDX(llc)]) != best_node)
				continue;
			if (best_llc == NO_LLC ||
			    sc->llc_idle[LLC_IDX(llc)] > sc->llc_idle[LLC_IDX(best_llc)])
				best_llc = llc;
		}
		if (best_llc != NO_LLC && sc->llc_idle[LLC_IDX(best_llc)]) {
			cpu = idlest_in_llc(p, best_llc);
			if (cpu >= 0)
				return cpu;
		}
		/* the chosen LLC's idle CPUs were taken meanwhile: another LLC within reach */
		bpf_for(llc, 0, nr_llcs) {
			if (llc == best_llc || !sc->llc_idle[LLC_IDX(llc)] ||
			    node_far_of(my_node, llc_node[LLC_IDX(llc)]))
				continue;
			cpu = idlest_in_llc(p, llc);
			if (cpu >= 0)
				return cpu;
		}
		goto loaded;
	}
	/* prev is unknown: anywhere */
	if (smt_enabled) {
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, SCX_PICK_IDLE_CORE);
		if (cpu >= 0)
			return cpu;
	}
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0)
		return cpu;
loaded:
	*step = STAT_FALLBACK;
	cpu = sched_balance_find_dst_cpu(prev_cpu);
	if (cpu == prev_cpu || !valid_cpu(cpu) || !test_cpu(p->cpus_ptr, cpu))
		return prev_cpu;
	stat_inc(STAT_FORK_LOADED);
	return cpu;
}

/*
 * __update_idle_core(): a CPU going idle whose siblings are all idle sets the hint,
 * unless it is set already. The siblings are tested in the kernel's idle mask, which a
 * claim clears at once, as fair.c's available_idle_cpu() is false while a wakeup is on
 * its way (ttwu_pending); @cpu itself, about to idle, is not in the mask yet.
 */
static __always_inline void update_idle_core(s32 cpu)
{
	const struct cpumask *idle_mask;
	u32 i;

	if (!smt_enabled || !known_cpu(cpu) ||
	    READ_ONCE(llc_ctxs[LLC_IDX(cpu_llc[CPU_IDX(cpu)])].has_idle_cores))
		return;
	idle_mask = scx_bpf_get_idle_cpumask();
	bpf_for(i, 0, nr_siblings(cpu)) {
		s32 sib = sibling(cpu, i);

		if (sib != cpu && !available_idle_cpu(idle_mask, sib)) {
			scx_bpf_put_idle_cpumask(idle_mask);
			return;
		}
	}
	scx_bpf_put_idle_cpumask(idle_mask);
	set_idle_cores(cpu, 1);
}

/*
 * A CPU about to idle found nothing to pull: sched_balance_newidle() leaves idle_stamp
 * set, and pick_next_task_idle()'s set_next_task_idle() calls __update_idle_core().
 * differs: fair.c stamps before it balances; we stamp after, the same moment here.
 */
static __always_inline void newidle_failed(s32 cpu)
{
	if (!valid_cpu(cpu))
		return;
	cpu_ctxs[CPU_IDX(cpu)].idle_stamp = scx_bpf_now();
	update_idle_core(cpu);
}

/*
 * SIS_UTIL's update_idle_cpu_scan(): nr_idle_scan from LLC utilisation (PELT util).
 * differs: refreshed by a 25 ms timer, not by the LLC's periodic balance.
 */
static u32 nr_idle_scan(u64 sum_util, u32 llc_weight)
{
	u64 x, tmp, y;

	if (!llc_weight)
		return 0;
	x = sum_util / llc_weight;
	tmp = x * x * SIS_IMBALANCE_PCT * SIS_IMBALANCE_PCT / (10000 * CAPACITY_SCALE);
	if (tmp > CAPACITY_SCALE)
		tmp = CAPACITY_SCALE;
	y = CAPACITY_SCALE - tmp;
	return y * llc_weight / CAPACITY_SCALE;
}
