/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf and flowjit: perf's side of the image store. The store is
 * tools/lib/flowjit's (flowjit_store_*() in libflowjit.h, whose contract
 * says what it answers): runtime code images (PERF_RECORD_FLOWJIT) kept
 * by (address space, address range, time), so that a decoder reads the
 * bytes that were live at (asid, ip) when the traced instruction ran.
 * Here: adding perf's events, with perf's debug messages for what is
 * dropped, and the one-line report. See tools/perf/flowjit/flowjit.rst.
 */
#ifndef __PERF_FLOWJIT_STORE_H
#define __PERF_FLOWJIT_STORE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "flowjit.h"

union perf_event;

/*
 * Add one PERF_RECORD_FLOWJIT record of perf time @time to @st
 * (flowjit_store_add_chunk() once flowjit__parse() took it; a refused
 * record is counted, and with -v its reason printed). If @added is not
 * NULL it is set to the revision the record completed, or NULL.
 * Returns 0, or -ENOMEM.
 */
int flowjit_store__add_event(struct flowjit_store *st, const union perf_event *event,
			     u64 time, const struct flowjit_rev **added);

/* the same for a checked chunk (flowjit__parse()) */
int flowjit_store__add_chunk(struct flowjit_store *st, const struct flowjit_chunk *chunk,
			     u64 time, const struct flowjit_rev **added);

/* true if @st dropped a record or has images missing chunks */
bool flowjit_store__dropped(const struct flowjit_store *st);

/*
 * One line: images, retires, every kind of record dropped, and the reads
 * counted in @reads (flowjit_store_span(), flowjit_store_read()).
 */
size_t flowjit_store__fprintf_stats(const struct flowjit_store *st,
				    const struct flowjit_store_reads *reads, FILE *fp);

#endif /* __PERF_FLOWJIT_STORE_H */
