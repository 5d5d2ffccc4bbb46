// SPDX-License-Identifier: GPL-2.0
/*
 * Check the AUX data of a perf.data (file or pipe format) recorded from
 * the flowjit_aux test PMU: every PERF_RECORD_AUXTRACE continues where
 * the one before it of the same buffer ended, and the bytes are the PMU's
 * records, in order, each once. Sequence gaps are allowed only when a
 * PERF_RECORD_AUX said TRUNCATED. Prints what it found; exit 0 when good.
 * The file is read by tools/lib/flowjit's perf.data reader (pdata.h): a
 * malformed one is an error.
 *
 * Usage: aux_perfdata FILE
 */
#include "aux_splice.h"
#include "pdata.h"

#define NR_IDX	64

static struct ax_check check[NR_IDX];
static uint64_t next_off[NR_IDX], discont;

/* The trace bytes of an AUXTRACE record, checked as the PMU's records */
static void auxtrace(const struct pdata_rec *rec)
{
	uint64_t size, offset, left;
	const uint8_t *p = rec->aux;
	uint32_t idx;
	int i;

	/* size, offset, reference, idx: pdata_next() checked they are there */
	memcpy(&size, rec->body, 8);
	memcpy(&offset, rec->body + 8, 8);
	memcpy(&idx, rec->body + 24, 4);
	i = idx % NR_IDX;
	if (offset != next_off[i])
		discont++;
	next_off[i] = offset + size;
	for (left = rec->aux_size; left; ) {
		size_t n = left < (1 << 16) ? left : (1 << 16);

		ax_check_feed(&check[i], p, n);
		p += n;
		left -= n;
	}
}

int main(int argc, char **argv)
{
	uint64_t auxtrace_nr = 0, truncated = 0, aux = 0;
	uint64_t bytes = 0, gaps = 0, bad = 0;
	struct pdata_rec rec;
	struct pdata pd;
	int i, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: aux_perfdata FILE\n");
		return 2;
	}
	if (pdata_open(&pd, argv[1], PDATA_PIPE)) {
		fprintf(stderr, "%s: not a perf.data file: %s\n", argv[1],
			pd.error);
		return 2;
	}
	while ((ret = pdata_next(&pd, &rec)) > 0) {
		if (rec.type == PERF_RECORD_AUX) {
			uint64_t a[3];	/* aux_offset, aux_size, flags */

			if (rec.body_size < sizeof(a)) {
				fprintf(stderr, "short AUX record at %llu\n",
					(unsigned long long)rec.offset);
				return 1;
			}
			memcpy(a, rec.body, sizeof(a));
			aux++;
			if (a[2] & PERF_AUX_FLAG_TRUNCATED)
				truncated++;
		} else if (rec.type == PDATA_REC_AUXTRACE) {
			auxtrace(&rec);
			auxtrace_nr++;
		}
	}
	if (ret < 0) {
		fprintf(stderr, "%s\n", pd.error);
		return 1;
	}
	for (i = 0; i < NR_IDX; i++) {
		bytes += check[i].bytes;
		gaps += check[i].gaps;
		bad += check[i].bad;
		if (check[i].bad)
			printf("# idx %d: %s\n", i, check[i].first_error);
	}
	printf("# %llu AUXTRACE records, %llu bytes, %llu discontinuities\n",
	       (unsigned long long)auxtrace_nr, (unsigned long long)bytes,
	       (unsigned long long)discont);
	printf("# %llu bad records, %llu gaps, %llu AUX, %llu TRUNCATED\n",
	       (unsigned long long)bad, (unsigned long long)gaps,
	       (unsigned long long)aux, (unsigned long long)truncated);
	pdata_close(&pd);
	return !bytes || bad || discont || (gaps && !truncated);
}
