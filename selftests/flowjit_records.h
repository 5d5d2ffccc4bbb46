/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collect PERF_RECORD_FLOWJIT records from a struct sb and reassemble the
 * images they carry, as a decoder would: each record checked, chunks told
 * apart and images checksummed by tools/lib/flowjit. The collection keeps
 * every object (retires and incomplete images too) with its times and
 * chunk count, and requires chunks in order: what the tests check of the
 * kernel, not what a reader needs.
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
	uint8_t *bytes;			/* rec.len bytes, for images */
	uint64_t got;			/* bytes received */
	int chunks;
	bool bad_chunk;			/* overlap, out of range, mismatch */
};

struct fj_set {
	struct fj_obj obj[FJ_MAX_OBJS];
	int nr;
	int records;
	int bad_version;
	int bad_records;		/* refused by flowjit_chunk_parse() */
	int unordered;			/* a record older than its ring's last */
	uint64_t ring_last[SB_MAX_CPUS];
	int ring;			/* ring being drained */
};

static inline void fj_note(const struct perf_event_header *hdr,
			   const struct flowjit_sample_id *id, void *arg)
{
	struct fj_set *set = arg;
	const struct flowjit_record *rec;
	struct flowjit_chunk c;
	struct fj_obj *o = NULL;
	int i, err;

	if (id->time < set->ring_last[set->ring])
		set->unordered++;
	set->ring_last[set->ring] = id->time;
	if (hdr->type != PERF_RECORD_FLOWJIT)
		return;
	set->records++;
	err = flowjit_chunk_parse(&c, hdr + 1, hdr->size - sizeof(*hdr), NULL);
	if (err == -EOPNOTSUPP)
		set->bad_version++;
	else if (err)
		set->bad_records++;
	if (err)
		return;
	rec = &c.rec;
	/* chunks of one object are back to back: look at recent ones */
	for (i = set->nr - 1; i >= 0 && i >= set->nr - 64; i--) {
		if (flowjit_rec_same_image(&set->obj[i].rec, rec)) {
			o = &set->obj[i];
			break;
		}
	}
	if (!o || (rec->op == FLOWJIT_OP_IMAGE && o->got == o->rec.len)) {
		if (set->nr == FJ_MAX_OBJS)
			return;
		o = &set->obj[set->nr++];
		memset(o, 0, sizeof(*o));
		o->rec = *rec;
		o->time = id->time;
		if (rec->op == FLOWJIT_OP_IMAGE)
			o->bytes = calloc(1, rec->len ? rec->len : 1);
	}
	o->chunks++;
	o->last_time = id->time;
	if (rec->op != FLOWJIT_OP_IMAGE)
		return;
	/* the kernel writes an object's chunks in order */
	if (rec->chunk_off != o->got) {
		o->bad_chunk = true;
		return;
	}
	memcpy(o->bytes + rec->chunk_off, c.bytes, rec->chunk_len);
	o->got += rec->chunk_len;
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

/* an image whose every chunk arrived and whose checksum holds */
static inline bool fj_complete(const struct fj_obj *o)
{
	return o->rec.op == FLOWJIT_OP_IMAGE && !o->bad_chunk &&
	       o->got == o->rec.len &&
	       flowjit_csum(o->bytes, o->rec.len) == o->rec.csum;
}

/* a user JIT snapshot, by @pid unless @pid is 0 */
static inline bool fj_user_image(const struct fj_obj *o, pid_t pid)
{
	return o->rec.kind == FLOWJIT_KIND_USER_JIT &&
	       o->rec.op == FLOWJIT_OP_IMAGE &&
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
	memset(set, 0, sizeof(*set));
}

#endif /* FLOWJIT_SELFTEST_RECORDS_H */
