// SPDX-License-Identifier: GPL-2.0
/*
 * A real JIT nobody here wrote: Debian's LuaJIT runs a hot loop
 * (luajit_hot.lua) as perf record -- CMD would trace it, and the machine
 * code of every trace, as LuaJIT itself reads it back at the end
 * (jit.util.tracemc(), what -jdump prints), must be in the snapshots
 * with exactly those bytes. The loop runs several times after the last
 * trace is compiled, so the final bytes of every trace ran.
 */
#include "../kselftest_harness.h"
#include "jit_trace.h"

#define LUAJIT		"/usr/bin/luajit"
#define TRACES		"/tmp/luajit.traces"

/* Read "TRACE ADDR LEN HEX" lines as revisions. Returns how many, or -1. */
static int read_traces(const char *path, struct jt_rev *revs, int max)
{
	static char line[3 * 2 * JT_PAGE], hex[2 * 2 * JT_PAGE + 1];
	unsigned long long addr;
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		struct jt_rev *r = &revs[n];
		unsigned int i;

		if (sscanf(line, "%u %llx %u %8192s", &r->rev, &addr, &r->len,
			   hex) != 4 || r->len > sizeof(r->bytes) ||
		    strlen(hex) != 2 * r->len) {
			fclose(f);
			return -1;
		}
		r->addr = addr;
		for (i = 0; i < r->len; i++) {
			if (sscanf(hex + 2 * i, "%2hhx", &r->bytes[i]) != 1) {
				fclose(f);
				return -1;
			}
		}
		n++;
	}
	fclose(f);
	return n;
}

static int images(struct fj_set *set)
{
	int i, n = 0;

	for (i = 0; i < set->nr; i++)
		n += set->obj[i].rec.kind == FLOWJIT_KIND_USER_JIT &&
		     set->obj[i].rec.op == FLOWJIT_OP_IMAGE;
	return n;
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
	n = read_traces(TRACES, revs, JT_MAX_REVS);
	ASSERT_LT(0, n) TH_LOG("LuaJIT compiled no trace");
	missing = jt_missing(revs, n, set, pid, false);
	TH_LOG("%d traces, %d snapshots, %d records, %llu lost, %d not captured",
	       n, images(set), set->records,
	       (unsigned long long)fj_lost(&sb), missing);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, fj_lost(&sb));
	sb_close(&sb);
	fj_reset(set);
	free(set);
	free(revs);
}

TEST_HARNESS_MAIN
