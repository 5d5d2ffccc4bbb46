// SPDX-License-Identifier: GPL-2.0
/*
 * sideband.c on a hand-made perf.data: two attrs with different sample_id
 * trailers (so records are told apart by PERF_SAMPLE_IDENTIFIER), records
 * it must keep (perf record's own, sample id 0, included: perf reads them
 * with the first attr) or drop as malformed; and a record whose size runs
 * past the data section.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "gtbuild.h"
#include "pdata.h"
#include "sideband.h"
#include "libflowjit.h"

#define ST0	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
		 PERF_SAMPLE_IDENTIFIER)
#define ST1	(ST0 | PERF_SAMPLE_ID)
#define ID0	7
#define ID1	9

static uint8_t data[4096];
static size_t len;

/* a record of @type with a @body_len byte body and the trailer of @st */
static void rec(uint32_t type, size_t body_len, uint64_t st, uint64_t id,
		uint64_t time)
{
	struct perf_event_header h = { .type = type };
	uint64_t t[5], n = 0;

	t[n++] = 42ULL << 32 | 42;		/* pid, tid */
	t[n++] = time;
	if (st & PERF_SAMPLE_ID)
		t[n++] = id;
	t[n++] = 0;				/* cpu */
	t[n++] = id;				/* identifier */
	h.size = sizeof(h) + body_len + n * 8;
	memcpy(data + len, &h, sizeof(h));
	memset(data + len + sizeof(h), 'x', body_len);
	memcpy(data + len + sizeof(h) + body_len, t, n * 8);
	len += h.size;
}

/* a user JIT image of thread 42 taken at an exec fault, at @time */
static void fault_image(uint64_t time, uint32_t revision)
{
	uint8_t code[16] = { 0x90, 0xc3, revision };
	struct flowjit_record fr = {
		.version = FLOWJIT_RECORD_VERSION, .kind = FLOWJIT_KIND_USER_JIT,
		.op = FLOWJIT_OP_IMAGE, .asid = 3, .pid = 42, .tid = 42,
		.addr = 0x7f0000000000ULL, .len = sizeof(code),
		.id = 0x7f0000000000ULL, .revision = revision,
		.chunk_len = sizeof(code),
	};
	size_t at = len;

	fr.csum = flowjit_csum(code, sizeof(code));
	rec(63 /* PERF_RECORD_FLOWJIT */, sizeof(fr) + sizeof(code), ST0, ID0,
	    time);
	memcpy(data + at + 8, &fr, sizeof(fr));
	memcpy(data + at + 8 + sizeof(fr), code, sizeof(code));
}

/*
 * Returns true if @r is a valid flowjit delta record against revision
 * @base, or, for @base 0, a whole image.
 */
static bool delta_of(const struct ps_sb_rec *r, uint32_t base)
{
	struct flowjit_chunk c;

	if (r->data[0] != 63 || flowjit_chunk_parse(&c, r->data + 8, r->body_len - 8, NULL))
		return false;
	if (!base)
		return c.rec.op == FLOWJIT_OP_IMAGE;
	return c.rec.op == FLOWJIT_OP_DELTA && c.rec.base == base;
}

/* a record with a single u64, @id: too short for the trailer of its attr */
static void short_rec(uint32_t type, uint64_t id)
{
	struct perf_event_header h = { .type = type, .size = sizeof(h) + 8 };

	memcpy(data + len, &h, sizeof(h));
	memcpy(data + len + sizeof(h), &id, 8);
	len += h.size;
}

/* a record of @size bytes, all of it zeroes but its header */
static void raw(uint32_t type, uint16_t size)
{
	struct perf_event_header h = { .type = type, .size = size };

	memset(data + len, 0, size);
	memcpy(data + len, &h, sizeof(h));
	len += size;
}

/* the file, with tools/lib/flowjit's writer (pdata.h) */
static int write_file(const char *path)
{
	struct perf_event_attr a[2];
	uint64_t ids[2] = { ID0, ID1 };
	struct pdata_wattr wa[2];
	struct pdata_writer w;
	FILE *f = fopen(path, "w");
	int i, err;

	if (!f)
		return -1;
	memset(a, 0, sizeof(a));
	for (i = 0; i < 2; i++) {
		a[i].type = PERF_TYPE_SOFTWARE;
		a[i].size = sizeof(a[i]);
		a[i].config = PERF_COUNT_SW_DUMMY;
		a[i].sample_type = i ? ST1 : ST0;
		a[i].sample_id_all = 1;
		wa[i] = (struct pdata_wattr){ &a[i], sizeof(a[i]), &ids[i], 1 };
	}
	err = pdata_write_begin(&w, f, sizeof(a[0]) + 16, wa, 2);
	if (!err)
		err = pdata_write(&w, data, len);
	if (!err)
		err = pdata_write_end(&w);
	return fclose(f) || err ? -1 : 0;
}

int main(void)
{
	char path[] = "/tmp/ptsynth-unit-sb-XXXXXX";
	struct ps_sb sb;
	int fd, err;

	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);

	/* kept: a COMM of each attr */
	rec(PERF_RECORD_COMM, 16, ST0, ID0, 100);
	rec(PERF_RECORD_COMM, 16, ST1, ID1, 200);
	/* perf record's own: an MMAP and a COMM, all-zero trailers of attr 0 */
	raw(PERF_RECORD_MMAP, 8 + 40 + 8 + 32);
	raw(PERF_RECORD_COMM, 8 + 16 + 32);
	/* malformed: an id no attr has; shorter than its trailer; a flowjit
	 * record too short for struct flowjit_record
	 */
	rec(PERF_RECORD_COMM, 16, ST0, 1234, 300);
	short_rec(PERF_RECORD_COMM, ID0);
	rec(63 /* PERF_RECORD_FLOWJIT */, sizeof(struct flowjit_record) - 8,
	    ST0, ID0, 500);
	/* not sideband: skipped */
	rec(PERF_RECORD_SAMPLE, 8, ST0, ID0, 600);

	err = write_file(path) ? -1 : ps_sb_load(&sb, path, NULL, false, 0, false);
	TAP_OK(!err, "unit: sideband: a perf.data with malformed records loads");
	if (!err) {
		TAP_DIAG("kept %zu, time 0 %llu, malformed %llu, skipped %llu, flowjit %llu",
			 sb.nr, (unsigned long long)sb.nr_synth,
			 (unsigned long long)sb.nr_bad,
			 (unsigned long long)sb.nr_skipped,
			 (unsigned long long)sb.nr_flowjit);
		TAP_OK(sb.nr == 4 && sb.recs[0].time == 100 &&
		       sb.recs[1].time == 200,
		       "unit: sideband: the records of both attrs are kept, found by sample id");
		TAP_OK(sb.nr == 4 && sb.nr_synth == 2 &&
		       sb.recs[2].data[0] == PERF_RECORD_MMAP &&
		       sb.recs[2].body_len == 8 + 40 + 8 &&
		       sb.recs[3].data[0] == PERF_RECORD_COMM &&
		       sb.recs[3].body_len == 8 + 16 && !sb.recs[3].time,
		       "unit: sideband: records with sample id 0 (perf record's own) are kept with the first attr's trailer, and counted");
		TAP_OK(sb.nr_bad == 3 && sb.nr_flowjit == 0,
		       "unit: sideband: an unknown sample id, a record shorter than its trailer and a short flowjit record are malformed");
		TAP_OK(sb.nr_skipped == 1, "unit: sideband: a sample is skipped");
		ps_sb_free(&sb);
	}

	/* --lose-image 2: the second of three fault images becomes a LOST */
	len = 0;
	fault_image(1000, 1);
	fault_image(2000, 2);
	fault_image(3000, 3);
	err = write_file(path) ? -1 : ps_sb_load(&sb, path, NULL, false, 2, false);
	TAP_OK(!err && sb.nr == 3 && sb.nr_lost_made == 1 && sb.nr_faults == 3 &&
	       sb.recs[1].data[0] == PERF_RECORD_LOST && sb.recs[1].time == 2000 &&
	       sb.recs[1].body_len == 24 && sb.recs[0].data[0] == 63 &&
	       sb.recs[2].data[0] == 63 && sb.faults[1].time == 2000,
	       "unit: sideband: --lose-image replaces that image by a PERF_RECORD_LOST at its time, its fault stays");
	if (!err)
		ps_sb_free(&sb);
	err = write_file(path) ? -1 : ps_sb_load(&sb, path, NULL, false, 4, false);
	TAP_OK(!err && sb.nr == 3 && !sb.nr_lost_made,
	       "unit: sideband: --lose-image past the last image loses nothing (the caller reports it)");
	if (!err)
		ps_sb_free(&sb);

	/* --delta: the second and third images are deltas of the one before */
	err = write_file(path) ? -1 : ps_sb_load(&sb, path, NULL, false, 0, true);
	TAP_OK(!err && sb.nr == 3 && sb.nr_deltas == 2 && sb.nr_faults == 3 &&
	       delta_of(&sb.recs[1], 1) && delta_of(&sb.recs[2], 2) &&
	       delta_of(&sb.recs[0], 0),
	       "unit: sideband: --delta makes images after a page's first deltas of the one before, still faults");
	if (!err)
		ps_sb_free(&sb);
	/* ... and an image lost is still the next one's base */
	err = write_file(path) ? -1 : ps_sb_load(&sb, path, NULL, false, 2, true);
	TAP_OK(!err && sb.nr == 3 && sb.nr_lost_made == 1 &&
	       sb.recs[1].data[0] == PERF_RECORD_LOST && delta_of(&sb.recs[2], 2),
	       "unit: sideband: --delta --lose-image: the image lost is the next delta's base");
	if (!err)
		ps_sb_free(&sb);

	/* the last record's size runs past the end of the data section */
	raw(PERF_RECORD_COMM, 64);
	len -= 32;
	err = write_file(path) ? -1 : ps_sb_load(&sb, path, NULL, false, 0, false);
	TAP_OK(err == -EINVAL,
	       "unit: sideband: a record running past the data section is an error (%d)",
	       err);
	if (!err)
		ps_sb_free(&sb);
	unlink(path);
	return tap_failed ? 1 : 0;
}
