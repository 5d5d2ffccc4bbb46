/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perfdata.h - the perf.data format (tools/perf/Documentation/
 * perf.data-file-format.txt): the writer of synthesised traces
 * (perfdata.c), and the pieces of the format the kernel mode's writer
 * (ksynth.c) and the sideband reader (sideband.c) need too
 *
 * The names of the file format (PERF_MAGIC, struct perf_file_header, ...)
 * are perf's own.  Functions returning int return 0 or a negative errno;
 * ps_perf_pt_auxtrace_info() returns a size, 0 if the record does not fit.
 */
#ifndef PTSYNTH_PERFDATA_H
#define PTSYNTH_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gt_timeconv;
struct gt_trace;
struct perf_event_attr;
struct ps_buf;
struct ps_sb;
struct ps_synth_result;

uint64_t ps_perf_tsc_to_time(uint64_t tsc, const struct gt_timeconv *tc);

#define PERF_MAGIC			0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_RECORD_AUXTRACE		71

struct perf_file_section {
	uint64_t offset, size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;
	uint64_t adds_features[4];
};

/* PERF_RECORD_AUXTRACE after its header; the trace bytes follow it */
struct ps_perf_auxtrace {
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu, reserved;
};

/* AUXTRACE_INFO of intel_pt without a filter string, in u64s */
#define PS_PERF_PT_INFO_WORDS		20

bool ps_perf_header_ok(const struct perf_file_header *h, uint64_t file_size);
struct perf_file_section ps_perf_attr_ids(const uint8_t *attr,
					  uint64_t attr_size);
uint64_t ps_perf_pt_config(uint64_t psb_period, bool retcomp);
void ps_perf_pt_attr(struct perf_event_attr *a, uint32_t pmu_type,
		     uint64_t config, uint64_t sample_type);
size_t ps_perf_pt_auxtrace_info(uint64_t *rec, size_t max_words,
				uint32_t pmu_type, const struct gt_timeconv *tc,
				bool per_cpu, const char *filter);
void ps_perf_auxtrace_fill(struct ps_perf_auxtrace *a, const struct ps_buf *b,
			   uint64_t reference, int idx, int tid, int cpu);
int ps_perf_write_aux(FILE *f, const struct ps_buf *b);

struct ps_perf_opts {
	const char *path;
	uint32_t pmu_type;
	bool per_cpu;
	bool retcomp;
	uint64_t psb_period;
	bool mtc;				/* MTC every 2^mtc_period */
	int mtc_period;
	const struct ps_sb *sideband;		/* real sideband, or NULL */
	bool flowjit;				/* set attr.flowjit (bit 63) */
};

int ps_perf_write(const struct gt_trace *gt, const struct ps_synth_result *res,
		  const struct ps_perf_opts *o);

#endif
