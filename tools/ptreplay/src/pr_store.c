// SPDX-License-Identifier: GPL-2.0
/*
 * pr_store: the code store versioned by (address space, range, time).
 */
#include "pr_store.h"
#include "pr_sym.h"

#include <fcntl.h>
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
	if (store->nrgn >= PR_STORE_MAX_REGIONS) {
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
	r->seq = store->nrgn;
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

static int pr_rgn_cmp(const void *a, const void *b)
{
	const struct pr_region *x = a, *y = b;

	if (x->space != y->space)
		return x->space < y->space ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void pr_store_freeze(struct pr_store *store)
{
	if (!store || store->frozen)
		return;
	size_t i;

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
