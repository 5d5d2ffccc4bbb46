/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gtbuild.h - build an in-memory ground truth from a list of executed
 * instructions (for unit tests of the packet generator).
 */
#ifndef PTSYNTH_GTBUILD_H
#define PTSYNTH_GTBUILD_H

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "gt.h"

struct gtb {
	struct gt_trace t;
	struct gt_insn *insns;
	size_t nr, cap;
	uint64_t tsc;
};

static inline void gtb_insn(struct gtb *b, uint64_t ip, const uint8_t *bytes,
		     size_t len)
{
	struct gt_insn *r;

	if (b->nr == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->insns = realloc(b->insns, b->cap * sizeof(*r));
	}
	r = &b->insns[b->nr++];
	memset(r, 0, sizeof(*r));
	r->h.type = GT_INSN;
	r->h.size = sizeof(*r);
	r->h.pid = r->h.tid = 100;
	r->h.tsc = (b->tsc += 1000);
	r->ip = ip;
	r->len = len;
	memcpy(r->bytes, bytes, len);
}

static inline void gtb_finish(struct gtb *b)
{
	size_t i;

	memset(&b->t, 0, sizeof(b->t));
	b->t.recs = calloc(b->nr, sizeof(*b->t.recs));
	for (i = 0; i < b->nr; i++)
		b->t.recs[i] = &b->insns[i].h;
	b->t.nr_recs = b->nr;
	b->t.hdr.tc.time_shift = 31;
	b->t.hdr.tc.time_mult = 1U << 31;
	b->t.hdr.tc.cap_user_time_zero = 1;
}

static inline void gtb_free(struct gtb *b)
{
	free(b->t.recs);
	free(b->insns);
}

/*
 * Any records in any order (for the time map and the events): struct gtr
 * holds a ground truth whose records are allocated one by one.
 */
struct gtr {
	struct gt_trace t;
	size_t cap;
};

static inline void *gtr_add(struct gtr *b, unsigned int type, size_t size,
			    int tid, uint64_t tsc)
{
	struct gt_rec *r = calloc(1, (size + 7) & ~(size_t)7);

	if (b->t.nr_recs == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->t.recs = realloc(b->t.recs, b->cap * sizeof(*b->t.recs));
	}
	r->type = type;
	r->size = (size + 7) & ~(size_t)7;
	r->pid = 100;
	r->tid = tid;
	r->tsc = tsc;
	b->t.recs[b->t.nr_recs++] = r;
	return r;
}

static inline struct gt_insn *gtr_insn(struct gtr *b, int tid, uint64_t tsc,
				       uint64_t ip, const uint8_t *bytes,
				       size_t len)
{
	struct gt_insn *in = gtr_add(b, GT_INSN, sizeof(*in), tid, tsc);

	in->ip = ip;
	in->len = len;
	memcpy(in->bytes, bytes, len);
	return in;
}

static inline void gtr_free(struct gtr *b)
{
	size_t i;

	for (i = 0; i < b->t.nr_recs; i++)
		free(b->t.recs[i]);
	free(b->t.recs);
	memset(b, 0, sizeof(*b));
}

/* Decode all packets of a buffer with libipt's packet decoder. */
static inline int decode_packets(const uint8_t *buf, size_t len,
			  struct pt_packet *out, int max)
{
	struct pt_packet_decoder *dec;
	struct pt_config cfg;
	int n = 0, err;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return -1;
	err = pt_pkt_sync_set(dec, 0);
	while (!err && n < max) {
		err = pt_pkt_next(dec, &out[n], sizeof(out[n]));
		if (err < 0)
			break;
		n++;
		err = 0;
	}
	pt_pkt_free_decoder(dec);
	return n;
}

/* What a decoder does with an IP payload (Intel SDM, "IP compression") */
static inline uint64_t ip_apply(uint64_t last, const struct pt_packet_ip *ip)
{
	switch (ip->ipc) {
	case pt_ipc_update_16:
		return (last & ~0xffffULL) | (ip->ip & 0xffff);
	case pt_ipc_update_32:
		return (last & ~0xffffffffULL) | (ip->ip & 0xffffffffULL);
	case pt_ipc_update_48:
		return (last & ~0xffffffffffffULL) | (ip->ip & 0xffffffffffffULL);
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(ip->ip << 16) >> 16);
	case pt_ipc_full:
		return ip->ip;
	default:
		return last;
	}
}

#endif
