// SPDX-License-Identifier: GPL-2.0
/*
 * mklong: a long trace from a short one, for the bench's memory bound.
 *
 *   mklong IN.data OUT.data N
 *
 * Copies IN.data (attrs and records) to OUT.data with each AUXTRACE
 * record written N times in a row: every AUX queue then holds its
 * recorded run N times over (each copy starts with a PSB), i.e. N real
 * runs concatenated, decoded like one trace N times as long.  Features
 * (the header's optional sections) are not copied: ptreplay does not
 * read them.
 */
#include "pdata.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf's record type of AUX data */
#define MKLONG_AUXTRACE	71

int main(int argc, char **argv)
{
	struct pdata_wattr attrs[PDATA_MAX_ATTRS];
	struct pdata_writer w;
	struct pdata_rec rec;
	struct pdata pd;
	unsigned long n, i;
	uint32_t k;
	FILE *f;
	int err;

	if (argc != 4 || !(n = strtoul(argv[3], NULL, 0))) {
		fprintf(stderr, "usage: mklong IN.data OUT.data N\n");
		return 1;
	}
	if (pdata_open(&pd, argv[1], 0) < 0) {
		fprintf(stderr, "mklong: %s: %s\n", argv[1], pd.error);
		return 1;
	}
	f = fopen(argv[2], "w");
	if (!f) {
		fprintf(stderr, "mklong: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	for (k = 0; k < pd.nattr; ++k) {
		attrs[k].attr = pd.attr[k].raw;
		attrs[k].size = pd.attr_size - 16;
		attrs[k].ids = (const uint64_t *)pd.attr[k].ids;
		attrs[k].nr_ids = pd.attr[k].nr_ids;
	}
	err = pdata_write_begin(&w, f, pd.attr_size, attrs, pd.nattr);
	while (!err && (err = pdata_next(&pd, &rec)) > 0) {
		err = 0;
		if (rec.type != MKLONG_AUXTRACE) {
			err = pdata_write(&w, rec.hdr, rec.size);
			continue;
		}
		for (i = 0; i < n && !err; ++i)
			err = pdata_write_auxtrace(&w, (const void *)rec.hdr,
						   rec.aux, rec.aux_size);
	}
	if (!err)
		err = pdata_write_end(&w);
	if (err < 0 || fclose(f)) {
		fprintf(stderr, "mklong: %s: cannot write it (%d)\n", argv[2],
			err);
		return 1;
	}
	pdata_close(&pd);
	return 0;
}
