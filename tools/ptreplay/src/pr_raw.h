/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_raw: `ptreplay raw`, a ptxed-compatible decode session.
 *
 * A session maps the --raw images into a code store (pr_image), loads the
 * --pt trace, sets up a libipt instruction flow or block decoder and prints
 * instructions, events and errors in ptxed's format.
 */
#ifndef PR_RAW_H
#define PR_RAW_H

#include "pr_dis.h"
#include "pr_image.h"
#include "pr_opts.h"

#include <stdint.h>
#include <stdio.h>

struct pt_insn_decoder;
struct pt_block_decoder;

/* A decode session. */
struct pr_raw {
	/* The options (not owned). */
	const struct pr_opts *opts;

	/* Where decoded output and diagnostics go. */
	FILE *out;
	FILE *err;

	/* The code store. */
	struct pr_image image;

	/* The disassembler for instruction text. */
	struct pr_dis dis;

	/* The trace buffer (owned). */
	uint8_t *trace;
	size_t trace_size;

	/* The decoder, depending on @opts->type. */
	struct pt_insn_decoder *insn;
	struct pt_block_decoder *block;

	/* pr_print flags. */
	uint32_t pflags;

	/* The last event timestamp. */
	uint64_t time;

	/* Statistics. */
	uint64_t ninsn;
	uint64_t nblocks;

	/* The number of synchronizations and of diagnosed errors. */
	uint64_t nsync;
	uint64_t nerrors;
};

/* Set up @raw for @opts: map images, load the trace, allocate the decoder.
 * Problems are reported on @err; a cpu without errata information is
 * reported on @out like ptxed does ("[0, 0: config error: ...]").
 *
 * Returns zero on success.
 * Returns -pte_invalid if @raw, @opts, @out or @err is NULL.
 * Returns -pte_bad_image if a code image cannot be mapped.
 * Returns -pte_bad_file if the trace cannot be loaded.
 * Returns -pte_nomem if out of memory.
 */
extern int pr_raw_init(struct pr_raw *raw, const struct pr_opts *opts,
		       FILE *out, FILE *err);

/* Release @raw's resources; @raw may be NULL. */
extern void pr_raw_fini(struct pr_raw *raw);

/* Decode the whole trace, printing to @raw->out; then print statistics if
 * asked for.  Decode errors are printed and counted in @raw->nerrors, and
 * decoding goes on from the next synchronization point.
 *
 * Returns zero on success.
 * Returns -pte_invalid if @raw is NULL or has no decoder.
 */
extern int pr_raw_decode(struct pr_raw *raw);

/* Run `ptreplay raw` with @argc arguments in @argv (after "raw").
 *
 * Returns the exit status: 0 if the trace was decoded without errors,
 * 1 for bad usage or input files, 2 if decoding reported errors or found
 * no synchronization point.
 */
extern int pr_raw_main(int argc, char *const *argv, const char *prog);

#endif /* PR_RAW_H */
