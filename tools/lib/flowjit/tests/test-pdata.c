// SPDX-License-Identifier: GPL-2.0
/*
 * pdata: a file the writer makes reads back the same; malformed files
 * (truncated header, bad attr size, bad record size, short sample_id
 * trailer, AUXTRACE data past the end, any truncation or corruption) get
 * an error, never a crash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../pdata.h"
#include "tap.h"

#define ST	(PDATA_ST_TID | PDATA_ST_TIME | PDATA_ST_CPU | \
		 PDATA_ST_IDENTIFIER)
#define ATTR_SIZE	(136 + 16)

static uint8_t *file;
static size_t file_size;

static const uint8_t trace[] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 0x19,
				 1, 2, 3, 4, 5, 6, 7, 0x99 };

struct attr {
	uint32_t type, size;
	uint64_t config, period, sample_type, read_format, flags;
	uint8_t rest[136 - 48];
};

/* One record with a body of @n bytes (a multiple of 8) and a trailer */
static int put_rec(struct pdata_writer *w, uint32_t type, const void *body,
		   size_t n, uint64_t st, const struct pdata_sid *sid)
{
	uint8_t buf[256];
	uint16_t size = (uint16_t)(8 + n + pdata_sid_size(st));

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &type, 4);
	memcpy(buf + 6, &size, 2);
	memcpy(buf + 8, body, n);
	pdata_put_sid(buf + 8 + n, st, sid);
	return pdata_write(w, buf, size);
}

/* Read @f whole into file/file_size. */
static int slurp(FILE *f)
{
	long n;

	free(file);
	file = NULL;
	if (fseek(f, 0, SEEK_END))
		return -1;
	n = ftell(f);
	if (n <= 0 || fseek(f, 0, SEEK_SET))
		return -1;
	file = malloc(n);
	if (!file || fread(file, n, 1, f) != 1)
		return -1;
	file_size = n;
	return 0;
}

/*
 * The test file: attrs intel_pt (ids 1, 2) and dummy (id 1000, sample
 * type @st2), AUXTRACE_INFO, a COMM of pid 10, an AUXTRACE of trace[].
 */
static int make_file(uint64_t st2)
{
	struct attr a[2];
	uint64_t ids[] = { 1, 2, 1000 }, priv[PDATA_PT_PRIV_MAX] = { 0 };
	struct pdata_wattr wa[2] = {
		{ &a[0], sizeof(a[0]), ids, 2 },
		{ &a[1], sizeof(a[1]), ids + 2, 1 },
	};
	struct pdata_sid sid = {
		.pid = 10, .tid = 11, .time = 5000, .cpu = 3, .id = 1000,
	};
	uint64_t info[PDATA_PT_INFO_WORDS], comm[3] = { 10 | 11ULL << 32 };
	struct pdata_auxtrace aux;
	struct pdata_writer w;
	size_t size;
	FILE *f = tmpfile();
	int err;

	if (!f)
		return -1;
	memset(a, 0, sizeof(a));
	a[0].type = 8;
	a[0].size = sizeof(a[0]);
	a[0].sample_type = ST;
	a[0].flags = PDATA_ATTR_SAMPLE_ID_ALL;
	a[1] = a[0];
	a[1].type = 1;
	a[1].config = 9;
	a[1].sample_type = st2;
	memcpy(&comm[1], "jitter", 7);
	priv[PDATA_PT_PMU_TYPE] = 8;
	priv[PDATA_PT_TIME_SHIFT] = 10;
	priv[PDATA_PT_TIME_MULT] = 600;
	priv[PDATA_PT_TIME_ZERO] = 77;
	priv[PDATA_PT_PER_CPU_MMAPS] = 1;
	size = pdata_pt_info_put(info, PDATA_PT_INFO_WORDS, priv, NULL);
	pdata_auxtrace_init(&aux, sizeof(trace), 42, 0, 11, 3);

	err = pdata_write_begin(&w, f, ATTR_SIZE, wa, 2);
	if (!err)
		err = pdata_write(&w, info, size);
	if (!err)
		err = put_rec(&w, PDATA_REC_COMM, comm, sizeof(comm), st2, &sid);
	if (!err)
		err = pdata_write_auxtrace(&w, &aux, trace, sizeof(trace));
	if (!err)
		err = pdata_write_end(&w);
	if (err || !size || slurp(f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static void set64(size_t off, uint64_t v)
{
	memcpy(file + off, &v, 8);
}

static uint64_t get64(size_t off)
{
	uint64_t v;

	memcpy(&v, file + off, 8);
	return v;
}

/* Walk the whole file: the last pdata_next() status, or init's */
static int walk(unsigned int flags)
{
	struct pdata pd;
	struct pdata_rec rec;
	int n = 0, ret;

	ret = pdata_init_mem(&pd, file, file_size, flags);
	if (ret)
		return ret;
	while ((ret = pdata_next(&pd, &rec)) > 0 && n++ < 100000)
		;
	return ret;
}

static int write_read_back(void)
{
	struct pdata_pt_info info;
	struct pdata_rec rec;
	struct pdata_sid sid;
	const struct pdata_attr *a;
	struct pdata pd;
	size_t body;

	TAP_CHECK(!make_file(ST));
	TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
	TAP_CHECK(pd.nattr == 2 && pd.same_layout && !pd.pipe);
	TAP_CHECK(pd.attr_size == ATTR_SIZE);
	TAP_CHECK(pd.attr[0].type == 8 && pd.attr[1].type == 1);
	TAP_CHECK(pd.attr[1].config == 9 && pd.attr[1].sample_type == ST);
	TAP_CHECK(pd.attr[0].nr_ids == 2 && pd.attr[1].nr_ids == 1);
	TAP_CHECK(!memcmp(pd.attr[1].ids, &(uint64_t){ 1000 }, 8));
	TAP_CHECK(pd.data_off == PDATA_HEADER_SIZE + 3 * 8 + 2 * ATTR_SIZE);

	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	TAP_CHECK(rec.type == PDATA_REC_AUXTRACE_INFO);
	TAP_CHECK(rec.offset == pd.data_off);
	TAP_CHECK(!pdata_pt_info(&info, &rec));
	TAP_CHECK(info.valid && info.pmu_type == 8 && info.time_shift == 10);
	TAP_CHECK(info.time_mult == 600 && info.time_zero == 77);
	TAP_CHECK(info.per_cpu_mmaps == 1);

	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	TAP_CHECK(rec.type == PDATA_REC_COMM && rec.size == 8 + 24 + 32);
	a = pdata_rec_attr(&pd, &rec, 0);
	TAP_CHECK(a == &pd.attr[0]);
	TAP_CHECK(!pdata_sample_id(&pd, &rec, a, &sid, &body));
	TAP_CHECK(body == 24 && !memcmp(rec.body + 8, "jitter", 7));
	TAP_CHECK(sid.fields == ST && sid.pid == 10 && sid.tid == 11);
	TAP_CHECK(sid.time == 5000 && sid.cpu == 3 && sid.id == 1000);

	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	TAP_CHECK(rec.type == PDATA_REC_AUXTRACE && rec.aux_size == 24);
	TAP_CHECK(!memcmp(rec.aux, trace, sizeof(trace)));
	TAP_CHECK(rec.aux[sizeof(trace)] == 0);
	TAP_CHECK(pdata_next(&pd, &rec) == 0);
	TAP_CHECK(pd.pos == pd.data_size);
	TAP_CHECK(pd.data_off + pd.data_size == file_size);
	pdata_rewind(&pd);
	TAP_CHECK(pdata_next(&pd, &rec) == 1 &&
		  rec.type == PDATA_REC_AUXTRACE_INFO);
	pdata_close(&pd);
	pdata_close(NULL);
	return 0;
}

static int open_file(void)
{
	char path[] = "/tmp/test-pdata-XXXXXX";
	struct pdata pd;
	struct pdata_rec rec;
	int fd, n = 0;

	TAP_CHECK(!make_file(ST));
	fd = mkstemp(path);
	TAP_CHECK(fd >= 0);
	TAP_CHECK(write(fd, file, file_size) == (ssize_t)file_size);
	close(fd);
	TAP_CHECK(!pdata_open(&pd, path, 0));
	TAP_CHECK(pd.mapped);
	while (pdata_next(&pd, &rec) > 0)
		n++;
	TAP_CHECK(n == 3);
	pdata_close(&pd);
	TAP_CHECK(!pd.buf);
	unlink(path);
	TAP_CHECK(pdata_open(&pd, path, 0) == -ENOENT);
	TAP_CHECK(strstr(pd.error, "cannot open"));
	TAP_CHECK(pdata_open(&pd, "/tmp", 0) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "regular"));
	return 0;
}

static int truncated_header(void)
{
	struct pdata pd;
	size_t n;

	TAP_CHECK(!make_file(ST));
	for (n = 0; n < PDATA_HEADER_SIZE; n++) {
		TAP_CHECK(pdata_init_mem(&pd, file, n, 0) == -EINVAL);
		TAP_CHECK(pd.error[0]);
	}
	TAP_CHECK(pdata_init_mem(&pd, file, 40, 0) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "truncated"));
	TAP_CHECK(pdata_init_mem(&pd, NULL, 0, 0) == -EINVAL);
	file[0] = 'X';
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "magic"));
	return 0;
}

static int bad_attr_size(void)
{
	static const uint64_t sizes[] = {
		0, 8, PDATA_MIN_ATTR_SIZE - 1, PDATA_MAX_ATTR_SIZE + 1,
		1ULL << 40, UINT64_MAX,
	};
	struct pdata pd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		TAP_CHECK(!make_file(ST));
		set64(16, sizes[i]);
		TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
		TAP_CHECK(strstr(pd.error, "attr size"));
	}
	/* the attrs section: not a multiple, empty, past the end */
	TAP_CHECK(!make_file(ST));
	set64(32, ATTR_SIZE + 8);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	set64(32, 0);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	set64(32, ATTR_SIZE * 1000);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	set64(32, 2 * ATTR_SIZE);
	set64(24, UINT64_MAX - 8);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	/* an ids section past the end */
	TAP_CHECK(!make_file(ST));
	set64(get64(24) + ATTR_SIZE - 8, UINT64_MAX - 7);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "ids"));
	return 0;
}

static int bad_data_section(void)
{
	struct pdata pd;

	TAP_CHECK(!make_file(ST));
	set64(48, file_size);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "truncated"));
	set64(48, 0);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "empty"));
	set64(40, UINT64_MAX);
	TAP_CHECK(pdata_init_mem(&pd, file, file_size, 0) == -EINVAL);
	return 0;
}

static int bad_record_size(void)
{
	struct pdata pd;
	struct pdata_rec rec;
	size_t doff;
	uint16_t size;

	for (size = 0; size < 8; size++) {
		TAP_CHECK(!make_file(ST));
		doff = get64(40);
		memcpy(file + doff + 6, &size, 2);
		TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
		TAP_CHECK(pdata_next(&pd, &rec) == -EINVAL);
		TAP_CHECK(strstr(pd.error, "bad size"));
	}
	/* past the end of the data section */
	TAP_CHECK(!make_file(ST));
	doff = get64(40);
	set64(48, 16);
	TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
	TAP_CHECK(pdata_next(&pd, &rec) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "bad size"));
	/* a record header cut short */
	set64(48, 4);
	TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
	TAP_CHECK(pdata_next(&pd, &rec) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "truncated record header"));
	return 0;
}

static int short_trailer(void)
{
	struct pdata pd;
	struct pdata_rec rec;
	struct pdata_sid sid;
	const struct pdata_attr *a;
	size_t body;
	uint64_t st;

	TAP_CHECK(!make_file(ST));
	/* the attr now says a trailer of 7 u64s: more than the record's body */
	st = ST | PDATA_ST_ID | PDATA_ST_STREAM_ID | (1ULL << 3);
	set64(get64(24) + 24, st);
	set64(get64(24) + ATTR_SIZE + 24, st);
	TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	/* the COMM record: 24 bytes of body + 32 of trailer */
	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	a = pdata_rec_attr(&pd, &rec, 0);
	TAP_CHECK(a);
	TAP_CHECK(!pdata_sample_id(&pd, &rec, a, &sid, &body));
	TAP_CHECK(body == 56 - 48);
	/* a record of 8 bytes of body: too small */
	rec.body_size = 8;
	TAP_CHECK(pdata_sample_id(&pd, &rec, a, &sid, &body) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "too small for its sample_id"));
	return 0;
}

static int mixed_layouts(void)
{
	struct pdata pd;
	struct pdata_rec rec;
	struct pdata_sid sid;
	const struct pdata_attr *a;
	size_t body;

	/* the dummy's layout differs: the identifier tells */
	TAP_CHECK(!make_file(ST | PDATA_ST_ID));
	TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
	TAP_CHECK(!pd.same_layout);
	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	a = pdata_rec_attr(&pd, &rec, 0);
	TAP_CHECK(a == &pd.attr[1]);
	TAP_CHECK(!pdata_sample_id(&pd, &rec, a, &sid, &body));
	TAP_CHECK(body == 24 && sid.id == 1000 && sid.time == 5000);
	/* an identifier no attr has, and 0 */
	set64(rec.offset + rec.size - 8, 12345);
	TAP_CHECK(!pdata_rec_attr(&pd, &rec, 1));
	set64(rec.offset + rec.size - 8, 0);
	TAP_CHECK(!pdata_rec_attr(&pd, &rec, 0));
	TAP_CHECK(pdata_rec_attr(&pd, &rec, 1) == &pd.attr[0]);
	rec.body_size = 4;
	TAP_CHECK(!pdata_rec_attr(&pd, &rec, 1));
	return 0;
}

static int auxtrace_past_end(void)
{
	struct pdata pd;
	struct pdata_rec rec;
	size_t at;

	TAP_CHECK(!make_file(ST));
	TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	TAP_CHECK(pdata_next(&pd, &rec) == 1);
	at = rec.offset + rec.size;
	set64(at + 8, 32);
	TAP_CHECK(!pdata_init_mem(&pd, file, file_size, 0));
	TAP_CHECK(pdata_next(&pd, &rec) == 1 && pdata_next(&pd, &rec) == 1);
	TAP_CHECK(pdata_next(&pd, &rec) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "beyond end of data"));
	set64(at + 8, UINT64_MAX);
	TAP_CHECK(walk(0) == -EINVAL);
	/* an AUXTRACE record too small for its body */
	file[at + 6] = 16;
	TAP_CHECK(walk(0) == -EINVAL);
	return 0;
}

static int pipe_format(void)
{
	uint8_t pipe[16 + 16] = "PERFILE2";
	struct pdata pd;
	struct pdata_rec rec;

	pipe[8] = 16;
	pipe[16] = PDATA_REC_COMM;
	pipe[16 + 6] = 16;
	TAP_CHECK(pdata_init_mem(&pd, pipe, sizeof(pipe), 0) == -EINVAL);
	TAP_CHECK(strstr(pd.error, "pipe"));
	TAP_CHECK(!pdata_init_mem(&pd, pipe, sizeof(pipe), PDATA_PIPE));
	TAP_CHECK(pd.pipe && !pd.nattr);
	TAP_CHECK(pdata_next(&pd, &rec) == 1 && rec.type == PDATA_REC_COMM);
	TAP_CHECK(!pdata_rec_attr(&pd, &rec, 1));
	TAP_CHECK(pdata_next(&pd, &rec) == 0);
	return 0;
}

/* Every truncation and 2000 corruptions: clean end or clean error */
static int truncations_and_corruptions(void)
{
	uint8_t *good;
	size_t n, i;
	int ret;

	TAP_CHECK(!make_file(ST | PDATA_ST_ID));
	good = malloc(file_size);
	TAP_CHECK(good);
	memcpy(good, file, file_size);
	for (n = 0; n <= file_size; n++) {
		struct pdata pd;

		ret = pdata_init_mem(&pd, good, n, 0);
		TAP_CHECK(ret == 0 || (ret == -EINVAL && pd.error[0]));
	}
	srand(1);
	for (i = 0; i < 2000; i++) {
		memcpy(file, good, file_size);
		for (n = 0; n < 1 + i % 8; n++)
			file[rand() % file_size] = (uint8_t)rand();
		ret = walk(i & 1 ? PDATA_PIPE : 0);
		TAP_CHECK(ret == 0 || ret == -EINVAL);
		if (!ret) {
			struct pdata pd;
			struct pdata_rec rec;
			struct pdata_sid sid;
			const struct pdata_attr *a;
			size_t body;

			pdata_init_mem(&pd, file, file_size, 0);
			while (pdata_next(&pd, &rec) > 0) {
				a = pdata_rec_attr(&pd, &rec, i & 2);
				if (a && !pdata_sample_id(&pd, &rec, a, &sid,
							  &body))
					TAP_CHECK(body <= rec.body_size);
			}
		}
	}
	free(good);
	return 0;
}

static int writer_checks(void)
{
	uint64_t small[4], priv[PDATA_PT_PRIV_MAX] = { 0 };
	struct attr a = { .size = sizeof(a) };
	struct pdata_wattr wa = { &a, sizeof(a), NULL, 0 };
	struct pdata_auxtrace aux;
	struct pdata_writer w;
	FILE *f = tmpfile();

	TAP_CHECK(f);
	TAP_CHECK(pdata_write_begin(&w, f, 100, &wa, 1) == -EINVAL);
	TAP_CHECK(pdata_write_begin(&w, f, ATTR_SIZE, &wa, 0) == -EINVAL);
	TAP_CHECK(pdata_write_begin(&w, f, PDATA_MAX_ATTR_SIZE + 8, &wa, 1) ==
		  -EINVAL);
	TAP_CHECK(!pdata_write_begin(&w, f, ATTR_SIZE + 64, &wa, 1));
	pdata_auxtrace_init(&aux, 3, 0, 0, 0, 0);
	TAP_CHECK(aux.aux_size == 8 && aux.size == 48);
	TAP_CHECK(pdata_write_auxtrace(&w, &aux, trace, 9) == -EINVAL);
	/* an error sticks: the file is not finished */
	TAP_CHECK(pdata_write_end(&w) == -EINVAL);
	fclose(f);
	f = tmpfile();
	TAP_CHECK(f);
	TAP_CHECK(!pdata_write_begin(&w, f, ATTR_SIZE + 64, &wa, 1));
	TAP_CHECK(!pdata_write_auxtrace(&w, &aux, trace, 3));
	TAP_CHECK(!pdata_write_end(&w));
	TAP_CHECK(!slurp(f));
	fclose(f);
	TAP_CHECK(file_size == 104 + ATTR_SIZE + 64 + 48 + 8);
	TAP_CHECK(walk(0) == 0);
	TAP_CHECK(pdata_pt_info_put(small, ARRAY_SIZE(small), priv, NULL) == 0);
	return 0;
}

static int pt_info_and_time(void)
{
	uint64_t rec[PDATA_PT_INFO_WORDS + 4], priv[PDATA_PT_PRIV_MAX] = { 0 };
	struct pdata_pt_info info;
	struct pdata_rec r = { 0 };
	uint64_t t;
	size_t size;

	priv[PDATA_PT_TIME_SHIFT] = 64;
	priv[PDATA_PT_TIME_MULT] = 1;
	size = pdata_pt_info_put(rec, ARRAY_SIZE(rec), priv, "filter x");
	TAP_CHECK(size == (PDATA_PT_INFO_WORDS + 2) * 8);
	TAP_CHECK(rec[2 + PDATA_PT_FILTER_STR_LEN] == 8);
	TAP_CHECK(!memcmp(rec + 2 + PDATA_PT_PRIV_MAX, "filter x", 9));
	r.type = PDATA_REC_AUXTRACE_INFO;
	r.body = (const uint8_t *)(rec + 1);
	r.body_size = size - 8;
	TAP_CHECK(pdata_pt_info(&info, &r) == -EINVAL);	/* shift 64 */
	rec[2 + PDATA_PT_TIME_SHIFT] = 3;
	TAP_CHECK(!pdata_pt_info(&info, &r) && info.valid);
	TAP_CHECK(info.has_timing && !info.mtc_bit && !info.tsc_ctc_n);
	rec[2 + PDATA_PT_MTC_BIT] = 1 << 9;
	rec[2 + PDATA_PT_MTC_FREQ_BITS] = 0xf << 14;
	rec[2 + PDATA_PT_TSC_CTC_N] = 250;
	rec[2 + PDATA_PT_TSC_CTC_D] = 2;
	rec[2 + PDATA_PT_CYC_BIT] = 1 << 1;
	rec[2 + PDATA_PT_MAX_NONTURBO_RATIO] = 30;
	TAP_CHECK(!pdata_pt_info(&info, &r) && info.has_timing);
	TAP_CHECK(info.mtc_bit == 1 << 9 && info.mtc_freq_bits == 0xf << 14);
	TAP_CHECK(info.tsc_ctc_n == 250 && info.tsc_ctc_d == 2);
	TAP_CHECK(info.cyc_bit == 1 << 1 && info.max_nonturbo_ratio == 30);
	/* a file of perf before 4.3: ten words, no timing ones */
	r.body_size = 88;
	TAP_CHECK(!pdata_pt_info(&info, &r) && info.valid && !info.has_timing);
	r.body_size = 80;
	TAP_CHECK(pdata_pt_info(&info, &r) == -EINVAL);	/* too small */
	r.type = PDATA_REC_AUXTRACE;
	TAP_CHECK(pdata_pt_info(&info, &r) == -EINVAL);

	/* a guest's negative time_zero: the sums wrap as perf's */
	for (t = 1000000000; t < 2000000000; t += 9999991) {
		uint64_t z = (uint64_t)-336915126, time;

		time = pdata_tsc_to_time(t, 31, 827188396, z);
		TAP_CHECK(time < 1ULL << 62);
		TAP_CHECK(pdata_time_to_tsc(time, 31, 827188396, z) <= t);
		TAP_CHECK(pdata_time_to_tsc(time, 31, 827188396, z) + 3 >= t);
	}
	TAP_CHECK(pdata_time_to_tsc(5, 31, 827188396, (uint64_t)-336915126) ==
		  (uint64_t)336915131 * (1ULL << 31) / 827188396);
	TAP_CHECK(!pdata_time_to_tsc(76, 10, 600, 77));

	for (t = 0; t < 1000000; t += 997) {
		uint64_t time = pdata_tsc_to_time(t, 10, 600, 77);

		TAP_CHECK(pdata_time_to_tsc(time, 10, 600, 77) <= t);
		TAP_CHECK(pdata_tsc_to_time(pdata_time_to_tsc(time, 10, 600,
							      77),
					    10, 600, 77) <= time);
		TAP_CHECK(pdata_time_to_tsc(time, 10, 600, 77) + 2 >= t);
	}
	TAP_CHECK(pdata_time_to_tsc(5, 10, 600, 77) == 0);
	TAP_CHECK(pdata_tsc_to_time(1 << 10, 10, 600, 77) == 677);
	return 0;
}

int main(void)
{
	tap_run(write_read_back, "pdata: a file the writer made reads back");
	tap_run(open_file, "pdata: pdata_open() maps a file, refuses what is none");
	tap_run(truncated_header, "pdata: a truncated header or bad magic is an error");
	tap_run(bad_attr_size, "pdata: attr size 0 or huge, a bad attrs or ids section: errors");
	tap_run(bad_data_section, "pdata: a bad data section is an error");
	tap_run(bad_record_size, "pdata: a record size < 8 or past the end is an error");
	tap_run(short_trailer, "pdata: a record shorter than its attr's sample_id is an error");
	tap_run(mixed_layouts, "pdata: mixed sample_id layouts: the identifier picks the attr");
	tap_run(auxtrace_past_end, "pdata: AUXTRACE data past the end is an error");
	tap_run(pipe_format, "pdata: the pipe format only with PDATA_PIPE");
	tap_run(truncations_and_corruptions,
		"pdata: every truncation and 2000 corruptions: clean error or walk");
	tap_run(writer_checks, "pdata: the writer refuses bad attrs and short AUXTRACE sizes");
	tap_run(pt_info_and_time, "pdata: intel_pt AUXTRACE_INFO and the time conversion");
	free(file);
	return tap_exit();
}
