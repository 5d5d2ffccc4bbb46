/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - minimal kselftest-style TAP helpers for the ptsynth unit tests.
 * Each unit test binary prints "ok"/"not ok" lines without numbers; the
 * runner (run_tests.sh) numbers them.
 */
#ifndef PTSYNTH_TAP_H
#define PTSYNTH_TAP_H

#include <stdio.h>

static int tap_failed;

#define TAP_OK(cond, ...) do {					\
	if (cond) {						\
		printf("ok ");					\
	} else {						\
		printf("not ok ");				\
		tap_failed++;					\
	}							\
	printf(__VA_ARGS__);					\
	printf("\n");						\
} while (0)

#define TAP_DIAG(...) do { printf("# "); printf(__VA_ARGS__); printf("\n"); } while (0)

#endif
