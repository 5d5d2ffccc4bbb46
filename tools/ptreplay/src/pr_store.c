// SPDX-License-Identifier: GPL-2.0
/*
 * pr_store: the code store versioned by (address space, range, time):
 * its own regions and the flowjit images of the library's store.
 */
#include "pr_store.h"
#include "pr_sym.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

__thread uint64_t pr_store_work;

void pr_store_init(struct pr_store *store)
{
	if (store)
		memset(store, 0, sizeof(*store));
}

void pr_store_fini(struct pr_store *store)
{
	size_t i;

	if (!store)
		return;
	for (i = 0; i < store->nrgn; ++i) {
		if (store->rgn[i].owned)
			free((void *)store->rgn[i].bytes);
		free(store->rgn[i].name);
	}
	for (i = 0; i < store->nfiles; ++i) {
		struct pr_store_file *f = &store->files[i];

		if (f->map)
			munmap((void *)f->map, f->size);
		pr_elf_free(f->elf);
		free(f->path);
	}
	for (i = 0; i < store->nfjv; ++i)
		free(store->fjv[i].name);
	free(store->fjv);
	free(store->times);
	flowjit_store_free(store->fj);
	free(store->rgn);
	free(store->max_end);
	free(store->files);
	memset(store, 0, sizeof(*store));
}

struct pr_region *pr_store_add(struct pr_store *store,
			       const struct pr_region *rgn, const char *name)
{
	struct pr_region *r;

	if (!store || !rgn || store->frozen || rgn->end <= rgn->start)
		return NULL;
	if (store->nrgn + store->nfjv >= PR_STORE_MAX_REGIONS) {
		store->dropped += 1;
		return NULL;
	}
	if (store->nrgn == store->cap) {
		size_t cap = store->cap ? 2 * store->cap : 64;

		r = realloc(store->rgn, cap * sizeof(*r));
		if (!r)
			return NULL;
		store->rgn = r;
		store->cap = cap;
	}
	r = &store->rgn[store->nrgn];
	*r = *rgn;
	r->name = NULL;
	if (name) {
		r->name = strdup(name);
		if (!r->name)
			return NULL;
	}
	if (!r->t_end)
		r->t_end = UINT64_MAX;
	r->rev = NULL;
	r->seq = store->seq++;
	store->nrgn += 1;
	return r;
}

/* The mapped file @path, opened once. */
static struct pr_store_file *pr_store_file(struct pr_store *store,
					   const char *path)
{
	struct pr_store_file *f;
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < store->nfiles; ++i)
		if (!strcmp(store->files[i].path, path))
			return store->files[i].failed ? NULL : &store->files[i];

	if (store->nfiles == store->capfiles) {
		size_t cap = store->capfiles ? 2 * store->capfiles : 16;

		f = realloc(store->files, cap * sizeof(*f));
		if (!f)
			return NULL;
		store->files = f;
		store->capfiles = cap;
	}
	f = &store->files[store->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	store->nfiles += 1;

	fd = store->no_files ? -1 : open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !st.st_size) {
		if (fd >= 0)
			close(fd);
		f->failed = 1;
		store->files_missing += 1;
		return NULL;
	}
	f->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		f->failed = 1;
		store->files_missing += 1;
		return NULL;
	}
	f->size = (size_t)st.st_size;
	if (store->symbols)
		f->elf = pr_elf_open(path);
	return f;
}

struct pr_region *pr_store_add_file(struct pr_store *store, uint32_t space,
				    uint64_t start, uint64_t len,
				    uint64_t pgoff, const char *path,
				    uint64_t time, const uint8_t *build_id,
				    size_t build_id_size)
{
	struct pr_store_file *f;
	struct pr_region rgn, *r;

	if (!store || !path || !len || start + len < start)
		return NULL;
	f = pr_store_file(store, path);
	if (!f)
		return NULL;
	if (build_id && build_id_size && !f->elf)
		f->elf = pr_elf_open(path);
	if (build_id && build_id_size && f->elf &&
	    (f->elf->build_id_size < build_id_size ||
	     memcmp(f->elf->build_id, build_id, build_id_size))) {
		/* The file changed since the recording: do not decode it. */
		store->buildid_mismatch += 1;
		return NULL;
	}

	memset(&rgn, 0, sizeof(rgn));
	rgn.space = space;
	rgn.kind = PR_RGN_FILE;
	rgn.start = start;
	rgn.end = start + len;
	rgn.t_start = time;
	rgn.pgoff = pgoff;
	rgn.elf = f->elf;
	if (pgoff < f->size) {
		rgn.bytes = f->map + pgoff;
		rgn.nbytes = f->size - pgoff;
		if (rgn.nbytes > len)
			rgn.nbytes = len;
	}
	r = pr_store_add(store, &rgn, path);
	return r;
}

size_t pr_store_retire(struct pr_store *store, uint32_t space,
		       uint64_t start, uint64_t end, uint64_t time,
		       uint32_t kind, int exact)
{
	size_t i, n = 0;

	if (!store || store->frozen)
		return 0;
	store->work += store->nrgn;
	for (i = 0; i < store->nrgn; ++i) {
		struct pr_region *r = &store->rgn[i];

		if (r->space != space || (kind && r->kind != kind))
			continue;
		if (exact ? r->start != start : (r->end <= start ||
						 r->start >= end))
			continue;
		if (r->t_start > time || r->t_end <= time)
			continue;
		r->t_end = time;
		n += 1;
	}
	return n;
}

/* The name of a flowjit image until a KSYMBOL names it. */
static void pr_fj_name(char *buf, size_t size, const struct flowjit_rev *rev)
{
	switch (rev->kind) {
	case FLOWJIT_KIND_BPF_PROG:
		snprintf(buf, size, "bpf_prog_%" PRIu64, rev->id);
		break;
	case FLOWJIT_KIND_BPF_SUBPROG:
		snprintf(buf, size, "bpf_prog_%" PRIu64 "_sub%u", rev->id,
			 rev->sub);
		break;
	case FLOWJIT_KIND_USER_JIT:
		snprintf(buf, size, "jit:%u:0x%" PRIx64, rev->pid, rev->start);
		break;
	default:
		snprintf(buf, size, "flowjit:%u:0x%" PRIx64, rev->kind,
			 rev->start);
		break;
	}
}

/* Add the view of revision @rev.  Returns it, or NULL if out of memory. */
static struct pr_region *pr_store_add_view(struct pr_store *store,
					   const struct flowjit_rev *rev)
{
	struct pr_region *v;
	char name[64];

	if (store->nfjv == store->capfjv) {
		size_t cap = store->capfjv ? 2 * store->capfjv : 64;

		v = realloc(store->fjv, cap * sizeof(*v));
		if (!v)
			return NULL;
		store->fjv = v;
		store->capfjv = cap;
	}
	pr_fj_name(name, sizeof(name), rev);
	v = &store->fjv[store->nfjv];
	memset(v, 0, sizeof(*v));
	v->name = strdup(name);
	if (!v->name)
		return NULL;
	v->space = rev->asid == FLOWJIT_ASID_KERNEL ? 0 : rev->pid;
	v->kind = PR_RGN_FLOWJIT;
	v->start = rev->start;
	v->end = rev->end;
	v->t_start = rev->time;
	v->t_end = UINT64_MAX;
	v->bytes = rev->bytes;
	v->nbytes = rev->end - rev->start;
	v->rev = rev;
	v->seq = store->seq++;
	store->nfjv += 1;
	return v;
}

/* The view of revision @rev (views are in the order of rev->seq). */
static struct pr_region *pr_store_view(const struct pr_store *store,
				       const struct flowjit_rev *rev)
{
	size_t lo = 0, hi = store->nfjv;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (store->fjv[mid].rev->seq < rev->seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < store->nfjv && store->fjv[lo].rev == rev ?
	       &store->fjv[lo] : NULL;
}

/* Does a flowjit image of @asid have code live at @time somewhere in
 * [start, end)?  (What a retire record of that range would hide.)
 */
static int pr_store_fj_live_in(struct pr_store *store, uint64_t asid,
			       uint64_t start, uint64_t end, uint64_t time)
{
	uint64_t ip = start, hi;

	while (ip < end) {
		store->work += 1;
		if (flowjit_store_lookup(store->fj, asid, ip, time, false, NULL,
					 &hi))
			return 1;
		if (hi <= ip)
			break;
		ip = hi;
	}
	return 0;
}

/* Note @time as one at which answers may change.
 *
 * Returns 0, -1 if out of memory.
 */
static int pr_store_add_time(struct pr_store *store, uint64_t time)
{
	if (store->ntimes == store->captimes) {
		size_t cap = store->captimes ? 2 * store->captimes : 64;
		uint64_t *t = realloc(store->times, cap * sizeof(*t));

		if (!t)
			return -1;
		store->times = t;
		store->captimes = cap;
	}
	store->times[store->ntimes++] = time;
	return 0;
}

int pr_store_add_flowjit(struct pr_store *store, const void *body,
			 size_t size, uint64_t time, int has_time)
{
	const struct flowjit_record *rec;
	const struct flowjit_rev *rev;
	struct flowjit_chunk chunk;
	uint64_t end;
	int err;

	if (!store || !body || store->frozen)
		return 0;
	if (!store->fj) {
		store->fj = flowjit_store_alloc();
		if (!store->fj)
			return -1;
	}
	err = flowjit_chunk_parse(&chunk, body, size, NULL);
	if (!err && !has_time)
		err = -EINVAL;
	if (err) {
		flowjit_store_add_refused(store->fj, err);
		return 0;
	}
	rec = &chunk.rec;
	if (pr_store_add_time(store, time) < 0)
		return -1;
	if (rec->op == FLOWJIT_OP_RETIRE) {
		end = rec->addr + rec->len < rec->addr ? UINT64_MAX :
		      rec->addr + rec->len;
		if (pr_store_fj_live_in(store, rec->asid, rec->addr, end, time))
			store->fj_retired += 1;
		else
			store->fj_retire_unmatched += 1;
	} else if (store->nrgn + store->nfjv >= PR_STORE_MAX_REGIONS) {
		store->dropped += 1;
		return 0;
	}
	if (flowjit_store_add_chunk(store->fj, &chunk, time, &rev) < 0)
		return -1;
	if (rev && !pr_store_add_view(store, rev))
		return -1;
	/* deltas that waited for the base this record was */
	while ((rev = flowjit_store_settled(store->fj)))
		if (!pr_store_add_view(store, rev))
			return -1;
	return 0;
}

int pr_store_flowjit_lost(struct pr_store *store, uint64_t from, uint64_t to)
{
	if (!store || store->frozen)
		return 0;
	if (!store->fj) {
		store->fj = flowjit_store_alloc();
		if (!store->fj)
			return -1;
	}
	return flowjit_store_add_lost(store->fj, from, to) == -ENOMEM ? -1 : 0;
}

void pr_store_name_flowjit(struct pr_store *store, uint64_t addr,
			   uint64_t time, const char *name)
{
	const struct flowjit_rev *rev;
	struct pr_region *v;
	char *n;

	if (!store || !store->fj || store->frozen)
		return;
	rev = flowjit_store_find(store->fj, FLOWJIT_ASID_KERNEL, addr, time);
	v = rev && rev->start == addr ? pr_store_view(store, rev) : NULL;
	n = v ? strdup(name) : NULL;
	if (n) {
		free(v->name);
		v->name = n;
	}
}

void pr_store_flowjit_stats(const struct pr_store *store,
			    struct flowjit_store_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (store && store->fj)
		flowjit_store_stats(store->fj, stats);
}

static int pr_rgn_cmp(const void *a, const void *b)
{
	const struct pr_region *x = a, *y = b;

	if (x->space != y->space)
		return x->space < y->space ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int pr_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort the change times, regions' starts and ends added; on failure
 * (out of memory) every time is its own epoch's start: times = NULL
 * and pr_store_epoch() answers the time itself.
 */
static void pr_store_freeze_times(struct pr_store *store)
{
	size_t i, n = 0;

	for (i = 0; i < store->nrgn; ++i) {
		if (pr_store_add_time(store, store->rgn[i].t_start) < 0 ||
		    pr_store_add_time(store, store->rgn[i].t_end) < 0) {
			free(store->times);
			store->times = NULL;
			store->ntimes = store->captimes = 0;
			return;
		}
	}
	if (!store->ntimes)
		return;
	qsort(store->times, store->ntimes, sizeof(*store->times), pr_u64_cmp);
	for (i = 0; i < store->ntimes; ++i)
		if (!n || store->times[n - 1] != store->times[i])
			store->times[n++] = store->times[i];
	store->ntimes = n;
}

uint64_t pr_store_epoch(const struct pr_store *store, uint64_t time)
{
	size_t lo = 0, hi;

	if (!store || !store->times)
		return time;
	hi = store->ntimes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (store->times[mid] < time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 2 * (uint64_t)lo + (lo < store->ntimes &&
				   store->times[lo] == time);
}

void pr_store_freeze(struct pr_store *store)
{
	if (!store || store->frozen)
		return;
	size_t i;

	pr_store_freeze_times(store);
	if (store->nrgn)
		qsort(store->rgn, store->nrgn, sizeof(*store->rgn),
		      pr_rgn_cmp);
	store->max_end = malloc((store->nrgn ? store->nrgn : 1) *
				sizeof(*store->max_end));
	for (i = 0; store->max_end && i < store->nrgn; ++i) {
		uint64_t end = store->rgn[i].end;

		if (i && store->rgn[i - 1].space == store->rgn[i].space &&
		    store->max_end[i - 1] > end)
			end = store->max_end[i - 1];
		store->max_end[i] = end;
	}
	store->frozen = 1;
}

/* The index range [*first, *last) of @space's regions. */
static void pr_store_space(const struct pr_store *store, uint32_t space,
			   size_t *first, size_t *last)
{
	size_t lo = 0, hi = store->nrgn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (store->rgn[mid].space < space)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	hi = store->nrgn;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (store->rgn[mid].space <= space)
			lo = mid + 1;
		else
			hi = mid;
	}
	*last = lo;
}

/* Is @a a better choice than @b for time @time? */
static int pr_rgn_better(const struct pr_region *a, const struct pr_region *b,
			 uint64_t time)
{
	int alive = a->t_start <= time && time < a->t_end;
	int blive = b->t_start <= time && time < b->t_end;

	if (alive != blive)
		return alive;
	if (alive) {
		if (a->t_start != b->t_start)
			return a->t_start > b->t_start;
		return a->seq > b->seq;
	}
	/* neither live: the one that comes next */
	if (a->t_start != b->t_start)
		return a->t_start < b->t_start;
	return a->seq > b->seq;
}

/* Combine the answer of the flowjit images with @best, the regions' for
 * (@space, @ip, @time), into the one that started last or, if neither
 * has code live at @time, becomes live first; narrow [*lo, *hi) to where
 * both answers stay the same.
 */
static const struct pr_region *pr_store_find_fj(const struct pr_store *store,
						uint32_t space, uint64_t ip,
						uint64_t time,
						const struct pr_region *best,
						uint64_t *lo, uint64_t *hi)
{
	const struct flowjit_rev *rev;
	const struct pr_region *v;
	uint64_t asid = FLOWJIT_ASID_KERNEL, flo, fhi;
	int live = best && best->t_start <= time;

	if (!store->fj)
		return best;
	/* a process without images has no flowjit code */
	if (space && flowjit_store_pid_asid(store->fj, space, time, &asid))
		return best;
	pr_store_work += 1;
	/* a later image only if no region is live */
	rev = flowjit_store_lookup(store->fj, asid, ip, time, !live, &flo,
				   &fhi);
	if (flo > *lo)
		*lo = flo;
	if (fhi < *hi)
		*hi = fhi;
	v = rev ? pr_store_view(store, rev) : NULL;
	if (v && (!best || pr_rgn_better(v, best, time)))
		best = v;
	return best;
}

static const struct pr_region *pr_store_find(const struct pr_store *store,
					     uint32_t space, uint64_t ip,
					     uint64_t time, uint64_t *plo,
					     uint64_t *phi, int names)
{
	const struct pr_region *best = NULL;
	uint64_t lo = 0, hi = UINT64_MAX;
	size_t first, last, above, i;

	if (!store || !store->frozen || !store->max_end)
		return NULL;
	pr_store_space(store, space, &first, &last);

	/* the first region starting above ip bounds the answer */
	{
		size_t l = first, h = last;

		while (l < h) {
			size_t mid = l + (h - l) / 2;

			if (store->rgn[mid].start <= ip)
				l = mid + 1;
			else
				h = mid;
		}
		above = l;
	}
	if (above < last)
		hi = store->rgn[above].start;

	/* regions starting at or below ip, backwards while one may cover it */
	for (i = above; i > first; --i) {
		const struct pr_region *r = &store->rgn[i - 1];

		if (store->max_end[i - 1] <= ip) {
			/* none below covers ip; their ends bound the range */
			if (store->max_end[i - 1] > lo)
				lo = store->max_end[i - 1];
			break;
		}
		pr_store_work += 1;
		if (ip >= r->end) {
			if (r->end > lo)
				lo = r->end;
			continue;
		}
		if (r->start > lo)
			lo = r->start;
		if (r->end < hi)
			hi = r->end;
		if (!names && r->kind == PR_RGN_NAME)
			continue;
		/* retired before @time: gone for good */
		if (r->t_end <= time)
			continue;
		if (!best || pr_rgn_better(r, best, time))
			best = r;
	}
	best = pr_store_find_fj(store, space, ip, time, best, &lo, &hi);
	if (plo)
		*plo = lo;
	if (phi)
		*phi = hi;
	return best;
}

const struct pr_region *pr_store_lookup(const struct pr_store *store,
					uint32_t space, uint64_t ip,
					uint64_t time, uint64_t *lo,
					uint64_t *hi)
{
	return pr_store_find(store, space, ip, time, lo, hi, 0);
}

const struct pr_region *pr_store_name(const struct pr_store *store,
				      uint32_t space, uint64_t ip,
				      uint64_t time)
{
	const struct pr_region *r;

	r = pr_store_find(store, space, ip, time, NULL, NULL, 0);
	if (r && (r->elf || r->name))
		return r;
	return pr_store_find(store, space, ip, time, NULL, NULL, 1);
}

size_t pr_store_read(const struct pr_store *store, uint32_t space,
		     uint64_t ip, uint64_t time, uint8_t *buf, size_t size)
{
	size_t done = 0;

	if (!store || !buf)
		return 0;
	while (done < size) {
		const struct pr_region *r;
		uint64_t lo, hi, at = ip + done, off, n;

		if (at < ip)
			break;
		r = pr_store_lookup(store, space, at, time, &lo, &hi);
		if (!r)
			break;
		off = at - r->start;
		if (off >= r->nbytes)
			break;
		n = r->nbytes - off;
		if (n > hi - at)
			n = hi - at;
		if (n > size - done)
			n = size - done;
		memcpy(buf + done, r->bytes + off, n);
		done += n;
	}
	return done;
}
