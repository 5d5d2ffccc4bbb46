// SPDX-License-Identifier: GPL-2.0
/*
 * What the guest's clock counts: make bench's instruction mode boots the
 * guest under QEMU's instruction counting (-icount shift=0), where every
 * executed guest instruction advances the virtual clock by 1 ns, so a
 * CLOCK_MONOTONIC delta is a count of the instructions the machine
 * executed meanwhile (interrupts and the kernel included). This program
 * checks that premise on loops of known length and measures how string
 * instructions are counted. It prints "BENCH" lines:
 *
 *   insn_clock_ns_per_insn   CLOCK_MONOTONIC ns per instruction of a loop
 *                            of dec/jnz (2 instructions an iteration),
 *                            the least of 5 runs: 1 under -icount shift=0,
 *                            the host's speed under plain TCG
 *   insn_clock_tsc_per_insn  the same in TSC ticks
 *   insn_clock_rep_movsb_per_byte  instructions counted per byte by one
 *                            "rep movsb" of 1 MiB, in units of the loop's
 *                            instruction (a CPU counts the rep movsb as
 *                            one instruction, QEMU counts every iteration)
 *
 *   insn_clock [--expect-icount]
 *
 * With --expect-icount it exits 1 unless an instruction is 1 ns within
 * 1%: the benches' instruction ratios would mean nothing.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOOP_ITERS	(10UL * 1000 * 1000)
#define COPY_BYTES	(1024UL * 1024)
#define RUNS		5

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t tsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* 2 * @n instructions: dec and jnz */
static void spin(unsigned long n)
{
	asm volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

static void copy(void *dst, const void *src, unsigned long n)
{
	asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

int main(int argc, char **argv)
{
	bool expect = argc > 1 && !strcmp(argv[1], "--expect-icount");
	double ns_best = 0, tsc_best = 0, copy_best = 0;
	char *a = malloc(COPY_BYTES), *b = malloc(COPY_BYTES);
	int i;

	if (!a || !b) {
		perror("malloc");
		return 2;
	}
	memset(a, 1, COPY_BYTES);
	memset(b, 2, COPY_BYTES);
	for (i = 0; i < RUNS; i++) {
		uint64_t t0, c0, t1, c1, t2;
		double ns, ticks, per_byte;

		t0 = now_ns();
		c0 = tsc();
		spin(LOOP_ITERS);
		c1 = tsc();
		t1 = now_ns();
		copy(b, a, COPY_BYTES);
		t2 = now_ns();
		ns = (double)(t1 - t0) / (2 * LOOP_ITERS);
		ticks = (double)(c1 - c0) / (2 * LOOP_ITERS);
		per_byte = (double)(t2 - t1) / ns / COPY_BYTES;
		printf("# run %d: %.4f ns and %.4f TSC ticks per instruction, ",
		       i, ns, ticks);
		printf("rep movsb %.4f per byte\n", per_byte);
		if (!i || ns < ns_best)
			ns_best = ns;
		if (!i || ticks < tsc_best)
			tsc_best = ticks;
		if (!i || per_byte < copy_best)
			copy_best = per_byte;
	}
	printf("BENCH insn_clock_ns_per_insn %.4f ns\n", ns_best);
	printf("BENCH insn_clock_tsc_per_insn %.4f ticks\n", tsc_best);
	printf("BENCH insn_clock_rep_movsb_per_byte %.4f insns\n", copy_best);
	if (expect && (ns_best < 0.99 || ns_best > 1.01)) {
		printf("# not instruction counting: %.4f ns per instruction\n", ns_best);
		return 1;
	}
	return 0;
}
