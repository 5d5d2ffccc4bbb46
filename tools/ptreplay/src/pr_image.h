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

#endif /* PR_IMAGE_H */
