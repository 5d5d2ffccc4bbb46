// SPDX-License-Identifier: GPL-2.0
/*
 * sideband.c - read the sideband of a real "perf record --flowjit" run
 *
 * Part 2 of ptsynth: the traced program ran in the flowjit guest under
 * "ptsynth trace" while "perf record --flowjit -e dummy" recorded the same
 * run.  That perf.data's side-band records (MMAP/MMAP2, COMM, FORK, EXIT,
 * KSYMBOL, BPF_EVENT, TEXT_POKE, LOST and PERF_RECORD_FLOWJIT) replace the
 * ones ptsynth would synthesise from the ground truth; their sample_id
 * trailers are parsed with the recording's attrs and rewritten by
 * perfdata.c in ptsynth's layout.  The user JIT images a thread's
 * instruction fetch took (flowjit exec faults) are also returned as
 * faults, which synth.c models as FUP/TIP.PGD ... TIP.PGE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libflowjit.h"
#include "perfdata.h"
#include "sideband.h"

#define PERF_RECORD_FLOWJIT	FLOWJIT_PERF_RECORD_TYPE
#define MAX_ATTRS		64
#define MAX_IDS			4096

struct ps_sb_attr {
	uint64_t sample_type;
	uint64_t *ids;
	size_t nr_ids;
};

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

/* bytes of the sample_id trailer for @st */
static size_t ps_sb_trailer_len(uint64_t st)
{
	size_t n = 0;

	n += (st & PERF_SAMPLE_TID) ? 8 : 0;
	n += (st & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (st & PERF_SAMPLE_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

/* Parse the trailer of @rec (@size bytes) into @r; 0 or -EINVAL. */
static int ps_sb_parse_trailer(const uint8_t *rec, size_t size, uint64_t st,
			       struct ps_sb_rec *r)
{
	size_t tl = ps_sb_trailer_len(st);
	const uint8_t *p;

	if (tl + sizeof(struct perf_event_header) > size)
		return -EINVAL;
	p = rec + size - tl;
	r->body_len = size - tl;
	r->pid = r->tid = -1;
	r->cpu = 0;
	r->time = 0;
	if (st & PERF_SAMPLE_TID) {
		memcpy(&r->pid, p, 4);
		memcpy(&r->tid, p + 4, 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		memcpy(&r->time, p, 8);
		p += 8;
	}
	p += (st & PERF_SAMPLE_ID) ? 8 : 0;
	p += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	if (st & PERF_SAMPLE_CPU)
		memcpy(&r->cpu, p, 4);
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
 * The attr whose sample_id trailer record @rec has, NULL if unknown.
 * When the attrs' trailers differ, perf sets PERF_SAMPLE_IDENTIFIER (the
 * last u64) and the id tells.  The records perf record synthesises
 * itself (the kernel's MMAP, the COMM of the workload before its exec)
 * have an all-zero trailer of the first attr's layout: id 0 is the first
 * attr, as perf reads it (evlist__event2evsel).
 */
static const struct ps_sb_attr *ps_sb_attr_of(const struct ps_sb_attr *a,
					      int nr, bool same,
					      const uint8_t *rec, size_t size)
{
	uint64_t id;
	size_t i;
	int k;

	if (same)
		return &a[0];
	if (size < sizeof(struct perf_event_header) + 8)
		return NULL;
	memcpy(&id, rec + size - 8, 8);
	if (!id)
		return &a[0];
	for (k = 0; k < nr; k++)
		for (i = 0; i < a[k].nr_ids; i++)
			if (a[k].ids[i] == id)
				return &a[k];
	return NULL;
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
	return ps_sb_fault_add(sb, fr->tid, r->time);
}

static int ps_sb_cmp_fault(const void *a, const void *b)
{
	const struct ps_sb_fault *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

int ps_sb_load(struct ps_sb *sb, const char *path, const char *root,
	       bool strip_flowjit)
{
	struct ps_sb_attr attrs[MAX_ATTRS];
	const struct perf_file_header *fh;
	const uint8_t *map, *p, *end;
	struct stat st;
	int fd, nr_attrs, i, err = -EINVAL;
	bool same = true;

	memset(sb, 0, sizeof(*sb));
	memset(attrs, 0, sizeof(attrs));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*fh)) {
		close(fd);
		fprintf(stderr, "ptsynth: %s: not a perf.data file\n", path);
		return -EINVAL;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	fh = (const void *)map;
	if (!ps_perf_header_ok(fh, st.st_size)) {
		fprintf(stderr, "ptsynth: %s: not a (complete) perf.data file\n",
			path);
		goto out;
	}
	nr_attrs = fh->attrs.size / fh->attr_size;
	if (nr_attrs < 1 || nr_attrs > MAX_ATTRS) {
		fprintf(stderr, "ptsynth: %s: %d attrs\n", path, nr_attrs);
		goto out;
	}
	for (i = 0; i < nr_attrs; i++) {
		const uint8_t *a = map + fh->attrs.offset + i * fh->attr_size;
		const struct perf_event_attr *pa = (const void *)a;
		struct perf_file_section ids;

		ids = ps_perf_attr_ids(a, fh->attr_size);
		attrs[i].sample_type = pa->sample_type;
		if (ids.offset > (uint64_t)st.st_size ||
		    ids.size / 8 > MAX_IDS ||
		    ids.size > (uint64_t)st.st_size - ids.offset)
			goto out;
		attrs[i].ids = (uint64_t *)(map + ids.offset);
		attrs[i].nr_ids = ids.size / 8;
		if (!pa->sample_id_all) {
			fprintf(stderr, "ptsynth: %s: attr %d without sample_id_all\n",
				path, i);
			goto out;
		}
		if (attrs[i].sample_type != attrs[0].sample_type)
			same = false;
	}
	p = map + fh->data.offset;
	end = p + fh->data.size;
	err = 0;
	while (p + sizeof(struct perf_event_header) <= end && !err) {
		const struct perf_event_header *h = (const void *)p;
		const struct ps_sb_attr *a;
		struct ps_sb_rec r;

		if (h->size < sizeof(*h) || h->size > end - p) {
			fprintf(stderr, "ptsynth: %s: bad record size at %#lx\n",
				path, (unsigned long)(p - map));
			err = -EINVAL;
			break;
		}
		p += h->size;
		if (h->type == PERF_RECORD_FLOWJIT && strip_flowjit) {
			sb->nr_stripped++;
			continue;
		}
		if (!ps_sb_keep_type(h->type)) {
			sb->nr_skipped++;
			continue;
		}
		memset(&r, 0, sizeof(r));
		a = ps_sb_attr_of(attrs, nr_attrs, same, (const void *)h,
				  h->size);
		if (!a || ps_sb_parse_trailer((const void *)h, h->size,
					      a->sample_type, &r) ||
		    (h->type == PERF_RECORD_FLOWJIT &&
		     r.body_len < sizeof(*h) + sizeof(struct flowjit_record))) {
			sb->nr_bad++;
			continue;
		}
		if (h->type == PERF_RECORD_FLOWJIT) {
			err = ps_sb_note_flowjit(sb, h, &r);
			if (err)
				break;
		}
		/* perf record's own records: no time (nor anything) in the trailer */
		if ((a->sample_type & PERF_SAMPLE_TIME) && !r.time)
			sb->nr_synth++;
		err = ps_sb_copy_body(sb, h, &r, root);
		if (!err)
			err = ps_sb_add(sb, &r);
	}
	qsort(sb->faults, sb->nr_faults, sizeof(*sb->faults), ps_sb_cmp_fault);
out:
	munmap((void *)map, st.st_size);
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
