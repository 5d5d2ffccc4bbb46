// SPDX-License-Identifier: GPL-2.0
/*
 * Check the AUX data of a perf.data (file or pipe format) recorded from
 * the flowjit_aux test PMU: every PERF_RECORD_AUXTRACE continues where
 * the one before it of the same buffer ended, and the bytes are the PMU's
 * records, in order, each once. Sequence gaps are allowed only when a
 * PERF_RECORD_AUX said TRUNCATED. Prints what it found; exit 0 when good.
 *
 * Usage: aux_perfdata FILE
 */
#include "aux_splice.h"

#define NR_IDX	64

static struct ax_check check[NR_IDX];
static uint64_t next_off[NR_IDX];

int main(int argc, char **argv)
{
	uint64_t hdr[5], pos, end, auxtrace = 0, truncated = 0, aux = 0;
	uint64_t bytes = 0, gaps = 0, bad = 0, discont = 0;
	struct perf_event_header eh;
	static char buf[1 << 16];
	FILE *f;
	int i;

	f = argc == 2 ? fopen(argv[1], "r") : NULL;
	if (!f) {
		fprintf(stderr, "usage: aux_perfdata FILE\n");
		return 2;
	}
	if (fread(hdr, sizeof(hdr), 1, f) != 1 ||
	    memcmp(hdr, "PERFILE2", 8)) {
		fprintf(stderr, "%s: not a perf.data file\n", argv[1]);
		return 2;
	}
	if (hdr[1] == 16) {		/* pipe format: records follow */
		pos = 16;
		end = UINT64_MAX;
	} else {
		/* the data section's offset and size are at byte 40 */
		if (fseek(f, 40, SEEK_SET) || fread(hdr, 16, 1, f) != 1)
			return 2;
		pos = hdr[0];
		end = hdr[0] + hdr[1];
	}
	while (pos < end) {
		if (fseek(f, pos, SEEK_SET) || fread(&eh, sizeof(eh), 1, f) != 1)
			break;
		if (eh.size < sizeof(eh)) {
			fprintf(stderr, "bad record at %llu\n",
				(unsigned long long)pos);
			return 1;
		}
		if (eh.type == PERF_RECORD_AUX) {
			uint64_t a[3];

			if (fread(a, sizeof(a), 1, f) != 1)
				return 1;
			aux++;
			if (a[2] & PERF_AUX_FLAG_TRUNCATED)
				truncated++;
		} else if (eh.type == 71) {	/* PERF_RECORD_AUXTRACE */
			uint64_t a[3], left;
			uint32_t b[4];

			if (fread(a, sizeof(a), 1, f) != 1 ||
			    fread(b, sizeof(b), 1, f) != 1)
				return 1;
			i = b[0] % NR_IDX;
			if (a[1] != next_off[i])
				discont++;
			next_off[i] = a[1] + a[0];
			auxtrace++;
			for (left = a[0]; left; ) {
				size_t n = left < sizeof(buf) ? left : sizeof(buf);

				if (fread(buf, 1, n, f) != n) {
					fprintf(stderr, "short AUXTRACE data\n");
					return 1;
				}
				ax_check_feed(&check[i], buf, n);
				left -= n;
			}
			pos += a[0];
		}
		pos += eh.size;
	}
	for (i = 0; i < NR_IDX; i++) {
		bytes += check[i].bytes;
		gaps += check[i].gaps;
		bad += check[i].bad;
		if (check[i].bad)
			printf("# idx %d: %s\n", i, check[i].first_error);
	}
	printf("# %llu AUXTRACE records, %llu bytes, %llu discontinuities\n",
	       (unsigned long long)auxtrace, (unsigned long long)bytes,
	       (unsigned long long)discont);
	printf("# %llu bad records, %llu gaps, %llu AUX, %llu TRUNCATED\n",
	       (unsigned long long)bad, (unsigned long long)gaps,
	       (unsigned long long)aux, (unsigned long long)truncated);
	return !bytes || bad || discont || (gaps && !truncated);
}
