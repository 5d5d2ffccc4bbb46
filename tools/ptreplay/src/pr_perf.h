/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_perf: ptreplay's view of a perf.data file (file mode, "PERFILE2")
 * with Intel PT AUX data, on tools/lib/flowjit's reader (pdata.h, which
 * states what is validated).
 *
 * Records are handed out with the sample_id trailer of the records the
 * kernel writes (types below 64 but samples, flowjit's included) parsed
 * and cut off their body. It does not allocate per record; AUX data stays
 * in the file image (memory the caller passes or the file mapped
 * read-only).
 */
#ifndef PR_PERF_H
#define PR_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "libflowjit.h"
#include "pdata.h"

/* Record types read here (linux/perf_event.h, tools/perf/util/event.h). */
enum {
	PR_REC_MMAP		= PDATA_REC_MMAP,
	PR_REC_LOST		= PDATA_REC_LOST,
	PR_REC_COMM		= PDATA_REC_COMM,
	PR_REC_EXIT		= PDATA_REC_EXIT,
	PR_REC_FORK		= PDATA_REC_FORK,
	PR_REC_MMAP2		= PDATA_REC_MMAP2,
	PR_REC_AUX		= PDATA_REC_AUX,
	PR_REC_ITRACE_START	= PDATA_REC_ITRACE_START,
	PR_REC_LOST_SAMPLES	= PDATA_REC_LOST_SAMPLES,
	PR_REC_SWITCH		= PDATA_REC_SWITCH,
	PR_REC_SWITCH_CPU_WIDE	= PDATA_REC_SWITCH_CPU_WIDE,
	PR_REC_KSYMBOL		= PDATA_REC_KSYMBOL,
	PR_REC_BPF_EVENT	= PDATA_REC_BPF_EVENT,
	PR_REC_TEXT_POKE	= PDATA_REC_TEXT_POKE,
	PR_REC_FLOWJIT		= FLOWJIT_PERF_RECORD_TYPE,
	PR_REC_AUXTRACE_INFO	= PDATA_REC_AUXTRACE_INFO,
	PR_REC_AUXTRACE		= PDATA_REC_AUXTRACE,
};

/* attr.flowjit: bit 63 of the attr's flag word */
#define PR_ATTR_FLOWJIT		(1ULL << 63)

/* The sample_id trailer of a non-sample record (zero where absent). */
struct pr_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t id;
	/* Non-zero if the trailer had a time. */
	int has_time;
};

/* One record of the data section. */
struct pr_perf_rec {
	uint32_t type;
	uint16_t misc;
	/* The record body after the 8-byte header, without the trailer. */
	const uint8_t *body;
	size_t body_size;
	/* For AUXTRACE: the trace bytes that follow the record. */
	const uint8_t *aux;
	uint64_t aux_size;
	/* The offset of the record in the file. */
	uint64_t offset;
	struct pr_sample_id sid;
};

/* The intel_pt AUXTRACE_INFO (pdata.h). */
#define pr_pt_info pdata_pt_info

/* An opened perf.data. */
struct pr_perf {
	struct pdata pd;
	/* Non-zero if any attr asks for flowjit records. */
	int flowjit;
	/* A description of the last error. */
	char error[sizeof(((struct pdata *)0)->error)];
};

/* Set up @perf on @size bytes at @buf (not copied; must stay valid).
 *
 * Returns zero on success.
 * Returns -1 with @perf->error set if the header or attrs are malformed.
 */
extern int pr_perf_init_mem(struct pr_perf *perf, const uint8_t *buf,
			    size_t size);

/* Map the file @path read-only and set up @perf on it.
 *
 * Returns zero on success, -1 with @perf->error set otherwise.
 */
extern int pr_perf_open(struct pr_perf *perf, const char *path);

/* Release @perf's mapping; @perf may be NULL. */
extern void pr_perf_fini(struct pr_perf *perf);

/* Read the next record into @rec.
 *
 * Returns 1 if a record was read, 0 at the end of the data section.
 * Returns -1 with @perf->error set if the record is malformed.
 */
extern int pr_perf_next(struct pr_perf *perf, struct pr_perf_rec *rec);

/* Decode an intel_pt AUXTRACE_INFO record body into @info.
 *
 * Returns zero on success, -1 if @rec is not a valid one.
 */
extern int pr_perf_pt_info(struct pr_pt_info *info,
			   const struct pr_perf_rec *rec);

/* Convert a TSC value to perf time with @info's parameters. */
extern uint64_t pr_tsc_to_perf(const struct pr_pt_info *info, uint64_t tsc);

/* Convert perf time to TSC (the inverse of pr_tsc_to_perf(), rounded
 * down).
 */
extern uint64_t pr_perf_to_tsc(const struct pr_pt_info *info, uint64_t time);

/* Read a little-endian integer at @p. */
static inline uint64_t pr_get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; --i)
		v = (v << 8) | p[i];
	return v;
}

static inline uint32_t pr_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint16_t pr_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

#endif /* PR_PERF_H */
