// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_raw: decode sessions on traces made with libipt's
 * packet encoder against small code images.
 */
#include "pr_raw.h"
#include "pr_test.h"

#include <intel-pt.h>

#include <stdlib.h>

/* A fixture: a code file, a trace file, options and captured output. */
struct raw_fixture {
	char code[64];
	char trace[64];
	struct pr_opts opts;
	struct pr_raw raw;
	int have_raw;
	struct prt_capture cap;

	struct prt_result (*init)(struct raw_fixture *);
	struct prt_result (*fini)(struct raw_fixture *);
};

/* The code at 0x1000: nop; jmp +1; int3 (skipped); nop; jmp *%rax. */
static const uint8_t code_bytes[] = {
	0x90, 0xeb, 0x01, 0xcc, 0x90, 0xff, 0xe0
};

static struct prt_result rfx_init(struct raw_fixture *fx)
{
	prt_int_eq(prt_tmpfile(fx->code, code_bytes, sizeof(code_bytes)), 0);
	fx->trace[0] = 0;
	prt_int_eq(pr_opts_init(&fx->opts), 0);
	fx->have_raw = 0;
	prt_int_eq(prt_capture_open(&fx->cap), 0);

	return prt_passed();
}

static struct prt_result rfx_fini(struct raw_fixture *fx)
{
	if (fx->have_raw)
		pr_raw_fini(&fx->raw);
	pr_opts_fini(&fx->opts);
	unlink(fx->code);
	if (fx->trace[0])
		unlink(fx->trace);
	prt_capture_close(&fx->cap);

	return prt_passed();
}

/* Trace kinds the fixture can encode. */
enum trace_kind {
	/* PSB, MODE.EXEC 64-bit, PSBEND, TIP.PGE 0x1000, TIP.PGD 0x3000. */
	trace_enable_disable,

	/* The same with TIP.PGE 0x2000 (unmapped). */
	trace_nomap,

	/* No PSB at all. */
	trace_garbage
};

/* Encode a trace of @kind into the fixture's trace file.
 *
 * Returns a passed result on success.
 */
static struct prt_result rfx_trace(struct raw_fixture *fx,
				   enum trace_kind kind)
{
	struct pt_encoder *encoder;
	struct pt_packet packets[5];
	struct pt_config config;
	uint8_t buf[256];
	uint64_t size;
	int idx, npackets;

	memset(packets, 0, sizeof(packets));
	packets[0].type = ppt_psb;
	packets[1].type = ppt_mode;
	packets[1].payload.mode.leaf = pt_mol_exec;
	packets[1].payload.mode.bits.exec.csl = 1;
	packets[2].type = ppt_psbend;
	packets[3].type = ppt_tip_pge;
	packets[3].payload.ip.ipc = pt_ipc_sext_48;
	packets[3].payload.ip.ip = kind == trace_nomap ? 0x2000 : 0x1000;
	packets[4].type = ppt_tip_pgd;
	packets[4].payload.ip.ipc = pt_ipc_sext_48;
	packets[4].payload.ip.ip = 0x3000;
	npackets = 5;

	if (kind == trace_garbage) {
		memset(buf, 0x55, 64);
		prt_int_eq(prt_tmpfile(fx->trace, buf, 64), 0);
		return prt_passed();
	}

	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + sizeof(buf);
	encoder = pt_alloc_encoder(&config);
	prt_ptr(encoder);

	for (idx = 0; idx < npackets; ++idx) {
		if (pt_enc_next(encoder, &packets[idx]) < 0) {
			pt_free_encoder(encoder);
			prt_fail("failed to encode packet %d", idx);
		}
	}

	prt_int_eq(pt_enc_get_offset(encoder, &size), 0);
	pt_free_encoder(encoder);

	prt_int_eq(prt_tmpfile(fx->trace, buf, (size_t) size), 0);
	return prt_passed();
}

/* Parse options @args (NULL-terminated), with "--raw CODE:0x1000" first
 * and "--pt TRACE" last, set up the session and decode.
 */
static struct prt_result rfx_decode(struct raw_fixture *fx,
				    const char *const *args)
{
	const char *argv[32];
	char raw[96];
	int argc;

	snprintf(raw, sizeof(raw), "%s:0x1000", fx->code);
	argc = 0;
	argv[argc++] = "--raw";
	argv[argc++] = raw;
	while (args && *args && argc < 28)
		argv[argc++] = *args++;
	argv[argc++] = "--pt";
	argv[argc++] = fx->trace;
	argv[argc] = NULL;

	prt_int_eq(pr_opts_parse(&fx->opts, argc, (char *const *) argv,
				 "test", fx->cap.out, fx->cap.err),
		   pr_opts_decode);
	prt_int_eq(pr_raw_init(&fx->raw, &fx->opts, fx->cap.out,
			       fx->cap.err), 0);
	fx->have_raw = 1;
	prt_int_eq(pr_raw_decode(&fx->raw), 0);

	return prt_passed();
}

/* The decoded output so far. */
static const char *rfx_out(struct raw_fixture *fx)
{
	fflush(fx->cap.out);
	return fx->cap.out_text ? fx->cap.out_text : "";
}

static struct prt_result init_null(void)
{
	struct pr_opts opts;
	struct pr_raw raw;

	prt_int_eq(pr_opts_init(&opts), 0);
	prt_int_eq(pr_raw_init(NULL, &opts, stdout, stderr), -pte_invalid);
	prt_int_eq(pr_raw_init(&raw, NULL, stdout, stderr), -pte_invalid);
	prt_int_eq(pr_raw_init(&raw, &opts, NULL, stderr), -pte_invalid);
	prt_int_eq(pr_raw_init(&raw, &opts, stdout, NULL), -pte_invalid);
	prt_int_eq(pr_raw_decode(NULL), -pte_invalid);
	pr_raw_fini(NULL);
	pr_opts_fini(&opts);

	return prt_passed();
}

/* Decode a @kind trace with extra options @args and expect @expected. */
static struct prt_result decode(struct raw_fixture *fx, enum trace_kind kind,
				const char *const *args, const char *expected)
{
	struct prt_result result;

	result = rfx_trace(fx, kind);
	if (result.failed)
		return result;

	result = rfx_decode(fx, args);
	if (result.failed)
		return result;

	prt_str_eq(rfx_out(fx), expected);
	return prt_passed();
}

static struct prt_result counts(struct raw_fixture *fx,
				const char *const *args, uint64_t ninsn,
				uint64_t nblocks)
{
	struct prt_result result;

	result = rfx_trace(fx, trace_enable_disable);
	if (result.failed)
		return result;

	result = rfx_decode(fx, args);
	if (result.failed)
		return result;

	prt_uint_eq(fx->raw.ninsn, ninsn);
	prt_uint_eq(fx->raw.nblocks, nblocks);
	prt_uint_eq(fx->raw.nsync, 1);
	prt_uint_eq(fx->raw.nerrors, 0);

	return prt_passed();
}

static struct prt_result garbage(struct raw_fixture *fx)
{
	struct prt_result result;

	result = decode(fx, trace_garbage, NULL, "");
	if (result.failed)
		return result;

	prt_uint_eq(fx->raw.nsync, 0);
	return prt_passed();
}

static struct prt_result missing_trace(struct raw_fixture *fx)
{
	static const char *const argv[] = { "--pt", "/nonexistent/t.pt",
		NULL };

	prt_int_eq(pr_opts_parse(&fx->opts, 2, (char *const *) argv, "test",
				 fx->cap.out, fx->cap.err), pr_opts_decode);
	prt_int_eq(pr_raw_init(&fx->raw, &fx->opts, fx->cap.out, fx->cap.err),
		   -pte_bad_file);
	fflush(fx->cap.err);
	prt_check(fx->cap.err_text &&
		  strstr(fx->cap.err_text, "/nonexistent/t.pt"));

	return prt_passed();
}

static struct prt_result missing_code(struct raw_fixture *fx)
{
	static const char *const argv[] = { "--raw", "/nonexistent/c:0x1000",
		"--pt", "/nonexistent/t.pt", NULL };

	prt_int_eq(pr_opts_parse(&fx->opts, 4, (char *const *) argv, "test",
				 fx->cap.out, fx->cap.err), pr_opts_decode);
	prt_check(pr_raw_init(&fx->raw, &fx->opts, fx->cap.out,
			      fx->cap.err) < 0);
	fflush(fx->cap.err);
	prt_check(fx->cap.err_text &&
		  strstr(fx->cap.err_text, "/nonexistent/c"));

	return prt_passed();
}

static struct prt_result bad_cpu(struct raw_fixture *fx)
{
	static const char *const args[] = { "--cpu", "0/0", "--no-inst",
		NULL };

	return decode(fx, trace_enable_disable, args,
		      "[0, 0: config error: unknown cpu]\n[enabled]\n"
		      "0000000000001000\n0000000000001001\n0000000000001004\n"
		      "0000000000001005\n[disabled]\n");
}

int main(void)
{
	struct raw_fixture rfx = { .init = rfx_init, .fini = rfx_fini };
	struct prt_suite suite = { 0, 0 };
	static const char *const insn[] = { "--insn-decoder", "--no-inst",
		NULL };
	static const char *const block[] = { "--no-inst", NULL };
	static const char *const blocks[] = { "--block:show-blocks",
		"--no-inst", NULL };
	static const char *const stat[] = { "--stat", "--quiet", NULL };
	static const char *const insn_stat[] = { "--insn-decoder",
		"--stat:insn", "--quiet", NULL };
	static const char *const event_ip[] = { "--insn-decoder",
		"--event:ip", "--no-inst", NULL };
	static const char *const text[] = { "--insn-decoder", NULL };
	static const char *const nomap_insn[] = { "--insn-decoder", NULL };
	static const char *const check[] = { "--insn-decoder", "--check",
		"--no-inst", NULL };
	const char *flow = "[enabled]\n0000000000001000\n0000000000001001\n"
		"0000000000001004\n0000000000001005\n[disabled]\n";

	prt_run(suite, "pr_raw: init, decode and fini reject NULL", init_null);
	prt_run_fx(suite, "pr_raw: the insn decoder prints each instruction "
		   "between [enabled] and [disabled]", decode, rfx,
		   trace_enable_disable, insn, flow);
	prt_run_fx(suite, "pr_raw: the block decoder walks a block across a "
		   "direct jump", decode, rfx, trace_enable_disable, block,
		   flow);
	prt_run_fx(suite, "pr_raw: --block:show-blocks prints [block]",
		   decode, rfx, trace_enable_disable, blocks,
		   "[enabled]\n[block]\n0000000000001000\n0000000000001001\n"
		   "0000000000001004\n0000000000001005\n[disabled]\n");
	prt_run_fx(suite, "pr_raw: --stat --quiet prints only insn and block "
		   "counts", decode, rfx, trace_enable_disable, stat,
		   "insn: 4.\nblocks:\t1.\n");
	prt_run_fx(suite, "pr_raw: --stat:insn counts instructions",
		   decode, rfx, trace_enable_disable, insn_stat, "insn: 4.\n");
	prt_run_fx(suite, "pr_raw: --event:ip prints the enable IP", decode,
		   rfx, trace_enable_disable, event_ip,
		   "[enabled, ip: 0000000000001000]\n0000000000001000\n"
		   "0000000000001001\n0000000000001004\n0000000000001005\n"
		   "[disabled, ip: 0000000000003000]\n");
	prt_run_fx(suite, "pr_raw: without --no-inst instructions are "
		   "disassembled", decode, rfx, trace_enable_disable, text,
		   "[enabled]\n0000000000001000  nop\n"
		   "0000000000001001  jmp 0x1004\n0000000000001004  nop\n"
		   "0000000000001005  jmp rax\n[disabled]\n");
	prt_run_fx(suite, "pr_raw: --check finds nothing wrong in a good trace",
		   decode, rfx, trace_enable_disable, check, flow);
	prt_run_fx(suite, "pr_raw: the block decoder counts one block of four",
		   counts, rfx, block, 4, 1);
	prt_run_fx(suite, "pr_raw: unmapped code is reported as an error at "
		   "its IP", decode, rfx, trace_nomap, nomap_insn,
		   "[enabled]\n[22, 2000: error: no memory mapped at this "
		   "address]\n");
	prt_run_fx(suite, "pr_raw: a trace without PSB decodes to nothing",
		   garbage, rfx);
	prt_run_fx(suite, "pr_raw: a missing trace file fails setup with a "
		   "message", missing_trace, rfx);
	prt_run_fx(suite, "pr_raw: a missing code file fails setup with a "
		   "message", missing_code, rfx);
	prt_run_fx(suite, "pr_raw: an unknown --cpu prints ptxed's config "
		   "error and decodes", bad_cpu, rfx);

	return prt_exit(&suite);
}
