// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_report: the outputs of a decode (health report,
 * JSON, profile and calls) on the JIT scenario of pr_mkperf.h.
 */
#include "pr_mkperf.h"
#include "pr_replay.h"
#include "pr_test.h"

static int run(struct pr_replay_opts *opts, char **text, uint64_t *nerr)
{
	return mkp_decode_scenario(opts, 1, text, nerr);
}

static struct prt_result health(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = PR_OUT_HEALTH };
	uint64_t nerr;
	char *text = NULL;

	prt_int_eq(run(&opts, &text, &nerr), 0);
	prt_check(strstr(text, "instructions decoded:   11\n"));
	prt_check(strstr(text, "decode errors:          0\n"));
	prt_check(strstr(text, "images resolved:      4\n"));
	prt_check(strstr(text, "incomplete:           2 (bad checksum 1, "
			       "missing chunks 1,"));
	prt_check(strstr(text, "retired:              1 (unmatched 0)"));
	prt_check(strstr(text, "records lost:           3 (in 1 "
			       "PERF_RECORD_LOST)"));
	free(text);
	return prt_passed();
}

static struct prt_result json(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .json = 1,
		.outputs = PR_OUT_FLOW | PR_OUT_CALLS | PR_OUT_PROFILE |
			   PR_OUT_HEALTH };
	uint64_t nerr;
	char *text = NULL;

	prt_int_eq(run(&opts, &text, &nerr), 0);
	prt_check(text[0] == '{');
	prt_check(strstr(text, "[100,\"0xffffffffa0001002\"]"));
	prt_check(strstr(text, "\"images_resolved\":4"));
	prt_check(strstr(text, "\"incomplete_bad_checksum\":1"));
	prt_check(strstr(text, "\"incomplete_missing_chunks\":1"));
	prt_check(strstr(text, "\"lost_records\":3"));
	prt_check(strstr(text, "{\"function\":\"jit:100:0x10000\","
			       "\"image\":\"jit:100:0x10000\",\"insns\":6}"));
	free(text);
	return prt_passed();
}

static struct prt_result profile_and_calls(void)
{
	struct pr_replay_opts opts = { .jobs = 1,
		.outputs = PR_OUT_CALLS | PR_OUT_PROFILE };
	uint64_t nerr;
	char *text = NULL;

	prt_int_eq(run(&opts, &text, &nerr), 0);
	prt_check(strstr(text, "           6  54.55  jit:100:0x10000"));
	prt_check(strstr(text, "           3  27.27  bpf_prog_aaaa_A"));
	prt_check(strstr(text, "           2  18.18  bpf_prog_bbbb_B"));
	/* syscalls disable tracing: no call edge is made up */
	prt_null(strstr(text, "call "));
	free(text);
	return prt_passed();
}

/* Printing does not consume the results: twice gives the same text. */
static struct prt_result print_twice(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1,
		.progress = 0, .outputs = PR_OUT_FLOW | PR_OUT_PROFILE };
	struct pr_decode *d;
	struct pr_replay rp;
	char *a = NULL, *b = NULL;
	size_t size, la, lb;
	uint8_t *f;
	FILE *out;

	f = mkp_scenario_file(flowjit_csum, 1, &size);
	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	d = pr_decode_run(&rp);
	prt_ptr(d);
	out = open_memstream(&a, &la);
	pr_report_print(d, out);
	fclose(out);
	out = open_memstream(&b, &lb);
	pr_report_print(d, out);
	fclose(out);
	prt_check(la > 0 && la == lb && !memcmp(a, b, la));
	pr_decode_free(d);
	pr_replay_fini(&rp);
	free(a);
	free(b);
	free(f);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_report: the health report counts instructions, "
		"images resolved/incomplete, retires and lost records",
		health);
	prt_run(suite, "pr_report: --json output has the flow, profile and "
		"health", json);
	prt_run(suite, "pr_report: the profile counts instructions per JIT "
		"image by name", profile_and_calls);
	prt_run(suite, "pr_report: printing leaves the results as they were",
		print_twice);
	return prt_exit(&suite);
}
