// SPDX-License-Identifier: GPL-2.0
/*
 * A real JIT nobody here wrote: Debian's LuaJIT runs a hot loop
 * (luajit_hot.lua) as perf record -- CMD would trace it, and the machine
 * code of every trace, as LuaJIT itself reads it back at the end
 * (jit.util.tracemc(), what -jdump prints), must be in the snapshots
 * with exactly those bytes. The loop runs several times after the last
 * trace is compiled, so the final bytes of every trace ran.
 */
#include "harness.h"
#include "jit_trace.h"
#include "user_jit.h"

#define LUAJIT		"/usr/bin/luajit"
#define TRACES		"/tmp/luajit.traces"

/* Parse a "TRACE ADDR LEN HEX" line as a revision. */
static int parse_trace(const char *line, struct jt_rev *r)
{
	static char hex[2 * 2 * JT_PAGE + 1];
	unsigned long long addr;

	if (sscanf(line, "%u %llx %u %8192s", &r->rev, &addr, &r->len,
		   hex) != 4 || jt_unhex(r, hex))
		return -1;
	r->addr = addr;
	return 1;
}

TEST(every_trace_that_ran_was_captured)
{
	char *argv[6] = { LUAJIT, "luajit_hot.lua", TRACES, "4", "100000",
			 NULL };
	struct fj_set *set = calloc(1, sizeof(*set));
	struct jt_rev *revs = calloc(JT_MAX_REVS, sizeof(*revs));
	int status, n, missing;
	struct sb sb;
	pid_t pid = 0;

	if (access(LUAJIT, X_OK))
		SKIP(return, "%s not installed", LUAJIT);
	ASSERT_NE(NULL, set);
	ASSERT_NE(NULL, revs);
	unlink(TRACES);
	status = jt_run(argv, &sb, set, &pid);
	ASSERT_LE(0, status) TH_LOG("perf_event_open: %s", strerror(-status));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	n = jt_read_revs(TRACES, revs, JT_MAX_REVS, parse_trace);
	ASSERT_LT(0, n) TH_LOG("LuaJIT compiled no trace");
	missing = jt_missing(revs, n, set, pid, false);
	TH_LOG("%d traces, %d snapshots, %d records, %llu lost, %d not captured",
	       n, count_images(set), set->records,
	       (unsigned long long)fj_lost(&sb), missing);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, fj_lost(&sb));
	jt_free(&sb, set, revs);
}

FLOWJIT_HARNESS_MAIN
