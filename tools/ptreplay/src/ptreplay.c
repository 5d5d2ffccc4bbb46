// SPDX-License-Identifier: GPL-2.0
/*
 * ptreplay: replay Intel PT traces through a versioned code store.
 *
 * The modes are one table, as bpftool's commands are: each names the
 * function that takes the rest of the command line.
 */
#include "pr_cli.h"
#include "pr_raw.h"

#include <stdio.h>
#include <string.h>

struct pr_cmd {
	const char *name;
	int (*run)(int argc, char *const *argv);
	const char *help;		/* '\n' starts an indented line */
};

static int pr_cmd_raw(int argc, char *const *argv)
{
	return pr_raw_main(argc, argv, "ptreplay raw");
}

static int pr_cmd_help(int argc, char *const *argv);

static const struct pr_cmd pr_cmds[] = {
	{ "decode", pr_cli_decode,
	  "(the default when the first argument is an option)\n"
	  "replay a perf.data through the versioned code store;\n"
	  "'ptreplay decode --help' lists the options." },
	{ "raw", pr_cmd_raw,
	  "decode raw Intel PT data against raw code images,\n"
	  "accepting ptxed's options and printing its format.\n"
	  "'ptreplay raw --help' lists the options." },
	{ "help", pr_cmd_help, "this text" },
};

#define PR_NCMDS	(sizeof(pr_cmds) / sizeof(pr_cmds[0]))

/* Print the top-level usage to @out. */
static void ptreplay_usage(FILE *out)
{
	const char *h;
	size_t i;

	fputs("usage: ptreplay <mode> [<options>]\n"
	      "\n"
	      "modes:\n", out);
	for (i = 0; i < PR_NCMDS; ++i) {
		fprintf(out, "  %-6s  ", pr_cmds[i].name);
		for (h = pr_cmds[i].help; *h; ++h) {
			fputc(*h, out);
			if (*h == '\n')
				fprintf(out, "%10s", "");
		}
		fputc('\n', out);
	}
}

static int pr_cmd_help(int argc, char *const *argv)
{
	(void)argc;
	(void)argv;
	ptreplay_usage(stdout);
	return 0;
}

int main(int argc, char *argv[])
{
	size_t i;

	if (argc < 2) {
		ptreplay_usage(stderr);
		return 1;
	}
	/* options first: decode's */
	if (argv[1][0] == '-' && argv[1][1] && strcmp(argv[1], "--help") &&
	    strcmp(argv[1], "-h"))
		return pr_cli_decode(argc - 1, &argv[1]);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return pr_cmd_help(0, NULL);
	for (i = 0; i < PR_NCMDS; ++i)
		if (!strcmp(argv[1], pr_cmds[i].name))
			return pr_cmds[i].run(argc - 2, &argv[2]);

	fprintf(stderr, "ptreplay: unknown mode: %s.\n", argv[1]);
	ptreplay_usage(stderr);
	return 1;
}
