// SPDX-License-Identifier: GPL-2.0
/*
 * sis-probe: small workloads for the guest tests, built statically on the host.
 *
 *   sis-probe spin CPU            busy loop pinned to CPU, forever
 *   sis-probe wake N US CPU       N times: run on CPU, sleep US microseconds, wake
 *                                 free to run anywhere; print where each wakeup ran
 *   sis-probe pingpong N          two threads wake each other N times over a pipe
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
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

static int spin(int cpu)
{
	volatile unsigned long x = 0;

	pin(cpu);
	for (;;)
		x++;
	return 0;
}

static int wake(int n, int us, int cpu)
{
	static long hist[MAX_CPUS];
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L };

	for (int i = 0; i < n; i++) {
		/* run on CPU, then let the wakeup choose freely: prev_cpu == CPU */
		pin(cpu);
		pin(-1);
		nanosleep(&ts, NULL);
		int where = sched_getcpu();
		if (where >= 0 && where < MAX_CPUS)
			hist[where]++;
	}
	printf("# wake histogram (cpu:count):");
	for (int c = 0; c < MAX_CPUS; c++)
		if (hist[c])
			printf(" %d:%ld", c, hist[c]);
	printf("\n");
	for (int c = 0; c < MAX_CPUS; c++)
		if (hist[c])
			printf("cpu %d %ld\n", c, hist[c]);
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

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return spin(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "wake"))
		return wake(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "pingpong"))
		return pingpong(atoi(argv[2]));
	fprintf(stderr, "usage: sis-probe spin CPU | wake N US CPU | pingpong N\n");
	return 2;
}
