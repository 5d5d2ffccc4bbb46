// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_opts: the `ptreplay raw` command line.
 */
#include "pr_opts.h"
#include "pr_test.h"

#include <stdlib.h>

/* A fixture: options plus in-memory output and error streams. */
struct opts_fixture {
	struct pr_opts opts;
	struct prt_capture cap;

	struct prt_result (*init)(struct opts_fixture *);
	struct prt_result (*fini)(struct opts_fixture *);
};

static struct prt_result ofx_init(struct opts_fixture *fx)
{
	prt_int_eq(pr_opts_init(&fx->opts), 0);
	prt_int_eq(prt_capture_open(&fx->cap), 0);

	return prt_passed();
}

static struct prt_result ofx_fini(struct opts_fixture *fx)
{
	pr_opts_fini(&fx->opts);
	pr_opts_fini(&fx->opts);
	prt_capture_close(&fx->cap);

	return prt_passed();
}

/* Parse the NULL-terminated argument list @args. */
static int ofx_parse(struct opts_fixture *fx, const char *const *args)
{
	int argc;

	for (argc = 0; args[argc]; ++argc)
		;

	return pr_opts_parse(&fx->opts, argc, (char *const *) args, "test",
			     fx->cap.out, fx->cap.err);
}

/* Expect @args to be rejected with an error message. */
static struct prt_result rejected(struct opts_fixture *fx,
				  const char *const *args)
{
	prt_int_eq(ofx_parse(fx, args), -pte_bad_config);
	fflush(fx->cap.err);
	prt_check(fx->cap.err_size > 0);

	return prt_passed();
}

static struct prt_result init_null(void)
{
	prt_int_eq(pr_opts_init(NULL), -pte_invalid);
	pr_opts_fini(NULL);
	prt_int_eq(pr_opts_parse(NULL, 0, NULL, NULL, NULL, NULL),
		   -pte_invalid);

	return prt_passed();
}

static struct prt_result defaults(struct opts_fixture *fx)
{
	static const char *const args[] = { "--pt", "t.pt", NULL };

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_int_eq(fx->opts.type, pr_block_decoder);
	prt_str_eq(fx->opts.pt.path, "t.pt");
	prt_uint_eq(fx->opts.nraw, 0);
	prt_uint_eq(fx->opts.config.cpu.vendor, pcv_unknown);
	prt_uint_eq(fx->opts.stat_flags, 0);

	return prt_passed();
}

static struct prt_result raw_images(struct opts_fixture *fx)
{
	static const char *const args[] = {
		"--raw", "a.bin:0x1000", "--raw", "b.bin:0x2:0x1002",
		"--pt", "t.pt:0x10-0x20", NULL
	};

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_uint_eq(fx->opts.nraw, 2);
	prt_str_eq(fx->opts.raw[0].path, "a.bin");
	prt_uint_eq(fx->opts.raw[0].base, 0x1000);
	prt_str_eq(fx->opts.raw[1].path, "b.bin");
	prt_uint_eq(fx->opts.raw[1].offset, 2);
	prt_uint_eq(fx->opts.raw[1].base, 0x1002);
	prt_uint_eq(fx->opts.pt.offset, 0x10);
	prt_uint_eq(fx->opts.pt.size, 0x10);

	return prt_passed();
}

static struct prt_result cpu(struct opts_fixture *fx)
{
	static const char *const args[] = { "--cpu", "6/92", "--pt", "t",
		NULL };

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_uint_eq(fx->opts.config.cpu.vendor, pcv_intel);
	prt_uint_eq(fx->opts.config.cpu.family, 6);
	prt_uint_eq(fx->opts.config.cpu.model, 92);
	prt_uint_eq(fx->opts.config.cpu.stepping, 0);

	return prt_passed();
}

static struct prt_result parse_cpu(void)
{
	struct pt_cpu cpu;

	prt_int_eq(pr_opts_parse_cpu(NULL, "6/92"), -pte_invalid);
	prt_int_eq(pr_opts_parse_cpu(&cpu, NULL), -pte_invalid);

	prt_int_eq(pr_opts_parse_cpu(&cpu, "6/0x4e/3"), 0);
	prt_uint_eq(cpu.model, 78);
	prt_uint_eq(cpu.stepping, 3);

	prt_int_eq(pr_opts_parse_cpu(&cpu, "none"), 0);
	prt_uint_eq(cpu.vendor, pcv_unknown);

	prt_int_eq(pr_opts_parse_cpu(&cpu, "auto"), 0);

	prt_int_eq(pr_opts_parse_cpu(&cpu, "6"), -pte_invalid);
	prt_int_eq(pr_opts_parse_cpu(&cpu, "6/"), -pte_invalid);
	prt_int_eq(pr_opts_parse_cpu(&cpu, "/6"), -pte_invalid);
	prt_int_eq(pr_opts_parse_cpu(&cpu, "6/x"), -pte_invalid);
	prt_int_eq(pr_opts_parse_cpu(&cpu, "6/256"), -pte_invalid);
	prt_int_eq(pr_opts_parse_cpu(&cpu, "6/1/2/3"), -pte_invalid);
	prt_int_eq(pr_opts_parse_cpu(&cpu, "-6/1"), -pte_invalid);

	return prt_passed();
}

static struct prt_result parse_num(void)
{
	uint64_t value;

	prt_int_eq(pr_opts_parse_num(NULL, "1", 1), -pte_invalid);
	prt_int_eq(pr_opts_parse_num(&value, NULL, 1), -pte_invalid);
	prt_int_eq(pr_opts_parse_num(&value, "0x10ff", UINT64_MAX), 0);
	prt_uint_eq(value, 0x10ff);
	prt_int_eq(pr_opts_parse_num(&value, "42", UINT64_MAX), 0);
	prt_uint_eq(value, 42);
	prt_int_eq(pr_opts_parse_num(&value, "256", 255), -pte_bad_config);
	prt_int_eq(pr_opts_parse_num(&value, "", 255), -pte_invalid);
	prt_int_eq(pr_opts_parse_num(&value, "-1", 255), -pte_invalid);
	prt_int_eq(pr_opts_parse_num(&value, "12x", 255), -pte_invalid);
	prt_int_eq(pr_opts_parse_num(&value, "99999999999999999999",
				     UINT64_MAX), -pte_invalid);

	return prt_passed();
}

static struct prt_result timing(struct opts_fixture *fx)
{
	static const char *const args[] = {
		"--mtc-freq", "4", "--nom-freq", "0x10", "--cpuid-0x15.eax",
		"1", "--cpuid-0x15.ebx", "4", "--event:tick", "--pt", "t",
		NULL
	};

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_uint_eq(fx->opts.config.mtc_freq, 4);
	prt_uint_eq(fx->opts.config.nom_freq, 16);
	prt_uint_eq(fx->opts.config.cpuid_0x15_eax, 1);
	prt_uint_eq(fx->opts.config.cpuid_0x15_ebx, 4);
	prt_uint_eq(fx->opts.event_tick, 1);

	return prt_passed();
}

static struct prt_result filters(struct opts_fixture *fx)
{
	static const char *const args[] = {
		"--filter:addr0_cfg", "1", "--filter:addr0_a", "0x1000",
		"--filter:addr0_b", "0x10ff", "--filter:addr3_cfg", "2",
		"--filter:addr3_b", "7", "--pt", "t", NULL
	};
	const struct pt_conf_addr_filter *filter;

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	filter = &fx->opts.config.addr_filter;
	prt_uint_eq(filter->config.ctl.addr0_cfg, 1);
	prt_uint_eq(filter->config.ctl.addr3_cfg, 2);
	prt_uint_eq(filter->addr0_a, 0x1000);
	prt_uint_eq(filter->addr0_b, 0x10ff);
	prt_uint_eq(filter->addr3_b, 7);

	return prt_passed();
}

static struct prt_result stat_all_block(struct opts_fixture *fx)
{
	static const char *const args[] = { "--stat", "--pt", "t", NULL };

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_uint_eq(fx->opts.stat_flags, pr_stat_insn | pr_stat_blocks);

	return prt_passed();
}

static struct prt_result stat_all_insn(struct opts_fixture *fx)
{
	static const char *const args[] = { "--insn-decoder", "--stat",
		"--pt", "t", NULL };

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_int_eq(fx->opts.type, pr_insn_decoder);
	prt_uint_eq(fx->opts.stat_flags, pr_stat_insn);

	return prt_passed();
}

static struct prt_result stat_selected(struct opts_fixture *fx)
{
	static const char *const args[] = { "--stat", "--stat:blocks",
		"--pt", "t", NULL };

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_uint_eq(fx->opts.stat_flags, pr_stat_blocks);

	return prt_passed();
}

static struct prt_result flags(struct opts_fixture *fx)
{
	static const char *const args[] = {
		"--block:end-on-call", "--block:end-on-jump",
		"--event:iflags", "--insn:keep-tcal-on-ovf",
		"--pt", "t", "--no-inst", "--quiet", "--check", "--event:ip",
		"--event:time", "--block:show-blocks", "--resync-on-error",
		NULL
	};

	prt_int_eq(ofx_parse(fx, args), pr_opts_decode);
	prt_check(fx->opts.end_on_call && fx->opts.end_on_jump);
	prt_check(fx->opts.event_iflags && fx->opts.keep_tcal_on_ovf);
	prt_check(fx->opts.no_inst && fx->opts.quiet && fx->opts.check);
	prt_check(fx->opts.event_ip && fx->opts.event_time);
	prt_check(fx->opts.show_blocks && fx->opts.resync_on_error);

	return prt_passed();
}

static struct prt_result help(struct opts_fixture *fx)
{
	static const char *const args[] = { "--help", NULL };

	prt_int_eq(ofx_parse(fx, args), pr_opts_done);
	fflush(fx->cap.out);
	prt_check(fx->cap.out_text && strstr(fx->cap.out_text, "--raw"));

	return prt_passed();
}

int main(void)
{
	struct opts_fixture ofx = { .init = ofx_init, .fini = ofx_fini };
	struct prt_suite suite = { 0, 0 };
	static const char *const no_pt[] = { "--raw", "a:1", NULL };
	static const char *const dup_pt[] = { "--pt", "a", "--pt", "b", NULL };
	static const char *const unknown[] = { "--bogus", "--pt", "t", NULL };
	static const char *const missing[] = { "--pt", "t", "--mtc-freq",
		NULL };
	static const char *const late_cpu[] = { "--pt", "t", "--cpu", "6/92",
		NULL };
	static const char *const late_type[] = { "--pt", "t",
		"--insn-decoder", NULL };
	static const char *const late_filter[] = { "--pt", "t",
		"--filter:addr0_cfg", "1", NULL };
	static const char *const bad_cpu[] = { "--cpu", "six", "--pt", "t",
		NULL };
	static const char *const bad_raw[] = { "--raw", "a.bin", "--pt", "t",
		NULL };
	static const char *const big_freq[] = { "--mtc-freq", "256", "--pt",
		"t", NULL };
	static const char *const big_cfg[] = { "--filter:addr0_cfg", "16",
		"--pt", "t", NULL };
	static const char *const bad_filter[] = { "--filter:addr4_a", "1",
		"--pt", "t", NULL };

	prt_run(suite, "pr_opts: init, fini and parse reject NULL", init_null);
	prt_run_fx(suite, "pr_opts: defaults are ptxed's (block decoder, no "
		   "cpu)", defaults, ofx);
	prt_run_fx(suite, "pr_opts: several --raw images and a --pt range",
		   raw_images, ofx);
	prt_run_fx(suite, "pr_opts: --cpu F/M selects an Intel cpu", cpu,
		   ofx);
	prt_run(suite, "pr_opts: --cpu accepts f/m/s, none and auto and "
		"rejects junk", parse_cpu);
	prt_run(suite, "pr_opts: numbers are decimal or hex and range checked",
		parse_num);
	prt_run_fx(suite, "pr_opts: timing options set the pt_config",
		   timing, ofx);
	prt_run_fx(suite, "pr_opts: --filter:addrN_cfg/_a/_b set the filter",
		   filters, ofx);
	prt_run_fx(suite, "pr_opts: --stat selects insn and blocks for the "
		   "block decoder", stat_all_block, ofx);
	prt_run_fx(suite, "pr_opts: --stat selects insn for the insn decoder",
		   stat_all_insn, ofx);
	prt_run_fx(suite, "pr_opts: --stat:blocks selects only blocks",
		   stat_selected, ofx);
	prt_run_fx(suite, "pr_opts: flag options are recorded", flags, ofx);
	prt_run_fx(suite, "pr_opts: --help prints usage and says done", help,
		   ofx);
	prt_run_fx(suite, "pr_opts: a missing --pt is an error", rejected,
		   ofx, no_pt);
	prt_run_fx(suite, "pr_opts: a second --pt is an error", rejected, ofx,
		   dup_pt);
	prt_run_fx(suite, "pr_opts: an unknown option is an error", rejected,
		   ofx, unknown);
	prt_run_fx(suite, "pr_opts: a missing option argument is an error",
		   rejected, ofx, missing);
	prt_run_fx(suite, "pr_opts: --cpu after --pt is an error", rejected,
		   ofx, late_cpu);
	prt_run_fx(suite, "pr_opts: a decoder type after --pt is an error",
		   rejected, ofx, late_type);
	prt_run_fx(suite, "pr_opts: a filter after --pt is an error",
		   rejected, ofx, late_filter);
	prt_run_fx(suite, "pr_opts: a malformed --cpu is an error", rejected,
		   ofx, bad_cpu);
	prt_run_fx(suite, "pr_opts: --raw without an address is an error",
		   rejected, ofx, bad_raw);
	prt_run_fx(suite, "pr_opts: --mtc-freq over 255 is an error",
		   rejected, ofx, big_freq);
	prt_run_fx(suite, "pr_opts: an addr_cfg over 15 is an error",
		   rejected, ofx, big_cfg);
	prt_run_fx(suite, "pr_opts: a filter number over 3 is an error",
		   rejected, ofx, bad_filter);

	return prt_exit(&suite);
}
