/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kselftest harness with every test's timeout multiplied by
 * $FLOWJIT_TIMEOUT_SCALE (a whole number, default 1). Include instead of
 * ../kselftest_harness.h, and end the file with FLOWJIT_HARNESS_MAIN
 * instead of TEST_HARNESS_MAIN.
 *
 * The harness kills a test after 30 s unless the test says otherwise.
 * The guest of make check runs the sanitizer kernel under QEMU's TCG, on
 * one host thread for both vCPUs, beside the other base's guest, where a
 * test that takes a second on hardware can take more than 30; the
 * guest's init sets the scale. A test that hangs is still killed, later.
 */
#ifndef FLOWJIT_HARNESS_H
#define FLOWJIT_HARNESS_H

#include <stdlib.h>

#include "../kselftest_harness.h"

/*
 * $FLOWJIT_TIMEOUT_SCALE, at least 1: what a test's own waits for the
 * kernel's background work (ksmd, kcompactd) are multiplied by as well
 */
static inline int flowjit_timeout_scale(void)
{
	const char *env = getenv("FLOWJIT_TIMEOUT_SCALE");
	int scale = env ? atoi(env) : 1;

	return scale > 1 ? scale : 1;
}

static inline void flowjit_scale_timeouts(struct __fixture_metadata *list)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	int scale = flowjit_timeout_scale();

	if (scale <= 1)
		return;
	for (f = list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout *= scale;
}

/*
 * A constructor after every test of the file: constructors run in the
 * order they are defined (the harness registers each test with one), so
 * every test is registered when it runs.
 */
#define FLOWJIT_HARNESS_MAIN \
	static void __attribute__((constructor)) flowjit_harness_scale(void) \
	{ \
		flowjit_scale_timeouts(__fixture_list); \
	} \
	TEST_HARNESS_MAIN

#endif /* FLOWJIT_HARNESS_H */
