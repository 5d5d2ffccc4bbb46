/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptcheck.h - libipt-based checker of synthesised traces
 */
#ifndef PTSYNTH_PTCHECK_H
#define PTSYNTH_PTCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt.h"

struct ptcheck_flow {
	uint64_t *ips;
	uint64_t *tsc;		/* decoder's time per insn, if asked for */
	size_t nr, cap;
	size_t ovf_pos;		/* index of first insn after OVF, or -1 */
	unsigned int nr_ovf;
	unsigned int nr_errors;
};

/* What libipt needs to know to turn MTC and CYC into time */
struct ptcheck_time_cfg {
	uint8_t mtc_freq;		/* perf's mtc_period */
	uint32_t ctc_n, ctc_d;		/* CPUID 0x15 EBX, EAX */
	uint8_t nom_freq;		/* max non-turbo ratio */
};

#define PTCHECK_NO_TIME	UINT64_MAX	/* the decoder had no time */

int ptcheck_decode(const struct gt_trace *gt, const uint8_t *pt, size_t len,
		   struct ptcheck_flow *f, bool verbose,
		   const struct ptcheck_time_cfg *tcfg);
int ptcheck_truth(const struct gt_trace *gt, int tid, struct ptcheck_flow *f);
int ptcheck_compare(const struct ptcheck_flow *truth,
		    const struct ptcheck_flow *dec, size_t *gap_end);
void ptcheck_flow_free(struct ptcheck_flow *f);

#endif
