// SPDX-License-Identifier: GPL-2.0
/*
 * ptksynth - ptsynth's kernel mode (README.rst, "Kernel scenario")
 *
 *   ptksynth gt -l QEMU.log -m MARKS -f RANGES -o FILE.gt
 *       kernel ground truth from QEMU's execution log (kgt.c)
 *   ptksynth synth -g FILE.gt -s GUEST.data -o perf.data [--raw FILE.pt]
 *         [--psb-period N] [--pmu-type N]
 *       PT stream of that ground truth, packaged with the guest's sideband
 *
 * RANGES: START..END[,START..END...] (END exclusive), the trace filter.
 * The flow of a ground truth is printed by "ptsynth dump --insns" and
 * compared with a decoder's by "ptsynth cmpflow".
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgt.h"

static void usage(void)
{
	fprintf(stderr,
"usage: ptksynth gt -l QEMU.log -m MARKS -f START..END[,...] -o FILE.gt\n"
"       ptksynth synth -g FILE.gt -s GUEST.data -o perf.data [--raw FILE.pt]\n"
"                [--psb-period N] [--pmu-type N]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "marks", required_argument, NULL, 'm' },
		{ "filter", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "gt", required_argument, NULL, 'g' },
		{ "sideband", required_argument, NULL, 's' },
		{ "raw", required_argument, NULL, 'r' },
		{ "psb-period", required_argument, NULL, 'p' },
		{ "pmu-type", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct kgt_opts go = { 0 };
	struct ksynth_opts so = { .psb_period = 4096, .pmu_type = 8 };
	const char *cmd;
	int c, err;

	if (argc < 2) {
		usage();
		return 2;
	}
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "l:m:f:o:g:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': go.log = optarg; break;
		case 'm': go.marks = optarg; break;
		case 'f':
			go.nr_filter = kgt_parse_ranges(optarg, go.filter,
							KGT_MAX_RANGES);
			if (go.nr_filter <= 0) {
				fprintf(stderr, "ptksynth: bad ranges: %s\n", optarg);
				return 2;
			}
			break;
		case 'o': go.out = so.out = optarg; break;
		case 'g': so.gt = optarg; break;
		case 's': so.sideband = optarg; break;
		case 'r': so.raw = optarg; break;
		case 'p': so.psb_period = strtoull(optarg, NULL, 0); break;
		case 't': so.pmu_type = strtoul(optarg, NULL, 0); break;
		default: usage(); return 2;
		}
	}
	if (!strcmp(cmd, "gt")) {
		if (!go.log || !go.marks || !go.nr_filter || !go.out) {
			usage();
			return 2;
		}
		err = kgt_run(&go);
	} else if (!strcmp(cmd, "synth")) {
		if (!so.gt || !so.sideband || !so.out) {
			usage();
			return 2;
		}
		err = ksynth_run(&so);
	} else {
		usage();
		return 2;
	}
	return err ? 1 : 0;
}
