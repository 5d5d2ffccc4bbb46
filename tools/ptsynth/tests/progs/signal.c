// SPDX-License-Identifier: GPL-2.0
/*
 * Signal delivery: a synchronous signal (raise, delivered on return from
 * the kill syscall) and an asynchronous one (SIGALRM from an interval
 * timer, delivered in the middle of a busy loop: FUP + TIP.PGD).
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

static volatile int hits, alarms;

static void on_usr1(int sig)
{
	hits += sig;
}

static void on_alarm(int sig)
{
	alarms++;
	(void)sig;
}

int main(void)
{
	struct itimerval it;
	struct sigaction sa;
	long spin;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	raise(SIGUSR1);
	raise(SIGUSR1);

	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 2000;
	setitimer(ITIMER_REAL, &it, NULL);
	for (spin = 0; !alarms && spin < 2000000; spin++)
		;
	return hits == 2 * SIGUSR1 && alarms == 1 ? 0 : 1;
}
