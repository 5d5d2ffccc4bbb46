// SPDX-License-Identifier: GPL-2.0
/*
 * pr_opts: the command line of `ptreplay raw` (ptxed-compatible).
 */
#include "pr_opts.h"

#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The options, see pr_opts_usage(). */
enum pr_opt_id {
	pr_opt_help,
	pr_opt_version,
	pr_opt_pt,
	pr_opt_raw,
	pr_opt_cpu,
	pr_opt_mtc_freq,
	pr_opt_nom_freq,
	pr_opt_cpuid_eax,
	pr_opt_cpuid_ebx,
	pr_opt_insn_decoder,
	pr_opt_block_decoder,
	pr_opt_end_on_call,
	pr_opt_end_on_jump,
	pr_opt_event_tick,
	pr_opt_event_iflags,
	pr_opt_keep_tcal,
	pr_opt_no_inst,
	pr_opt_quiet,
	pr_opt_check,
	pr_opt_event_ip,
	pr_opt_event_time,
	pr_opt_offset,
	pr_opt_time,
	pr_opt_show_blocks,
	pr_opt_stat,
	pr_opt_stat_insn,
	pr_opt_stat_blocks,
	pr_opt_resync,
	pr_opt_iscache_limit,
	pr_opt_verbose,
	pr_opt_ignored
};

/* One option: its name, whether it takes an argument, and whether it
 * configures the decoder (and so must precede --pt).
 */
struct pr_opt {
	const char *name;
	enum pr_opt_id id;
	uint8_t has_arg;
	uint8_t config;
};

static const struct pr_opt pr_opt_table[] = {
	{ "--help", pr_opt_help, 0, 0 },
	{ "-h", pr_opt_help, 0, 0 },
	{ "--version", pr_opt_version, 0, 0 },
	{ "--pt", pr_opt_pt, 1, 0 },
	{ "--raw", pr_opt_raw, 1, 0 },
	{ "--cpu", pr_opt_cpu, 1, 1 },
	{ "--mtc-freq", pr_opt_mtc_freq, 1, 1 },
	{ "--nom-freq", pr_opt_nom_freq, 1, 1 },
	{ "--cpuid-0x15.eax", pr_opt_cpuid_eax, 1, 1 },
	{ "--cpuid-0x15.ebx", pr_opt_cpuid_ebx, 1, 1 },
	{ "--insn-decoder", pr_opt_insn_decoder, 0, 1 },
	{ "--block-decoder", pr_opt_block_decoder, 0, 1 },
	{ "--block:end-on-call", pr_opt_end_on_call, 0, 1 },
	{ "--block:end-on-jump", pr_opt_end_on_jump, 0, 1 },
	{ "--event:tick", pr_opt_event_tick, 0, 1 },
	{ "--event:iflags", pr_opt_event_iflags, 0, 1 },
	{ "--insn:keep-tcal-on-ovf", pr_opt_keep_tcal, 0, 1 },
	{ "--block:keep-tcal-on-ovf", pr_opt_keep_tcal, 0, 1 },
	{ "--no-inst", pr_opt_no_inst, 0, 0 },
	{ "--quiet", pr_opt_quiet, 0, 0 },
	{ "-q", pr_opt_quiet, 0, 0 },
	{ "--check", pr_opt_check, 0, 0 },
	{ "--event:ip", pr_opt_event_ip, 0, 0 },
	{ "--event:time", pr_opt_event_time, 0, 0 },
	{ "--offset", pr_opt_offset, 0, 0 },
	{ "--time", pr_opt_time, 0, 0 },
	{ "--block:show-blocks", pr_opt_show_blocks, 0, 0 },
	{ "--stat", pr_opt_stat, 0, 0 },
	{ "--stat:insn", pr_opt_stat_insn, 0, 0 },
	{ "--stat:blocks", pr_opt_stat_blocks, 0, 0 },
	{ "--resync-on-error", pr_opt_resync, 0, 0 },
	{ "--iscache-limit", pr_opt_iscache_limit, 1, 0 },
	{ "--verbose", pr_opt_verbose, 0, 0 },
	{ "-v", pr_opt_verbose, 0, 0 },
	{ "--att", pr_opt_ignored, 0, 0 },
	{ "--raw-insn", pr_opt_ignored, 0, 0 },
};

void pr_opts_usage(FILE *out, const char *prog)
{
	if (!out)
		return;

	fprintf(out,
"usage: %s raw [<options>] --raw <file>[:<from>[-<to>]]:<base> ... --pt <file>\n"
"\n"
"Decode a raw Intel PT trace against raw code images, printing what\n"
"libipt's ptxed prints.  Decoder options must precede --pt.\n"
"\n"
"  --help|-h                    this text.\n"
"  --version                    print version information.\n"
"  --raw <file>[:<from>[-<to>]]:<base>\n"
"                               map <file> (optionally from offset <from>, up\n"
"                               to <to>) at address <base>; may be repeated,\n"
"                               later images override earlier ones.\n"
"  --pt <file>[:<from>[-<to>]]  the trace (optionally a part of the file).\n"
"  --cpu none|auto|f/m[/s]      decode for this cpu (errata); default none.\n"
"  --mtc-freq <n>               IA32_RTIT_CTL.MTCFreq.\n"
"  --nom-freq <n>               MSR_PLATFORM_INFO[15:8].\n"
"  --cpuid-0x15.eax <n>         cpuid[0x15].eax.\n"
"  --cpuid-0x15.ebx <n>         cpuid[0x15].ebx.\n"
"  --filter:addr<n>_cfg <cfg>   IA32_RTIT_CTL.ADDRn_CFG (n = 0..3).\n"
"  --filter:addr<n>_a <base>    IA32_RTIT_ADDRn_A.\n"
"  --filter:addr<n>_b <limit>   IA32_RTIT_ADDRn_B.\n"
"  --insn-decoder               use the instruction flow decoder.\n"
"  --block-decoder              use the block decoder (default).\n"
"  --block:show-blocks          print [block] before each block.\n"
"  --block:end-on-call          end blocks after calls.\n"
"  --block:end-on-jump          end blocks after jumps.\n"
"  --event:ip                   print event IPs.\n"
"  --event:time                 print event timestamps.\n"
"  --event:tick                 request tick events.\n"
"  --no-inst                    print addresses only.\n"
"  --quiet|-q                   print nothing but errors and statistics.\n"
"  --offset                     print the trace offset on each line.\n"
"  --time                       print the last timestamp on instructions.\n"
"  --check                      check decoded instructions and blocks.\n"
"  --stat                       print statistics (all, or those selected).\n"
"  --stat:insn                  count instructions.\n"
"  --stat:blocks                count blocks.\n"
"  --iscache-limit <size>       image section cache limit in bytes.\n"
"  --verbose|-v                 report loaded images on stderr.\n"
"\n"
"Accepted for compatibility with newer ptxed, without effect on libipt %d.%d:\n"
"  --event:iflags, --insn:keep-tcal-on-ovf, --block:keep-tcal-on-ovf,\n"
"  --resync-on-error (decoding resumes at the next PSB after an error),\n"
"  --att, --raw-insn.\n",
		prog ? prog : "ptreplay", LIBIPT_VERSION_MAJOR,
		LIBIPT_VERSION_MINOR);
}

int pr_opts_init(struct pr_opts *opts)
{
	if (!opts)
		return -pte_invalid;

	memset(opts, 0, sizeof(*opts));
	pt_config_init(&opts->config);
	pr_file_spec_init(&opts->pt);
	opts->type = pr_block_decoder;

	return 0;
}

void pr_opts_fini(struct pr_opts *opts)
{
	size_t idx;

	if (!opts)
		return;

	for (idx = 0; idx < opts->nraw; ++idx)
		pr_file_spec_fini(&opts->raw[idx]);

	free(opts->raw);
	opts->raw = NULL;
	opts->nraw = 0;

	pr_file_spec_fini(&opts->pt);
}

int pr_opts_parse_num(uint64_t *value, const char *arg, uint64_t max)
{
	uint64_t num;
	char *rest;

	if (!value || !arg)
		return -pte_invalid;

	if (*arg < '0' || *arg > '9')
		return -pte_invalid;

	errno = 0;
	num = strtoull(arg, &rest, 0);
	if (errno || *rest)
		return -pte_invalid;

	if (max < num)
		return -pte_bad_config;

	*value = num;
	return 0;
}

/* Read the cpu we are running on into @cpu (vendor unknown if not Intel).
 *
 * Returns zero on success, -pte_not_supported without cpuid.
 */
static int pr_opts_read_cpu(struct pt_cpu *cpu)
{
	unsigned int eax, ebx, ecx, edx;
	uint16_t family;

	memset(cpu, 0, sizeof(*cpu));

	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return -pte_not_supported;

	/* "GenuineIntel" in ebx, edx, ecx. */
	if (ebx == 0x756e6547 && edx == 0x49656e69 && ecx == 0x6c65746e)
		cpu->vendor = pcv_intel;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return -pte_not_supported;

	family = (eax >> 8) & 0xf;
	cpu->family = family;
	if (family == 0xf)
		cpu->family += (eax >> 20) & 0xff;

	cpu->model = (eax >> 4) & 0xf;
	if (family == 0x6 || family == 0xf)
		cpu->model += (eax >> 12) & 0xf0;

	cpu->stepping = eax & 0xf;

	return 0;
}

/* Parse one "/"-terminated or final cpu field no larger than @max.
 *
 * Returns zero on success, -pte_invalid otherwise.
 */
static int pr_opts_cpu_field(uint64_t *value, const char **arg, int last,
			     uint64_t max)
{
	const char *sep;
	char buf[24];
	size_t len;

	sep = last ? NULL : strchr(*arg, '/');
	len = sep ? (size_t) (sep - *arg) : strlen(*arg);
	if (!len || sizeof(buf) <= len)
		return -pte_invalid;

	memcpy(buf, *arg, len);
	buf[len] = 0;
	if (pr_opts_parse_num(value, buf, max) < 0)
		return -pte_invalid;

	*arg += len + (sep ? 1 : 0);
	return 0;
}

int pr_opts_parse_cpu(struct pt_cpu *cpu, const char *arg)
{
	uint64_t family, model, stepping;

	if (!cpu || !arg)
		return -pte_invalid;

	if (strcmp(arg, "none") == 0) {
		memset(cpu, 0, sizeof(*cpu));
		return 0;
	}

	if (strcmp(arg, "auto") == 0)
		return pr_opts_read_cpu(cpu) < 0 ? -pte_invalid : 0;

	if (!strchr(arg, '/'))
		return -pte_invalid;

	if (pr_opts_cpu_field(&family, &arg, 0, UINT16_MAX) < 0)
		return -pte_invalid;

	stepping = 0;
	if (strchr(arg, '/')) {
		if (pr_opts_cpu_field(&model, &arg, 0, UINT8_MAX) < 0 ||
		    pr_opts_cpu_field(&stepping, &arg, 1, UINT8_MAX) < 0)
			return -pte_invalid;
	} else if (pr_opts_cpu_field(&model, &arg, 1, UINT8_MAX) < 0)
		return -pte_invalid;

	memset(cpu, 0, sizeof(*cpu));
	cpu->vendor = pcv_intel;
	cpu->family = (uint16_t) family;
	cpu->model = (uint8_t) model;
	cpu->stepping = (uint8_t) stepping;

	return 0;
}

/* Handle --filter:addr<n>_cfg|_a|_b @name with argument @arg.
 *
 * Returns zero on success, 1 if @name is no filter option, or
 * -pte_bad_config.
 */
static int pr_opts_filter(struct pr_opts *opts, const char *name,
			  const char *arg, const char *prog, FILE *err)
{
	struct pt_conf_addr_filter *filter;
	uint64_t value, *addr;
	const char *what;
	unsigned int n;

	if (strncmp(name, "--filter:addr", 13) != 0 ||
	    name[13] < '0' || name[13] > '3' || name[14] != '_')
		return 1;

	n = (unsigned int) (name[13] - '0');
	what = &name[15];
	filter = &opts->config.addr_filter;

	if (strcmp(what, "cfg") == 0) {
		if (!arg || pr_opts_parse_num(&value, arg, 15) < 0)
			goto bad_arg;

		filter->config.addr_cfg &= ~(0xfull << (n * 4));
		filter->config.addr_cfg |= value << (n * 4);
		return 0;
	}

	if (strcmp(what, "a") == 0)
		addr = n == 0 ? &filter->addr0_a : n == 1 ? &filter->addr1_a :
			n == 2 ? &filter->addr2_a : &filter->addr3_a;
	else if (strcmp(what, "b") == 0)
		addr = n == 0 ? &filter->addr0_b : n == 1 ? &filter->addr1_b :
			n == 2 ? &filter->addr2_b : &filter->addr3_b;
	else
		return 1;

	if (!arg || pr_opts_parse_num(addr, arg, UINT64_MAX) < 0)
		goto bad_arg;

	return 0;

bad_arg:
	fprintf(err, "%s: %s: bad or missing argument: %s.\n", prog, name,
		arg ? arg : "<none>");
	return -pte_bad_config;
}

/* Add a --raw image spec @arg.
 *
 * Returns zero on success, a negative error code otherwise.
 */
static int pr_opts_add_raw(struct pr_opts *opts, const char *arg,
			   const char *prog, FILE *err)
{
	struct pr_file_spec *raw;
	int errcode;

	raw = realloc(opts->raw, (opts->nraw + 1) * sizeof(*raw));
	if (!raw)
		return -pte_nomem;

	opts->raw = raw;
	raw = &opts->raw[opts->nraw];
	pr_file_spec_init(raw);

	errcode = pr_file_parse_raw(raw, arg);
	if (errcode < 0) {
		pr_file_spec_fini(raw);
		if (errcode == -pte_nomem)
			return errcode;

		fprintf(err, "%s: --raw: bad argument '%s': %s.\n", prog, arg,
			errcode == -pte_noip ?
			"expected <file>[:<from>[-<to>]]:<base>" :
			"bad file offset or range");
		return -pte_bad_config;
	}

	opts->nraw += 1;
	return 0;
}

/* Apply a numeric option @opt with argument @arg, no larger than @max.
 *
 * Returns zero on success, -pte_bad_config otherwise.
 */
static int pr_opts_num(uint64_t *value, const struct pr_opt *opt,
		       const char *arg, uint64_t max, const char *prog,
		       FILE *err)
{
	int errcode;

	errcode = pr_opts_parse_num(value, arg, max);
	if (errcode < 0) {
		fprintf(err, "%s: %s: %s: %s.\n", prog, opt->name,
			errcode == -pte_bad_config ? "value too big" :
			"bad argument", arg);
		return -pte_bad_config;
	}

	return 0;
}

/* Apply option @opt with argument @arg (NULL if it takes none).
 *
 * Returns a pr_opts_result on success, a negative error code otherwise.
 */
static int pr_opts_apply(struct pr_opts *opts, const struct pr_opt *opt,
			 const char *arg, const char *prog, FILE *out,
			 FILE *err)
{
	struct pt_config *config;
	uint64_t value;
	int errcode;

	config = &opts->config;
	switch (opt->id) {
	case pr_opt_help:
		pr_opts_usage(out, prog);
		return pr_opts_done;

	case pr_opt_version:
		fprintf(out, "%s: libipt %d.%d.%d\n", prog,
			LIBIPT_VERSION_MAJOR, LIBIPT_VERSION_MINOR,
			LIBIPT_VERSION_PATCH);
		return pr_opts_done;

	case pr_opt_pt:
		if (opts->have_pt) {
			fprintf(err, "%s: duplicate pt sources: %s.\n", prog,
				arg);
			return -pte_bad_config;
		}

		errcode = pr_file_parse(&opts->pt, arg);
		if (errcode < 0) {
			fprintf(err, "%s: --pt: bad argument '%s'.\n", prog,
				arg);
			return errcode == -pte_nomem ? errcode :
				-pte_bad_config;
		}

		opts->have_pt = 1;
		return pr_opts_decode;

	case pr_opt_raw:
		return pr_opts_add_raw(opts, arg, prog, err);

	case pr_opt_cpu:
		if (pr_opts_parse_cpu(&config->cpu, arg) < 0) {
			fprintf(err, "%s: cpu must be specified as f/m[/s], "
				"none or auto: %s.\n", prog, arg);
			return -pte_bad_config;
		}
		return pr_opts_decode;

	case pr_opt_mtc_freq:
		errcode = pr_opts_num(&value, opt, arg, UINT8_MAX, prog, err);
		config->mtc_freq = (uint8_t) value;
		return errcode;

	case pr_opt_nom_freq:
		errcode = pr_opts_num(&value, opt, arg, UINT8_MAX, prog, err);
		config->nom_freq = (uint8_t) value;
		return errcode;

	case pr_opt_cpuid_eax:
		errcode = pr_opts_num(&value, opt, arg, UINT32_MAX, prog, err);
		config->cpuid_0x15_eax = (uint32_t) value;
		return errcode;

	case pr_opt_cpuid_ebx:
		errcode = pr_opts_num(&value, opt, arg, UINT32_MAX, prog, err);
		config->cpuid_0x15_ebx = (uint32_t) value;
		return errcode;

	case pr_opt_iscache_limit:
		errcode = pr_opts_num(&opts->iscache_limit, opt, arg,
				      UINT64_MAX, prog, err);
		opts->have_iscache_limit = 1;
		return errcode;

	case pr_opt_insn_decoder:
		opts->type = pr_insn_decoder;
		return pr_opts_decode;

	case pr_opt_block_decoder:
		opts->type = pr_block_decoder;
		return pr_opts_decode;

	case pr_opt_end_on_call:
		opts->end_on_call = 1;
		return pr_opts_decode;

	case pr_opt_end_on_jump:
		opts->end_on_jump = 1;
		return pr_opts_decode;

	case pr_opt_event_tick:
		opts->event_tick = 1;
		return pr_opts_decode;

	case pr_opt_event_iflags:
		opts->event_iflags = 1;
		return pr_opts_decode;

	case pr_opt_keep_tcal:
		opts->keep_tcal_on_ovf = 1;
		return pr_opts_decode;

	case pr_opt_no_inst:
		opts->no_inst = 1;
		return pr_opts_decode;

	case pr_opt_quiet:
		opts->quiet = 1;
		return pr_opts_decode;

	case pr_opt_check:
		opts->check = 1;
		return pr_opts_decode;

	case pr_opt_event_ip:
		opts->event_ip = 1;
		return pr_opts_decode;

	case pr_opt_event_time:
		opts->event_time = 1;
		return pr_opts_decode;

	case pr_opt_offset:
		opts->print_offset = 1;
		return pr_opts_decode;

	case pr_opt_time:
		opts->print_time = 1;
		return pr_opts_decode;

	case pr_opt_show_blocks:
		opts->show_blocks = 1;
		return pr_opts_decode;

	case pr_opt_stat:
		opts->print_stats = 1;
		return pr_opts_decode;

	case pr_opt_stat_insn:
		opts->print_stats = 1;
		opts->stat_flags |= pr_stat_insn;
		return pr_opts_decode;

	case pr_opt_stat_blocks:
		opts->print_stats = 1;
		opts->stat_flags |= pr_stat_blocks;
		return pr_opts_decode;

	case pr_opt_resync:
		opts->resync_on_error = 1;
		return pr_opts_decode;

	case pr_opt_verbose:
		opts->verbose = 1;
		return pr_opts_decode;

	case pr_opt_ignored:
		return pr_opts_decode;
	}

	return -pte_internal;
}

/* Find option @name in the option table; NULL if unknown. */
static const struct pr_opt *pr_opts_find(const char *name)
{
	size_t idx;

	for (idx = 0; idx < sizeof(pr_opt_table) / sizeof(*pr_opt_table);
	     ++idx) {
		if (strcmp(pr_opt_table[idx].name, name) == 0)
			return &pr_opt_table[idx];
	}

	return NULL;
}

int pr_opts_parse(struct pr_opts *opts, int argc, char *const *argv,
		  const char *prog, FILE *out, FILE *err)
{
	int idx, status;

	if (!opts || !argv)
		return -pte_invalid;

	if (!prog)
		prog = "ptreplay raw";
	if (!out)
		out = stdout;
	if (!err)
		err = stderr;

	for (idx = 0; idx < argc; ++idx) {
		const struct pr_opt *opt;
		const char *name, *arg;

		name = argv[idx];
		if (!name)
			return -pte_invalid;

		arg = NULL;
		if (idx + 1 < argc)
			arg = argv[idx + 1];

		if (strncmp(name, "--filter:", 9) == 0) {
			if (opts->have_pt) {
				fprintf(err, "%s: please specify %s before "
					"--pt.\n", prog, name);
				return -pte_bad_config;
			}

			status = pr_opts_filter(opts, name, arg, prog, err);
			if (status < 0)
				return status;
			if (!status) {
				idx += 1;
				continue;
			}
		}

		opt = pr_opts_find(name);
		if (!opt) {
			fprintf(err, "%s: unknown option: %s.\n", prog, name);
			return -pte_bad_config;
		}

		if (opt->config && opts->have_pt) {
			fprintf(err, "%s: please specify %s before --pt.\n",
				prog, name);
			return -pte_bad_config;
		}

		if (opt->has_arg) {
			if (!arg) {
				fprintf(err, "%s: %s: missing argument.\n",
					prog, name);
				return -pte_bad_config;
			}
			idx += 1;
		} else
			arg = NULL;

		status = pr_opts_apply(opts, opt, arg, prog, out, err);
		if (status != pr_opts_decode)
			return status;
	}

	if (!opts->have_pt) {
		fprintf(err, "%s: no pt file (--pt).\n", prog);
		return -pte_bad_config;
	}

	/* With --stat and nothing selected, collect what applies. */
	if (opts->print_stats && !opts->stat_flags) {
		opts->stat_flags = pr_stat_insn;
		if (opts->type == pr_block_decoder)
			opts->stat_flags |= pr_stat_blocks;
	}

	return pr_opts_decode;
}
