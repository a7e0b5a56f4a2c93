// SPDX-License-Identifier: GPL-2.0
/*
 * sis-probe: small workloads for the guest tests, built statically on the host.
 * The subcommands are the table `cmds` at the end; `sis-probe` alone prints it.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 1024

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu < 0) {
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(cpu, &set);
	}
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(2);
	}
}

static int spin(int cpu, int nice)
{
	volatile unsigned long x = 0;

	if (nice && setpriority(PRIO_PROCESS, 0, nice)) {
		perror("setpriority");
		return 2;
	}
	pin(cpu);
	for (;;)
		x++;
	return 0;
}

/* sched_setattr(2)'s argument; the libc has no wrapper */
struct sis_sched_attr {
	unsigned int size, sched_policy;
	unsigned long long sched_flags;
	int sched_nice;
	unsigned int sched_priority;
	unsigned long long sched_runtime, sched_deadline, sched_period;
	unsigned int util_min, util_max;
};

/* policy normal|batch|idle and a custom slice of @slice_us (0: none), for this thread */
static void set_policy(const char *pol, int slice_us)
{
	struct sis_sched_attr a = { .size = sizeof(a) };

	if (!strcmp(pol, "batch"))
		a.sched_policy = SCHED_BATCH;
	else if (!strcmp(pol, "idle"))
		a.sched_policy = SCHED_IDLE;
	else if (strcmp(pol, "normal")) {
		fprintf(stderr, "policy must be normal, batch or idle, not '%s'\n", pol);
		exit(2);
	}
	a.sched_runtime = (unsigned long long)slice_us * 1000;
	if (syscall(SYS_sched_setattr, 0, &a, 0)) {
		perror("sched_setattr");
		exit(2);
	}
}

static int policy_hog(int cpu, const char *pol, int slice_us)
{
	volatile unsigned long x = 0;

	pin(cpu);
	set_policy(pol, slice_us);
	for (;;)
		x++;
	return 0;
}

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static int nap(int cpu, const char *pol, int slice_us, int n, int us)
{
	long long *late = calloc(n > 0 ? n : 1, sizeof(*late));
	struct timespec d = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L };

	if (!late || n <= 0)
		return 2;
	pin(cpu);
	set_policy(pol, slice_us);
	for (int i = 0; i < n; i++) {
		long long t0 = mono_ns();

		nanosleep(&d, NULL);
		late[i] = (mono_ns() - t0) / 1000 - us;
	}
	qsort(late, n, sizeof(*late), cmp_ll);
	printf("nap: n=%d p50=%lld p90=%lld max=%lld us\n", n, late[n / 2], late[n * 9 / 10],
	       late[n - 1]);
	return 0;
}

/*
 * A line on stderr every 30 s of a long loop: under single-threaded TCG a loop of timer
 * wakeups beside spinners can take minutes, and the runner takes 240 s of silence for
 * a hang. A stuck loop prints nothing, so a hang still reads as one.
 */
static void progress(const char *what, int i, int n, long long *next)
{
	long long now = mono_ns();

	if (!*next)
		*next = now + 30000000000LL;
	if (now < *next)
		return;
	*next = now + 30000000000LL;
	fprintf(stderr, "sis-probe: %s %d of %d\n", what, i, n);
}

/* The calling thread's voluntary context switches so far (-1 when unknown). */
static long voluntary_switches(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nvcsw;
}

static int wake(int n, int us, int cpu)
{
	long long next = 0;
	static long hist[MAX_CPUS];
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L };
	long blocked = 0;

	/* its own comm, so quality counters and the tracer count this task alone */
	prctl(PR_SET_NAME, "sis-wake");
	for (int i = 0; i < n; i++) {
		/* run on CPU, then let the wakeup choose freely: prev_cpu == CPU */
		pin(cpu);
		pin(-1);
		long before = voluntary_switches();

		nanosleep(&ts, NULL);
		/* a sleep that switched out needed a wakeup (try_to_wake_up) */
		blocked += voluntary_switches() > before;
		int where = sched_getcpu();
		if (where >= 0 && where < MAX_CPUS)
			hist[where]++;
		progress("wake", i + 1, n, &next);
	}
	printf("# wake histogram (cpu:count):");
	for (int c = 0; c < MAX_CPUS; c++)
		if (hist[c])
			printf(" %d:%ld", c, hist[c]);
	printf("\n");
	for (int c = 0; c < MAX_CPUS; c++)
		if (hist[c])
			printf("cpu %d %ld\n", c, hist[c]);
	printf("blocked %ld\n", blocked);
	return 0;
}

static int fds[2][2];
static int rounds;

static void *pong(void *arg)
{
	char b;

	for (int i = 0; i < rounds; i++) {
		if (read(fds[0][0], &b, 1) != 1 || write(fds[1][1], &b, 1) != 1)
			exit(3);
	}
	return arg;
}

static int pingpong(int n)
{
	pthread_t t;
	char b = 'x';

	rounds = n;
	if (pipe(fds[0]) || pipe(fds[1]))
		return 2;
	pthread_create(&t, NULL, pong, NULL);
	for (int i = 0; i < n; i++) {
		if (write(fds[0][1], &b, 1) != 1 || read(fds[1][0], &b, 1) != 1)
			return 3;
	}
	pthread_join(t, NULL);
	printf("pingpong %d done\n", n);
	return 0;
}

static int sock_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		exit(2);
	}
	return fd;
}

static int hostile(const char *path, const char *mode)
{
	static char buf[4 << 20];
	struct pollfd pfd;
	size_t len;
	ssize_t n;
	int fd;

	if (!strcmp(mode, "garbage")) {
		for (len = 0; len < 4096; len++)
			buf[len] = (char)(len * 131 + 7) ?: 1;
		buf[len++] = '\n';
	} else if (!strcmp(mode, "truncated")) {
		len = snprintf(buf, sizeof(buf), "{\"req\": \"stats\", \"args\": {\"tar\n");
	} else if (!strcmp(mode, "huge")) {
		len = sizeof(buf) - 1;
		memset(buf, 'A', len);
		buf[len - 1] = '\n';
	} else if (!strcmp(mode, "unknown")) {
		len = snprintf(buf, sizeof(buf), "{\"req\": \"set_features\", \"args\": {\"features\": \"NO_IDLE_CORE\"}}\n");
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	fd = sock_connect(path);
	for (size_t off = 0; off < len; off += n) {
		n = write(fd, buf + off, len - off);
		if (n <= 0)
			break;	/* the server may close on us: that is an answer */
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, 5000) <= 0) {
		printf("%s: no answer in 5 s\n", mode);
		return 1;
	}
	n = read(fd, buf, 200);
	if (n <= 0) {
		printf("%s: closed\n", mode);
	} else {
		buf[n] = 0;
		buf[strcspn(buf, "\n")] = 0;
		printf("%s: answered %s\n", mode, buf);
	}
	return 0;
}

static int idle_conns(const char *path, int n, int secs)
{
	struct rlimit rl = { .rlim_cur = n + 64, .rlim_max = n + 64 };

	setrlimit(RLIMIT_NOFILE, &rl);
	for (int i = 0; i < n; i++)
		sock_connect(path);
	printf("holding %d idle connections\n", n);
	fflush(stdout);
	sleep(secs);
	return 0;
}

static int fifo(int cpu, int secs)
{
	struct sched_param sp = { .sched_priority = 50 };
	time_t end = time(NULL) + secs;
	volatile unsigned long x = 0;

	pin(cpu);
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("sched_setscheduler");
		return 2;
	}
	while (time(NULL) < end)
		x++;
	return 0;
}

/* Run @argv as SCHED_FIFO priority 1: a reader that a busy machine does not starve. */
static int rt(char **argv)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("sched_setscheduler");
		return 2;
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	return 2;
}

static void spin_us(int us);
static long ts_us(const struct timespec *a, const struct timespec *b);

/*
 * A SCHED_FIFO task on @cpu that wakes @n times, @us apart, and runs 1 ms each time:
 * every wakeup takes the CPU from whatever sched_ext task runs there.
 */
static int rtwake(int cpu, int n, int us)
{
	struct sched_param sp = { .sched_priority = 50 };

	pin(cpu);
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("sched_setscheduler");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		usleep(us);
		spin_us(1000);
	}
	printf("rtwake: %d wakeups on CPU %d\n", n, cpu);
	return 0;
}

/*
 * An unpinned spinner runs on @cpu alone; a SCHED_FIFO task moved there takes the CPU
 * for @ms. Prints the CPU the spinner was on when preempted and how much CPU time it
 * got during those @ms (elsewhere: the scheduler moved it off the RT-held CPU). The
 * spinner stays pinned to @cpu until the RT task, waiting on another CPU, is about to
 * come, so that nothing earlier moves it.
 */
struct rtsteal_shared {
	volatile int phase, unpinned, cpu_at_preempt, last_cpu;
	volatile long ns_during;
};

static long thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void rtsteal_spinner(struct rtsteal_shared *sh, int cpu)
{
	long base = 0;

	pin(cpu);
	for (;;) {
		sh->last_cpu = sched_getcpu();
		if (sh->phase == 1 && !sh->unpinned) {
			pin(-1);	/* free to move, but a running task stays where it is */
			sh->unpinned = 1;
		}
		if (sh->phase == 2 && !base)
			base = thread_ns();
		if (sh->phase == 2)
			sh->ns_during = thread_ns() - base;
	}
}

static int rtsteal(int cpu, int ms)
{
	struct sched_param sp = { .sched_priority = 50 }, none = { 0 };
	struct rtsteal_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i;
	pid_t child;

	if (sh == MAP_FAILED || ncpu < 2)
		return 2;
	memset((void *)sh, 0, sizeof(*sh));
	sh->last_cpu = -1;
	pin((cpu + 1) % ncpu);	/* wait on another CPU */
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("sched_setscheduler");
		return 2;
	}
	child = fork();
	if (child == 0) {
		sched_setscheduler(0, SCHED_OTHER, &none);
		rtsteal_spinner(sh, cpu);
	}
	usleep(300000);		/* the spinner has @cpu to itself */
	sh->phase = 1;
	for (i = 0; i < 1000 && !sh->unpinned; i++)
		usleep(1000);
	sh->cpu_at_preempt = sh->last_cpu;
	sh->phase = 2;
	pin(cpu);		/* the RT task takes @cpu */
	spin_us(ms * 1000);
	sh->phase = 3;
	sched_setscheduler(0, SCHED_OTHER, &none);
	usleep(10000);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("rtsteal: spinner on CPU %d when preempted, ran %ld of %d ms meanwhile, on CPU %d\n",
	       sh->cpu_at_preempt, sh->ns_during / 1000000, ms, sh->last_cpu);
	return 0;
}

static void *sleeper(void *arg)
{
	sleep((unsigned int)(long)arg);
	return NULL;
}

static int sleepers(int n, int secs)
{
	pthread_attr_t attr;
	pthread_t *t = calloc(n, sizeof(*t));
	int made = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (int i = 0; i < n; i++)
		if (!pthread_create(&t[i], &attr, sleeper, (void *)(long)secs))
			made++;
	printf("%d sleeping threads\n", made);
	fflush(stdout);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	printf("%d threads woke and exited\n", made);
	return made == n ? 0 : 1;
}

static volatile int churn_stop;

static void *busy(void *arg)
{
	volatile unsigned long x = 0;

	while (!churn_stop)
		x++;
	return arg;
}

static int churn(int n, int secs)
{
	pthread_t *t = calloc(n, sizeof(*t));
	time_t end = time(NULL) + secs;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long moves = 0;

	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, busy, NULL);
	while (time(NULL) < end) {
		for (int i = 0; i < n; i++) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET((i + moves) % ncpu, &set);
			if ((moves + i) % 3 == 0)
				CPU_SET((i + moves + 1) % ncpu, &set);
			pthread_setaffinity_np(t[i], sizeof(set), &set);
		}
		moves++;
		usleep(1000);
	}
	churn_stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("churn: %lu affinity rounds over %d threads\n", moves, n);
	return 0;
}

static void *nothing(void *arg)
{
	return arg;
}

static int forks(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	printf("forks: %d threads\n", n);
	return 0;
}

static long forkwake_hist[MAX_CPUS];
static struct timespec forkwake_ts;
static int forkwake_b;

static void *forkwake_child(void *arg)
{
	int where;

	/* a move, not a wakeup through select_cpu: recent_used_cpu stays the parent's CPU */
	pin(forkwake_b);
	pin(-1);
	nanosleep(&forkwake_ts, NULL);
	where = sched_getcpu();
	if (where >= 0 && where < MAX_CPUS)
		forkwake_hist[where]++;
	return arg;
}

static int forkwake(int n, int us, int a, int b)
{
	forkwake_ts.tv_sec = us / 1000000;
	forkwake_ts.tv_nsec = (us % 1000000) * 1000L;
	forkwake_b = b;
	for (int i = 0; i < n; i++) {
		pthread_t t;

		/* on CPU A but allowed everywhere, so the child's fork goes through select_cpu */
		pin(a);
		pin(-1);
		if (pthread_create(&t, NULL, forkwake_child, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	for (int c = 0; c < MAX_CPUS; c++)
		if (forkwake_hist[c])
			printf("cpu %d %ld\n", c, forkwake_hist[c]);
	return 0;
}

static volatile int burst_stop;
static long burst_hist[MAX_CPUS];

static void *burst_child(void *arg)
{
	volatile unsigned long x = 0;
	int where = sched_getcpu();

	if (where >= 0 && where < MAX_CPUS)
		__atomic_fetch_add(&burst_hist[where], 1, __ATOMIC_RELAXED);
	while (!burst_stop)
		x++;
	return arg;
}

static int forkburst(int n, int a)
{
	pthread_t t[64];

	if (n > 64)
		n = 64;
	pin(a);
	pin(-1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, burst_child, NULL))
			return 1;
	usleep(300000);
	burst_stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int c = 0; c < MAX_CPUS; c++)
		if (burst_hist[c])
			printf("cpu %d %ld\n", c, burst_hist[c]);
	return 0;
}

static int sync_fds[2][2];
static int sync_rounds, sync_e, sync_w, sync_home;
static long sync_hist[MAX_CPUS];

/* Where the wakee of @n rounds of @what ran, as cpu:count pairs. */
static void print_hist(const char *what, int n)
{
	printf("# %s %d done; where the wakee ran (cpu:count):", what, n);
	for (int c = 0; c < MAX_CPUS; c++)
		if (sync_hist[c])
			printf(" %d:%ld", c, sync_hist[c]);
	printf("\n");
}

/* Allow only CPUs @a and @b (the same CPU twice: that one). */
static void allow2(int a, int b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	CPU_SET(b, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		exit(2);
}

static void *sync_wakee(void *arg)
{
	char b;

	allow2(sync_w, sync_e);
	for (int i = 0; i < sync_rounds; i++) {
		int where;

		/* home: sleep on E each round, so every wakeup has prev_cpu == E */
		if (sync_home) {
			allow2(sync_e, sync_e);
			allow2(sync_w, sync_e);
		}
		if (read(sync_fds[0][0], &b, 1) != 1)
			exit(3);
		where = sched_getcpu();
		if (where >= 0 && where < MAX_CPUS)
			sync_hist[where]++;
		if (write(sync_fds[1][1], &b, 1) != 1)
			exit(3);
	}
	return arg;
}

/* The waker writes (a WF_SYNC wakeup of the wakee), then waits for the reply. */
static int syncwake(int n, int w, int e, int home)
{
	pthread_t t;
	char b = 0;
	long long next = 0;

	sync_home = home;
	sync_rounds = n;
	sync_w = w;
	sync_e = e;
	if (pipe(sync_fds[0]) || pipe(sync_fds[1]))
		return 1;
	pin(w);
	if (pthread_create(&t, NULL, sync_wakee, NULL))
		return 1;
	for (int i = 0; i < n; i++) {
		if (write(sync_fds[0][1], &b, 1) != 1 || read(sync_fds[1][0], &b, 1) != 1)
			return 3;
		progress("syncwake", i + 1, n, &next);
	}
	pthread_join(t, NULL);
	print_hist("syncwake", n);
	return 0;
}

/* 6.6+: seccomp's synchronous wake-up flag (the host's headers may predate it) */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static int curwake_fd = -1;
static sem_t curwake_ready;

/* The target, pinned to W: a user-notification filter on getppid(), then N calls. */
static void *curwake_target(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct timespec gap = { 0, 5000000 };

	pin(sync_w);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		exit(2);
	curwake_fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (curwake_fd < 0) {
		perror("seccomp");
		exit(2);
	}
	if (ioctl(curwake_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)) {
		perror("SECCOMP_IOCTL_NOTIF_SET_FLAGS");
		exit(2);
	}
	sem_post(&curwake_ready);
	for (int i = 0; i < sync_rounds; i++) {
		/* the supervisor is back in poll() on E by then; when not, poll() does not
		 * sleep and the round counts on E (the test allows 20 of 200) */
		nanosleep(&gap, NULL);
		syscall(SYS_getppid);
	}
	return arg;
}

/*
 * The supervisor, allowed on W and E, sleeps in poll() with prev E; the target's
 * notification wakes it by wake_up_poll_on_current_cpu() (WF_CURRENT_CPU) from W.
 */
static int curwake(int n, int w, int e)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	pthread_t t;

	sync_rounds = n;
	sync_w = w;
	sync_e = e;
	sem_init(&curwake_ready, 0, 0);
	if (pthread_create(&t, NULL, curwake_target, NULL))
		return 1;
	sem_wait(&curwake_ready);
	for (int i = 0; i < n; i++) {
		struct pollfd pfd = { .fd = curwake_fd, .events = POLLIN };
		int where;

		allow2(e, e);
		allow2(w, e);
		if (poll(&pfd, 1, -1) != 1)
			return 3;
		where = sched_getcpu();
		if (where >= 0 && where < MAX_CPUS)
			sync_hist[where]++;
		memset(&req, 0, sizeof(req));
		if (ioctl(curwake_fd, SECCOMP_IOCTL_NOTIF_RECV, &req))
			return 3;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (ioctl(curwake_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp))
			return 3;
	}
	pthread_join(t, NULL);
	print_hist("curwake", n);
	return 0;
}

/*
 * N writes of /proc/sys/vm/stat_refresh, each from CPU 0 and then allowed on CPUs 0-1:
 * schedule_on_each_cpu() flushes CPU 0's work first, so kworker/0 wakes the writer
 * with prev == its own CPU.
 */
static int kwake(int n)
{
	for (int i = 0; i < n; i++) {
		int fd;

		allow2(0, 0);
		allow2(0, 1);
		fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
		if (fd < 0 || write(fd, "1", 1) != 1) {
			perror("stat_refresh");
			return 2;
		}
		close(fd);
	}
	return 0;
}

/* A periodic task: ON us of every PERIOD us on @cpu, by absolute deadlines. */
static int duty(int cpu, int on, int period, int secs, int nice)
{
	struct timespec next, end;

	pin(cpu);
	if (nice && setpriority(PRIO_PROCESS, 0, nice))
		return 2;
	printf("%d\n", getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &next);
	end = next;
	end.tv_sec += secs;
	while (next.tv_sec < end.tv_sec ||
	       (next.tv_sec == end.tv_sec && next.tv_nsec < end.tv_nsec)) {
		spin_us(on);
		next.tv_nsec += period * 1000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return 0;
}

static sem_t ww_go, ww_done;
static int ww_us;
static volatile long long ww_posted;	/* mono_ns() of the waker's post */
static long long *ww_lat;		/* ns from each post to the wakee running */

static void *weight_wakee(void *arg)
{
	for (int i = 0; i < sync_rounds; i++) {
		int where;

		/* prev_cpu is E at every wakeup */
		allow2(sync_e, sync_e);
		allow2(sync_w, sync_e);
		sem_wait(&ww_go);
		ww_lat[i] = mono_ns() - ww_posted;
		where = sched_getcpu();
		if (where >= 0 && where < MAX_CPUS)
			sync_hist[where]++;
		spin_us(ww_us);
		sem_post(&ww_done);
	}
	return arg;
}

/* The waker on W posts (try_to_wake_up() without WF_SYNC) and waits for the reply. */
static int weightwake(int n, int w, int e, int us)
{
	pthread_t t;

	sync_rounds = n;
	sync_w = w;
	sync_e = e;
	ww_us = us;
	ww_lat = calloc(n > 0 ? n : 1, sizeof(*ww_lat));
	if (!ww_lat || n <= 0)
		return 2;
	sem_init(&ww_go, 0, 0);
	sem_init(&ww_done, 0, 0);
	pin(w);
	if (pthread_create(&t, NULL, weight_wakee, NULL))
		return 1;
	for (int i = 0; i < n; i++) {
		/* let the wakee get to sleep on E first, past the hogs' requests there */
		usleep(8000);
		ww_posted = mono_ns();
		sem_post(&ww_go);
		sem_wait(&ww_done);
	}
	pthread_join(t, NULL);
	print_hist("weightwake", n);
	qsort(ww_lat, n, sizeof(*ww_lat), cmp_ll);
	printf("weightwake: n=%d on_w=%ld p50=%lld p90=%lld us\n", n, sync_hist[w & (MAX_CPUS - 1)],
	       ww_lat[n / 2] / 1000, ww_lat[n * 9 / 10] / 1000);
	return 0;
}

#define FAN_MAX 64
static sem_t fan_work[FAN_MAX], fan_side[FAN_MAX], fan_done;
static volatile int fan_stop;

/* A worker: woken by the master, it wakes its side thread, then the master. */
static void *fan_worker(void *arg)
{
	long i = (long)arg;

	for (;;) {
		sem_wait(&fan_work[i]);
		if (fan_stop)
			break;
		spin_us(20);
		sem_post(&fan_side[i]);
		sem_post(&fan_done);
	}
	sem_post(&fan_side[i]);
	return NULL;
}

static void *fan_side_thread(void *arg)
{
	long i = (long)arg;

	while (!fan_stop)
		sem_wait(&fan_side[i]);
	return NULL;
}

/*
 * 1:N: a master wakes K workers in turn, each of which wakes a side thread and the
 * master back; the master's wakee flips come K/2 times as fast as a worker's.
 */
static int fan(int k, int secs)
{
	pthread_t w[FAN_MAX], side[FAN_MAX];
	struct timespec a, b;
	long rounds = 0;

	if (k < 2 || k > FAN_MAX)
		return 2;
	sem_init(&fan_done, 0, 0);
	for (long i = 0; i < k; i++) {
		sem_init(&fan_work[i], 0, 0);
		sem_init(&fan_side[i], 0, 0);
		pthread_create(&w[i], NULL, fan_worker, (void *)i);
		pthread_create(&side[i], NULL, fan_side_thread, (void *)i);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		sem_post(&fan_work[rounds % k]);
		sem_wait(&fan_done);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while (ts_us(&a, &b) < secs * 1000000L);
	fan_stop = 1;
	for (int i = 0; i < k; i++) {
		sem_post(&fan_work[i]);
		pthread_join(w[i], NULL);
		pthread_join(side[i], NULL);
	}
	printf("# fan %d: %ld rounds\n", k, rounds);
	return 0;
}

/*
 * The 1:N of wake_wide()'s commit, over pipes (sync wakeups): a master on the CPUs MASTER
 * writes to K workers in turn; each writes to its side thread, then back to the master.
 * The workers start confined to HOME for WARM s (their flips build up there), then may
 * run anywhere for SECS s, counted by the CPU each woke on. No thread is pinned to one
 * CPU: the kernel records a waker's flips only at wakeups that choose a CPU.
 */
static int parse_cpus(const char *list, cpu_set_t *set);
static int wf_work[FAN_MAX][2], wf_side[FAN_MAX][2], wf_done[2];
static cpu_set_t wf_home, wf_master;
static volatile int wf_free, wf_count, wf_stop;

static void *widefan_worker(void *arg)
{
	long i = (long)arg;
	int freed = 0;
	char b;

	if (sched_setaffinity(0, sizeof(wf_home), &wf_home))
		exit(2);
	while (read(wf_work[i][0], &b, 1) == 1 && !wf_stop) {
		if (wf_count)
			__atomic_fetch_add(&sync_hist[sched_getcpu() & (MAX_CPUS - 1)], 1,
					   __ATOMIC_RELAXED);
		/* free while asleep on the home CPU: the next wakeup chooses from there */
		if (wf_free && !freed) {
			pin(-1);
			freed = 1;
		}
		spin_us(20);
		if (write(wf_side[i][1], &b, 1) != 1 || write(wf_done[1], &b, 1) != 1)
			exit(3);
	}
	return NULL;
}

static void *widefan_side(void *arg)
{
	long i = (long)arg;
	char b;

	pin(-1);
	while (read(wf_side[i][0], &b, 1) == 1 && !wf_stop)
		;
	return NULL;
}

/* The master's rounds until @us have passed; -1 when a pipe failed. */
static int widefan_rounds(int k, long us, long *rounds)
{
	struct timespec a, t;
	char b = 'x';

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		if (write(wf_work[*rounds % k][1], &b, 1) != 1 || read(wf_done[0], &b, 1) != 1)
			return -1;
		(*rounds)++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (ts_us(&a, &t) < us);
	return 0;
}

static int widefan(int k, const char *master, const char *home, int warm, int secs)
{
	pthread_t wt[FAN_MAX], st[FAN_MAX];
	long rounds = 0, counted;
	char b = 'x';

	if (k < 2 || k > FAN_MAX || parse_cpus(home, &wf_home) ||
	    parse_cpus(master, &wf_master) || pipe(wf_done))
		return 2;
	if (sched_setaffinity(0, sizeof(wf_master), &wf_master))
		return 2;
	for (long i = 0; i < k; i++) {
		if (pipe(wf_work[i]) || pipe(wf_side[i]))
			return 2;
		pthread_create(&wt[i], NULL, widefan_worker, (void *)i);
		pthread_create(&st[i], NULL, widefan_side, (void *)i);
	}
	if (widefan_rounds(k, warm * 1000000L, &rounds))
		return 3;
	/* each worker frees itself at its next wakeup: one round of all of them */
	wf_free = 1;
	for (int i = 0; i < k; i++)
		if (widefan_rounds(k, 0, &rounds))
			return 3;
	wf_count = 1;
	counted = rounds;
	if (widefan_rounds(k, secs * 1000000L, &rounds))
		return 3;
	wf_count = 0;
	wf_stop = 1;
	for (int i = 0; i < k; i++) {
		if (write(wf_work[i][1], &b, 1) != 1 || write(wf_side[i][1], &b, 1) != 1)
			return 3;
		pthread_join(wt[i], NULL);
		pthread_join(st[i], NULL);
	}
	print_hist("widefan", (int)(rounds - counted));
	return 0;
}

int cpu_list_next(const char **s, long *a, long *b);	/* trace.c */

/* CPUs of a list like "4-7" or "0,8-11" into @set; -1 if it is no CPU list. */
static int parse_cpus(const char *list, cpu_set_t *set)
{
	long a, b;
	int r;

	CPU_ZERO(set);
	while ((r = cpu_list_next(&list, &a, &b)) > 0)
		for (long c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET(c, set);
	return r;
}

struct hog {
	pthread_t t;
	cpu_set_t home;
	int w;
	volatile int stop, cpu;
	volatile long first_on_w;	/* ns of the first run on W after the release, 0: none */
};

static volatile int hogs_released;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *hog(void *arg)
{
	struct hog *h = arg;

	if (sched_setaffinity(0, sizeof(h->home), &h->home))
		exit(2);
	while (!h->stop) {
		h->cpu = sched_getcpu();
		if (hogs_released && h->cpu == h->w && !h->first_on_w)
			h->first_on_w = now_ns();
	}
	return NULL;
}

/*
 * The newidle balance's order across LLCs, in K trials: a spinner keeps W busy while 5
 * tasks spin on NEAR (an LLC of W's node) and 5 on FAR (another node's); all may then
 * also run on W. The spinner stops: W, about to idle, takes one waiting task. Prints
 * per trial which group's task ran on W first after that (later balancing may bring
 * others, under EEVDF's periodic balance for one).
 */
static int stealtest(int w, const char *near, const char *far, int k)
{
	int took_near = 0, took_far = 0;

	for (int trial = 0; trial < k; trial++) {
		struct hog h[11] = {};
		int on_w[2] = {}, first = -1;

		CPU_SET(w, &h[10].home);
		if (parse_cpus(near, &h[0].home) || parse_cpus(far, &h[5].home))
			return 2;
		for (int i = 1; i < 10; i++)
			if (i != 5)
				h[i].home = h[i < 5 ? 0 : 5].home;
		for (int i = 0; i < 11; i++)
			h[i].w = w;
		hogs_released = 0;
		for (int i = 0; i < 11; i++)
			if (pthread_create(&h[i].t, NULL, hog, &h[i]))
				return 1;
		usleep(300000);
		for (int i = 0; i < 10; i++) {
			cpu_set_t wide = h[i].home;

			CPU_SET(w, &wide);
			if (pthread_setaffinity_np(h[i].t, sizeof(wide), &wide))
				return 2;
		}
		usleep(300000);
		hogs_released = 1;
		h[10].stop = 1;
		pthread_join(h[10].t, NULL);
		usleep(500000);
		for (int i = 0; i < 10; i++) {
			if (h[i].cpu == w)
				on_w[i >= 5]++;
			if (h[i].first_on_w && (first < 0 || h[i].first_on_w < h[first].first_on_w))
				first = i;
		}
		for (int i = 0; i < 10; i++)
			h[i].stop = 1;
		for (int i = 0; i < 10; i++)
			pthread_join(h[i].t, NULL);
		printf("# trial %d: first on W: %s; on W at the end %d near, %d far\n", trial,
		       first < 0 ? "none" : first < 5 ? "near" : "far", on_w[0], on_w[1]);
		took_near += first >= 0 && first < 5;
		took_far += first >= 5;
	}
	printf("near %d far %d of %d\n", took_near, took_far, k);
	return 0;
}

/* schbench-like load: message threads wake workers, which run briefly and reply. */
struct msg_worker {
	int wake[2], done;	/* wake: message -> worker; done: the message's reply pipe */
	int us;
	volatile int stop;
	struct timespec sent;	/* when the message thread woke this worker */
	long *lat_us;		/* latencies seen, filled up to nlat */
	long nlat, cap;
};

static long ts_us(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000;
}

static void spin_us(int us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while (ts_us(&a, &b) < us);
}

static void *msg_worker(void *arg)
{
	struct msg_worker *w = arg;
	struct timespec now;
	char b;

	prctl(PR_SET_NAME, "sis-worker");
	while (read(w->wake[0], &b, 1) == 1 && b == 'w') {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (w->nlat < w->cap)
			w->lat_us[w->nlat++] = ts_us(&w->sent, &now);
		spin_us(w->us);
		if (write(w->done, &b, 1) != 1)
			break;
	}
	return NULL;
}

struct msg_thread {
	int nw, us, secs, done[2];
	long rounds;
	struct msg_worker *w;
};

static void *msg_thread(void *arg)
{
	struct msg_thread *m = arg;
	struct timespec start, now;
	pthread_t *t = calloc(m->nw, sizeof(*t));
	char b = 'w';

	prctl(PR_SET_NAME, "sis-msg");
	if (!t || pipe(m->done))
		exit(2);
	for (int i = 0; i < m->nw; i++) {
		struct msg_worker *w = &m->w[i];

		if (pipe(w->wake))
			exit(2);
		w->done = m->done[1];
		w->us = m->us;
		w->cap = 1 << 16;
		w->lat_us = calloc(w->cap, sizeof(long));
		pthread_create(&t[i], NULL, msg_worker, w);
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		/* a stamp per worker: its wait excludes the writes before its own */
		for (int i = 0; i < m->nw; i++) {
			clock_gettime(CLOCK_MONOTONIC, &m->w[i].sent);
			if (write(m->w[i].wake[1], &b, 1) != 1)
				exit(3);
		}
		for (int i = 0; i < m->nw; i++)
			if (read(m->done[0], &b, 1) != 1)
				exit(3);
		m->rounds++;
		usleep(1000); /* the message thread sleeps between rounds, as schbench's does */
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (ts_us(&start, &now) < m->secs * 1000000L);
	b = 'q';
	for (int i = 0; i < m->nw; i++) {
		if (write(m->w[i].wake[1], &b, 1) != 1)
			exit(3);
		pthread_join(t[i], NULL);
	}
	free(t);
	return NULL;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* Log-linear bucket of a latency in us: exact below 16, then 8 per power of two. */
static long hist_floor(long v)
{
	long step;

	if (v < 16)
		return v < 0 ? 0 : v;
	step = 1L << (63 - __builtin_clzl(v) - 3);
	return v / step * step;
}

static int msg(int nm, int nw, int secs, int us)
{
	struct msg_thread *m = calloc(nm, sizeof(*m));
	pthread_t *t = calloc(nm, sizeof(*t));
	long n = 0, rounds = 0, *all;

	for (int i = 0; i < nm; i++) {
		m[i] = (struct msg_thread){ .nw = nw, .us = us, .secs = secs };
		m[i].w = calloc(nw, sizeof(struct msg_worker));
		pthread_create(&t[i], NULL, msg_thread, &m[i]);
	}
	for (int i = 0; i < nm; i++) {
		pthread_join(t[i], NULL);
		rounds += m[i].rounds;
		for (int j = 0; j < nw; j++)
			n += m[i].w[j].nlat;
	}
	all = calloc(n + 1, sizeof(long));
	n = 0;
	for (int i = 0; i < nm; i++)
		for (int j = 0; j < nw; j++)
			for (long k = 0; k < m[i].w[j].nlat; k++)
				all[n++] = m[i].w[j].lat_us[k];
	qsort(all, n, sizeof(long), cmp_long);
#define P(q) (n ? all[(long)((q) * (n - 1))] : 0)
	printf("msg: rounds_per_s=%.1f probe_wakeups=%ld probe_p50_us=%ld probe_p90_us=%ld "
	       "probe_p99_us=%ld probe_p999_us=%ld probe_max_us=%ld",
	       (double)rounds / secs, n, P(0.5), P(0.9), P(0.99), P(0.999), n ? all[n - 1] : 0);
#undef P
	/* the histogram, so that runs can be pooled: probe_hist_us_FLOOR=COUNT */
	for (long i = 0; i < n;) {
		long f = hist_floor(all[i]), c = 0;

		while (i < n && hist_floor(all[i]) == f)
			i++, c++;
		printf(" probe_hist_us_%ld=%ld", f, c);
	}
	printf("\n");
	return 0;
}

int trace_main(int argc, char **argv);

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* sched_ext's ops, to name a struct_ops program whatever its scheduler's prefix */
static const char *const scx_ops[] = {
	"select_cpu", "enqueue", "dequeue", "dispatch", "tick", "runnable", "running",
	"stopping", "quiescent", "yield", "core_sched_before", "set_weight", "set_cpumask",
	"update_idle", "cpu_acquire", "cpu_release", "init_task", "exit_task", "enable",
	"disable", "dump", "cpu_online", "cpu_offline", "init", "exit",
};
#define NR_SCX_OPS (sizeof(scx_ops) / sizeof(scx_ops[0]))

/*
 * The op a program implements: its name is PREFIX_OP cut at 15 characters
 * (sis_update_idle, cosmos_select_c), so the longest op the tail after some '_'
 * begins, or -1.
 */
static int scx_op_of(const char *name)
{
	int best = -1;
	size_t best_len = 0;

	for (const char *u = strchr(name, '_'); u; u = strchr(u + 1, '_')) {
		size_t n = strlen(u + 1);

		for (unsigned int i = 0; i < NR_SCX_OPS; i++) {
			size_t len = strlen(scx_ops[i]);

			if (n && n <= len && !strncmp(u + 1, scx_ops[i], n) &&
			    (n == len || strlen(name) == 15) && len > best_len) {
				best = i;
				best_len = len;
			}
		}
		if (best >= 0)
			return best;
	}
	return best;
}

/* Print NAME=OP for each program name, as bpfstats names them (its unit test). */
static int opname(int n, char **names)
{
	for (int i = 0; i < n; i++) {
		int op = scx_op_of(names[i]);

		printf("%s%s=%s", i ? " " : "", names[i], op >= 0 ? scx_ops[op] : "other");
	}
	printf("\n");
	return 0;
}

#define BPFSTATS_MAPS 64

/* One program's info and map ids by its id; false when it is gone. */
static bool prog_info(unsigned int id, struct bpf_prog_info *info, unsigned int *maps,
		      unsigned int *nr_maps)
{
	union bpf_attr a = { .prog_id = id };
	int fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	bool ok;

	if (fd < 0)
		return false;
	memset(info, 0, sizeof(*info));
	info->nr_map_ids = BPFSTATS_MAPS;
	info->map_ids = (unsigned long)maps;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (unsigned long)info;
	ok = !sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
	close(fd);
	*nr_maps = info->nr_map_ids < BPFSTATS_MAPS ? info->nr_map_ids : BPFSTATS_MAPS;
	return ok;
}

/* Does any of @maps appear in @set? */
static bool shares_map(const unsigned int *maps, unsigned int n, const unsigned int *set,
		       unsigned int nset)
{
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < nset; j++)
			if (maps[i] == set[j])
				return true;
	return false;
}

/*
 * Sum run_time_ns / run_cnt (kernel.bpf_stats_enabled=1) over the loaded sched_ext
 * scheduler's programs: every struct_ops program, and every other program that shares a
 * map with one (a tracepoint of the same object, such as scx_sis's sched_switch hook on
 * 6.19+): the whole cost, and each op's share (op.NAME=NS/RUNS; op.other for a program
 * no op names).
 */
static int bpfstats(void)
{
	unsigned long long ns = 0, runs = 0, sel_ns = 0, sel_runs = 0;
	unsigned long long op_ns[NR_SCX_OPS + 1] = {}, op_runs[NR_SCX_OPS + 1] = {};
	static unsigned int ops_maps[1024];
	unsigned int maps[BPFSTATS_MAPS], nr, nops_maps = 0, progs = 0;

	for (int pass = 0; pass < 2; pass++) {
		unsigned int id = 0;

		for (;;) {
			union bpf_attr a = { .start_id = id };
			struct bpf_prog_info info;
			bool ops;
			int op;

			if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a))
				break;
			id = a.next_id;
			if (!prog_info(id, &info, maps, &nr))
				continue;
			ops = info.type == BPF_PROG_TYPE_STRUCT_OPS;
			/* pass 0: the struct_ops programs and their maps; pass 1: the rest */
			if (!pass && ops) {
				for (unsigned int i = 0; i < nr && nops_maps < 1024; i++)
					ops_maps[nops_maps++] = maps[i];
			} else if (!pass || ops || !shares_map(maps, nr, ops_maps, nops_maps)) {
				continue;
			}
			op = ops ? scx_op_of(info.name) : -1;
			progs++;
			ns += info.run_time_ns;
			runs += info.run_cnt;
			if (op < 0)
				op = NR_SCX_OPS;
			op_ns[op] += info.run_time_ns;
			op_runs[op] += info.run_cnt;
		}
	}
	sel_ns = op_ns[0];
	sel_runs = op_runs[0];
	printf("bpfstats: progs=%u ns=%llu runs=%llu select_ns=%llu select_runs=%llu", progs,
	       ns, runs, sel_ns, sel_runs);
	for (unsigned int i = 0; i <= NR_SCX_OPS; i++)
		if (op_runs[i] || op_ns[i])
			printf(" op.%s=%llu/%llu", i < NR_SCX_OPS ? scx_ops[i] : "other", op_ns[i],
			       op_runs[i]);
	printf("\n");
	return 0;
}

/*
 * Turn the kernel's BPF run-time statistics on (BPF_ENABLE_STATS) and hold them on
 * until killed: the bench's cost figures without writing kernel.bpf_stats_enabled.
 */
static int statson(void)
{
	union bpf_attr a = {};
	int fd;

	a.enable_stats.type = BPF_STATS_RUN_TIME;
	fd = sys_bpf(BPF_ENABLE_STATS, &a);
	if (fd < 0) {
		fprintf(stderr, "statson: BPF_ENABLE_STATS: %s\n", strerror(errno));
		return 1;
	}
	printf("statson: on\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* One subcommand: its name, argument counts, usage and handler (a: the arguments). */
struct cmd {
	const char *name;
	int min, max;
	const char *args, *what;
	int (*run)(int n, char **a);
};

static int cmd_spin(int n, char **a)
{
	(void)n;
	(void)a;
	return spin(atoi(a[0]), n == 2 ? atoi(a[1]) : 0);
}

static int cmd_hog(int n, char **a)
{
	(void)n;
	(void)a;
	return policy_hog(atoi(a[0]), a[1], atoi(a[2]));
}

static int cmd_nap(int n, char **a)
{
	(void)n;
	(void)a;
	return nap(atoi(a[0]), a[1], atoi(a[2]), atoi(a[3]), atoi(a[4]));
}

static int cmd_wake(int n, char **a)
{
	(void)n;
	(void)a;
	return wake(atoi(a[0]), atoi(a[1]), atoi(a[2]));
}

static int cmd_pingpong(int n, char **a)
{
	(void)n;
	(void)a;
	return pingpong(atoi(a[0]));
}

static int cmd_hostile(int n, char **a)
{
	(void)n;
	(void)a;
	return hostile(a[0], a[1]);
}

static int cmd_idle(int n, char **a)
{
	(void)n;
	(void)a;
	return idle_conns(a[0], atoi(a[1]), atoi(a[2]));
}

static int cmd_fifo(int n, char **a)
{
	(void)n;
	(void)a;
	return fifo(atoi(a[0]), atoi(a[1]));
}

static int cmd_rtwake(int n, char **a)
{
	(void)n;
	(void)a;
	return rtwake(atoi(a[0]), atoi(a[1]), atoi(a[2]));
}

static int cmd_rtsteal(int n, char **a)
{
	(void)n;
	(void)a;
	return rtsteal(atoi(a[0]), atoi(a[1]));
}

static int cmd_sleepers(int n, char **a)
{
	(void)n;
	(void)a;
	return sleepers(atoi(a[0]), atoi(a[1]));
}

static int cmd_churn(int n, char **a)
{
	(void)n;
	(void)a;
	return churn(atoi(a[0]), atoi(a[1]));
}

static int cmd_forks(int n, char **a)
{
	(void)n;
	(void)a;
	return forks(atoi(a[0]));
}

static int cmd_forkburst(int n, char **a)
{
	(void)n;
	(void)a;
	return forkburst(atoi(a[0]), atoi(a[1]));
}

static int cmd_forkwake(int n, char **a)
{
	(void)n;
	(void)a;
	return forkwake(atoi(a[0]), atoi(a[1]), atoi(a[2]), atoi(a[3]));
}

static int cmd_syncwake(int n, char **a)
{
	(void)n;
	(void)a;
	return syncwake(atoi(a[0]), atoi(a[1]), atoi(a[2]), n == 4 && !strcmp(a[3], "home"));
}

static int cmd_kwake(int n, char **a)
{
	(void)n;
	return kwake(atoi(a[0]));
}

static int cmd_curwake(int n, char **a)
{
	(void)n;
	return curwake(atoi(a[0]), atoi(a[1]), atoi(a[2]));
}

static int cmd_weightwake(int n, char **a)
{
	(void)n;
	(void)a;
	return weightwake(atoi(a[0]), atoi(a[1]), atoi(a[2]), atoi(a[3]));
}

static int cmd_stealtest(int n, char **a)
{
	(void)n;
	(void)a;
	return stealtest(atoi(a[0]), a[1], a[2], atoi(a[3]));
}

static int cmd_duty(int n, char **a)
{
	(void)n;
	(void)a;
	return duty(atoi(a[0]), atoi(a[1]), atoi(a[2]), atoi(a[3]), n == 5 ? atoi(a[4]) : 0);
}

/* Print FILE every MS ms until killed or FILE is gone: a reader that starts no process. */
static int cmd_every(int n, char **a)
{
	char buf[16384];

	(void)n;
	for (;;) {
		int fd = open(a[0], O_RDONLY);
		ssize_t r, off = 0;

		if (fd < 0)
			return 0;
		while (off < (ssize_t)sizeof(buf) && (r = read(fd, buf + off, sizeof(buf) - off)) > 0)
			off += r;
		close(fd);
		if (fwrite(buf, 1, off, stdout) != (size_t)off || fflush(stdout))
			return 1;
		usleep(atoi(a[1]) * 1000);
	}
}

static int cmd_fan(int n, char **a)
{
	(void)n;
	(void)a;
	return fan(atoi(a[0]), atoi(a[1]));
}

static int cmd_widefan(int n, char **a)
{
	(void)n;
	return widefan(atoi(a[0]), a[1], a[2], atoi(a[3]), atoi(a[4]));
}

static int cmd_msg(int n, char **a)
{
	(void)n;
	(void)a;
	return msg(atoi(a[0]), atoi(a[1]), atoi(a[2]), atoi(a[3]));
}

static int cmd_bpfstats(int n, char **a)
{
	(void)n;
	(void)a;
	return bpfstats();
}

static int cmd_statson(int n, char **a)
{
	(void)n;
	(void)a;
	return statson();
}

static int cmd_opname(int n, char **a)
{
	(void)n;
	(void)a;
	return opname(n, a);
}

static int cmd_rt(int n, char **a)
{
	(void)n;
	return rt(a);
}

static const struct cmd cmds[] = {
	{ "spin", 1, 2, "CPU [NICE]",
	  "busy loop pinned to CPU, forever", cmd_spin },
	{ "hog", 3, 3, "CPU POL SLICE",
	  "busy loop pinned to CPU under policy POL (normal, batch, idle) with a custom slice of SLICE us (0: the default), forever", cmd_hog },
	{ "nap", 5, 5, "CPU POL SLICE N US",
	  "pinned likewise, N times: sleep US us; print how late the wakeups ran (p50, p90, max us)", cmd_nap },
	{ "wake", 3, 3, "N US CPU",
	  "N times: run on CPU, sleep US us, wake free to run anywhere (comm sis-wake); print where each wakeup ran", cmd_wake },
	{ "pingpong", 1, 1, "N",
	  "two threads wake each other N times over a pipe", cmd_pingpong },
	{ "hostile", 2, 2, "SOCK MODE",
	  "send a bad request (garbage, truncated, huge, unknown) to a stats socket; exit 1 if no answer and no close within 5 s", cmd_hostile },
	{ "idle", 3, 3, "SOCK N SECS",
	  "hold N idle connections to SOCK for SECS", cmd_idle },
	{ "fifo", 2, 2, "CPU SECS",
	  "SCHED_FIFO busy loop pinned to CPU for SECS", cmd_fifo },
	{ "rt", 1, 64, "CMD [ARG...]",
	  "run CMD as SCHED_FIFO priority 1, so that a busy machine does not starve it", cmd_rt },
	{ "rtwake", 3, 3, "CPU N US",
	  "a SCHED_FIFO task on CPU wakes N times, US us apart, and runs 1 ms each time", cmd_rtwake },
	{ "rtsteal", 2, 2, "CPU MS",
	  "an unpinned spinner alone on CPU; a SCHED_FIFO task takes CPU for MS ms; print the CPU time the spinner got meanwhile (elsewhere)", cmd_rtsteal },
	{ "sleepers", 2, 2, "N SECS",
	  "N threads that sleep for SECS", cmd_sleepers },
	{ "churn", 2, 2, "N SECS",
	  "N busy threads whose affinity changes every ms", cmd_churn },
	{ "forks", 1, 1, "N",
	  "N threads created and joined one after another", cmd_forks },
	{ "forkburst", 2, 2, "N A",
	  "fork N spinning threads while on CPU A (free to run anywhere), stop them after 0.3 s; print how many first ran on each CPU", cmd_forkburst },
	{ "forkwake", 4, 4, "N US A B",
	  "N times: fork a thread on CPU A; the child moves to CPU B, sleeps US us, and its first wakeup chooses freely; print where each child woke", cmd_forkwake },
	{ "syncwake", 3, 4, "N W E [home]",
	  "a waker pinned to CPU W wakes, over a pipe (a sync wakeup), a wakee allowed on CPUs W and E, N times", cmd_syncwake },
	{ "kwake", 1, 1, "N",
	  "N writes of /proc/sys/vm/stat_refresh, each moved to CPU 0 first and then allowed on CPUs 0-1 (kworker/0 wakes the writer with prev == its CPU)", cmd_kwake },
	{ "curwake", 3, 3, "N W E",
	  "a target pinned to CPU W makes N seccomp user notifications; the supervisor, allowed on W and E and back on E each round, is woken from poll() on the current CPU (WF_CURRENT_CPU)", cmd_curwake },
	{ "weightwake", 4, 4, "N W E US",
	  "the same over a semaphore (no sync wakeup); the wakee sleeps on E each round and spins US us; prints also how late it ran (p50, p90 us from the post)", cmd_weightwake },
	{ "stealtest", 4, 4, "W NEAR FAR K",
	  "the newidle balance's order across LLCs in K trials: which of NEAR's and FAR's waiting tasks W, about to idle, runs first", cmd_stealtest },
	{ "duty", 4, 5, "CPU ON PERIOD SECS [NICE]",
	  "pinned to CPU: spin ON us of every PERIOD us, for SECS; prints its pid first", cmd_duty },
	{ "every", 2, 2, "FILE MS",
	  "print FILE every MS ms until killed or FILE is gone: a reader that starts no process", cmd_every },
	{ "fan", 2, 2, "K SECS",
	  "1:N over semaphores: a master wakes K workers in turn; each wakes a side thread, then the master", cmd_fan },
	{ "widefan", 5, 5, "K MASTER HOME WARM SECS",
	  "1:N over pipes (sync wakeups): a master on the CPUs MASTER wakes K workers in turn, each its side thread and the master; the workers kept on the CPUs HOME for WARM s, then free for SECS s; prints where the workers woke", cmd_widefan },
	{ "msg", 4, 4, "M W SECS US",
	  "schbench-like: M message threads each wake W workers (comm sis-worker) over pipes, every worker spins US us and reports back, for SECS; prints rounds/s and the workers' wakeup latency", cmd_msg },
	{ "bpfstats", 0, 0, "",
	  "the kernel's run-time statistics of the loaded sched_ext scheduler's programs (its struct_ops programs and any sharing a map with them): total ns and runs, select_cpu's, and each op's (op.NAME=NS/RUNS)", cmd_bpfstats },
	{ "statson", 0, 0, "",
	  "turn the kernel's BPF run-time statistics on (BPF_ENABLE_STATS) and hold them until killed", cmd_statson },
	{ "opname", 1, 64, "NAME...",
	  "the op bpfstats names each program name after", cmd_opname },
};

static int usage(void)
{
	fprintf(stderr, "usage: sis-probe SUBCOMMAND ARGS, one of:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, "  %s %s\n      %s\n", cmds[i].name, cmds[i].args, cmds[i].what);
	fprintf(stderr, "  trace ...\n      the tracefs collector (trace.c)\n");
	return 2;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "trace"))
		return trace_main(argc, argv);
	for (size_t i = 0; argc >= 2 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name) && argc - 2 >= cmds[i].min &&
		    argc - 2 <= cmds[i].max)
			return cmds[i].run(argc - 2, argv + 2);
	return usage();
}
