// SPDX-License-Identifier: GPL-2.0
/*
 * Is this process's JIT code tracked? Run by user_jit_suid after an
 * exec, where nothing else can ask: write code into fresh RWX pages,
 * call each, write each again, and exit with the number of page faults
 * the calls and the rewrites took. Untracked, the pages stay RWX and
 * that is 0; tracked, each call takes an exec fault (the snapshot) and
 * each rewrite a write fault (the re-arming): 2 * PROBE_PAGES.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "user_jit.h"

#define PROBE_PAGES	8

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

int main(void)
{
	uint8_t *m = mmap(NULL, PROBE_PAGES * PAGE,
			  PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long before;
	int i;

	if (m == MAP_FAILED)
		return 255;
	for (i = 0; i < PROBE_PAGES; i++)
		emit_ret_imm(m + i * PAGE, i);
	before = minflt();
	for (i = 0; i < PROBE_PAGES; i++)
		if (call(m + i * PAGE) != i)
			return 254;
	for (i = 0; i < PROBE_PAGES; i++)
		emit_ret_imm(m + i * PAGE, i + 1);
	return minflt() - before;
}
