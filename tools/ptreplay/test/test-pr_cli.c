// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_cli: the command line of `ptreplay decode`.
 */
#include "pr_cli.h"
#include "pr_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one parse gave: its result, and what it printed. */
struct parse {
	struct pr_replay_opts opts;
	enum pr_cli_result res;
	char *out, *err;
};

static void parse(struct parse *p, int argc, char *const *argv)
{
	size_t lo, le;
	FILE *out = open_memstream(&p->out, &lo);
	FILE *err = open_memstream(&p->err, &le);

	p->res = pr_cli_parse(&p->opts, argc, argv, out, err);
	fclose(out);
	fclose(err);
}

static void parse_free(struct parse *p)
{
	free(p->out);
	free(p->err);
}

#define PARSE(p, ...)							\
	do {								\
		char *const argv_[] = { __VA_ARGS__ };			\
		parse(p, sizeof(argv_) / sizeof(argv_[0]), argv_);	\
	} while (0)

static struct prt_result defaults(void)
{
	struct parse p;

	parse(&p, 0, NULL);
	prt_int_eq(p.res, PR_CLI_RUN);
	prt_str_eq(p.opts.input, "perf.data");
	prt_int_eq(p.opts.jobs, 1);
	prt_int_eq(p.opts.progress, -1);
	prt_uint_eq(p.opts.outputs, PR_OUT_FLOW);
	prt_check(!*p.out && !*p.err);
	parse_free(&p);
	return prt_passed();
}

static struct prt_result forms_of_arguments(void)
{
	struct parse p;

	PARSE(&p, "-i", "a.data", "-j3", "--vmlinux=vmlinux", "--no-vdso");
	prt_int_eq(p.res, PR_CLI_RUN);
	prt_str_eq(p.opts.input, "a.data");
	prt_int_eq(p.opts.jobs, 3);
	prt_str_eq(p.opts.vmlinux, "vmlinux");
	prt_int_eq(p.opts.no_vdso, 1);
	parse_free(&p);

	PARSE(&p, "--input=b.data", "-j", "4", "--input", "c.data",
	      "--jobs=5", "--vmlinux", "v2");
	prt_int_eq(p.res, PR_CLI_RUN);
	prt_str_eq(p.opts.input, "c.data");	/* the last one counts */
	prt_int_eq(p.opts.jobs, 5);
	prt_str_eq(p.opts.vmlinux, "v2");
	parse_free(&p);
	return prt_passed();
}

static struct prt_result outputs_and_flags(void)
{
	struct parse p;

	PARSE(&p, "--calls", "--profile", "--report", "-e", "--json",
	      "--no-flowjit", "--no-text-poke", "--progress", "--no-progress");
	prt_int_eq(p.res, PR_CLI_RUN);
	/* no --flow asked, none added */
	prt_uint_eq(p.opts.outputs, PR_OUT_CALLS | PR_OUT_PROFILE |
		    PR_OUT_HEALTH);
	prt_int_eq(p.opts.flow_errors, 1);
	prt_int_eq(p.opts.json, 1);
	prt_int_eq(p.opts.no_flowjit, 1);
	prt_int_eq(p.opts.no_text_poke, 1);
	prt_int_eq(p.opts.progress, 0);
	parse_free(&p);
	return prt_passed();
}

static struct prt_result exports(void)
{
	struct parse p;

	PARSE(&p, "--chrome-trace", "a.json", "--folded=b.folded");
	prt_int_eq(p.res, PR_CLI_RUN);
	/* files are outputs: no --flow added */
	prt_uint_eq(p.opts.outputs, PR_OUT_EXPORT);
	prt_str_eq(p.opts.chrome_trace, "a.json");
	prt_str_eq(p.opts.folded, "b.folded");
	parse_free(&p);

	PARSE(&p, "--calls", "--perfetto", "c.json");
	prt_int_eq(p.res, PR_CLI_RUN);
	prt_uint_eq(p.opts.outputs, PR_OUT_CALLS | PR_OUT_EXPORT);
	prt_str_eq(p.opts.chrome_trace, "c.json");
	prt_null(p.opts.folded);
	parse_free(&p);

	PARSE(&p, "--folded");
	prt_int_eq(p.res, PR_CLI_ERROR);
	prt_str_eq(p.err, "ptreplay: --folded needs an argument\n");
	parse_free(&p);
	return prt_passed();
}

static struct prt_result errors(void)
{
	struct parse p;

	PARSE(&p, "--flow", "--bogus");
	prt_int_eq(p.res, PR_CLI_ERROR);
	prt_check(strstr(p.err, "ptreplay: unknown option: --bogus\n"));
	prt_check(strstr(p.err, "usage: ptreplay [decode]"));
	parse_free(&p);

	PARSE(&p, "-j", "0");
	prt_int_eq(p.res, PR_CLI_ERROR);
	prt_str_eq(p.err, "ptreplay: bad -j: 0 (1..64)\n");
	parse_free(&p);

	PARSE(&p, "-j65");
	prt_int_eq(p.res, PR_CLI_ERROR);
	parse_free(&p);

	PARSE(&p, "--jobs=2x");
	prt_int_eq(p.res, PR_CLI_ERROR);
	parse_free(&p);

	PARSE(&p, "--flow", "-i");
	prt_int_eq(p.res, PR_CLI_ERROR);
	prt_str_eq(p.err, "ptreplay: -i needs an argument\n");
	parse_free(&p);

	PARSE(&p, "--flow=yes");
	prt_int_eq(p.res, PR_CLI_ERROR);
	prt_str_eq(p.err, "ptreplay: --flow=yes takes no argument\n");
	parse_free(&p);

	PARSE(&p, "perf.data");
	prt_int_eq(p.res, PR_CLI_ERROR);
	parse_free(&p);
	return prt_passed();
}

/* The usage is made from the table: every option is in it. */
static struct prt_result help_lists_every_option(void)
{
	static const char *const listed[] = {
		"  --flow        instruction flow",
		"  -e, --errors  also trace error lines",
		"\n                decode errors), like perf's",
		"  --calls       ", "  --profile     ", "  --health      ",
		"  -i, --input FILE\n                the perf.data",
		"  -j, --jobs N  decode N", "  --no-flowjit  ", "  --json        ",
		"  --progress    ", "  --no-progress\n", "  --no-vdso     ",
		"  --vmlinux F   ", "  --no-text-poke\n", "  -h, --help    ",
		"  --chrome-trace FILE\n", "  --perfetto FILE\n",
		"  --folded FILE\n",
		"outputs (default: --flow):\n", "\noptions:\n",
	};
	struct parse p;
	size_t i;

	PARSE(&p, "--flow", "-h", "--bogus");
	prt_int_eq(p.res, PR_CLI_DONE);	/* stops at --help */
	prt_check(!*p.err);
	for (i = 0; i < sizeof(listed) / sizeof(listed[0]); ++i)
		if (!strstr(p.out, listed[i]))
			prt_fail("the usage lacks \"%s\"", listed[i]);
	prt_null(strstr(p.out, "--report"));	/* an alias, not listed */
	parse_free(&p);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_cli: no argument gives the defaults", defaults);
	prt_run(suite, "pr_cli: -x V, -xV, --long V and --long=V all work",
		forms_of_arguments);
	prt_run(suite, "pr_cli: outputs and flags are set, --flow only by "
		"default", outputs_and_flags);
	prt_run(suite, "pr_cli: --chrome-trace, --perfetto and --folded take "
		"a file and replace the default --flow", exports);
	prt_run(suite, "pr_cli: unknown options, bad or missing arguments "
		"fail with a message", errors);
	prt_run(suite, "pr_cli: --help lists every option of the table",
		help_lists_every_option);
	return prt_exit(&suite);
}
