// SPDX-License-Identifier: GPL-2.0
/*
 * gtflowjit GT IN.data OUT.data: copy a ptsynth perf.data, adding the
 * PERF_RECORD_FLOWJIT images a flowjit kernel would have written for the
 * anonymous code of its ground truth (ptsynth on this host writes none).
 *
 * Each anonymous executable MMAP2 of IN is followed by the images of the
 * pages of the ground truth's GT_CODE snapshot of that range (the bytes
 * when it became executable), one USER_JIT image per page, at the MMAP2's
 * time, asid = pid; then by one image per later rewrite of such a page:
 * ptsynth logs a snapshot only for new mappings, so a rewrite is found
 * where an executed instruction's bytes (GT_INSN) differ from the page's,
 * and the new revision (the old bytes with the instruction's patched in)
 * is dated at the system call before it (the mprotect() that made the
 * page executable again).  That is what the kernel records at the first
 * exec fault after each mprotect(PROT_EXEC), a little earlier.  Record
 * the ground truth's synth with --timing=tsc: the times of rewrites are
 * the tracer's TSC through the ground truth's time conversion.
 */
#include "libflowjit.h"
#include "pdata.h"
#include "linux/flowjit.h"
#include "../../ptsynth/gt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GT_HEADER_SIZE	72

struct gtcode {
	const struct gt_code *c;
	const uint8_t *data;	/* c->data, or a rewrite's bytes */
	uint64_t time;		/* a rewrite's perf time, 0: MMAP2's */
	int used;
};

#define MAX_CODES	64

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return NULL;
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* The images of the pages of snapshot @g, after record @rec of @pd. */
static int add_images(struct pdata_writer *w, struct pdata *pd,
		      const struct pdata_rec *rec, const struct gtcode *g,
		      uint32_t *revs, uint64_t *rev_page, size_t *nrev)
{
	const struct pdata_attr *attr = pdata_rec_attr(pd, rec, 1);
	const struct gt_code *c = g->c;
	struct pdata_sid sid;
	size_t body, k;
	uint64_t a;

	if (!attr || pdata_sample_id(pd, rec, attr, &sid, &body))
		return -1;
	if (g->time)
		sid.time = g->time;
	for (a = c->addr & ~4095ull; a < c->addr + c->len; a += 4096) {
		uint64_t lo = a > c->addr ? a : c->addr;
		uint64_t hi = a + 4096 < c->addr + c->len ? a + 4096 :
			      c->addr + c->len;
		uint8_t buf[8 + sizeof(struct flowjit_record) + 4096 + 64];
		struct flowjit_record fr;
		uint32_t rev = 1, size;
		size_t n = 8;

		for (k = 0; k < *nrev; ++k)
			if (rev_page[k] == lo)
				break;
		if (k == *nrev) {
			rev_page[(*nrev)++] = lo;
			revs[k] = 0;
		}
		rev = ++revs[k];
		memset(&fr, 0, sizeof(fr));
		fr.version = FLOWJIT_RECORD_VERSION;
		fr.kind = FLOWJIT_KIND_USER_JIT;
		fr.op = FLOWJIT_OP_IMAGE;
		fr.asid = sid.pid;
		fr.pid = sid.pid;
		fr.tid = sid.tid;
		fr.addr = lo;
		fr.len = hi - lo;
		fr.revision = rev;
		fr.csum = flowjit_csum(g->data + (lo - c->addr), hi - lo);
		fr.chunk_len = (uint32_t)(hi - lo);
		memcpy(buf + n, &fr, sizeof(fr));
		n += sizeof(fr);
		memcpy(buf + n, g->data + (lo - c->addr), hi - lo);
		n += hi - lo;
		while (n & 7)
			buf[n++] = 0;
		n += pdata_put_sid(buf + n, attr->sample_type, &sid);
		size = FLOWJIT_PERF_RECORD_TYPE;
		memcpy(buf, &size, 4);
		memset(buf + 4, 0, 2);
		size = (uint32_t)n;
		memcpy(buf + 6, &size, 2);
		if (pdata_write(w, buf, n))
			return -1;
	}
	return 0;
}

/* Find the rewrites of the snapshots @code (*@ncode of them) in the
 * instructions of ground truth @gt (@gsize bytes), and add them.
 */
static void find_rewrites(const uint8_t *gt, size_t gsize,
			  struct gtcode *code, size_t *ncode)
{
	const struct gt_file_header *h = (const void *)gt;
	size_t nsnap = *ncode, off, i, cur[MAX_CODES];
	uint64_t last_syscall = 0;

	for (i = 0; i < nsnap; ++i)
		cur[i] = i;
	for (off = GT_HEADER_SIZE; off + sizeof(struct gt_rec) <= gsize;) {
		const struct gt_rec *r = (const void *)(gt + off);
		const struct gt_insn *in = (const void *)r;

		if (r->size < sizeof(*r) || r->size > gsize - off)
			break;
		off += r->size;
		if (r->type == GT_SYSCALL)
			last_syscall = r->tsc;
		if (r->type != GT_INSN)
			continue;
		for (i = 0; i < nsnap; ++i) {
			struct gtcode *g = &code[cur[i]];
			uint8_t *nb;

			if (in->ip < g->c->addr || in->len > GT_MAX_INSN ||
			    in->ip + in->len > g->c->addr + g->c->len ||
			    !memcmp(g->data + (in->ip - g->c->addr),
				    in->bytes, in->len))
				continue;
			if (*ncode == MAX_CODES || !(nb = malloc(g->c->len)))
				return;
			memcpy(nb, g->data, g->c->len);
			memcpy(nb + (in->ip - g->c->addr), in->bytes, in->len);
			code[*ncode].c = g->c;
			code[*ncode].data = nb;
			code[*ncode].time = pdata_tsc_to_time(last_syscall,
							      h->tc.time_shift,
							      h->tc.time_mult,
							      h->tc.time_zero);
			code[*ncode].used = 0;
			cur[i] = (*ncode)++;
		}
	}
}

int main(int argc, char **argv)
{
	struct gtcode code[MAX_CODES];
	uint64_t rev_page[256];
	uint32_t revs[256];
	size_t ncode = 0, nrev = 0, gsize, off, i;
	struct pdata_wattr wa[PDATA_MAX_ATTRS];
	uint64_t ids[PDATA_MAX_ATTRS][64];
	struct pdata_writer w;
	struct pdata pd;
	struct pdata_rec rec;
	uint8_t *gt;
	FILE *out;
	int status, added = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: gtflowjit GT IN.data OUT.data\n");
		return 1;
	}
	gt = slurp(argv[1], &gsize);
	if (!gt || gsize < GT_HEADER_SIZE) {
		fprintf(stderr, "gtflowjit: %s: cannot read\n", argv[1]);
		return 1;
	}
	for (off = GT_HEADER_SIZE; off + sizeof(struct gt_rec) <= gsize;) {
		const struct gt_rec *r = (const void *)(gt + off);

		if (r->size < sizeof(*r) || r->size > gsize - off)
			break;
		if (r->type == GT_CODE && ncode < MAX_CODES) {
			code[ncode].c = (const void *)r;
			code[ncode].data = code[ncode].c->data;
			code[ncode].time = 0;
			code[ncode++].used = 0;
		}
		off += r->size;
	}
	find_rewrites(gt, gsize, code, &ncode);
	if (pdata_open(&pd, argv[2], 0)) {
		fprintf(stderr, "gtflowjit: %s: %s\n", argv[2], pd.error);
		return 1;
	}
	for (i = 0; i < pd.nattr; ++i) {
		size_t k;

		wa[i].attr = pd.attr[i].raw;
		wa[i].size = pd.attr_size - 16;
		for (k = 0; k < pd.attr[i].nr_ids && k < 64; ++k)
			memcpy(&ids[i][k], pd.attr[i].ids + 8 * k, 8);
		wa[i].ids = ids[i];
		wa[i].nr_ids = k;
	}
	out = fopen(argv[3], "wb");
	if (!out || pdata_write_begin(&w, out, pd.attr_size, wa, pd.nattr))
		return 1;
	while ((status = pdata_next(&pd, &rec)) > 0) {
		const char *name;
		uint64_t start;

		if (pdata_write(&w, rec.hdr, rec.size) ||
		    (rec.aux && pdata_write(&w, rec.aux, rec.aux_size)))
			return 1;
		if (rec.type != PDATA_REC_MMAP2 || rec.body_size < 65)
			continue;
		name = (const char *)rec.body + 64;
		memcpy(&start, rec.body + 8, 8);
		if (name[0] && strncmp(name, "//anon", 6))
			continue;
		/* the snapshot of this mapping and its rewrites */
		for (i = 0; i < ncode; ++i) {
			if (code[i].used || code[i].c->addr != start ||
			    (code[i].time == 0) != (code[i].data ==
						   code[i].c->data))
				continue;
			code[i].used = 1;
			if (add_images(&w, &pd, &rec, &code[i], revs,
				       rev_page, &nrev))
				return 1;
			added += 1;
		}
	}
	if (status < 0 || pdata_write_end(&w) || fclose(out))
		return 1;
	pdata_close(&pd);
	for (i = 0; i < ncode; ++i)
		if (code[i].data != code[i].c->data)
			free((void *)code[i].data);
	free(gt);
	printf("gtflowjit: %d snapshots and rewrites of %zu added as flowjit "
	       "images\n", added, ncode);
	return 0;
}
