// SPDX-License-Identifier: GPL-2.0
/*
 * Time BPF program loads (load + close, the path flowjit hooks) with a
 * CPU-wide flowjit event open on every CPU and with a plain one (no
 * flowjit, no side-band records), in alternating rounds so that drift
 * hits both alike. Prints the median time per load of each and their
 * ratio as "BENCH" lines. On a kernel without flowjit both rounds of a
 * pair run with the plain event (the second is not reported): the base
 * kernel the idle overhead is measured against then runs the same loads
 * in the same order, its reported rounds at the same places.
 *
 * A pair of rounds runs from LOADS / 2 to LOADS * 3 / 2 loads (the same
 * sequence every run). A load's allocations refill slabs and percpu
 * chunks now and then, thousands of instructions each (a fresh page is
 * zeroed); with rounds of one length those refills fell into the same
 * kind of round all through a boot, and boots came out 3 % apart.
 *
 * And every other pair runs the flowjit round first. vmalloc's lazy
 * purges (millions of instructions, every thousand loads or so: a load
 * frees a few vmalloc pages) fell into the second round of a pair, the
 * same rounds in every boot since the sequence of loads is the same:
 * with the flowjit round always second that put them all on flowjit's
 * side (6.12: 1.046 where the records cost 1.02). An even number of
 * rounds (10 by default) gives both orders as many pairs.
 *
 * With "ksymbol" the rounds with flowjit open an event with
 * attr.ksymbol instead, on any kernel: what perf's own side-band records
 * of the same loads and closes (PERF_RECORD_KSYMBOL, a register and an
 * unregister, as perf record asks for) cost, for scale. Its lines are
 * bpf_load_ksymbol_ns and bpf_load_ksymbol_ratio.
 *
 * With "on" ("off") after it, the timed loops of the rounds with
 * (without) the event are marked for scripts/bench-profile: an
 * ioprio_get() system call before and after each. (On a kernel without
 * flowjit the rounds "with" it are the second plain round of a pair.)
 *
 *   bpf_load_bench [ROUNDS [LOADS [flowjit|ksymbol [on|off]]]]
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "bpf_prog.h"
#include "flowjit_records.h"

#define MAX_ROUNDS	64

static int load_close(void)
{
	static const struct bpf_insn insns[] = BPF_PROG_TRIVIAL;
	int fd = bpf_load_filter(insns, 2, "fj_bench");

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* nanoseconds per load over @n loads */
static double time_loads(int n)
{
	double t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		if (load_close()) {
			perror("BPF_PROG_LOAD");
			exit(1);
		}
	}
	return (now_ns() - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* records and bytes the rounds with an event received */
static unsigned long nrec, nbytes;

/* mark the rounds with the event (1), without it (0), or none (-1) */
static int mark = -1;

/* open or close a window of scripts/bench-profile's */
static void mark_window(void)
{
	syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
}

static void drop(const struct perf_event_header *hdr, const struct flowjit_sample_id *id,
		 void *arg)
{
	(void)id;
	(void)arg;
	nrec++;
	nbytes += hdr->size;
}

/*
 * flowjit's hooks are a deferred static key (HZ): they stay patched in
 * for a second after the last event goes, as perf's own keys do, so
 * that events opened and closed in a loop do not patch text each time.
 * The rounds with the plain event must measure what a kernel with no
 * flowjit event runs: wait that second out (under instruction counting, sleep=off,
 * the guest jumps to its next timer). Every round does, on a kernel
 * without flowjit too, so that the base kernel the idle overhead is
 * measured against runs the same sleeps and the same timers after them.
 */
static void settle(int loads)
{
	struct timespec ts = { .tv_sec = 1, .tv_nsec = 200 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	/* the timers that came due meanwhile run now, not in the round */
	time_loads(loads / 4 + 1);
}

/*
 * One round: @loads loads and closes timed with @attr's event open on
 * every CPU, after the same wait and warm-up. Every round opens,
 * drains and closes an event, with flowjit or without (the rounds "off",
 * and every round on a kernel without flowjit), so that the ring
 * buffers' allocation and freeing, which change what the next loads pay
 * in the page and percpu allocators, is the same in both: only
 * attr.flowjit differs. An event without it and without side-band bits
 * costs a BPF load nothing. @on says which kind of round this is, for
 * the marks (see the top). Returns ns per load, or -1.
 */
static double round_with(struct perf_event_attr *attr, int loads, bool on)
{
	struct sb sb;
	double t;

	if (sb_open(&sb, attr)) {
		perror("perf_event_open");
		return -1;
	}
	settle(loads);
	if (mark == on)
		mark_window();
	t = time_loads(loads);
	if (mark == on)
		mark_window();
	sb_drain(&sb, drop, NULL);	/* not timed */
	sb_close(&sb);
	return t;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	int loads = argc > 2 ? atoi(argv[2]) : 200;
	bool ksym = argc > 3 && !strcmp(argv[3], "ksymbol");
	bool usage = argc > 3 && !ksym && strcmp(argv[3], "flowjit");
	double off[MAX_ROUNDS], on[MAX_ROUNDS], on_loads = 0;
	struct perf_event_attr attr, plain;
	const char *what = ksym ? "ksymbol" : "flowjit";
	struct sb sb;
	bool flowjit;
	int r;

	if (argc > 4)
		mark = !strcmp(argv[4], "on") ? 1 : !strcmp(argv[4], "off") ? 0 : -2;
	if (rounds < 1 || rounds > MAX_ROUNDS || loads < 1 || usage ||
	    mark == -2 || argc > 5) {
		fprintf(stderr, "usage: %s [ROUNDS (1-%d) [LOADS [flowjit|ksymbol [on|off]]]]\n",
			argv[0], MAX_ROUNDS);
		return 2;
	}
	sb_attr_init(&plain);
	/*
	 * Wake the reader as perf record does without --no-buffering: at
	 * the kernel's default watermark (half the buffer), not at every
	 * record, which costs an irq_work interrupt each.
	 */
	plain.watermark = 0;
	plain.wakeup_watermark = 0;
	attr = plain;
	if (ksym)
		attr.ksymbol = 1;
	else
		attr.flowjit = 1;
	/* "flowjit": the rounds with @attr can run (ksymbol: always) */
	flowjit = !sb_open(&sb, &attr);
	if (flowjit)
		sb_close(&sb);
	time_loads(loads / 4 + 1);		/* warm up */

	srand(1);
	for (r = 0; r < rounds; r++) {
		int n = loads / 2 + rand() % (loads + 1);

		/*
		 * every other pair starts with flowjit: see the top (on a
		 * kernel without it, the other round is a plain one)
		 */
		if (r % 2)
			on[r] = round_with(flowjit ? &attr : &plain, n, true);
		off[r] = round_with(&plain, n, false);
		if (!(r % 2))
			on[r] = round_with(flowjit ? &attr : &plain, n, true);
		if (off[r] < 0 || on[r] < 0)
			return 1;
		if (flowjit)
			on_loads += n + n / 4 + 1;
	}
	printf("BENCH bpf_load_ns %.0f ns\n", median(off, rounds));
	if (!flowjit) {
		printf("# no flowjit in this kernel: plain rounds, half reported\n");
		return 0;
	}
	printf("BENCH bpf_load_%s_ns %.0f ns\n", what, median(on, rounds));
	for (r = 0; r < rounds; r++)
		on[r] /= off[r];
	printf("BENCH bpf_load_%sratio %.3f ratio\n", ksym ? "ksymbol_" : "",
	       median(on, rounds));
	printf("# %.2f records (%.0f bytes) per load and close with the event\n",
	       (double)nrec / on_loads, (double)nbytes / on_loads);
	printf("# %d rounds of %d - %d loads, %s on/off alternating;"
	       " every other pair %s first;"
	       " ratio is the median of per-round ratios\n", rounds,
	       loads / 2, loads / 2 + loads, what, what);
	return 0;
}
