// SPDX-License-Identifier: GPL-2.0
/*
 * libflowjit: reassemble images from their chunks and count what is lost.
 *
 * A pending image keeps a bit per byte received: chunks may come in any
 * order, a byte covered twice is an overlap, and the image is done when
 * rec.len bytes arrived. Pending images live in an array in no order;
 * seq tells the oldest, dropped first when the set is full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflowjit.h"

struct flowjit_pending {
	struct flowjit_record	rec;
	uint8_t			*bytes;
	uint8_t			*have;	/* a bit per byte received */
	uint64_t		got;	/* bytes received */
	uint64_t		time;	/* of the first chunk */
	uint64_t		seq;	/* order of arrival among objects */
	bool			overlap;
};

void flowjit_reasm_init(struct flowjit_reasm *ra)
{
	if (ra)
		memset(ra, 0, sizeof(*ra));
}

static void flowjit_pending_fini(struct flowjit_pending *p)
{
	free(p->bytes);
	free(p->have);
}

void flowjit_reasm_fini(struct flowjit_reasm *ra)
{
	size_t i;

	if (!ra)
		return;
	for (i = 0; i < ra->nr_pending; ++i)
		flowjit_pending_fini(&ra->pending[i]);
	free(ra->pending);
	ra->pending = NULL;
	ra->nr_pending = 0;
	ra->cap = 0;
	ra->pending_bytes = 0;
}

int flowjit_reasm_parse(struct flowjit_reasm *ra, struct flowjit_chunk *chunk,
			const void *body, size_t size, const char **why)
{
	int err = flowjit_chunk_parse(chunk, body, size, why);

	if (!ra)
		return err;
	ra->counts.records += 1;
	if (err == -EOPNOTSUPP)
		ra->counts.unknown_version += 1;
	else if (err)
		ra->counts.bad_records += 1;
	return err;
}

/* Take pending image @idx out of the set; its buffers are the caller's. */
static void flowjit_reasm_remove(struct flowjit_reasm *ra, size_t idx)
{
	ra->pending_bytes -= ra->pending[idx].rec.len;
	ra->pending[idx] = ra->pending[ra->nr_pending - 1];
	ra->nr_pending -= 1;
}

/* Drop pending image @idx. */
static void flowjit_reasm_drop(struct flowjit_reasm *ra, size_t idx)
{
	flowjit_pending_fini(&ra->pending[idx]);
	flowjit_reasm_remove(ra, idx);
}

/* Drop the oldest pending image, counted incomplete. */
static void flowjit_reasm_evict(struct flowjit_reasm *ra)
{
	size_t i, old = 0;

	for (i = 1; i < ra->nr_pending; ++i)
		if (ra->pending[i].seq < ra->pending[old].seq)
			old = i;
	ra->counts.incomplete += 1;
	flowjit_reasm_drop(ra, old);
}

/* Returns the index of the pending image @rec is a chunk of, or -1. */
static long flowjit_reasm_find(const struct flowjit_reasm *ra,
			       const struct flowjit_record *rec)
{
	size_t i;

	for (i = 0; i < ra->nr_pending; ++i)
		if (flowjit_rec_same_image(&ra->pending[i].rec, rec))
			return (long)i;
	return -1;
}

/* Returns true if the set has no room for another image of @len bytes. */
static bool flowjit_reasm_full(const struct flowjit_reasm *ra, uint64_t len)
{
	return ra->nr_pending >= FLOWJIT_PENDING_MAX ||
	       ra->pending_bytes + len > FLOWJIT_PENDING_BYTES_MAX;
}

/* Returns the index of a new pending image for @rec, or -ENOMEM. */
static long flowjit_reasm_new(struct flowjit_reasm *ra,
			      const struct flowjit_record *rec, uint64_t time)
{
	struct flowjit_pending *p;

	while (ra->nr_pending && flowjit_reasm_full(ra, rec->len))
		flowjit_reasm_evict(ra);
	if (ra->nr_pending == ra->cap) {
		size_t cap = ra->cap ? 2 * ra->cap : 8;

		p = realloc(ra->pending, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ra->pending = p;
		ra->cap = cap;
	}
	p = &ra->pending[ra->nr_pending];
	memset(p, 0, sizeof(*p));
	p->rec = *rec;
	p->rec.chunk_off = 0;
	p->rec.chunk_len = 0;
	p->time = time;
	p->seq = ra->seq++;
	p->bytes = malloc(rec->len);
	p->have = calloc((rec->len + 7) / 8, 1);
	if (!p->bytes || !p->have) {
		flowjit_pending_fini(p);
		return -ENOMEM;
	}
	ra->pending_bytes += rec->len;
	return (long)ra->nr_pending++;
}

/*
 * Copy the bytes of @chunk into @p, noting bytes received twice: runs of
 * 8-byte groups none of which arrived yet at once, the rest byte by byte.
 */
static void flowjit_pending_fill(struct flowjit_pending *p,
				 const struct flowjit_chunk *chunk)
{
	uint64_t i = 0, len = chunk->rec.chunk_len;

	while (i < len) {
		uint64_t off = chunk->rec.chunk_off + i, n = 0;
		uint8_t bit = (uint8_t)(1u << (off & 7));

		while (!(off & 7) && len - i - n >= 8 && !p->have[(off + n) / 8])
			n += 8;
		if (n) {
			memset(p->have + off / 8, 0xff, n / 8);
			memcpy(p->bytes + off, chunk->bytes + i, n);
			p->got += n;
			i += n;
			continue;
		}
		if (p->have[off / 8] & bit) {
			p->overlap = true;
		} else {
			p->have[off / 8] |= bit;
			p->bytes[off] = chunk->bytes[i];
			p->got += 1;
		}
		i++;
	}
}

/* Hand out pending image @idx, all of whose bytes arrived: 1 or 0. */
static int flowjit_reasm_finish(struct flowjit_reasm *ra, size_t idx,
				struct flowjit_image *image)
{
	struct flowjit_pending *p = &ra->pending[idx];

	if (p->overlap || flowjit_csum(p->bytes, p->rec.len) != p->rec.csum) {
		if (p->overlap)
			ra->counts.overlap += 1;
		else
			ra->counts.bad_csum += 1;
		flowjit_reasm_drop(ra, idx);
		return 0;
	}
	image->rec = p->rec;
	image->bytes = p->bytes;
	image->time = p->time;
	free(p->have);
	flowjit_reasm_remove(ra, idx);
	ra->counts.complete += 1;
	return 1;
}

int flowjit_reasm_add(struct flowjit_reasm *ra, const struct flowjit_chunk *chunk,
		      uint64_t time, struct flowjit_image *image)
{
	const struct flowjit_record *rec;
	long idx;

	if (!ra || !chunk || !image)
		return -EINVAL;
	rec = &chunk->rec;
	if (rec->op != FLOWJIT_OP_IMAGE || !rec->chunk_len || !chunk->bytes ||
	    (uint64_t)rec->chunk_off + rec->chunk_len > rec->len)
		return -EINVAL;
	if (rec->len > FLOWJIT_IMAGE_MAX) {
		ra->counts.too_large += 1;
		return 0;
	}
	idx = flowjit_reasm_find(ra, rec);
	/*
	 * A head over a head received before is a new copy of the image:
	 * a ring holds an image's chunks back to back, so the earlier copy
	 * lost chunks.
	 */
	if (idx >= 0 && !rec->chunk_off && (ra->pending[idx].have[0] & 1)) {
		ra->counts.incomplete += 1;
		flowjit_reasm_drop(ra, (size_t)idx);
		idx = -1;
	}
	if (idx < 0)
		idx = flowjit_reasm_new(ra, rec, time);
	if (idx < 0)
		return (int)idx;
	flowjit_pending_fill(&ra->pending[idx], chunk);
	if (ra->pending[idx].got < ra->pending[idx].rec.len)
		return 0;
	return flowjit_reasm_finish(ra, (size_t)idx, image);
}

void flowjit_reasm_flush(struct flowjit_reasm *ra)
{
	if (!ra)
		return;
	while (ra->nr_pending) {
		ra->counts.incomplete += 1;
		flowjit_reasm_drop(ra, ra->nr_pending - 1);
	}
}
