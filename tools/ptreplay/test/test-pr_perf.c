// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_perf: the perf.data reader.
 */
#include "libflowjit.h"
#include "pr_mkperf.h"
#include "pr_perf.h"
#include "pr_test.h"

static uint8_t *scenario(size_t *size)
{
	return mkp_scenario_file(flowjit_csum, 1, size);
}

static struct prt_result reads_records(void)
{
	struct pr_perf perf;
	struct pr_perf_rec rec;
	size_t size;
	uint8_t *f = scenario(&size);
	int n = 0, comm = 0, aux = 0, fj = 0, status;

	prt_int_eq(pr_perf_init_mem(&perf, f, size), 0);
	prt_uint_eq(perf.pd.nattr, 2);
	prt_uint_eq(perf.pd.attr[0].nr_ids + perf.pd.attr[1].nr_ids, 2);
	prt_int_eq(perf.flowjit, 1);
	while ((status = pr_perf_next(&perf, &rec)) > 0) {
		n += 1;
		if (rec.type == PR_REC_COMM) {
			comm += 1;
			prt_uint_eq(rec.sid.pid, 100);
			prt_uint_eq(rec.sid.time, 10);
			prt_int_eq(rec.sid.has_time, 1);
			prt_uint_eq(rec.body_size, 24);
		}
		if (rec.type == PR_REC_AUXTRACE) {
			aux += 1;
			prt_ptr(rec.aux);
			prt_check(rec.aux_size > 0);
			prt_uint_eq(rec.aux[0], 0x02);	/* PSB */
		}
		if (rec.type == PR_REC_FLOWJIT)
			fj += 1;
	}
	prt_int_eq(status, 0);
	prt_int_eq(comm, 1);
	prt_int_eq(aux, 1);
	prt_int_eq(fj, 14);
	free(f);
	return prt_passed();
}

static struct prt_result bad_headers(void)
{
	struct pr_perf perf;
	size_t size;
	uint8_t *f = scenario(&size);
	uint64_t v;

	prt_int_eq(pr_perf_init_mem(NULL, f, size), -1);
	prt_int_eq(pr_perf_init_mem(&perf, NULL, size), -1);
	prt_int_eq(pr_perf_init_mem(&perf, f, 8), -1);
	prt_int_eq(pr_perf_init_mem(&perf, f, 50), -1);
	/* data section beyond the end of the file */
	prt_int_eq(pr_perf_init_mem(&perf, f, size - 1), -1);
	prt_check(strstr(perf.error, "truncated"));
	/* pipe mode */
	v = 16;
	memcpy(f + 8, &v, 8);
	prt_int_eq(pr_perf_init_mem(&perf, f, size), -1);
	prt_check(strstr(perf.error, "pipe"));
	v = 104;
	memcpy(f + 8, &v, 8);
	/* bad attr size */
	v = 8;
	memcpy(f + 16, &v, 8);
	prt_int_eq(pr_perf_init_mem(&perf, f, size), -1);
	v = 152;
	memcpy(f + 16, &v, 8);
	/* bad magic */
	f[0] = 'X';
	prt_int_eq(pr_perf_init_mem(&perf, f, size), -1);
	prt_check(strstr(perf.error, "magic"));
	free(f);
	return prt_passed();
}

static struct prt_result bad_records(void)
{
	struct pr_perf perf;
	struct pr_perf_rec rec;
	size_t size, data_off;
	uint8_t *f = scenario(&size);
	uint16_t s;

	data_off = (size_t)pr_get64(f + 40);
	/* the first record (AUXTRACE_INFO) claims size 4 */
	s = 4;
	memcpy(f + data_off + 6, &s, 2);
	prt_int_eq(pr_perf_init_mem(&perf, f, size), 0);
	prt_int_eq(pr_perf_next(&perf, &rec), -1);
	prt_check(strstr(perf.error, "bad size"));
	/* ... or more than the data section holds */
	s = 0xfff8;
	memcpy(f + data_off + 6, &s, 2);
	prt_int_eq(pr_perf_init_mem(&perf, f, size), 0);
	prt_int_eq(pr_perf_next(&perf, &rec), -1);
	free(f);
	return prt_passed();
}

static struct prt_result truncations(void)
{
	struct pr_perf perf;
	struct pr_perf_rec rec;
	size_t size, n, data_off;
	uint8_t *f = scenario(&size);
	uint64_t v;
	int status;

	data_off = (size_t)pr_get64(f + 40);
	/* every length of the data section: clean end or clean error */
	for (n = 0; n < size - data_off; ++n) {
		v = n;
		memcpy(f + 48, &v, 8);
		if (pr_perf_init_mem(&perf, f, data_off + n) < 0)
			prt_fail("init failed at %zu", n);
		while ((status = pr_perf_next(&perf, &rec)) > 0)
			prt_check(rec.body + rec.body_size <= f + data_off + n);
		prt_check(status == 0 || perf.error[0]);
	}
	free(f);
	return prt_passed();
}

static struct prt_result time_conversion(void)
{
	struct pr_pt_info info;
	uint64_t tsc, t;

	memset(&info, 0, sizeof(info));
	info.valid = 1;
	info.time_shift = 31;
	info.time_mult = 1234567890;
	info.time_zero = 1000000;
	for (tsc = 1; tsc < (1ULL << 50); tsc = tsc * 3 + 17) {
		t = pr_tsc_to_perf(&info, tsc);
		/* the inverse is exact to within one TSC tick per ns */
		prt_check(pr_tsc_to_perf(&info, pr_perf_to_tsc(&info, t)) <= t);
		prt_check(pr_perf_to_tsc(&info, t) <= tsc + 2);
	}
	prt_uint_eq(pr_tsc_to_perf(NULL, 42), 42);
	return prt_passed();
}

static struct prt_result open_missing(void)
{
	struct pr_perf perf;

	prt_int_eq(pr_perf_open(&perf, "/nonexistent/perf.data"), -1);
	prt_check(strstr(perf.error, "cannot open"));
	prt_int_eq(pr_perf_open(&perf, "/"), -1);
	pr_perf_fini(NULL);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_perf: records are read with their sample_id "
		"trailer and AUX data", reads_records);
	prt_run(suite, "pr_perf: bad magic, pipe mode, bad attr size and a "
		"truncated file are refused", bad_headers);
	prt_run(suite, "pr_perf: a record with a bad size is an error",
		bad_records);
	prt_run(suite, "pr_perf: every truncation of the data section ends "
		"or fails cleanly within bounds", truncations);
	prt_run(suite, "pr_perf: TSC to perf time and back", time_conversion);
	prt_run(suite, "pr_perf: a missing file or a directory fails",
		open_missing);
	return prt_exit(&suite);
}
