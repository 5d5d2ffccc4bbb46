/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf and flowjit: PERF_RECORD_FLOWJIT records (runtime code images, see
 * tools/include/uapi/linux/flowjit.h and tools/perf/flowjit/flowjit.rst).
 */
#ifndef __PERF_FLOWJIT_H
#define __PERF_FLOWJIT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/flowjit.h>
#include <linux/types.h>

/*
 * Checking records, telling an image's chunks apart, reassembly and
 * CRC-32C: tools/lib/flowjit, the one reader of the format.
 */
#include "../../lib/flowjit/libflowjit.h"

/* what this perf spells differently from the other base's */
#include "base.h"

union perf_event;
struct perf_sample;
struct perf_tool;
struct machine;
struct evsel;
struct bpf_prog_info;
struct perf_env;

#define FLOWJIT_SYSCTL		"/proc/sys/kernel/flowjit"

/*
 * Check the record @event with flowjit_chunk_parse() and fill @chunk.
 * Returns 0, -EOPNOTSUPP for a record version this perf does not know
 * (skip it), or -EINVAL for a truncated or corrupted record. @why, if not
 * NULL, is set to a short reason on error.
 */
int flowjit__parse(const union perf_event *event, struct flowjit_chunk *chunk,
		   const char **why);

/*
 * Byte-swap the fixed part of a record of the other endianness; returns
 * where its sample_id starts, or NULL if the record is too short.
 */
void *flowjit__swap(union perf_event *event);

/*
 * Print one record on one line (plus a hex dump of finished images if
 * flowjit__show_bytes); images are reassembled across calls to report
 * "ok" or "BAD" on the chunk that finishes them.
 */
size_t perf_event__fprintf_flowjit(union perf_event *event, struct machine *machine,
				   FILE *fp);
extern bool flowjit__show_bytes;

/*
 * The name of eBPF program @id as perf record saved its bpf_prog_info
 * (HEADER_BPF_PROG_INFO), or NULL: perf without libbpf, or a program gone
 * before perf could ask bpf(2) about it.
 */
const char *flowjit__bpf_prog_name(struct perf_env *env, u64 id);

/* default handler: prints the record under perf report -D */
int perf_event__process_flowjit(FLOWJIT_TOOL_CONST struct perf_tool *tool,
				union perf_event *event,
				struct perf_sample *sample, struct machine *machine);

/*
 * perf record --flowjit: 0 if this kernel can give flowjit records,
 * otherwise -1 with the reason printed.
 */
int flowjit__check_kernel(void);

/* evsel__open_strerror() for events with attr.flowjit; 0 if not ours */
int flowjit__open_strerror(struct evsel *evsel, int err, char *msg, size_t size);

/*
 * Synthesize FLOWJIT_F_EXISTING image records for every function of a
 * loaded eBPF program, from bpf_prog_info's jited_ksyms, jited_func_lens
 * and jited_prog_insns. Returns 0 or a negative error.
 */
int flowjit__synthesize_bpf_prog(FLOWJIT_TOOL_CONST struct perf_tool *tool,
				 int (*process)(FLOWJIT_TOOL_CONST
						struct perf_tool *tool,
						union perf_event *event,
						struct perf_sample *sample,
						struct machine *machine),
				 struct machine *machine,
				 const struct bpf_prog_info *info);

#endif /* __PERF_FLOWJIT_H */
