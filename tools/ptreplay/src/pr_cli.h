/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_cli: the command line of `ptreplay decode`.
 *
 * The options are one table (pr_cli.c): the parser and the usage text are
 * both made from it, so an option cannot be parsed and not documented.
 */
#ifndef PR_CLI_H
#define PR_CLI_H

#include "pr_replay.h"

#include <stdio.h>

/* What pr_cli_parse() found. */
enum pr_cli_result {
	PR_CLI_RUN,	/* decode as @opts says */
	PR_CLI_DONE,	/* --help was printed: exit successfully */
	PR_CLI_ERROR,	/* a bad option or argument, reported on @err */
};

/* Fill @opts from its defaults and the @argc arguments in @argv (after
 * "decode"), reporting problems on @err as "ptreplay: ..."; --help prints
 * the usage to @out.
 */
extern enum pr_cli_result pr_cli_parse(struct pr_replay_opts *opts, int argc,
				       char *const *argv, FILE *out,
				       FILE *err);

/* Print the usage of `ptreplay decode` to @out. */
extern void pr_cli_usage(FILE *out);

/* Run `ptreplay decode` with @argc arguments in @argv (after "decode").
 * Returns the exit status: 0 if decoded without errors, 1 for usage and
 * input errors, 2 if decoding reported errors.
 */
extern int pr_cli_decode(int argc, char *const *argv);

#endif /* PR_CLI_H */
