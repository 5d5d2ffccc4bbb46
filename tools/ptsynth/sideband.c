// SPDX-License-Identifier: GPL-2.0
/*
 * sideband.c - read the sideband of a real "perf record --flowjit" run
 *
 * Part 2 of ptsynth: the traced program ran in the flowjit guest under
 * "ptsynth trace" while "perf record --flowjit -e dummy" recorded the same
 * run.  That perf.data's side-band records (MMAP/MMAP2, COMM, FORK, EXIT,
 * KSYMBOL, BPF_EVENT, TEXT_POKE, LOST and PERF_RECORD_FLOWJIT) replace the
 * ones ptsynth would synthesise from the ground truth; the file is read
 * and their sample_id trailers parsed with the recording's attrs by
 * tools/lib/flowjit's perf.data reader (pdata.h), and rewritten by
 * perfdata.c in ptsynth's layout.  The user JIT images a thread's
 * instruction fetch took (flowjit exec faults) are also returned as
 * faults, which synth.c models as FUP/TIP.PGD ... TIP.PGE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libflowjit.h"
#include "pdata.h"
#include "sideband.h"

#define PERF_RECORD_FLOWJIT	FLOWJIT_PERF_RECORD_TYPE

static int ps_sb_add(struct ps_sb *sb, const struct ps_sb_rec *r)
{
	if (sb->nr == sb->cap) {
		size_t cap = sb->cap ? 2 * sb->cap : 256;
		struct ps_sb_rec *n = realloc(sb->recs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sb->recs = n;
		sb->cap = cap;
	}
	sb->recs[sb->nr++] = *r;
	return 0;
}

static int ps_sb_fault_add(struct ps_sb *sb, int tid, uint64_t time)
{
	struct ps_sb_fault *n;

	n = realloc(sb->faults, (sb->nr_faults + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	sb->faults = n;
	n[sb->nr_faults].tid = tid;
	n[sb->nr_faults].time = time;
	sb->nr_faults++;
	return 0;
}

/*
 * The trailer of record @rec in the layout of @a into @r: -EINVAL if it
 * is too small. Without a tid in the trailer pid and tid are -1.
 */
static int ps_sb_parse_trailer(struct pdata *pd, const struct pdata_rec *rec,
			       const struct pdata_attr *a, struct ps_sb_rec *r)
{
	struct pdata_sid sid;
	size_t body;

	if (pdata_sample_id(pd, rec, a, &sid, &body))
		return -EINVAL;
	r->body_len = sizeof(struct perf_event_header) + body;
	r->pid = (sid.fields & PDATA_ST_TID) ? (int)sid.pid : -1;
	r->tid = (sid.fields & PDATA_ST_TID) ? (int)sid.tid : -1;
	r->cpu = (int)sid.cpu;
	r->time = sid.time;
	return 0;
}

/* Offset of the file name in an MMAP/MMAP2 record, 0 if it has none. */
static size_t ps_sb_name_offset(const struct perf_event_header *h)
{
	if (h->type == PERF_RECORD_MMAP)
		return sizeof(*h) + 8 + 24;
	if (h->type == PERF_RECORD_MMAP2)
		return sizeof(*h) + 8 + 24 + 8 + 16 + 8;
	return 0;
}

/*
 * Copy record @h (body of @r->body_len bytes) into @r->data; a file name
 * that exists under @root is replaced by that file's absolute path.
 */
static int ps_sb_copy_body(struct ps_sb *sb, const struct perf_event_header *h,
			   struct ps_sb_rec *r, const char *root)
{
	size_t off = ps_sb_name_offset(h), nlen, len;
	char path[PATH_MAX * 2], *real = NULL;
	const char *name;
	struct stat st;

	if (off && off < r->body_len && root) {
		name = (const char *)h + off;
		nlen = strnlen(name, r->body_len - off);
		if (nlen < r->body_len - off && name[0] == '/' &&
		    snprintf(path, sizeof(path), "%s%s", root, name) <
		    (int)sizeof(path) && !stat(path, &st))
			real = realpath(path, NULL);
	}
	if (!real) {
		r->data = malloc(r->body_len);
		if (!r->data)
			return -ENOMEM;
		memcpy(r->data, h, r->body_len);
		return 0;
	}
	nlen = strlen(real);
	len = (off + nlen + 1 + 7) & ~(size_t)7;
	r->data = calloc(1, len);
	if (!r->data) {
		free(real);
		return -ENOMEM;
	}
	memcpy(r->data, h, off);
	memcpy(r->data + off, real, nlen);
	((struct perf_event_header *)r->data)->size = len;
	r->body_len = len;
	free(real);
	sb->nr_renamed++;
	return 0;
}

static bool ps_sb_keep_type(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_LOST:
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_TEXT_POKE:
	case PERF_RECORD_FLOWJIT:
		return true;
	default:
		return false;
	}
}

/*
 * A flowjit user JIT image taken by an instruction fetch: a fault. The
 * record is kept whatever it holds; one libflowjit refuses is no fault.
 */
static int ps_sb_note_flowjit(struct ps_sb *sb,
			      const struct perf_event_header *h,
			      const struct ps_sb_rec *r)
{
	struct flowjit_chunk c;
	const struct flowjit_record *fr = &c.rec;

	sb->nr_flowjit++;
	if (flowjit_chunk_parse(&c, h + 1, r->body_len - sizeof(*h), NULL))
		return 0;
	/* a delta record (the kernel's, attr.flowjit_delta) is one too */
	if (fr->kind != FLOWJIT_KIND_USER_JIT ||
	    (fr->op != FLOWJIT_OP_IMAGE && fr->op != FLOWJIT_OP_DELTA) ||
	    (fr->flags & FLOWJIT_F_EXISTING) || fr->chunk_off)
		return 0;
	sb->nr_images++;
	return ps_sb_fault_add(sb, fr->tid, r->time) ?: 1;
}

/* --delta: blocks compared, as the kernel would (Documentation/trace/flowjit.rst) */
#define PS_SB_DELTA_BLOCK	16

/* The last image of a user JIT page, to write the next one's delta against. */
struct ps_sb_page {
	uint64_t asid, addr, len;
	uint32_t revision;
	uint64_t image;		/* the exec fault image of @revision */
	uint8_t *bytes;
};

/* a delta is against @pg's revision: note its image as a base */
static void ps_sb_note_base(struct ps_sb *sb, const struct ps_sb_page *pg)
{
	if (pg->image && (!sb->first_base_image || pg->image < sb->first_base_image))
		sb->first_base_image = pg->image;
}

static struct ps_sb_page *ps_sb_page_of(struct ps_sb *sb, const struct flowjit_record *fr)
{
	struct ps_sb_page *n;
	size_t i;

	for (i = 0; i < sb->nr_pages; i++)
		if (sb->pages[i].asid == fr->asid && sb->pages[i].addr == fr->addr)
			return &sb->pages[i];
	n = realloc(sb->pages, (sb->nr_pages + 1) * sizeof(*n));
	if (!n)
		return NULL;
	sb->pages = n;
	n = &sb->pages[sb->nr_pages++];
	memset(n, 0, sizeof(*n));
	n->asid = fr->asid;
	n->addr = fr->addr;
	return n;
}

/*
 * Write into @out the pieces of @cur that differ from @prev (@len bytes
 * each) in PS_SB_DELTA_BLOCK blocks, adjacent blocks in one piece.
 * Returns their size, or 0 if they would not fit @max bytes.
 */
static size_t ps_sb_pieces(const uint8_t *prev, const uint8_t *cur, uint32_t len,
			   uint8_t *out, size_t max)
{
	struct flowjit_delta_piece p;
	uint32_t off = 0, end, n;
	size_t at = 0;

	while (off < len) {
		n = len - off < PS_SB_DELTA_BLOCK ? len - off : PS_SB_DELTA_BLOCK;
		if (!memcmp(prev + off, cur + off, n)) {
			off += n;
			continue;
		}
		end = off + n;
		while (end < len) {
			n = len - end < PS_SB_DELTA_BLOCK ? len - end : PS_SB_DELTA_BLOCK;
			if (!memcmp(prev + end, cur + end, n))
				break;
			end += n;
		}
		if (at + sizeof(p) + (end - off) > max)
			return 0;
		p.off = off;
		p.len = end - off;
		memcpy(out + at, &p, sizeof(p));
		memcpy(out + at + sizeof(p), cur + off, p.len);
		at += sizeof(p) + p.len;
		off = end;
	}
	return at;
}

/*
 * --delta: a delta record the kernel wrote (attr.flowjit_delta) stays as
 * it is and counts; its page's bytes are its revision's from now on, for
 * the images after it. Returns 0 or -ENOMEM.
 */
static int ps_sb_delta_in(struct ps_sb *sb, const struct perf_event_header *h,
			  const struct ps_sb_rec *r, const struct flowjit_record *fr)
{
	const uint8_t *at = (const uint8_t *)(h + 1) + sizeof(*fr);
	struct flowjit_delta_piece p;
	struct ps_sb_page *pg;
	uint32_t off = 0;

	sb->nr_deltas++;
	sb->delta_bytes += fr->chunk_len;
	if (fr->len > FLOWJIT_DELTA_LEN_MAX ||
	    r->body_len < sizeof(*h) + sizeof(*fr) + fr->chunk_len)
		return 0;
	pg = ps_sb_page_of(sb, fr);
	if (!pg)
		return -ENOMEM;
	if (!fr->base) {
		/* over zeros */
		free(pg->bytes);
		pg->bytes = calloc(1, fr->len);
		if (!pg->bytes)
			return -ENOMEM;
		pg->len = fr->len;
	} else if (pg->bytes && pg->len == fr->len && pg->revision == fr->base) {
		ps_sb_note_base(sb, pg);
	} else {
		/* its base is not here: no later image goes against it */
		free(pg->bytes);
		pg->bytes = NULL;
		return 0;
	}
	while (off + sizeof(p) <= fr->chunk_len) {
		memcpy(&p, at + off, sizeof(p));
		off += sizeof(p);
		if (p.off + p.len > fr->len || off + p.len > fr->chunk_len)
			break;
		memcpy(pg->bytes + p.off, at + off, p.len);
		off += p.len;
	}
	pg->revision = fr->revision;
	pg->image = sb->nr_images;
	return 0;
}

/*
 * --delta: if @r (its body in @h) is a user JIT page image of one chunk
 * whose page had an earlier revision in the sideband, make @r a delta
 * against it, as a kernel writing deltas would; the page's first, a
 * delta over zeros (base 0) if its blocks that are not zero are at most
 * half of it. Remember its bytes either way. Returns 0 or -ENOMEM.
 */
static int ps_sb_deltify(struct ps_sb *sb, const struct perf_event_header *h,
			 struct ps_sb_rec *r)
{
	struct perf_event_header nh;
	struct flowjit_record fr;
	struct ps_sb_page *pg;
	uint32_t base = 0;
	const uint8_t *cur;
	uint8_t *data;
	size_t n = 0, len;

	if (r->body_len < sizeof(*h) + sizeof(fr))
		return 0;
	memcpy(&fr, h + 1, sizeof(fr));
	if (fr.kind == FLOWJIT_KIND_USER_JIT && fr.op == FLOWJIT_OP_DELTA)
		return ps_sb_delta_in(sb, h, r, &fr);
	if (fr.kind != FLOWJIT_KIND_USER_JIT || fr.op != FLOWJIT_OP_IMAGE ||
	    fr.chunk_off || fr.chunk_len != fr.len || fr.len > FLOWJIT_DELTA_LEN_MAX ||
	    r->body_len < sizeof(*h) + sizeof(fr) + fr.len)
		return 0;
	cur = (const uint8_t *)(h + 1) + sizeof(fr);
	pg = ps_sb_page_of(sb, &fr);
	if (!pg)
		return -ENOMEM;
	/* header, record, pieces (at most a chunk), padding */
	data = calloc(1, sizeof(*h) + sizeof(fr) + FLOWJIT_CHUNK_MAX + 8);
	if (!data)
		return -ENOMEM;
	if (pg->bytes && pg->len == fr.len && pg->revision < fr.revision) {
		n = ps_sb_pieces(pg->bytes, cur, fr.len, data + sizeof(*h) + sizeof(fr),
				 FLOWJIT_CHUNK_MAX);
		base = pg->revision;
		if (n)
			ps_sb_note_base(sb, pg);
	} else {
		/* no base: over zeros (base 0) if that is at most half of it */
		uint8_t *zeros = calloc(1, fr.len);

		if (!zeros) {
			free(data);
			return -ENOMEM;
		}
		n = ps_sb_pieces(zeros, cur, fr.len, data + sizeof(*h) + sizeof(fr),
				 fr.len / 2 < FLOWJIT_CHUNK_MAX ? fr.len / 2 : FLOWJIT_CHUNK_MAX);
		free(zeros);
	}
	free(pg->bytes);
	pg->bytes = malloc(fr.len);
	if (!pg->bytes) {
		free(data);
		return -ENOMEM;
	}
	memcpy(pg->bytes, cur, fr.len);
	pg->len = fr.len;
	pg->revision = fr.revision;
	pg->image = sb->nr_images;
	if (!n) {
		free(data);
		return 0;
	}
	fr.op = FLOWJIT_OP_DELTA;
	fr.base = base;
	fr.chunk_len = n;
	len = sizeof(*h) + sizeof(fr) + ((n + 7) & ~(size_t)7);
	nh = *h;
	nh.size = len;
	memcpy(data, &nh, sizeof(nh));
	memcpy(data + sizeof(nh), &fr, sizeof(fr));
	free(r->data);
	r->data = data;
	r->body_len = len;
	sb->nr_deltas++;
	sb->delta_bytes += n;
	return 0;
}

/* A PERF_RECORD_LOST of one record in @r's place (its time, CPU, task). */
static int ps_sb_make_lost(struct ps_sb *sb, struct ps_sb_rec *r)
{
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
	} lost = {
		.h = { .type = PERF_RECORD_LOST, .size = sizeof(lost) },
		.lost = 1,
	};

	r->body_len = sizeof(lost);
	r->data = malloc(sizeof(lost));
	if (!r->data)
		return -ENOMEM;
	memcpy(r->data, &lost, sizeof(lost));
	sb->nr_lost_made++;
	return 0;
}

static int ps_sb_cmp_fault(const void *a, const void *b)
{
	const struct ps_sb_fault *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * The attr of @rec's trailer, NULL if unknown. When the attrs' trailers
 * differ, perf sets PERF_SAMPLE_IDENTIFIER (the last u64) and the id
 * tells. The records perf record synthesises itself (the kernel's MMAP,
 * the COMM of the workload before its exec) have an all-zero trailer of
 * the first attr's layout: id 0 is the first attr, as perf reads it
 * (evlist__event2evsel).
 */
static const struct pdata_attr *ps_sb_attr_of(const struct pdata *pd,
					      const struct pdata_rec *rec)
{
	return pdata_rec_attr(pd, rec, 1);
}

int ps_sb_load(struct ps_sb *sb, const char *path, const char *root,
	       bool strip_flowjit, unsigned long lose_image, bool delta)
{
	struct pdata_rec rec;
	struct pdata pd;
	uint32_t i;
	int err;

	memset(sb, 0, sizeof(*sb));
	err = pdata_open(&pd, path, 0);
	if (err) {
		if (err == -EINVAL)
			fprintf(stderr, "ptsynth: %s: not a (complete) perf.data file: %s\n",
				path, pd.error);
		return err;
	}
	for (i = 0; i < pd.nattr; i++)
		if (!(pd.attr[i].flags & PDATA_ATTR_SAMPLE_ID_ALL)) {
			fprintf(stderr, "ptsynth: %s: attr %u without sample_id_all\n",
				path, i);
			err = -EINVAL;
			goto out;
		}
	while (!err && (err = pdata_next(&pd, &rec)) > 0) {
		const struct perf_event_header *h = (const void *)rec.hdr;
		const struct pdata_attr *a;
		struct ps_sb_rec r;

		err = 0;
		if (h->type == PERF_RECORD_FLOWJIT && strip_flowjit) {
			sb->nr_stripped++;
			continue;
		}
		if (!ps_sb_keep_type(h->type)) {
			sb->nr_skipped++;
			continue;
		}
		memset(&r, 0, sizeof(r));
		a = ps_sb_attr_of(&pd, &rec);
		if (!a || ps_sb_parse_trailer(&pd, &rec, a, &r) ||
		    (h->type == PERF_RECORD_FLOWJIT &&
		     r.body_len < sizeof(*h) + sizeof(struct flowjit_record))) {
			sb->nr_bad++;
			continue;
		}
		if (h->type == PERF_RECORD_FLOWJIT) {
			err = ps_sb_note_flowjit(sb, h, &r);
			if (err < 0)
				break;
			if (err && lose_image && sb->nr_images == lose_image) {
				/* written, then lost: the next delta may need it */
				if (delta) {
					err = ps_sb_copy_body(sb, h, &r, NULL);
					if (!err)
						err = ps_sb_deltify(sb, (const void *)r.data, &r);
					free(r.data);
					r.data = NULL;
					if (err)
						break;
				}
				err = ps_sb_make_lost(sb, &r);
				if (!err)
					err = ps_sb_add(sb, &r);
				continue;
			}
			err = 0;
		}
		/* perf record's own records: no time (nor anything) in the trailer */
		if ((a->sample_type & PERF_SAMPLE_TIME) && !r.time)
			sb->nr_synth++;
		err = ps_sb_copy_body(sb, h, &r, root);
		if (!err && delta && h->type == PERF_RECORD_FLOWJIT)
			err = ps_sb_deltify(sb, (const void *)r.data, &r);
		if (!err)
			err = ps_sb_add(sb, &r);
	}
	if (err == -EINVAL)
		fprintf(stderr, "ptsynth: %s: %s\n", path, pd.error);
	if (sb->nr_faults)
		qsort(sb->faults, sb->nr_faults, sizeof(*sb->faults),
		      ps_sb_cmp_fault);
out:
	pdata_close(&pd);
	if (err)
		ps_sb_free(sb);
	return err;
}

void ps_sb_free(struct ps_sb *sb)
{
	size_t i;

	for (i = 0; i < sb->nr; i++)
		free(sb->recs[i].data);
	free(sb->recs);
	for (i = 0; i < sb->nr_pages; i++)
		free(sb->pages[i].bytes);
	free(sb->pages);
	free(sb->faults);
	memset(sb, 0, sizeof(*sb));
}
