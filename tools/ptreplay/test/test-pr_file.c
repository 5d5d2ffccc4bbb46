// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_file: file specifications and loading.
 */
#include "pr_file.h"
#include "pr_test.h"

#include <intel-pt.h>

#include <stdlib.h>

static struct prt_result parse_null(void)
{
	struct pr_file_spec spec;

	pr_file_spec_init(&spec);
	prt_int_eq(pr_file_parse(NULL, "a"), -pte_invalid);
	prt_int_eq(pr_file_parse(&spec, NULL), -pte_invalid);
	prt_int_eq(pr_file_parse_raw(NULL, "a:1"), -pte_invalid);
	prt_int_eq(pr_file_parse_raw(&spec, NULL), -pte_invalid);
	pr_file_spec_fini(&spec);

	return prt_passed();
}

/* Parse @arg (as --raw if @raw) and compare with the expected fields. */
static struct prt_result parse(const char *arg, int raw, int errcode,
			       const char *path, uint64_t offset,
			       uint64_t size, uint64_t base)
{
	struct pr_file_spec spec;
	int status;

	pr_file_spec_init(&spec);
	status = raw ? pr_file_parse_raw(&spec, arg) :
		pr_file_parse(&spec, arg);
	if (status != errcode) {
		pr_file_spec_fini(&spec);
		prt_fail("parsing '%s' gave %d, expected %d", arg, status,
			 errcode);
	}

	if (!errcode) {
		int same;

		same = spec.path && strcmp(spec.path, path) == 0 &&
			spec.offset == offset && spec.size == size &&
			spec.base == base;
		if (!same) {
			char why[200];

			snprintf(why, sizeof(why), "'%s' gave %s, 0x%" PRIx64
				 ", 0x%" PRIx64 ", 0x%" PRIx64, arg,
				 spec.path ? spec.path : "(null)",
				 spec.offset, spec.size, spec.base);
			pr_file_spec_fini(&spec);
			prt_fail("%s", why);
		}
	}

	pr_file_spec_fini(&spec);
	return prt_passed();
}

static struct prt_result spec_fini_twice(void)
{
	struct pr_file_spec spec;

	pr_file_spec_init(&spec);
	prt_int_eq(pr_file_parse(&spec, "x"), 0);
	pr_file_spec_fini(&spec);
	pr_file_spec_fini(&spec);
	pr_file_spec_fini(NULL);
	pr_file_spec_init(NULL);

	return prt_passed();
}

static struct prt_result parse_reuse(void)
{
	struct pr_file_spec spec;

	pr_file_spec_init(&spec);
	prt_int_eq(pr_file_parse_raw(&spec, "a:1:2"), 0);
	prt_int_eq(pr_file_parse(&spec, "b"), 0);
	prt_str_eq(spec.path, "b");
	prt_uint_eq(spec.offset, 0);
	prt_uint_eq(spec.base, 0);
	pr_file_spec_fini(&spec);

	return prt_passed();
}

/* A fixture: a temporary file with the bytes 0, 1, ..., 15. */
struct file_fixture {
	char path[64];
	struct pr_file_spec spec;
	uint8_t *buffer;
	size_t size;

	struct prt_result (*init)(struct file_fixture *);
	struct prt_result (*fini)(struct file_fixture *);
};

static struct prt_result ffx_init(struct file_fixture *fx)
{
	uint8_t bytes[16];
	int idx;

	for (idx = 0; idx < 16; ++idx)
		bytes[idx] = (uint8_t) idx;

	prt_int_eq(prt_tmpfile(fx->path, bytes, sizeof(bytes)), 0);
	pr_file_spec_init(&fx->spec);
	fx->spec.path = strdup(fx->path);
	prt_ptr(fx->spec.path);
	fx->buffer = NULL;
	fx->size = 0;

	return prt_passed();
}

static struct prt_result ffx_fini(struct file_fixture *fx)
{
	unlink(fx->path);
	pr_file_spec_fini(&fx->spec);
	free(fx->buffer);

	return prt_passed();
}

static struct prt_result load_null(struct file_fixture *fx)
{
	prt_int_eq(pr_file_load(NULL, &fx->size, &fx->spec), -pte_invalid);
	prt_int_eq(pr_file_load(&fx->buffer, NULL, &fx->spec), -pte_invalid);
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, NULL), -pte_invalid);

	return prt_passed();
}

static struct prt_result load_whole(struct file_fixture *fx)
{
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec), 0);
	prt_uint_eq(fx->size, 16);
	prt_uint_eq(fx->buffer[0], 0);
	prt_uint_eq(fx->buffer[15], 15);

	return prt_passed();
}

static struct prt_result load_offset(struct file_fixture *fx)
{
	fx->spec.offset = 10;
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec), 0);
	prt_uint_eq(fx->size, 6);
	prt_uint_eq(fx->buffer[0], 10);

	return prt_passed();
}

static struct prt_result load_range(struct file_fixture *fx)
{
	fx->spec.offset = 2;
	fx->spec.size = 3;
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec), 0);
	prt_uint_eq(fx->size, 3);
	prt_uint_eq(fx->buffer[0], 2);
	prt_uint_eq(fx->buffer[2], 4);

	return prt_passed();
}

static struct prt_result load_offset_beyond_end(struct file_fixture *fx)
{
	fx->spec.offset = 16;
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec),
		   -pte_bad_file);
	prt_null(fx->buffer);

	return prt_passed();
}

static struct prt_result load_range_beyond_end(struct file_fixture *fx)
{
	fx->spec.offset = 8;
	fx->spec.size = 9;
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec),
		   -pte_bad_file);

	fx->spec.size = UINT64_MAX;
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec),
		   -pte_bad_file);

	return prt_passed();
}

static struct prt_result load_missing(struct file_fixture *fx)
{
	unlink(fx->path);
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec),
		   -pte_bad_file);

	return prt_passed();
}

static struct prt_result load_directory(struct file_fixture *fx)
{
	free(fx->spec.path);
	fx->spec.path = strdup("/tmp");
	prt_ptr(fx->spec.path);
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec),
		   -pte_bad_file);

	return prt_passed();
}

static struct prt_result load_empty(struct file_fixture *fx)
{
	char path[64];

	prt_int_eq(prt_tmpfile(path, "", 0), 0);
	free(fx->spec.path);
	fx->spec.path = strdup(path);
	prt_ptr(fx->spec.path);
	prt_int_eq(pr_file_load(&fx->buffer, &fx->size, &fx->spec),
		   -pte_bad_file);
	unlink(path);

	return prt_passed();
}

int main(void)
{
	struct file_fixture ffx = { .init = ffx_init, .fini = ffx_fini };
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_file: parsing rejects NULL arguments", parse_null);
	prt_run(suite, "pr_file: FILE alone parses with offset 0, whole file",
		parse, "a.pt", 0, 0, "a.pt", 0, 0, 0);
	prt_run(suite, "pr_file: FILE:OFF parses the offset", parse,
		"a.pt:0x10", 0, 0, "a.pt", 0x10, 0, 0);
	prt_run(suite, "pr_file: FILE:OFF-END parses offset and size", parse,
		"a.pt:2-10", 0, 0, "a.pt", 2, 8, 0);
	prt_run(suite, "pr_file: FILE:OFF-END with END <= OFF is rejected",
		parse, "a.pt:10-2", 0, -pte_bad_config, NULL, 0, 0, 0);
	prt_run(suite, "pr_file: a non-numeric :suffix is part of the name",
		parse, "c:dir/a.pt", 0, 0, "c:dir/a.pt", 0, 0, 0);
	prt_run(suite, "pr_file: an empty name is rejected", parse, "", 0,
		-pte_invalid, NULL, 0, 0, 0);
	prt_run(suite, "pr_file: --raw FILE:ADDR parses the load address",
		parse, "a.bin:0x1000", 1, 0, "a.bin", 0, 0, 0x1000);
	prt_run(suite, "pr_file: --raw FILE:OFF:ADDR parses offset and address",
		parse, "a.bin:0x2:0x1002", 1, 0, "a.bin", 2, 0, 0x1002);
	prt_run(suite, "pr_file: --raw FILE:OFF-END:ADDR parses the range",
		parse, "a.bin:2-6:4096", 1, 0, "a.bin", 2, 4, 4096);
	prt_run(suite, "pr_file: --raw names may contain ':'", parse,
		"x:y.bin:0x10", 1, 0, "x:y.bin", 0, 0, 0x10);
	prt_run(suite, "pr_file: --raw without an address is rejected", parse,
		"a.bin", 1, -pte_noip, NULL, 0, 0, 0);
	prt_run(suite, "pr_file: --raw with a malformed address is rejected",
		parse, "a.bin:0x10zz", 1, -pte_noip, NULL, 0, 0, 0);
	prt_run(suite, "pr_file: --raw with an empty address is rejected",
		parse, "a.bin:", 1, -pte_noip, NULL, 0, 0, 0);
	prt_run(suite, "pr_file: --raw with a negative address is rejected",
		parse, "a.bin:-1", 1, -pte_noip, NULL, 0, 0, 0);
	prt_run(suite, "pr_file: --raw with an overflowing address is rejected",
		parse, "a.bin:0x10000000000000000", 1, -pte_noip, NULL, 0, 0,
		0);
	prt_run(suite, "pr_file: --raw with an empty name is rejected", parse,
		":0x1000", 1, -pte_invalid, NULL, 0, 0, 0);
	prt_run(suite, "pr_file: a spec can be finalized twice",
		spec_fini_twice);
	prt_run(suite, "pr_file: parsing into a used spec resets it",
		parse_reuse);
	prt_run_fx(suite, "pr_file: load rejects NULL arguments", load_null,
		   ffx);
	prt_run_fx(suite, "pr_file: load reads the whole file", load_whole,
		   ffx);
	prt_run_fx(suite, "pr_file: load starts at the offset", load_offset,
		   ffx);
	prt_run_fx(suite, "pr_file: load reads only the range", load_range,
		   ffx);
	prt_run_fx(suite, "pr_file: load rejects an offset at or past the end",
		   load_offset_beyond_end, ffx);
	prt_run_fx(suite, "pr_file: load rejects a range past the end",
		   load_range_beyond_end, ffx);
	prt_run_fx(suite, "pr_file: load of a missing file fails cleanly",
		   load_missing, ffx);
	prt_run_fx(suite, "pr_file: load of a directory fails cleanly",
		   load_directory, ffx);
	prt_run_fx(suite, "pr_file: load of an empty file fails cleanly",
		   load_empty, ffx);

	return prt_exit(&suite);
}
