// SPDX-License-Identifier: GPL-2.0
/*
 * ptreplay: replay Intel PT traces through a versioned code store.
 *
 * Modes:
 *	decode	replay a perf.data through the versioned code store (default)
 *	raw	decode a raw trace against raw code images (ptxed-compatible)
 */
#include "pr_opts.h"
#include "pr_raw.h"
#include "pr_replay.h"

#include <stdio.h>
#include <string.h>

/* Print the top-level usage to @out. */
static void ptreplay_usage(FILE *out)
{
	fputs("usage: ptreplay <mode> [<options>]\n"
	      "\n"
	      "modes:\n"
	      "  decode  (the default when the first argument is an option)\n"
	      "          replay a perf.data through the versioned code store;\n"
	      "          'ptreplay decode --help' lists the options.\n"
	      "  raw     decode raw Intel PT data against raw code images,\n"
	      "          accepting ptxed's options and printing its format.\n"
	      "          'ptreplay raw --help' lists the options.\n", out);
}

int main(int argc, char *argv[])
{
	if (argc < 2) {
		ptreplay_usage(stderr);
		return 1;
	}

	if (strcmp(argv[1], "decode") == 0)
		return pr_replay_main(argc - 2, &argv[2]);

	if (argv[1][0] == '-' && argv[1][1] && strcmp(argv[1], "--help") &&
	    strcmp(argv[1], "-h"))
		return pr_replay_main(argc - 1, &argv[1]);

	if (strcmp(argv[1], "raw") == 0)
		return pr_raw_main(argc - 2, &argv[2], "ptreplay raw");

	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		ptreplay_usage(stdout);
		return 0;
	}

	fprintf(stderr, "ptreplay: unknown mode: %s.\n", argv[1]);
	ptreplay_usage(stderr);
	return 1;
}
