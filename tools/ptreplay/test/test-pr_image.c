// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_image: the code store.
 */
#include "pr_image.h"
#include "pr_test.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct prt_result init_null(void)
{
	prt_int_eq(pr_image_init(NULL, NULL), -pte_invalid);
	pr_image_fini(NULL);
	pr_image_free(NULL);
	prt_null(pr_image_pt(NULL));

	return prt_passed();
}

static struct prt_result alloc_free(void)
{
	struct pr_image *image;

	image = pr_image_alloc("name");
	prt_ptr(image);
	prt_ptr(pr_image_pt(image));
	prt_str_eq(pt_image_name(pr_image_pt(image)), "name");
	prt_uint_eq(image->nsections, 0);
	pr_image_free(image);

	return prt_passed();
}

/* A fixture: an image and a 16-byte file with the bytes 0x10..0x1f. */
struct image_fixture {
	struct pr_image image;
	char path[64];

	struct prt_result (*init)(struct image_fixture *);
	struct prt_result (*fini)(struct image_fixture *);
};

static struct prt_result ifx_init(struct image_fixture *fx)
{
	uint8_t bytes[16];
	int idx;

	for (idx = 0; idx < 16; ++idx)
		bytes[idx] = (uint8_t) (0x10 + idx);

	prt_int_eq(prt_tmpfile(fx->path, bytes, sizeof(bytes)), 0);
	prt_int_eq(pr_image_init(&fx->image, NULL), 0);

	return prt_passed();
}

static struct prt_result ifx_fini(struct image_fixture *fx)
{
	pr_image_fini(&fx->image);
	unlink(fx->path);

	return prt_passed();
}

static struct prt_result add_null(struct image_fixture *fx)
{
	uint8_t buf[4];

	prt_int_eq(pr_image_add_file(NULL, fx->path, 0, 0, NULL, 0),
		   -pte_invalid);
	prt_int_eq(pr_image_add_file(&fx->image, NULL, 0, 0, NULL, 0),
		   -pte_invalid);
	prt_int_eq(pr_image_read(NULL, buf, 4, 1, 0), -pte_invalid);
	prt_int_eq(pr_image_read(&fx->image, NULL, 4, 1, 0), -pte_invalid);
	prt_int_eq(pr_image_read(&fx->image, buf, 0, 1, 0), -pte_invalid);
	prt_int_eq(pr_image_set_cache_limit(NULL, 0), -pte_invalid);

	return prt_passed();
}

static struct prt_result add_maps_at_base(struct image_fixture *fx)
{
	uint8_t buf[4];
	int isid;

	isid = pr_image_add_file(&fx->image, fx->path, 0, 0, NULL, 0x1000);
	prt_check(isid > 0);
	prt_uint_eq(fx->image.nsections, 1);

	prt_int_eq(pr_image_read(&fx->image, buf, 4, isid, 0x1000), 4);
	prt_uint_eq(buf[0], 0x10);
	prt_uint_eq(buf[3], 0x13);

	/* Reads are cut at the end of the section. */
	prt_int_eq(pr_image_read(&fx->image, buf, 4, isid, 0x100e), 2);
	prt_uint_eq(buf[1], 0x1f);

	return prt_passed();
}

static struct prt_result add_at_offset(struct image_fixture *fx)
{
	uint8_t buf[2];
	int isid;

	isid = pr_image_add_file(&fx->image, fx->path, 2, 0, NULL, 0x1002);
	prt_check(isid > 0);
	prt_int_eq(pr_image_read(&fx->image, buf, 2, isid, 0x1002), 2);
	prt_uint_eq(buf[0], 0x12);
	prt_int_eq(pr_image_read(&fx->image, buf, 2, isid, 0x1001),
		   -pte_nomap);

	return prt_passed();
}

static struct prt_result add_with_size(struct image_fixture *fx)
{
	uint8_t buf[8];
	int isid;

	isid = pr_image_add_file(&fx->image, fx->path, 4, 4, NULL, 0x2000);
	prt_check(isid > 0);
	prt_int_eq(pr_image_read(&fx->image, buf, 8, isid, 0x2000), 4);
	prt_uint_eq(buf[0], 0x14);
	prt_int_eq(pr_image_read(&fx->image, buf, 1, isid, 0x2004),
		   -pte_nomap);

	return prt_passed();
}

static struct prt_result read_bad_isid(struct image_fixture *fx)
{
	uint8_t buf[2];

	prt_int_eq(pr_image_read(&fx->image, buf, 2, 42, 0x1000),
		   -pte_bad_image);

	return prt_passed();
}

static struct prt_result add_missing_file(struct image_fixture *fx)
{
	unlink(fx->path);
	prt_check(pr_image_add_file(&fx->image, fx->path, 0, 0, NULL,
				    0x1000) < 0);
	prt_uint_eq(fx->image.nsections, 0);

	return prt_passed();
}

static struct prt_result add_offset_beyond_end(struct image_fixture *fx)
{
	prt_check(pr_image_add_file(&fx->image, fx->path, 16, 0, NULL,
				    0x1000) < 0);

	return prt_passed();
}

static struct prt_result cache_limit(struct image_fixture *fx)
{
	prt_int_eq(pr_image_set_cache_limit(&fx->image, 0), 0);
	prt_int_eq(pr_image_set_cache_limit(&fx->image, 1 << 20), 0);

	return prt_passed();
}

/* @n bytes of @bytes in a new file @path (libipt maps it when read)
 * at @vaddr in @rd's cache.
 */
static int len_section(struct pr_rimage_dec *rd, char *path,
		       const uint8_t *bytes, size_t n, uint64_t vaddr)
{
	if (prt_tmpfile(path, bytes, n))
		return -1;
	return pt_iscache_add_file(rd->iscache, path, 0, n, vaddr);
}

/* Lengths are kept per section: two revisions at one address differ. */
static struct prt_result next_ip_per_section(void)
{
	static const uint8_t nops[] = { 0x90, 0x90, 0xc3 };
	static const uint8_t mov[] = { 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3 };
	static const uint8_t cut[] = { 0xb8, 0x01 };
	char path[3][64];
	struct pr_rimage_dec rd;
	int a, b, c, i;

	pr_rimage_dec_init(&rd, NULL);
	rd.iscache = pt_iscache_alloc(NULL);
	prt_ptr(rd.iscache);
	a = len_section(&rd, path[0], nops, sizeof(nops), 0x1000);
	b = len_section(&rd, path[1], mov, sizeof(mov), 0x1000);
	c = len_section(&rd, path[2], cut, sizeof(cut), 0x2000);
	prt_check(a > 0 && b > 0 && c > 0 && a != b);
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, a, ptem_64bit, 0x1000),
		    0x1001);
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, b, ptem_64bit, 0x1000),
		    0x1005);
	/* again, from the table */
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, a, ptem_64bit, 0x1000),
		    0x1001);
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, b, ptem_64bit, 0x1000),
		    0x1005);
	prt_uint_eq(rd.nlen, 2);
	/* the operand size of mode 16 */
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, b, ptem_16bit, 0x1000),
		    0x1003);
	/* not all in its section, not a section, no section there */
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, c, ptem_64bit, 0x2000), 0);
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, 0, ptem_64bit, 0x1000), 0);
	prt_uint_eq(pr_rimage_dec_next_ip(&rd, a, ptem_64bit, 0x3000), 0);
	pr_rimage_dec_fini(&rd);
	for (i = 0; i < 3; ++i)
		unlink(path[i]);

	return prt_passed();
}

/* The table is bounded: it starts over when full, and stays right. */
static struct prt_result next_ip_table_bounded(void)
{
	size_t n = 3 << 17, i, most = 0;
	struct pr_rimage_dec rd;
	uint8_t *nops;
	char path[64];
	int isid;

	nops = malloc(n);
	prt_ptr(nops);
	memset(nops, 0x90, n);
	pr_rimage_dec_init(&rd, NULL);
	rd.iscache = pt_iscache_alloc(NULL);
	prt_ptr(rd.iscache);
	isid = len_section(&rd, path, nops, n, 0x100000);
	free(nops);
	prt_check(isid > 0);
	for (i = 0; i < n; ++i) {
		prt_uint_eq(pr_rimage_dec_next_ip(&rd, isid, ptem_64bit,
						  0x100000 + i),
			    0x100000 + i + 1);
		if (rd.caplen > most)
			most = rd.caplen;
		prt_check(2 * rd.nlen <= rd.caplen);
	}
	prt_uint_eq(most, 1U << 18);
	prt_check(rd.nlen < n);
	pr_rimage_dec_fini(&rd);
	unlink(path);

	return prt_passed();
}

int main(void)
{
	struct image_fixture ifx = { .init = ifx_init, .fini = ifx_fini };
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_image: init, fini, free and pt accept NULL",
		init_null);
	prt_run(suite, "pr_image: alloc gives a named, empty image",
		alloc_free);
	prt_run_fx(suite, "pr_image: add and read reject NULL arguments",
		   add_null, ifx);
	prt_run_fx(suite, "pr_image: a file is mapped at its base address",
		   add_maps_at_base, ifx);
	prt_run_fx(suite, "pr_image: a file offset maps the rest of the file",
		   add_at_offset, ifx);
	prt_run_fx(suite, "pr_image: a size limits the mapped range",
		   add_with_size, ifx);
	prt_run_fx(suite, "pr_image: reading an unknown section fails",
		   read_bad_isid, ifx);
	prt_run_fx(suite, "pr_image: mapping a missing file fails cleanly",
		   add_missing_file, ifx);
	prt_run_fx(suite, "pr_image: mapping past the end of a file fails",
		   add_offset_beyond_end, ifx);
	prt_run_fx(suite, "pr_image: the section cache limit can be set",
		   cache_limit, ifx);
	prt_run(suite, "pr_rimage: instruction lengths are kept per section and mode",
		next_ip_per_section);
	prt_run(suite, "pr_rimage: the length table is bounded, starts over when full",
		next_ip_table_bounded);

	return prt_exit(&suite);
}
