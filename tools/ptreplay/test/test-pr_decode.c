// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_decode: decoding through the versioned store, seen
 * through the instruction flow (the other outputs: test-pr_report.c).
 */
#include "pr_export.h"
#include "pr_mkperf.h"
#include "pr_replay.h"
#include "pr_report.h"
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

/* A PSB after a CYC whose last byte is 02 and a TNT 82: the queue's
 * bytes read 02 82 nine times, and the PSB is the last 16 of them.
 * Decoded from the whole queue or in pieces (one per PSB, also with
 * -j 2), all 12 conditional branches are decoded; cut at the first 02,
 * the piece before would lose its CYC and TNT and 6 instructions.
 */
static int run_psb_run(size_t piece, int jobs, uint32_t outputs,
		       char **text)
{
	struct pr_replay_opts opts = { .jobs = jobs, .no_files = 1,
				       .outputs = outputs, .piece = piece };
	uint8_t code[28];
	struct pt_packet pkt;
	struct mkp m = { 0 };
	struct mkpt pt;
	uint64_t nerr;
	size_t size, n;
	uint8_t *f;
	int i;

	/* twelve "je .+2" (either way the next one), then nops */
	for (i = 0; i < 12; ++i) {
		code[2 * i] = 0x74;
		code[2 * i + 1] = 0x00;
	}
	memset(code + 24, 0x90, 4);
	mkp_auxtrace_info(&m);
	mkp_flowjit(&m, 7, 1, 100, 0x10000, code, sizeof(code), 0, 1, 10,
		    4096, -1, 0, flowjit_csum);
	mkpt_init(&pt);
	mkpt_psb(&pt, 100);
	mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	for (i = 0; i < 2; ++i) {
		/* CYC 0x21 is 0f 02 */
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_cyc;
		pkt.payload.cyc.value = 0x21;
		mkpt_pkt(&pt, &pkt);
		/* NNNNNT is 82 */
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_tnt_8;
		pkt.payload.tnt.bit_size = 6;
		pkt.payload.tnt.payload = 1;
		mkpt_pkt(&pt, &pkt);
		if (i)
			break;
		/* PSB+ with the IP of the next instruction */
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_psb;
		mkpt_pkt(&pt, &pkt);
		mkpt_tsc(&pt, 200);
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_mode;
		pkt.payload.mode.leaf = pt_mol_exec;
		pkt.payload.mode.bits.exec.csl = 1;
		mkpt_pkt(&pt, &pkt);
		mkpt_tip(&pt, ppt_fup, 0x1000c);
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_psbend;
		mkpt_pkt(&pt, &pkt);
	}
	/* tracing stops (an interrupt, user-only tracing) */
	mkpt_tip(&pt, ppt_fup, 0x10018);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	n = mkpt_fini(&pt);
	mkp_auxtrace(&m, pt.buf, n, 0, 100, (uint32_t)-1);
	f = mkp_file(&m, &size);
	free(m.data);
	return mkp_decode_file(&opts, f, size, text, &nerr, NULL);
}

/* Drop the decode time of @text (it varies from run to run): the text
 * line, or the JSON member's value.
 */
static void drop_decode_time(char *text)
{
	char *at = strstr(text, "decode time:");
	char *nl = at ? strchr(at, '\n') : NULL;

	if (at && nl)
		memmove(at, nl + 1, strlen(nl + 1) + 1);
	at = strstr(text, "\"decode_seconds\":");
	if (at) {
		at += strlen("\"decode_seconds\":");
		nl = at + strspn(at, "0123456789.");
		memmove(at, nl, strlen(nl) + 1);
	}
}

static struct prt_result psb_at_the_end_of_a_run(void)
{
	static const uint32_t outs[] = {
		PR_OUT_FLOW | PR_OUT_HEALTH, PR_OUT_HEALTH,
	};
	size_t i;

	for (i = 0; i < sizeof(outs) / sizeof(outs[0]); ++i) {
		char *a = NULL, *b = NULL, *c = NULL;

		prt_int_eq(run_psb_run(0, 1, outs[i], &a), 0);
		prt_check(strstr(a, "instructions decoded:   12\n"));
		prt_check(strstr(a, "decode errors:          0\n"));
		drop_decode_time(a);
		prt_int_eq(run_psb_run(1, 1, outs[i], &b), 0);
		drop_decode_time(b);
		prt_check(!strcmp(a, b));
		prt_int_eq(run_psb_run(1, 2, outs[i], &c), 0);
		drop_decode_time(c);
		prt_check(!strcmp(a, c));
		free(a);
		free(b);
		free(c);
	}
	return prt_passed();
}

/* Decode the tie scenario (pr_mkperf.h) into *@text with @outputs. */
static int run_tie(uint32_t outputs, int with_ip, int mtc, int lost,
		   char **text, uint64_t *nerr, uint64_t *nsus)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = outputs };
	size_t size;
	uint8_t *f = mkp_tie_file(flowjit_csum, with_ip, mtc, lost, 0, &size);

	return mkp_decode_file(&opts, f, size, text, nerr, nsus);
}

/* A page rewritten and run again with no timing packet between: the
 * fault's TIP.PGE at the IP its record names gives the new revision; an
 * interrupt's TIP.PGE at another IP of the page does not.
 */
static struct prt_result tie_rewrite_without_time(void)
{
	uint64_t nerr, nsus;
	char *text = NULL;

	prt_int_eq(run_tie(PR_OUT_FLOW, 1, 0, 0, &text, &nerr, &nsus), 0);
	prt_uint_eq(nerr, 0);
	prt_uint_eq(nsus, 0);
	prt_check(!strcmp(text, MKP_TIE_FLOW));
	free(text);
	return prt_passed();
}

/* The health report says what tied each switch and what each revision
 * ran: revision 1 by its fault's event (the clock, 990, is before its
 * time 1000), then revision 2 by event from the 8th instruction on.
 */
static struct prt_result tie_health(void)
{
	uint64_t nerr, nsus;
	char *text = NULL;

	prt_int_eq(run_tie(PR_OUT_HEALTH, 1, 0, 0, &text, &nerr, &nsus), 0);
	prt_check(strstr(text, "user JIT faults:      2 (revisions missing "
			 "0)\n"));
	prt_check(strstr(text, "revision switches:      1 (by event 1, by "
			 "time 0, late 0)\n"));
	prt_check(strstr(text, "  tid 100 0x10000: revision 1 (7 insns) -> 2 "
			 "by event from insn 8\n"));
	prt_check(strstr(text, "  tid 100 0x10000: revision 2 (2 insns) to "
			 "the end, since event\n"));
	free(text);
	return prt_passed();
}

/* --no-tie: by time only, the third run decodes the old bytes. */
static struct prt_result tie_off(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = PR_OUT_FLOW,
				       .no_tie = 1 };
	uint64_t nerr, nsus;
	char *text = NULL;
	size_t size;
	uint8_t *f = mkp_tie_file(flowjit_csum, 1, 0, 0, 0, &size);

	prt_int_eq(mkp_decode_file(&opts, f, size, &text, &nerr, &nsus), 0);
	prt_check(!strcmp(text, MKP_TIE_FLOW_OLD));
	free(text);
	return prt_passed();
}

/* Records without the fault's IP (older kernels): by time only, as
 * before; the third run decodes the old bytes.
 */
static struct prt_result tie_needs_the_ip(void)
{
	uint64_t nerr, nsus;
	char *text = NULL;

	prt_int_eq(run_tie(PR_OUT_FLOW, 0, 0, 0, &text, &nerr, &nsus), 0);
	prt_check(!strcmp(text, MKP_TIE_FLOW_OLD));
	free(text);
	return prt_passed();
}

/* With MTC the clock lags by less than 257 periods (2 TSC ticks here): a
 * TIP.PGE at clock 990 is no fault of time 1600, even at its IP.
 */
static struct prt_result tie_bounded_by_mtc(void)
{
	uint64_t nerr, nsus;
	char *text = NULL;

	prt_int_eq(run_tie(PR_OUT_FLOW, 1, 1, 0, &text, &nerr, &nsus), 0);
	prt_check(!strcmp(text, MKP_TIE_FLOW_OLD));
	free(text);
	return prt_passed();
}

/* Decode the unordered scenario with revision 2 at @t2: flow with its
 * marks into *@flow, the health report into *@health.
 */
static int run_unordered(uint64_t t2, int insn, char **flow, char **health)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = PR_OUT_FLOW,
				       .flow_errors = 1, .insn_decoder = insn };
	uint64_t nerr, nsus;
	size_t size;
	uint8_t *f = mkp_unordered_file(flowjit_csum, t2, &size);
	int ret;

	ret = mkp_decode_file(&opts, f, size, flow, &nerr, &nsus);
	if (ret)
		return ret;
	opts.outputs = PR_OUT_HEALTH;
	opts.flow_errors = 0;
	f = mkp_unordered_file(flowjit_csum, t2, &size);
	return mkp_decode_file(&opts, f, size, health, &nerr, &nsus);
}

/* unordered_within_the_lag() with the block (@insn 0) or instruction
 * flow decoder: 0 if right
 */
static int unordered_with(int insn)
{
	char *flow = NULL, *health = NULL, *mark, *same, *differs;
	int bad;

	if (run_unordered(991, insn, &flow, &health))
		return -1;
	mark = strstr(flow, " instruction trace error type 1 tid 100 ip "
		      "0x10001 code 1: flowjit image may be older than the "
		      "code that ran");
	same = strstr(flow, "10000\n");
	differs = strstr(flow, "10001\n");
	bad = !(mark && same && differs && same < mark && mark < differs) ||
	      !strstr(health, "unordered instructions: 2 (in 1 runs");
	free(flow);
	free(health);
	return bad;
}

/* A newer revision within the clock's lag (990 + 2 ticks) whose bytes
 * differ where the thread ran: the instructions whose bytes differ
 * (0x10001 and 0x10002, not 0x10000 nor 0x10003) are counted unordered,
 * the flow marked before the first; one past the lag changes nothing.
 */
static struct prt_result unordered_within_the_lag(void)
{
	char *flow = NULL, *health = NULL;
	int insn;

	for (insn = 0; insn < 2; insn++)
		prt_check(!unordered_with(insn));
	prt_int_eq(run_unordered(993, 0, &flow, &health), 0);
	prt_check(!strstr(flow, "trace error"));
	prt_check(strstr(flow, "10003\n"));
	prt_check(strstr(health, "unordered instructions: 0 (in 0 runs"));
	free(flow);
	free(health);
	return prt_passed();
}

/* Revision 2's record lost (a PERF_RECORD_LOST at 1300, after revision
 * 1's record at 1000): the runs before the loss are trusted, the last one
 * (clock 1700) decodes revision 1's bytes and is counted suspect and
 * marked in the flow, never silently.
 */
static struct prt_result tie_lost_is_suspect(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = PR_OUT_FLOW,
				       .flow_errors = 1 };
	uint64_t nerr, nsus;
	char *text = NULL, *mark;
	size_t size;
	uint8_t *f = mkp_tie_file(flowjit_csum, 1, 0, 1, 0, &size);

	prt_int_eq(mkp_decode_file(&opts, f, size, &text, &nerr, &nsus), 0);
	prt_uint_eq(nsus, 4);
	mark = strstr(text, " instruction trace error type 1 tid 100 ip 0x10000"
		      " code 1: flowjit image may be stale (records or trace lost)\n");
	prt_check(mark);
	/* after the 7 trusted instructions, before the 4 suspect ones */
	prt_check(mark == text + 7 * 24);
	prt_check(!strcmp(mark + strlen(mark) - 4 * 24,
			  "  100             10000\n"
			  "  100             10001\n"
			  "  100             10002\n"
			  "  100             10003\n"));
	free(text);
	return prt_passed();
}

/* An overflow swallowed revision 2's TIP.PGE (the trace resumes at its
 * IP after an OVF, whose FUP ties nothing): the clock says revision 1,
 * and what runs after the overflow is counted suspect, never silently
 * decoded as certain.
 */
static struct prt_result tie_overflow_is_suspect(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .outputs = PR_OUT_FLOW,
				       .flow_errors = 1 };
	uint64_t nerr, nsus;
	char *text = NULL;
	size_t size;
	uint8_t *f = mkp_tie_file(flowjit_csum, 1, 0, 0, 1, &size);

	prt_int_eq(mkp_decode_file(&opts, f, size, &text, &nerr, &nsus), 0);
	prt_check(strstr(text, "Overflow packet"));
	prt_check(strstr(text, "flowjit image may be stale (records or trace "
			 "lost)"));
	prt_check(nsus > 0);
	free(text);
	return prt_passed();
}

/* Decode the calls scenario with @jobs threads and @outputs (and the
 * exporter), with the instruction flow decoder if @insn, in pieces of
 * @piece bytes (0: the default); its folded stacks go to *@folded, the
 * report to *@text.
 */
static int run_export_with(int jobs, uint32_t outputs, int insn,
			   size_t piece, char **folded, char **text)
{
	struct pr_replay_opts opts = { .jobs = jobs, .no_files = 1,
		.outputs = outputs | PR_OUT_EXPORT, .folded = "-",
		.insn_decoder = insn, .piece = piece };
	struct pr_export *x[2];
	struct pr_decode *d;
	struct pr_replay rp;
	size_t size, len;
	uint8_t *f = mkp_calls_file(flowjit_csum, 1, &size);
	FILE *out;
	int ret = -1;

	pr_replay_init(&rp, &opts);
	if (pr_replay_load(&rp, f, size) < 0)
		goto out;
	d = pr_decode_run(&rp);
	if (!d || d->nq != 2)
		goto out_decode;
	x[0] = d->q[0].x;
	x[1] = d->q[1].x;
	out = open_memstream(folded, &len);
	ret = pr_export_folded(out, x, 2);
	fclose(out);
	out = open_memstream(text, &len);
	pr_report_print(d, out);
	fclose(out);
out_decode:
	pr_decode_free(d);
out:
	pr_replay_fini(&rp);
	free(f);
	return ret;
}

/* run_export_with() with the block decoder, whole queues. */
static int run_export(int jobs, uint32_t outputs, char **folded, char **text)
{
	return run_export_with(jobs, outputs, 0, 0, folded, text);
}

/* The exporter gets the same calls, returns and instructions from the
 * block decoder as from the instruction flow decoder, and from a queue
 * decoded a piece per PSB (also with -j 2) as from the whole.
 */
static struct prt_result export_decoders(void)
{
	static const struct { int jobs, insn; size_t piece; } runs[] = {
		{ 1, 1, 0 }, { 2, 1, 0 }, { 1, 0, 1 }, { 2, 0, 1 },
		{ 2, 1, 1 },
	};
	char *folded, *text;
	size_t i;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); ++i) {
		folded = text = NULL;
		prt_int_eq(run_export_with(runs[i].jobs, PR_OUT_PROFILE,
					   runs[i].insn, runs[i].piece,
					   &folded, &text), 0);
		prt_str_eq(folded, MKP_CALLS_FOLDED);
		free(folded);
		free(text);
	}
	return prt_passed();
}

/* The decoder's hooks give the exporter every call, return and
 * instruction, with -j 1 and -j 2, and change no other output.
 */
static struct prt_result export_hooks(void)
{
	char *folded = NULL, *text = NULL, *folded2 = NULL, *text2 = NULL;
	char *plain = NULL;
	uint64_t nerr;
	size_t size;
	uint8_t *f;
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1,
		.outputs = PR_OUT_CALLS | PR_OUT_PROFILE };

	prt_int_eq(run_export(1, PR_OUT_CALLS | PR_OUT_PROFILE, &folded,
			      &text), 0);
	prt_str_eq(folded, MKP_CALLS_FOLDED);
	prt_int_eq(run_export(2, 0, &folded2, &text2), 0);
	prt_str_eq(folded2, MKP_CALLS_FOLDED);
	prt_str_eq(text2, "");
	f = mkp_calls_file(flowjit_csum, 1, &size);
	prt_int_eq(mkp_decode_file(&opts, f, size, &plain, &nerr, NULL), 0);
	free(folded);
	free(folded2);
	free(text2);
	prt_check(text && plain);
	prt_check(strstr(text, "return jit:100:0x20000+0x6 -> "
			       "jit:100:0x10000+0xa"));
	prt_str_eq(text, plain);
	free(text);
	free(plain);
	return prt_passed();
}

static uint64_t prt_sections;

/* Decode a scenario (0: the JIT scenario, 1-3: tie scenarios) with every
 * output, with @read_callback, into *@text.
 */
static size_t opt_piece;
static int opt_stream, opt_json, opt_jobs = 1;

static int run_outputs(int scenario, uint32_t outputs, int read_callback,
		       int insn_decoder, char **text)
{
	struct pr_replay_opts opts = { .jobs = opt_jobs, .outputs = outputs,
				       .read_callback = read_callback,
				       .insn_decoder = insn_decoder,
				       .flow_errors = 1, .piece = opt_piece,
				       .json = opt_json };
	uint64_t nerr;
	size_t size;
	uint8_t *f;
	int status;

	if (!scenario)
		f = mkp_scenario_file(flowjit_csum, 1, &size);
	else
		f = mkp_tie_file(flowjit_csum, scenario != 2, scenario == 3,
				 0, 0, &size);
	status = opt_stream ? mkp_decode_stream(&opts, f, size, text) :
			      mkp_decode_file(&opts, f, size, text, &nerr, NULL);
	if (!read_callback)
		prt_sections += mkp_last_sections;
	if (*text)
		drop_decode_time(*text);
	return status;
}

static int run_all(int scenario, int read_callback, char **text)
{
	return run_outputs(scenario, PR_OUT_FLOW | PR_OUT_CALLS |
			   PR_OUT_PROFILE | PR_OUT_HEALTH, read_callback, 0,
			   text);
}

/* Without --flow the block decoder gives the same calls, profile and
 * health report as the instruction flow decoder, through sections or
 * the callback.
 */
static struct prt_result block_equals_insn(void)
{
	static const uint32_t outs[] = {
		PR_OUT_CALLS | PR_OUT_PROFILE | PR_OUT_HEALTH,
		PR_OUT_CALLS, PR_OUT_PROFILE, PR_OUT_HEALTH,
	};
	size_t i;
	int sc, cb;

	for (sc = 0; sc < 4; ++sc)
		for (i = 0; i < sizeof(outs) / sizeof(outs[0]); ++i)
			for (cb = 0; cb < 2; ++cb) {
				char *a = NULL, *b = NULL;

				prt_int_eq(run_outputs(sc, outs[i], cb, 0, &a),
					   0);
				prt_int_eq(run_outputs(sc, outs[i], cb, 1, &b),
					   0);
				prt_check(!strcmp(a, b));
				free(a);
				free(b);
			}
	return prt_passed();
}

/* Code read from image sections (switched per epoch) decodes as code
 * read through the callback at the decoder's time.
 */
static struct prt_result sections_equal_callback(void)
{
	int sc;

	for (sc = 0; sc < 4; ++sc) {
		char *a = NULL, *b = NULL;

		prt_int_eq(run_all(sc, 0, &a), 0);
		prt_int_eq(run_all(sc, 1, &b), 0);
		prt_check(strstr(a, "instructions decoded:"));
		prt_check(!strcmp(a, b));
		free(a);
		free(b);
	}
	/* and sections were used */
	prt_check(prt_sections > 0);
	return prt_passed();
}

/* Pieces of a few bytes (a decoder for each PSB to the next, on without
 * trace to where the next starts) decode as the whole queue.
 */
static struct prt_result pieces_equal_whole(void)
{
	static const uint32_t outs[] = {
		PR_OUT_FLOW | PR_OUT_CALLS | PR_OUT_PROFILE | PR_OUT_HEALTH,
		PR_OUT_CALLS | PR_OUT_PROFILE | PR_OUT_HEALTH,
	};
	size_t i;
	int sc;

	for (sc = 0; sc < 4; ++sc)
		for (i = 0; i < sizeof(outs) / sizeof(outs[0]); ++i) {
			char *a = NULL, *b = NULL;

			opt_piece = 0;
			prt_int_eq(run_outputs(sc, outs[i], 0, 0, &a), 0);
			opt_piece = 1;
			prt_int_eq(run_outputs(sc, outs[i], 0, 0, &b), 0);
			opt_piece = 0;
			prt_check(!strcmp(a, b));
			free(a);
			free(b);
		}
	return prt_passed();
}

/* Lines written while decoding (opts.stream) are what pr_report_print()
 * prints from the lines kept, in text and JSON, with -j 1 and -j 2.
 */
static struct prt_result stream_equals_report(void)
{
	static const uint32_t outs[] = {
		PR_OUT_FLOW | PR_OUT_CALLS | PR_OUT_PROFILE | PR_OUT_HEALTH,
		PR_OUT_FLOW, PR_OUT_CALLS, PR_OUT_CALLS | PR_OUT_PROFILE,
	};
	size_t i;
	int sc;

	for (sc = 0; sc < 4; ++sc)
		for (i = 0; i < 2 * 2 * sizeof(outs) / sizeof(outs[0]); ++i) {
			char *a = NULL, *b = NULL;

			opt_json = i & 1;
			opt_jobs = 1 + ((i >> 1) & 1);
			prt_int_eq(run_outputs(sc, outs[i >> 2], 0, 0, &a), 0);
			opt_stream = 1;
			prt_int_eq(run_outputs(sc, outs[i >> 2], 0, 0, &b), 0);
			opt_stream = 0;
			prt_check(!strcmp(a, b));
			free(a);
			free(b);
		}
	opt_json = 0;
	opt_jobs = 1;
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
	prt_run(suite, "pr_decode: code read from image sections switched "
		"per store epoch gives the same outputs as the read callback "
		"(JIT and tie scenarios)", sections_equal_callback);
	prt_run(suite, "pr_decode: a queue decoded in pieces (one per PSB) "
		"gives the outputs of the whole (JIT and tie scenarios)",
		pieces_equal_whole);
	prt_run(suite, "pr_decode: flow and call lines written while "
		"decoding equal the report's (text, JSON, -j 1 and 2)",
		stream_equals_report);
	prt_run(suite, "pr_decode: the block decoder (calls, profile, health) "
		"gives what the instruction flow decoder gives (JIT and tie "
		"scenarios, sections and callback)", block_equals_insn);
	prt_run(suite, "pr_decode: a queue split over 7 AUXTRACE buffers "
		"decodes as one", split_buffers);
	prt_run(suite, "pr_decode: --no-flowjit: the same trace has no code, "
		"errors are reported by region", no_flowjit);
	prt_run(suite, "pr_decode: code looping on direct jumps without "
		"packets stops with an error, no hang", endless_loop);
	prt_run(suite, "pr_decode: a PSB after a packet ending in 02 and a "
		"TNT 82 is found where it starts: pieces (also -j 2) decode "
		"all of a trace cut there", psb_at_the_end_of_a_run);
	prt_run(suite, "pr_decode: a page rewritten and run again with no "
		"timing packet between decodes the new revision from its "
		"fault's TIP.PGE, not from an interrupt's",
		tie_rewrite_without_time);
	prt_run(suite, "pr_decode: the health report gives each revision "
		"switch, what tied it and the instructions of each revision",
		tie_health);
	prt_run(suite, "pr_decode: --no-tie decodes by time only (the old "
		"revision runs again)", tie_off);
	prt_run(suite, "pr_decode: records without the fault IP decode by "
		"time only (the old revision runs again)", tie_needs_the_ip);
	prt_run(suite, "pr_decode: with MTC, a TIP.PGE more than the clock's "
		"lag before a fault's time does not tie it", tie_bounded_by_mtc);
	prt_run(suite, "pr_decode: records lost: instructions from an image "
		"a lost one may have replaced are counted", tie_lost_is_suspect);
	prt_run(suite, "pr_decode: an overflow that may have lost a fault's "
		"TIP.PGE makes the old revision's instructions suspect",
		tie_overflow_is_suspect);
	prt_run(suite, "pr_decode: a newer revision within the clock's lag "
		"whose bytes differ marks the instructions as unordered",
		unordered_within_the_lag);
	prt_run(suite, "pr_decode: calls, returns and instructions reach the "
		"exporter (-j 1, -j 2); the other outputs are unchanged",
		export_hooks);
	prt_run(suite, "pr_decode: the exporter's stacks from the block "
		"decoder equal the instruction flow decoder's, and a piece "
		"per PSB's the whole queue's (-j 1 and 2)", export_decoders);
	return prt_exit(&suite);
}
