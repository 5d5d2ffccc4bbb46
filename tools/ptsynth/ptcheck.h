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
	size_t nr, cap;
	size_t ovf_pos;		/* index of first insn after OVF, or -1 */
	unsigned int nr_ovf;
	unsigned int nr_errors;
};

int ptcheck_decode(const struct gt_trace *gt, const uint8_t *pt, size_t len,
		   struct ptcheck_flow *f, bool verbose);
int ptcheck_truth(const struct gt_trace *gt, int tid, struct ptcheck_flow *f);
int ptcheck_compare(const struct ptcheck_flow *truth,
		    const struct ptcheck_flow *dec, size_t *gap_end);
void ptcheck_flow_free(struct ptcheck_flow *f);

#endif
