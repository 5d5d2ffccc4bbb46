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
#include "ptsynth.h"

#define PERF_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_RECORD_AUXTRACE_INFO	70
#define PERF_RECORD_AUXTRACE		71
#define PERF_AUXTRACE_INTEL_PT		1
#define ATTR_FLAG_SAMPLE_ID_ALL		(1ULL << 18)

/* util/intel-pt.h of Linux 6.1: the AUXTRACE_INFO private area */
enum {
	KPT_PMU_TYPE, KPT_TIME_SHIFT, KPT_TIME_MULT, KPT_TIME_ZERO,
	KPT_CAP_USER_TIME_ZERO, KPT_TSC_BIT, KPT_NORETCOMP_BIT,
	KPT_HAVE_SCHED_SWITCH, KPT_SNAPSHOT_MODE, KPT_PER_CPU_MMAPS,
	KPT_MTC_BIT, KPT_MTC_FREQ_BITS, KPT_TSC_CTC_N, KPT_TSC_CTC_D,
	KPT_CYC_BIT, KPT_MAX_NONTURBO_RATIO, KPT_FILTER_STR_LEN, KPT_PRIV_MAX,
};

#define CFG_PT		(1ULL << 0)
#define CFG_CYC		(1ULL << 1)
#define CFG_MTC		(1ULL << 9)
#define CFG_TSC		(1ULL << 10)
#define CFG_NORETCOMP	(1ULL << 11)
#define CFG_BRANCH	(1ULL << 13)
#define CFG_MTC_PERIOD	(0xfULL << 14)
#define CFG_PSB_SHIFT	24

struct kstate {
	struct ptstream ps;	/* enabled: inside the filter ranges */
	struct ptbuf buf;
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
		ptstream_tnt(&s->ps, next != s->ip + s->info.len);
		s->tnt_bits++;
		break;
	case IC_CALL_IND:
	case IC_JMP_IND:
	case IC_RET:
		ptstream_ip(&s->ps, ppt_tip, next);
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
		ptstream_tnt_flush(&s->ps);
		ptstream_tsc(&s->ps);
		ptstream_pge(&s->ps, r->ip);
		s->pge++;
	} else if (ptstream_psb_due(&s->ps, s->psb_period)) {
		ptstream_psb(&s->ps, r->ip);
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
	ptstream_ip(&s->ps, ppt_tip_pgd, target);
	s->ps.enabled = false;
	s->pgd++;
}

static int ksynth_stream(const struct gt_trace *gt, struct kstate *s)
{
	size_t i;
	int err = 0;

	err = ptstream_init(&s->ps, &s->buf, PT_TNT8_MAX, "ptsynth ksynth");
	if (err)
		return err;
	for (i = 0; i < gt->nr_recs && !err && !s->ps.err; i++) {
		const struct gt_rec *r = gt->recs[i];

		if (r->type == GT_INSN) {
			if (!s->insns) {
				/* TraceEn: PSB+ with packets disabled */
				s->ps.tsc = r->tsc;
				ptstream_psb(&s->ps, 0);
			}
			err = kinsn(s, (const struct gt_insn *)r);
		} else if (r->type == GT_KIRQ && s->ps.enabled) {
			/* an interrupt: FUP of where it resumes, TIP.PGD */
			uint64_t ip = ((const struct gt_kirq *)r)->ip;

			kresolve(s, ip);
			ptstream_fup_pgd(&s->ps, ip);
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
		ptstream_fup_pgd(&s->ps, s->ip);
	}
	ptstream_tnt_flush(&s->ps);
	ptstream_exit(&s->ps);
	return err ? err : s->ps.err;
}

/* ---- perf.data ---- */

struct fsec {
	uint64_t offset, size;
};

struct fheader {
	uint64_t magic, size, attr_size;
	struct fsec attrs, data, event_types;
	uint64_t adds_features[4];
};

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

static uint64_t kpt_config(uint64_t period)
{
	uint64_t v = 0;

	while (period > 2048 && v < 15) {
		period >>= 1;
		v++;
	}
	return CFG_PT | CFG_BRANCH | CFG_TSC | CFG_NORETCOMP | (v << CFG_PSB_SHIFT);
}

static int write_perf(const struct ksynth_opts *o, const struct gt_trace *gt,
		      const struct kstate *s)
{
	struct fheader gh, h;
	size_t gsize, nattr, i, asz, ids_total = 0;
	uint8_t *g = kgt_read_file(o->sideband, &gsize), *attrs = NULL;
	uint64_t *ids = NULL, pt_id = 0, sample_type, data_size;
	/* priv[0..FILTER_STR_LEN], the filter string, cap_event_trace */
	uint64_t info[2 + KPT_PRIV_MAX + 128 + 1];
	size_t info_size, flen;
	char *fstr;
	struct perf_event_attr pa;
	uint64_t aux[6];
	FILE *f = NULL;
	int err = -EINVAL;

	if (!g) {
		fprintf(stderr, "ptsynth ksynth: cannot read %s\n", o->sideband);
		return -EIO;
	}
	if (gsize < sizeof(gh))
		goto bad;
	memcpy(&gh, g, sizeof(gh));
	asz = gh.attr_size;
	if (gh.magic != PERF_MAGIC || asz < 64 + 16 || asz > 4096 ||
	    gh.attrs.offset > gsize || gh.attrs.size > gsize - gh.attrs.offset ||
	    gh.data.offset > gsize || gh.data.size > gsize - gh.data.offset ||
	    gh.attrs.size % asz || !gh.attrs.size)
		goto bad;
	nattr = gh.attrs.size / asz;
	for (i = 0; i < nattr; i++) {
		struct fsec is;

		memcpy(&is, g + gh.attrs.offset + i * asz + asz - 16, 16);
		if (is.offset > gsize || is.size > gsize - is.offset || is.size % 8)
			goto bad;
		ids_total += is.size / 8;
		for (size_t j = 0; j < is.size / 8; j++) {
			uint64_t id;

			memcpy(&id, g + is.offset + j * 8, 8);
			if (id >= pt_id)
				pt_id = id + 1;
		}
	}
	memcpy(&sample_type, g + gh.attrs.offset + 24, 8);

	/* the intel_pt attr: kernel only, the guest's sample_type */
	memset(&pa, 0, sizeof(pa));
	pa.type = o->pmu_type;
	pa.size = asz - 16 < sizeof(pa) ? asz - 16 : sizeof(pa);
	pa.config = kpt_config(o->psb_period);
	pa.sample_period = 1;
	pa.sample_type = sample_type;
	pa.disabled = 1;
	pa.exclude_user = 1;
	pa.exclude_hv = 1;
	pa.sample_id_all = 1;

	attrs = calloc(nattr + 1, asz);
	ids = calloc(ids_total + 1, 8);
	if (!attrs || !ids) {
		err = -ENOMEM;
		goto out;
	}
	memset(&h, 0, sizeof(h));
	h.magic = PERF_MAGIC;
	h.size = sizeof(h);
	h.attr_size = asz;
	/* ids after the header, then the attrs, then the data */
	{
		uint64_t off = sizeof(h), n = 0;
		struct fsec is = { off, 8 };

		ids[n++] = pt_id;
		memcpy(attrs, &pa, pa.size);
		memcpy(attrs + asz - 16, &is, 16);
		for (i = 0; i < nattr; i++) {
			const uint8_t *ga = g + gh.attrs.offset + i * asz;
			struct fsec gs;

			memcpy(&gs, ga + asz - 16, 16);
			memcpy(attrs + (i + 1) * asz, ga, asz);
			is.offset = off + n * 8;
			is.size = gs.size;
			memcpy(attrs + (i + 1) * asz + asz - 16, &is, 16);
			memcpy(ids + n, g + gs.offset, gs.size);
			n += gs.size / 8;
		}
		h.attrs.offset = off + n * 8;
		h.attrs.size = (nattr + 1) * asz;
		h.data.offset = h.attrs.offset + h.attrs.size;
		ids_total = n;
	}

	memset(info, 0, sizeof(info));
	info[1] = PERF_AUXTRACE_INTEL_PT;
	info[2 + KPT_PMU_TYPE] = o->pmu_type;
	info[2 + KPT_TIME_SHIFT] = gt->hdr.tc.time_shift;
	info[2 + KPT_TIME_MULT] = gt->hdr.tc.time_mult;
	info[2 + KPT_TIME_ZERO] = gt->hdr.tc.time_zero;
	info[2 + KPT_CAP_USER_TIME_ZERO] = gt->hdr.tc.cap_user_time_zero;
	info[2 + KPT_TSC_BIT] = CFG_TSC;
	info[2 + KPT_NORETCOMP_BIT] = CFG_NORETCOMP;
	info[2 + KPT_MTC_BIT] = CFG_MTC;
	info[2 + KPT_MTC_FREQ_BITS] = CFG_MTC_PERIOD;
	info[2 + KPT_CYC_BIT] = CFG_CYC;
	/* "filter START/SIZE,..." as perf record --filter leaves it */
	fstr = (char *)&info[2 + KPT_PRIV_MAX];
	flen = 0;
	for (i = 0; i < (size_t)o->nr_filter; i++)
		flen += snprintf(fstr + flen, 128 * 8 - flen, "%sfilter %#llx/%#llx",
				 i ? "," : "",
				 (unsigned long long)o->filter[i].start,
				 (unsigned long long)(o->filter[i].end -
						      o->filter[i].start));
	if (flen >= 128 * 8 - 1)
		goto bad;
	info[2 + KPT_FILTER_STR_LEN] = flen;
	info_size = 8 * (2 + KPT_PRIV_MAX + (flen ? (flen + 1 + 7) / 8 : 0) + 1);
	info[0] = PERF_RECORD_AUXTRACE_INFO | (uint64_t)info_size << 48;

	memset(aux, 0, sizeof(aux));
	aux[0] = PERF_RECORD_AUXTRACE | (uint64_t)sizeof(aux) << 48;
	aux[1] = (s->buf.len + 7) & ~7ULL;
	aux[2] = 0;				/* offset */
	aux[3] = 1;				/* reference */
	aux[4] = (uint64_t)(uint32_t)gt->hdr.pid << 32;	/* idx 0, tid */
	aux[5] = 0xffffffffULL;			/* cpu -1 */
	{
		/* the tid is the program's first GT_INSN record's */
		for (i = 0; i < gt->nr_recs; i++)
			if (gt->recs[i]->type == GT_INSN) {
				aux[4] = (uint64_t)gt->recs[i]->tid << 32;
				break;
			}
	}

	f = fopen(o->out, "wb");
	if (!f) {
		err = -errno;
		goto out;
	}
	data_size = info_size + gh.data.size + sizeof(aux) + aux[1];
	h.data.size = data_size;
	{
		static const uint8_t zero[8];

		if (fwrite(&h, sizeof(h), 1, f) != 1 ||
		    fwrite(ids, 8, ids_total, f) != ids_total ||
		    fwrite(attrs, asz, nattr + 1, f) != nattr + 1 ||
		    fwrite(info, info_size, 1, f) != 1 ||
		    (gh.data.size && fwrite(g + gh.data.offset, gh.data.size, 1, f) != 1) ||
		    fwrite(aux, sizeof(aux), 1, f) != 1 ||
		    (s->buf.len && fwrite(s->buf.data, s->buf.len, 1, f) != 1) ||
		    ((s->buf.len & 7) && fwrite(zero, 8 - (s->buf.len & 7), 1, f) != 1))
			err = -EIO;
		else
			err = 0;
	}
	if (fclose(f) && !err)
		err = -EIO;
	goto out;
bad:
	fprintf(stderr, "ptsynth ksynth: %s: not a perf.data file perf record wrote\n",
		o->sideband);
out:
	free(g);
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
