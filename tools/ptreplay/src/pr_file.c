// SPDX-License-Identifier: GPL-2.0
/*
 * pr_file: file specifications and file loading.
 */
#include "pr_file.h"

#include <intel-pt.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void pr_file_spec_init(struct pr_file_spec *spec)
{
	if (!spec)
		return;

	memset(spec, 0, sizeof(*spec));
}

void pr_file_spec_fini(struct pr_file_spec *spec)
{
	if (!spec)
		return;

	free(spec->path);
	spec->path = NULL;
}

/* Parse an unsigned number (decimal, 0x hex or 0 octal) at @arg.
 *
 * Stores the number in *@value and the first unparsed character in *@rest.
 *
 * Returns zero on success.
 * Returns -pte_invalid if @arg does not start with a number or overflows.
 */
static int pr_file_number(uint64_t *value, char **rest, const char *arg)
{
	if (*arg < '0' || *arg > '9')
		return -pte_invalid;

	errno = 0;
	*value = strtoull(arg, rest, 0);
	if (errno)
		return -pte_invalid;

	return 0;
}

/* Split an optional :OFFSET[-END] suffix off @name (modified in place).
 *
 * Returns zero on success, with the suffix removed if there was one.
 * Returns -pte_bad_config if the suffix is a range with END <= OFFSET.
 */
static int pr_file_split_range(char *name, uint64_t *offset, uint64_t *size)
{
	uint64_t begin, end;
	char *sep, *rest;

	*offset = 0ull;
	*size = 0ull;

	sep = strrchr(name, ':');
	if (!sep)
		return 0;

	/* Not a number: the ':' is part of the file name. */
	if (pr_file_number(&begin, &rest, sep + 1) < 0)
		return 0;

	if (*rest == '-') {
		if (pr_file_number(&end, &rest, rest + 1) < 0 || *rest)
			return 0;

		if (end <= begin)
			return -pte_bad_config;

		*size = end - begin;
	} else if (*rest)
		return 0;

	*offset = begin;
	*sep = 0;

	return 0;
}

/* Store a copy of @arg as @spec's name and parse its range suffix.
 *
 * Returns zero on success, a negative error code otherwise.
 */
static int pr_file_parse_name(struct pr_file_spec *spec, char *name)
{
	int errcode;

	errcode = pr_file_split_range(name, &spec->offset, &spec->size);
	if (errcode < 0)
		return errcode;

	if (!*name)
		return -pte_invalid;

	spec->path = strdup(name);
	if (!spec->path)
		return -pte_nomem;

	return 0;
}

int pr_file_parse(struct pr_file_spec *spec, const char *arg)
{
	char *name;
	int errcode;

	if (!spec || !arg)
		return -pte_invalid;

	pr_file_spec_fini(spec);
	pr_file_spec_init(spec);

	if (!*arg)
		return -pte_invalid;

	name = strdup(arg);
	if (!name)
		return -pte_nomem;

	errcode = pr_file_parse_name(spec, name);
	free(name);

	return errcode;
}

int pr_file_parse_raw(struct pr_file_spec *spec, const char *arg)
{
	char *name, *sep, *rest;
	int errcode;

	if (!spec || !arg)
		return -pte_invalid;

	pr_file_spec_fini(spec);
	pr_file_spec_init(spec);

	name = strdup(arg);
	if (!name)
		return -pte_nomem;

	sep = strrchr(name, ':');
	if (!sep || pr_file_number(&spec->base, &rest, sep + 1) < 0 ||
	    *rest) {
		free(name);
		return -pte_noip;
	}

	*sep = 0;
	errcode = pr_file_parse_name(spec, name);
	free(name);

	return errcode;
}

int pr_file_load(uint8_t **buffer, size_t *size,
		 const struct pr_file_spec *spec)
{
	uint64_t fsize, end;
	struct stat st;
	uint8_t *content;
	FILE *file;

	if (!buffer || !size || !spec || !spec->path)
		return -pte_invalid;

	file = fopen(spec->path, "rb");
	if (!file)
		return -pte_bad_file;

	if (fstat(fileno(file), &st) < 0 || !S_ISREG(st.st_mode))
		goto err_file;

	fsize = (uint64_t) st.st_size;
	if (fsize <= spec->offset)
		goto err_file;

	end = fsize;
	if (spec->size) {
		end = spec->offset + spec->size;
		if (end < spec->offset || fsize < end)
			goto err_file;
	}

	if ((uint64_t) (size_t) (end - spec->offset) != end - spec->offset ||
	    (uint64_t) (long) spec->offset != spec->offset)
		goto err_file;

	content = malloc((size_t) (end - spec->offset));
	if (!content) {
		fclose(file);
		return -pte_nomem;
	}

	if (fseek(file, (long) spec->offset, SEEK_SET) ||
	    fread(content, (size_t) (end - spec->offset), 1, file) != 1) {
		free(content);
		goto err_file;
	}

	fclose(file);

	*buffer = content;
	*size = (size_t) (end - spec->offset);

	return 0;

err_file:
	fclose(file);
	return -pte_bad_file;
}
