/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_file: file specifications and file loading.
 *
 * A file specification names a file plus an optional offset or range into
 * it and, for code images, the load address:
 *
 *	FILE[:OFFSET[-END]]		(a trace: --pt)
 *	FILE[:OFFSET[-END]]:ADDR	(a raw code image: --raw)
 *
 * The separators are searched from the end since FILE may contain ':'.  A
 * suffix that does not parse as an offset or range is taken to be part of
 * the file name, like ptxed does.
 */
#ifndef PR_FILE_H
#define PR_FILE_H

#include <stddef.h>
#include <stdint.h>

/* A parsed file specification. */
struct pr_file_spec {
	/* The file name (a copy owned by the spec). */
	char *path;

	/* The offset into the file in bytes. */
	uint64_t offset;

	/* The number of bytes from @offset; zero means up to the end. */
	uint64_t size;

	/* The load address (only for code images). */
	uint64_t base;
};

/* Initialize an empty spec; pr_file_spec_fini() releases it. */
extern void pr_file_spec_init(struct pr_file_spec *spec);
extern void pr_file_spec_fini(struct pr_file_spec *spec);

/* Parse FILE[:OFFSET[-END]] into @spec (initialized, overwritten).
 *
 * Returns zero on success.
 * Returns -pte_invalid if @spec or @arg is NULL or @arg is empty.
 * Returns -pte_bad_config if the range is empty or reversed.
 * Returns -pte_nomem if the name cannot be copied.
 */
extern int pr_file_parse(struct pr_file_spec *spec, const char *arg);

/* Parse FILE[:OFFSET[-END]]:ADDR into @spec (initialized, overwritten).
 *
 * Returns zero on success.
 * Returns -pte_invalid if @spec or @arg is NULL.
 * Returns -pte_noip if the load address is missing or malformed.
 * Returns -pte_bad_config if the range is empty or reversed.
 * Returns -pte_nomem if the name cannot be copied.
 */
extern int pr_file_parse_raw(struct pr_file_spec *spec, const char *arg);

/* Load the part of the file @spec describes into a new buffer.
 *
 * On success, *@buffer is a malloc()ed buffer of *@size bytes that the
 * caller frees.
 *
 * Returns zero on success.
 * Returns -pte_invalid if an argument is NULL.
 * Returns -pte_bad_file if the file cannot be opened or read, or if the
 * offset or range lies outside of the file or the file is empty.
 * Returns -pte_nomem if the buffer cannot be allocated.
 */
extern int pr_file_load(uint8_t **buffer, size_t *size,
			const struct pr_file_spec *spec);

#endif /* PR_FILE_H */
