// SPDX-License-Identifier: GPL-2.0
/*
 * Trace a user-space JIT the way perf record --flowjit -- CMD does and
 * show that every code revision it ran was captured by the kernel, with
 * the bytes it wrote, without any help from the JIT.
 *
 *   jit_trace EBPF_JIT_BINARY [ebpf-jit options and scenario]
 *   jit_trace		(/samples/ebpf-jit --mode wx rewrite, for make demo)
 */
#include "jit_trace.h"

int main(int argc, char **argv)
{
	static struct jt_rev revs[JT_MAX_REVS];
	static struct fj_set set;
	static char * const demo[] = { "jit_trace", "/samples/ebpf-jit",
				       "--mode", "wx", "--count", "3",
				       "rewrite", NULL };
	char *args[32];
	int i, status, n, missing;
	struct sb sb;
	pid_t pid = 0;

	if (argc == 1) {
		argv = (char **)demo;
		argc = 7;
	}
	if (argc < 3 || argc > 28) {
		fprintf(stderr, "usage: %s EBPF_JIT [OPTIONS] SCENARIO\n",
			argv[0]);
		return 2;
	}
	args[0] = argv[1];
	args[1] = "--log";
	args[2] = "/tmp/jit_trace.log";
	for (i = 2; i < argc; i++)
		args[i + 1] = argv[i];
	args[argc + 1] = NULL;
	unlink("/tmp/jit_trace.log");

	status = jt_run(args, &sb, &set, &pid);
	if (status < 0) {
		fprintf(stderr, "perf_event_open(flowjit): %s\n",
			strerror(-status));
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s failed (status %#x)\n", args[0], status);
		return 1;
	}
	n = jt_read_log("/tmp/jit_trace.log", revs, JT_MAX_REVS);
	if (n <= 0) {
		fprintf(stderr, "no usable revision log\n");
		return 1;
	}
	printf("the JIT (pid %d) ran %d code revisions;", pid, n);
	printf(" the kernel wrote %d flowjit records (%llu lost):\n",
	       set.records, (unsigned long long)fj_lost(&sb));
	missing = jt_missing(revs, n, &set, pid, true);
	printf("%d of %d revisions captured before they ran, byte for byte\n",
	       n - missing, n);
	sb_close(&sb);
	return missing ? 1 : 0;
}
