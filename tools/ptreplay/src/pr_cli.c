// SPDX-License-Identifier: GPL-2.0
/*
 * pr_cli: the command line of `ptreplay decode` (see pr_cli.h).
 */
#include "pr_cli.h"
#include "pr_decode.h"
#include "pr_export.h"
#include "pr_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum pr_cli_id {
	PR_OPT_FLOW,
	PR_OPT_ERRORS,
	PR_OPT_CALLS,
	PR_OPT_PROFILE,
	PR_OPT_HEALTH,
	PR_OPT_CHROME_TRACE,
	PR_OPT_FOLDED,
	PR_OPT_INPUT,
	PR_OPT_JOBS,
	PR_OPT_NO_FLOWJIT,
	PR_OPT_JSON,
	PR_OPT_PROGRESS,
	PR_OPT_NO_PROGRESS,
	PR_OPT_NO_VDSO,
	PR_OPT_VMLINUX,
	PR_OPT_NO_TEXT_POKE,
	PR_OPT_NO_TIE,
	PR_OPT_PERF_MAP_DIR,
	PR_OPT_JITDUMP,
	PR_OPT_LINES,
	PR_OPT_HELP,
};

/* Where the usage lists an option. */
enum pr_cli_section {
	PR_SEC_HIDDEN,		/* an alias, not listed */
	PR_SEC_OUTPUT,
	PR_SEC_OPTION,
};

struct pr_cli_opt {
	const char *name;		/* the long name, after "--" */
	char short_name;		/* '-c', or 0 */
	const char *arg;		/* its argument in the usage, or NULL */
	enum pr_cli_id id;
	enum pr_cli_section section;
	const char *help;		/* '\n' starts an indented line */
};

static const struct pr_cli_opt pr_cli_opts[] = {
	{ "flow", 0, NULL, PR_OPT_FLOW, PR_SEC_OUTPUT,
	  "instruction flow, 'TID IP' per line as\n"
	  "perf script --itrace=i0ns -F tid,ip prints it" },
	{ "errors", 'e', NULL, PR_OPT_ERRORS, PR_SEC_OUTPUT,
	  "also trace error lines in the flow (overflows,\n"
	  "decode errors), like perf's --itrace=...e" },
	{ "calls", 0, NULL, PR_OPT_CALLS, PR_SEC_OUTPUT,
	  "call/return flow with symbols" },
	{ "profile", 0, NULL, PR_OPT_PROFILE, PR_SEC_OUTPUT,
	  "instructions per function" },
	{ "health", 0, NULL, PR_OPT_HEALTH, PR_SEC_OUTPUT,
	  "decode-health report" },
	{ "report", 0, NULL, PR_OPT_HEALTH, PR_SEC_HIDDEN, NULL },
	{ "chrome-trace", 0, "FILE", PR_OPT_CHROME_TRACE, PR_SEC_OUTPUT,
	  "the calls as nested slices per thread, Chrome\n"
	  "trace event JSON (Perfetto UI, speedscope)" },
	{ "perfetto", 0, "FILE", PR_OPT_CHROME_TRACE, PR_SEC_OUTPUT,
	  "the same JSON (Perfetto UI opens it)" },
	{ "folded", 0, "FILE", PR_OPT_FOLDED, PR_SEC_OUTPUT,
	  "collapsed stacks, 'a;b;c instructions' lines\n"
	  "(flamegraph.pl, speedscope)" },
	{ "input", 'i', "FILE", PR_OPT_INPUT, PR_SEC_OPTION,
	  "the perf.data (default: perf.data)" },
	{ "jobs", 'j', "N", PR_OPT_JOBS, PR_SEC_OPTION,
	  "decode N AUX queues in parallel (default 1)" },
	{ "no-flowjit", 0, NULL, PR_OPT_NO_FLOWJIT, PR_SEC_OPTION,
	  "ignore PERF_RECORD_FLOWJIT records" },
	{ "json", 0, NULL, PR_OPT_JSON, PR_SEC_OPTION,
	  "machine-readable output (one JSON object)" },
	{ "progress", 0, NULL, PR_OPT_PROGRESS, PR_SEC_OPTION,
	  "a progress bar on stderr (default: if a tty)" },
	{ "no-progress", 0, NULL, PR_OPT_NO_PROGRESS, PR_SEC_OPTION,
	  "no progress bar" },
	{ "no-vdso", 0, NULL, PR_OPT_NO_VDSO, PR_SEC_OPTION,
	  "do not use this machine's vdso for [vdso]" },
	{ "vmlinux", 0, "F", PR_OPT_VMLINUX, PR_SEC_OPTION,
	  "kernel code from the ELF file F (from time 0)" },
	{ "no-text-poke", 0, NULL, PR_OPT_NO_TEXT_POKE, PR_SEC_OPTION,
	  "ignore TEXT_POKE records" },
	{ "no-tie", 0, NULL, PR_OPT_NO_TIE, PR_SEC_OPTION,
	  "pick flowjit revisions by time only, not tied\n"
	  "to the exec faults the trace shows" },
	{ "perf-map-dir", 0, "DIR", PR_OPT_PERF_MAP_DIR, PR_SEC_OPTION,
	  "name JIT code from DIR/perf-PID.map (default\n"
	  "/tmp; '' reads none)" },
	{ "jitdump", 0, "FILE", PR_OPT_JITDUMP, PR_SEC_OPTION,
	  "name JIT code from the jitdump FILE" },
	{ "lines", 0, NULL, PR_OPT_LINES, PR_SEC_OPTION,
	  "add file:line and inlined frames to names (DWARF)" },
	{ "help", 'h', NULL, PR_OPT_HELP, PR_SEC_OPTION, "this text" },
};

#define PR_CLI_NOPTS	(sizeof(pr_cli_opts) / sizeof(pr_cli_opts[0]))

/* The column the help text starts in. */
#define PR_CLI_COL	16

static void pr_cli_list(FILE *out, enum pr_cli_section section)
{
	size_t i;

	for (i = 0; i < PR_CLI_NOPTS; ++i) {
		const struct pr_cli_opt *o = &pr_cli_opts[i];
		const char *h;
		char label[64];
		int n;

		if (o->section != section)
			continue;
		if (o->short_name)
			n = snprintf(label, sizeof(label), "-%c, --%s%s%s",
				     o->short_name, o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		else
			n = snprintf(label, sizeof(label), "--%s%s%s", o->name,
				     o->arg ? " " : "", o->arg ? o->arg : "");
		if (n + 4 > PR_CLI_COL)
			fprintf(out, "  %s\n%*s", label, PR_CLI_COL, "");
		else
			fprintf(out, "  %-*s", PR_CLI_COL - 2, label);
		for (h = o->help; *h; ++h) {
			fputc(*h, out);
			if (*h == '\n')
				fprintf(out, "%*s", PR_CLI_COL, "");
		}
		fputc('\n', out);
	}
}

void pr_cli_usage(FILE *out)
{
	fputs("usage: ptreplay [decode] -i perf.data [options]\n"
	      "\n"
	      "Decode the Intel PT AUX data of a perf.data through a code store\n"
	      "versioned by (address space, address range, time).\n"
	      "\n"
	      "outputs (default: --flow):\n", out);
	pr_cli_list(out, PR_SEC_OUTPUT);
	fputs("options:\n", out);
	pr_cli_list(out, PR_SEC_OPTION);
	fputs("Exit status: 0 decoded without errors, 1 bad usage or input,\n"
	      "2 decoded with decode errors.\n", out);
}

/* The option @arg names: "--name[=value]", "-c" or "-cVALUE". */
static const struct pr_cli_opt *pr_cli_find(const char *arg,
					    const char **value)
{
	size_t i, len;

	*value = NULL;
	if (arg[0] != '-' || !arg[1])
		return NULL;
	if (arg[1] == '-') {
		const char *eq = strchr(arg + 2, '=');

		len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		for (i = 0; i < PR_CLI_NOPTS; ++i)
			if (strlen(pr_cli_opts[i].name) == len &&
			    !strncmp(pr_cli_opts[i].name, arg + 2, len)) {
				*value = eq ? eq + 1 : NULL;
				return &pr_cli_opts[i];
			}
		return NULL;
	}
	for (i = 0; i < PR_CLI_NOPTS; ++i)
		if (pr_cli_opts[i].short_name == arg[1]) {
			*value = arg[2] ? arg + 2 : NULL;
			return &pr_cli_opts[i];
		}
	return NULL;
}

/* Apply option @o with argument @value (NULL if it takes none). */
static enum pr_cli_result pr_cli_set(struct pr_replay_opts *opts,
				     const struct pr_cli_opt *o,
				     const char *value, FILE *out, FILE *err)
{
	char *end;
	long n;

	switch (o->id) {
	case PR_OPT_FLOW:
		opts->outputs |= PR_OUT_FLOW;
		break;
	case PR_OPT_ERRORS:
		opts->flow_errors = 1;
		break;
	case PR_OPT_CALLS:
		opts->outputs |= PR_OUT_CALLS;
		break;
	case PR_OPT_PROFILE:
		opts->outputs |= PR_OUT_PROFILE;
		break;
	case PR_OPT_HEALTH:
		opts->outputs |= PR_OUT_HEALTH;
		break;
	case PR_OPT_CHROME_TRACE:
		opts->outputs |= PR_OUT_EXPORT;
		opts->chrome_trace = value;
		break;
	case PR_OPT_FOLDED:
		opts->outputs |= PR_OUT_EXPORT;
		opts->folded = value;
		break;
	case PR_OPT_INPUT:
		opts->input = value;
		break;
	case PR_OPT_JOBS:
		n = strtol(value, &end, 10);
		if (!*value || *end || n < 1 || n > 64) {
			fprintf(err, "ptreplay: bad -j: %s (1..64)\n", value);
			return PR_CLI_ERROR;
		}
		opts->jobs = (int)n;
		break;
	case PR_OPT_NO_FLOWJIT:
		opts->no_flowjit = 1;
		break;
	case PR_OPT_JSON:
		opts->json = 1;
		break;
	case PR_OPT_PROGRESS:
		opts->progress = 1;
		break;
	case PR_OPT_NO_PROGRESS:
		opts->progress = 0;
		break;
	case PR_OPT_NO_VDSO:
		opts->no_vdso = 1;
		break;
	case PR_OPT_VMLINUX:
		opts->vmlinux = value;
		break;
	case PR_OPT_NO_TEXT_POKE:
		opts->no_text_poke = 1;
		break;
	case PR_OPT_NO_TIE:
		opts->no_tie = 1;
		break;
	case PR_OPT_PERF_MAP_DIR:
		opts->perf_map_dir = value;
		break;
	case PR_OPT_JITDUMP:
		opts->jitdump = value;
		break;
	case PR_OPT_LINES:
		opts->lines = 1;
		break;
	case PR_OPT_HELP:
		pr_cli_usage(out);
		return PR_CLI_DONE;
	}
	return PR_CLI_RUN;
}

enum pr_cli_result pr_cli_parse(struct pr_replay_opts *opts, int argc,
				char *const *argv, FILE *out, FILE *err)
{
	enum pr_cli_result res;
	int i;

	if (!out)
		out = stdout;
	if (!err)
		err = stderr;
	memset(opts, 0, sizeof(*opts));
	opts->input = "perf.data";
	opts->jobs = 1;
	opts->progress = -1;
	opts->perf_map_dir = "/tmp";

	for (i = 0; i < argc; ++i) {
		const char *a = argv[i], *value;
		const struct pr_cli_opt *o = pr_cli_find(a, &value);

		if (!o) {
			fprintf(err, "ptreplay: unknown option: %s\n", a);
			pr_cli_usage(err);
			return PR_CLI_ERROR;
		}
		if (o->arg && !value) {
			if (++i >= argc) {
				fprintf(err, "ptreplay: %s needs an argument\n",
					a);
				return PR_CLI_ERROR;
			}
			value = argv[i];
		} else if (!o->arg && value) {
			fprintf(err, "ptreplay: %s takes no argument\n", a);
			return PR_CLI_ERROR;
		}
		res = pr_cli_set(opts, o, value, out, err);
		if (res != PR_CLI_RUN)
			return res;
	}
	if (!opts->outputs)
		opts->outputs = PR_OUT_FLOW;
	return PR_CLI_RUN;
}

/* pr_export_task_fn for a loaded pr_replay @ctx. */
static int pr_cli_task(void *ctx, int32_t tid, struct pr_export_task *task)
{
	const struct pr_replay *rp = ctx;

	if (tid <= 0)
		return -1;
	task->pid = pr_replay_pid(rp, (uint32_t)tid);
	task->comm = pr_replay_comm(rp, (uint32_t)tid);
	return 0;
}

/* Write the file @path with @write (0: Chrome JSON, 1: folded) from the
 * exporters of @d.  Returns zero on success, -1 (reported) otherwise.
 */
static int pr_cli_export(const struct pr_decode *d, const char *path,
			 int folded)
{
	struct pr_export **x;
	size_t i;
	FILE *f;
	int ret;

	x = calloc(d->nq ? d->nq : 1, sizeof(*x));
	if (!x) {
		fprintf(stderr, "ptreplay: %s: out of memory\n", path);
		return -1;
	}
	for (i = 0; i < d->nq; ++i) {
		x[i] = d->q[i].x;
		if (!x[i] && d->q[i].q->size) {
			fprintf(stderr, "ptreplay: %s: out of memory\n", path);
			free(x);
			return -1;
		}
	}
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "ptreplay: %s: %s\n", path, strerror(errno));
		free(x);
		return -1;
	}
	if (folded)
		ret = pr_export_folded(f, x, d->nq);
	else
		ret = pr_export_chrome(f, x, d->nq, pr_cli_task, d->rp,
				       d->rp->opts.input);
	if (fclose(f))
		ret = -1;
	if (ret < 0)
		fprintf(stderr, "ptreplay: %s: could not write it (%s)\n",
			path, errno ? strerror(errno) : "out of memory");
	free(x);
	return ret;
}

int pr_cli_decode(int argc, char *const *argv)
{
	struct pr_replay_opts opts;
	struct pr_replay *rp;
	struct pr_decode *d;
	uint64_t nerrors, suspect, unordered;

	switch (pr_cli_parse(&opts, argc, argv, stdout, stderr)) {
	case PR_CLI_RUN:
		break;
	case PR_CLI_DONE:
		return 0;
	case PR_CLI_ERROR:
		return 1;
	}

	rp = malloc(sizeof(*rp));
	if (!rp) {
		fprintf(stderr, "ptreplay: out of memory\n");
		return 1;
	}
	opts.stream = stdout;
	pr_replay_init(rp, &opts);
	if (pr_replay_load(rp, NULL, 0) < 0) {
		fprintf(stderr, "ptreplay: %s: %s\n", opts.input, rp->error);
		pr_replay_fini(rp);
		free(rp);
		return 1;
	}
	d = pr_decode_run(rp);
	if (!d) {
		fprintf(stderr, "ptreplay: out of memory\n");
		pr_replay_fini(rp);
		free(rp);
		return 1;
	}
	nerrors = pr_report_print(d, stdout);
	if ((opts.chrome_trace && pr_cli_export(d, opts.chrome_trace, 0) < 0) ||
	    (opts.folded && pr_cli_export(d, opts.folded, 1) < 0)) {
		pr_decode_free(d);
		pr_replay_fini(rp);
		free(rp);
		return 1;
	}
	if (nerrors)
		fprintf(stderr, "ptreplay: %" PRIu64 " decode error(s); see "
			"--health\n", nerrors);
	suspect = pr_decode_suspect(d);
	if (suspect)
		fprintf(stderr, "ptreplay: %" PRIu64 " instruction(s) decoded "
			"from flowjit images a lost record may have replaced; "
			"see --health\n", suspect);
	unordered = pr_decode_unordered(d);
	if (unordered)
		fprintf(stderr, "ptreplay: %" PRIu64 " instruction(s) decoded "
			"from flowjit images a newer one may have replaced "
			"within the clock's lag; see --health\n", unordered);
	pr_decode_free(d);
	pr_replay_fini(rp);
	free(rp);
	if (fflush(stdout) || ferror(stdout))
		return 1;
	return nerrors || suspect || unordered ? 2 : 0;
}
