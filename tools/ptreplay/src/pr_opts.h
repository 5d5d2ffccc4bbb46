/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_opts: the command line of `ptreplay raw` (ptxed-compatible).
 *
 * Like ptxed, options are read left to right and options that configure
 * the decoder (--cpu, --filter:*, --mtc-freq, decoder type, ...) must come
 * before --pt.
 */
#ifndef PR_OPTS_H
#define PR_OPTS_H

#include "pr_file.h"

#include <intel-pt.h>

#include <stdint.h>
#include <stdio.h>

/* The decoder to use. */
enum pr_decoder_type {
	pr_block_decoder,
	pr_insn_decoder
};

/* Statistics to collect and print. */
enum pr_stat_flag {
	pr_stat_insn	= 1 << 0,
	pr_stat_blocks	= 1 << 1
};

/* The parsed options of `ptreplay raw`. */
struct pr_opts {
	/* The --raw code images, in command line order. */
	struct pr_file_spec *raw;
	size_t nraw;

	/* The --pt trace file. */
	struct pr_file_spec pt;
	uint32_t have_pt:1;

	/* The decoder configuration (cpu, frequencies, filters); its trace
	 * buffer and decoder flags are set when the decoder is set up.
	 */
	struct pt_config config;

	/* The decoder to use. */
	enum pr_decoder_type type;

	/* Selected statistics (pr_stat_flag); with --stat and none selected,
	 * everything applicable to the decoder.
	 */
	uint32_t stat_flags;

	/* The image section cache limit if @have_iscache_limit. */
	uint64_t iscache_limit;
	uint32_t have_iscache_limit:1;

	/* Decoder flags (pt_conf_flags differ between the decoders). */
	uint32_t end_on_call:1;
	uint32_t end_on_jump:1;
	uint32_t event_tick:1;

	/* Output options. */
	uint32_t no_inst:1;
	uint32_t quiet:1;
	uint32_t print_stats:1;
	uint32_t check:1;
	uint32_t event_ip:1;
	uint32_t event_time:1;
	uint32_t print_offset:1;
	uint32_t print_time:1;
	uint32_t show_blocks:1;
	uint32_t verbose:1;

	/* Decoder behaviour that libipt 2.0.5 cannot provide: accepted for
	 * compatibility with newer ptxed, noted on stderr.
	 */
	uint32_t event_iflags:1;
	uint32_t keep_tcal_on_ovf:1;
	uint32_t resync_on_error:1;
};

/* What pr_opts_parse() found. */
enum pr_opts_result {
	/* Decode as configured. */
	pr_opts_decode,

	/* --help or --version was printed; exit successfully. */
	pr_opts_done
};

/* Initialize @opts with ptxed's defaults.
 *
 * Returns zero on success, -pte_invalid if @opts is NULL.
 */
extern int pr_opts_init(struct pr_opts *opts);

/* Release @opts's resources; @opts may be NULL. */
extern void pr_opts_fini(struct pr_opts *opts);

/* Parse @argc arguments in @argv (without the program or mode name) into
 * @opts, reporting problems on @err as "@prog: ...".  --help and --version
 * print to @out.  NULL streams mean stdout and stderr.
 *
 * Returns a pr_opts_result on success.
 * Returns -pte_invalid if @opts or @argv is NULL.
 * Returns -pte_bad_config for a bad or misplaced option or argument.
 * Returns -pte_nomem if out of memory.
 */
extern int pr_opts_parse(struct pr_opts *opts, int argc, char *const *argv,
			 const char *prog, FILE *out, FILE *err);

/* Parse a --cpu argument: "none", "auto" or FAMILY/MODEL[/STEPPING].
 *
 * Returns zero on success, filling @cpu.
 * Returns -pte_invalid if @cpu or @arg is NULL or @arg is malformed.
 */
extern int pr_opts_parse_cpu(struct pt_cpu *cpu, const char *arg);

/* Parse an unsigned number no larger than @max (decimal, 0x hex, 0 octal).
 *
 * Returns zero on success, filling @value.
 * Returns -pte_invalid if @value or @arg is NULL or @arg is malformed.
 * Returns -pte_bad_config if the number is larger than @max.
 */
extern int pr_opts_parse_num(uint64_t *value, const char *arg, uint64_t max);

/* Print the usage text to @out. */
extern void pr_opts_usage(FILE *out, const char *prog);

#endif /* PR_OPTS_H */
