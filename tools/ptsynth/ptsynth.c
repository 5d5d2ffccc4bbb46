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
#include "gt.h"
#include "perfdata.h"
#include "ptcheck.h"
#include "sideband.h"
#include "synth.h"
#include "tracer.h"

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
};

static void usage(void)
{
	fprintf(stderr,
"usage: ptsynth record [-o perf.data] [-g FILE.gt] [options] -- CMD [ARGS]\n"
"       ptsynth trace -g FILE.gt [--max-insns N] [--start-on-signal SIG\n"
"                     [--stop-on-signal SIG]] -- CMD [ARGS]\n"
"       ptsynth synth -g FILE.gt [-o perf.data] [options]\n"
"       ptsynth check -g FILE.gt [options]\n"
"       ptsynth cmpflow -g FILE.gt FLOW.txt   (FLOW: perf script -F tid,ip)\n"
"       ptsynth dump -g FILE.gt [--insns]\n"
"options:\n"
"  --per-cpu          per-CPU AUX buffers (+ context switch sideband)\n"
"  --cpus N           CPUs for --per-cpu (threads assigned round robin)\n"
"  --psb-period N     bytes between PSB+ (default 4096, 0: only at start)\n"
"  --ovf-at N         inject an OVF before insn N of each stream\n"
"  --ovf-len N        instructions whose packets the OVF loses (default 32)\n"
"  --retcomp          return compression (default off, as perf noretcomp)\n"
"  --long-tnt         use TNT-64 packets\n"
"  --mtc[=PERIOD]     MTC packets every 2^PERIOD crystal clock ticks (perf's\n"
"                     mtc_period, default 3) and TMA in PSB+: time as\n"
"                     hardware sends it, no TSC at exec faults\n"
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
"  --no-fault-tsc     --sideband: no TSC packet after an exec fault\n");
}

enum { OPT_PER_CPU = 256, OPT_CPUS, OPT_PSB, OPT_OVF_AT, OPT_OVF_LEN,
	OPT_RETCOMP, OPT_LONG_TNT, OPT_PMU, OPT_RAW, OPT_MAX, OPT_INSNS,
	OPT_SIDEBAND, OPT_ROOT, OPT_STRIP, OPT_NO_FAULT_TSC, OPT_START_SIG,
	OPT_STOP_SIG, OPT_MTC };

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
	{ "pmu-type", required_argument, NULL, OPT_PMU },
	{ "raw-dir", required_argument, NULL, OPT_RAW },
	{ "max-insns", required_argument, NULL, OPT_MAX },
	{ "insns", no_argument, NULL, OPT_INSNS },
	{ "sideband", required_argument, NULL, OPT_SIDEBAND },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "strip-flowjit", no_argument, NULL, OPT_STRIP },
	{ "no-fault-tsc", no_argument, NULL, OPT_NO_FAULT_TSC },
	{ "start-on-signal", required_argument, NULL, OPT_START_SIG },
	{ "stop-on-signal", required_argument, NULL, OPT_STOP_SIG },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(struct cli *c, int argc, char **argv)
{
	int opt;

	ps_synth_opts_default(&c->so);
	c->so.fault_tsc = true;
	c->pmu_type = 8;
	while ((opt = getopt_long(argc, argv, "+o:g:vh", long_opts, NULL)) != -1) {
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
		case OPT_MTC:
			c->so.mtc_period = optarg ? atoi(optarg) : 3;
			if (c->so.mtc_period < 0 || c->so.mtc_period > 15) {
				fprintf(stderr, "ptsynth: --mtc=%s: the period is 0 to 15\n",
					optarg);
				return -1;
			}
			break;
		case OPT_PMU: c->pmu_type = strtoul(optarg, NULL, 0); break;
		case OPT_RAW: c->raw_dir = optarg; break;
		case OPT_MAX: c->to.max_insns = strtoull(optarg, NULL, 0); break;
		case OPT_INSNS: c->insns_only = true; break;
		case OPT_SIDEBAND: c->sideband = optarg; break;
		case OPT_ROOT: c->root = optarg; break;
		case OPT_STRIP: c->strip_flowjit = true; break;
		case OPT_NO_FAULT_TSC: c->so.fault_tsc = false; break;
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

/* smallest TSC whose perf time is >= @t */
static uint64_t perf_time_to_tsc(uint64_t t, const struct gt_timeconv *tc)
{
	uint64_t lo = 0, hi = 1ULL << 62;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ps_perf_tsc_to_time(mid, tc) < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int synth_write(const struct cli *c, const struct ps_synth_opts *so,
		       const struct gt_trace *gt, const struct ps_sb *sb);

static int do_synth(const struct cli *c, const struct gt_trace *gt)
{
	struct ps_synth_opts so = c->so;
	struct ps_sb sb;
	struct ps_synth_fault *faults = NULL;
	size_t i;
	int err;

	if (!c->sideband)
		return synth_write(c, &so, gt, NULL);
	err = ps_sb_load(&sb, c->sideband, c->root, c->strip_flowjit);
	if (err) {
		fprintf(stderr, "ptsynth: cannot read the sideband %s: %s\n",
			c->sideband, strerror(-err));
		return 1;
	}
	fprintf(stderr, "ptsynth: sideband: %zu records kept (%llu synthesised by perf record, time 0), %llu skipped, %llu malformed, %llu flowjit (%llu exec faults), %llu stripped, %llu files from --root\n",
		sb.nr, (unsigned long long)sb.nr_synth,
		(unsigned long long)sb.nr_skipped,
		(unsigned long long)sb.nr_bad,
		(unsigned long long)sb.nr_flowjit,
		(unsigned long long)sb.nr_images,
		(unsigned long long)sb.nr_stripped,
		(unsigned long long)sb.nr_renamed);
	/* exec faults are known from the flowjit records only */
	faults = calloc(sb.nr_faults + 1, sizeof(*faults));
	if (!faults) {
		ps_sb_free(&sb);
		return 1;
	}
	for (i = 0; i < sb.nr_faults; i++) {
		faults[i].tid = sb.faults[i].tid;
		faults[i].tsc = perf_time_to_tsc(sb.faults[i].time,
						 &gt->hdr.tc);
	}
	so.faults = faults;
	so.nr_faults = sb.nr_faults;
	err = synth_write(c, &so, gt, &sb);
	free(faults);
	ps_sb_free(&sb);
	return err;
}

static int synth_write(const struct cli *c, const struct ps_synth_opts *so,
		       const struct gt_trace *gt, const struct ps_sb *sb)
{
	struct ps_perf_opts po = {
		.path = c->output ? c->output : "perf.data",
		.pmu_type = c->pmu_type,
		.per_cpu = c->so.per_cpu,
		.retcomp = c->so.retcomp,
		.psb_period = c->so.psb_period,
		.mtc = c->so.mtc_period >= 0,
		.mtc_period = c->so.mtc_period,
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
	if (so->nr_faults)
		fprintf(stderr, "ptsynth: %llu exec faults modelled, %llu dropped, %llu before the trace starts\n",
			(unsigned long long)res.nr_faults,
			(unsigned long long)res.nr_faults_dropped,
			(unsigned long long)res.nr_faults_before);
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
 * insns, ...: match" (or MISMATCH) and free both flows. Returns 0 on a match.
 */
static int report_flows(const char *label, int tid, const char *decoder,
			struct ptcheck_flow *truth, struct ptcheck_flow *dec)
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
	ptcheck_flow_free(truth);
	ptcheck_flow_free(dec);
	return ret;
}

static int check_stream(const struct gt_trace *gt,
			const struct ps_synth_stream *s, const struct cli *c)
{
	struct ptcheck_flow truth, dec;
	char label[32];

	if (ptcheck_truth(gt, s->tid, &truth) ||
	    ptcheck_decode(gt, s->buf.data, s->buf.len, &dec, c->so.verbose))
		return -1;
	snprintf(label, sizeof(label), "stream %d ", s->idx);
	return report_flows(label, s->tid, "libipt", &truth, &dec);
}

static int cmd_check(struct cli *c)
{
	struct ps_synth_result res;
	struct gt_trace gt;
	int i, bad = 0;

	if (c->so.per_cpu) {
		fprintf(stderr, "ptsynth: check works on per-thread streams\n");
		return 2;
	}
	if (load_gt(c->gt_path, &gt))
		return 1;
	if (ps_synth_run(&gt, &c->so, &res)) {
		gt_free(&gt);
		return 1;
	}
	for (i = 0; i < res.nr_streams; i++)
		if (check_stream(&gt, &res.streams[i], c))
			bad++;
	ps_synth_result_free(&res);
	gt_free(&gt);
	return bad ? 1 : 0;
}

/*
 * Compare a decoded flow given as text ("TID IP" per instruction, as from
 * perf script -F tid,ip; trace error lines mentioning an overflow mark an
 * OVF for that thread) with the ground truth, thread by thread.
 */
static int cmpflow_tid(const struct gt_trace *gt, FILE *f, int tid)
{
	struct ptcheck_flow truth, dec = { .ovf_pos = (size_t)-1 };
	char line[1024];
	int t;
	unsigned long ip;

	if (ptcheck_truth(gt, tid, &truth))
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
		if (sscanf(line, "%d %lx", &t, &ip) != 2 || t != tid)
			continue;
		if (dec.nr == dec.cap) {
			dec.cap = dec.cap ? 2 * dec.cap : 65536;
			dec.ips = realloc(dec.ips, dec.cap * sizeof(*dec.ips));
			if (!dec.ips)
				return -1;
		}
		dec.ips[dec.nr++] = ip;
	}
	return report_flows("", tid, "decoded", &truth, &dec);
}

static int cmd_cmpflow(struct cli *c, int argc, char **argv)
{
	struct gt_trace gt;
	int tids[1024], nr = 0, i, j, bad = 0;
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
	for (i = 0; i < (int)gt.nr_recs && nr < 1024; i++) {
		const struct gt_rec *r = gt.recs[i];

		if (r->type != GT_INSN)
			continue;
		for (j = 0; j < nr && tids[j] != (int)r->tid; j++)
			;
		if (j == nr)
			tids[nr++] = r->tid;
	}
	for (i = 0; i < nr; i++)
		if (cmpflow_tid(&gt, f, tids[i]))
			bad++;
	fclose(f);
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

static int cmd_dump(struct cli *c)
{
	struct gt_trace gt;
	size_t i;

	if (load_gt(c->gt_path, &gt))
		return 1;
	for (i = 0; i < gt.nr_recs; i++) {
		const struct gt_rec *r = gt.recs[i];

		if (!c->insns_only)
			dump_rec(r);
		else if (r->type == GT_INSN)
			printf("%u %llx\n", r->tid, (unsigned long long)
			       ((const struct gt_insn *)r)->ip);
	}
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
