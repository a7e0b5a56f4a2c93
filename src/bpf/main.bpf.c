/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_sis: the kernel's wakeup placement, select_idle_sibling() from
 * kernel/sched/fair.c, rebuilt as a sched_ext select_cpu.
 *
 * Every function below named after a fair.c function does what that function
 * does; a one-line "differs:" comment says where and why we do something else.
 * Around the search sits a small vtime scheduler: one shared DSQ per LLC,
 * consumed by the LLC's CPUs first and stolen from by the others.
 */
#include <scx/common.bpf.h>
#include "intf.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

/* Topology, written by the loader before load (the verifier prunes on it). */
const volatile u32 nr_cpu_ids = 1;		/* possible CPUs, online or not */
const volatile u32 nr_llcs = 1;
const volatile bool smt_enabled;
const volatile u64 slice_ns = 5000000;
const volatile bool test_verifier_reject;	/* --test-verifier-reject */
const volatile bool test_runtime_error;		/* --test-runtime-error */
const volatile bool quality = true;		/* classify every decision (--no-quality) */
const volatile char quality_comm[16];		/* ... or only these tasks' (--quality-comm) */
const volatile u32 quality_comm_len;
const volatile u32 cpu_llc[MAX_CPUS];		/* cpu -> LLC index */
const volatile u32 cpu_node[MAX_CPUS];		/* cpu -> NUMA node */
const volatile u32 cpu_core[MAX_CPUS];		/* cpu -> core index */
const volatile u32 cpu_llc_pos[MAX_CPUS];	/* cpu -> position in its LLC's list */
const volatile u32 llc_cpus[MAX_CPUS];		/* CPUs of each LLC, by id, LLC after LLC */
const volatile u32 llc_off[MAX_LLCS];		/* first entry of an LLC in llc_cpus */
const volatile u32 llc_nr[MAX_LLCS];		/* CPUs in an LLC (its llc_weight) */
const volatile u32 llc_node[MAX_LLCS];
const volatile u32 core_cpus[MAX_CPUS];		/* siblings of each core, core after core */
const volatile u32 core_off[MAX_CPUS];
const volatile u32 core_nr[MAX_CPUS];
const volatile u64 llc_mask[MAX_LLCS][MAX_CPUS / 64];	/* CPUs of each LLC, as bits */

/*
 * Live control: the loader fills it before attaching and pins it in bpffs, where
 * `scx_sis --set` changes it. Read at every test, so a change applies from the next
 * wakeup on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct sis_ctl);
} ctl SEC(".maps");

/* Per-LLC state: the sched_domain_shared fields fair.c keeps. */
struct llc_ctx {
	u32 has_idle_cores;	/* sd_llc_shared->has_idle_cores */
	u32 nr_idle_scan;	/* sd_llc_shared->nr_idle_scan (SIS_UTIL) */
	u64 util;		/* sum of CPU utilisation, 0..1024 per CPU */
};
struct llc_ctx llc_ctxs[MAX_LLCS];

/* Per-CPU busy-time accounting, our stand-in for PELT. */
struct cpu_ctx {
	u64 running_since;	/* 0 when no task of ours runs */
	u64 busy_ns;		/* total time tasks of ours ran here */
	u64 last_busy_ns;	/* busy_ns (plus the running part) at the last refresh */
	u64 util;		/* decayed utilisation, 0..1024 */
};
struct cpu_ctx cpu_ctxs[MAX_CPUS];

u64 vtime_now;
u64 util_last_refresh;
u64 util_refreshes;

struct task_ctx {
	s32 recent_used_cpu;	/* p->recent_used_cpu */
	u32 placed_by;		/* enum lat_class of the pending wakeup */
	bool selected;		/* select_cpu ran for the pending wakeup */
	u64 wake_ts;		/* when the task became runnable; 0: not a wakeup */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct sis_cpu_stats);
} stats SEC(".maps");

struct util_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct util_timer);
} util_timer SEC(".maps");

#define CPU_IDX(c) ((u32)(c) & (MAX_CPUS - 1))
#define LLC_IDX(l) ((u32)(l) & (MAX_LLCS - 1))

/*
 * The ctl entry is looked up once per wakeup and passed down as `feats`; each test
 * loads the word afresh, so the verifier does not track its bits across the walk.
 */
static __always_inline struct sis_ctl *lookup_ctl(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&ctl, &zero);
}

#define feat(f) (READ_ONCE(feats->features) & (f))

static __always_inline struct sis_cpu_stats *cpu_stats(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

/*
 * One counter update inside the seqcount bracket (see struct sis_cpu_stats), so
 * every counter is exact in every interval. No hook of ours nests inside another
 * on one CPU (each runs with interrupts off), so brackets never overlap.
 */
static __always_inline void stat_add(u32 idx, u64 v)
{
	struct sis_cpu_stats *s = cpu_stats();
	u64 seq;

	if (!s || idx >= NR_SIS_STATS)
		return;
	seq = s->seq_start + 1;
	WRITE_ONCE(s->seq_start, seq);
	barrier();
	s->cnt[idx] += v;
	barrier();
	WRITE_ONCE(s->seq_done, seq);
}

static __always_inline void stat_inc(u32 idx)
{
	stat_add(idx, 1);
}

static __always_inline bool valid_cpu(s32 cpu)
{
	return cpu >= 0 && cpu < nr_cpu_ids;
}

/* Is @cpu in the loaded topology? A CPU onlined since the load is not, until the restart. */
static __always_inline bool known_cpu(s32 cpu)
{
	return valid_cpu(cpu) && cpu_llc[CPU_IDX(cpu)] != NO_LLC;
}

/* cpus_share_cache(); differs: a CPU unknown to the loaded topology shares with none but itself. */
static __always_inline bool cpus_share_cache(s32 a, s32 b)
{
	return a == b || (known_cpu(a) && cpu_llc[CPU_IDX(a)] == cpu_llc[CPU_IDX(b)]);
}

/* The shared DSQ of @cpu's LLC; the orphan DSQ for a CPU the topology does not know. */
static __always_inline u64 llc_dsq_of(s32 cpu)
{
	return known_cpu(cpu) ? LLC_DSQ_BASE + cpu_llc[CPU_IDX(cpu)] : ORPHAN_DSQ;
}

static __always_inline bool allowed(struct task_struct *p, s32 cpu)
{
	return valid_cpu(cpu) && bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/* available_idle_cpu(); differs: the built-in idle mask, no sched_idle_cpu() (SCHED_IDLE is fair-only). */
static __always_inline bool available_idle_cpu(const struct cpumask *idle, s32 cpu)
{
	return valid_cpu(cpu) && bpf_cpumask_test_cpu(cpu, idle);
}

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

/* test_idle_cores(); IDLE_CORE off means the hint is never consulted. */
static __always_inline bool test_idle_cores(struct sis_ctl *feats, s32 cpu)
{
	if (!feat(FEAT_IDLE_CORE))
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
	u32 core = cpu_core[CPU_IDX(cpu)];
	u32 off = core_off[CPU_IDX(core)], nr = core_nr[CPU_IDX(core)];
	bool all_idle = true;
	u32 i;

	bpf_for(i, 0, nr) {
		s32 sib;

		if (i >= MAX_SIBLINGS)
			break;
		sib = core_cpus[CPU_IDX(off + i)];
		(*scanned)++;
		if (!available_idle_cpu(idle, sib)) {
			all_idle = false;
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
	u32 core = cpu_core[CPU_IDX(target)];
	u32 off = core_off[CPU_IDX(core)], nr = core_nr[CPU_IDX(core)];
	u32 i;

	bpf_for(i, 0, nr) {
		s32 sib;

		if (i >= MAX_SIBLINGS)
			break;
		sib = core_cpus[CPU_IDX(off + i)];
		if (sib == target || !allowed(p, sib) || !cpus_share_cache(sib, target))
			continue;
		(*scanned)++;
		if (available_idle_cpu(idle, sib) && claim(sib))
			return sib;
	}
	return -1;
}

/*
 * select_idle_cpu(): walk target's LLC from target + 1, wrapping. With the idle-core
 * hint look for a whole idle core (unbounded, as in fair.c); without it test single
 * CPUs, at most nr_idle_scan of them when SIS_UTIL is on.
 */
static __always_inline s32 select_idle_cpu(struct task_struct *p, const struct cpumask *idle,
					   bool has_idle_core, s32 target, u32 *step, u32 *scanned,
					   struct sis_ctl *feats)
{
	u32 llc = LLC_IDX(cpu_llc[CPU_IDX(target)]);
	u32 off = llc_off[llc], nr_llc = llc_nr[llc], pos = cpu_llc_pos[CPU_IDX(target)];
	u64 seen_cores[MAX_CPUS / 64] = {};
	s32 idle_cpu = -1;
	int nr = MAX_CPUS;
	u32 i;

	if (!known_cpu(target))
		return -1;
	stat_inc(STAT_SCAN_CALLS);
	if (feat(FEAT_SIS_UTIL)) {
		/* because !--nr is the condition to stop the scan */
		nr = llc_ctxs[llc].nr_idle_scan + 1;
		/* an overloaded LLC is unlikely to have an idle CPU or core */
		if (nr == 1) {
			stat_inc(STAT_SIS_UTIL_CUT);
			return -1;
		}
	}

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
			if (--nr <= 0) {
				stat_inc(STAT_SIS_UTIL_CUT);
				return -1;
			}
			(*scanned)++;
			if (available_idle_cpu(idle, cpu) && claim(cpu))
				return cpu;
		}
	}

	if (has_idle_core) {
		/* a full core scan failed: the hint was wrong */
		stat_inc(STAT_HINT_FALSE);
		set_idle_cores(target, 0);
		if (idle_cpu >= 0 && !claim(idle_cpu))
			idle_cpu = -1;
	}
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

/*
 * wake_affine(), the parts that need no load figures (wake_affine_idle()).
 * differs: no WA_WEIGHT (no PELT load for our tasks) and no wake_wide() flip count:
 * when the idle test decides nothing, target stays prev_cpu.
 */
static __always_inline s32 wake_affine(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
				       const struct cpumask *idle, struct sis_ctl *feats)
{
	s32 this_cpu = bpf_get_smp_processor_id();

	if (!feat(FEAT_WAKE_AFFINE) || !(wake_flags & SCX_WAKE_TTWU) ||
	    this_cpu == prev_cpu || !allowed(p, this_cpu))
		return prev_cpu;
	if (available_idle_cpu(idle, this_cpu) && cpus_share_cache(this_cpu, prev_cpu))
		return available_idle_cpu(idle, prev_cpu) ? prev_cpu : this_cpu;
	/*
	 * A sync waker about to sleep, alone on its CPU and not exiting. differs: "alone"
	 * is nothing queued for this CPU (its local and own per-CPU DSQ), fair.c's
	 * nr_running == 1; tasks in the shared LLC DSQ belong to no CPU yet.
	 */
	if ((wake_flags & SCX_WAKE_SYNC) && !waker_exiting() &&
	    scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | this_cpu) == 0 &&
	    scx_bpf_dsq_nr_queued(CPU_DSQ_BASE + this_cpu) == 0)
		return this_cpu;
	return prev_cpu;
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
	if (allowed(p, target) && available_idle_cpu(idle, target) && claim(target))
		return target;

	*step = STAT_PREV;
	if (prev != target && cpus_share_cache(prev, target) && allowed(p, prev) &&
	    available_idle_cpu(idle, prev) && claim(prev))
		return prev;

	/* differs: no per-CPU-kthread stacking (step 3): sched_ext lets kthreads wake like any task. */

	*step = STAT_RECENT;
	recent = tctx->recent_used_cpu;
	tctx->recent_used_cpu = prev;
	if (feat(FEAT_RECENT_USED) && recent != prev && recent != target &&
	    valid_cpu(recent) && cpus_share_cache(recent, target) &&
	    allowed(p, recent) && available_idle_cpu(idle, recent) && claim(recent))
		return recent;

	if (smt_enabled) {
		has_idle_core = test_idle_cores(feats, target);
		*step = STAT_IDLE_SMT;
		if (!has_idle_core && feat(FEAT_IDLE_SMT) && cpus_share_cache(prev, target)) {
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
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct idlest_scratch);
} idlest_scratch SEC(".maps");

#define NODE_IDX(n) ((u32)(n) & (MAX_NODES - 1))

/* update_sg_wakeup_stats()'s idle_cpus, for every LLC and node: allowed CPUs in the idle mask. */
static __always_inline void count_idle(struct task_struct *p, const struct cpumask *idle,
				       struct idlest_scratch *sc)
{
	const struct cpumask *allowed_mask = p->cpus_ptr;
	u32 words = (nr_cpu_ids + 63) / 64, llc, n;

	bpf_for(n, 0, MAX_NODES)
		sc->node_idle[NODE_IDX(n)] = 0;
	bpf_for(llc, 0, nr_llcs) {
		u32 cnt = 0;
		int w;

#pragma unroll
		for (w = 0; w < MAX_CPUS / 64; w++) {
			if (w >= words)
				break;
			cnt += __builtin_popcountll(llc_mask[LLC_IDX(llc)][w] &
						    allowed_mask->bits[w] & idle->bits[w]);
		}
		sc->llc_idle[LLC_IDX(llc)] = cnt;
		sc->node_idle[NODE_IDX(llc_node[LLC_IDX(llc)])] += cnt;
	}
}

/*
 * find_idlest_group_cpu() inside the chosen LLC: a CPU of a wholly idle core first
 * (the SMT level prefers the core with the most idle CPUs), then any idle CPU.
 * differs: first in CPU order, not the shallowest idle state (a guest has none).
 */
static __always_inline s32 idlest_in_llc(struct task_struct *p, u32 llc)
{
	u32 off = llc_off[LLC_IDX(llc)], nr = llc_nr[LLC_IDX(llc)], i;
	const struct cpumask *mask = scx_bpf_get_idle_smtmask();
	s32 found = -1;

	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)];

		if (allowed(p, c) && bpf_cpumask_test_cpu(c, mask) && claim(c)) {
			found = c;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(mask);
	if (found >= 0)
		return found;
	mask = scx_bpf_get_idle_cpumask();
	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)];

		if (allowed(p, c) && available_idle_cpu(mask, c) && claim(c)) {
			found = c;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(mask);
	return found;
}

/*
 * select_task_rq_fair()'s slow path for fork, sched_balance_find_dst_cpu(): from the
 * top down, the node and then the LLC with the most idle CPUs, the parent's own when
 * it has at least as many (sched_balance_find_dst_group() keeps the local group on
 * ties), then an idle core and an idle CPU in that LLC. sched_ext never asks us on
 * exec (select_task_rq_scx() keeps an exec'ing task where it is).
 * differs: groups are compared by idle CPUs only (no PELT load or util for ours).
 */
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
			if (sc->node_idle[NODE_IDX(n)] > sc->node_idle[best_node])
				best_node = NODE_IDX(n);
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
	}
	/* the chosen LLC's idle CPUs were taken meanwhile (or prev is unknown): anywhere */
	if (smt_enabled) {
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, SCX_PICK_IDLE_CORE);
		if (cpu >= 0)
			return cpu;
	}
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0)
		return cpu;
	*step = STAT_FALLBACK;
	return prev_cpu;
}

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
	bool idle_core;		/* a fully idle, allowed core in prev_cpu's LLC */
	bool idle_cpu;		/* an idle, allowed CPU there */
	u32 nr_idle;		/* how many */
};

/*
 * Read the idle masks word by word (constant offsets, so the verifier accepts the
 * loads) against prev_cpu's LLC and the task's allowed CPUs. Read-only: it claims
 * nothing and so cannot change the decision that follows.
 */
static __always_inline void read_truth(struct task_struct *p, s32 prev_cpu,
				       const struct cpumask *idle, struct sis_truth *t)
{
	const struct cpumask *smt = scx_bpf_get_idle_smtmask();
	u32 llc = LLC_IDX(cpu_llc[CPU_IDX(prev_cpu)]);
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
	u32 core = cpu_core[CPU_IDX(cpu)];
	u32 off = core_off[CPU_IDX(core)], nr = core_nr[CPU_IDX(core)];
	u32 i;

	bpf_for(i, 0, nr) {
		s32 sib;

		if (i >= MAX_SIBLINGS)
			break;
		sib = core_cpus[CPU_IDX(off + i)];
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
			/* the first steps take an idle CPU without asking about its core */
			if (step == STAT_TARGET || step == STAT_PREV || step == STAT_RECENT)
				s->cnt[STAT_Q_MISSED_CORE_EARLY]++;
		}
	}
	if (!claimed)
		s->cnt[STAT_Q_STACKED]++;
}

s32 BPF_STRUCT_OPS(sis_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	const struct cpumask *idle;
	struct sis_cpu_stats *s;
	struct task_ctx *tctx;
	u32 step = STAT_FALLBACK, scanned = 0;
	struct sis_truth truth = {};
	bool classify;
	s32 target, cpu;
	struct sis_ctl *feats;
	u64 idx;

	if (test_verifier_reject)
		return *(s32 *)(long)prev_cpu;	/* a scalar dereference: rejected */

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	if (!tctx || !valid_cpu(prev_cpu))
		return prev_cpu;

	feats = lookup_ctl();
	if (!feats)
		return prev_cpu;
	idle = scx_bpf_get_idle_cpumask();
	/* wakeups only: a fork is no wakeup (the tracer sees sched_wakeup_new) */
	classify = quality_task(p) && !(wake_flags & SCX_WAKE_FORK);
	if (classify)
		read_truth(p, prev_cpu, idle, &truth);
	if (wake_flags & SCX_WAKE_FORK) {
		/* wake_up_new_task(): p->recent_used_cpu = task_cpu(p), the parent's CPU */
		tctx->recent_used_cpu = prev_cpu;
		cpu = find_idlest_cpu(p, prev_cpu, idle, &step);
	} else {
		target = wake_affine(p, prev_cpu, wake_flags, idle, feats);
		if (target != prev_cpu)
			stat_inc(STAT_WAKE_AFFINE);
		cpu = select_idle_sibling(p, tctx, prev_cpu, target, idle, &step, &scanned,
					  feats);
	}

	tctx->placed_by = lat_class_of(step);
	tctx->selected = true;
	s = cpu_stats();
	if (s) {
		u64 seq = s->seq_start + 1;

		/* see struct sis_cpu_stats: the last word first, the first word last */
		WRITE_ONCE(s->seq_start, seq);
		barrier();
		s->cnt[STAT_SELECT]++;
		if (step < NR_SIS_STATS)
			s->cnt[step]++;
		s->cnt[STAT_SCANNED] += scanned;
		/*
		 * Index the histogram through map memory: indexing with `scanned` itself
		 * would make the verifier track it precisely through every iteration of
		 * the walk, and it would never finish.
		 */
		WRITE_ONCE(s->last_scan, scanned);
		idx = READ_ONCE(s->last_scan);
		if (idx >= NR_SCAN_BUCKETS)
			idx = NR_SCAN_BUCKETS - 1;
		s->scan_hist[idx]++;
		if (scanned > s->scan_max)
			s->scan_max = scanned;
		if (cpu != prev_cpu) {
			s->cnt[STAT_MIGRATE]++;
			if (!cpus_share_cache(cpu, prev_cpu))
				s->cnt[STAT_MIGRATE_LLC]++;
		}
		if (step != STAT_FALLBACK)
			s->cnt[STAT_DIRECT]++;
		if (classify)
			count_quality(s, &truth, idle, cpu, step != STAT_FALLBACK, step);
		barrier();
		WRITE_ONCE(s->seq_done, seq);
	}
	scx_bpf_put_idle_cpumask(idle);
	/* every step but the fallback claimed its CPU: hand the task over directly */
	if (step != STAT_FALLBACK)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	return cpu;
}

/* Kick one idle CPU of @cpu's LLC (else any) so the shared DSQ gets consumed. */
static __always_inline void kick_idle_in_llc(struct task_struct *p, s32 cpu, bool count)
{
	u32 llc = LLC_IDX(cpu_llc[CPU_IDX(cpu)]);
	u32 off = llc_off[llc], nr = llc_nr[llc], i;
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	s32 found = -1;

	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)];

		if (allowed(p, c) && available_idle_cpu(idle, c) && scx_bpf_test_and_clear_cpu_idle(c)) {
			found = c;
			break;
		}
	}
	scx_bpf_put_idle_cpumask(idle);
	/* none idle in the LLC: wake any idle CPU, it will steal */
	if (found < 0)
		found = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (found >= 0) {
		scx_bpf_kick_cpu(found, SCX_KICK_IDLE);
		if (count)
			stat_inc(STAT_IDLE_KICK);
	}
}

/*
 * Clamp a vtime into [vtime_now - slice, vtime_now + MAX_LAG_SLICES * slice]:
 * a sleeper gets at most one slice of credit, and a low-weight task (nice 19 is
 * charged 100x) never queues so far ahead that the watchdog sees it starve.
 */
static __always_inline u64 clamp_vtime(u64 vtime)
{
	u64 now = vtime_now;

	if (time_before(vtime, now - slice_ns))
		vtime = now - slice_ns;
	if (time_after(vtime, now + MAX_LAG_SLICES * slice_ns))
		vtime = now + MAX_LAG_SLICES * slice_ns;
	return vtime;
}

/* A task's vtime with the slice it has used so far charged, scaled by its weight. */
static __always_inline u64 charged_vtime(struct task_struct *p)
{
	u64 used = slice_ns - p->scx.slice;

	if (used > slice_ns)
		used = slice_ns;
	return p->scx.dsq_vtime + used * 100 / (p->scx.weight ? p->scx.weight : 100);
}

/* Must @p run where it is: a single-CPU task, or one with migration disabled. */
static __always_inline bool bound_to_cpu(struct task_struct *p)
{
	return p->nr_cpus_allowed == 1 || p->migration_disabled;
}

void BPF_STRUCT_OPS(sis_enqueue, struct task_struct *p, u64 enq_flags)
{
	s32 cpu = scx_bpf_task_cpu(p);
	u64 vtime = clamp_vtime(p->scx.dsq_vtime);
	struct sis_ctl *feats = lookup_ctl();

	/* tasks that cannot move: their CPU's own vtime DSQ, weighed against the LLC's */
	if (bound_to_cpu(p)) {
		stat_inc(STAT_PINNED);
		scx_bpf_dsq_insert_vtime(p, CPU_DSQ_BASE + cpu, slice_ns, vtime, enq_flags);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	/*
	 * differs: IDLE_KICK (off by default) is the sched_ext habit fair.c lacks: a shared
	 * LLC queue and an idle CPU kicked at once. A task a higher class pushed off its CPU
	 * (SCX_ENQ_REENQ) goes that way too: our tick cannot run there to call a puller.
	 */
	if ((feats && feat(FEAT_IDLE_KICK)) || (enq_flags & SCX_ENQ_REENQ)) {
		bool reenq = enq_flags & SCX_ENQ_REENQ;

		stat_inc(reenq ? STAT_REENQ : STAT_SHARED);
		scx_bpf_dsq_insert_vtime(p, llc_dsq_of(cpu), slice_ns, vtime, enq_flags);
		kick_idle_in_llc(p, cpu, !reenq);
		return;
	}
	/*
	 * fair.c: the task waits on task_cpu(p)'s runqueue: target after a fallback, the CPU
	 * it is still on for a queued wakeup, its own for a preempted task. ttwu wakes that
	 * CPU if it is idle; only a balance (sis_dispatch, sis_tick) moves the task elsewhere.
	 * differs: no wakeup preemption of target's current task (it runs out its slice).
	 */
	stat_inc(STAT_CPU_QUEUED);
	scx_bpf_dsq_insert_vtime(p, CPU_DSQ_BASE + cpu, slice_ns, vtime, enq_flags);
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/* The DSQ whose head has the lower vtime, of a CPU's own and its LLC's. */
static __always_inline bool cpu_dsq_first(u64 cpu_dsq, u64 llc_dsq)
{
	struct task_struct *a = __COMPAT_scx_bpf_dsq_peek(cpu_dsq);
	struct task_struct *b = __COMPAT_scx_bpf_dsq_peek(llc_dsq);

	if (!a)
		return false;
	return !b || !time_after(a->scx.dsq_vtime, b->scx.dsq_vtime);
}

/*
 * ops.dispatch runs while prev is still current and not yet queued, so the queues
 * hold only the others: prev goes on (charged, slice refilled) when its vtime would
 * still be the lowest, or else a weighted task would lose its share to FIFO order.
 */
static __always_inline bool keep_prev(struct task_struct *prev, u64 cpu_dsq, u64 llc_dsq)
{
	struct task_struct *a, *b;
	u64 v;

	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED))
		return false;
	/* prev's vtime as ops.enqueue would queue it: charged, then clamped */
	v = clamp_vtime(charged_vtime(prev));
	a = __COMPAT_scx_bpf_dsq_peek(cpu_dsq);
	b = __COMPAT_scx_bpf_dsq_peek(llc_dsq);
	if ((a && time_after(v, a->scx.dsq_vtime)) || (b && time_after(v, b->scx.dsq_vtime)))
		return false;
	prev->scx.dsq_vtime = v;
	prev->scx.slice = slice_ns;
	return true;
}

/* Take a task from @c's own DSQ, if one there may run here. */
static __always_inline bool pull_from(s32 c)
{
	return scx_bpf_dsq_nr_queued(CPU_DSQ_BASE + c) > 0 &&
	       scx_bpf_dsq_move_to_local(CPU_DSQ_BASE + c, 0);
}

/* The SMT level of sched_balance_newidle(): a sibling's waiting task. */
static __always_inline bool pull_from_core(s32 self)
{
	u32 core = cpu_core[CPU_IDX(self)];
	u32 off = core_off[CPU_IDX(core)], nr = core_nr[CPU_IDX(core)], i;

	bpf_for(i, 0, nr) {
		s32 sib;

		if (i >= MAX_SIBLINGS)
			break;
		sib = core_cpus[CPU_IDX(off + i)];
		if (sib != self && pull_from(sib))
			return true;
	}
	return false;
}

/*
 * One LLC level of sched_balance_newidle(): the busiest CPU queue first
 * (find_busiest_queue()), then any other whose waiting tasks may run here.
 * differs: "busiest" is the most tasks waiting, not the highest weighted load.
 */
static __always_inline bool pull_from_llc(u32 llc, s32 self)
{
	u32 off = llc_off[LLC_IDX(llc)], nr = llc_nr[LLC_IDX(llc)], i;
	s32 busiest = -1, most = 0;

	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)], q;

		if (c == self)
			continue;
		q = scx_bpf_dsq_nr_queued(CPU_DSQ_BASE + c);
		if (q > most) {
			most = q;
			busiest = c;
		}
	}
	if (busiest < 0)
		return false;
	if (pull_from(busiest))
		return true;
	bpf_for(i, 0, nr) {
		s32 c = llc_cpus[CPU_IDX(off + i)];

		if (c != self && c != busiest && pull_from(c))
			return true;
	}
	return false;
}

/*
 * Our queues first; then, about to go idle, sched_balance_newidle(): pull from a
 * sibling, the LLC, the node's other LLCs, then the rest of the machine.
 * differs: no avg_idle / max_newidle_lb_cost gate: a CPU about to idle always looks.
 */
void BPF_STRUCT_OPS(sis_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 my_llc = cpu_llc[CPU_IDX(cpu)], my_node = cpu_node[CPU_IDX(cpu)];
	u64 cpu_dsq = CPU_DSQ_BASE + cpu, llc_dsq = llc_dsq_of(cpu);
	u32 i, pass;

	if (keep_prev(prev, cpu_dsq, llc_dsq))
		return;
	if (cpu_dsq_first(cpu_dsq, llc_dsq)) {
		if (scx_bpf_dsq_move_to_local(cpu_dsq, 0))
			return;
	}
	if (scx_bpf_dsq_move_to_local(llc_dsq, 0))
		return;
	if (scx_bpf_dsq_move_to_local(cpu_dsq, 0))
		return;
	if (known_cpu(cpu) && (pull_from_core(cpu) || pull_from_llc(my_llc, cpu))) {
		stat_inc(STAT_PULL);
		return;
	}
	/* other LLCs: of our NUMA node first, then the rest; shared DSQ, then CPU queues */
	bpf_for(pass, 0, 2) {
		bpf_for(i, 0, nr_llcs) {
			if (i == my_llc || (llc_node[LLC_IDX(i)] == my_node) != (pass == 0))
				continue;
			if (scx_bpf_dsq_move_to_local(LLC_DSQ_BASE + i, 0) || pull_from_llc(i, cpu)) {
				stat_inc(STAT_STEAL);
				return;
			}
		}
	}
	/* tasks woken on a CPU onlined since the load wait here until the restart */
	if (llc_dsq != ORPHAN_DSQ && scx_bpf_dsq_move_to_local(ORPHAN_DSQ, 0)) {
		stat_inc(STAT_STEAL);
		return;
	}
	/* nothing else to run: let prev go on */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		prev->scx.dsq_vtime = charged_vtime(prev);
		prev->scx.slice = slice_ns;
	}
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
 * nohz_balancer_kick(): at the tick of a CPU with tasks waiting in its queue, wake an
 * idle CPU the first of them may run on (of this LLC first, else any) to pull it in
 * its sis_dispatch.
 * differs: every such tick, not paced by nohz.next_balance; the kicked CPU pulls for
 * itself only, where fair.c's idle-load balancer balances for every idle CPU.
 */
void BPF_STRUCT_OPS(sis_tick, struct task_struct *p)
{
	s32 cpu = bpf_get_smp_processor_id(), c = -1;
	const struct cpumask *idle;
	struct task_struct *head;

	if (!valid_cpu(cpu) || scx_bpf_dsq_nr_queued(CPU_DSQ_BASE + cpu) <= 0)
		return;
	head = __COMPAT_scx_bpf_dsq_peek(CPU_DSQ_BASE + cpu);
	if (!head || head->nr_cpus_allowed == 1)
		return;
	idle = scx_bpf_get_idle_cpumask();
	if (known_cpu(cpu))
		c = first_idle(idle, head->cpus_ptr, cpu_llc[CPU_IDX(cpu)], cpu);
	if (c < 0)
		c = first_idle(idle, head->cpus_ptr, NO_LLC, cpu);
	scx_bpf_put_idle_cpumask(idle);
	if (c >= 0 && scx_bpf_test_and_clear_cpu_idle(c)) {
		scx_bpf_kick_cpu(c, SCX_KICK_IDLE);
		stat_inc(STAT_TICK_KICK);
	}
}

/*
 * A higher class (RT, deadline) took the CPU: hand the tasks already in its local
 * DSQ back to ops.enqueue, which queues them on the LLC's DSQ for the other CPUs.
 */
void BPF_STRUCT_OPS(sis_cpu_release, s32 cpu, struct scx_cpu_release_args *args)
{
	scx_bpf_reenqueue_local();
}

/* A wakeup starts the latency clock; the step that placed it names the histogram. */
void BPF_STRUCT_OPS(sis_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!tctx)
		return;
	if (!(enq_flags & SCX_ENQ_WAKEUP)) {
		tctx->wake_ts = 0;
		return;
	}
	/*
	 * No select_cpu for this wakeup: a task that cannot move, or (TTWU_QUEUE's on-CPU
	 * path, SCX_OPS_ALLOW_QUEUED_WAKEUP) one queued to the CPU it is still on.
	 */
	if (!tctx->selected) {
		tctx->placed_by = bound_to_cpu(p) ? LAT_NO_SELECT : LAT_QUEUED;
		if (tctx->placed_by == LAT_QUEUED)
			stat_inc(STAT_QUEUED_WAKEUP);
	}
	tctx->selected = false;
	tctx->wake_ts = scx_bpf_now();
}

void BPF_STRUCT_OPS(sis_running, struct task_struct *p)
{
	struct cpu_ctx *c = &cpu_ctxs[CPU_IDX(scx_bpf_task_cpu(p))];
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	u64 now = scx_bpf_now();
	struct sis_cpu_stats *s;

	if (time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
	c->running_since = now;
	if (!tctx || !tctx->wake_ts)
		return;
	s = cpu_stats();
	if (s && now > tctx->wake_ts && tctx->placed_by < NR_LAT_CLASSES)
		s->lat[tctx->placed_by][lat_bucket(now - tctx->wake_ts) & (NR_LAT_BUCKETS - 1)]++;
	tctx->wake_ts = 0;
}

void BPF_STRUCT_OPS(sis_stopping, struct task_struct *p, bool runnable)
{
	struct cpu_ctx *c = &cpu_ctxs[CPU_IDX(scx_bpf_task_cpu(p))];
	u64 now = scx_bpf_now();

	if (c->running_since && now > c->running_since)
		c->busy_ns += now - c->running_since;
	c->running_since = 0;
	p->scx.dsq_vtime = charged_vtime(p);
}

/*
 * __update_idle_core(): a CPU going idle whose siblings are all idle sets the hint.
 * The siblings are tested in the kernel's idle mask, which a claim clears at once, as
 * fair.c's available_idle_cpu() is false while a wakeup is on its way (ttwu_pending);
 * @cpu itself counts as idle whether or not the mask has caught up with it yet.
 */
void BPF_STRUCT_OPS(sis_update_idle, s32 cpu, bool idle)
{
	const struct cpumask *idle_mask;
	u32 core, off, nr, i;

	if (!idle || !smt_enabled || !known_cpu(cpu))
		return;
	core = cpu_core[CPU_IDX(cpu)];
	off = core_off[CPU_IDX(core)];
	nr = core_nr[CPU_IDX(core)];
	idle_mask = scx_bpf_get_idle_cpumask();
	bpf_for(i, 0, nr) {
		s32 sib;

		if (i >= MAX_SIBLINGS)
			break;
		sib = core_cpus[CPU_IDX(off + i)];
		if (sib != cpu && !available_idle_cpu(idle_mask, sib)) {
			scx_bpf_put_idle_cpumask(idle_mask);
			return;
		}
	}
	scx_bpf_put_idle_cpumask(idle_mask);
	set_idle_cores(cpu, 1);
}

/*
 * SIS_UTIL's update_idle_cpu_scan(): nr_idle_scan from LLC utilisation.
 * differs: utilisation is our own busy time decayed per 25 ms period, not PELT.
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

static int refresh_util(void *map, int *key, struct util_timer *t)
{
	u64 now = scx_bpf_now(), period = now - util_last_refresh;
	u32 cpu, llc;

	if (!period)
		period = 1;
	bpf_for(llc, 0, nr_llcs)
		llc_ctxs[LLC_IDX(llc)].util = 0;
	bpf_for(cpu, 0, nr_cpu_ids) {
		struct cpu_ctx *c = &cpu_ctxs[CPU_IDX(cpu)];
		u64 since = c->running_since, busy = c->busy_ns, sample;

		if (since && now > since)
			busy += now - since;
		sample = busy > c->last_busy_ns ? busy - c->last_busy_ns : 0;
		c->last_busy_ns = busy;
		sample = sample * CAPACITY_SCALE / period;
		if (sample > CAPACITY_SCALE)
			sample = CAPACITY_SCALE;
		c->util = (c->util + sample) / 2;
		llc_ctxs[LLC_IDX(cpu_llc[CPU_IDX(cpu)])].util += c->util;
	}
	bpf_for(llc, 0, nr_llcs) {
		struct llc_ctx *l = &llc_ctxs[LLC_IDX(llc)];

		WRITE_ONCE(l->nr_idle_scan, nr_idle_scan(l->util, llc_nr[LLC_IDX(llc)]));
	}
	util_last_refresh = now;
	/* the hidden test of the ejection path: an error about 40 periods after load */
	if (test_runtime_error && ++util_refreshes >= 40)
		scx_bpf_error("deliberate runtime error (--test-runtime-error)");
	bpf_timer_start(&t->timer, UTIL_PERIOD_NS, 0);
	return 0;
}

s32 BPF_STRUCT_OPS(sis_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->recent_used_cpu = -1;
	p->scx.dsq_vtime = vtime_now;
	return 0;
}

void BPF_STRUCT_OPS(sis_enable, struct task_struct *p)
{
	p->scx.dsq_vtime = vtime_now;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(sis_init)
{
	struct util_timer *t;
	u32 zero = 0, llc, cpu;
	s32 ret;

	bpf_for(cpu, 0, nr_cpu_ids) {
		ret = scx_bpf_create_dsq(CPU_DSQ_BASE + cpu, -1);
		if (ret) {
			scx_bpf_error("failed to create the DSQ of CPU %u: %d", cpu, ret);
			return ret;
		}
	}
	bpf_for(llc, 0, nr_llcs) {
		ret = scx_bpf_create_dsq(LLC_DSQ_BASE + llc, llc_node[LLC_IDX(llc)]);
		if (ret) {
			scx_bpf_error("failed to create the DSQ of LLC %u: %d", llc, ret);
			return ret;
		}
		llc_ctxs[LLC_IDX(llc)].nr_idle_scan = llc_nr[LLC_IDX(llc)];
	}
	ret = scx_bpf_create_dsq(ORPHAN_DSQ, -1);
	if (ret) {
		scx_bpf_error("failed to create the orphan DSQ: %d", ret);
		return ret;
	}
	t = bpf_map_lookup_elem(&util_timer, &zero);
	if (!t)
		return -ENOENT;
	util_last_refresh = scx_bpf_now();
	bpf_timer_init(&t->timer, &util_timer, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&t->timer, refresh_util);
	return bpf_timer_start(&t->timer, UTIL_PERIOD_NS, 0);
}

void BPF_STRUCT_OPS(sis_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(sis_ops,
	       .select_cpu = (void *)sis_select_cpu,
	       .enqueue = (void *)sis_enqueue,
	       .dispatch = (void *)sis_dispatch,
	       .tick = (void *)sis_tick,
	       .runnable = (void *)sis_runnable,
	       .running = (void *)sis_running,
	       .stopping = (void *)sis_stopping,
	       .update_idle = (void *)sis_update_idle,
	       .cpu_release = (void *)sis_cpu_release,
	       .init_task = (void *)sis_init_task,
	       .enable = (void *)sis_enable,
	       .init = (void *)sis_init,
	       .exit = (void *)sis_exit,
	       .flags = SCX_OPS_KEEP_BUILTIN_IDLE,
	       .timeout_ms = 10000,
	       .name = "sis");
