/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Constants and structs shared by the BPF scheduler and the Rust loader.
 * Feature names, defaults and descriptions live in src/features.rs, keyed by the
 * bits below.
 */
#ifndef __INTF_H
#define __INTF_H

#ifndef __VMLINUX_H__
typedef unsigned long long u64;
typedef unsigned int u32;
typedef int s32;
typedef long long s64;
#endif

enum consts {
	MAX_CPUS = 1024,	/* power of two: indexes are masked with MAX_CPUS - 1 */
	MAX_LLCS = 256,
	MAX_NODES = 64,
	MAX_SIBLINGS = 8,
	/* SIS_UTIL refresh period and the kernel's LLC imbalance_pct */
	UTIL_PERIOD_NS = 25 * 1000 * 1000,
	SIS_IMBALANCE_PCT = 117,
	CAPACITY_SCALE = 1024,
	/*
	 * LLC index of a CPU the topology does not place: offline, or online since the
	 * loader last read sysfs (until it has read it again).
	 */
	NO_LLC = MAX_LLCS - 1,
	/* per-LLC shared DSQ ids are LLC_DSQ_BASE + llc, per-CPU ones CPU_DSQ_BASE + cpu */
	LLC_DSQ_BASE = 1 << 16,
	/* the LLC DSQ of unknown CPUs: every CPU consumes it last */
	ORPHAN_DSQ = LLC_DSQ_BASE + NO_LLC,
	CPU_DSQ_BASE = 1 << 17,
	/*
	 * sysctl_sched_migration_cost: rq->avg_idle starts at twice it and is capped at
	 * twice max_idle_balance_cost, which never decays below it
	 */
	MIGRATION_COST_NS = 500 * 1000,
	/* SIS_PROP's minimum walk, and SIS_AVG_CPU's fuzz factor on avg_idle */
	SIS_PROP_MIN_NR = 4,
	SIS_AVG_CPU_DIV = 512,
	/* the sched_ext watchdog's timeout (ops.timeout_ms), and half of it */
	WATCHDOG_MS = 10000,
	STARVE_MS = WATCHDOG_MS / 2,
};

/* Feature bits: one per select_idle_sibling step we can switch off. */
enum sis_feature {
	FEAT_WAKE_AFFINE = 1 << 0,
	FEAT_IDLE_CORE = 1 << 1,
	FEAT_IDLE_SMT = 1 << 2,
	FEAT_RECENT_USED = 1 << 3,
	FEAT_SIS_UTIL = 1 << 4,
	/* not a fair.c step: a sched_ext habit, off by default (see sis_enqueue) */
	FEAT_IDLE_KICK = 1 << 5,
	/* the scan bounds of earlier kernels, off by default as in today's fair.c */
	FEAT_SIS_AVG_CPU = 1 << 6,
	FEAT_SIS_PROP = 1 << 7,
	/* EEVDF around the search: the kernel's sched/features of the same names */
	FEAT_PLACE_LAG = 1 << 8,
	FEAT_PLACE_DEADLINE_INITIAL = 1 << 9,
	FEAT_PLACE_REL_DEADLINE = 1 << 10,
	FEAT_RUN_TO_PARITY = 1 << 11,
	FEAT_PREEMPT_SHORT = 1 << 12,
	FEAT_WAKEUP_PREEMPTION = 1 << 13,
	FEAT_DELAY_DEQUEUE = 1 << 14,
	FEAT_HRTICK = 1 << 15,
	/* wake_affine()'s parts, as the kernel's features; WAKE_WIDE is fair.c's wake_wide() */
	FEAT_WA_IDLE = 1 << 16,
	FEAT_WA_WEIGHT = 1 << 17,
	FEAT_WA_BIAS = 1 << 18,
	FEAT_WAKE_WIDE = 1 << 19,
	/* sched_balance_newidle()'s sampling by success rate, as the kernel's features */
	FEAT_NI_RANDOM = 1 << 20,
	FEAT_NI_RATE = 1 << 21,
};

/*
 * struct sched_avg, the PELT signals of a task or a CPU (pelt.h). It leads each task's
 * storage, where `scx_sis --pelt PID` reads it.
 */
struct sis_sched_avg {
	u64 last_update_time;	/* the task clock, ns, as far as the sums reach */
	u64 load_sum;
	u64 runnable_sum;
	u64 util_sum;
	u64 load_avg;
	u64 runnable_avg;
	u64 util_avg;
	u32 period_contrib;	/* 1024 ns units of the current period already summed */
	u32 cpu;		/* the CPU whose sums hold it (task); unused for a CPU */
};

/*
 * Live control, the one entry of the `ctl` map, pinned in bpffs by the loader so
 * that `scx_sis --set` can change the features of the running scheduler.
 */
struct sis_ctl {
	u64 features;		/* enum sis_feature bits */
	u64 generation;		/* bumped by every change */
};

/* Per-CPU counters, summed by the loader. */
enum sis_stat {
	STAT_SELECT,		/* select_cpu calls */
	/* placements by step: these ten sum to STAT_SELECT (STAT_IDLEST is the tenth) */
	STAT_CURRENT_CPU,	/* WF_CURRENT_CPU: the waker's CPU, unclaimed (select_task_rq_fair()) */
	STAT_TARGET,
	STAT_PREV,
	STAT_KTHREAD,		/* per-CPU kthread stacking: prev, unclaimed, as the waker's CPU */
	STAT_RECENT,
	STAT_IDLE_CORE,
	STAT_IDLE_SMT,
	STAT_IDLE_CPU,
	STAT_FALLBACK,
	STAT_IDLEST,		/* fork: an idle CPU from the slow path (find_idlest_cpu) */
	STAT_LOST_CLAIM,	/* idle CPU taken by someone else between test and claim */
	STAT_SCANNED,		/* CPUs whose idle state the searches tested */
	STAT_SCAN_CALLS,	/* select_idle_cpu walks started */
	STAT_SIS_UTIL_CUT,	/* walks stopped by the SIS_UTIL limit (or skipped: nr == 1) */
	STAT_SIS_AVG_CPU_CUT,	/* walks skipped by SIS_AVG_CPU (avg_idle / 512 < avg_scan_cost + 1) */
	STAT_SIS_PROP_CUT,	/* walks stopped by SIS_PROP's limit (SIS_UTIL off or not overriding) */
	STAT_SCAN_TIMED,	/* walks timed for avg_scan_cost (SIS_AVG_CPU or SIS_PROP on) */
	STAT_SCAN_NS,		/* their summed cost, ns: the samples avg_scan_cost averages */
	STAT_HINT_SET,		/* has_idle_cores went 0 -> 1 */
	STAT_HINT_TRUE,		/* full core scans that found an idle core */
	STAT_HINT_FALSE,	/* full core scans that found none: hint cleared */
	STAT_DIRECT,		/* dispatched straight to a claimed CPU's local DSQ */
	STAT_SHARED,		/* enqueued on an LLC's shared DSQ */
	STAT_PINNED,		/* single-CPU (or migration-disabled) tasks queued on their CPU */
	STAT_STEAL,		/* a task taken from another LLC: its shared DSQ or a CPU's DSQ there */
	STAT_STEAL_REMOTE,	/* ... of which from an LLC of another NUMA node */
	STAT_MIGRATE,		/* select_cpu returned cpu != prev_cpu */
	STAT_MIGRATE_LLC,	/* ... in another LLC */
	STAT_WAKE_AFFINE,	/* WAKE_AFFINE moved target to the waker's CPU */
	STAT_WA_WEIGHT,		/* ... of which by WA_WEIGHT (the waker's CPU the lighter) */
	STAT_WAKE_WIDE,		/* wake_wide(): flips too many for an affine wakeup, target = prev */
	STAT_WAKE_FAR,		/* no SD_WAKE_AFFINE domain spans the waker's and prev's nodes */
	STAT_FORK_LOADED,	/* fork fallbacks sent to the least loaded CPU, not the parent's */
	STAT_FORK_NUMA_LOCAL,	/* fork searches adjust_numa_imbalance() kept on the parent's node */
	/*
	 * Placement quality, read from the kernel's idle masks (the task's allowed
	 * CPUs in target's LLC) just before deciding; counted when --no-quality is
	 * not given. Q_WAKEUPS is the number of wakeups classified.
	 */
	STAT_Q_WAKEUPS,
	STAT_Q_IDLE_CORE,	/* a fully idle core existed */
	STAT_Q_MISSED_CORE,	/* ... and the task went to a CPU whose core was not idle */
	STAT_Q_IDLE_CPU,	/* an idle CPU existed */
	STAT_Q_MISSED_CPU,	/* ... and the task went to a CPU that was not idle */
	STAT_Q_STACKED,		/* the chosen CPU was not idle (running or about to run a task) */
	STAT_Q_NR_IDLE,		/* sum over wakeups of the idle CPUs there were */
	STAT_Q_MISSED_CORE_EARLY, /* missed cores placed by the steps before the core test */
	/* the kernel's queueing and balancing, emulated around the search */
	STAT_QUEUED_WAKEUP,	/* wakeups that reached enqueue without select_cpu (TTWU_QUEUE on-CPU) */
	STAT_CPU_QUEUED,	/* tasks queued on their own CPU's DSQ (fallback, current CPU, kthread, queued wakeup, requeue) */
	STAT_PULL,		/* newidle balance: a task taken from another CPU's DSQ in the LLC */
	STAT_TICK_KICK,		/* nohz kick: a tick with tasks waiting woke an idle CPU to pull */
	STAT_IDLE_KICK,		/* IDLE_KICK: an idle CPU kicked at enqueue */
	STAT_REENQ,		/* tasks a higher class pushed off, left for the LLC's other CPUs + kick */
	/* the periodic balance of busy CPUs (balance.bpf.h): tasks moved per level, in order */
	STAT_LB_SMT,
	STAT_LB_LLC,
	STAT_LB_NODE,
	STAT_LB_SYS,
	STAT_LB_RUNS,		/* sched_balance_rq() calls: a level due on a busy CPU */
	STAT_LB_HOT,		/* refusals by task_hot() in the busy balance */
	STAT_NOHZ_KICK,		/* nohz kick: two busy CPUs in an LLC woke an idle CPU to balance */
	STAT_LB_ACTIVE,		/* active balance: running tasks an idle CPU's balance pushed to it */
	/* sched_balance_newidle()'s gates (newidle.bpf.h) */
	STAT_NI_RUNS,		/* newidle walks begun under the budget (not a kicked CPU's) */
	STAT_NI_COST,		/* ... stopped by avg_idle < curr_cost + max_newidle_lb_cost, before a level */
	STAT_NI_RANDOM,		/* levels NI_RANDOM's dice passed over */
	STAT_NI_NUMA_KEPT,	/* NUMA levels a newidle walk found balanced: nothing to take there */
	STAT_NI_HOT,		/* refusals by task_hot() in newidle pulls */
	/* EEVDF around the search */
	STAT_WAKEUP_PREEMPT,	/* wakeups that preempted the curr of their CPU (wakeup_preempt_fair) */
	STAT_PREEMPT_IDLE,	/* ... of which a SCHED_IDLE curr, by a non-idle wakee */
	STAT_PREEMPT_SHORT,	/* ... of which past curr's protection by a shorter request */
	STAT_FORK_PREEMPT,	/* ... of which a fork's (wake_up_new_task(), WF_FORK) */
	STAT_PLACE_LAG,		/* placements that kept the lag the task left with (PLACE_LAG) */
	STAT_DEADLINE_INITIAL,	/* new tasks' first deadlines, half a request away (PLACE_DEADLINE_INITIAL) */
	STAT_REL_DEADLINE,	/* placements that kept a deadline relative to vruntime (PLACE_REL_DEADLINE) */
	STAT_DELAY_PAID,	/* wakeups whose sleeping debt V's progress paid down (DELAY_DEQUEUE) */
	STAT_PROTECT_CUT,	/* runs protected short of their deadline (NO_RUN_TO_PARITY, a shorter request) */
	STAT_PICK_INELIGIBLE,	/* picks that passed over earlier deadlines not yet eligible */
	STAT_SCHED_IDLE,	/* wakeups placed on a CPU running only SCHED_IDLE tasks (choose_idle_cpu) */
	STAT_STARVED,		/* tasks queued longer than STARVE_MS, handed to the global DSQ */
	STAT_OFFLINE_KICK,	/* runnable tasks stopped on a CPU sched_ext holds offline: it kicked itself */
	STAT_HRTICK,		/* runs the HRTICK timer ended before the tick */
	STAT_HRTICK_ARMED,	/* HRTICK timer armings */
	STAT_SUMS_RETRY,	/* reads of a CPU's EEVDF sums retried: an update was under way */
	STAT_ACCT_RACE,		/* EEVDF count moves that gave way to another CPU's (rq_claim()) */
	STAT_V_JUMP,		/* placements that found V moved > 2^36 ns since its last reading */
	NR_SIS_STATS,
};

/* The placement steps are the counters STAT_CURRENT_CPU..STAT_IDLEST, in fair.c's order. */
enum sis_steps {
	FIRST_STEP = STAT_CURRENT_CPU,
	NR_STEPS = STAT_IDLEST - STAT_CURRENT_CPU + 1,
};

/*
 * Wakeup latency (runnable -> running) histograms, split by the step that placed
 * the wakeup. Bucket 0 is [0, 1) us, bucket i >= 1 is [2^(i-1), 2^i) us; the last
 * bucket also takes everything longer.
 */
enum lat_class {
	LAT_IDLE_CORE,
	LAT_IDLE_SMT,
	LAT_IDLE_CPU,
	LAT_TARGET_PREV_RECENT,
	LAT_FALLBACK,
	LAT_NO_SELECT,		/* woke without select_cpu: single-CPU or migration-disabled tasks */
	LAT_QUEUED,		/* woke without select_cpu: queued to the CPU it is still on */
	NR_LAT_CLASSES,
};

enum hist_consts {
	NR_LAT_BUCKETS = 32,
	/* CPUs tested per select_cpu: exact for 0..63, the last bucket is >= 64 */
	NR_SCAN_BUCKETS = 65,
};

struct sis_cpu_stats {
	/*
	 * A seqcount for the loader's copy of this struct, which the kernel takes word
	 * by word from the first to the last: select_cpu bumps seq_start (the LAST word)
	 * before it updates the counters and sets seq_done (the FIRST word) equal after.
	 * A copy reads seq_done first and seq_start last, so it is clean only when the
	 * two are equal: no update had started when the copy began, and none had begun
	 * by the time it ended. (With the order the other way round, a copy that began
	 * mid-update could read both words new and the counters old.)
	 */
	u64 seq_done;
	u64 cnt[NR_SIS_STATS];
	u64 scan_max;		/* longest single search, in CPUs tested */
	u64 last_scan;		/* CPUs tested by this CPU's latest search */
	u64 lat[NR_LAT_CLASSES][NR_LAT_BUCKETS];
	u64 scan_hist[NR_SCAN_BUCKETS];
	u64 seq_start;
};

#endif /* __INTF_H */
