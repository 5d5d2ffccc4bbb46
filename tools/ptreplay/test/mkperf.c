// SPDX-License-Identifier: GPL-2.0
/*
 * mkperf: write the JIT scenario of pr_mkperf.h as a perf.data file, for
 * the CLI tests.  usage: mkperf FILE
 */
#include "libflowjit.h"
#include "pr_mkperf.h"

#include <stdio.h>

int main(int argc, char *argv[])
{
	uint8_t *file;
	size_t size;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: mkperf FILE\n");
		return 1;
	}
	file = mkp_scenario_file(flowjit_csum, 1, &size);
	f = fopen(argv[1], "w");
	if (!f || fwrite(file, 1, size, f) != size || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	free(file);
	return 0;
}
