/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_perf: a strict, bounds-checked reader of perf.data files (file mode,
 * "PERFILE2") with Intel PT AUX data.
 *
 * The reader checks the header, the attrs and every record against the
 * data section before it looks at a field, and hands out records with
 * their sample_id trailer decoded.  It does not allocate per record; AUX
 * data stays in the file image (memory the caller passes or the file
 * mapped read-only).
 */
#ifndef PR_PERF_H
#define PR_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "libflowjit.h"

/* Record types read here (linux/perf_event.h, tools/perf/util/event.h). */
enum {
	PR_REC_MMAP		= 1,
	PR_REC_LOST		= 2,
	PR_REC_COMM		= 3,
	PR_REC_EXIT		= 4,
	PR_REC_FORK		= 7,
	PR_REC_MMAP2		= 10,
	PR_REC_AUX		= 11,
	PR_REC_ITRACE_START	= 12,
	PR_REC_LOST_SAMPLES	= 13,
	PR_REC_SWITCH		= 14,
	PR_REC_SWITCH_CPU_WIDE	= 15,
	PR_REC_KSYMBOL		= 17,
	PR_REC_BPF_EVENT	= 18,
	PR_REC_TEXT_POKE	= 20,
	PR_REC_FLOWJIT		= FLOWJIT_PERF_RECORD_TYPE,
	PR_REC_AUXTRACE_INFO	= 70,
	PR_REC_AUXTRACE		= 71,
};

/* The most attrs and ids a file may have. */
#define PR_PERF_MAX_ATTRS	64
#define PR_PERF_MAX_IDS		4096

/* One attr of the file. */
struct pr_perf_attr {
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	uint64_t flags;		/* the attr's flag bit word */
};

/* attr flag bits used here. */
#define PR_ATTR_SAMPLE_ID_ALL	(1ULL << 18)
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

/* The intel_pt AUXTRACE_INFO. */
struct pr_pt_info {
	int valid;
	uint32_t pmu_type;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	int cap_user_time_zero;
	int per_cpu_mmaps;
	uint64_t have_sched_switch;
};

/* An opened perf.data. */
struct pr_perf {
	const uint8_t *buf;
	size_t size;
	/* Non-zero if @buf is mapped by pr_perf_open(). */
	int mapped;

	uint64_t data_off, data_size;

	struct pr_perf_attr attr[PR_PERF_MAX_ATTRS];
	uint32_t nattr;
	/* Sample ids and the attr each belongs to. */
	uint64_t ids[PR_PERF_MAX_IDS];
	uint32_t id_attr[PR_PERF_MAX_IDS];
	uint32_t nids;
	/* Non-zero if any attr asks for flowjit records. */
	int flowjit;

	/* The read position in the data section. */
	uint64_t pos;

	/* A description of the last error. */
	char error[160];
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
