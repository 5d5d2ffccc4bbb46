// SPDX-License-Identifier: GPL-2.0
/*
 * Start-at mode (ptsynth trace --start-on-signal USR1 --stop-on-signal
 * USR2): work, SIGUSR1, a little work with a system call, SIGUSR2, more
 * work.  Both signals are ignored, so the program runs the same with or
 * without a tracer swallowing them.
 */
#include <signal.h>
#include <unistd.h>

static volatile unsigned long sink;

static unsigned long work(int n)
{
	unsigned long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += i % 7 ? i : 3 * i;
	return s;
}

int main(void)
{
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	sink = work(3000);
	raise(SIGUSR1);
	sink += work(200) + getppid();
	raise(SIGUSR2);
	sink += work(3001);
	return 0;
}
