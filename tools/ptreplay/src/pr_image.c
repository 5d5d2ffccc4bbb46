// SPDX-License-Identifier: GPL-2.0
/*
 * pr_image: the code store.
 */
#define _GNU_SOURCE
#include "pr_image.h"
#include "pr_insn.h"
#include "pr_store.h"

#include <intel-pt.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int pr_image_init(struct pr_image *image, const char *name)
{
	if (!image)
		return -pte_invalid;

	memset(image, 0, sizeof(*image));

	image->iscache = pt_iscache_alloc(name);
	if (!image->iscache)
		return -pte_nomem;

	image->image = pt_image_alloc(name);
	if (!image->image) {
		pt_iscache_free(image->iscache);
		image->iscache = NULL;
		return -pte_nomem;
	}

	return 0;
}

void pr_image_fini(struct pr_image *image)
{
	if (!image)
		return;

	pt_image_free(image->image);
	pt_iscache_free(image->iscache);
	memset(image, 0, sizeof(*image));
}

struct pr_image *pr_image_alloc(const char *name)
{
	struct pr_image *image;

	image = malloc(sizeof(*image));
	if (!image)
		return NULL;

	if (pr_image_init(image, name) < 0) {
		free(image);
		return NULL;
	}

	return image;
}

void pr_image_free(struct pr_image *image)
{
	if (!image)
		return;

	pr_image_fini(image);
	free(image);
}

int pr_image_add_file(struct pr_image *image, const char *path,
		      uint64_t offset, uint64_t size,
		      const struct pt_asid *asid, uint64_t vaddr)
{
	int isid, errcode;

	if (!image || !path || !image->iscache || !image->image)
		return -pte_invalid;

	/* libipt truncates the section at the end of the file. */
	if (!size)
		size = UINT64_MAX;

	isid = pt_iscache_add_file(image->iscache, path, offset, size, vaddr);
	if (isid < 0)
		return isid == -pte_invalid ? -pte_bad_image : isid;

	errcode = pt_image_add_cached(image->image, image->iscache, isid,
				      asid);
	if (errcode < 0)
		return errcode;

	image->nsections += 1;

	return isid;
}

int pr_image_read(struct pr_image *image, uint8_t *buffer, uint16_t size,
		  int isid, uint64_t ip)
{
	if (!image || !buffer || !size)
		return -pte_invalid;

	return pt_iscache_read(image->iscache, buffer, size, isid, ip);
}

int pr_image_set_cache_limit(struct pr_image *image, uint64_t limit)
{
	if (!image)
		return -pte_invalid;

	return pt_iscache_set_limit(image->iscache, limit);
}

struct pt_image *pr_image_pt(struct pr_image *image)
{
	if (!image)
		return NULL;

	return image->image;
}

/* The mapped file holding @bytes, or NULL. */
static const struct pr_store_file *pr_rimage_file(const struct pr_store *st,
						  const uint8_t *bytes)
{
	size_t i;

	for (i = 0; i < st->nfiles; ++i) {
		const struct pr_store_file *f = &st->files[i];

		if (f->map && bytes >= f->map && bytes < f->map + f->size)
			return f;
	}
	return NULL;
}

/* Does @rgn's code live in memory (to be copied to the memfd)? */
static int pr_rimage_in_memory(const struct pr_region *rgn)
{
	return rgn->bytes && rgn->nbytes && rgn->kind != PR_RGN_FILE;
}

/* Append @rgn's bytes to the memfd; @src tells where they went.
 *
 * Returns zero on success, -1 if the write failed.
 */
static int pr_rimage_copy(struct pr_rimage *ri, const struct pr_region *rgn,
			  struct pr_rimage_src *src)
{
	uint64_t done = 0;

	while (done < rgn->nbytes) {
		ssize_t n = pwrite(ri->memfd, rgn->bytes + done,
				   rgn->nbytes - done,
				   (off_t)(ri->memsize + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (uint64_t)n;
	}
	src->path = ri->mempath;
	src->off = ri->memsize;
	ri->memsize += rgn->nbytes;
	return 0;
}

/* Where the regions' bytes are: files for file regions, the memfd for
 * the others (made here if any).
 */
static void pr_rimage_sources(struct pr_rimage *ri)
{
	const struct pr_store *st = ri->store;
	size_t i, nmem = 0;

	for (i = 0; i < st->nrgn; ++i) {
		const struct pr_region *rgn = &st->rgn[i];
		const struct pr_store_file *f;

		if (pr_rimage_in_memory(rgn)) {
			nmem += 1;
			continue;
		}
		if (!rgn->bytes || !(f = pr_rimage_file(st, rgn->bytes)))
			continue;
		ri->rgn[i].path = f->path;
		ri->rgn[i].off = (uint64_t)(rgn->bytes - f->map);
	}
	for (i = 0; i < st->nfjv; ++i)
		nmem += pr_rimage_in_memory(&st->fjv[i]);
	if (!nmem)
		return;
	ri->memfd = memfd_create("ptreplay-code", MFD_CLOEXEC);
	if (ri->memfd < 0)
		return;
	snprintf(ri->mempath, sizeof(ri->mempath), "/proc/self/fd/%d",
		 ri->memfd);
	for (i = 0; i < st->nrgn; ++i)
		if (pr_rimage_in_memory(&st->rgn[i]) &&
		    pr_rimage_copy(ri, &st->rgn[i], &ri->rgn[i]) < 0)
			return;
	for (i = 0; i < st->nfjv; ++i)
		if (pr_rimage_in_memory(&st->fjv[i]) &&
		    pr_rimage_copy(ri, &st->fjv[i], &ri->fjv[i]) < 0)
			return;
}

int pr_rimage_init(struct pr_rimage *ri, const struct pr_store *store)
{
	if (!ri || !store)
		return -pte_invalid;
	memset(ri, 0, sizeof(*ri));
	ri->memfd = -1;
	ri->store = store;
	ri->rgn = calloc(store->nrgn + 1, sizeof(*ri->rgn));
	ri->fjv = calloc(store->nfjv + 1, sizeof(*ri->fjv));
	if (!ri->rgn || !ri->fjv) {
		pr_rimage_fini(ri);
		return -pte_nomem;
	}
	pr_rimage_sources(ri);
	return 0;
}

void pr_rimage_fini(struct pr_rimage *ri)
{
	if (!ri)
		return;
	free(ri->rgn);
	free(ri->fjv);
	if (ri->memfd >= 0)
		close(ri->memfd);
	memset(ri, 0, sizeof(*ri));
	ri->memfd = -1;
}

void pr_rimage_dec_init(struct pr_rimage_dec *rd, const struct pr_rimage *ri)
{
	if (!rd)
		return;
	memset(rd, 0, sizeof(*rd));
	rd->ri = ri;
}

static void pr_rimage_img_free(struct pr_rimage_img *img)
{
	pt_image_free(img->image);
	free(img->rng);
	memset(img, 0, sizeof(*img));
}

void pr_rimage_dec_fini(struct pr_rimage_dec *rd)
{
	size_t i;

	if (!rd)
		return;
	for (i = 0; i < PR_RIMAGE_IMAGES; ++i)
		pr_rimage_img_free(&rd->img[i]);
	pt_iscache_free(rd->iscache);
	free(rd->rev);
	free(rd->len);
	memset(rd, 0, sizeof(*rd));
}

struct pr_rimage_len {
	uint64_t ip;
	int32_t isid;		/* 0: a free slot */
	uint8_t mode, size;
};

/* Slots of the length table: the first size, the most (16 bytes each). */
#define PR_RIMAGE_LEN_MIN	4096
#define PR_RIMAGE_LEN_MAX	(1U << 18)

static size_t pr_rimage_len_slot(size_t cap, int isid, int mode, uint64_t ip)
{
	uint64_t h = ip ^ ((uint64_t)isid << 40) ^ ((uint64_t)mode << 62);

	return (size_t)((h * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static struct pr_rimage_len *pr_rimage_len_find(struct pr_rimage_dec *rd,
						int isid, int mode,
						uint64_t ip)
{
	size_t i = pr_rimage_len_slot(rd->caplen, isid, mode, ip);
	struct pr_rimage_len *e;

	for (;; i = (i + 1) & (rd->caplen - 1)) {
		e = &rd->len[i];
		if (!e->isid || (e->ip == ip && e->isid == isid &&
				 e->mode == mode))
			return e;
	}
}

/* Room for one more length: a table twice the size, or (at the most) an
 * empty one.  Returns zero, -1 if out of memory.
 */
static int pr_rimage_len_room(struct pr_rimage_dec *rd)
{
	struct pr_rimage_len *old = rd->len;
	size_t cap = rd->caplen, i;

	if (2 * (rd->nlen + 1) <= cap)
		return 0;
	if (cap >= PR_RIMAGE_LEN_MAX) {
		memset(rd->len, 0, cap * sizeof(*rd->len));
		rd->nlen = 0;
		return 0;
	}
	cap = cap ? 2 * cap : PR_RIMAGE_LEN_MIN;
	rd->len = calloc(cap, sizeof(*rd->len));
	if (!rd->len) {
		rd->len = old;
		return -1;
	}
	rd->caplen = cap;
	for (i = 0; old && i < cap / 2; ++i)
		if (old[i].isid)
			*pr_rimage_len_find(rd, old[i].isid, old[i].mode,
					    old[i].ip) = old[i];
	free(old);
	return 0;
}

uint64_t pr_rimage_dec_next_ip(struct pr_rimage_dec *rd, int isid,
			       enum pt_exec_mode mode, uint64_t ip)
{
	struct pr_insn_info info;
	struct pr_rimage_len *e;
	uint8_t raw[15];
	int n;

	if (isid <= 0 || !rd->iscache)
		return 0;
	if (rd->caplen) {
		e = pr_rimage_len_find(rd, isid, mode, ip);
		if (e->isid)
			return ip + e->size;
	}
	n = pt_iscache_read(rd->iscache, raw, sizeof(raw), isid, ip);
	if (n <= 0 || pr_insn_decode(&info, mode, raw, (size_t)n) < 0)
		return 0;
	if (pr_rimage_len_room(rd) == 0) {
		e = pr_rimage_len_find(rd, isid, mode, ip);
		e->ip = ip;
		e->isid = isid;
		e->mode = (uint8_t)mode;
		e->size = info.size;
		rd->nlen += 1;
	}
	return ip + info.size;
}

struct pt_image *pr_rimage_dec_select(struct pr_rimage_dec *rd,
				      uint32_t space, uint64_t epoch)
{
	struct pr_rimage_img *img, *lru;
	size_t i;

	if (!rd || !rd->ri)
		return NULL;
	img = rd->cur;
	if (img && img->space == space && img->epoch == epoch) {
		img->used = ++rd->stamp;
		return img->image;
	}
	lru = &rd->img[0];
	for (i = 0; i < PR_RIMAGE_IMAGES; ++i) {
		img = &rd->img[i];
		if (img->used && img->space == space && img->epoch == epoch) {
			img->used = ++rd->stamp;
			rd->cur = img;
			return img->image;
		}
		if (img->used < lru->used)
			lru = img;
	}
	pr_rimage_img_free(lru);
	rd->cur = NULL;
	lru->image = pt_image_alloc(NULL);
	if (!lru->image)
		return NULL;
	lru->space = space;
	lru->epoch = epoch;
	lru->used = ++rd->stamp;
	rd->cur = lru;
	rd->nimages += 1;
	return lru->image;
}

/* Where @rgn's bytes are in a file, or NULL. */
static const struct pr_rimage_src *pr_rimage_src(const struct pr_rimage *ri,
						 const struct pr_region *rgn)
{
	const struct pr_store *st = ri->store;

	if (st->nrgn && rgn >= st->rgn && rgn < st->rgn + st->nrgn)
		return &ri->rgn[(size_t)(rgn - st->rgn)];
	if (st->nfjv && rgn >= st->fjv && rgn < st->fjv + st->nfjv)
		return &ri->fjv[(size_t)(rgn - st->fjv)];
	return NULL;
}

/* Index of the first range of @img ending above @addr. */
static size_t pr_rimage_img_find(const struct pr_rimage_img *img,
				 uint64_t addr)
{
	size_t lo = 0, hi = img->nrng;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->rng[mid][1] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Note that @isid holds @rev.  Returns zero, -pte_nomem. */
static int pr_rimage_dec_note(struct pr_rimage_dec *rd, int isid,
			      const struct flowjit_rev *rev)
{
	if ((size_t)isid >= rd->caprev) {
		size_t cap = rd->caprev ? rd->caprev : 64;
		const struct flowjit_rev **r;

		while (cap <= (size_t)isid)
			cap *= 2;
		r = realloc(rd->rev, cap * sizeof(*r));
		if (!r)
			return -pte_nomem;
		memset(r + rd->caprev, 0, (cap - rd->caprev) * sizeof(*r));
		rd->rev = r;
		rd->caprev = cap;
	}
	rd->rev[isid] = rev;
	return 0;
}

int pr_rimage_dec_add(struct pr_rimage_dec *rd, const struct pr_region *rgn,
		      uint64_t lo, uint64_t hi)
{
	const struct pr_rimage_src *src;
	struct pr_rimage_img *img;
	uint64_t bend;
	size_t at;
	int isid, err;

	if (!rd || !rgn || !rd->cur)
		return -pte_invalid;
	img = rd->cur;
	src = pr_rimage_src(rd->ri, rgn);
	if (!src || !src->path)
		return -pte_nomap;
	bend = rgn->start + rgn->nbytes;
	if (lo < rgn->start)
		lo = rgn->start;
	if (hi > bend)
		hi = bend;
	/* only the part up to the next range it has (lo is not in one) */
	at = pr_rimage_img_find(img, lo);
	if (at < img->nrng && img->rng[at][0] <= lo)
		return -pte_internal;
	if (at < img->nrng && img->rng[at][0] < hi)
		hi = img->rng[at][0];
	if (lo >= hi)
		return -pte_nomap;
	if (img->nrng == img->caprng) {
		size_t cap = img->caprng ? 2 * img->caprng : 16;
		uint64_t (*r)[2] = realloc(img->rng, cap * sizeof(*r));

		if (!r)
			return -pte_nomem;
		img->rng = r;
		img->caprng = cap;
	}
	if (!rd->iscache) {
		rd->iscache = pt_iscache_alloc(NULL);
		if (!rd->iscache)
			return -pte_nomem;
		(void)pt_iscache_set_limit(rd->iscache, PR_RIMAGE_CACHE_LIMIT);
	}
	isid = pt_iscache_add_file(rd->iscache, src->path,
				   src->off + (lo - rgn->start), hi - lo, lo);
	if (isid < 0)
		return isid;
	err = pr_rimage_dec_note(rd, isid, rgn->kind == PR_RGN_FLOWJIT ?
				 rgn->rev : NULL);
	if (err < 0)
		return err;
	err = pt_image_add_cached(img->image, rd->iscache, isid, NULL);
	if (err < 0)
		return err;
	memmove(img->rng + at + 1, img->rng + at,
		(img->nrng - at) * sizeof(*img->rng));
	img->rng[at][0] = lo;
	img->rng[at][1] = hi;
	img->nrng += 1;
	rd->nsections += 1;
	return 0;
}
