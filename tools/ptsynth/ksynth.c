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

/* The perf.data perf record wrote in the guest, checked */
struct guest {
	uint8_t *file;
	size_t size;
	struct perf_file_header h;
	size_t nr_attrs, nr_ids;
	uint64_t free_id;	/* above all its ids */
};

static const uint8_t *guest_attr(const struct guest *g, size_t i)
{
	return g->file + g->h.attrs.offset + i * g->h.attr_size;
}

static int guest_load(struct guest *g, const char *path)
{
	size_t i, j;

	memset(g, 0, sizeof(*g));
	g->file = kgt_read_file(path, &g->size);
	if (!g->file) {
		fprintf(stderr, "ptsynth ksynth: cannot read %s\n", path);
		return -EIO;
	}
	if (g->size < sizeof(g->h))
		goto bad;
	memcpy(&g->h, g->file, sizeof(g->h));
	if (!ps_perf_header_ok(&g->h, g->size) || g->h.attr_size > 4096 ||
	    !g->h.attrs.size || g->h.attrs.size % g->h.attr_size)
		goto bad;
	g->nr_attrs = g->h.attrs.size / g->h.attr_size;
	for (i = 0; i < g->nr_attrs; i++) {
		struct perf_file_section is;

		is = ps_perf_attr_ids(guest_attr(g, i), g->h.attr_size);
		if (is.offset > g->size || is.size > g->size - is.offset ||
		    is.size % 8)
			goto bad;
		g->nr_ids += is.size / 8;
		for (j = 0; j < is.size / 8; j++) {
			uint64_t id;

			memcpy(&id, g->file + is.offset + j * 8, 8);
			if (id >= g->free_id)
				g->free_id = id + 1;
		}
	}
	return 0;
bad:
	fprintf(stderr, "ptsynth ksynth: %s: not a perf.data file perf record wrote\n",
		path);
	free(g->file);
	g->file = NULL;
	return -EINVAL;
}

/*
 * The attrs of the new file in @attrs, their ids in @ids, where they go
 * in @h: the intel_pt attr (kernel only, the guest's sample_type, an id
 * no guest attr has), then the guest's.  The ids follow the header, then
 * come the attrs, then the data.
 */
static void merge_attrs(const struct ksynth_opts *o, const struct guest *g,
			struct perf_file_header *h, uint8_t *attrs,
			uint64_t *ids)
{
	size_t asz = g->h.attr_size, i, n = 0;
	struct perf_file_section is = { sizeof(*h), 8 };
	struct perf_event_attr pa;
	uint64_t sample_type;

	memcpy(&sample_type, guest_attr(g, 0) + 24, 8);
	ps_perf_pt_attr(&pa, o->pmu_type,
			ps_perf_pt_config(o->psb_period, false), sample_type);
	pa.size = asz - sizeof(is) < sizeof(pa) ? asz - sizeof(is) : sizeof(pa);
	pa.exclude_user = 1;

	ids[n++] = g->free_id;
	memcpy(attrs, &pa, pa.size);
	memcpy(attrs + asz - sizeof(is), &is, sizeof(is));
	for (i = 0; i < g->nr_attrs; i++) {
		const uint8_t *ga = guest_attr(g, i);
		struct perf_file_section gs = ps_perf_attr_ids(ga, asz);

		is.offset = sizeof(*h) + n * 8;
		is.size = gs.size;
		memcpy(attrs + (i + 1) * asz, ga, asz);
		memcpy(attrs + (i + 2) * asz - sizeof(is), &is, sizeof(is));
		memcpy(ids + n, g->file + gs.offset, gs.size);
		n += gs.size / 8;
	}
	memset(h, 0, sizeof(*h));
	h->magic = PERF_MAGIC;
	h->size = sizeof(*h);
	h->attr_size = asz;
	h->attrs.offset = sizeof(*h) + n * 8;
	h->attrs.size = (g->nr_attrs + 1) * asz;
	h->data.offset = h->attrs.offset + h->attrs.size;
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
	struct {
		struct perf_event_header h;
		struct ps_perf_auxtrace a;
	} aux;
	struct perf_file_header h;
	uint8_t *attrs = NULL;
	uint64_t *ids = NULL;
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
	err = -ENOMEM;
	attrs = calloc(g.nr_attrs + 1, g.h.attr_size);
	ids = calloc(g.nr_ids + 1, 8);
	if (!attrs || !ids)
		goto out;
	merge_attrs(o, &g, &h, attrs, ids);

	memset(&aux, 0, sizeof(aux));
	aux.h.type = PERF_RECORD_AUXTRACE;
	aux.h.size = sizeof(aux);
	ps_perf_auxtrace_fill(&aux.a, &s->buf, 1, 0, stream_tid(gt), -1);
	h.data.size = info_size + g.h.data.size + sizeof(aux) + aux.a.size;

	f = fopen(o->out, "wb");
	if (!f) {
		err = -errno;
		goto out;
	}
	err = 0;
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(ids, 8, g.nr_ids + 1, f) != g.nr_ids + 1 ||
	    fwrite(attrs, g.h.attr_size, g.nr_attrs + 1, f) != g.nr_attrs + 1 ||
	    fwrite(info, info_size, 1, f) != 1 ||
	    (g.h.data.size &&
	     fwrite(g.file + g.h.data.offset, g.h.data.size, 1, f) != 1) ||
	    fwrite(&aux, sizeof(aux), 1, f) != 1 ||
	    ps_perf_write_aux(f, &s->buf))
		err = -EIO;
	if (fclose(f) && !err)
		err = -EIO;
out:
	free(g.file);
	free(attrs);
	free(ids);
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
