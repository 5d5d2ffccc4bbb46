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
	if (fr->kind != FLOWJIT_KIND_USER_JIT || fr->op != FLOWJIT_OP_IMAGE ||
	    (fr->flags & FLOWJIT_F_EXISTING) || fr->chunk_off)
		return 0;
	sb->nr_images++;
	return ps_sb_fault_add(sb, fr->tid, r->time) ?: 1;
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
	       bool strip_flowjit, unsigned long lose_image)
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
	free(sb->faults);
	memset(sb, 0, sizeof(*sb));
}
