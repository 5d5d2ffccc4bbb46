/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_flowjit: PERF_RECORD_FLOWJIT records (include/uapi/linux/flowjit.h):
 * parsing, CRC-32C, and reassembly of chunked images.
 *
 * An image larger than FLOWJIT_CHUNK_MAX arrives as several records with
 * the same header fields but chunk_off/chunk_len.  The assembler collects
 * chunks by (kind, op, asid, addr, len, revision, csum); an image is
 * complete when [0, len) is covered exactly once and its CRC-32C matches.
 */
#ifndef PR_FLOWJIT_H
#define PR_FLOWJIT_H

#include <stddef.h>
#include <stdint.h>

#define PR_FJ_VERSION		1
#define PR_FJ_REC_SIZE		72
#define PR_FJ_CHUNK_MAX		4096
/* The largest image accepted, and the most bytes of images being
 * assembled at once (a hostile len must not allocate GBs).
 */
#define PR_FJ_IMAGE_MAX		(64u << 20)
#define PR_FJ_PENDING_MAX	(256u << 20)

enum pr_fj_kind {
	PR_FJ_BPF_PROG		= 1,
	PR_FJ_BPF_SUBPROG	= 2,
	PR_FJ_BPF_TRAMPOLINE	= 3,
	PR_FJ_BPF_DISPATCHER	= 4,
	PR_FJ_TEXT_POKE		= 5,
	PR_FJ_MODULE_TEXT	= 6,
	PR_FJ_USER_JIT		= 7,
};

enum pr_fj_op {
	PR_FJ_OP_IMAGE		= 1,
	PR_FJ_OP_RETIRE		= 2,
};

/* struct flowjit_record, decoded. */
struct pr_fj_rec {
	uint16_t version;
	uint8_t kind, op;
	uint32_t flags;
	uint64_t asid;
	uint32_t pid, tid;
	uint64_t addr, len, id;
	uint32_t sub, revision, csum, chunk_off, chunk_len;
	/* The chunk's bytes (chunk_len of them). */
	const uint8_t *bytes;
};

/* Parse a record body of @size bytes (after the perf header, without the
 * sample_id trailer).
 *
 * Returns zero on success.
 * Returns -1 if the record is truncated or inconsistent (chunk beyond len,
 * chunk larger than the record, ...).
 * Returns 1 if it is of an unknown version (to be skipped).
 */
extern int pr_fj_parse(struct pr_fj_rec *rec, const uint8_t *body,
		       size_t size);

/* CRC-32C (Castagnoli, reflected, init and final xor ~0) of @len bytes. */
extern uint32_t pr_crc32c(const uint8_t *buf, size_t len);

/* A complete image handed out by the assembler. */
struct pr_fj_image {
	struct pr_fj_rec rec;		/* header fields; bytes = NULL */
	uint8_t *bytes;			/* len bytes, owned by the caller */
	uint64_t time;			/* of its first chunk */
};

/* An image being assembled. */
struct pr_fj_pending {
	struct pr_fj_rec rec;
	uint8_t *bytes;
	/* One bit per byte received. */
	uint8_t *have;
	uint64_t got;
	uint64_t time;
	int overlap;
};

/* The assembler. */
struct pr_fj_asm {
	struct pr_fj_pending *pending;
	size_t npending, cap;
	uint64_t pending_bytes;

	/* Counters. */
	uint64_t complete;	/* images passed the CRC check */
	uint64_t bad_csum;	/* complete coverage, CRC mismatch */
	uint64_t overlap;	/* chunks covering bytes twice */
	uint64_t incomplete;	/* chunks missing at the end */
	uint64_t bad_records;	/* malformed records */
	uint64_t too_large;	/* len above PR_FJ_IMAGE_MAX, or too many
				 * bytes pending
				 */
};

extern void pr_fj_asm_init(struct pr_fj_asm *as);
extern void pr_fj_asm_fini(struct pr_fj_asm *as);

/* Add chunk @rec (op IMAGE) seen at @time.
 *
 * Returns 1 and fills @image (bytes owned by the caller) when the image is
 * complete and its checksum matches.
 * Returns 0 if more chunks are needed or the image was dropped (counted).
 * Returns -1 if out of memory.
 */
extern int pr_fj_asm_add(struct pr_fj_asm *as, const struct pr_fj_rec *rec,
			 uint64_t time, struct pr_fj_image *image);

/* Count and drop images still pending: their chunks are missing. */
extern void pr_fj_asm_finish(struct pr_fj_asm *as);

#endif /* PR_FLOWJIT_H */
