/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: EEVDF around the search, as fair.c orders a runqueue. Each CPU keeps the
 * sums avg_vruntime() reads over the tasks on its runqueue (its queue and curr);
 * place_entity() sets vruntime from the lag kept across sleep and migration and a
 * virtual deadline from the request; pick_eevdf() takes the earliest eligible deadline
 * of the CPU's queue (a DSQ in deadline order) and curr; wakeup_preempt_fair() decides
 * whether a wakee queued on a busy CPU preempts its curr.
 * differs: DELAY_DEQUEUE is emulated: sched_ext dequeues a sleeping task at once, so a
 * debt (negative lag) it sleeps with is paid down at wakeup by how far V of the rq it
 * left has moved since, never past zero (DELAY_ZERO); its weight leaves that rq at once,
 * and the wakeup goes through select_cpu (fair.c requeues a delayed task where it is).
 */

#define NICE_0_LOAD		1024
#define SCHED_BATCH		3	/* include/uapi/linux/sched.h */
#define SCHED_IDLE		5
#define LAG_KEY_MAX		(1LL << 40)	/* |vruntime - V| bound, far beyond any lag limit */
/*
 * More than V can move between two readings of it: the largest lag, a SCHED_IDLE
 * task's with a 100 ms request, is about 35 s of vruntime.
 */
#define V_JUMP_MAX		(1LL << 36)
/* differs: pick_eevdf() looks at the first 64 deadlines of a queue (fair.c: a heap search) */
#define PICK_SCAN_MAX		64

/*
 * A CPU's cfs_rq, the parts EEVDF reads (struct cfs_rq is the kernel's name). The sums count every task whose rq this is
 * (queued or curr), each as weight * vruntime taken when counted, modulo 2^64: a
 * difference of two such sums is exact, so the origin avg_vruntime() subtracts can be
 * any recent V (zero_vruntime) and no rebasing is needed. Updated with atomics: a CPU
 * that pulls a task takes it out of the sums of the CPU it came from. So a writer marks
 * its update, seq_begun before and seq_done after, and avg_sums() reads only sums no
 * update was under way in (a seqcount that allows many writers).
 */
struct sis_cfs_rq {
	u64 sum_w_vruntime;	/* sum of w * vruntime, mod 2^64 */
	u64 sum_weight;		/* sum of w */
	u64 zero_vruntime;	/* a recent V, the origin of the keys */
	u32 nr_queued;		/* tasks counted, curr included */
	u32 h_nr_idle;		/* ... of which SCHED_IDLE */
	u32 nr_custom;		/* ... with a custom slice (sched_attr.sched_runtime) */
	/* curr, from ops.running to ops.stopping; curr_weight 0: none of ours runs */
	u32 curr_weight;
	u32 curr_policy;
	u64 curr_vruntime;	/* its vruntime when it started (as counted in the sums) */
	u64 curr_clock;		/* rq->clock_task when it started */
	u64 curr_deadline;
	u64 curr_vprot;		/* se->vprot: protected up to this vruntime */
	u64 curr_slice;		/* se->slice */
	/*
	 * A queue walk's count, kept here: counted on the stack, the verifier would follow
	 * each of the PICK_SCAN_MAX iterations apart.
	 */
	u32 walked;
	u64 run_gen;		/* bumped at each ops.running: the HRTICK timer's run */
	u64 tick_stamp;		/* scx_bpf_now() at this CPU's last ops.tick */
	u64 seq_begun;		/* updates of the sums and curr begun */
	u64 seq_done;		/* ... and ended */
} __attribute__((aligned(64)));
struct sis_cfs_rq cfs_rqs[MAX_CPUS];

/* HRTICK: one timer per CPU, for the run it was armed for. */
struct hrtick_timer {
	struct bpf_timer timer;
	u64 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CPUS);
	__type(key, u32);
	__type(value, struct hrtick_timer);
} hrtick_timers SEC(".maps");

/* sched_prio_to_weight[]: nice -20 to 19, each step about 1.25x. */
static const u32 prio_to_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};
#define WEIGHT_IDLEPRIO		3

/*
 * set_load_weight()'s weight, scaled down: nice 0 is 1024, SCHED_IDLE 3. Taken from
 * the priority: for a sched_ext task the kernel updates p->scx.weight, not p->se.load.
 */
static __always_inline u32 se_weight(struct task_struct *p)
{
	u32 prio = (u32)p->static_prio - MAX_RT_PRIO;

	if (p->policy == SCHED_IDLE)
		return WEIGHT_IDLEPRIO;
	return prio < 40 ? prio_to_weight[prio] : NICE_0_LOAD;
}

static __always_inline bool task_has_idle_policy(struct task_struct *p)
{
	return p->policy == SCHED_IDLE;
}

/* normal_policy(): SCHED_NORMAL (SCHED_EXT counts as normal); not BATCH or IDLE */
static __always_inline bool normal_policy(struct task_struct *p)
{
	return p->policy != SCHED_BATCH && p->policy != SCHED_IDLE;
}

/* calc_delta_fair(): wall time to vruntime, delta * NICE_0_LOAD / w. */
static __always_inline u64 calc_delta_fair(u64 delta, u32 w)
{
	if (w == NICE_0_LOAD || !w)
		return delta;
	return delta * NICE_0_LOAD / w;
}

/* The inverse: vruntime to wall time. */
static __always_inline u64 calc_delta_wall(u64 vdelta, u32 w)
{
	if (w == NICE_0_LOAD)
		return vdelta;
	return vdelta * w / NICE_0_LOAD;
}

/* Signed division rounded down (BPF has no signed divide before v4). */
static __always_inline s64 div_floor(s64 n, u64 d)
{
	if (!d)
		return 0;
	if (n >= 0)
		return (s64)((u64)n / d);
	return -(s64)(((u64)-n + d - 1) / d);
}

/* The request: the task's custom slice, else the kernel's base slice. */
static __always_inline u64 task_slice(struct task_struct *p)
{
	return p->se.custom_slice && p->se.slice ? p->se.slice : slice_ns;
}

/* rq->clock_task of @cpu: the task clock, read under its rq lock or as last updated. */
static __always_inline u64 rq_clock_task(s32 cpu)
{
	struct rq *rq = bpf_per_cpu_ptr(&runqueues, cpu);

	return rq ? rq->clock_task : 0;
}

/*
 * rq_clock_task() of @cpu, and its rq_clock() in @clock, from one lookup. rq_clock() is
 * the rq's last update_rq_clock(), what scx_bpf_now() reads until the rq lock is
 * unpinned (as balancing does before ops.dispatch): right at an enqueue. For a CPU
 * with no rq (not one of ours), scx_bpf_now() stands for both.
 */
static __always_inline u64 rq_clocks(s32 cpu, u64 *clock)
{
	struct rq *rq = bpf_per_cpu_ptr(&runqueues, cpu);

	if (!rq) {
		*clock = scx_bpf_now();
		return *clock;
	}
	*clock = rq->clock;
	return rq->clock_task;
}

/* curr's weighted progress since it started, w * delta_vruntime = delta_exec * 1024. */
static __always_inline s64 curr_progress(struct sis_cfs_rq *rq, s32 cpu)
{
	u64 start = READ_ONCE(rq->curr_clock), now;

	if (!READ_ONCE(rq->curr_weight))
		return 0;
	now = rq_clock_task(cpu);
	return now > start ? (s64)((now - start) * NICE_0_LOAD) : 0;
}

/* curr's vruntime now, as update_curr() would make it. */
static __always_inline u64 curr_vruntime(struct sis_cfs_rq *rq, s32 cpu)
{
	return rq->curr_vruntime + calc_delta_fair(curr_progress(rq, cpu) / NICE_0_LOAD,
						   rq->curr_weight);
}

/* An update of @rq's sums or curr begins; avg_sums() does not read across it. */
static __always_inline void sums_write_begin(struct sis_cfs_rq *rq)
{
	__sync_fetch_and_add(&rq->seq_begun, 1);
}

/* ... and ends. */
static __always_inline void sums_write_end(struct sis_cfs_rq *rq)
{
	__sync_fetch_and_add(&rq->seq_done, 1);
}

#define RQ_NONE		-1	/* task_ctx.rq_cpu: counted nowhere (asleep, or not placed) */
#define RQ_MOVING	-2	/* ... a CPU is moving its count (rq_claim()) */

#define RQ_SETTLE_SPINS	1024

/*
 * @tctx's rq_cpu once no other CPU is moving its count: a move takes a microsecond or
 * two, with interrupts off; after RQ_SETTLE_SPINS reads, RQ_MOVING (the caller gives
 * way, counted).
 */
static __always_inline s32 rq_settled(struct task_ctx *tctx)
{
	s32 cur = READ_ONCE(tctx->rq_cpu);
	u32 i;

	/* the usual case, no move under way: no iterator set up */
	if (cur != RQ_MOVING)
		return cur;
	bpf_for(i, 0, RQ_SETTLE_SPINS) {
		if (cur != RQ_MOVING)
			break;
		cur = READ_ONCE(tctx->rq_cpu);
	}
	if (cur == RQ_MOVING)
		stat_inc(STAT_ACCT_RACE);
	return cur;
}

/*
 * Take @tctx's count, if it is still at @from (a CPU, or RQ_NONE, as rq_settled() read
 * it), to move it: one CPU at a time, so that a pull and the task's own CPU following
 * the same migration do not both take it out of the old sums. False: another CPU took
 * it first, and this update gives way. account_entity() lets go.
 * differs: fair.c's rq locks do this.
 */
static __always_inline bool rq_claim(struct task_ctx *tctx, s32 from)
{
	if (__sync_val_compare_and_swap(&tctx->rq_cpu, from, RQ_MOVING) == from)
		return true;
	stat_inc(STAT_ACCT_RACE);
	return false;
}

/*
 * sum_w_vruntime_add()/_sub(), with the counts pick and choose_idle_cpu() read, for a
 * task whose count this CPU holds (rq_claim()): it is let go at @cpu, or at RQ_NONE.
 */
static __always_inline void account_entity(s32 cpu, struct task_ctx *tctx, bool add)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	u64 wv = (u64)tctx->weight * tctx->vruntime;

	sums_write_begin(rq);
	if (add) {
		__sync_fetch_and_add(&rq->sum_w_vruntime, wv);
		__sync_fetch_and_add(&rq->sum_weight, tctx->weight);
		__sync_fetch_and_add(&rq->nr_queued, 1);
		if (tctx->idle_policy)
			__sync_fetch_and_add(&rq->h_nr_idle, 1);
		if (tctx->custom_slice)
			__sync_fetch_and_add(&rq->nr_custom, 1);
		sums_write_end(rq);
		WRITE_ONCE(tctx->rq_cpu, cpu);
		return;
	}
	__sync_fetch_and_sub(&rq->sum_w_vruntime, wv);
	__sync_fetch_and_sub(&rq->sum_weight, tctx->weight);
	__sync_fetch_and_sub(&rq->nr_queued, 1);
	if (tctx->idle_policy)
		__sync_fetch_and_sub(&rq->h_nr_idle, 1);
	if (tctx->custom_slice)
		__sync_fetch_and_sub(&rq->nr_custom, 1);
	sums_write_end(rq);
	WRITE_ONCE(tctx->rq_cpu, RQ_NONE);
}

#define SUMS_READ_TRIES		4

/*
 * The sums and load, curr's progress included: avg = sum w*(v - zero), load = sum w,
 * read between two updates. After SUMS_READ_TRIES reads that met one, avg is 0 (V is
 * zero_vruntime, a recent V).
 * differs: fair.c reads under the rq lock. A read torn by an update would be off by
 * w * vruntime whole, not by a lag: V would jump, and every task placed at it after.
 */
static __always_inline s64 avg_sums(struct sis_cfs_rq *rq, s32 cpu, u64 *load, u64 *zero)
{
	u64 begun, w, z, sum;
	s64 progress;
	u32 i;

	for (i = 0; i < SUMS_READ_TRIES; i++) {
		/* x86 keeps loads in order; the writers' atomics are full barriers */
		begun = READ_ONCE(rq->seq_done);
		if (READ_ONCE(rq->seq_begun) != begun)
			goto retry;
		w = READ_ONCE(rq->sum_weight);
		z = READ_ONCE(rq->zero_vruntime);
		sum = READ_ONCE(rq->sum_w_vruntime);
		progress = curr_progress(rq, cpu);
		if (READ_ONCE(rq->seq_begun) != begun)
			goto retry;
		*load = w;
		*zero = z;
		return (s64)(sum - z * w) + progress;
retry:
		stat_inc(STAT_SUMS_RETRY);
	}
	*load = READ_ONCE(rq->sum_weight);
	*zero = READ_ONCE(rq->zero_vruntime);
	return 0;
}

/*
 * avg_vruntime(): V, the weighted mean vruntime, rounded down (left bias). Global
 * functions here are verified once, not at each of their many call sites.
 */
__noinline u64 avg_vruntime(s32 cpu)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	u64 load, zero;
	s64 avg = avg_sums(rq, cpu, &load, &zero);

	if (!load)
		return zero;
	return zero + div_floor(avg, load);
}

/* vruntime_eligible(): lag >= 0, that is V >= v, tested without the division. */
__noinline bool vruntime_eligible(s32 cpu, u64 v)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	u64 load, zero;
	s64 avg = avg_sums(rq, cpu, &load, &zero), key = (s64)(v - zero);

	if (!load)
		return true;
	if (key > LAG_KEY_MAX)
		return false;
	if (key < -LAG_KEY_MAX)
		return true;
	return avg >= key * (s64)load;
}

/*
 * entity_lag(): V - v, clamped to the time the request and a tick take at this weight.
 * differs: the longest request of the rq is the task's own or the base slice, whichever
 * is longer (the rq's max_slice is not kept).
 */
static __always_inline s64 entity_lag(struct task_ctx *tctx, u64 avruntime)
{
	u64 max_slice = tctx->slice > slice_ns ? tctx->slice : slice_ns;
	s64 limit = (s64)calc_delta_fair(max_slice + tick_ns, tctx->weight);
	s64 vlag = (s64)(avruntime - tctx->vruntime);

	if (vlag > limit)
		return limit;
	if (vlag < -limit)
		return -limit;
	return vlag;
}

/*
 * DELAY_DEQUEUE and DELAY_ZERO, after the fact: a task that slept in debt would have
 * stayed queued, not eligible, until V passed its vruntime, and left with lag 0; if it
 * woke first, with what was left of the debt. @avruntime: V of @cpu, where it wakes.
 */
static __always_inline void delayed_lag(struct task_ctx *tctx, s32 cpu, u64 avruntime)
{
	s32 sleep_cpu = tctx->sleep_cpu;
	s64 paid;

	if (tctx->vlag >= 0 || !valid_cpu(sleep_cpu))
		return;
	paid = (s64)((sleep_cpu == cpu ? avruntime : avg_vruntime(sleep_cpu)) - tctx->sleep_v);
	if (paid <= 0)
		return;
	tctx->vlag = paid >= -tctx->vlag ? 0 : tctx->vlag + paid;
	stat_inc(STAT_DELAY_PAID);
}

/*
 * place_entity() and the accounting of enqueue_entity(): vruntime = V - lag, the lag
 * inflated by (W + w) / W so that adding the task moves V by no more than its lag
 * (PLACE_LAG); the deadline one request later, half one for a new task
 * (PLACE_DEADLINE_INITIAL), or the relative deadline it kept (PLACE_REL_DEADLINE).
 */
static __always_inline void place_entity(struct task_struct *p, struct task_ctx *tctx, s32 cpu,
					 struct sis_ctl *feats)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	u64 vruntime, load, vslice;
	s64 lag = 0;

	if (rq_settled(tctx) != RQ_NONE || !rq_claim(tctx, RQ_NONE))
		return;
	vruntime = avg_vruntime(cpu);
	load = READ_ONCE(rq->sum_weight);
	if (feat(feats, FEAT_DELAY_DEQUEUE))
		delayed_lag(tctx, cpu, vruntime);
	tctx->weight = se_weight(p);
	tctx->slice = task_slice(p);
	tctx->idle_policy = task_has_idle_policy(p);
	tctx->custom_slice = tctx->slice != slice_ns;
	vslice = calc_delta_fair(tctx->slice, tctx->weight);
	if (feat(feats, FEAT_PLACE_LAG) && READ_ONCE(rq->nr_queued) && load && tctx->vlag) {
		lag = tctx->vlag;
		if (lag > LAG_KEY_MAX)
			lag = LAG_KEY_MAX;
		if (lag < -LAG_KEY_MAX)
			lag = -LAG_KEY_MAX;
		lag = lag < 0 ? -(s64)((u64)-lag * (load + tctx->weight) / load) :
				(s64)((u64)lag * (load + tctx->weight) / load);
		stat_inc(STAT_PLACE_LAG);
	}
	tctx->vruntime = vruntime - lag;
	tctx->sleep_cpu = -1;
	if (tctx->rel_deadline) {
		tctx->deadline += tctx->vruntime;
		tctx->rel_deadline = false;
		stat_inc(STAT_REL_DEADLINE);
	} else {
		if (feat(feats, FEAT_PLACE_DEADLINE_INITIAL) && tctx->initial) {
			vslice /= 2;
			stat_inc(STAT_DEADLINE_INITIAL);
		}
		tctx->deadline = tctx->vruntime + vslice;
	}
	tctx->initial = false;
	if ((s64)(vruntime - READ_ONCE(rq->zero_vruntime)) > V_JUMP_MAX ||
	    (s64)(vruntime - READ_ONCE(rq->zero_vruntime)) < -V_JUMP_MAX)
		stat_inc(STAT_V_JUMP);
	WRITE_ONCE(rq->zero_vruntime, vruntime);
	account_entity(cpu, tctx, true);
}

/*
 * dequeue_entity()'s part: the lag is kept (update_entity_lag()), and a task that leaves
 * without sleeping (a migration, a change of its attributes) keeps its deadline
 * relative to its vruntime (PLACE_REL_DEADLINE).
 */
static __always_inline void dequeue_entity(struct task_ctx *tctx, bool sleep,
					   struct sis_ctl *feats)
{
	s32 cpu = rq_settled(tctx);

	if (!valid_cpu(cpu) || !rq_claim(tctx, cpu))
		return;
	tctx->sleep_v = avg_vruntime(cpu);
	tctx->vlag = entity_lag(tctx, tctx->sleep_v);
	tctx->sleep_cpu = sleep ? cpu : -1;
	if (!sleep && feat(feats, FEAT_PLACE_REL_DEADLINE)) {
		tctx->deadline -= tctx->vruntime;
		tctx->rel_deadline = true;
	}
	account_entity(cpu, tctx, false);
}

/*
 * A task found on a CPU other than the one whose sums count it: moved while runnable,
 * by a pull or by the kernel, which calls neither ops.quiescent nor ops.runnable then.
 * It leaves the old rq and is placed on the new one, as a migration's dequeue and
 * enqueue do.
 */
static __always_inline void follow_migration(struct task_struct *p, struct task_ctx *tctx,
					     s32 cpu, struct sis_ctl *feats)
{
	if (rq_settled(tctx) == cpu)
		return;
	dequeue_entity(tctx, false, feats);
	place_entity(p, tctx, cpu, feats);
}

/* cfs_rq_min_slice(): the shortest request of @cpu's queue and @tctx's. */
static __always_inline u64 min_slice_of(s32 cpu, struct task_ctx *tctx)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	struct task_struct *q;
	u64 min = tctx->slice;

	rq->walked = 0;
	bpf_for_each(scx_dsq, q, CPU_DSQ_BASE + cpu, 0) {
		u64 s = task_slice(q);

		if (s < min)
			min = s;
		if (++rq->walked >= PICK_SCAN_MAX)
			break;
	}
	return min;
}

/*
 * set_protect_slice(): curr runs uninterrupted up to vprot: its deadline, or, when a
 * queued task has a shorter request (RUN_TO_PARITY) or the feature is off (the
 * normalized base slice), that much service.
 * differs: the shortest request is looked for only while some task of the rq has a
 * custom slice; otherwise every request is the base slice.
 */
static __always_inline u64 set_protect_slice(struct task_ctx *tctx, s32 cpu, u64 vruntime,
					     struct sis_ctl *feats)
{
	u64 slice = normalized_slice_ns, vprot = tctx->deadline, v;

	if (feat(feats, FEAT_RUN_TO_PARITY))
		slice = READ_ONCE(cfs_rqs[CPU_IDX(cpu)].nr_custom) ? min_slice_of(cpu, tctx) :
								     tctx->slice;
	if (slice > tctx->slice)
		slice = tctx->slice;
	if (slice != tctx->slice) {
		v = vruntime + calc_delta_fair(slice, tctx->weight);
		if (time_before(v, vprot)) {
			vprot = v;
			stat_inc(STAT_PROTECT_CUT);
		}
	}
	return vprot;
}

/* update_deadline(): a request used up gets the next one. */
static __always_inline bool update_deadline(struct task_ctx *tctx)
{
	if (time_before(tctx->vruntime, tctx->deadline))
		return false;
	tctx->deadline = tctx->vruntime + calc_delta_fair(tctx->slice, tctx->weight);
	return true;
}

/* The timer fired: the run it was armed for is still on, its request is up. */
static int hrtick(void *map, u32 *key, struct hrtick_timer *t)
{
	u32 cpu = *key;

	if (cpu < MAX_CPUS && READ_ONCE(cfs_rqs[cpu].run_gen) == t->gen &&
	    READ_ONCE(cfs_rqs[cpu].curr_weight)) {
		stat_inc(STAT_HRTICK);
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	}
	return 0;
}

/*
 * Does @rq's CPU tick before a run's end @delay ns from now? Its ticks are tick_ns
 * apart while it is busy: the next is due one after the last, if that was within one.
 */
static __always_inline bool tick_first(struct sis_cfs_rq *rq, u64 delay)
{
	u64 stamp = READ_ONCE(rq->tick_stamp), now = scx_bpf_now();

	return stamp && time_before(now, stamp + tick_ns) && now + delay > stamp + tick_ns;
}

/*
 * hrtick_start_fair(): with tasks waiting on @cpu, end curr's run @delay ns from now
 * rather than at the next tick (TICK_NSEC is 4 ms at HZ=250, a request 2.8 ms).
 * @flags: BPF_F_TIMER_CPU_PIN when @cpu arms its own, pinned there as the kernel's is.
 * @at_tick: armed by @cpu's tick, which no tick comes before.
 * differs: the timer ends the run with a preempting kick, in place of the hrtick's
 * resched; one armed at another CPU's enqueue fires on that CPU.
 * differs: not armed for a run that outlasts the next tick, which arms it then
 * (hrtick_tick()): on 7.0+ bpf_timer_start() with interrupts off, as in every
 * sched_ext op, is done by an irq_work, one more interrupt per arming.
 */
static __always_inline void hrtick_start(s32 cpu, u64 delay, u64 flags, struct sis_ctl *feats,
					 bool at_tick)
{
	u32 key = CPU_IDX(cpu);
	struct sis_cfs_rq *rq = &cfs_rqs[key];
	struct hrtick_timer *t;

	if (!feat(feats, FEAT_HRTICK) || delay >= tick_ns || READ_ONCE(rq->nr_queued) < 2 ||
	    (!at_tick && tick_first(rq, delay)))
		return;
	t = bpf_map_lookup_elem(&hrtick_timers, &key);
	if (!t)
		return;
	t->gen = READ_ONCE(rq->run_gen);
	stat_inc(STAT_HRTICK_ARMED);
	bpf_timer_start(&t->timer, delay ?: 1, flags);
}

/* init: each CPU's timer, once. */
static __always_inline s32 hrtick_init(u32 cpu)
{
	u32 key = CPU_IDX(cpu);
	struct hrtick_timer *t = bpf_map_lookup_elem(&hrtick_timers, &key);

	if (!t)
		return -ENOENT;
	bpf_timer_init(&t->timer, &hrtick_timers, CLOCK_MONOTONIC);
	return bpf_timer_set_callback(&t->timer, hrtick);
}

/* Arm @cpu's timer for the rest of curr's protected run, if it has one left. */
static __always_inline void hrtick_curr(s32 cpu, struct sis_ctl *feats, bool at_tick)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	u64 v, vprot = READ_ONCE(rq->curr_vprot);
	u32 w = READ_ONCE(rq->curr_weight);

	if (!w)
		return;
	v = curr_vruntime(rq, cpu);
	if (time_before(v, vprot))
		hrtick_start(cpu, calc_delta_wall(vprot - v, w),
			     at_tick ? BPF_F_TIMER_CPU_PIN : 0, feats, at_tick);
}

/*
 * hrtick_update() after an enqueue that did not preempt: the second task on @cpu's rq
 * arms the timer for the rest of curr's run.
 */
static __always_inline void hrtick_update(s32 cpu, struct sis_ctl *feats)
{
	if (READ_ONCE(cfs_rqs[CPU_IDX(cpu)].nr_queued) == 2)
		hrtick_curr(cpu, feats, false);
}

/* At @cpu's tick: a run that ends before the next one gets its timer now. */
static __always_inline void hrtick_tick(s32 cpu, struct sis_ctl *feats)
{
	WRITE_ONCE(cfs_rqs[CPU_IDX(cpu)].tick_stamp, scx_bpf_now());
	hrtick_curr(cpu, feats, true);
}

/*
 * set_next_entity(): @p becomes curr of @cpu. Its sched_ext slice is the wall time to
 * vprot, where update_curr() would ask for a resched.
 */
static __always_inline void set_next_entity(struct task_struct *p, struct task_ctx *tctx,
					    s32 cpu, struct sis_ctl *feats)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	u64 vprot, slice;

	follow_migration(p, tctx, cpu, feats);
	tctx->exec_start = p->se.sum_exec_runtime;
	/* another CPU still moves its count (rq_settled() gave up): this run is not counted */
	if (READ_ONCE(tctx->rq_cpu) != cpu) {
		rq->curr_clock = rq_clock_task(cpu);
		return;
	}
	update_deadline(tctx);
	vprot = set_protect_slice(tctx, cpu, tctx->vruntime, feats);
	sums_write_begin(rq);
	rq->curr_vruntime = tctx->vruntime;
	rq->curr_clock = rq_clock_task(cpu);
	rq->curr_deadline = tctx->deadline;
	rq->curr_vprot = vprot;
	rq->curr_slice = tctx->slice;
	rq->curr_policy = p->policy;
	WRITE_ONCE(rq->curr_weight, tctx->weight);
	sums_write_end(rq);
	rq->run_gen++;
	slice = calc_delta_wall(vprot - tctx->vruntime, tctx->weight) ?: 1;
	if (p->scx.slice != slice)
		scx_bpf_task_set_slice(p, slice);
	hrtick_start(cpu, slice, BPF_F_TIMER_CPU_PIN, feats, false);
}

/*
 * update_curr() at the end of a run: vruntime advances by the service received,
 * weighted, and the sums follow; a used-up request gets its next deadline.
 */
static __always_inline void put_prev_entity(struct task_struct *p, struct task_ctx *tctx,
					    s32 cpu)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	u64 ran = p->se.sum_exec_runtime - tctx->exec_start, dv;
	bool counted = (s64)ran > 0 && rq_settled(tctx) == cpu && rq_claim(tctx, cpu);

	sums_write_begin(rq);
	WRITE_ONCE(rq->curr_weight, 0);
	if (counted) {
		dv = calc_delta_fair(ran, tctx->weight);
		__sync_fetch_and_add(&rq->sum_w_vruntime, (u64)tctx->weight * dv);
		tctx->vruntime += dv;
	}
	sums_write_end(rq);
	if (!counted)
		return;
	tctx->exec_start = p->se.sum_exec_runtime;
	update_deadline(tctx);
	barrier();
	WRITE_ONCE(tctx->rq_cpu, cpu);
}

/* A deadline on @cpu's clock as a queue key comparable across CPUs: relative to its V. */
static __always_inline u64 rel_key(u64 deadline, s32 cpu)
{
	return deadline - avg_vruntime(cpu) + (1ULL << 63);
}

/* A task's deadline as such a key, on the rq whose sums count it. */
static __always_inline u64 relative_deadline(struct task_ctx *tctx)
{
	return rel_key(tctx->deadline, valid_cpu(tctx->rq_cpu) ? tctx->rq_cpu : 0);
}

/*
 * protect_slice()'s bound for a curr that goes on at @v with @deadline, as
 * set_protect_slice() sets it; the sched_ext slice is the wall time to it.
 */
static __always_inline u64 keep_slice(struct task_ctx *tctx, s32 cpu, u64 v, bool renewed,
				      struct sis_ctl *feats)
{
	u64 vprot;

	/* fair.c sets no new vprot for a curr picked again: it is rescheduled each tick */
	if (!renewed)
		return tick_ns;
	vprot = set_protect_slice(tctx, cpu, v, feats);
	WRITE_ONCE(cfs_rqs[CPU_IDX(cpu)].curr_vprot, vprot);
	return calc_delta_wall(vprot - v, tctx->weight) ?: 1;
}

#define PICK_TAKEN	1	/* pick_queued(): a queued task moved to the local DSQ */
#define PICK_SHARED	2	/* pick_queued(): the LLC's shared head is earlier: take it */

/*
 * pick_eevdf()'s walk of @cpu's queue: the first eligible task wins unless prev
 * (@prev_ok) has an earlier deadline @prev_dl, or the shared head an earlier key
 * @shared_key (@has_shared). Global: the verifier checks the loop once, not once per
 * caller state. Returns PICK_TAKEN, PICK_SHARED or 0 (nothing queued beats prev).
 */
__noinline int pick_queued(s32 cpu, u32 prev_ok, u64 prev_dl, u32 has_shared, u64 shared_key)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	struct task_ctx *qctx;
	struct task_struct *q;
	bool skipped = false;

	rq->walked = 0;
	bpf_for_each(scx_dsq, q, CPU_DSQ_BASE + cpu, 0) {
		if (++rq->walked > PICK_SCAN_MAX)
			break;
		qctx = bpf_task_storage_get(&task_ctxs, q, 0, 0);
		if (!qctx)
			continue;
		/* prev's deadline is earlier than this one's and every later one's */
		if (prev_ok && !time_before(qctx->deadline, prev_dl))
			break;
		if (!vruntime_eligible(cpu, qctx->vruntime)) {
			skipped = true;
			continue;
		}
		if (has_shared && time_before(shared_key, rel_key(qctx->deadline, cpu)))
			return PICK_SHARED;
		if (skipped)
			stat_inc(STAT_PICK_INELIGIBLE);
		if (scx_bpf_dsq_move(BPF_FOR_EACH_ITER, q, SCX_DSQ_LOCAL, 0))
			return PICK_TAKEN;
	}
	return 0;
}

/*
 * pick_eevdf() for a CPU about to switch: the earliest eligible deadline among its
 * queue and prev (ops.dispatch runs while prev is still curr, before ops.stopping).
 * prev goes on when it wins; a queued task wins unless the LLC's shared queue holds an
 * earlier deadline (relative to each rq's V), which is then taken. False: nothing
 * eligible here (the callers' balancing then takes a queue head).
 */
static __always_inline bool pick_eevdf(s32 cpu, struct task_struct *prev, u64 llc_dsq,
				       struct sis_ctl *feats)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	struct task_ctx *ptctx = NULL;
	struct task_struct *shared;
	u64 prev_v = 0, prev_dl = 0, key = 0;
	bool prev_ok = false, renewed = false;
	int picked;

	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && READ_ONCE(rq->curr_weight))
		ptctx = bpf_task_storage_get(&task_ctxs, prev, 0, 0);
	/* a CPU about to idle with an empty queue: nothing to order */
	if (!ptctx && cpu_dsq_nr_queued(cpu) <= 0)
		return false;
	/* keep the origin near the tasks: keys stay small however long a CPU runs alone */
	WRITE_ONCE(rq->zero_vruntime, avg_vruntime(cpu));
	if (ptctx && ptctx->rq_cpu == cpu) {
		prev_v = curr_vruntime(rq, cpu);
		prev_dl = ptctx->deadline;
		if (!time_before(prev_v, prev_dl)) {
			prev_dl = prev_v + calc_delta_fair(ptctx->slice, ptctx->weight);
			renewed = true;
		}
		prev_ok = vruntime_eligible(cpu, prev_v);
	}
	shared = __COMPAT_scx_bpf_dsq_peek(llc_dsq);
	if (shared)
		key = shared->scx.dsq_vtime;
	picked = pick_queued(cpu, prev_ok, prev_dl, shared != NULL, key);
	if (picked == PICK_TAKEN)
		return true;
	if (picked == PICK_SHARED)
		return scx_bpf_dsq_move_to_local(llc_dsq, 0);
	if (!prev_ok || !ptctx)
		return false;
	if (shared && time_before(key, rel_key(prev_dl, cpu)) &&
	    scx_bpf_dsq_move_to_local(llc_dsq, 0))
		return true;
	ptctx->deadline = prev_dl;
	WRITE_ONCE(rq->curr_deadline, prev_dl);
	scx_bpf_task_set_slice(prev, keep_slice(ptctx, cpu, prev_v, renewed, feats));
	return true;
}

/*
 * wakeup_preempt_fair(): does @p, queued on @cpu, preempt curr there? A non-idle wakee
 * preempts a SCHED_IDLE curr at once; an idle or batch wakee never preempts; else @p
 * preempts when it is what pick_eevdf() now chooses: curr not eligible or past its
 * protection (PREEMPT_SHORT: a shorter request overrides it), and @p the earliest
 * eligible deadline. A fork preempts by PREEMPT_SHORT only (as 6.19+).
 * differs: when @p does not preempt, curr's protection is not shortened to @p's request
 * (update_protect_slice(), which matters for custom slices only).
 */
static __always_inline bool wakeup_preempt_fair(struct task_struct *p, struct task_ctx *tctx,
						s32 cpu, struct sis_ctl *feats)
{
	struct sis_cfs_rq *rq = &cfs_rqs[CPU_IDX(cpu)];
	bool curr_idle, short_req;
	struct task_ctx *qctx;
	struct task_struct *q;
	u64 v;

	if (!feat(feats, FEAT_WAKEUP_PREEMPTION) || !READ_ONCE(rq->curr_weight))
		return false;
	curr_idle = READ_ONCE(rq->curr_policy) == SCHED_IDLE;
	if (curr_idle && !task_has_idle_policy(p)) {
		stat_inc(STAT_PREEMPT_IDLE);
		return true;
	}
	if (curr_idle != task_has_idle_policy(p) || !normal_policy(p))
		return false;
	short_req = feat(feats, FEAT_PREEMPT_SHORT) && tctx->slice < READ_ONCE(rq->curr_slice);
	if (!short_req && tctx->forked)
		return false;
	v = curr_vruntime(rq, cpu);
	if (vruntime_eligible(cpu, v)) {
		if (!short_req && time_before(v, READ_ONCE(rq->curr_vprot)))
			return false;
		if (time_before(READ_ONCE(rq->curr_deadline), tctx->deadline))
			return false;
	}
	if (!vruntime_eligible(cpu, tctx->vruntime))
		return false;
	rq->walked = 0;
	bpf_for_each(scx_dsq, q, CPU_DSQ_BASE + cpu, 0) {
		if (++rq->walked > PICK_SCAN_MAX || !time_before(q->scx.dsq_vtime, tctx->deadline))
			break;
		qctx = bpf_task_storage_get(&task_ctxs, q, 0, 0);
		if (qctx && vruntime_eligible(cpu, qctx->vruntime))
			return false;
	}
	if (short_req)
		stat_inc(STAT_PREEMPT_SHORT);
	return true;
}

/*
 * sched_idle_rq(): every task on @cpu's rq is a SCHED_IDLE one of ours (and there is
 * one). differs: rq->nr_running and our count are read without @cpu's lock.
 */
__noinline bool sched_idle_rq(s32 cpu)
{
	struct rq *rq = bpf_per_cpu_ptr(&runqueues, cpu);
	u32 n;

	if (!rq || !valid_cpu(cpu))
		return false;
	n = rq->nr_running;
	return n && n == READ_ONCE(cfs_rqs[CPU_IDX(cpu)].h_nr_idle);
}

/* sched_idle_cpu(): our count first, so that a CPU without SCHED_IDLE work costs no rq read. */
static __always_inline bool sched_idle_cpu(s32 cpu)
{
	return valid_cpu(cpu) && READ_ONCE(cfs_rqs[CPU_IDX(cpu)].h_nr_idle) && sched_idle_rq(cpu);
}
