/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_image: the code store.
 *
 * The code store holds the code bytes the trace decoder reads: file sections
 * mapped at a virtual address in an address space.  It wraps libipt's image
 * section cache (which owns the sections and hands out section identifiers,
 * isids) and a libipt image (which maps sections for the decoder).
 *
 * Today it is filled from --raw images only.  The full ptreplay will also
 * version sections by time (runtime code images and text pokes replace
 * earlier bytes at the same address); that belongs here, behind this API,
 * so decoders keep asking pr_image for bytes by (isid, ip).
 */
#ifndef PR_IMAGE_H
#define PR_IMAGE_H

#include <stddef.h>
#include <intel-pt.h>
#include <stdint.h>

struct pt_asid;
struct pt_image;
struct pt_image_section_cache;

/* A code store. */
struct pr_image {
	/* The section cache owning all sections. */
	struct pt_image_section_cache *iscache;

	/* The memory image the decoders use. */
	struct pt_image *image;

	/* The number of sections added. */
	uint32_t nsections;
};

/* Initialize @image with an optional @name.
 *
 * Returns zero on success.
 * Returns -pte_invalid if @image is NULL.
 * Returns -pte_nomem if the libipt objects cannot be allocated.
 */
extern int pr_image_init(struct pr_image *image, const char *name);

/* Release @image's resources; @image may be NULL. */
extern void pr_image_fini(struct pr_image *image);

/* Allocate and initialize an image; NULL if out of memory. */
extern struct pr_image *pr_image_alloc(const char *name);

/* Finalize and free an image allocated by pr_image_alloc(); may be NULL. */
extern void pr_image_free(struct pr_image *image);

/* Map @size bytes at @offset in @path at @vaddr in address space @asid.
 *
 * A @size of zero maps the file up to its end.  A NULL @asid maps the
 * section into every address space.  Later sections override earlier ones
 * where they overlap.
 *
 * Returns the new section's identifier (isid, positive) on success.
 * Returns -pte_invalid if @image or @path is NULL.
 * Returns -pte_bad_image if the file cannot be read or @offset is beyond
 * its end.
 */
extern int pr_image_add_file(struct pr_image *image, const char *path,
			     uint64_t offset, uint64_t size,
			     const struct pt_asid *asid, uint64_t vaddr);

/* Read up to @size bytes at @ip from section @isid into @buffer.
 *
 * Returns the number of bytes read (truncated at the section end).
 * Returns -pte_invalid if @image or @buffer is NULL or @size is zero.
 * Returns -pte_nomap if @ip is not in section @isid.
 * Returns -pte_bad_image if there is no section @isid.
 */
extern int pr_image_read(struct pr_image *image, uint8_t *buffer,
			 uint16_t size, int isid, uint64_t ip);

/* Set the section cache limit in bytes (zero disables caching).
 *
 * Returns zero on success, -pte_invalid if @image is NULL.
 */
extern int pr_image_set_cache_limit(struct pr_image *image, uint64_t limit);

/* The libipt image for pt_insn_set_image()/pt_blk_set_image(); NULL if
 * @image is NULL.
 */
extern struct pt_image *pr_image_pt(struct pr_image *image);

/*
 * pr_rimage: `decode`'s code as libipt image sections.
 *
 * libipt caches decoded blocks per image section (its block cache) and
 * reads sections without a call per instruction; a read callback gets
 * neither (intel/libipt issue 37).  pr_store's answers depend on time,
 * sections do not: so each decoder gets one libipt image per (address
 * space, store epoch) (pr_store_epoch(): within an epoch every lookup
 * answers the same), filled lazily: the read callback, called where the
 * image has no section yet, asks the store and adds the answer's address
 * range as a section of the image of the epoch in effect.  Sections are
 * ranges of the mapped files, or, for code the store holds in memory
 * (flowjit images, text pokes, the vdso), of a memfd the bytes are
 * copied to once, before decoding (libipt opens both by path, and
 * refuses a file whose size or time changed since it made the section).
 *
 * struct pr_rimage is a session's: where each region's bytes are in a
 * file; read-only while decoders run.  struct pr_rimage_dec is one
 * decoder's (a queue's): its section cache, its images (the last
 * PR_RIMAGE_IMAGES used) and which flowjit revision each of its sections
 * holds.
 */

struct pr_store;
struct pr_region;
struct flowjit_rev;

/* Images a decoder keeps; older ones are freed. */
#define PR_RIMAGE_IMAGES	8

/* Bytes of mapped sections (and their block caches) libipt keeps. */
#define PR_RIMAGE_CACHE_LIMIT	(256ULL << 20)

/* Where a region's bytes are in a file (path NULL: nowhere). */
struct pr_rimage_src {
	const char *path;
	uint64_t off;
};

struct pr_rimage {
	const struct pr_store *store;
	/* Of store->rgn[i] and store->fjv[i]. */
	struct pr_rimage_src *rgn, *fjv;
	/* The memfd holding in-memory code, "/proc/self/fd/N"; -1: none. */
	int memfd;
	char mempath[32];
	uint64_t memsize;
};

/* An image of one (space, epoch) and the ranges it has sections for. */
struct pr_rimage_img {
	struct pt_image *image;
	uint32_t space;
	uint64_t epoch;
	uint64_t used;		/* LRU stamp; 0: free slot */
	uint64_t (*rng)[2];	/* [lo, hi), sorted, disjoint */
	size_t nrng, caprng;
};

struct pr_rimage_dec {
	const struct pr_rimage *ri;
	/* The decoder's own section cache: sections shared by decoders
	 * running in parallel would be mapped and unmapped under libipt's
	 * locks at every switch between them.
	 */
	struct pt_image_section_cache *iscache;
	struct pr_rimage_img img[PR_RIMAGE_IMAGES];
	struct pr_rimage_img *cur;
	uint64_t stamp;
	/* The flowjit revision of each isid (NULL: not flowjit). */
	const struct flowjit_rev **rev;
	size_t caprev;
	/* Sections added, images made. */
	uint64_t nsections, nimages;
	/* Instruction lengths by (isid, mode, ip), for walking the blocks
	 * of the block decoder: a section's bytes never change.
	 */
	struct pr_rimage_len *len;
	size_t caplen, nlen;
};

/* Initialize @ri for the frozen store @store: in-memory code is copied
 * to a memfd (if none can be made it is read through the callback).
 *
 * Returns zero on success, -pte_invalid if @ri or @store is NULL,
 * -pte_nomem if out of memory.
 */
extern int pr_rimage_init(struct pr_rimage *ri, const struct pr_store *store);

/* Release @ri's resources; @ri may be NULL. */
extern void pr_rimage_fini(struct pr_rimage *ri);

/* Initialize decoder state @rd of session @ri (no image selected). */
extern void pr_rimage_dec_init(struct pr_rimage_dec *rd,
			       const struct pr_rimage *ri);

/* Free @rd's images; @rd may be NULL. */
extern void pr_rimage_dec_fini(struct pr_rimage_dec *rd);

/* Select the image for (@space, @epoch), made (empty) if new.
 *
 * Returns it, or NULL if out of memory (the decoder then reads through
 * its callback only).
 */
extern struct pt_image *pr_rimage_dec_select(struct pr_rimage_dec *rd,
					     uint32_t space, uint64_t epoch);

/* Add [lo, hi) of region @rgn (which has bytes there) to the selected
 * image, but for the parts it has sections for.
 *
 * Returns zero on success, a negative pte error code if no section could
 * be made (the caller goes on reading through its callback).
 */
extern int pr_rimage_dec_add(struct pr_rimage_dec *rd,
			     const struct pr_region *rgn, uint64_t lo,
			     uint64_t hi);

/* The IP after the instruction at @ip of section @isid (of @rd's cache)
 * in @mode, from a table of the lengths found before (bounded: it starts
 * over when full).
 *
 * Returns it, or 0 if the instruction is not all in the section or is
 * not decoded (the caller reads the code another way).
 */
extern uint64_t pr_rimage_dec_next_ip(struct pr_rimage_dec *rd, int isid,
				      enum pt_exec_mode mode, uint64_t ip);

/* The flowjit revision section @isid holds, or NULL. */
static inline const struct flowjit_rev *
pr_rimage_dec_rev(const struct pr_rimage_dec *rd, int isid)
{
	return isid > 0 && (size_t)isid < rd->caprev ? rd->rev[isid] : NULL;
}

#endif /* PR_IMAGE_H */
