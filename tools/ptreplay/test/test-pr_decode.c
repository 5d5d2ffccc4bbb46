// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_decode: decoding through the versioned store, seen
 * through the instruction flow (the other outputs: test-pr_report.c).
 */
#include "pr_mkperf.h"
#include "pr_replay.h"
#include "pr_test.h"

/* Decode the JIT scenario with @opts; the output goes to *@text. */
static size_t nsplit = 1;

static int run(struct pr_replay_opts *opts, char **text, uint64_t *nerr)
{
	return mkp_decode_scenario(opts, nsplit, text, nerr);
}

static struct prt_result flow_revisions_and_reuse(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = PR_OUT_FLOW };
	uint64_t nerr;
	char *text = NULL;

	prt_int_eq(run(&opts, &text, &nerr), 0);
	prt_uint_eq(nerr, 0);
	prt_check(!strcmp(text, MKP_FLOW));
	free(text);
	return prt_passed();
}

static struct prt_result flow_parallel(void)
{
	struct pr_replay_opts opts = { .jobs = 2, .outputs = PR_OUT_FLOW };
	uint64_t nerr;
	char *text = NULL;

	prt_int_eq(run(&opts, &text, &nerr), 0);
	prt_check(!strcmp(text, MKP_FLOW));
	free(text);
	return prt_passed();
}

/* A queue's trace in many AUXTRACE buffers is decoded as one. */
static struct prt_result split_buffers(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = PR_OUT_FLOW };
	uint64_t nerr;
	char *text = NULL;

	nsplit = 7;
	prt_int_eq(run(&opts, &text, &nerr), 0);
	nsplit = 1;
	prt_uint_eq(nerr, 0);
	prt_check(!strcmp(text, MKP_FLOW));
	free(text);
	return prt_passed();
}

static struct prt_result no_flowjit(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_flowjit = 1,
				       .outputs = PR_OUT_FLOW | PR_OUT_HEALTH };
	uint64_t nerr;
	char *text = NULL;

	prt_int_eq(run(&opts, &text, &nerr), 0);
	prt_check(nerr > 0);
	prt_check(strstr(text, "instructions decoded:   0\n"));
	prt_check(strstr(text, "no memory mapped at this address in "
			       "[unknown user]"));
	prt_check(strstr(text, "flowjit records:        14 (ignored"));
	free(text);
	return prt_passed();
}

/* Code that loops with direct jumps needs no packets: decoding must stop. */
static struct prt_result endless_loop(void)
{
	static const uint8_t jmp_self[] = { 0xeb, 0xfe };
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1,
				       .outputs = PR_OUT_HEALTH };
	struct pr_replay rp;
	struct pr_decode *d;
	struct mkp m = { 0 };
	struct mkpt pt;
	size_t size, len, n;
	uint8_t *f;
	char *text = NULL;
	FILE *out;

	mkp_auxtrace_info(&m);
	mkp_flowjit(&m, 7, 1, 100, 0x10000, jmp_self, 2, 0, 1, 10, 4096, -1,
		    0, flowjit_csum);
	mkpt_init(&pt);
	mkpt_psb(&pt, 100);
	mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	/* a TNT the loop never asks for: the trace does not end */
	{
		struct pt_packet pkt;

		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_tnt_8;
		pkt.payload.tnt.bit_size = 1;
		pkt.payload.tnt.payload = 1;
		mkpt_pkt(&pt, &pkt);
	}
	n = mkpt_fini(&pt);
	mkp_auxtrace(&m, pt.buf, n, 0, 100, (uint32_t)-1);
	f = mkp_file(&m, &size);
	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	d = pr_decode_run(&rp);
	prt_ptr(d);
	out = open_memstream(&text, &len);
	n = pr_report_print(d, out);
	fclose(out);
	prt_uint_eq(n, 1);
	prt_check(strstr(text, "no trace progress (endless loop)"));
	pr_decode_free(d);
	pr_replay_fini(&rp);
	free(text);
	free(f);
	free(m.data);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_decode: a JIT page rewritten in place and a BPF "
		"address reused decode each version in its own time",
		flow_revisions_and_reuse);
	prt_run(suite, "pr_decode: -j 2 gives the same flow",
		flow_parallel);
	prt_run(suite, "pr_decode: a queue split over 7 AUXTRACE buffers "
		"decodes as one", split_buffers);
	prt_run(suite, "pr_decode: --no-flowjit: the same trace has no code, "
		"errors are reported by region", no_flowjit);
	prt_run(suite, "pr_decode: code looping on direct jumps without "
		"packets stops with an error, no hang", endless_loop);
	return prt_exit(&suite);
}
