// SPDX-License-Identifier: GPL-2.0
/*
 * A real JIT (samples/ebpf-jit) traced as perf record -- CMD would trace
 * it: every code revision its log says ran was captured with exactly the
 * bytes it wrote, across exec, threads, rewrites, moves and reuse.
 */
#include "harness.h"
#include "jit_trace.h"

#define EBPF_JIT	"/samples/ebpf-jit"

FIXTURE(jit_sample) {
	struct sb sb;
	struct fj_set *set;
	struct jt_rev *revs;
};

FIXTURE_VARIANT(jit_sample) {
	const char *mode;
	const char *scenario;
	const char *extra;	/* one more option, or NULL */
};

FIXTURE_VARIANT_ADD(jit_sample, wx_compile_run) {
	.mode = "wx",
	.scenario = "compile-run",
};

FIXTURE_VARIANT_ADD(jit_sample, wx_rewrite) {
	.mode = "wx",
	.scenario = "rewrite",
};

FIXTURE_VARIANT_ADD(jit_sample, wx_span) {
	.mode = "wx",
	.scenario = "span",
};

FIXTURE_VARIANT_ADD(jit_sample, wx_free_reuse) {
	.mode = "wx",
	.scenario = "free-reuse",
};

FIXTURE_VARIANT_ADD(jit_sample, wx_loop42) {
	.mode = "wx",
	.scenario = "loop42",
};

FIXTURE_VARIANT_ADD(jit_sample, wx_threads) {
	.mode = "wx",
	.scenario = "threads",
};

FIXTURE_VARIANT_ADD(jit_sample, rwx_rewrite) {
	.mode = "rwx",
	.scenario = "rewrite",
};

FIXTURE_VARIANT_ADD(jit_sample, rwx_static_key) {
	.mode = "rwx",
	.scenario = "static-key",
};

FIXTURE_VARIANT_ADD(jit_sample, rwx_threads_atomic) {
	.mode = "rwx",
	.scenario = "threads",
	.extra = "--sync=atomic",
};

FIXTURE_VARIANT_ADD(jit_sample, mmap_exec_free_reuse) {
	.mode = "mmap-exec",
	.scenario = "free-reuse",
};

/* memfd mapped RW at one address, RX at another */
FIXTURE_VARIANT_ADD(jit_sample, memfd_dual_rewrite) {
	.mode = "memfd-dual",
	.scenario = "rewrite",
};

FIXTURE_VARIANT_ADD(jit_sample, memfd_dual_span) {
	.mode = "memfd-dual",
	.scenario = "span",
};

FIXTURE_VARIANT_ADD(jit_sample, memfd_dual_each_free_reuse) {
	.mode = "memfd-dual",
	.scenario = "free-reuse",
	.extra = "--map=each",
};

FIXTURE_VARIANT_ADD(jit_sample, memfd_dual_static_key) {
	.mode = "memfd-dual",
	.scenario = "static-key",
};

FIXTURE_VARIANT_ADD(jit_sample, memfd_dual_threads_atomic) {
	.mode = "memfd-dual",
	.scenario = "threads",
	.extra = "--sync=atomic",
};

/*
 * The smallest user address space a whole-space retire covers: the
 * kernel's TASK_SIZE_MAX under 4-level paging, 2^47 less its guard page
 * (2^56 less one under 5-level paging)
 */
#define WHOLE_SPACE_MIN	((1ULL << 47) - 4096)

/* retire records of @pid that cover a whole address space */
static int whole_space_retires(struct fj_set *set, pid_t pid)
{
	uint64_t asid = 0;
	int i, n = 0;

	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (o->rec.kind != FLOWJIT_KIND_USER_JIT ||
		    o->rec.op != FLOWJIT_OP_RETIRE || o->rec.addr ||
		    o->rec.len < WHOLE_SPACE_MIN || o->rec.pid != (uint32_t)pid ||
		    o->rec.asid == asid)
			continue;
		asid = o->rec.asid;
		n++;
	}
	return n;
}

FIXTURE_SETUP(jit_sample)
{
	if (access(EBPF_JIT, X_OK))
		SKIP(return, "%s not installed", EBPF_JIT);
	self->set = calloc(1, sizeof(*self->set));
	self->revs = calloc(JT_MAX_REVS, sizeof(*self->revs));
	ASSERT_NE(NULL, self->set);
	ASSERT_NE(NULL, self->revs);
}

FIXTURE_TEARDOWN(jit_sample)
{
	sb_close(&self->sb);
	if (self->set)
		fj_reset(self->set);
	free(self->set);
	free(self->revs);
}

TEST_F(jit_sample, every_revision_that_ran_was_captured)
{
	char *argv[8] = { EBPF_JIT, "--mode", (char *)variant->mode,
			  "--log", "/tmp/jit_sample.log" };
	int argc = 5, status, n, missing;
	pid_t pid = 0;

	if (variant->extra) {
		/* "--opt=value" as two arguments */
		argv[argc++] = strndup(variant->extra,
				       strchr(variant->extra, '=') -
				       variant->extra);
		argv[argc++] = strchr(variant->extra, '=') + 1;
	}
	argv[argc++] = (char *)variant->scenario;
	unlink("/tmp/jit_sample.log");
	status = jt_run(argv, &self->sb, self->set, &pid);
	ASSERT_LE(0, status) TH_LOG("perf_event_open: %s", strerror(-status));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("ebpf-jit died of signal %d",
					      WTERMSIG(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	n = jt_read_log("/tmp/jit_sample.log", self->revs, JT_MAX_REVS);
	ASSERT_LT(0, n) TH_LOG("no usable revision log");
	missing = jt_missing(self->revs, n, self->set, pid, false);
	TH_LOG("%d revisions ran, %d records, %llu lost, %d not captured", n,
	       self->set->records, (unsigned long long)fj_lost(&self->sb),
	       missing);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, fj_lost(&self->sb));
	/* exec and exit each retired a whole address space, no other */
	EXPECT_EQ(2, whole_space_retires(self->set, pid));
}

FLOWJIT_HARNESS_MAIN
