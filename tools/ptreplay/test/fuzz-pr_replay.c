// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the perf.data reader, the sideband/flowjit loader and
 * the decode loop with every output, on arbitrary bytes.
 *
 * Files named in the input are not opened (no_files), nor is the vdso
 * used, so a run depends on the input only.
 */
#include "pr_replay.h"
#include "pr_report.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct pr_replay_opts opts = {
		.jobs = 1,
		.no_files = 1,
		.no_vdso = 1,
		.progress = 0,
		.outputs = PR_OUT_FLOW | PR_OUT_CALLS | PR_OUT_PROFILE |
			   PR_OUT_HEALTH,
	};
	struct pr_replay *rp;

	if (!null)
		null = fopen("/dev/null", "w");
	rp = malloc(sizeof(*rp));
	if (!rp)
		return 0;
	/* the input's size picks the paths: JSON, the block decoder (no
	 * flow), a piece per PSB, lines written while decoding, -j 2
	 * (pieces in parallel)
	 */
	opts.json = size & 1;
	if (size & 2)
		opts.outputs &= ~(uint32_t)PR_OUT_FLOW;
	opts.piece = size & 4 ? 1 : 0;
	opts.stream = size & 8 ? null : NULL;
	opts.jobs = size & 16 ? 2 : 1;
	pr_replay_init(rp, &opts);
	if (pr_replay_load(rp, data, size) == 0) {
		struct pr_decode *d = pr_decode_run(rp);

		pr_report_print(d, null);
		pr_decode_free(d);
	}
	pr_replay_fini(rp);
	free(rp);
	return 0;
}
