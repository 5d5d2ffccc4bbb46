// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the perf.data reader, the sideband/flowjit loader and
 * the decode loop with every output (also the pr_export files), on
 * arbitrary bytes.
 *
 * Files named in the input are not opened (no_files), nor is the vdso
 * used, so a run depends on the input only.
 */
#include "pr_export.h"
#include "pr_replay.h"
#include "pr_report.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write the call stacks of @d (--chrome-trace, --folded) to @out. */
static void pr_fuzz_export(const struct pr_decode *d, FILE *out)
{
	struct pr_export **x;
	size_t i;

	if (!d)
		return;
	x = calloc(d->nq ? d->nq : 1, sizeof(*x));
	if (!x)
		return;
	for (i = 0; i < d->nq; ++i)
		x[i] = d->q[i].x;
	pr_export_chrome(out, x, d->nq, NULL, NULL, "fuzz");
	pr_export_folded(out, x, d->nq);
	free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct pr_replay_opts opts = {
		.jobs = 1,
		.no_files = 1,
		.no_vdso = 1,
		.progress = 0,
		.outputs = PR_OUT_FLOW | PR_OUT_CALLS | PR_OUT_PROFILE |
			   PR_OUT_HEALTH | PR_OUT_EXPORT,
		.chrome_trace = "-",
		.folded = "-",
	};
	struct pr_replay *rp;

	if (!null)
		null = fopen("/dev/null", "w");
	rp = malloc(sizeof(*rp));
	if (!rp)
		return 0;
	opts.json = size & 1;
	pr_replay_init(rp, &opts);
	if (pr_replay_load(rp, data, size) == 0) {
		struct pr_decode *d = pr_decode_run(rp);

		pr_report_print(d, null);
		pr_fuzz_export(d, null);
		pr_decode_free(d);
	}
	pr_replay_fini(rp);
	free(rp);
	return 0;
}
