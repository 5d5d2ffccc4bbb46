// SPDX-License-Identifier: GPL-2.0
/*
 * pr_image: the code store.
 */
#include "pr_image.h"

#include <intel-pt.h>

#include <stdlib.h>
#include <string.h>

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
