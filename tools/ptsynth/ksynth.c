// SPDX-License-Identifier: GPL-2.0
/*
 * ksynth.c - Intel PT packets for a kernel ground truth (kgt.c), packaged
 * with the sideband of a real perf record of the same run
 *
 * Model (README.rst, "Kernel scenario"): tracing of CPL 0 with IP filter
 * ranges (those kgt was given), one stream for the guest program's thread.
 * TraceEn is set before the first instruction (PSB, TSC, PSBEND with
 * packets disabled); entering the ranges sends TSC, MODE.Exec and
 * TIP.PGE; a branch leaving them TIP.PGD with the target IP; inside them
 * conditional branches are TNT bits, indirect branches and returns TIPs
 * (no return compression), direct branches nothing; PSB+ after each
 * psb_period bytes at an instruction boundary.
 *
 * The perf.data is the guest's (perf record --flowjit -e dummy -a): its
 * attrs and records are copied unchanged, an intel_pt attr (same
 * sample_type, a new id), AUXTRACE_INFO and one AUXTRACE record are
 * added.  Feature sections are not copied.
 */
#include <errno.h>
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "kgt.h"
#include "packet.h"
#include "perfdata.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* the longest filter string of AUXTRACE_INFO */
#define FILTER_STR_MAX	(128 * 8)

struct kstate {
	struct ps_stream ps;	/* enabled: inside the filter ranges */
	struct ps_buf buf;
	uint64_t psb_period;
	/* the instruction whose outcome is not yet sent */
	bool pending;
	uint64_t ip;
	struct insn_info info;
	/* counts */
	uint64_t insns, pge, pgd, tnt_bits, tips, irqs;
};

/* The pending instruction went on to @next inside the filter. */
static void kresolve(struct kstate *s, uint64_t next)
{
	if (!s->pending)
		return;
	s->pending = false;
	switch (s->info.cls) {
	case IC_JCC:
		ps_stream_tnt(&s->ps, next != s->ip + s->info.len);
		s->tnt_bits++;
		break;
	case IC_CALL_IND:
	case IC_JMP_IND:
	case IC_RET:
		ps_stream_ip(&s->ps, ppt_tip, next);
		s->tips++;
		break;
	default:
		break;
	}
}

static int kinsn(struct kstate *s, const struct gt_insn *r)
{
	struct insn_info info;

	if (classify(r->bytes, r->len, r->ip, &info)) {
		fprintf(stderr, "ptsynth ksynth: undecodable insn at %#llx\n",
			(unsigned long long)r->ip);
		return -EINVAL;
	}
	kresolve(s, r->ip);
	s->info = info;
	s->ps.tsc = r->h.tsc;
	if (!s->ps.enabled) {
		/* entering the filter ranges (see README: TSC with PGE) */
		ps_stream_tnt_flush(&s->ps);
		ps_stream_tsc(&s->ps);
		ps_stream_pge(&s->ps, r->ip);
		s->pge++;
	} else if (ps_stream_psb_due(&s->ps, s->psb_period)) {
		ps_stream_psb(&s->ps, r->ip);
	}
	s->pending = true;
	s->ip = r->ip;
	s->insns++;
	return 0;
}

static void kexit(struct kstate *s, uint64_t target)
{
	/* the pending branch leaves the filter: TIP.PGD carries its target */
	s->pending = false;
	ps_stream_ip(&s->ps, ppt_tip_pgd, target);
	s->ps.enabled = false;
	s->pgd++;
}

static int ksynth_stream(const struct gt_trace *gt, struct kstate *s)
{
	size_t i;
	int err = 0;

	err = ps_stream_init(&s->ps, &s->buf, PS_TNT8_MAX, "ptsynth ksynth");
	if (err)
		return err;
	for (i = 0; i < gt->nr_recs && !err && !s->ps.err; i++) {
		const struct gt_rec *r = gt->recs[i];

		if (r->type == GT_INSN) {
			if (!s->insns) {
				/* TraceEn: PSB+ with packets disabled */
				s->ps.tsc = r->tsc;
				ps_stream_psb(&s->ps, 0);
			}
			err = kinsn(s, (const struct gt_insn *)r);
		} else if (r->type == GT_KIRQ && s->ps.enabled) {
			/* an interrupt: FUP of where it resumes, TIP.PGD */
			uint64_t ip = ((const struct gt_kirq *)r)->ip;

			kresolve(s, ip);
			ps_stream_fup_pgd(&s->ps, ip);
			s->irqs++;
		} else if (r->type == GT_KEXIT) {
			if (!s->pending) {
				fprintf(stderr, "ptsynth ksynth: exit record without an instruction\n");
				err = -EINVAL;
			} else {
				kexit(s, ((const struct gt_kexit *)r)->target);
			}
		}
	}
	if (!err && s->ps.enabled && s->pending) {
		/* ends inside the filter: an asynchronous disable */
		s->pending = false;
		ps_stream_fup_pgd(&s->ps, s->ip);
	}
	ps_stream_tnt_flush(&s->ps);
	ps_stream_exit(&s->ps);
	return err ? err : s->ps.err;
}

/* ---- perf.data ---- */

/* The whole file @path in a malloc'd buffer, its size in *@size. */
uint8_t *kgt_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n = -1;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END))
		n = ftell(f);
	if (n > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, n, 1, f) != 1) {
			free(buf);
			buf = NULL;
		}
		*size = n;
	}
	fclose(f);
	return buf;
}

/* The perf.data perf record wrote in the guest, checked by pdata */
struct guest {
	struct pdata pd;
	uint64_t *ids;		/* [0]: free_id, then all the guest's */
	size_t nr_ids;		/* the guest's */
	uint64_t free_id;	/* above all its ids */
};

static int guest_load(struct guest *g, const char *path)
{
	size_t i, j, n = 1;
	int err;

	memset(g, 0, sizeof(*g));
	err = pdata_open(&g->pd, path, 0);
	if (err) {
		fprintf(stderr, "ptsynth ksynth: %s: not a perf.data file perf record wrote: %s\n",
			path, g->pd.error);
		return err == -EINVAL ? err : -EIO;
	}
	for (i = 0; i < g->pd.nattr; i++)
		g->nr_ids += g->pd.attr[i].nr_ids;
	g->ids = calloc(g->nr_ids + 1, 8);
	if (!g->ids) {
		pdata_close(&g->pd);
		return -ENOMEM;
	}
	for (i = 0; i < g->pd.nattr; i++)
		for (j = 0; j < g->pd.attr[i].nr_ids; j++, n++) {
			memcpy(&g->ids[n], g->pd.attr[i].ids + j * 8, 8);
			if (g->ids[n] >= g->free_id)
				g->free_id = g->ids[n] + 1;
		}
	g->ids[0] = g->free_id;
	return 0;
}

static void guest_free(struct guest *g)
{
	pdata_close(&g->pd);
	free(g->ids);
}

/*
 * The attrs of the new file in @wa (g->pd.nattr + 1): the intel_pt attr
 * in @pa_buf (kernel only, the guest's sample_type, an id no guest attr
 * has), then the guest's with their ids.
 *
 * Every attr of a perf.data has the file's attr size, and perf reads each
 * by its size field: the intel_pt attr is written with the guest's size,
 * which a newer perf makes larger than ours (6.12's 136 bytes, with
 * config3), its bytes past ours zero.
 */
static void merge_attrs(const struct ksynth_opts *o, const struct guest *g,
			uint64_t *pa_buf, struct pdata_wattr *wa)
{
	size_t asz = g->pd.attr_size - sizeof(struct pdata_section);
	struct perf_event_attr pa;
	size_t i, n = 1;

	ps_perf_pt_attr(&pa, o->pmu_type,
			ps_perf_pt_config(o->psb_period, false),
			g->pd.attr[0].sample_type);
	pa.size = asz;
	pa.exclude_user = 1;
	memset(pa_buf, 0, asz);
	memcpy(pa_buf, &pa, asz < sizeof(pa) ? asz : sizeof(pa));
	wa[0] = (struct pdata_wattr){ pa_buf, asz, g->ids, 1 };
	for (i = 0; i < g->pd.nattr; i++) {
		wa[i + 1] = (struct pdata_wattr){ g->pd.attr[i].raw, asz,
						  g->ids + n,
						  g->pd.attr[i].nr_ids };
		n += g->pd.attr[i].nr_ids;
	}
}

/* AUXTRACE_INFO with the filter string perf record --filter leaves */
static size_t kpt_info(const struct ksynth_opts *o, const struct gt_trace *gt,
		       uint64_t *info, size_t words)
{
	char fstr[FILTER_STR_MAX];
	size_t flen = 0;
	int i;

	fstr[0] = '\0';
	for (i = 0; i < o->nr_filter && flen < sizeof(fstr); i++)
		flen += snprintf(fstr + flen, sizeof(fstr) - flen,
				 "%sfilter %#llx/%#llx", i ? "," : "",
				 (unsigned long long)o->filter[i].start,
				 (unsigned long long)(o->filter[i].end -
						      o->filter[i].start));
	if (flen >= sizeof(fstr) - 1) {
		fprintf(stderr, "ptsynth ksynth: the filter string is too long\n");
		return 0;
	}
	return ps_perf_pt_auxtrace_info(info, words, o->pmu_type, &gt->hdr.tc,
					false, fstr);
}

/* the thread of the stream: the program's first GT_INSN record's */
static uint32_t stream_tid(const struct gt_trace *gt)
{
	size_t i;

	for (i = 0; i < gt->nr_recs; i++)
		if (gt->recs[i]->type == GT_INSN)
			return gt->recs[i]->tid;
	return gt->hdr.pid;
}

static int write_perf(const struct ksynth_opts *o, const struct gt_trace *gt,
		      const struct kstate *s)
{
	uint64_t info[PS_PERF_PT_INFO_WORDS + FILTER_STR_MAX / 8];
	uint64_t pa[PDATA_MAX_ATTR_SIZE / sizeof(uint64_t)];
	struct pdata_wattr wa[PDATA_MAX_ATTRS + 1];
	struct pdata_auxtrace aux;
	struct pdata_writer w;
	size_t info_size;
	struct guest g;
	FILE *f;
	int err;

	err = guest_load(&g, o->sideband);
	if (err)
		return err;
	err = -EINVAL;
	info_size = kpt_info(o, gt, info, ARRAY_SIZE(info));
	if (!info_size)
		goto out;
	merge_attrs(o, &g, pa, wa);
	pdata_auxtrace_init(&aux, s->buf.len, 1, 0, stream_tid(gt), -1);

	f = fopen(o->out, "wb");
	if (!f) {
		err = -errno;
		goto out;
	}
	/* its attrs, AUXTRACE_INFO, the guest's records, the trace */
	err = pdata_write_begin(&w, f, g.pd.attr_size, wa, g.pd.nattr + 1);
	if (!err)
		err = pdata_write(&w, info, info_size);
	if (!err)
		err = pdata_write(&w, g.pd.buf + g.pd.data_off, g.pd.data_size);
	if (!err)
		err = pdata_write_auxtrace(&w, &aux, s->buf.data, s->buf.len);
	if (!err)
		err = pdata_write_end(&w);
	if (err)
		err = -EIO;
	if (fclose(f) && !err)
		err = -EIO;
out:
	guest_free(&g);
	return err;
}

int ksynth_run(const struct ksynth_opts *o)
{
	struct gt_trace gt;
	struct kstate s;
	int err;

	memset(&s, 0, sizeof(s));
	s.psb_period = o->psb_period;
	if (gt_load(&gt, o->gt))
		return -EIO;
	err = classify_init() ? -EINVAL : 0;
	if (!err)
		err = ksynth_stream(&gt, &s);
	if (!err && o->raw) {
		FILE *f = fopen(o->raw, "wb");

		if (!f || fwrite(s.buf.data, s.buf.len, 1, f) != 1)
			err = -EIO;
		if (f && fclose(f))
			err = -EIO;
	}
	if (!err)
		err = write_perf(o, &gt, &s);
	fprintf(stderr, "ptsynth ksynth: %llu insns, %zu bytes of PT: %llu TIP.PGE, %llu TIP.PGD, %llu PSB, %llu TNT bits, %llu TIP, %llu FUP+TIP.PGD for interrupts\n",
		(unsigned long long)s.insns, s.buf.len,
		(unsigned long long)s.pge, (unsigned long long)s.pgd,
		(unsigned long long)s.ps.nr_psb, (unsigned long long)s.tnt_bits,
		(unsigned long long)s.tips, (unsigned long long)s.irqs);
	free(s.buf.data);
	gt_free(&gt);
	return err;
}
