// SPDX-License-Identifier: GPL-2.0
/*
 * perfdata.c - package synthesised PT streams as a perf.data file
 *
 * Produces what "perf record -e intel_pt//u -- CMD" writes in file mode:
 * two attrs (intel_pt, then the dummy tracking event), a data section with
 * PERF_RECORD_AUXTRACE_INFO, the sideband (COMM, MMAP2, FORK, EXIT,
 * ITRACE_START, SWITCH_CPU_WIDE) ordered by time, and one AUXTRACE record
 * per stream followed by its trace bytes.  Formats follow
 * tools/perf/Documentation/perf.data-file-format.txt and
 * tools/perf/util/intel-pt.h / arch/x86/util/intel-pt.c of Linux 6.1.
 * The file is written by tools/lib/flowjit's perf.data writer (pdata.h);
 * the intel_pt attr and AUXTRACE_INFO are exported for the kernel mode's
 * writer (ksynth.c).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gt.h"
#include "hwtime.h"
#include "packet.h"
#include "perfdata.h"
#include "sideband.h"
#include "synth.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* intel_pt PMU format bits (/sys/bus/event_source/devices/intel_pt/format) */
#define PT_CFG_PT		(1ULL << 0)
#define PT_CFG_MTC		(1ULL << 9)
#define PT_CFG_TSC		(1ULL << 10)
#define PT_CFG_NORETCOMP	(1ULL << 11)
#define PT_CFG_BRANCH		(1ULL << 13)
#define PT_CFG_MTC_PERIOD	(0xfULL << 14)
#define PT_CFG_CYC		(1ULL << 1)
#define PT_CFG_CYC_THRESH_SHIFT	19
#define PT_CFG_CYC_THRESH	(0xfULL << PT_CFG_CYC_THRESH_SHIFT)
#define PT_CFG_PSB_SHIFT	24

#define SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* the flag bits follow type, size, config, sample_period, sample_type, read_format */
#define ATTR_FLAGS_OFFSET	PDATA_ATTR_FLAGS_OFFSET

#define ID_PT		1
#define ID_DUMMY	1000
#define MAX_IDS		256

/* the sample_id_all trailer for SAMPLE_TYPE: pid, tid, time, cpu, id */
#define SID_SIZE	32

/* One event of the data section, kept for sorting by time. */
struct pevent {
	uint64_t time;
	uint64_t seq;
	size_t size;
	uint8_t *data;		/* full record (header included) */
	const struct ps_buf *aux;	/* AUXTRACE payload */
};

struct ps_perf_writer {
	const struct gt_trace *gt;
	const struct ps_synth_result *res;
	const struct ps_perf_opts *o;
	struct pevent *ev;
	size_t nr_ev, cap_ev;
	int cpu_of_pid;
};

uint64_t ps_perf_tsc_to_time(uint64_t tsc, const struct gt_timeconv *tc)
{
	return pdata_tsc_to_time(tsc, tc->time_shift, tc->time_mult,
				 tc->time_zero);
}

/* ---- intel_pt, shared with ksynth.c ---- */

/* intel_pt attr.config: branches, TSC, the PSB period, noretcomp */
uint64_t ps_perf_pt_config(uint64_t psb_period, bool retcomp)
{
	uint64_t cfg = PT_CFG_PT | PT_CFG_BRANCH | PT_CFG_TSC;
	uint64_t p = psb_period, v = 0;

	if (!retcomp)
		cfg |= PT_CFG_NORETCOMP;
	/* psb_period field: 2^(v+11) bytes */
	while (p > 2048 && v < 15) {
		p >>= 1;
		v++;
	}
	return cfg | (v << PT_CFG_PSB_SHIFT);
}

/* config bits of MTC every 2^@mtc_period CTC ticks (-1: no MTC) */
static uint64_t ps_perf_pt_mtc_config(int mtc_period)
{
	if (mtc_period < 0)
		return 0;
	return PT_CFG_MTC | ((uint64_t)mtc_period << 14 & PT_CFG_MTC_PERIOD);
}

/* config bits of CYC with threshold @thresh (-1: no CYC) */
static uint64_t ps_perf_pt_cyc_config(int thresh)
{
	if (thresh < 0)
		return 0;
	return PT_CFG_CYC |
	       ((uint64_t)thresh << PT_CFG_CYC_THRESH_SHIFT & PT_CFG_CYC_THRESH);
}

/*
 * The TSC/CTC ratio perf record reads from CPUID 0x15 into AUXTRACE_INFO
 * @rec (made by ps_perf_pt_auxtrace_info()): decoders need it to turn MTCs
 * into TSC time.
 */
static void ps_perf_pt_auxtrace_info_ctc(uint64_t *rec, uint32_t ctc_n,
					 uint32_t ctc_d)
{
	uint64_t *priv = rec + 2;

	priv[PDATA_PT_TSC_CTC_N] = ctc_n;
	priv[PDATA_PT_TSC_CTC_D] = ctc_d;
}

/*
 * The max non-turbo ratio perf record reads from the PMU's
 * max_nonturbo_ratio: with the CBR it turns CYC cycles into TSC ticks.
 */
static void ps_perf_pt_auxtrace_info_ratio(uint64_t *rec, uint8_t ratio)
{
	rec[2 + PDATA_PT_MAX_NONTURBO_RATIO] = ratio;
}

/* An intel_pt attr as perf record sets it; the caller picks the CPL */
void ps_perf_pt_attr(struct perf_event_attr *a, uint32_t pmu_type,
		     uint64_t config, uint64_t sample_type)
{
	memset(a, 0, sizeof(*a));
	a->type = pmu_type;
	a->size = sizeof(*a);
	a->config = config;
	a->sample_period = 1;
	a->sample_type = sample_type;
	a->disabled = 1;
	a->exclude_hv = 1;
	a->sample_id_all = 1;
}

/*
 * PERF_RECORD_AUXTRACE_INFO of intel_pt into @rec (@max_words u64s): the
 * time conversion, the config bits, @filter as perf record --filter notes
 * it (NULL: none).  Returns the record's size, 0 if it does not fit.
 */
size_t ps_perf_pt_auxtrace_info(uint64_t *rec, size_t max_words,
				uint32_t pmu_type, const struct gt_timeconv *tc,
				bool per_cpu, const char *filter)
{
	uint64_t priv[PDATA_PT_PRIV_MAX] = { 0 };

	priv[PDATA_PT_PMU_TYPE] = pmu_type;
	priv[PDATA_PT_TIME_SHIFT] = tc->time_shift;
	priv[PDATA_PT_TIME_MULT] = tc->time_mult;
	priv[PDATA_PT_TIME_ZERO] = tc->time_zero;
	priv[PDATA_PT_CAP_USER_TIME_ZERO] = tc->cap_user_time_zero;
	priv[PDATA_PT_TSC_BIT] = PT_CFG_TSC;
	priv[PDATA_PT_NORETCOMP_BIT] = PT_CFG_NORETCOMP;
	priv[PDATA_PT_HAVE_SCHED_SWITCH] = per_cpu ? 3 : 0;
	priv[PDATA_PT_SNAPSHOT_MODE] = 0;
	priv[PDATA_PT_PER_CPU_MMAPS] = per_cpu;
	priv[PDATA_PT_MTC_BIT] = PT_CFG_MTC;
	priv[PDATA_PT_MTC_FREQ_BITS] = PT_CFG_MTC_PERIOD;
	priv[PDATA_PT_CYC_BIT] = PT_CFG_CYC;
	/* the TSC/CTC ratio, max non-turbo ratio: 0; the filter: pdata's */
	return pdata_pt_info_put(rec, max_words, priv, filter);
}

static void *ps_perf_add_event(struct ps_perf_writer *w, uint32_t type,
			       uint16_t misc, size_t body, uint64_t time)
{
	struct perf_event_header *h;
	struct pevent *e;

	if (w->nr_ev == w->cap_ev) {
		size_t cap = w->cap_ev ? w->cap_ev * 2 : 256;

		e = realloc(w->ev, cap * sizeof(*e));
		if (!e)
			return NULL;
		w->ev = e;
		w->cap_ev = cap;
	}
	e = &w->ev[w->nr_ev];
	memset(e, 0, sizeof(*e));
	e->size = (sizeof(*h) + body + 7) & ~(size_t)7;
	e->data = calloc(1, e->size);
	if (!e->data)
		return NULL;
	e->time = time;
	e->seq = w->nr_ev++;
	h = (void *)e->data;
	h->type = type;
	h->misc = misc;
	h->size = e->size;
	return h + 1;
}

static void ps_perf_fill_id(void *dst, int pid, int tid, uint64_t time,
			    int cpu, uint64_t id)
{
	struct pdata_sid s = {
		.pid = pid, .tid = tid, .time = time, .cpu = cpu, .id = id,
	};

	pdata_put_sid(dst, SAMPLE_TYPE, &s);
}

static int ps_perf_cpu_of(struct ps_perf_writer *w, int tid)
{
	const struct ps_synth_result *r = w->res;
	int i;

	if (!w->o->per_cpu)
		return 0;
	for (i = 0; i < (int)r->nr_switches; i++)
		if (r->switches[i].tid == tid)
			return r->switches[i].cpu;
	return 0;
}

/* ---- sideband from the ground truth ---- */

static int ps_perf_sb_comm(struct ps_perf_writer *w, const struct gt_comm *c,
			   uint64_t t)
{
	size_t len = (strnlen(c->comm, 16) + 1 + 7) & ~7UL;
	uint32_t *p = ps_perf_add_event(w, PERF_RECORD_COMM,
				c->exec ? PERF_RECORD_MISC_COMM_EXEC : 0,
				8 + len + SID_SIZE, t);

	if (!p)
		return -ENOMEM;
	p[0] = c->h.pid;
	p[1] = c->h.tid;
	memcpy(p + 2, c->comm, strnlen(c->comm, 16));
	ps_perf_fill_id((void *)((uint8_t *)(p + 2) + len), c->h.pid, c->h.tid,
			t, ps_perf_cpu_of(w, c->h.tid), ID_DUMMY);
	return 0;
}

static int ps_perf_sb_mmap(struct ps_perf_writer *w, const struct gt_mmap *m,
			   uint64_t t)
{
	size_t nlen = strlen(m->name);
	size_t len = (nlen + 1 + 7) & ~7UL;
	const char *name = m->name;
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
	} *p;

	p = ps_perf_add_event(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
			      sizeof(*p) + len + SID_SIZE, t);
	if (!p)
		return -ENOMEM;
	p->pid = m->h.pid;
	p->tid = m->h.pid;
	p->start = m->start;
	p->len = m->len;
	p->pgoff = m->pgoff;
	p->maj = m->maj;
	p->min = m->min;
	p->ino = m->ino;
	p->prot = m->prot;
	p->flags = MAP_PRIVATE;
	memcpy(p + 1, name, nlen);
	ps_perf_fill_id((void *)((uint8_t *)(p + 1) + len), m->h.pid, m->h.pid,
			t, ps_perf_cpu_of(w, m->h.pid), ID_DUMMY);
	return 0;
}

static int ps_perf_sb_task(struct ps_perf_writer *w, uint32_t type, int pid,
			   int ppid, int tid, int ptid, uint64_t t)
{
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		uint8_t id[SID_SIZE];
	} *p = ps_perf_add_event(w, type, 0, sizeof(*p), t);

	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->ppid = ppid;
	p->tid = tid;
	p->ptid = ptid;
	p->time = t;
	ps_perf_fill_id(p->id, pid, tid, t, ps_perf_cpu_of(w, tid), ID_DUMMY);
	return 0;
}

static int ps_perf_sb_itrace_start(struct ps_perf_writer *w, int pid, int tid,
				   uint64_t t)
{
	struct {
		uint32_t pid, tid;
		uint8_t id[SID_SIZE];
	} *p = ps_perf_add_event(w, PERF_RECORD_ITRACE_START, 0, sizeof(*p), t);

	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->tid = tid;
	ps_perf_fill_id(p->id, pid, tid, t, ps_perf_cpu_of(w, tid), ID_PT);
	return 0;
}

static int ps_perf_sb_switch(struct ps_perf_writer *w,
			     const struct ps_synth_switch *s)
{
	uint64_t t = ps_perf_tsc_to_time(s->tsc, &w->gt->hdr.tc);
	struct {
		uint32_t next_prev_pid, next_prev_tid;
		uint8_t id[SID_SIZE];
	} *p = ps_perf_add_event(w, PERF_RECORD_SWITCH_CPU_WIDE,
				 s->out ? PERF_RECORD_MISC_SWITCH_OUT : 0,
				 sizeof(*p), t);

	if (!p)
		return -ENOMEM;
	p->next_prev_pid = s->next_prev_pid;
	p->next_prev_tid = s->next_prev_tid;
	ps_perf_fill_id(p->id, s->pid, s->tid, t, s->cpu, ID_DUMMY);
	return 0;
}

/* A perf time of the recording on the time map's clock */
static uint64_t ps_perf_map_time(struct ps_perf_writer *w, uint64_t t)
{
	if (!w->o->hw)
		return t;
	return ps_hwtime_perf(w->o->hw, &w->gt->hdr.tc, t);
}

/*
 * A record of a real perf record's sideband, with ptsynth's trailer, its
 * times (FORK and EXIT have one in the body too) on the time map's clock.
 */
static int ps_perf_sb_real(struct ps_perf_writer *w, const struct ps_sb_rec *r)
{
	const struct perf_event_header *h = (const void *)r->data;
	size_t body = r->body_len - sizeof(*h);
	uint64_t t = ps_perf_map_time(w, r->time), bt;
	uint8_t *p = ps_perf_add_event(w, h->type, h->misc,
				       body + SID_SIZE, t);

	if (!p)
		return -ENOMEM;
	memcpy(p, h + 1, body);
	if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) &&
	    body >= 24) {
		memcpy(&bt, p + 16, 8);
		bt = ps_perf_map_time(w, bt);
		memcpy(p + 16, &bt, 8);
	}
	ps_perf_fill_id((void *)(p + body), r->pid, r->tid, t, r->cpu,
			ID_DUMMY);
	return 0;
}

static int ps_perf_sideband(struct ps_perf_writer *w)
{
	const struct gt_trace *gt = w->gt;
	size_t i;
	int err = 0;

	if (w->o->sideband) {
		/* the real sideband replaces the one of the ground truth */
		for (i = 0; i < w->o->sideband->nr && !err; i++)
			err = ps_perf_sb_real(w, &w->o->sideband->recs[i]);
		for (i = 0; i < w->res->nr_switches && !err; i++)
			err = ps_perf_sb_switch(w, &w->res->switches[i]);
		return err;
	}
	for (i = 0; i < gt->nr_recs && !err; i++) {
		const struct gt_rec *r = gt->recs[i];
		uint64_t t = ps_perf_tsc_to_time(w->o->hw ? w->o->hw->hw[i] :
						 r->tsc, &gt->hdr.tc);

		switch (r->type) {
		case GT_COMM:
			err = ps_perf_sb_comm(w, (const void *)r, t);
			break;
		case GT_MMAP:
			err = ps_perf_sb_mmap(w, (const void *)r, t);
			break;
		case GT_FORK:
			err = ps_perf_sb_task(w, PERF_RECORD_FORK, r->pid,
				((const struct gt_fork *)r)->ppid, r->tid,
				((const struct gt_fork *)r)->ptid, t);
			break;
		case GT_EXIT:
			err = ps_perf_sb_task(w, PERF_RECORD_EXIT, r->pid,
					      r->pid, r->tid, r->tid, t);
			break;
		default:
			break;
		}
	}
	for (i = 0; i < w->res->nr_switches && !err; i++)
		err = ps_perf_sb_switch(w, &w->res->switches[i]);
	return err;
}

/* ---- AUX data ---- */

static int ps_perf_aux_streams(struct ps_perf_writer *w)
{
	const struct ps_synth_result *res = w->res;
	const struct gt_timeconv *tc = &w->gt->hdr.tc;
	int i, err;

	for (i = 0; i < res->nr_streams; i++) {
		const struct ps_synth_stream *s = &res->streams[i];
		uint64_t t = ps_perf_tsc_to_time(s->first_tsc, tc);
		struct pdata_auxtrace *a;

		if (s->tid >= 0) {
			err = ps_perf_sb_itrace_start(w, s->pid, s->tid, t);
			if (err)
				return err;
		}
		/* AUXTRACE records are not sorted: they follow the sideband */
		if (!ps_perf_add_event(w, PDATA_REC_AUXTRACE, 0,
				       sizeof(*a) - sizeof(struct perf_event_header),
				       UINT64_MAX))
			return -ENOMEM;
		a = (void *)w->ev[w->nr_ev - 1].data;
		pdata_auxtrace_init(a, s->buf.len, ((uint64_t)i << 32) | 1,
				    s->idx, s->tid, s->cpu);
		w->ev[w->nr_ev - 1].aux = &s->buf;
	}
	return 0;
}

static int ps_perf_auxtrace_info(struct ps_perf_writer *w,
				 struct pdata_writer *pw)
{
	uint64_t rec[PS_PERF_PT_INFO_WORDS];
	size_t size;

	size = ps_perf_pt_auxtrace_info(rec, ARRAY_SIZE(rec), w->o->pmu_type,
					&w->gt->hdr.tc, w->o->per_cpu, NULL);
	if (size && w->o->mtc)
		ps_perf_pt_auxtrace_info_ctc(rec, w->res->ctc_n, w->res->ctc_d);
	if (size && w->res->cbr)
		ps_perf_pt_auxtrace_info_ratio(rec, w->res->cbr);
	if (!size)
		return -EINVAL;
	return pdata_write(pw, rec, size);
}

static int ps_perf_cmp_event(const void *a, const void *b)
{
	const struct pevent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void ps_perf_make_attrs(const struct ps_perf_opts *o,
			       struct perf_event_attr *a)
{
	struct perf_event_attr *pt = &a[0], *dummy = &a[1];

	memset(a, 0, 2 * sizeof(*a));
	ps_perf_pt_attr(pt, o->pmu_type,
			ps_perf_pt_config(o->psb_period, o->retcomp) |
			ps_perf_pt_mtc_config(o->mtc ? o->mtc_period : -1) |
			ps_perf_pt_cyc_config(o->cyc ? o->cyc_thresh : -1),
			SAMPLE_TYPE);
	pt->enable_on_exec = 1;
	pt->exclude_kernel = 1;

	dummy->type = PERF_TYPE_SOFTWARE;
	dummy->config = PERF_COUNT_SW_DUMMY;
	dummy->size = sizeof(*dummy);
	dummy->sample_period = 1;
	dummy->sample_type = SAMPLE_TYPE;
	dummy->disabled = 1;
	dummy->enable_on_exec = 1;
	dummy->exclude_kernel = 1;
	dummy->exclude_hv = 1;
	dummy->mmap = 1;
	dummy->mmap2 = 1;
	dummy->comm = 1;
	dummy->comm_exec = 1;
	dummy->task = 1;
	dummy->sample_id_all = 1;
	dummy->context_switch = o->per_cpu;
	if (o->sideband) {
		dummy->ksymbol = 1;
		dummy->bpf_event = 1;
	}
	if (o->flowjit) {
		/* attr.flowjit: bit 63 of the flag word (uapi flowjit.h) */
		uint64_t flags;

		memcpy(&flags, (uint8_t *)dummy + ATTR_FLAGS_OFFSET, 8);
		flags |= 1ULL << 63;
		memcpy((uint8_t *)dummy + ATTR_FLAGS_OFFSET, &flags, 8);
	}
}

static int ps_perf_write_data(struct ps_perf_writer *w,
			      struct pdata_writer *pw)
{
	size_t i;
	int err;

	err = ps_perf_auxtrace_info(w, pw);
	for (i = 0; i < w->nr_ev && !err; i++) {
		const struct pevent *e = &w->ev[i];

		if (e->aux)
			err = pdata_write_auxtrace(pw, (const void *)e->data,
						   e->aux->data, e->aux->len);
		else
			err = pdata_write(pw, e->data, e->size);
	}
	return err;
}

/* attrs intel_pt (one id per stream, at least one) and dummy, the data */
static int ps_perf_write_file(struct ps_perf_writer *w, FILE *f)
{
	int nr_pt_ids = w->res->nr_streams ? w->res->nr_streams : 1;
	uint64_t ids[MAX_IDS], dummy_id = ID_DUMMY;
	struct perf_event_attr attrs[2];
	struct pdata_wattr wa[2];
	struct pdata_writer pw;
	int i, err;

	if (nr_pt_ids > MAX_IDS)
		return -EINVAL;
	for (i = 0; i < nr_pt_ids; i++)
		ids[i] = ID_PT + i;
	ps_perf_make_attrs(w->o, attrs);
	wa[0] = (struct pdata_wattr){ &attrs[0], sizeof(attrs[0]), ids,
				      nr_pt_ids };
	wa[1] = (struct pdata_wattr){ &attrs[1], sizeof(attrs[1]),
				      &dummy_id, 1 };
	err = pdata_write_begin(&pw, f, sizeof(attrs[0]) +
				sizeof(struct pdata_section), wa, 2);
	if (!err)
		err = ps_perf_write_data(w, &pw);
	if (!err)
		err = pdata_write_end(&pw);
	return err;
}

int ps_perf_write(const struct gt_trace *gt, const struct ps_synth_result *res,
		  const struct ps_perf_opts *o)
{
	struct ps_perf_writer w = { .gt = gt, .res = res, .o = o };
	FILE *f;
	size_t i;
	int err;

	err = ps_perf_sideband(&w);
	if (!err)
		err = ps_perf_aux_streams(&w);
	if (err)
		goto out;
	qsort(w.ev, w.nr_ev, sizeof(*w.ev), ps_perf_cmp_event);
	f = fopen(o->path, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	err = ps_perf_write_file(&w, f);
	if (fclose(f) && !err)
		err = -EIO;
out:
	for (i = 0; i < w.nr_ev; i++)
		free(w.ev[i].data);
	free(w.ev);
	return err;
}
