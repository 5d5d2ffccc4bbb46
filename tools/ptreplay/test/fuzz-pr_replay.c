// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the perf.data reader, the sideband/flowjit loader and
 * the decode loop with every output (also the pr_export files), on
 * arbitrary bytes; the same bytes also go to the perf map and jitdump
 * parsers (pr_jitmap) and their lookups and stale rules, against two
 * flowjit revisions made of them.
 *
 * Files named in the input are not opened (no_files), nor is the vdso
 * used, so a run depends on the input only.
 */
#include "pr_export.h"
#include "pr_jitmap.h"
#include "pr_replay.h"
#include "pr_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t fuzz_tsc(const void *ctx, uint64_t tsc)
{
	(void)ctx;
	return tsc >> 1;
}

/* Look up every entry of @map (the first 256) at its ends. */
static void fuzz_lookups(const struct pr_jitmap *map,
			 const struct pr_region *v, size_t nv, FILE *null)
{
	size_t i;
	int stale;

	if (!map)
		return;
	for (i = 0; i < map->nsym && i < 256; ++i) {
		const struct pr_jitsym *s = &map->sym[i];
		uint64_t ip[2] = { s->start, s->end - 1 };
		size_t k;

		for (k = 0; k < 2; ++k) {
			pr_jitmap_map_at(map, v, nv, &v[nv - 1], ip[k], &stale);
			pr_jitmap_dump_stale(pr_jitmap_dump_at(map, ip[k],
							       s->time),
					     &v[i & 1]);
		}
	}
	pr_jitmap_warn(map, null);
}

/* The perf map and jitdump parsers on @data, with two revisions of
 * [0x1000, 0x1040) holding its first and next 64 bytes.
 */
static void fuzz_jitmap(const uint8_t *data, size_t size, FILE *null)
{
	static uint8_t bytes[2][64];
	struct flowjit_rev rev[2];
	struct pr_region v[2];
	struct pr_jitmap *m;
	size_t i;

	memset(bytes, 0, sizeof(bytes));
	memcpy(bytes, data, size < sizeof(bytes) ? size : sizeof(bytes));
	memset(rev, 0, sizeof(rev));
	memset(v, 0, sizeof(v));
	for (i = 0; i < 2; ++i) {
		rev[i].asid = 1;
		rev[i].start = 0x1000;
		rev[i].end = 0x1040;
		rev[i].time = 100 * (i + 1);
		rev[i].seq = i;
		rev[i].bytes = bytes[i];
		v[i].kind = PR_RGN_FLOWJIT;
		v[i].start = 0x1000;
		v[i].end = 0x1040;
		v[i].bytes = bytes[i];
		v[i].nbytes = 64;
		v[i].rev = &rev[i];
	}
	m = pr_jitmap_perfmap((const char *)data, size, 1);
	fuzz_lookups(m, v, 2, null);
	pr_jitmap_free(m);
	m = pr_jitmap_jitdump(data, size, fuzz_tsc, NULL, NULL);
	fuzz_lookups(m, v, 2, null);
	pr_jitmap_free(m);
}

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
	fuzz_jitmap(data, size, null);
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
		pr_fuzz_export(d, null);
		pr_decode_free(d);
	}
	pr_replay_fini(rp);
	free(rp);
	return 0;
}
