// SPDX-License-Identifier: GPL-2.0
/*
 * spin: the benchmark program.  Two threads (main and one worker) each run
 * a branchy loop of about a million instructions, so the per-thread trace
 * has two AUX queues of similar size (for the -j 2 speed-up).
 */
#include <pthread.h>
#include <stdlib.h>

static volatile unsigned long sink;

static unsigned long __attribute__((noinline)) step(unsigned long x)
{
	return x & 1 ? 3 * x + 1 : x / 2;
}

static void work(unsigned long n)
{
	unsigned long i, x = 27, acc = 0;

	for (i = 0; i < n; ++i) {
		x = step(x);
		if (x == 1)
			x = 27 + i;
		acc += x & 0xff;
	}
	sink = acc;
}

static void *worker(void *arg)
{
	work((unsigned long)arg);
	return NULL;
}

int main(int argc, char *argv[])
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 60000;
	pthread_t t;

	if (pthread_create(&t, NULL, worker, (void *)n))
		return 1;
	work(n);
	pthread_join(t, NULL);
	return 0;
}
