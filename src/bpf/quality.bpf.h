/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: instrumentation. The wakeup latency classes and buckets, and the
 * placement quality: what the idle masks said just before each decision, against
 * where the wakeup went. Read-only: nothing here changes a decision.
 */

static __always_inline u32 lat_class_of(u32 step)
{
	switch (step) {
	case STAT_IDLE_CORE:
		return LAT_IDLE_CORE;
	case STAT_IDLE_SMT:
		return LAT_IDLE_SMT;
	case STAT_IDLE_CPU:
	case STAT_IDLEST:
		return LAT_IDLE_CPU;
	case STAT_FALLBACK:
	case STAT_CURRENT_CPU:
	case STAT_KTHREAD:
		return LAT_FALLBACK;
	default:
		return LAT_TARGET_PREV_RECENT;
	}
}

/* log2 bucket of a latency: 0 for < 1 us, i for [2^(i-1), 2^i) us (fls64 of us) */
static __always_inline u32 lat_bucket(u64 ns)
{
	u64 us = ns / 1000;
	u32 b = 0;

	if (us >= (1ULL << 32)) { b += 32; us >>= 32; }
	if (us >= (1ULL << 16)) { b += 16; us >>= 16; }
	if (us >= (1ULL << 8)) { b += 8; us >>= 8; }
	if (us >= (1ULL << 4)) { b += 4; us >>= 4; }
	if (us >= (1ULL << 2)) { b += 2; us >>= 2; }
	if (us >= (1ULL << 1)) { b += 1; us >>= 1; }
	b += us;
	return b < NR_LAT_BUCKETS ? b : NR_LAT_BUCKETS - 1;
}

/* What the idle masks said just before a decision: the ground truth for quality. */
struct sis_truth {
	bool idle_core;		/* a fully idle, allowed core in target's LLC */
	bool idle_cpu;		/* an idle, allowed CPU there */
	u32 nr_idle;		/* how many */
};

/*
 * Read the idle masks word by word (constant offsets, so the verifier accepts the
 * loads) against @target's LLC (wake_affine()'s choice, the LLC select_idle_sibling()
 * searches) and the task's allowed CPUs. Read-only: it claims nothing and so cannot
 * change the decision that follows.
 */
static __always_inline void read_truth(struct task_struct *p, s32 target,
				       const struct cpumask *idle, struct sis_truth *t)
{
	const struct cpumask *smt = scx_bpf_get_idle_smtmask();
	u32 llc = LLC_IDX(cpu_llc[CPU_IDX(target)]);
	u32 words = (nr_cpu_ids + 63) / 64;
	const struct cpumask *allowed_mask = p->cpus_ptr;
	int w;

#pragma unroll
	for (w = 0; w < MAX_CPUS / 64; w++) {
		u64 m, i;

		if (w >= words)
			break;
		m = llc_mask[llc][w] & allowed_mask->bits[w];
		i = m & idle->bits[w];
		t->nr_idle += __builtin_popcountll(i);
		if (i)
			t->idle_cpu = true;
		if (m & smt->bits[w])
			t->idle_core = true;
	}
	scx_bpf_put_idle_cpumask(smt);
}

/* Is @p one of the tasks --quality-comm names (comm starts with the prefix)? */
static __always_inline bool quality_task(struct task_struct *p)
{
	int i;

	if (!quality)
		return false;
#pragma unroll
	for (i = 0; i < 16; i++) {
		if (i >= quality_comm_len)
			break;
		if (p->comm[i] != quality_comm[i])
			return false;
	}
	return true;
}

/* Was @cpu's whole core idle before we claimed @cpu (its siblings still are)? */
static __always_inline bool core_was_idle(const struct cpumask *idle, s32 cpu)
{
	u32 i;

	bpf_for(i, 0, nr_siblings(cpu)) {
		s32 sib = sibling(cpu, i);

		if (sib != cpu && !available_idle_cpu(idle, sib))
			return false;
	}
	return true;
}

/* Classify one decision against the truth read before it; @claimed: @cpu was idle. */
static __always_inline void count_quality(struct sis_cpu_stats *s, const struct sis_truth *t,
					  const struct cpumask *idle, s32 cpu, bool claimed, u32 step)
{
	s->cnt[STAT_Q_WAKEUPS]++;
	s->cnt[STAT_Q_NR_IDLE] += t->nr_idle;
	if (t->idle_cpu) {
		s->cnt[STAT_Q_IDLE_CPU]++;
		if (!claimed)
			s->cnt[STAT_Q_MISSED_CPU]++;
	}
	if (t->idle_core) {
		s->cnt[STAT_Q_IDLE_CORE]++;
		if (!claimed || !core_was_idle(idle, cpu)) {
			s->cnt[STAT_Q_MISSED_CORE]++;
			/* the first steps take a CPU without asking about its core */
			if (step == STAT_CURRENT_CPU || step == STAT_TARGET || step == STAT_PREV ||
			    step == STAT_KTHREAD || step == STAT_RECENT)
				s->cnt[STAT_Q_MISSED_CORE_EARLY]++;
		}
	}
	if (!claimed)
		s->cnt[STAT_Q_STACKED]++;
}
