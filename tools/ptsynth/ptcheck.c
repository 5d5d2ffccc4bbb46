// SPDX-License-Identifier: GPL-2.0
/*
 * ptcheck.c - decode a synthesised PT stream with libipt's instruction
 * flow decoder and compare it with the ground truth, insn for insn.
 *
 * The memory image is built from the recorded mappings: file-backed
 * executable mappings are added as files; anonymous/vdso memory is served
 * from the GT_CODE snapshots through the image read callback.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptcheck.h"

struct code_snap {
	uint64_t addr, len;
	const uint8_t *data;
};

struct image_ctx {
	struct code_snap *snaps;
	int nr_snaps;
};

static int read_snap(uint8_t *buffer, size_t size,
		     const struct pt_asid *asid, uint64_t ip, void *context)
{
	struct image_ctx *ctx = context;
	int i;

	(void)asid;
	for (i = ctx->nr_snaps - 1; i >= 0; i--) {
		const struct code_snap *c = &ctx->snaps[i];
		uint64_t avail;

		if (ip < c->addr || ip >= c->addr + c->len)
			continue;
		avail = c->addr + c->len - ip;
		if (size > avail)
			size = avail;
		memcpy(buffer, c->data + (ip - c->addr), size);
		return size;
	}
	return -pte_nomap;
}

static int build_image(const struct gt_trace *gt, struct pt_image *image,
		       struct image_ctx *ctx, bool verbose)
{
	size_t i;
	int err;

	ctx->snaps = calloc(gt->nr_recs, sizeof(*ctx->snaps));
	if (!ctx->snaps)
		return -ENOMEM;
	for (i = 0; i < gt->nr_recs; i++) {
		const struct gt_rec *r = gt->recs[i];

		if (r->type == GT_CODE) {
			const struct gt_code *c = (const void *)r;
			struct code_snap *s = &ctx->snaps[ctx->nr_snaps++];

			s->addr = c->addr;
			s->len = c->len;
			s->data = c->data;
		} else if (r->type == GT_MMAP) {
			const struct gt_mmap *m = (const void *)r;

			if (!m->ino)
				continue;
			err = pt_image_add_file(image, m->name, m->pgoff,
						m->len, NULL, m->start);
			if (err < 0)
				fprintf(stderr, "ptcheck: cannot add %s: %s\n",
					m->name, pt_errstr(pt_errcode(err)));
			else if (verbose)
				fprintf(stderr, "ptcheck: %s at %#lx\n", m->name,
					(unsigned long)m->start);
		}
	}
	return pt_image_set_callback(image, read_snap, ctx);
}

/* Appends @ip (and, if times are kept, @tsc); 0 or -ENOMEM */
static int add_insn(struct ptcheck_flow *f, uint64_t ip, uint64_t tsc,
		    bool with_time)
{
	if (f->nr == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 65536;
		uint64_t *p = realloc(f->ips, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->ips = p;
		if (with_time) {
			p = realloc(f->tsc, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			f->tsc = p;
		}
		f->cap = cap;
	}
	if (with_time)
		f->tsc[f->nr] = tsc;
	f->ips[f->nr++] = ip;
	return 0;
}

static int add_ip(struct ptcheck_flow *f, uint64_t ip)
{
	return add_insn(f, ip, 0, false);
}

static int drain_events(struct pt_insn_decoder *dec, int status,
			struct ptcheck_flow *f)
{
	struct pt_event ev;

	while (status & pts_event_pending) {
		status = pt_insn_event(dec, &ev, sizeof(ev));
		if (status < 0)
			return status;
		if (ev.type == ptev_overflow) {
			f->nr_ovf++;
			if (f->ovf_pos == (size_t)-1)
				f->ovf_pos = f->nr;
		}
	}
	return status;
}

/* libipt's time after the instruction it just gave (pt_insn_time) */
static uint64_t insn_time(struct pt_insn_decoder *dec)
{
	uint32_t lost_mtc, lost_cyc;
	uint64_t tsc;

	if (pt_insn_time(dec, &tsc, &lost_mtc, &lost_cyc) < 0)
		return PTCHECK_NO_TIME;
	return tsc;
}

static int decode(struct pt_insn_decoder *dec, struct ptcheck_flow *f,
		  bool with_time)
{
	struct pt_insn insn;
	int status;

	for (;;) {
		status = pt_insn_sync_forward(dec);
		if (status < 0)
			return status == -pte_eos ? 0 : status;
		for (;;) {
			status = drain_events(dec, status, f);
			if (status < 0)
				break;
			status = pt_insn_next(dec, &insn, sizeof(insn));
			if (status < 0)
				break;
			if (add_insn(f, insn.ip,
				     with_time ? insn_time(dec) : 0, with_time))
				return -pte_nomem;
		}
		if (status == -pte_eos)
			return 0;
		fprintf(stderr, "ptcheck: decode error after %zu insns: %s\n",
			f->nr, pt_errstr(pt_errcode(status)));
		f->nr_errors++;
	}
}

/*
 * Decode @pt with libipt's instruction flow decoder into @f; with @tcfg
 * also libipt's time of each instruction (its config then says how MTC
 * and CYC convert, as libipt's ptxed --mtc-freq, --cpuid-0x15.eax/ebx,
 * --nom-freq do).  Returns 0, -ENOMEM or -EINVAL.
 */
int ptcheck_decode(const struct gt_trace *gt, const uint8_t *pt, size_t len,
		   struct ptcheck_flow *f, bool verbose,
		   const struct ptcheck_time_cfg *tcfg)
{
	struct pt_insn_decoder *dec;
	struct image_ctx ctx = { 0 };
	struct pt_image *image;
	struct pt_config cfg;
	int err;

	memset(f, 0, sizeof(*f));
	f->ovf_pos = (size_t)-1;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)pt;
	cfg.end = (uint8_t *)pt + len;
	if (tcfg) {
		cfg.mtc_freq = tcfg->mtc_freq;
		cfg.cpuid_0x15_eax = tcfg->ctc_d;
		cfg.cpuid_0x15_ebx = tcfg->ctc_n;
		cfg.nom_freq = tcfg->nom_freq;
	}
	dec = pt_insn_alloc_decoder(&cfg);
	image = pt_image_alloc("ptcheck");
	if (!dec || !image)
		return -ENOMEM;
	err = build_image(gt, image, &ctx, verbose);
	if (!err)
		err = pt_insn_set_image(dec, image);
	if (!err)
		err = decode(dec, f, tcfg != NULL);
	pt_insn_free_decoder(dec);
	pt_image_free(image);
	free(ctx.snaps);
	return err < 0 ? -EINVAL : 0;
}

void ptcheck_flow_free(struct ptcheck_flow *f)
{
	free(f->ips);
	free(f->tsc);
	memset(f, 0, sizeof(*f));
}

/* Executed instructions of @tid (all threads if tid < 0), in order. */
int ptcheck_truth(const struct gt_trace *gt, int tid, struct ptcheck_flow *f)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->ovf_pos = (size_t)-1;
	for (i = 0; i < gt->nr_recs; i++) {
		const struct gt_rec *r = gt->recs[i];

		if (r->type != GT_INSN || (tid >= 0 && (int)r->tid != tid))
			continue;
		if (add_ip(f, ((const struct gt_insn *)r)->ip))
			return -ENOMEM;
	}
	return 0;
}

static size_t first_diff(const uint64_t *a, size_t na, const uint64_t *b,
			 size_t nb)
{
	size_t i;

	for (i = 0; i < na && i < nb; i++)
		if (a[i] != b[i])
			return i;
	return i;
}

/*
 * Compare; with an overflow, the decoded flow must be a prefix of the
 * truth, then (after the OVF) exactly a suffix of it.  *gap_end gets the
 * truth index where decoding resumed.
 */
int ptcheck_compare(const struct ptcheck_flow *truth,
		    const struct ptcheck_flow *dec, size_t *gap_end)
{
	size_t pre = dec->ovf_pos == (size_t)-1 ? dec->nr : dec->ovf_pos;
	size_t post = dec->nr - pre, d, k;

	*gap_end = 0;
	d = first_diff(truth->ips, truth->nr, dec->ips, pre);
	if (dec->ovf_pos == (size_t)-1) {
		if (d == truth->nr && d == dec->nr)
			return 0;
		printf("# flows differ at insn %zu (truth %zu insns, decoded %zu)\n",
		       d, truth->nr, dec->nr);
		if (d < truth->nr)
			printf("#   truth   %#lx\n", (unsigned long)truth->ips[d]);
		if (d < dec->nr)
			printf("#   decoded %#lx\n", (unsigned long)dec->ips[d]);
		return -1;
	}
	if (d != pre || post > truth->nr) {
		printf("# before OVF: flows differ at insn %zu\n", d);
		return -1;
	}
	k = truth->nr - post;
	if (k < pre ||
	    first_diff(truth->ips + k, post, dec->ips + pre, post) != post) {
		printf("# after OVF: decoded flow is not a suffix of the truth\n");
		return -1;
	}
	*gap_end = k;
	return 0;
}
