/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collect PERF_RECORD_FLOWJIT records from a struct sb and reassemble the
 * images they carry as a decoder would, with tools/lib/flowjit: each
 * record checked by flowjit_reasm_parse(), the bytes of an image put
 * together, overlaps refused and the CRC-32C checked by flowjit_reasm_add()
 * (the library hands out an image whole or not at all).
 *
 * Beside it, a thin bookkeeping of what the tests check of the kernel and
 * a reader does not need: every object is kept (retire records, and
 * images that lost chunks or failed their checksum too), each with the
 * times of its first and last chunk and its chunk count, and an image is
 * complete only if its chunks came in order, back to back. The library
 * takes chunks in any order and drops what it cannot hand out, as a
 * reader should; the kernel writes an object's chunks in order, and the
 * tests check that it does. So chunks are told apart into objects here
 * too (with flowjit_rec_same_image(), the library's definition), by the
 * object the last chunks went to, and flowjit_reasm_add()'s image is given
 * to the object of the chunk that completed it.
 */
#ifndef FLOWJIT_SELFTEST_RECORDS_H
#define FLOWJIT_SELFTEST_RECORDS_H

#include <linux/flowjit.h>
#include "libflowjit.h"
#include "sideband.h"

#define FJ_MAX_OBJS	8192

struct fj_obj {
	struct flowjit_record rec;	/* of the first chunk */
	uint64_t time;			/* of the first chunk */
	uint64_t last_time;		/* of the last chunk seen */
	/*
	 * rec.len bytes, for images: the library's image once it handed it
	 * out (every byte once, CRC-32C good), zeros until then
	 */
	uint8_t *bytes;
	uint64_t next_off;		/* chunk_off of the next chunk in order */
	int chunks;
	bool bad_chunk;			/* a chunk out of order */
	bool reassembled;		/* the library handed out its image */
};

/* A set collected from zero (calloc() it, or memset() it to 0). */
struct fj_set {
	struct fj_obj obj[FJ_MAX_OBJS];
	int nr;
	int records;			/* the library's counts, as ints: */
	int bad_version;		/* -EOPNOTSUPP from the parser */
	int bad_records;		/* -EINVAL from the parser */
	int unordered;			/* a record older than its ring's last */
	uint64_t ring_last[SB_MAX_CPUS];
	int ring;			/* ring being drained */
	struct flowjit_reasm ra;	/* the reassembly, zeroed = initialised */
};

/* the object of @rec: chunks of one object are back to back */
static inline struct fj_obj *fj_obj_of(struct fj_set *set,
				       const struct flowjit_record *rec)
{
	int i;

	for (i = set->nr - 1; i >= 0 && i >= set->nr - 64; i--)
		if (flowjit_rec_same_image(&set->obj[i].rec, rec))
			return &set->obj[i];
	return NULL;
}

/*
 * Put the pieces @pieces of delta record @rec over @bytes (rec->len, its
 * base's): whether they were well formed and the result's CRC-32C holds.
 * *@code (if not NULL) gets the bytes of code the pieces carried.
 */
static inline bool fj_apply_pieces(uint8_t *bytes,
				   const struct flowjit_record *rec,
				   const uint8_t *pieces, uint64_t *code)
{
	struct flowjit_delta_piece p;
	uint32_t at = 0;

	while (at + sizeof(p) <= rec->chunk_len) {
		memcpy(&p, pieces + at, sizeof(p));
		at += sizeof(p);
		if (!p.len || p.off + p.len > rec->len ||
		    at + p.len > rec->chunk_len)
			return false;
		memcpy(bytes + p.off, pieces + at, p.len);
		at += p.len;
		if (code)
			*code += p.len;
	}
	return at == rec->chunk_len &&
	       flowjit_csum(bytes, rec->len) == rec->csum;
}

/*
 * A delta record @c of object @o: its revision is its base's bytes (an
 * object of the set, put together already; zeros for base 0) with the
 * pieces, if the pieces are well formed and the result's CRC-32C holds.
 */
static inline void fj_delta(struct fj_set *set, struct fj_obj *o,
			    const struct flowjit_chunk *c)
{
	const struct flowjit_record *rec = &c->rec;
	const struct fj_obj *b = NULL;
	int i;

	for (i = 0; rec->base && i < set->nr; i++)
		if (set->obj[i].rec.kind == rec->kind &&
		    set->obj[i].rec.asid == rec->asid &&
		    set->obj[i].rec.addr == rec->addr &&
		    set->obj[i].rec.len == rec->len &&
		    set->obj[i].rec.revision == rec->base &&
		    set->obj[i].reassembled)
			b = &set->obj[i];
	free(o->bytes);
	o->bytes = calloc(1, rec->len ? rec->len : 1);
	/* base 0: over zeros */
	if ((rec->base && !b) || !o->bytes)
		return;
	if (b)
		memcpy(o->bytes, b->bytes, rec->len);
	o->reassembled = fj_apply_pieces(o->bytes, rec, c->bytes, NULL);
	o->next_off = rec->len;
}

static inline void fj_note(const struct perf_event_header *hdr,
			   const struct flowjit_sample_id *id, void *arg)
{
	struct fj_set *set = arg;
	const struct flowjit_record *rec;
	struct flowjit_image img;
	struct flowjit_chunk c;
	struct fj_obj *o;
	int err;

	if (id->time < set->ring_last[set->ring])
		set->unordered++;
	set->ring_last[set->ring] = id->time;
	if (hdr->type != PERF_RECORD_FLOWJIT)
		return;
	err = flowjit_reasm_parse(&set->ra, &c, hdr + 1,
				  hdr->size - sizeof(*hdr), NULL);
	set->records = set->ra.counts.records;
	set->bad_version = set->ra.counts.unknown_version;
	set->bad_records = set->ra.counts.bad_records;
	if (err)
		return;
	rec = &c.rec;
	o = fj_obj_of(set, rec);
	if (!o || (rec->op == FLOWJIT_OP_IMAGE && o->next_off == o->rec.len)) {
		if (set->nr == FJ_MAX_OBJS)
			return;
		o = &set->obj[set->nr++];
		memset(o, 0, sizeof(*o));
		o->rec = *rec;
		o->time = id->time;
	}
	o->chunks++;
	o->last_time = id->time;
	if (rec->op == FLOWJIT_OP_DELTA)
		fj_delta(set, o, &c);
	if (rec->op != FLOWJIT_OP_IMAGE)
		return;
	/* the kernel writes an object's chunks in order */
	if (rec->chunk_off != o->next_off)
		o->bad_chunk = true;
	else
		o->next_off += rec->chunk_len;
	if (flowjit_reasm_add(&set->ra, &c, id->time, &img) == 1) {
		free(o->bytes);
		o->bytes = img.bytes;
		o->reassembled = true;
	} else if (!o->bytes) {
		o->bytes = calloc(1, rec->len ? rec->len : 1);
	}
}

/* drain every ring of @sb into @set; returns the records seen */
static inline int fj_collect(struct sb *sb, struct fj_set *set)
{
	int i, n = 0;

	for (i = 0; i < sb->nr; i++) {
		struct sb one = { .nr = 1 };

		one.ring[0] = sb->ring[i];
		set->ring = i;
		n += sb_drain(&one, fj_note, set);
		sb->ring[i].lost = one.ring[0].lost;
	}
	return n;
}

static inline uint64_t fj_lost(const struct sb *sb)
{
	uint64_t lost = 0;
	int i;

	for (i = 0; i < sb->nr; i++)
		lost += sb->ring[i].lost;
	return lost;
}

/*
 * an image whose every chunk arrived, in order, and whose checksum holds
 * (the library checked the bytes and the CRC-32C when it handed it out)
 */
static inline bool fj_complete(const struct fj_obj *o)
{
	return (o->rec.op == FLOWJIT_OP_IMAGE ||
		o->rec.op == FLOWJIT_OP_DELTA) && o->reassembled &&
	       !o->bad_chunk && o->next_off == o->rec.len;
}

/* a user JIT snapshot (whole, or a delta), by @pid unless @pid is 0 */
static inline bool fj_user_image(const struct fj_obj *o, pid_t pid)
{
	return o->rec.kind == FLOWJIT_KIND_USER_JIT &&
	       (o->rec.op == FLOWJIT_OP_IMAGE ||
		o->rec.op == FLOWJIT_OP_DELTA) &&
	       (!pid || o->rec.pid == (uint32_t)pid);
}

static inline struct fj_obj *fj_find(struct fj_set *set, uint8_t op,
				     uint64_t id, uint32_t sub)
{
	int i;

	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (o->rec.op == op && o->rec.id == id && o->rec.sub == sub &&
		    o->rec.asid == FLOWJIT_ASID_KERNEL &&
		    (o->rec.kind == FLOWJIT_KIND_BPF_PROG ||
		     o->rec.kind == FLOWJIT_KIND_BPF_SUBPROG))
			return o;
	}
	return NULL;
}

static inline void fj_reset(struct fj_set *set)
{
	int i;

	for (i = 0; i < set->nr; i++)
		free(set->obj[i].bytes);
	flowjit_reasm_fini(&set->ra);
	memset(set, 0, sizeof(*set));
}

#endif /* FLOWJIT_SELFTEST_RECORDS_H */
