// SPDX-License-Identifier: GPL-2.0
/*
 * pr_perf: ptreplay's records of a perf.data, read by tools/lib/flowjit's
 * pdata.c (the layout and every bounds check are there).
 */
#include "pr_perf.h"

#include <string.h>

/* Keep pdata's message; the status ptreplay's callers expect. */
static int pr_perf_error(struct pr_perf *perf)
{
	memcpy(perf->error, perf->pd.error, sizeof(perf->error));
	return -1;
}

static void pr_perf_setup(struct pr_perf *perf)
{
	uint32_t i;

	perf->flowjit = 0;
	for (i = 0; i < perf->pd.nattr; ++i)
		if (perf->pd.attr[i].flags & PR_ATTR_FLOWJIT)
			perf->flowjit = 1;
}

int pr_perf_init_mem(struct pr_perf *perf, const uint8_t *buf, size_t size)
{
	if (!perf)
		return -1;
	memset(perf, 0, sizeof(*perf));
	if (pdata_init_mem(&perf->pd, buf, size, 0) < 0)
		return pr_perf_error(perf);
	pr_perf_setup(perf);
	return 0;
}

int pr_perf_open(struct pr_perf *perf, const char *path)
{
	if (!perf || !path)
		return -1;
	memset(perf, 0, sizeof(*perf));
	if (pdata_open(&perf->pd, path, 0) < 0)
		return pr_perf_error(perf);
	pr_perf_setup(perf);
	return 0;
}

void pr_perf_fini(struct pr_perf *perf)
{
	if (perf)
		pdata_close(&perf->pd);
}

int pr_perf_next(struct pr_perf *perf, struct pr_perf_rec *rec)
{
	const struct pdata_attr *attr;
	struct pdata_rec r;
	struct pdata_sid sid;
	size_t body_size;
	int status;

	if (!perf || !rec || !perf->pd.buf)
		return -1;
	memset(rec, 0, sizeof(*rec));
	status = pdata_next(&perf->pd, &r);
	if (status <= 0)
		return status ? pr_perf_error(perf) : 0;
	rec->type = r.type;
	rec->misc = r.misc;
	rec->body = r.body;
	rec->body_size = r.body_size;
	rec->aux = r.aux;
	rec->aux_size = r.aux_size;
	rec->offset = r.offset;

	/* Records of the kernel (below 64) and flowjit's carry a trailer. */
	if (r.type >= PDATA_REC_USER_TYPE_START || r.type == PDATA_REC_SAMPLE)
		return 1;
	attr = pdata_rec_attr(&perf->pd, &r, 0);
	if (!attr)
		return 1;
	if (pdata_sample_id(&perf->pd, &r, attr, &sid, &body_size) < 0)
		return pr_perf_error(perf);
	rec->body_size = body_size;
	rec->sid.pid = sid.pid;
	rec->sid.tid = sid.tid;
	rec->sid.time = sid.time;
	rec->sid.cpu = sid.cpu;
	rec->sid.id = sid.id;
	rec->sid.has_time = !!(sid.fields & PDATA_ST_TIME);
	return 1;
}

int pr_perf_pt_info(struct pr_pt_info *info, const struct pr_perf_rec *rec)
{
	struct pdata_rec r;

	if (!info || !rec)
		return -1;
	memset(&r, 0, sizeof(r));
	r.type = rec->type;
	r.body = rec->body;
	r.body_size = rec->body_size;
	return pdata_pt_info(info, &r) < 0 ? -1 : 0;
}

uint64_t pr_tsc_to_perf(const struct pr_pt_info *info, uint64_t tsc)
{
	if (!info || !info->valid)
		return tsc;
	return pdata_tsc_to_time(tsc, info->time_shift, info->time_mult,
				 info->time_zero);
}

uint64_t pr_perf_to_tsc(const struct pr_pt_info *info, uint64_t time)
{
	if (!info || !info->valid)
		return time;
	return pdata_time_to_tsc(time, info->time_shift, info->time_mult,
				 info->time_zero);
}
