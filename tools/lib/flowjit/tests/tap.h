/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h: the unit tests' TAP. A test is a function returning 0 or the
 * line of its first failed check; tap_run() prints "ok N <what>" or
 * "not ok N <what>" and "# line L: <check>", and tap_exit() the plan.
 */
#ifndef LIBFLOWJIT_TAP_H
#define LIBFLOWJIT_TAP_H

#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int tap_nr, tap_failed;
static const char *tap_why;

#define TAP_CHECK(cond) do {				\
	if (!(cond)) {					\
		tap_why = #cond;			\
		return __LINE__;			\
	}						\
} while (0)

static inline void tap_run(int (*test)(void), const char *what)
{
	int line = test();

	tap_nr++;
	if (!line) {
		printf("ok %d %s\n", tap_nr, what);
		return;
	}
	tap_failed++;
	printf("not ok %d %s\n# line %d: %s\n", tap_nr, what, line, tap_why);
}

static inline int tap_exit(void)
{
	printf("1..%d\n", tap_nr);
	return tap_failed ? 1 : 0;
}

#endif /* LIBFLOWJIT_TAP_H */
