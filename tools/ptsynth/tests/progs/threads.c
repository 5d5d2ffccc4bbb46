// SPDX-License-Identifier: GPL-2.0
/* Two threads besides main: clone, per-thread flows, join. */
#include <pthread.h>

static volatile int sink[2];

static void *worker(void *arg)
{
	int id = (int)(long)arg, i, acc = 0;

	for (i = 0; i < 300; i++)
		acc += (i % 3) ? i : -i;
	sink[id] = acc;
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	long i;

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
