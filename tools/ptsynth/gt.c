// SPDX-License-Identifier: GPL-2.0
/*
 * gt.c - read and write ptsynth ground-truth files
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt.h"

static const char * const gt_names[GT_MAX] = {
	[GT_INSN]	= "insn",
	[GT_MMAP]	= "mmap",
	[GT_CODE]	= "code",
	[GT_SYSCALL]	= "syscall",
	[GT_SIGNAL]	= "signal",
	[GT_COMM]	= "comm",
	[GT_FORK]	= "fork",
	[GT_EXIT]	= "exit",
};

const char *gt_type_name(unsigned int type)
{
	if (type >= GT_MAX || !gt_names[type])
		return "unknown";
	return gt_names[type];
}

int gt_writer_open(struct gt_writer *w, const char *path,
		   const struct gt_file_header *hdr)
{
	w->f = fopen(path, "w");
	w->nr_recs = 0;
	if (!w->f)
		return -errno;
	if (fwrite(hdr, sizeof(*hdr), 1, w->f) != 1)
		return -EIO;
	return 0;
}

/*
 * Write @rec (whose fixed part is rec->size bytes on entry) followed by
 * @tail_len bytes of @tail, padding the record to 8 bytes.
 */
int gt_write(struct gt_writer *w, struct gt_rec *rec, const void *tail,
	     size_t tail_len)
{
	static const uint8_t zero[8];
	size_t fixed = rec->size;
	size_t total = (fixed + tail_len + 7) & ~(size_t)7;

	rec->size = total;
	if (fwrite(rec, fixed, 1, w->f) != 1)
		return -EIO;
	if (tail_len && fwrite(tail, tail_len, 1, w->f) != 1)
		return -EIO;
	if (total > fixed + tail_len &&
	    fwrite(zero, total - fixed - tail_len, 1, w->f) != 1)
		return -EIO;
	rec->size = fixed;
	w->nr_recs++;
	return 0;
}

int gt_writer_close(struct gt_writer *w)
{
	int err = 0;

	if (w->f && fclose(w->f))
		err = -errno;
	w->f = NULL;
	return err;
}

static int gt_index(struct gt_trace *t)
{
	size_t off = sizeof(t->hdr), cap = 0;

	while (off < t->size) {
		struct gt_rec *r = (struct gt_rec *)(t->buf + off);

		if (off + sizeof(*r) > t->size || r->size < sizeof(*r) ||
		    (r->size & 7) || off + r->size > t->size) {
			fprintf(stderr, "ptsynth: corrupt ground truth at offset %zu\n",
				off);
			return -EINVAL;
		}
		if (t->nr_recs == cap) {
			void *p;

			cap = cap ? cap * 2 : 4096;
			p = realloc(t->recs, cap * sizeof(*t->recs));
			if (!p)
				return -ENOMEM;
			t->recs = p;
		}
		t->recs[t->nr_recs++] = r;
		off += r->size;
	}
	return 0;
}

int gt_load(struct gt_trace *t, const char *path)
{
	FILE *f = fopen(path, "r");
	long size;
	int err;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	t->size = size;
	t->buf = malloc(size + 1);
	if (!t->buf) {
		fclose(f);
		return -ENOMEM;
	}
	if (size && fread(t->buf, size, 1, f) != 1) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	if (t->size < sizeof(t->hdr) ||
	    memcmp(t->buf, GT_MAGIC, 8)) {
		fprintf(stderr, "ptsynth: %s: not a ground-truth file\n", path);
		return -EINVAL;
	}
	memcpy(&t->hdr, t->buf, sizeof(t->hdr));
	if (t->hdr.version != GT_VERSION) {
		fprintf(stderr, "ptsynth: %s: unsupported version %u\n", path,
			t->hdr.version);
		return -EINVAL;
	}
	err = gt_index(t);
	return err;
}

void gt_free(struct gt_trace *t)
{
	free(t->recs);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}
