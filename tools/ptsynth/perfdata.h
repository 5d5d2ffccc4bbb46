/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perfdata.h - ptsynth's perf.data: the writer of synthesised traces
 * (perfdata.c), on tools/lib/flowjit's perf.data writer (pdata.h), and
 * the intel_pt attr and AUXTRACE_INFO the kernel mode's writer (ksynth.c)
 * makes too
 *
 * Functions returning int return 0 or a negative errno;
 * ps_perf_pt_auxtrace_info() returns a size, 0 if the record does not fit.
 */
#ifndef PTSYNTH_PERFDATA_H
#define PTSYNTH_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pdata.h"

struct gt_timeconv;
struct gt_trace;
struct ps_hwtime;
struct perf_event_attr;
struct ps_sb;
struct ps_synth_result;

uint64_t ps_perf_tsc_to_time(uint64_t tsc, const struct gt_timeconv *tc);

/* AUXTRACE_INFO of intel_pt without a filter string, in u64s */
#define PS_PERF_PT_INFO_WORDS		PDATA_PT_INFO_WORDS

uint64_t ps_perf_pt_config(uint64_t psb_period, bool retcomp);
void ps_perf_pt_attr(struct perf_event_attr *a, uint32_t pmu_type,
		     uint64_t config, uint64_t sample_type);
size_t ps_perf_pt_auxtrace_info(uint64_t *rec, size_t max_words,
				uint32_t pmu_type, const struct gt_timeconv *tc,
				bool per_cpu, const char *filter);

struct ps_perf_opts {
	const char *path;
	uint32_t pmu_type;
	bool per_cpu;
	bool retcomp;
	uint64_t psb_period;
	bool mtc;				/* MTC every 2^mtc_period */
	int mtc_period;
	bool cyc;				/* CYC, threshold: */
	int cyc_thresh;
	const struct ps_hwtime *hw;		/* time map, NULL: identity */
	const struct ps_sb *sideband;		/* real sideband, or NULL */
	bool flowjit;				/* set attr.flowjit (bit 63) */
};

int ps_perf_write(const struct gt_trace *gt, const struct ps_synth_result *res,
		  const struct ps_perf_opts *o);

#endif
