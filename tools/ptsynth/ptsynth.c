// SPDX-License-Identifier: GPL-2.0
/*
 * ptsynth - hardware-free Intel PT ground truth
 *
 *   ptsynth record [options] -- CMD ARGS   trace + synth + perf.data
 *   ptsynth trace -g FILE.gt -- CMD ARGS   ground truth only
 *   ptsynth synth [options] -g FILE.gt     packets + perf.data from GT
 *   ptsynth check [options] -g FILE.gt     decode with libipt, compare
 *   ptsynth cmpflow -g FILE.gt FLOW.txt    compare a decoded flow
 *   ptsynth dump -g FILE.gt [--insns]      print the ground truth
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "events.h"
#include "gt.h"
#include "hwtime.h"
#include "perfdata.h"
#include "ptcheck.h"
#include "sideband.h"
#include "synth.h"
#include "tracer.h"

enum timing {
	TIMING_HW,		/* the time a real core would take (hwtime.c) */
	TIMING_TSC,		/* the tracer's TSC */
	TIMING_TSC_FAULT,	/* ... and a TSC packet at every exec fault */
};

/* The default of synth, check, record, dump and cmpflow */
#define TIMING_DEFAULT	TIMING_HW

struct cli {
	const char *output;
	const char *gt_path;
	const char *raw_dir;
	struct ps_synth_opts so;
	uint32_t pmu_type;
	struct ps_trace_opts to;
	bool insns_only;
	const char *sideband;
	const char *root;
	bool strip_flowjit;
	unsigned long lose_image;
	bool delta;
	enum timing timing;
	bool mtc_set;		/* --mtc or --no-mtc given */
	bool no_fault_tsc;
	struct ps_hw_costs_ns hw_ns;
	struct ps_irq_opts irq;
	bool hw_time;		/* dump: the hardware time of each insn */
	bool check_time;	/* check, cmpflow: the decoders' times */
};

/* What time is made of: the sideband, the events, the time map. */
struct timing_ctx {
	struct ps_sb sb;
	bool have_sb;
	struct ps_ev_list ev;
	struct ps_hwtime hw;
};

static void usage(void)
{
	fprintf(stderr,
"usage: ptsynth record [-o perf.data] [-g FILE.gt] [options] -- CMD [ARGS]\n"
"       ptsynth trace -g FILE.gt [--max-insns N] [--start-on-signal SIG\n"
"                     [--stop-on-signal SIG]] -- CMD [ARGS]\n"
"       ptsynth synth -g FILE.gt [-o perf.data] [options]\n"
"       ptsynth check -g FILE.gt [--time] [options]\n"
"       ptsynth cmpflow -g FILE.gt [--time] [options] FLOW.txt\n"
"                     (FLOW: perf script -F tid,ip[,time --ns])\n"
"       ptsynth dump -g FILE.gt [--insns] [--hw-time] [options]\n"
"options:\n"
"  --per-cpu          per-CPU AUX buffers (+ context switch sideband)\n"
"  --cpus N           CPUs for --per-cpu (threads assigned round robin)\n"
"  --psb-period N     bytes between PSB+ (default 4096, 0: only at start)\n"
"  --ovf-at N         inject an OVF before insn N of each stream\n"
"  --ovf-len N        instructions whose packets the OVF loses (default 32)\n"
"  --retcomp          return compression (default off, as perf noretcomp)\n"
"  --long-tnt         use TNT-64 packets\n"
"  --timing=MODEL     hw (default): the time a real core takes (costs below),\n"
"                     MTC and CBR, no TSC at exec faults; tsc: the tracer's\n"
"                     TSC; tsc-fault: the tracer's TSC and a TSC packet at\n"
"                     every exec fault (the old model, for comparison)\n"
"  --mtc[=PERIOD]     MTC packets every 2^PERIOD crystal clock ticks (perf's\n"
"                     mtc_period, default 3; on by default with --timing=hw)\n"
"  --no-mtc           no MTC (perf's mtc=0)\n"
"  --cyc[=THRESH]     CYC packets (perf's cyc, cyc_thresh, default 0)\n"
"  --hw-insn-ticks N  hw: TSC ticks per instruction (default 1)\n"
"  --hw-exec-ns N     hw: the exec (start signal) starting the trace\n"
"                     (default 100000)\n"
"  --hw-syscall-ns N  hw: a system call (default 1000)\n"
"  --hw-fault-ns N    hw: an exec fault (default 1300)\n"
"  --hw-fault-tail-ns N  hw: from a fault's flowjit image to its return\n"
"                     (default 250)\n"
"  --hw-signal-ns N   hw: a signal delivery (default 2000)\n"
"  --hw-switch-ns N   hw: a thread switch (default 2000)\n"
"  --hw-irq-ns N      hw: an interrupt (default 1000)\n"
"  --irq-every N      interrupts every N instructions on average (seeded)\n"
"  --irq-seed S       seed of --irq-every (default 1)\n"
"  --irq-jit          interrupts in JIT code before and after each rewrite\n"
"  --irq-fault-ip     an interrupt at each exec fault's IP, the last time the\n"
"                     thread ran it before the fault\n"
"  --pmu-type N       intel_pt PMU type number in perf.data (default 8)\n"
"  --raw-dir DIR      also write each stream as DIR/stream-IDX.pt\n"
"  --max-insns N      kill the traced program after N instructions\n"
"  --start-on-signal SIG  record/trace: run freely up to the first delivery\n"
"                     of SIG (swallowed), single-step from there on\n"
"  --stop-on-signal SIG   ... and stop single-stepping at SIG (swallowed)\n"
"  --sideband FILE    synth: the sideband of perf record --flowjit of the\n"
"                     same run replaces the synthesised one (part 2)\n"
"  --root DIR         --sideband: read files the sideband names from DIR\n"
"  --strip-flowjit    --sideband: leave out the flowjit records\n"
"  --lose-image N     --sideband: the N-th exec fault image (from 1) is lost:\n"
"                     a PERF_RECORD_LOST in its place\n"
"  --delta            --sideband: user JIT page images after a page's first\n"
"                     become delta records against the page's previous one,\n"
"                     a page's first one over zeros (base 0) where shorter\n"
"  --no-fault-tsc     --timing=tsc-fault: no TSC packet after an exec fault\n"
"  --time             check, cmpflow: compare the decoders' times with the\n"
"                     hardware time of each instruction\n"
"  --hw-time          dump --insns: print TID IP HW-TSC HW-PERF-NS\n");
}

enum { OPT_PER_CPU = 256, OPT_CPUS, OPT_PSB, OPT_OVF_AT, OPT_OVF_LEN,
	OPT_RETCOMP, OPT_LONG_TNT, OPT_PMU, OPT_RAW, OPT_MAX, OPT_INSNS,
	OPT_SIDEBAND, OPT_ROOT, OPT_STRIP, OPT_LOSE_IMAGE, OPT_DELTA, OPT_NO_FAULT_TSC,
	OPT_START_SIG,
	OPT_STOP_SIG, OPT_MTC, OPT_NO_MTC, OPT_CYC, OPT_TIMING,
	OPT_HW_INSN, OPT_HW_EXEC, OPT_HW_SYSCALL, OPT_HW_FAULT, OPT_HW_FAULT_TAIL,
	OPT_HW_SIGNAL,
	OPT_HW_SWITCH, OPT_HW_IRQ, OPT_IRQ_EVERY, OPT_IRQ_SEED, OPT_IRQ_JIT,
	OPT_IRQ_FAULT_IP,
	OPT_TIME, OPT_HW_TIME };

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "gt", required_argument, NULL, 'g' },
	{ "per-cpu", no_argument, NULL, OPT_PER_CPU },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "psb-period", required_argument, NULL, OPT_PSB },
	{ "ovf-at", required_argument, NULL, OPT_OVF_AT },
	{ "ovf-len", required_argument, NULL, OPT_OVF_LEN },
	{ "retcomp", no_argument, NULL, OPT_RETCOMP },
	{ "long-tnt", no_argument, NULL, OPT_LONG_TNT },
	{ "mtc", optional_argument, NULL, OPT_MTC },
	{ "no-mtc", no_argument, NULL, OPT_NO_MTC },
	{ "cyc", optional_argument, NULL, OPT_CYC },
	{ "timing", required_argument, NULL, OPT_TIMING },
	{ "hw-insn-ticks", required_argument, NULL, OPT_HW_INSN },
	{ "hw-exec-ns", required_argument, NULL, OPT_HW_EXEC },
	{ "hw-syscall-ns", required_argument, NULL, OPT_HW_SYSCALL },
	{ "hw-fault-ns", required_argument, NULL, OPT_HW_FAULT },
	{ "hw-fault-tail-ns", required_argument, NULL, OPT_HW_FAULT_TAIL },
	{ "hw-signal-ns", required_argument, NULL, OPT_HW_SIGNAL },
	{ "hw-switch-ns", required_argument, NULL, OPT_HW_SWITCH },
	{ "hw-irq-ns", required_argument, NULL, OPT_HW_IRQ },
	{ "irq-every", required_argument, NULL, OPT_IRQ_EVERY },
	{ "irq-seed", required_argument, NULL, OPT_IRQ_SEED },
	{ "irq-jit", no_argument, NULL, OPT_IRQ_JIT },
	{ "irq-fault-ip", no_argument, NULL, OPT_IRQ_FAULT_IP },
	{ "pmu-type", required_argument, NULL, OPT_PMU },
	{ "raw-dir", required_argument, NULL, OPT_RAW },
	{ "max-insns", required_argument, NULL, OPT_MAX },
	{ "insns", no_argument, NULL, OPT_INSNS },
	{ "sideband", required_argument, NULL, OPT_SIDEBAND },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "strip-flowjit", no_argument, NULL, OPT_STRIP },
	{ "lose-image", required_argument, NULL, OPT_LOSE_IMAGE },
	{ "delta", no_argument, NULL, OPT_DELTA },
	{ "no-fault-tsc", no_argument, NULL, OPT_NO_FAULT_TSC },
	{ "start-on-signal", required_argument, NULL, OPT_START_SIG },
	{ "stop-on-signal", required_argument, NULL, OPT_STOP_SIG },
	{ "time", no_argument, NULL, OPT_TIME },
	{ "hw-time", no_argument, NULL, OPT_HW_TIME },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* --timing=MODEL; returns 0, -1 for an unknown model */
static int parse_timing(struct cli *c, const char *arg)
{
	if (!strcmp(arg, "hw"))
		c->timing = TIMING_HW;
	else if (!strcmp(arg, "tsc"))
		c->timing = TIMING_TSC;
	else if (!strcmp(arg, "tsc-fault"))
		c->timing = TIMING_TSC_FAULT;
	else
		return -1;
	return 0;
}

/* A period or threshold 0..15 of an option, @def without argument */
static int parse_0_15(const char *opt, const char *arg, int def)
{
	int v = arg ? atoi(arg) : def;

	if (v < 0 || v > 15) {
		fprintf(stderr, "ptsynth: --%s=%s: 0 to 15\n", opt, arg);
		return -1;
	}
	return v;
}

/* The options of time; returns 1 if @opt is one, 0 if not, -1 on error */
static int parse_time_opt(struct cli *c, int opt)
{
	switch (opt) {
	case OPT_TIMING:
		if (parse_timing(c, optarg)) {
			fprintf(stderr, "ptsynth: --timing=%s: hw, tsc or tsc-fault\n",
				optarg);
			return -1;
		}
		break;
	case OPT_MTC:
		c->mtc_set = true;
		c->so.mtc_period = parse_0_15("mtc", optarg, 3);
		return c->so.mtc_period < 0 ? -1 : 1;
	case OPT_NO_MTC:
		c->mtc_set = true;
		c->so.mtc_period = -1;
		break;
	case OPT_CYC:
		c->so.cyc_thresh = parse_0_15("cyc", optarg, 0);
		return c->so.cyc_thresh < 0 ? -1 : 1;
	case OPT_HW_INSN: c->hw_ns.insn_ticks = strtoull(optarg, NULL, 0); break;
	case OPT_HW_EXEC: c->hw_ns.exec = strtoull(optarg, NULL, 0); break;
	case OPT_HW_SYSCALL: c->hw_ns.syscall = strtoull(optarg, NULL, 0); break;
	case OPT_HW_FAULT: c->hw_ns.fault = strtoull(optarg, NULL, 0); break;
	case OPT_HW_FAULT_TAIL: c->hw_ns.fault_tail = strtoull(optarg, NULL, 0); break;
	case OPT_HW_SIGNAL: c->hw_ns.signal = strtoull(optarg, NULL, 0); break;
	case OPT_HW_SWITCH: c->hw_ns.sw = strtoull(optarg, NULL, 0); break;
	case OPT_HW_IRQ: c->hw_ns.irq = strtoull(optarg, NULL, 0); break;
	case OPT_IRQ_EVERY: c->irq.every = strtoull(optarg, NULL, 0); break;
	case OPT_IRQ_SEED: c->irq.seed = strtoull(optarg, NULL, 0); break;
	case OPT_IRQ_JIT: c->irq.jit = true; break;
	case OPT_IRQ_FAULT_IP: c->irq.fault_ip = true; break;
	case OPT_NO_FAULT_TSC: c->no_fault_tsc = true; break;
	case OPT_TIME: c->check_time = true; break;
	case OPT_HW_TIME: c->hw_time = true; break;
	default:
		return 0;
	}
	return 1;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	int opt, t;

	ps_synth_opts_default(&c->so);
	c->pmu_type = 8;
	c->timing = TIMING_DEFAULT;
	c->hw_ns = (struct ps_hw_costs_ns){
		.insn_ticks = PS_HW_INSN_TICKS, .exec = PS_HW_EXEC_NS,
		.syscall = PS_HW_SYSCALL_NS, .fault = PS_HW_FAULT_NS,
		.fault_tail = PS_HW_FAULT_TAIL_NS,
		.signal = PS_HW_SIGNAL_NS, .sw = PS_HW_SWITCH_NS,
		.irq = PS_HW_IRQ_NS,
	};
	c->irq.seed = 1;
	while ((opt = getopt_long(argc, argv, "+o:g:vh", long_opts, NULL)) != -1) {
		t = parse_time_opt(c, opt);
		if (t < 0)
			return -1;
		if (t)
			continue;
		switch (opt) {
		case 'o': c->output = optarg; break;
		case 'g': c->gt_path = optarg; break;
		case 'v': c->so.verbose = true; break;
		case OPT_PER_CPU: c->so.per_cpu = true; break;
		case OPT_CPUS: c->so.nr_cpus = atoi(optarg); break;
		case OPT_PSB: c->so.psb_period = strtoull(optarg, NULL, 0); break;
		case OPT_OVF_AT: c->so.ovf_at = strtoll(optarg, NULL, 0); break;
		case OPT_OVF_LEN: c->so.ovf_len = strtoull(optarg, NULL, 0); break;
		case OPT_RETCOMP: c->so.retcomp = true; break;
		case OPT_LONG_TNT: c->so.long_tnt = true; break;
		case OPT_PMU: c->pmu_type = strtoul(optarg, NULL, 0); break;
		case OPT_RAW: c->raw_dir = optarg; break;
		case OPT_MAX: c->to.max_insns = strtoull(optarg, NULL, 0); break;
		case OPT_INSNS: c->insns_only = true; break;
		case OPT_SIDEBAND: c->sideband = optarg; break;
		case OPT_ROOT: c->root = optarg; break;
		case OPT_STRIP: c->strip_flowjit = true; break;
		case OPT_LOSE_IMAGE: c->lose_image = strtoul(optarg, NULL, 0); break;
		case OPT_DELTA: c->delta = true; break;
		case OPT_START_SIG:
		case OPT_STOP_SIG: {
			int sig = ps_trace_parse_signal(optarg);

			if (sig < 0) {
				fprintf(stderr, "ptsynth: bad signal '%s' (a number or a name such as USR1; not TRAP, STOP or KILL)\n",
					optarg);
				return -1;
			}
			if (opt == OPT_START_SIG)
				c->to.start_sig = sig;
			else
				c->to.stop_sig = sig;
			break;
		}
		default:
			usage();
			return -1;
		}
	}
	if (c->so.nr_cpus < 1)
		c->so.nr_cpus = 1;
	if (c->to.stop_sig && !c->to.start_sig) {
		fprintf(stderr, "ptsynth: --stop-on-signal needs --start-on-signal\n");
		return -1;
	}
	if (c->to.stop_sig && c->to.stop_sig == c->to.start_sig) {
		fprintf(stderr, "ptsynth: the start and stop signals must differ\n");
		return -1;
	}
	if (!c->mtc_set && c->timing == TIMING_HW)
		c->so.mtc_period = 3;	/* perf's default mtc,mtc_period=3 */
	return optind;
}

static int write_raw(const struct cli *c, const struct ps_synth_result *res)
{
	char path[4096];
	int i;

	for (i = 0; i < res->nr_streams; i++) {
		const struct ps_synth_stream *s = &res->streams[i];
		FILE *f;

		snprintf(path, sizeof(path), "%s/stream-%d.pt", c->raw_dir, i);
		f = fopen(path, "w");
		if (!f || (s->buf.len &&
			   fwrite(s->buf.data, s->buf.len, 1, f) != 1)) {
			fprintf(stderr, "ptsynth: cannot write %s\n", path);
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		printf("stream %d cpu %d tid %d bytes %zu file %s\n", i, s->cpu,
		       s->tid, s->buf.len, path);
	}
	return 0;
}

/* The sideband of --sideband; returns 0 or 1 (reported). */
static int timing_sideband(const struct cli *c, struct timing_ctx *tm)
{
	struct ps_sb *sb = &tm->sb;
	int err;

	err = ps_sb_load(sb, c->sideband, c->root, c->strip_flowjit,
			 c->lose_image, c->delta);
	if (err) {
		fprintf(stderr, "ptsynth: cannot read the sideband %s: %s\n",
			c->sideband, strerror(-err));
		return 1;
	}
	tm->have_sb = true;
	fprintf(stderr, "ptsynth: sideband: %zu records kept (%llu synthesised by perf record, time 0), %llu skipped, %llu malformed, %llu flowjit (%llu exec faults), %llu stripped, %llu files from --root\n",
		sb->nr, (unsigned long long)sb->nr_synth,
		(unsigned long long)sb->nr_skipped,
		(unsigned long long)sb->nr_bad,
		(unsigned long long)sb->nr_flowjit,
		(unsigned long long)sb->nr_images,
		(unsigned long long)sb->nr_stripped,
		(unsigned long long)sb->nr_renamed);
	if (c->lose_image && !sb->nr_lost_made) {
		fprintf(stderr, "ptsynth: --lose-image %lu: the sideband has %llu exec fault images\n",
			c->lose_image, (unsigned long long)sb->nr_images);
		return 1;
	}
	if (sb->nr_lost_made)
		fprintf(stderr, "ptsynth: sideband: exec fault image %lu replaced by a PERF_RECORD_LOST\n",
			c->lose_image);
	if (c->delta)
		fprintf(stderr, "ptsynth: sideband: %llu user JIT images made deltas (%llu bytes of pieces), the first base exec fault image %llu\n",
			(unsigned long long)sb->nr_deltas,
			(unsigned long long)sb->delta_bytes,
			(unsigned long long)sb->first_base_image);
	return 0;
}

/*
 * The sideband's exec faults (known from the flowjit records only), at
 * the TSC of their perf time, as events of @gt.  Returns 0 or -ENOMEM.
 */
static int timing_faults(struct timing_ctx *tm, const struct gt_trace *gt)
{
	struct ps_synth_fault *f;
	size_t i, nr = tm->sb.nr_faults;
	int err;

	f = calloc(nr + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		f[i].tid = tm->sb.faults[i].tid;
		f[i].tsc = ps_perf_time_to_tsc(tm->sb.faults[i].time,
					       &gt->hdr.tc);
	}
	err = ps_ev_add_faults(&tm->ev, gt, f, nr);
	free(f);
	return err;
}

/* The time map --timing asks for; returns 0 or 1 (reported). */
static int timing_map(const struct cli *c, const struct gt_trace *gt,
		      struct timing_ctx *tm)
{
	struct ps_hw_costs costs;
	int err;

	if (c->timing != TIMING_HW)
		return ps_hwtime_build(&tm->hw, gt, NULL, 0, &tm->ev) ? 1 : 0;
	if (ps_hw_costs_from_ns(&costs, &gt->hdr.tc, &c->hw_ns)) {
		fprintf(stderr, "ptsynth: --timing=hw: the ground truth has no TSC conversion\n");
		return 1;
	}
	err = ps_hwtime_build(&tm->hw, gt, &costs,
			      c->so.per_cpu ? c->so.nr_cpus : 0, &tm->ev);
	if (err)
		fprintf(stderr, "ptsynth: time map: %s\n", strerror(-err));
	return err ? 1 : 0;
}

static void timing_free(struct timing_ctx *tm)
{
	ps_hwtime_free(&tm->hw);
	ps_ev_free(&tm->ev);
	if (tm->have_sb)
		ps_sb_free(&tm->sb);
	memset(tm, 0, sizeof(*tm));
}

/*
 * The time of @gt as @c asks: the sideband and its exec faults, the
 * interrupts, the time map, into @tm; @so's time fields point there.
 * Returns 0, or 1 after reporting an error (@tm freed).
 */
static int timing_setup(const struct cli *c, const struct gt_trace *gt,
			struct timing_ctx *tm, struct ps_synth_opts *so)
{
	int err = 0;

	memset(tm, 0, sizeof(*tm));
	if (c->sideband && timing_sideband(c, tm))
		return 1;
	if (tm->have_sb)
		err = timing_faults(tm, gt);
	if (!err)
		err = ps_ev_add_irqs(&tm->ev, gt, &c->irq);
	if (err) {
		fprintf(stderr, "ptsynth: events: %s\n", strerror(-err));
		timing_free(tm);
		return 1;
	}
	ps_ev_sort(&tm->ev);
	if (timing_map(c, gt, tm)) {
		timing_free(tm);
		return 1;
	}
	so->hw = &tm->hw;
	so->events = &tm->ev;
	so->fault_tsc = c->timing == TIMING_TSC_FAULT && !c->no_fault_tsc;
	so->cbr = c->timing == TIMING_HW;
	return 0;
}

static const char *timing_name(enum timing t)
{
	return t == TIMING_HW ? "hw" : t == TIMING_TSC ? "tsc" : "tsc-fault";
}

/* What the synthesis modelled of time and events, on stderr */
static void report_time(const struct cli *c, const struct gt_trace *gt,
			const struct timing_ctx *tm,
			const struct ps_synth_result *res)
{
	const struct ps_ev_list *ev = &tm->ev;
	const struct gt_timeconv *tc = &gt->hdr.tc;
	char fault_ip[48];
	uint64_t first = gt->nr_recs ? gt->recs[0]->tsc : 0;
	uint64_t last = gt->nr_recs ? gt->recs[gt->nr_recs - 1]->tsc : 0;
	uint64_t hw_first = UINT64_MAX;
	int i;

	/* hardware time from the first trace's start (start-at mode: the
	 * start signal, not the exec)
	 */
	for (i = 0; i < res->nr_streams; i++)
		if (res->streams[i].first_tsc && res->streams[i].first_tsc < hw_first)
			hw_first = res->streams[i].first_tsc;
	if (hw_first == UINT64_MAX)
		hw_first = first;
	fprintf(stderr, "ptsynth: timing %s: %llu MTC, %llu CYC; %.3f ms of hardware time, %.3f s traced\n",
		timing_name(c->timing), (unsigned long long)res->nr_mtc,
		(unsigned long long)res->nr_cyc,
		(ps_perf_tsc_to_time(tm->hw.end, tc) -
		 ps_perf_tsc_to_time(hw_first, tc)) / 1e6,
		(ps_perf_tsc_to_time(last, tc) -
		 ps_perf_tsc_to_time(first, tc)) / 1e9);
	if (tm->have_sb)
		fprintf(stderr, "ptsynth: %llu exec faults modelled, %llu dropped, %llu before the trace starts\n",
			(unsigned long long)res->nr_faults,
			(unsigned long long)res->nr_faults_dropped,
			(unsigned long long)res->nr_faults_before);
	snprintf(fault_ip, sizeof(fault_ip), ", %llu at fault IPs",
		 (unsigned long long)ev->nr_irq_fault_ip);
	if (c->irq.every || c->irq.jit || c->irq.fault_ip)
		fprintf(stderr, "ptsynth: %llu interrupts modelled (%llu random, %llu around %llu JIT rewrites%s)\n",
			(unsigned long long)res->nr_irqs,
			(unsigned long long)ev->nr_irq_random,
			(unsigned long long)ev->nr_irq_jit,
			(unsigned long long)ev->nr_jit_rewrites,
			c->irq.fault_ip ? fault_ip : "");
}

static int synth_write(const struct cli *c, const struct ps_synth_opts *so,
		       const struct gt_trace *gt, const struct timing_ctx *tm)
{
	const struct ps_sb *sb = tm->have_sb ? &tm->sb : NULL;
	struct ps_perf_opts po = {
		.path = c->output ? c->output : "perf.data",
		.pmu_type = c->pmu_type,
		.per_cpu = so->per_cpu,
		.retcomp = so->retcomp,
		.psb_period = so->psb_period,
		.mtc = so->mtc_period >= 0,
		.mtc_period = so->mtc_period,
		.cyc = so->cyc_thresh >= 0,
		.cyc_thresh = so->cyc_thresh,
		.hw = so->hw,
		.sideband = sb,
		.flowjit = sb && !c->strip_flowjit,
	};
	struct ps_synth_result res;
	int err;

	err = ps_synth_run(gt, so, &res);
	if (err) {
		fprintf(stderr, "ptsynth: synthesis failed (%d)\n", err);
		goto out;
	}
	fprintf(stderr, "ptsynth: %llu insns, %llu packets, %llu PSB, %d stream(s)\n",
		(unsigned long long)res.nr_insns,
		(unsigned long long)res.nr_packets,
		(unsigned long long)res.nr_psb, res.nr_streams);
	report_time(c, gt, tm, &res);
	if (c->raw_dir && write_raw(c, &res)) {
		err = -1;
		goto out;
	}
	err = ps_perf_write(gt, &res, &po);
	if (err)
		fprintf(stderr, "ptsynth: cannot write %s: %s\n", po.path,
			strerror(-err));
out:
	ps_synth_result_free(&res);
	return err ? 1 : 0;
}

static int do_synth(const struct cli *c, const struct gt_trace *gt)
{
	struct ps_synth_opts so = c->so;
	struct timing_ctx tm;
	int ret;

	if (timing_setup(c, gt, &tm, &so))
		return 1;
	ret = synth_write(c, &so, gt, &tm);
	timing_free(&tm);
	return ret;
}

static int load_gt(const char *path, struct gt_trace *gt)
{
	int err;

	if (!path) {
		fprintf(stderr, "ptsynth: no ground truth file (-g)\n");
		return -1;
	}
	err = gt_load(gt, path);
	if (err)
		fprintf(stderr, "ptsynth: cannot load %s: %s\n", path,
			strerror(-err));
	return err;
}

static int cmd_trace(struct cli *c, int argc, char **argv, bool synth)
{
	char def_gt[4096];
	struct gt_trace gt;
	int status = 0, ret;

	if (argc < 1) {
		usage();
		return 2;
	}
	if (!c->gt_path) {
		if (!synth) {
			usage();
			return 2;
		}
		snprintf(def_gt, sizeof(def_gt), "%s.gt",
			 c->output ? c->output : "perf.data");
		c->gt_path = def_gt;
	}
	if (ps_trace_program(c->gt_path, argv, &c->to, &status))
		return 1;
	fprintf(stderr, "ptsynth: program exit status %d\n", status);
	if (!synth)
		return 0;
	if (load_gt(c->gt_path, &gt))
		return 1;
	ret = do_synth(c, &gt);
	gt_free(&gt);
	return ret;
}

/*
 * Compare @dec with @truth, print "@label tid T: truth N insns, @decoder N
 * insns, ...: match" (or MISMATCH). Returns 0 on a match.
 */
static int report_flows(const char *label, int tid, const char *decoder,
			const struct ptcheck_flow *truth,
			const struct ptcheck_flow *dec)
{
	size_t gap_end;
	int ret;

	ret = ptcheck_compare(truth, dec, &gap_end);
	printf("%stid %d: truth %zu insns, %s %zu insns, %u overflow(s), %u error(s)",
	       label, tid, truth->nr, decoder, dec->nr, dec->nr_ovf,
	       dec->nr_errors);
	if (dec->nr_ovf)
		printf(", lost [%zu, %zu)", dec->ovf_pos, gap_end);
	printf(": %s\n", ret ? "MISMATCH" : "match");
	return ret;
}

/*
 * Decoder time against hardware time (README.rst "Tests"): a decoder
 * knows the time of the last timing packet, so its time of an
 * instruction lies up to one MTC period before the instruction's; it may
 * be later by what it reads ahead (libipt, howto_libipt.md "Timing") or
 * estimates (perf after TIP.PGE), which TIME_TOL_NS allows for.
 */
#define TIME_TOL_NS	200

struct time_cmp {
	int64_t lo, hi;		/* allowed error, ns */
	int64_t min, max;	/* seen */
	size_t nr, nr_none, nr_out, first_out;
};

/*
 * The allowed range of decoder time errors in ns for MTC period @period
 * of @res's TSC/CTC ratio.  Returns 0, -EINVAL without MTC.
 */
static int time_cmp_init(struct time_cmp *t, const struct gt_timeconv *tc,
			 const struct ps_synth_opts *so,
			 const struct ps_synth_result *res)
{
	uint64_t ticks;

	memset(t, 0, sizeof(*t));
	if (so->mtc_period < 0 || !res->ctc_d)
		return -EINVAL;
	ticks = ((uint64_t)res->ctc_n << so->mtc_period) / res->ctc_d;
	t->lo = -(int64_t)(ps_perf_tsc_to_time(ticks, tc) -
			   ps_perf_tsc_to_time(0, tc)) - TIME_TOL_NS;
	t->hi = TIME_TOL_NS;
	t->min = INT64_MAX;
	t->max = INT64_MIN;
	return 0;
}

/* Insn @i decoded at @dec_ns, run at @true_ns */
static void time_cmp_add(struct time_cmp *t, size_t i, uint64_t dec_ns,
			 uint64_t true_ns)
{
	int64_t err = (int64_t)(dec_ns - true_ns);

	t->nr++;
	if (err < t->min)
		t->min = err;
	if (err > t->max)
		t->max = err;
	if ((err < t->lo || err > t->hi) && !t->nr_out++)
		t->first_out = i;
}

/* Prints the comparison; returns 0 if every time was within bounds */
static int time_cmp_report(const char *label, int tid, const char *decoder,
			   const struct time_cmp *t)
{
	printf("%stid %d: %s time - hardware time of %zu insns: min %lld ns, max %lld ns, allowed [%lld, %lld] ns, %zu without time",
	       label, tid, decoder, t->nr, t->nr ? (long long)t->min : 0,
	       t->nr ? (long long)t->max : 0, (long long)t->lo,
	       (long long)t->hi, t->nr_none);
	if (t->nr_out)
		printf(", %zu out (first: insn %zu)", t->nr_out, t->first_out);
	printf(": %s\n", t->nr_out || t->nr_none || !t->nr ? "WRONG" : "ok");
	return t->nr_out || t->nr_none || !t->nr ? -1 : 0;
}

/* The hardware times (perf ns) of the instructions of @tid, in order */
static uint64_t *truth_times(const struct gt_trace *gt,
			     const struct ps_hwtime *hw, int tid)
{
	uint64_t *t = calloc(gt->nr_recs + 1, sizeof(*t));
	size_t i, n = 0;

	for (i = 0; t && i < gt->nr_recs; i++)
		if (gt->recs[i]->type == GT_INSN && (int)gt->recs[i]->tid == tid)
			t[n++] = ps_perf_tsc_to_time(hw->hw[i], &gt->hdr.tc);
	return t;
}

/*
 * The decoded times @dec_ns (@tsc: TSC, else perf ns) of a flow equal to
 * the truth against the hardware times; returns 0 if within bounds.
 */
static int check_times(const struct gt_trace *gt, const struct timing_ctx *tm,
		       const struct ps_synth_opts *so,
		       const struct ps_synth_result *res, const char *label,
		       int tid, const char *decoder,
		       const struct ptcheck_flow *dec, bool tsc)
{
	const struct gt_timeconv *tc = &gt->hdr.tc;
	uint64_t *truth = truth_times(gt, &tm->hw, tid), t;
	struct time_cmp cmp;
	size_t i;
	int ret;

	if (!truth || time_cmp_init(&cmp, tc, so, res)) {
		printf("%stid %d: no time to compare (needs MTC)\n", label, tid);
		free(truth);
		return -1;
	}
	for (i = 0; i < dec->nr; i++) {
		t = dec->tsc[i];
		if (t == PTCHECK_NO_TIME) {
			cmp.nr_none++;
			continue;
		}
		time_cmp_add(&cmp, i, tsc ? ps_perf_tsc_to_time(t, tc) : t,
			     truth[i]);
	}
	ret = time_cmp_report(label, tid, decoder, &cmp);
	free(truth);
	return ret;
}

struct check_ctx {
	const struct cli *c;
	const struct gt_trace *gt;
	const struct timing_ctx *tm;
	const struct ps_synth_opts *so;
	const struct ps_synth_result *res;
};

static int check_stream(const struct check_ctx *x,
			const struct ps_synth_stream *s)
{
	struct ptcheck_time_cfg tcfg = {
		.mtc_freq = x->so->mtc_period >= 0 ? x->so->mtc_period : 0,
		.ctc_n = x->res->ctc_n, .ctc_d = x->res->ctc_d,
		.nom_freq = x->res->cbr,
	};
	struct ptcheck_flow truth, dec;
	char label[32];
	int ret;

	if (ptcheck_truth(x->gt, s->tid, &truth) ||
	    ptcheck_decode(x->gt, s->buf.data, s->buf.len, &dec,
			   x->c->so.verbose, x->c->check_time ? &tcfg : NULL))
		return -1;
	snprintf(label, sizeof(label), "stream %d ", s->idx);
	ret = report_flows(label, s->tid, "libipt", &truth, &dec);
	if (!ret && x->c->check_time)
		ret = check_times(x->gt, x->tm, x->so, x->res, label, s->tid,
				  "libipt", &dec, true);
	ptcheck_flow_free(&truth);
	ptcheck_flow_free(&dec);
	return ret;
}

static int cmd_check(struct cli *c)
{
	struct ps_synth_opts so = c->so;
	struct ps_synth_result res;
	struct timing_ctx tm;
	struct check_ctx x = { .c = c, .so = &so, .res = &res, .tm = &tm };
	struct gt_trace gt;
	int i, bad = 0;

	if (c->so.per_cpu) {
		fprintf(stderr, "ptsynth: check works on per-thread streams\n");
		return 2;
	}
	if (load_gt(c->gt_path, &gt))
		return 1;
	x.gt = &gt;
	if (timing_setup(c, &gt, &tm, &so)) {
		gt_free(&gt);
		return 1;
	}
	if (ps_synth_run(&gt, &so, &res)) {
		timing_free(&tm);
		gt_free(&gt);
		return 1;
	}
	for (i = 0; i < res.nr_streams; i++)
		if (check_stream(&x, &res.streams[i]))
			bad++;
	ps_synth_result_free(&res);
	timing_free(&tm);
	gt_free(&gt);
	return bad ? 1 : 0;
}

/* One "TID IP" or "TID SEC.NSEC: IP" line into @dec; 0 or -ENOMEM */
static int cmpflow_add(struct ptcheck_flow *dec, uint64_t ip, uint64_t ns)
{
	if (dec->nr == dec->cap) {
		dec->cap = dec->cap ? 2 * dec->cap : 65536;
		dec->ips = realloc(dec->ips, dec->cap * sizeof(*dec->ips));
		dec->tsc = realloc(dec->tsc, dec->cap * sizeof(*dec->tsc));
		if (!dec->ips || !dec->tsc)
			return -ENOMEM;
	}
	dec->tsc[dec->nr] = ns;
	dec->ips[dec->nr++] = ip;
	return 0;
}

/*
 * A flow line: "TID IP" (perf script -F tid,ip) or "TID SEC.NSEC: IP"
 * (-F tid,ip,time --ns).  Returns 1 and fills the fields, 0 if it is
 * none; *@ns is PTCHECK_NO_TIME without a time.
 */
static int cmpflow_parse(const char *line, int *tid, unsigned long *ip,
			 uint64_t *ns)
{
	unsigned long sec, nsec;

	if (sscanf(line, "%d %lu.%lu: %lx", tid, &sec, &nsec, ip) == 4) {
		*ns = sec * 1000000000ULL + nsec;
		return 1;
	}
	*ns = PTCHECK_NO_TIME;
	return sscanf(line, "%d %lx", tid, ip) == 2;
}

/*
 * Compare a decoded flow given as text ("TID IP" per instruction, as from
 * perf script -F tid,ip; trace error lines mentioning an overflow mark an
 * OVF for that thread) with the ground truth, thread by thread; with
 * --time its times ("TID SEC.NSEC: IP", -F tid,ip,time --ns) with the
 * hardware times of @x.
 */
static int cmpflow_tid(const struct check_ctx *x, FILE *f, int tid)
{
	struct ptcheck_flow truth, dec = { .ovf_pos = (size_t)-1 };
	char line[1024];
	unsigned long ip;
	uint64_t ns;
	int t, ret;

	if (ptcheck_truth(x->gt, tid, &truth))
		return -1;
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "tid ");

		if (strstr(line, "error")) {
			if (p && atoi(p + 4) == tid &&
			    strcasestr(line, "overflow")) {
				dec.nr_ovf++;
				if (dec.ovf_pos == (size_t)-1)
					dec.ovf_pos = dec.nr;
			} else if (p && atoi(p + 4) == tid) {
				dec.nr_errors++;
			}
			continue;
		}
		if (!cmpflow_parse(line, &t, &ip, &ns) || t != tid)
			continue;
		if (cmpflow_add(&dec, ip, ns))
			return -1;
	}
	ret = report_flows("", tid, "decoded", &truth, &dec);
	if (!ret && x->c->check_time)
		ret = check_times(x->gt, x->tm, x->so, x->res, "", tid,
				  "decoded", &dec, false);
	ptcheck_flow_free(&truth);
	ptcheck_flow_free(&dec);
	return ret;
}

/* The threads of @gt with instructions, in order; returns how many */
static int gt_tids(const struct gt_trace *gt, int *tids, int max)
{
	int nr = 0, j;
	size_t i;

	for (i = 0; i < gt->nr_recs && nr < max; i++) {
		const struct gt_rec *r = gt->recs[i];

		if (r->type != GT_INSN)
			continue;
		for (j = 0; j < nr && tids[j] != (int)r->tid; j++)
			;
		if (j == nr)
			tids[nr++] = r->tid;
	}
	return nr;
}

/* cmpflow --time: the time map and the MTC ratio; 0 or 1 (reported) */
static int cmpflow_time(struct check_ctx *x, struct timing_ctx *tm,
			struct ps_synth_opts *so, struct ps_synth_result *res)
{
	const struct gt_timeconv *tc = &x->gt->hdr.tc;

	memset(res, 0, sizeof(*res));
	if (timing_setup(x->c, x->gt, tm, so))
		return 1;
	if (ps_stream_ctc_ratio(tc, &res->ctc_n, &res->ctc_d)) {
		fprintf(stderr, "ptsynth: no TSC/CTC ratio from the time conversion\n");
		timing_free(tm);
		return 1;
	}
	return 0;
}

static int cmd_cmpflow(struct cli *c, int argc, char **argv)
{
	struct ps_synth_opts so = c->so;
	struct ps_synth_result res;
	struct timing_ctx tm = { 0 };
	struct check_ctx x = { .c = c, .so = &so, .res = &res, .tm = &tm };
	struct gt_trace gt;
	int tids[1024], nr, i, bad = 0;
	FILE *f;

	if (argc < 1) {
		usage();
		return 2;
	}
	f = fopen(argv[0], "r");
	if (!f) {
		perror(argv[0]);
		return 1;
	}
	if (load_gt(c->gt_path, &gt)) {
		fclose(f);
		return 1;
	}
	x.gt = &gt;
	if (c->check_time && cmpflow_time(&x, &tm, &so, &res)) {
		fclose(f);
		gt_free(&gt);
		return 1;
	}
	nr = gt_tids(&gt, tids, 1024);
	for (i = 0; i < nr; i++)
		if (cmpflow_tid(&x, f, tids[i]))
			bad++;
	fclose(f);
	timing_free(&tm);
	gt_free(&gt);
	return bad ? 1 : 0;
}

static void dump_rec(const struct gt_rec *r)
{
	const struct gt_insn *in = (const void *)r;
	const struct gt_mmap *m = (const void *)r;
	int i;

	printf("%s tid %u tsc %llu", gt_type_name(r->type), r->tid,
	       (unsigned long long)r->tsc);
	switch (r->type) {
	case GT_INSN:
		printf(" ip %#llx len %u bytes", (unsigned long long)in->ip,
		       in->len);
		for (i = 0; i < in->len; i++)
			printf(" %02x", in->bytes[i]);
		break;
	case GT_MMAP:
		printf(" %#llx-%#llx pgoff %#llx prot %u %s",
		       (unsigned long long)m->start,
		       (unsigned long long)(m->start + m->len),
		       (unsigned long long)m->pgoff, m->prot, m->name);
		break;
	case GT_SYSCALL:
		printf(" nr %llu",
		       (unsigned long long)((const struct gt_syscall *)r)->nr);
		break;
	case GT_SIGNAL:
		printf(" sig %u resume %#llx",
		       ((const struct gt_signal *)r)->signo,
		       (unsigned long long)((const struct gt_signal *)r)->resume_ip);
		break;
	case GT_COMM:
		printf(" %.16s", ((const struct gt_comm *)r)->comm);
		break;
	case GT_CODE:
		printf(" %#llx len %llu",
		       (unsigned long long)((const struct gt_code *)r)->addr,
		       (unsigned long long)((const struct gt_code *)r)->len);
		break;
	default:
		break;
	}
	printf("\n");
}

/*
 * dump: every record, or with --insns each instruction as "TID IP"; with
 * --hw-time its hardware TSC and perf time (in ns) too.
 */
static int cmd_dump(struct cli *c)
{
	struct ps_synth_opts so = c->so;
	struct timing_ctx tm;
	struct gt_trace gt;
	size_t i;

	if (load_gt(c->gt_path, &gt))
		return 1;
	if (c->hw_time && timing_setup(c, &gt, &tm, &so)) {
		gt_free(&gt);
		return 1;
	}
	for (i = 0; i < gt.nr_recs; i++) {
		const struct gt_rec *r = gt.recs[i];

		if (!c->insns_only) {
			dump_rec(r);
		} else if (r->type == GT_INSN) {
			printf("%u %llx", r->tid, (unsigned long long)
			       ((const struct gt_insn *)r)->ip);
			if (c->hw_time)
				printf(" %llu %llu",
				       (unsigned long long)tm.hw.hw[i],
				       (unsigned long long)ps_perf_tsc_to_time(
						tm.hw.hw[i], &gt.hdr.tc));
			printf("\n");
		}
	}
	if (c->hw_time)
		timing_free(&tm);
	gt_free(&gt);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	const char *cmd;
	struct gt_trace gt;
	int idx, ret;

	if (argc < 2) {
		usage();
		return 2;
	}
	cmd = argv[1];
	idx = parse_args(&c, argc - 1, argv + 1);
	if (idx < 0)
		return 2;
	argc -= idx + 1;
	argv += idx + 1;
	if (!strcmp(cmd, "record"))
		ret = cmd_trace(&c, argc, argv, true);
	else if (!strcmp(cmd, "trace"))
		ret = cmd_trace(&c, argc, argv, false);
	else if (!strcmp(cmd, "synth")) {
		if (load_gt(c.gt_path, &gt))
			return 1;
		ret = do_synth(&c, &gt);
		gt_free(&gt);
	} else if (!strcmp(cmd, "check"))
		ret = cmd_check(&c);
	else if (!strcmp(cmd, "cmpflow"))
		ret = cmd_cmpflow(&c, argc, argv);
	else if (!strcmp(cmd, "dump"))
		ret = cmd_dump(&c);
	else {
		usage();
		ret = 2;
	}
	classify_exit();
	return ret;
}
