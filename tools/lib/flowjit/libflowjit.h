/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libflowjit: the one reader of PERF_RECORD_FLOWJIT records for the host
 * tools, the selftests and the samples (include/uapi/linux/flowjit.h is
 * the format; Documentation/trace/flowjit.rst describes it).
 *
 * Plain C with no dependency beyond libc, so that static guest programs
 * can use it: build the .c files of this directory with the program, or
 * link libflowjit.a (make -C tools/lib/flowjit).
 *
 * The contract:
 *
 * - flowjit_chunk_parse() validates ONE record body (what follows struct
 *   perf_event_header): its size, version, kind and op, and that its
 *   chunk lies in its object and in the record. Nothing else in the
 *   library reads a record's bytes.
 *
 * - Chunks of one image are the records that differ only in chunk_off and
 *   chunk_len (the kernel fills every other field from the same image,
 *   kernel/flowjit/core.c flowjit_record_init()). flowjit_rec_same_image()
 *   is that definition, and the reassembler uses nothing else.
 *
 * - flowjit_reasm reassembles [0, len) of an image from its chunks in any
 *   order and hands it out once every byte arrived exactly once and its
 *   CRC-32C holds. A head chunk (chunk_off 0) arriving for an image whose
 *   head is there already starts the image again, the earlier copy
 *   counted incomplete: a ring holds an image's chunks back to back, so
 *   that copy lost chunks. What it drops is counted in struct flowjit_counts:
 *   those counts, and nothing else, are what a health report of flowjit
 *   images needs. The pending set is bounded in objects and in bytes; to
 *   make room the oldest pending image is dropped (counted incomplete:
 *   its chunks are missing, since a ring holds an image's chunks back to
 *   back).
 *
 * - flowjit_crc32c() is the CRC-32C of the format, on the SSE4.2 crc32
 *   instruction where the CPU has it (chosen at run time) and table
 *   driven otherwise; both give the same values.
 *
 * Functions return 0 or a positive count on success and a negative errno
 * value on failure; _fini() accepts NULL.
 */
#ifndef LIBFLOWJIT_H
#define LIBFLOWJIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The format: include/uapi/linux/flowjit.h, found through
 * $(LIBFLOWJIT_UAPI) outside the kernel tree and through the installed
 * headers (KHDR_INCLUDES) or tools/include/uapi inside it: never both, as
 * headers_install renames the include guard.
 */
#include <linux/flowjit.h>

/* struct perf_event_header.type of a flowjit record (PERF_RECORD_FLOWJIT) */
#define FLOWJIT_PERF_RECORD_TYPE	63

/*
 * The largest image reassembled, and the most bytes and objects pending
 * at once: a hostile len must not allocate gigabytes, and a lost chunk
 * must not keep its object pending for ever.
 */
#define FLOWJIT_IMAGE_MAX		(64u << 20)
#define FLOWJIT_PENDING_BYTES_MAX	(256u << 20)
#define FLOWJIT_PENDING_MAX		256

/*
 * CRC-32C (Castagnoli, reflected). flowjit_crc32c() updates @crc with
 * @len bytes at @buf, without initial value or final xor; flowjit_csum()
 * is rec.csum's checksum: ~flowjit_crc32c(~0, buf, len).
 */
uint32_t flowjit_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t flowjit_csum(const void *buf, size_t len);

/* The two paths of flowjit_crc32c(), for tests and benchmarks. */
uint32_t flowjit_crc32c_table(uint32_t crc, const void *buf, size_t len);
/* Returns -EOPNOTSUPP in @crc's place if the CPU has no SSE4.2. */
int flowjit_crc32c_hw(uint32_t *crc, const void *buf, size_t len);
/* Returns true if flowjit_crc32c() uses the crc32 instruction. */
bool flowjit_crc32c_has_hw(void);

/* One checked record: its fixed part (host order) and the bytes it carries. */
struct flowjit_chunk {
	struct flowjit_record	rec;
	const uint8_t		*bytes;	/* rec.chunk_len bytes at the caller's */
};

/*
 * Check the record body @body of @size bytes (what follows the perf event
 * header; a sample_id trailer after it is allowed) and fill @chunk.
 *
 * Returns 0 for a valid record.
 * Returns -EOPNOTSUPP for a record version this library does not know: to
 * be skipped and counted, not an error of the file.
 * Returns -EINVAL for a truncated or inconsistent record, with a short
 * reason in @why if @why is not NULL.
 */
int flowjit_chunk_parse(struct flowjit_chunk *chunk, const void *body,
			size_t size, const char **why);

/* Returns true if @a and @b are chunks of the same image (see above). */
bool flowjit_rec_same_image(const struct flowjit_record *a,
			    const struct flowjit_record *b);

/* "bpf_prog", ..., "user_jit", or "unknown"; "IMAGE", "RETIRE" or "UNKNOWN" */
const char *flowjit_kind_name(unsigned int kind);
const char *flowjit_op_name(unsigned int op);

/* What happened to the records and images given to a reassembler. */
struct flowjit_counts {
	uint64_t records;	/* given to flowjit_reasm_parse() */
	uint64_t bad_records;	/* malformed (-EINVAL), dropped */
	uint64_t unknown_version; /* -EOPNOTSUPP, skipped */
	uint64_t complete;	/* images handed out, CRC-32C checked */
	uint64_t bad_csum;	/* all bytes arrived, CRC-32C mismatch */
	uint64_t overlap;	/* a chunk covered bytes twice */
	uint64_t incomplete;	/* chunks missing: flushed, evicted, head again */
	uint64_t too_large;	/* len above FLOWJIT_IMAGE_MAX */
};

/* A complete image. */
struct flowjit_image {
	struct flowjit_record	rec;	/* of its first chunk to arrive */
	uint8_t			*bytes;	/* rec.len bytes, free() them */
	uint64_t		time;	/* of its first chunk to arrive */
};

struct flowjit_pending;

/* The reassembler: embed it, flowjit_reasm_init() it. */
struct flowjit_reasm {
	struct flowjit_pending	*pending;
	size_t			nr_pending, cap;
	uint64_t		pending_bytes;
	uint64_t		seq;		/* of the next new object */
	struct flowjit_counts	counts;
};

void flowjit_reasm_init(struct flowjit_reasm *ra);
/* Free pending images without counting them. */
void flowjit_reasm_fini(struct flowjit_reasm *ra);

/*
 * flowjit_chunk_parse() @body, counting the record, and a malformed or
 * unknown one, in @ra's counts. Returns what flowjit_chunk_parse() does.
 */
int flowjit_reasm_parse(struct flowjit_reasm *ra, struct flowjit_chunk *chunk,
			const void *body, size_t size, const char **why);

/*
 * Add @chunk (op FLOWJIT_OP_IMAGE, from flowjit_chunk_parse()) seen at
 * @time.
 *
 * Returns 1 and fills @image when the image is complete and its CRC-32C
 * holds (@image->bytes is then the caller's).
 * Returns 0 when chunks are missing yet, or the image was dropped and
 * counted (bad checksum, overlap, too large).
 * Returns -EINVAL for a NULL argument or a chunk that is not an image's,
 * -ENOMEM when out of memory.
 */
int flowjit_reasm_add(struct flowjit_reasm *ra, const struct flowjit_chunk *chunk,
		      uint64_t time, struct flowjit_image *image);

/* Drop every pending image, counted incomplete: the end of the records. */
void flowjit_reasm_flush(struct flowjit_reasm *ra);

#endif /* LIBFLOWJIT_H */
