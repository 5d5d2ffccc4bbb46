/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pdata: the one perf.data reader and writer of the host tools and the
 * selftests (tools/perf/Documentation/perf.data-file-format.txt is the
 * format). It knows the file layout only: the header, the attrs with
 * their ids, the records of the data section with their sample_id
 * trailers, AUXTRACE records with their trace bytes, and intel_pt's
 * AUXTRACE_INFO. What a record's body means is the caller's business;
 * flowjit's records are libflowjit.h's. Plain C on libc, no libperf.
 *
 * Byte order: the host's, which must be little-endian, as perf.data files
 * are read and written here only on x86. Integers of the file are read
 * with memcpy(), so the file image needs no alignment.
 *
 * The reader (pdata_open(), pdata_init_mem(), pdata_next()):
 *
 * - works on the whole file image, mapped read-only or passed by the
 *   caller, never copied; records and trace bytes point into it. It does
 *   not allocate.
 *
 * - validates before it reads: the magic, a file-mode header of 104
 *   bytes (the pipe format, 16 bytes, only with PDATA_PIPE: it has no
 *   attrs section, its records run to the end of the file), an attr size
 *   of 80 to 4096 bytes, an attrs section that is a non-zero multiple of
 *   it and in the file, at most PDATA_MAX_ATTRS attrs and PDATA_MAX_IDS
 *   ids in all, each ids section in the file, and a data section in the
 *   file that is not empty when bytes follow it (a header perf record did
 *   not finish).
 *
 * - pdata_next() hands out each record whose 8-byte header and size lie
 *   in the data section (size >= 8); an AUXTRACE record must have its
 *   40-byte body and its trace bytes in the data section too. Anything
 *   else stops the walk with an error; the walk never reads past the data
 *   section.
 *
 * - pdata_rec_attr() tells which attr's sample_id layout a record has:
 *   the first attr's if all attrs have one layout, else the attr whose id
 *   the record's last u64 (PERF_SAMPLE_IDENTIFIER) is. pdata_sample_id()
 *   parses that trailer and fails if the record is too small for it.
 *   Which records have a trailer (those the kernel writes, types below
 *   PERF_RECORD_USER_TYPE_START except samples) is the caller's choice.
 *
 * The writer (pdata_write_begin() ... pdata_write_end()) writes the
 * layout perf record writes in file mode, to a seekable FILE: the header,
 * the ids of all attrs in order, the attrs (attr_size bytes each, ids
 * section last), then the data section; pdata_write_end() fills in the
 * header's data size. The caller makes the records: pdata_put_sid() lays
 * out a sample_id trailer, pdata_write_auxtrace() an AUXTRACE record and
 * its trace bytes, pdata_pt_info_put() intel_pt's AUXTRACE_INFO.
 *
 * Functions returning int return 0 (pdata_next(): 1 for a record, 0 at
 * the end) or a negative errno value; the reader's failures also leave a
 * message in pdata.error. pdata_close() accepts NULL.
 */
#ifndef PDATA_H
#define PDATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PDATA_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PDATA_HEADER_SIZE	104
#define PDATA_PIPE_HEADER_SIZE	16
#define PDATA_MIN_ATTR_SIZE	(64 + 16)
#define PDATA_MAX_ATTR_SIZE	4096
#define PDATA_MAX_ATTRS		64
#define PDATA_MAX_IDS		4096

/* Record types (linux/perf_event.h, tools/perf/util/event.h) */
enum {
	PDATA_REC_MMAP			= 1,
	PDATA_REC_LOST			= 2,
	PDATA_REC_COMM			= 3,
	PDATA_REC_EXIT			= 4,
	PDATA_REC_FORK			= 7,
	PDATA_REC_SAMPLE		= 9,
	PDATA_REC_MMAP2			= 10,
	PDATA_REC_AUX			= 11,
	PDATA_REC_ITRACE_START		= 12,
	PDATA_REC_LOST_SAMPLES		= 13,
	PDATA_REC_SWITCH		= 14,
	PDATA_REC_SWITCH_CPU_WIDE	= 15,
	PDATA_REC_KSYMBOL		= 17,
	PDATA_REC_BPF_EVENT		= 18,
	PDATA_REC_TEXT_POKE		= 20,
	PDATA_REC_USER_TYPE_START	= 64,
	PDATA_REC_AUXTRACE_INFO		= 70,
	PDATA_REC_AUXTRACE		= 71,
};

/* sample_type bits of the sample_id trailer (bits 1, 2, 6, 7, 9, 16) */
#define PDATA_ST_TID		0x2ULL
#define PDATA_ST_TIME		0x4ULL
#define PDATA_ST_ID		0x40ULL
#define PDATA_ST_CPU		0x80ULL
#define PDATA_ST_STREAM_ID	0x200ULL
#define PDATA_ST_IDENTIFIER	0x10000ULL

/* attr flag word (the u64 at byte 40 of perf_event_attr): bit 18 */
#define PDATA_ATTR_SAMPLE_ID_ALL	0x40000ULL
#define PDATA_ATTR_FLAGS_OFFSET		40

/* struct perf_file_section and struct perf_file_header of the format */
struct pdata_section {
	uint64_t offset, size;
};

struct pdata_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct pdata_section attrs;
	struct pdata_section data;
	struct pdata_section event_types;
	uint64_t adds_features[4];
};

/* One attr of a file being read. */
struct pdata_attr {
	const uint8_t *raw;	/* attr_size - 16 bytes of perf_event_attr */
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	uint64_t flags;		/* the flag word */
	const uint8_t *ids;	/* nr_ids u64s in the file */
	uint64_t nr_ids;
};

/* A sample_id trailer; fields absent from the layout are zero. */
struct pdata_sid {
	uint64_t fields;	/* the PDATA_ST_ bits the trailer had */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;		/* PERF_SAMPLE_ID, else IDENTIFIER */
	uint64_t stream_id;
	uint32_t cpu;
};

/* One record of the data section, pointing into the file image. */
struct pdata_rec {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const uint8_t *hdr;	/* the record, header included */
	const uint8_t *body;	/* after the header: size - 8 bytes */
	size_t body_size;
	const uint8_t *aux;	/* AUXTRACE: the trace bytes */
	uint64_t aux_size;
	uint64_t offset;	/* of the record in the file */
};

/* A perf.data being read. */
struct pdata {
	const uint8_t *buf;
	size_t size;
	int mapped;		/* @buf is pdata_open()'s mapping */
	int pipe;		/* the pipe format: no attrs */
	uint64_t attr_size;
	uint64_t data_off, data_size;
	struct pdata_attr attr[PDATA_MAX_ATTRS];
	uint32_t nattr;
	int same_layout;	/* all attrs have one sample_id layout */
	uint64_t pos;		/* the read position in the data section */
	char error[160];
};

/* pdata_open() and pdata_init_mem() flags */
#define PDATA_PIPE		1	/* accept the pipe format */

/* Set up @pd on @size bytes at @buf, which must stay valid. */
int pdata_init_mem(struct pdata *pd, const void *buf, size_t size,
		   unsigned int flags);

/* Map the file @path read-only and set up @pd on it. */
int pdata_open(struct pdata *pd, const char *path, unsigned int flags);

/* Release @pd's mapping; the records handed out become invalid. */
void pdata_close(struct pdata *pd);

/* Read the next record into @rec: 1, 0 at the end, or an error. */
int pdata_next(struct pdata *pd, struct pdata_rec *rec);

/* Start the walk of the data section again. */
void pdata_rewind(struct pdata *pd);

/* The sample_id trailer size of @sample_type (sample_id_all set). */
size_t pdata_sid_size(uint64_t sample_type);

/*
 * The attr whose sample_id layout @rec has, NULL if it cannot be told.
 * With @zero_is_first, a record whose identifier is 0 (records perf record
 * synthesises itself) has the first attr's, as perf reads them.
 */
const struct pdata_attr *pdata_rec_attr(const struct pdata *pd,
					const struct pdata_rec *rec,
					int zero_is_first);

/*
 * Parse the trailer of @rec in @attr's layout into @sid and store the
 * size of the body without it in *@body_size. An attr without
 * sample_id_all has an empty trailer. -EINVAL if @rec is too small.
 */
int pdata_sample_id(struct pdata *pd, const struct pdata_rec *rec,
		    const struct pdata_attr *attr, struct pdata_sid *sid,
		    size_t *body_size);

/* ---- intel_pt AUXTRACE_INFO ---- */

/* Where its private u64s are (tools/perf/util/intel-pt.h) */
enum {
	PDATA_PT_PMU_TYPE,
	PDATA_PT_TIME_SHIFT,
	PDATA_PT_TIME_MULT,
	PDATA_PT_TIME_ZERO,
	PDATA_PT_CAP_USER_TIME_ZERO,
	PDATA_PT_TSC_BIT,
	PDATA_PT_NORETCOMP_BIT,
	PDATA_PT_HAVE_SCHED_SWITCH,
	PDATA_PT_SNAPSHOT_MODE,
	PDATA_PT_PER_CPU_MMAPS,
	PDATA_PT_MTC_BIT,
	PDATA_PT_MTC_FREQ_BITS,
	PDATA_PT_TSC_CTC_N,
	PDATA_PT_TSC_CTC_D,
	PDATA_PT_CYC_BIT,
	PDATA_PT_MAX_NONTURBO_RATIO,
	PDATA_PT_FILTER_STR_LEN,
	PDATA_PT_PRIV_MAX,
};

#define PDATA_AUXTRACE_INTEL_PT	1

/* The AUXTRACE_INFO words of intel_pt without a filter string */
#define PDATA_PT_INFO_WORDS	(2 + PDATA_PT_PRIV_MAX + 1)

/* What a reader of intel_pt's AUXTRACE_INFO uses. */
struct pdata_pt_info {
	int valid;
	uint32_t pmu_type;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	int cap_user_time_zero;
	int per_cpu_mmaps;
	uint64_t have_sched_switch;
	/*
	 * Timing packets (perf 4.3 and later write them; 0 in older files):
	 * the attr config bits of mtc and cyc, the mask of mtc_period, the
	 * TSC/CTC ratio n/d (CPUID 0x15 EBX/EAX) and the max non-turbo
	 * ratio (MSR_PLATFORM_INFO[15:8]: CYC's core:bus clock ratio).
	 */
	int has_timing;
	uint64_t mtc_bit, mtc_freq_bits, cyc_bit;
	uint32_t tsc_ctc_n, tsc_ctc_d;
	uint32_t max_nonturbo_ratio;
};

/*
 * Decode the intel_pt AUXTRACE_INFO @rec into @info: -EINVAL if it is
 * not one, or its time conversion is unusable (shift > 63, mult 0).
 */
int pdata_pt_info(struct pdata_pt_info *info, const struct pdata_rec *rec);

/*
 * intel_pt's AUXTRACE_INFO record into @rec (@max_words u64s): the
 * private words @priv, then @filter (NULL: none) as perf record --filter
 * notes it, then cap_event_trace 0. Returns its size in bytes, 0 if it
 * does not fit.
 */
size_t pdata_pt_info_put(uint64_t *rec, size_t max_words,
			 const uint64_t priv[PDATA_PT_PRIV_MAX],
			 const char *filter);

/*
 * TSC to perf time with a time conversion, and back (rounded down; 0 for a
 * time before TSC 0's). time_zero may be "negative" (above 2^63: a
 * guest's TSC ran before its sched clock began): the sums wrap as perf's.
 */
uint64_t pdata_tsc_to_time(uint64_t tsc, uint16_t time_shift,
			   uint32_t time_mult, uint64_t time_zero);
uint64_t pdata_time_to_tsc(uint64_t time, uint16_t time_shift,
			   uint32_t time_mult, uint64_t time_zero);

/* ---- the writer ---- */

/* PERF_RECORD_AUXTRACE as in the file, its header included */
struct pdata_auxtrace {
	uint32_t type;
	uint16_t misc, size;
	uint64_t aux_size, offset, reference;
	uint32_t idx, tid, cpu, reserved;
};

/* One attr to write: @size bytes of perf_event_attr and its ids */
struct pdata_wattr {
	const void *attr;
	size_t size;
	const uint64_t *ids;
	size_t nr_ids;
};

struct pdata_writer {
	FILE *f;
	struct pdata_file_header h;
	int err;
};

/*
 * Start a file on @f (seekable, at its start): the header, the ids and the @nr attrs of
 * @attr_size bytes each (the perf_event_attr and its ids section).
 * -EINVAL if an attr does not fit @attr_size.
 */
int pdata_write_begin(struct pdata_writer *w, FILE *f, uint64_t attr_size,
		      const struct pdata_wattr *attrs, size_t nr);

/* Append @n bytes of whole records to the data section. */
int pdata_write(struct pdata_writer *w, const void *p, size_t n);

/*
 * The AUXTRACE record @a (header, aux_size and the rest as the caller
 * set them: see pdata_auxtrace_init()) and @len trace bytes at @trace,
 * zero-padded to a->aux_size (-EINVAL if that is less than @len).
 */
int pdata_write_auxtrace(struct pdata_writer *w,
			 const struct pdata_auxtrace *a, const void *trace,
			 size_t len);

/* An AUXTRACE record of @len trace bytes (padded to 8), offset 0 */
void pdata_auxtrace_init(struct pdata_auxtrace *a, uint64_t len,
			 uint64_t reference, uint32_t idx, uint32_t tid,
			 uint32_t cpu);

/*
 * Write the header's data section size: the file is complete, and @f
 * is at its end again.
 */
int pdata_write_end(struct pdata_writer *w);

/*
 * Lay out the sample_id trailer of @sample_type with @sid's fields at
 * @dst (pdata_sid_size() bytes); returns that size.
 */
size_t pdata_put_sid(void *dst, uint64_t sample_type,
		     const struct pdata_sid *sid);

#endif /* PDATA_H */
