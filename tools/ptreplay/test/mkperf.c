// SPDX-License-Identifier: GPL-2.0
/*
 * mkperf: write the JIT scenario of pr_mkperf.h as a perf.data file, for
 * the CLI tests; with --calls the calls scenario (with TSC packets as it
 * returns), with --calls-untimed the same with one TSC.
 * usage: mkperf [--calls|--calls-untimed] FILE
 */
#include "libflowjit.h"
#include "pr_mkperf.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char *argv[])
{
	uint8_t *file;
	size_t size;
	FILE *f;

	if (argc == 3 && !strcmp(argv[1], "--calls"))
		file = mkp_calls_file(flowjit_csum, 1, &size);
	else if (argc == 3 && !strcmp(argv[1], "--calls-untimed"))
		file = mkp_calls_file(flowjit_csum, 0, &size);
	else if (argc == 2)
		file = mkp_scenario_file(flowjit_csum, 1, &size);
	else {
		fprintf(stderr, "usage: mkperf [--calls|--calls-untimed] "
			"FILE\n");
		return 1;
	}
	argv += argc - 2;
	f = fopen(argv[1], "w");
	if (!f || fwrite(file, 1, size, f) != size || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	free(file);
	return 0;
}
