// SPDX-License-Identifier: GPL-2.0
/*
 * sis-probe trace: wakeup latency and placement quality of ANY scheduler, read
 * from outside through tracefs (sched_waking, sched_wakeup, sched_switch), so that
 * EEVDF, peer sched_ext schedulers and scx_sis are measured the same way.
 *
 *   sis-probe trace start [KB]     clear and enable the events (KB of buffer per CPU),
 *                                  then visit every CPU once so each has a switch
 *   sis-probe trace stop PREFIX    disable, read the trace, print one `trace:` line
 *                                  for the tasks whose comm starts with PREFIX
 *                                  (`-` means every task)
 *   sis-probe trace replay FILE PREFIX CPUS:LLC:SMT
 *                                  the same from a saved trace, on a made-up topology
 *                                  (CPUS CPUs, LLCs of LLC consecutive CPUs, cores of
 *                                  SMT), decision probes assumed on: the tracer's test
 *
 * Placement quality, as scx_sis counts it in select_cpu: the decision is the return
 * of the scheduling class's select_task_rq (select_task_rq_fair, select_task_rq_scx),
 * caught by a return probe (kprobe_events) on the waker's CPU right after that CPU's
 * sched_waking; the idle state of every CPU at that moment is the truth the decision
 * is judged against, and the returned CPU is the decision. A CPU is idle while it runs
 * the idle task and no wakeup has been sent its way since (fair.c's idle_cpu() also
 * checks ttwu_pending; scx_sis's claim clears the idle bit at the same point). With
 * queued wakeups the sched_wakeup event only comes from the target CPU after an IPI,
 * so from sched_waking on the task's CPU counts as taken (for the other wakeups: its
 * own decision sees it as it was), and from sched_migrate_task on the destination.
 * Without kprobe events (decision_probe=0) the snapshot is taken at sched_waking and
 * sched_wakeup's CPU is the decision.
 * Considered: the CPUs of the decision's LLC (target's: select_idle_sibling() never
 * leaves it); all CPUs count as allowed.
 * Wakeups that made no placement decision are counted apart (no_decision) and left
 * out of both measures: no select_task_rq return between sched_waking and
 * sched_wakeup (ttwu_runnable(), the on-CPU wakelist, a single-CPU task); without the
 * probe, those whose task was still on its runqueue by its last sched_switch.
 * The same wakeups are classified a second time by where the task first ran (ran_*:
 * a balance may move it before it runs), against the same snapshot; ran_moved counts
 * those that first ran elsewhere than the decision.
 * Latency: sched_wakeup -> the sched_switch that runs the task (as runqlat does).
 * Each wait is counted again by its CPU's state at sched_wakeup (lat_idle_cpu_*: the
 * CPU sched_wakeup names ran its idle task; lat_busy_cpu_*: it ran a task), with the
 * share of the waits at or above the p99 that were on an idle CPU, and the waits of
 * LONG_US or more per 1000 (lat_over_250us_per_1k: a count, steadier than a percentile
 * where a small population of long waits sits at the p99).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing/"
#define MAX_PID (1 << 22)
#define LONG_US 250		/* lat_over_250us_per_1k's bound */

/*
 * CPU sets are bitmaps of `words` 64-bit words, sized for the machine's (or the
 * replay's) CPU count at start: any CPU number is judged, none is dropped.
 */
static int nr_cpus, words;
static unsigned long long *llc_bits;  /* nr_cpus rows: each CPU's LLC's CPUs */
static unsigned long long *core_bits; /* nr_cpus rows: each CPU's siblings */
static unsigned long long *snaps;     /* MAX_PID rows: pending[pid]'s idle snapshot */

/* Row @i of a bitmap table. */
static unsigned long long *row(unsigned long long *table, long i)
{
	return table + (size_t)i * words;
}

static void set_bit(unsigned long long *b, int c)
{
	b[c / 64] |= 1ULL << (c % 64);
}

static void clear_bit(unsigned long long *b, int c)
{
	b[c / 64] &= ~(1ULL << (c % 64));
}

struct pending {
	int probed;			  /* the decision probe fired for this wakeup */
	int probed_cpu;			  /* ... and the CPU it returned */
	long long woke_ns;		  /* sched_wakeup time; 0: none pending */
	int woke_idle;			  /* ... onto a CPU running its idle task */
	int waking;			  /* a sched_waking snapshot is held */
	int no_decision;		  /* woken while still on its runqueue */
	int decided;			  /* the CPU sched_wakeup named, until the task runs; -1 none */
	int held;			  /* CPU marked busy for this wakeup until it lands, or -1 */
	int held_was_idle;		  /* ... and whether it was idle before */
	long held_seq;			  /* ... and its switch count then */
};
static struct pending *pend;
static char *on_rq;		/* 1: running, or switched out still runnable */
static long *switch_seq;	/* by CPU: sched_switch events seen */
static long *waking_on;		/* by CPU: pid whose sched_waking it sent last, or 0 */
static char *curr_idle;		/* by CPU: running its idle task (the last sched_switch's next) */

/* The per-CPU tables for @cpus CPUs (zeroed); 0 on success. */
static int alloc_cpus(int cpus)
{
	nr_cpus = cpus;
	words = (cpus + 63) / 64;
	llc_bits = calloc((size_t)cpus * words, sizeof(*llc_bits));
	core_bits = calloc((size_t)cpus * words, sizeof(*core_bits));
	switch_seq = calloc(cpus, sizeof(*switch_seq));
	waking_on = calloc(cpus, sizeof(*waking_on));
	curr_idle = calloc(cpus, sizeof(*curr_idle));
	return llc_bits && core_bits && switch_seq && waking_on && curr_idle ? 0 : -1;
}

/* select_task_rq's return, for the classes whose wakeups we judge */
static const char *const decide_fns[] = { "select_task_rq_fair", "select_task_rq_scx" };
#define DECIDE_EVENT "sis_decide_"

/*
 * Write @val to @path opened with @flags (O_APPEND keeps kprobe_events' probes):
 * open(2) and write(2), since stdio's "a" seeks to the end, which tracefs refuses.
 */
static int write_path(const char *path, const char *val, int flags)
{
	int fd = open(path, O_WRONLY | flags);
	ssize_t n = fd < 0 ? -1 : write(fd, val, strlen(val));

	if (fd >= 0 && close(fd))
		n = -1;
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* A tracefs file, relative to TRACEFS; a failure is reported. */
static int write_mode(const char *name, const char *val, int append)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "%s", name);
	if (write_path(path, val, append ? O_APPEND : O_TRUNC)) {
		fprintf(stderr, "trace: writing %s failed: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_file(const char *name, const char *val)
{
	return write_mode(name, val, 0);
}

/*
 * The decision probes: a return probe on each class's select_task_rq, its CPU as a
 * signed int. Returns how many were enabled (a kernel without kprobe events, or
 * without one of the functions, has fewer); the tracer falls back to sched_waking.
 */
static int decide_probes_on(void)
{
	char def[128], en[128];
	int n = 0;

	for (unsigned int i = 0; i < sizeof(decide_fns) / sizeof(decide_fns[0]); i++) {
		snprintf(def, sizeof(def), "r:" DECIDE_EVENT "%u %s cpu=$retval:s32\n", i,
			 decide_fns[i]);
		snprintf(en, sizeof(en), "events/kprobes/" DECIDE_EVENT "%u/enable", i);
		if (!write_mode("kprobe_events", def, 1) && !write_file(en, "1"))
			n++;
	}
	return n;
}

/* Remove the decision probes (a first start, a kernel without them: nothing to do). */
static void decide_probes_off(void)
{
	char buf[160];

	for (unsigned int i = 0; i < sizeof(decide_fns) / sizeof(decide_fns[0]); i++) {
		snprintf(buf, sizeof(buf), TRACEFS "events/kprobes/" DECIDE_EVENT "%u/enable", i);
		/* either may fail: the probe is off already, or does not exist */
		(void)write_path(buf, "0", O_TRUNC);
		snprintf(buf, sizeof(buf), "-:" DECIDE_EVENT "%u\n", i);
		(void)write_path(TRACEFS "kprobe_events", buf, O_APPEND);
	}
}

/* How many decision probes are on now. */
static int decide_probes_enabled(void)
{
	char path[160];
	int n = 0;

	for (unsigned int i = 0; i < sizeof(decide_fns) / sizeof(decide_fns[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), TRACEFS "events/kprobes/" DECIDE_EVENT "%u/enable", i);
		f = fopen(path, "r");
		if (f) {
			n += fgetc(f) == '1';
			fclose(f);
		}
	}
	return n;
}

/*
 * The next item of a CPU list ("0-3,8", as sysfs and our command lines write them): its
 * first and last CPU in *a and *b, *s moved past it and its comma. 1: an item; 0: the
 * end of the list or line; -1: not a CPU list. Shared with probe.c's parse_cpus().
 */
int cpu_list_next(const char **s, long *a, long *b)
{
	char *end;

	if (!**s || **s == '\n')
		return 0;
	*a = *b = strtol(*s, &end, 10);
	if (end == *s || *a < 0)
		return -1;
	if (*end == '-')
		*b = strtol(end + 1, &end, 10);
	*s = *end == ',' ? end + 1 : end;
	return 1;
}

/* "0-3,8" -> bits */
static void parse_list(const char *s, unsigned long long *bits)
{
	long a, b;

	while (cpu_list_next(&s, &a, &b) > 0)
		for (long c = a; c <= b && c < nr_cpus; c++)
			set_bit(bits, c);
}

static int read_list(const char *fmt, int cpu, unsigned long long *bits)
{
	char path[256], buf[4096];
	FILE *f;

	snprintf(path, sizeof(path), fmt, cpu);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	parse_list(buf, bits);
	return 0;
}

static int read_topology(void)
{
	if (alloc_cpus(sysconf(_SC_NPROCESSORS_CONF)))
		return -1;
	for (int c = 0; c < nr_cpus; c++) {
		if (read_list("/sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list", c,
			      row(llc_bits, c)))
			for (int i = 0; i < nr_cpus; i++)
				set_bit(row(llc_bits, c), i);
		if (read_list("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c,
			      row(core_bits, c)))
			set_bit(row(core_bits, c), c);
	}
	return 0;
}

static int bit(const unsigned long long *b, int c)
{
	return c >= 0 && c < nr_cpus && (b[c / 64] >> (c % 64)) & 1;
}

static int trace_start(int kb)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t setsize = CPU_ALLOC_SIZE(ncpu);
	cpu_set_t *set;
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", kb);
	if (write_file("tracing_on", "0") || write_file("buffer_size_kb", buf) ||
	    write_file("trace", "") || write_file("set_event", ""))
		return 1;
	decide_probes_off();
	if (decide_probes_on() < (int)(sizeof(decide_fns) / sizeof(decide_fns[0])))
		fprintf(stderr, "trace: no decision probe on %s: idle snapshots at sched_waking\n",
			"select_task_rq_{fair,scx}");
	if (write_file("events/sched/sched_switch/enable", "1") ||
	    write_file("events/sched/sched_waking/enable", "1") ||
	    write_file("events/sched/sched_wakeup/enable", "1") ||
	    write_file("events/sched/sched_wakeup_new/enable", "1") ||
	    write_file("events/sched/sched_migrate_task/enable", "1") ||
	    write_file("tracing_on", "1"))
		return 1;
	/* a switch on every CPU, so that each one's idle state is known from the start */
	set = CPU_ALLOC(ncpu);
	for (long c = 0; set && c < ncpu; c++) {
		CPU_ZERO_S(setsize, set);
		CPU_SET_S(c, setsize, set);
		if (!sched_setaffinity(0, setsize, set))
			sched_yield();
	}
	CPU_FREE(set);
	return 0;
}

static long long parse_ts(const char *line, const char *ev)
{
	const char *p = ev;

	while (p > line && p[-1] != ' ')
		p--;
	return (long long)(strtod(p, NULL) * 1e9 + 0.5);
}

static long field(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static double pctl(long long *v, long n, double q)
{
	long i;

	if (!n)
		return 0;
	i = (long)(q * n);
	if (i >= n)
		i = n - 1;
	return v[i] / 1000.0;
}

/* Does comm (up to " pid=") start with prefix? */
static int comm_match(const char *comm, const char *prefix)
{
	size_t n = strlen(prefix);

	if (!strcmp(prefix, "-"))
		return 1;
	return !strncmp(comm, prefix, n);
}

struct counts {
	long wakeups, idle_core, missed_core, idle_cpu, missed_cpu, stacked, nr_idle;
	long switches, events, lost_snapshots, no_decision, probed, wakings;
};

/* One wakeup judged in @dec's LLC (the decision's: target's); @to: where it went. */
static void classify(struct counts *k, const unsigned long long *idle, int dec, int to)
{
	const unsigned long long *llc = row(llc_bits, dec >= 0 && dec < nr_cpus ? dec : to);
	int core_exists = 0, cpu_exists = 0, nr_idle = 0, chosen_core_idle = 1;

	for (int c = 0; c < nr_cpus; c++) {
		int whole = 1;

		if (!bit(llc, c) || !bit(idle, c))
			continue;
		nr_idle++;
		cpu_exists = 1;
		for (int s = 0; s < nr_cpus; s++)
			if (bit(row(core_bits, c), s) && !bit(idle, s))
				whole = 0;
		core_exists |= whole;
	}
	for (int s = 0; s < nr_cpus; s++)
		if (bit(row(core_bits, to), s) && !bit(idle, s))
			chosen_core_idle = 0;
	k->wakeups++;
	k->nr_idle += nr_idle;
	if (cpu_exists) {
		k->idle_cpu++;
		k->missed_cpu += !bit(idle, to);
	}
	if (core_exists) {
		k->idle_core++;
		k->missed_core += !chosen_core_idle;
	}
	k->stacked += !bit(idle, to);
}

static double per_1k(long n, long d)
{
	return d ? 1000.0 * n / d : 0;
}

/* A growing list of waits, ns. */
struct waits {
	long long *v;
	long n, cap;
};

static int waits_add(struct waits *w, long long ns)
{
	if (w->n == w->cap) {
		long cap = w->cap ? w->cap * 2 : 4096;
		long long *v = realloc(w->v, cap * sizeof(*v));

		if (!v)
			return -1;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = ns;
	return 0;
}

/* The waits of @w at or above @cut ns. */
static long waits_from(const struct waits *w, long long cut)
{
	long n = 0;

	for (long i = 0; i < w->n; i++)
		n += w->v[i] >= cut;
	return n;
}

/* The `lat_*_cpu_*` fields: waits onto an idle CPU and onto a busy one (see the top). */
static void print_split(struct waits *all, struct waits *on_idle, struct waits *on_busy)
{
	long long cut;
	long tail_idle, tail;

	qsort(on_idle->v, on_idle->n, sizeof(*on_idle->v), cmp_ll);
	qsort(on_busy->v, on_busy->n, sizeof(*on_busy->v), cmp_ll);
	cut = all->n ? (long long)(pctl(all->v, all->n, 0.99) * 1000) : 0;
	tail_idle = waits_from(on_idle, cut);
	tail = tail_idle + waits_from(on_busy, cut);
	printf(" lat_idle_cpu_n=%ld lat_idle_cpu_p50_us=%.1f lat_idle_cpu_p99_us=%.1f"
	       " lat_busy_cpu_n=%ld lat_busy_cpu_p50_us=%.1f lat_busy_cpu_p99_us=%.1f"
	       " lat_tail_idle_cpu_pct=%.1f lat_over_%dus_per_1k=%.2f",
	       on_idle->n, pctl(on_idle->v, on_idle->n, 0.50), pctl(on_idle->v, on_idle->n, 0.99),
	       on_busy->n, pctl(on_busy->v, on_busy->n, 0.50), pctl(on_busy->v, on_busy->n, 0.99),
	       tail ? 100.0 * tail_idle / tail : 0, LONG_US,
	       per_1k(waits_from(all, LONG_US * 1000LL), all->n));
}

/*
 * Events the ring buffer discarded rather than overwrote, over every CPU: its
 * per-CPU stats' "dropped events" and "commit overrun"; 0 in a replay.
 */
static long ring_dropped(void)
{
	char path[96], line[128];
	long n = 0, v;

	for (int c = 0; c < nr_cpus; c++) {
		FILE *f;

		snprintf(path, sizeof(path), TRACEFS "per_cpu/cpu%d/stats", c);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "dropped events: %ld", &v) == 1 ||
			    sscanf(line, "commit overrun: %ld", &v) == 1)
				n += v;
		fclose(f);
	}
	return n;
}

/*
 * Replay a trace (tracefs's text) and print the `trace:` line; @probes: decision probes
 * were on; @dropped: events the ring buffer discarded (ring_dropped()).
 */
static int replay(FILE *f, const char *prefix, int probes, long dropped)
{
	static char line[4096];
	unsigned long long *idle = calloc(words, sizeof(*idle));
	char *seen = calloc(nr_cpus, 1);
	size_t snap_size = words * sizeof(*idle);
	struct waits lat = {}, on_idle = {}, on_busy = {};
	struct counts k = {}, kr = {};
	long moved = 0;
	long lost = 0;

	pend = calloc(MAX_PID, sizeof(*pend));
	/* untouched rows stay unmapped zero pages: memory for the pids that wake only */
	snaps = calloc((size_t)MAX_PID * words, sizeof(*snaps));
	on_rq = calloc(MAX_PID, 1);
	if (!idle || !seen || !pend || !snaps || !on_rq)
		return 1;
	for (long i = 0; i < MAX_PID; i++)
		pend[i].held = pend[i].decided = -1;

	/* pass 1: a CPU's state before its first switch is that switch's prev side */
	for (int c = 0; c < nr_cpus; c++)
		set_bit(idle, c);
	while (fgets(line, sizeof(line), f)) {
		char *ev = strstr(line, ": sched_switch: ");
		char *br = strchr(line, '[');
		int cpu;

		if (line[0] == '#' && strstr(line, "entries-in-buffer")) {
			/* "# entries-in-buffer/entries-written: 123/456" */
			char *p = strchr(line, ':');
			long a = p ? strtol(p + 1, &p, 10) : 0;
			long b = p && *p == '/' ? strtol(p + 1, NULL, 10) : a;

			lost = b - a;
		}
		if (!ev || !br)
			continue;
		cpu = atoi(br + 1);
		if (cpu < 0 || cpu >= nr_cpus || seen[cpu])
			continue;
		seen[cpu] = 1;
		curr_idle[cpu] = field(ev, " prev_pid=") == 0;
		if (!curr_idle[cpu])
			clear_bit(idle, cpu);
	}
	rewind(f);

	/* pass 2: replay */
	while (fgets(line, sizeof(line), f)) {
		char *br = strchr(line, '['), *ev;
		long pid;

		if (line[0] == '#' || !br)
			continue;
		k.events++;
		if ((ev = strstr(line, ": sched_switch: "))) {
			int cpu = atoi(br + 1);
			long prev = field(ev, " prev_pid="), next = field(ev, " next_pid=");

			if (cpu < 0 || cpu >= nr_cpus)
				continue;
			k.switches++;
			switch_seq[cpu]++;
			curr_idle[cpu] = next == 0;
			if (next == 0)
				set_bit(idle, cpu);
			else
				clear_bit(idle, cpu);
			if (prev > 0 && prev < MAX_PID) {
				const char *st = strstr(ev, " prev_state=");

				/* R or R+: preempted, still on its runqueue */
				on_rq[prev] = st && st[12] == 'R';
			}
			if (next > 0 && next < MAX_PID)
				on_rq[next] = 1;
			if (next > 0 && next < MAX_PID && pend[next].decided >= 0) {
				classify(&kr, row(snaps, next), pend[next].decided, cpu);
				moved += cpu != pend[next].decided;
				pend[next].decided = -1;
			}
			if (next > 0 && next < MAX_PID && pend[next].woke_ns) {
				long long ns = parse_ts(line, ev) - pend[next].woke_ns;

				if (waits_add(&lat, ns) ||
				    waits_add(pend[next].woke_idle ? &on_idle : &on_busy, ns))
					return 1;
				pend[next].woke_ns = 0;
			}
		} else if ((ev = strstr(line, ": sched_waking: "))) {
			char *comm = strstr(ev, "comm=");
			long from = field(ev, " target_cpu=");

			int waker = atoi(br + 1);

			pid = field(ev, " pid=");
			if (pid <= 0 || pid >= MAX_PID)
				continue;
			if (comm && comm_match(comm + 5, prefix)) {
				k.wakings++;
				memcpy(row(snaps, pid), idle, snap_size);
				pend[pid].waking = 1;
				pend[pid].no_decision = on_rq[pid];
				pend[pid].probed = 0;
			}
			/* every task's: the next decision on this CPU is this wakeup's */
			if (waker >= 0 && waker < nr_cpus)
				waking_on[waker] = pid;
			/* until a migration says otherwise, the task lands where it was */
			pend[pid].held = -1;
			if (from >= 0 && from < nr_cpus) {
				pend[pid].held = from;
				pend[pid].held_was_idle = bit(idle, from);
				pend[pid].held_seq = switch_seq[from];
				clear_bit(idle, from);
			}
		} else if ((ev = strstr(line, ": " DECIDE_EVENT))) {
			/* the decision, on the waker's CPU, for the task whose waking it sent last */
			int waker = atoi(br + 1), h;
			long to = field(ev, " cpu=");

			/* a fork's or an exec's decision (wake_up_new_task, sched_exec) is no wakeup */
			if (!strstr(ev, "try_to_wake_up"))
				continue;
			if (waker < 0 || waker >= nr_cpus || !(pid = waking_on[waker]))
				continue;
			waking_on[waker] = 0;
			if (!pend[pid].waking)
				continue;
			memcpy(row(snaps, pid), idle, snap_size);
			/* its own hold on its old CPU is not a task there */
			h = pend[pid].held;
			if (h >= 0 && pend[pid].held_was_idle && switch_seq[h] == pend[pid].held_seq)
				set_bit(row(snaps, pid), h);
			pend[pid].probed = 1;
			pend[pid].probed_cpu = to;
		} else if ((ev = strstr(line, ": sched_migrate_task: "))) {
			long to = field(ev, " dest_cpu="), h;

			pid = field(ev, " pid=");
			if (pid <= 0 || pid >= MAX_PID || to < 0 || to >= nr_cpus)
				continue;
			h = pend[pid].held;
			if (h < 0)
				continue;
			/* the waking task goes elsewhere: give its old CPU back */
			if (pend[pid].held_was_idle && switch_seq[h] == pend[pid].held_seq)
				set_bit(idle, h);
			pend[pid].held = to;
			pend[pid].held_was_idle = 0;
			clear_bit(idle, to);
		} else if ((ev = strstr(line, ": sched_wakeup_new: "))) {
			long to = field(ev, " target_cpu=");

			/* a new task is on its way to that CPU: it is no longer idle */
			if (to >= 0 && to < nr_cpus)
				clear_bit(idle, to);
		} else if ((ev = strstr(line, ": sched_wakeup: "))) {
			char *comm = strstr(ev, "comm=");
			long to = field(ev, " target_cpu=");

			/* the classification uses the snapshot from sched_waking; from here on
			 * the target has a task on its way */
			if (to >= 0 && to < nr_cpus)
				clear_bit(idle, to);
			pid = field(ev, " pid=");
			if (pid > 0 && pid < MAX_PID)
				pend[pid].held = -1;
			if (!comm || pid <= 0 || pid >= MAX_PID || !comm_match(comm + 5, prefix))
				continue;
			if (pend[pid].waking && (probes ? !pend[pid].probed : pend[pid].no_decision)) {
				pend[pid].waking = 0;
				k.no_decision++;
				continue;
			}
			pend[pid].woke_ns = parse_ts(line, ev);
			pend[pid].woke_idle = to >= 0 && to < nr_cpus && curr_idle[to];
			if (pend[pid].probed && pend[pid].probed_cpu >= 0 &&
			    pend[pid].probed_cpu < nr_cpus)
				to = pend[pid].probed_cpu;
			if (!pend[pid].waking || to < 0 || to >= nr_cpus) {
				k.lost_snapshots++;
				continue;
			}
			pend[pid].waking = 0;
			k.probed += pend[pid].probed;
			classify(&k, row(snaps, pid), to, to);
			pend[pid].decided = to;
		}
	}
	qsort(lat.v, lat.n, sizeof(*lat.v), cmp_ll);
	printf("trace: comm=%s wakeups=%ld lat_p50_us=%.1f lat_p90_us=%.1f lat_p99_us=%.1f "
	       "lat_p999_us=%.1f lat_max_us=%.1f q_wakeups=%ld missed_idle_core_per_1k=%.1f "
	       "missed_idle_cpu_per_1k=%.1f stacked_per_1k=%.1f idle_cpus_mean=%.2f "
	       "idle_core_existed=%ld idle_cpu_existed=%ld switches=%ld events=%ld "
	       "lost_events=%ld unpaired=%ld no_decision=%ld ran_wakeups=%ld "
	       "ran_missed_idle_core_per_1k=%.1f ran_missed_idle_cpu_per_1k=%.1f "
	       "ran_stacked_per_1k=%.1f ran_moved_per_1k=%.1f decision_probe=%d "
	       "snapshot_at_decision=%ld wakings=%ld dropped_events=%ld",
	       prefix, lat.n, pctl(lat.v, lat.n, 0.50), pctl(lat.v, lat.n, 0.90),
	       pctl(lat.v, lat.n, 0.99), pctl(lat.v, lat.n, 0.999),
	       lat.n ? lat.v[lat.n - 1] / 1000.0 : 0, k.wakeups,
	       per_1k(k.missed_core, k.wakeups), per_1k(k.missed_cpu, k.wakeups),
	       per_1k(k.stacked, k.wakeups), k.wakeups ? (double)k.nr_idle / k.wakeups : 0,
	       k.idle_core, k.idle_cpu, k.switches, k.events, lost, k.lost_snapshots,
	       k.no_decision, kr.wakeups, per_1k(kr.missed_core, kr.wakeups),
	       per_1k(kr.missed_cpu, kr.wakeups), per_1k(kr.stacked, kr.wakeups),
	       per_1k(moved, kr.wakeups), probes, k.probed, k.wakings, dropped);
	print_split(&lat, &on_idle, &on_busy);
	printf("\n");
	free(lat.v);
	free(on_idle.v);
	free(on_busy.v);
	free(idle);
	free(seen);
	free(pend);
	free(snaps);
	free(on_rq);
	return 0;
}

static int trace_stop(const char *prefix)
{
	int probes = decide_probes_enabled(), ret;
	FILE *f;

	if (write_file("tracing_on", "0"))
		return 1;
	if (read_topology()) {
		fprintf(stderr, "trace: no memory for %d CPUs' tables\n", nr_cpus);
		return 1;
	}
	f = fopen(TRACEFS "trace", "r");
	if (!f) {
		perror("trace: " TRACEFS "trace");
		return 1;
	}
	ret = replay(f, prefix, probes, ring_dropped());
	fclose(f);
	write_file("set_event", "");
	decide_probes_off();
	write_file("trace", "");
	return ret;
}

/* A made-up topology for a replay: LLCs of @llc consecutive CPUs, cores of @smt. */
static int fake_topology(int cpus, int llc, int smt)
{
	if (cpus < 1 || llc < 1 || smt < 1 || alloc_cpus(cpus))
		return -1;
	for (int c = 0; c < cpus; c++)
		for (int o = 0; o < cpus; o++) {
			if (o / llc == c / llc)
				set_bit(row(llc_bits, c), o);
			if (o / smt == c / smt)
				set_bit(row(core_bits, c), o);
		}
	return 0;
}

static int trace_replay(const char *path, const char *prefix, const char *topo)
{
	int cpus, llc, smt, ret;
	FILE *f;

	if (sscanf(topo, "%d:%d:%d", &cpus, &llc, &smt) != 3 || fake_topology(cpus, llc, smt)) {
		fprintf(stderr, "trace: topology '%s' is not CPUS:LLC:SMT\n", topo);
		return 2;
	}
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	ret = replay(f, prefix, 1, 0);
	fclose(f);
	return ret;
}

int trace_main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[2], "start"))
		return trace_start(argc >= 4 ? atoi(argv[3]) : 16384);
	if (argc == 4 && !strcmp(argv[2], "stop"))
		return trace_stop(argv[3]);
	if (argc == 6 && !strcmp(argv[2], "replay"))
		return trace_replay(argv[3], argv[4], argv[5]);
	fprintf(stderr, "usage: sis-probe trace start [KB] | trace stop COMM-PREFIX|- | "
			"trace replay FILE COMM-PREFIX|- CPUS:LLC:SMT\n");
	return 2;
}
