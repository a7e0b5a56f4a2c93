/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: the queueing around the search, standing in for fair.c's runqueues and
 * balancing: the per-CPU queues (in deadline order, see eevdf.bpf.h), newidle pulls,
 * the nohz kick, and the IDLE_KICK habit.
 */

/* Kick one idle CPU of @cpu's LLC (else any) so the shared DSQ gets consumed. */
static __always_inline void kick_idle_in_llc(struct task_struct *p, s32 cpu, bool count)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 found = claim_in_llc(p, cpu_llc[CPU_IDX(cpu)], idle, false);

	scx_bpf_put_idle_cpumask(idle);
	/* none idle in the LLC: wake any idle CPU, it will steal */
	if (found < 0)
		found = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (found >= 0) {
		WRITE_ONCE(cpu_ctxs[CPU_IDX(found)].pull_kick, 1);
		scx_bpf_kick_cpu(found, SCX_KICK_IDLE);
		if (count)
			stat_inc(STAT_IDLE_KICK);
	}
}

/* A higher class took @cpu from @p: an idle CPU of the LLC is woken to pull it (reenq). */
static __always_inline void wake_puller(struct task_struct *p, s32 cpu)
{
	if (bound_to_cpu(p))
		return;
	stat_inc(STAT_REENQ);
	kick_idle_in_llc(p, cpu, false);
}

/*
 * Is the CPU queue's head due before the LLC shared queue's? The CPU queue is keyed by
 * deadline on this rq's clock, the shared one by deadline relative to its rq's V.
 */
static __always_inline bool cpu_dsq_first(s32 cpu, u64 cpu_dsq, u64 llc_dsq)
{
	struct task_struct *a = __COMPAT_scx_bpf_dsq_peek(cpu_dsq);
	struct task_struct *b = __COMPAT_scx_bpf_dsq_peek(llc_dsq);

	if (!a)
		return false;
	return !b || !time_after(rel_key(a->scx.dsq_vtime, cpu), b->scx.dsq_vtime);
}

/*
 * fair.c's rd->overloaded, kept per LLC: set when ops.enqueue queues a task on a CPU
 * of the LLC or on its shared DSQ; a balance clears it before it looks (a full barrier)
 * and sets it again when it saw a task still waiting. A hint, not a guarantee: the
 * kernel commits ops.enqueue's insert after the program returns, so a balance between
 * our set and that insert finds the queue empty and leaves the hint clear over a
 * queued task. Hence only the pulls from other CPUs' queues rest on it (such a task is
 * pulled late, never lost: its tick sets the hint again, sis_tick); a CPU's own queue
 * and its LLC's shared one are read whatever the hint says (own_queues), as a pinned
 * task there has no other CPU to be pulled by. The write is unconditional: a test
 * first could lose it to a concurrent clear.
 */
static __always_inline void set_overloaded(s32 cpu)
{
	if (known_cpu(cpu))
		WRITE_ONCE(llc_ctxs[LLC_IDX(cpu_llc[CPU_IDX(cpu)])].overloaded, 1);
	else
		WRITE_ONCE(orphans_queued, 1);
}

static __always_inline void clear_overloaded(u32 *hint)
{
	__sync_fetch_and_and(hint, 0);
}

/* The SMT level of sched_balance_newidle(): a sibling's waiting task. */
static __always_inline bool pull_from_core(s32 self)
{
	u32 i;

	bpf_for(i, 0, nr_siblings(self)) {
		s32 sib = sibling(self, i);

		if (sib != self && detach_one(sib, self, SD_LVL_SMT))
			return true;
	}
	return false;
}

#define PULL_TAKEN	1	/* pull_from_llc(): a task was taken */
#define PULL_WAITING	2	/* some CPU queue of the LLC other than @self's held a task */

/*
 * One level of sched_balance_newidle() over LLC @llc (@lvl: @self's own LLC, one of
 * its node, or further): the busiest CPU queue first (find_busiest_queue()), then any
 * other whose waiting tasks may move here (can_migrate_task()). Global, as the
 * readers are: the verifier checks it once, not in every pass of its callers' loops.
 * differs: "busiest" is the most tasks waiting, not the highest weighted load.
 */
__noinline int pull_from_llc(u32 llc, s32 self, u32 lvl)
{
	u32 off = llc_off[LLC_IDX(llc)], nr = llc_nr[LLC_IDX(llc)], i;
	s32 busiest = -1, most = 0;

	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)], q;

		if (c == self)
			continue;
		q = cpu_dsq_nr_queued(c);
		if (q > most) {
			most = q;
			busiest = c;
		}
	}
	if (busiest < 0)
		return 0;
	if (detach_one(busiest, self, lvl))
		return PULL_TAKEN | PULL_WAITING;
	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)];

		if (c != self && c != busiest && detach_one(c, self, lvl))
			return PULL_TAKEN | PULL_WAITING;
	}
	return PULL_WAITING;
}

/* The first CPU in @idle and @allowed other than @self, in LLC @llc or (NO_LLC) anywhere. */
static __always_inline s32 first_idle(const struct cpumask *idle, const struct cpumask *allowed_mask,
				      u32 llc, s32 self)
{
	u32 words = (nr_cpu_ids + 63) / 64;
	s32 found = -1;
	int w;

#pragma unroll
	for (w = 0; w < MAX_CPUS / 64; w++) {
		u64 m;

		if (w >= words)
			break;
		m = idle->bits[w] & allowed_mask->bits[w];
		if (llc != NO_LLC)
			m &= llc_mask[LLC_IDX(llc)][w];
		if (self / 64 == w)
			m &= ~(1ULL << (self & 63));
		if (found < 0 && m)
			found = w * 64 + __builtin_ctzll(m);
	}
	return found;
}

/*
 * nohz_balancer_kick()'s nr_busy_cpus > 1 case, from the tick of a busy CPU with nothing
 * waiting: with two or more CPUs of its LLC busy, wake an idle CPU to run the idle
 * balance, at most once per nohz.next_balance.
 * differs: the kicked CPU balances for itself, not for every idle CPU (find_new_ilb()'s
 * first idle CPU), so it is the first CPU of an idle core in this LLC, else anywhere,
 * else the first idle CPU: the one should_we_balance() would let balance there.
 */
static __always_inline void nohz_balancer_kick(s32 cpu)
{
	u32 words = (nr_cpu_ids + 63) / 64, llc, idle_nr = 0;
	const struct cpumask *idle, *smt;
	u64 now = scx_bpf_now();
	s32 ilb;
	int w;

	if (!known_cpu(cpu) || (s64)(now - READ_ONCE(nohz_next_balance)) < 0)
		return;
	llc = LLC_IDX(cpu_llc[CPU_IDX(cpu)]);
	idle = scx_bpf_get_idle_cpumask();
#pragma unroll
	for (w = 0; w < MAX_CPUS / 64; w++) {
		if (w >= words)
			break;
		idle_nr += __builtin_popcountll(idle->bits[w] & llc_mask[llc][w]);
	}
	/* the busy count first, as fair.c decides to kick before find_new_ilb() */
	if (llc_nr[llc] < idle_nr + 2) {
		scx_bpf_put_idle_cpumask(idle);
		return;
	}
	smt = scx_bpf_get_idle_smtmask();
	ilb = first_idle(smt, smt, llc, cpu);
	if (ilb < 0)
		ilb = first_idle(smt, smt, NO_LLC, cpu);
	if (ilb < 0)
		ilb = first_idle(idle, idle, NO_LLC, cpu);
	scx_bpf_put_idle_cpumask(smt);
	scx_bpf_put_idle_cpumask(idle);
	if (ilb < 0)
		return;
	WRITE_ONCE(nohz_next_balance, now + tick_ns);
	WRITE_ONCE(cpu_ctxs[CPU_IDX(ilb)].nohz_balance, 1);
	scx_bpf_kick_cpu(ilb, SCX_KICK_IDLE);
	stat_inc(STAT_NOHZ_KICK);
}

/*
 * The newidle balance of a CPU's own LLC: its own queue and the LLC's shared one, the
 * earlier deadline first, then (as the newidle walk allows) a sibling's queue, then the LLC's
 * busiest. The LLC's overloaded hint is cleared first and set again if a task was
 * taken (more may wait), any task was left waiting, or a level was not looked at.
 */
static __always_inline bool balance_own_llc(s32 cpu, u32 llc, u64 cpu_dsq, u64 llc_dsq,
					    bool known)
{
	u32 *hint = &llc_ctxs[LLC_IDX(llc)].overloaded;
	bool waiting = false, pulled = false, unseen = true;

	if (known)
		clear_overloaded(hint);
	if ((cpu_dsq_first(cpu, cpu_dsq, llc_dsq) && scx_bpf_dsq_move_to_local(cpu_dsq, 0)) ||
	    llc_dsq_move_to_local(llc_dsq) || scx_bpf_dsq_move_to_local(cpu_dsq, 0))
		goto found;
	ni_begin(cpu);
	if (!known)
		return false;
	if (ni_level(cpu, SD_LVL_SMT)) {
		pulled = pull_from_core(cpu);
		ni_done(cpu, SD_LVL_SMT, pulled);
	}
	/* the LLC level reads every queue of the LLC, the siblings' too */
	if (!pulled && ni_level(cpu, SD_LVL_LLC)) {
		int r = pull_from_llc(llc, cpu, SD_LVL_LLC);

		pulled = r & PULL_TAKEN;
		waiting = r & PULL_WAITING;
		ni_done(cpu, SD_LVL_LLC, pulled);
		unseen = false;
	}
	if (pulled) {
		ni_end(cpu);
		stat_inc(STAT_PULL);
		goto found;
	}
	/* our own queue is empty (we would have taken its head); the shared one may not be */
	if (waiting || unseen || llc_dsq_nr_queued(llc_dsq) > 0)
		WRITE_ONCE(*hint, 1);
	return false;
found:
	if (known)
		WRITE_ONCE(*hint, 1);
	return true;
}

/*
 * The LLC's hint clear: its queues should be empty, but the CPU's own queue and the
 * LLC's shared one (while their counts hold a task) are looked at anyway, so that no
 * task waits on its own CPU for a hint; one found there sets the hint again.
 * A @cpu_dsq of 0: the caller found the CPU's queue empty.
 */
static __always_inline bool own_queues(s32 cpu, u64 cpu_dsq, u64 llc_dsq)
{
	if ((cpu_dsq && scx_bpf_dsq_move_to_local(cpu_dsq, 0)) ||
	    llc_dsq_move_to_local(llc_dsq)) {
		set_overloaded(cpu);
		return true;
	}
	return false;
}

/* Another LLC's queues, for a CPU about to idle: its shared DSQ, then its busiest CPU's. */
__noinline bool balance_llc(u32 llc, s32 self, u32 lvl)
{
	u32 *hint = &llc_ctxs[LLC_IDX(llc)].overloaded;
	int r;

	clear_overloaded(hint);
	if (llc_dsq_move_to_local(LLC_DSQ_BASE + llc)) {
		WRITE_ONCE(*hint, 1);
		return true;
	}
	r = pull_from_llc(llc, self, lvl);
	if (r || llc_dsq_nr_queued(LLC_DSQ_BASE + llc) > 0)
		WRITE_ONCE(*hint, 1);
	return r & PULL_TAKEN;
}

/*
 * sched_balance_newidle() does nothing while rd->overloaded is clear: a CPU whose own
 * LLC has nothing waiting begins the walk only when another LLC's hint is set (any
 * LLC's, for a CPU the topology does not know).
 */
static __always_inline bool others_overloaded(u32 my_llc, bool known)
{
	u32 i;

	if (known && nr_llcs <= 1)
		return false;
	bpf_for(i, 0, nr_llcs) {
		if ((i != my_llc || !known) && READ_ONCE(llc_ctxs[LLC_IDX(i)].overloaded))
			return true;
	}
	return false;
}

/* Another LLC's hint made true: cleared, and set again if a task waits there. */
__noinline bool llc_waiting(u32 llc)
{
	u32 *hint = &llc_ctxs[LLC_IDX(llc)].overloaded, off = llc_off[LLC_IDX(llc)], i;

	clear_overloaded(hint);
	if (llc_dsq_nr_queued(LLC_DSQ_BASE + llc) > 0)
		goto found;
	bpf_for(i, 0, llc_nr[LLC_IDX(llc)]) {
		if (cpu_dsq_nr_queued(llc_cpus[CPU_IDX(off + i)]) > 0)
			goto found;
	}
	return false;
found:
	WRITE_ONCE(*hint, 1);
	return true;
}

/*
 * sched_balance_newidle()'s levels above the LLC, for a CPU whose walk goes on: the
 * other LLCs of its NUMA node, then the rest, each as the walk's budget and dice allow
 * and another node's as its NUMA imbalance does; an LLC's shared DSQ, then its busiest
 * CPU's queue. True when a task was taken (the walk is then over).
 */
static __always_inline bool newidle_other_llcs(s32 cpu, u32 my_llc, u32 my_node)
{
	u32 i, pass;

	bpf_for(pass, 0, 2) {
		u32 lvl = pass ? SD_LVL_SYS : SD_LVL_NODE;
		bool pulled = false, asked = false;

		if (!ni_level(cpu, lvl))
			continue;
		bpf_for(i, 0, nr_llcs) {
			if (i == my_llc || (llc_node[LLC_IDX(i)] == my_node) != (pass == 0))
				continue;
			if (!READ_ONCE(llc_ctxs[LLC_IDX(i)].overloaded))
				continue;
			/* a task waits on another node: calculate_imbalance() says if we take it */
			if (pass && !asked) {
				if (!llc_waiting(i))
					continue;
				asked = true;
				if (!numa_newidle_allows(cpu))
					break;
			}
			if (balance_llc(i, cpu, lvl)) {
				pulled = true;
				break;
			}
		}
		ni_done(cpu, lvl, pulled);
		if (pulled) {
			ni_end(cpu);
			stat_inc(STAT_STEAL);
			if (pass)
				stat_inc(STAT_STEAL_REMOTE);
			return true;
		}
	}
	return false;
}

/* The orphan DSQ, with its own hint kept as an LLC's. */
static __always_inline bool balance_orphans(void)
{
	clear_overloaded(&orphans_queued);
	if (scx_bpf_dsq_move_to_local(ORPHAN_DSQ, 0)) {
		WRITE_ONCE(orphans_queued, 1);
		return true;
	}
	if (scx_bpf_dsq_nr_queued(ORPHAN_DSQ) > 0)
		WRITE_ONCE(orphans_queued, 1);
	return false;
}
