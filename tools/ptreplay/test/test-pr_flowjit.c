// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_flowjit: record parsing, CRC-32C, chunk reassembly.
 */
#include "pr_flowjit.h"
#include "pr_mkperf.h"
#include "pr_test.h"

static struct prt_result crc_check_value(void)
{
	prt_uint_eq(pr_crc32c((const uint8_t *)"123456789", 9), 0xe3069283);
	prt_uint_eq(pr_crc32c((const uint8_t *)"", 0), 0);
	return prt_passed();
}

/* A record body with a chunk: header (72 bytes) + bytes. */
static size_t mkrec(uint8_t *buf, uint8_t kind, uint8_t op, uint64_t len,
		    uint32_t off, uint32_t n, uint32_t csum)
{
	struct mkp m = { 0 };
	static uint8_t bytes[8192];
	size_t size;

	mkp_flowjit_rec(&m, kind, op, 1, 100, 0x1000, len, 0, 1, csum, bytes,
			off, n, 5);
	/* body: after the 8-byte header, without the 32-byte trailer */
	size = m.len - 8 - 32;
	memcpy(buf, m.data + 8, size);
	free(m.data);
	return size;
}

static struct prt_result parse_valid(void)
{
	uint8_t buf[8192];
	struct pr_fj_rec rec;
	size_t size = mkrec(buf, PR_FJ_USER_JIT, PR_FJ_OP_IMAGE, 16, 8, 8, 7);

	prt_int_eq(pr_fj_parse(&rec, buf, size), 0);
	prt_int_eq(rec.kind, PR_FJ_USER_JIT);
	prt_uint_eq(rec.addr, 0x1000);
	prt_uint_eq(rec.len, 16);
	prt_uint_eq(rec.chunk_off, 8);
	prt_uint_eq(rec.chunk_len, 8);
	prt_uint_eq(rec.csum, 7);
	prt_uint_eq(rec.pid, 100);
	return prt_passed();
}

static struct prt_result parse_bad(void)
{
	uint8_t buf[8192];
	struct pr_fj_rec rec;
	size_t size;

	prt_int_eq(pr_fj_parse(NULL, buf, 100), -1);
	prt_int_eq(pr_fj_parse(&rec, NULL, 100), -1);
	size = mkrec(buf, PR_FJ_USER_JIT, PR_FJ_OP_IMAGE, 16, 8, 8, 0);
	prt_int_eq(pr_fj_parse(&rec, buf, 71), -1);
	/* the chunk's bytes are cut off */
	prt_int_eq(pr_fj_parse(&rec, buf, 72 + 4), -1);
	/* a chunk beyond the image */
	size = mkrec(buf, PR_FJ_USER_JIT, PR_FJ_OP_IMAGE, 12, 8, 8, 0);
	prt_int_eq(pr_fj_parse(&rec, buf, size), -1);
	/* unknown kind, op */
	size = mkrec(buf, 99, PR_FJ_OP_IMAGE, 16, 0, 8, 0);
	prt_int_eq(pr_fj_parse(&rec, buf, size), -1);
	size = mkrec(buf, 1, 9, 16, 0, 8, 0);
	prt_int_eq(pr_fj_parse(&rec, buf, size), -1);
	/* a retire carries no bytes */
	size = mkrec(buf, 1, PR_FJ_OP_RETIRE, 16, 0, 8, 0);
	prt_int_eq(pr_fj_parse(&rec, buf, size), -1);
	size = mkrec(buf, 1, PR_FJ_OP_RETIRE, 16, 0, 0, 0);
	prt_int_eq(pr_fj_parse(&rec, buf, size), 0);
	/* chunks are at most 4096 bytes */
	size = mkrec(buf, 1, PR_FJ_OP_IMAGE, 8192, 0, 4097, 0);
	prt_int_eq(pr_fj_parse(&rec, buf, size), -1);
	/* another version is skipped, not an error */
	size = mkrec(buf, 1, PR_FJ_OP_IMAGE, 16, 0, 8, 0);
	buf[0] = 2;
	prt_int_eq(pr_fj_parse(&rec, buf, size), 1);
	return prt_passed();
}

static void chunk(struct pr_fj_rec *rec, const uint8_t *bytes, uint32_t len,
		  uint32_t off, uint32_t n, uint32_t csum)
{
	memset(rec, 0, sizeof(*rec));
	rec->version = 1;
	rec->kind = PR_FJ_USER_JIT;
	rec->op = PR_FJ_OP_IMAGE;
	rec->asid = 1;
	rec->pid = 100;
	rec->addr = 0x1000;
	rec->len = len;
	rec->revision = 1;
	rec->csum = csum;
	rec->chunk_off = off;
	rec->chunk_len = n;
	rec->bytes = bytes + off;
}

static struct prt_result reassemble_out_of_order(void)
{
	uint8_t bytes[10000];
	struct pr_fj_asm as;
	struct pr_fj_image img;
	struct pr_fj_rec rec;
	uint32_t csum, i;

	for (i = 0; i < sizeof(bytes); ++i)
		bytes[i] = (uint8_t)(i * 7);
	csum = pr_crc32c(bytes, sizeof(bytes));
	pr_fj_asm_init(&as);
	chunk(&rec, bytes, sizeof(bytes), 8192, 10000 - 8192, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	chunk(&rec, bytes, sizeof(bytes), 0, 4096, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 6, &img), 0);
	chunk(&rec, bytes, sizeof(bytes), 4096, 4096, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 7, &img), 1);
	prt_check(!memcmp(img.bytes, bytes, sizeof(bytes)));
	prt_uint_eq(img.time, 5);
	prt_uint_eq(img.rec.len, sizeof(bytes));
	free(img.bytes);
	prt_uint_eq(as.complete, 1);
	pr_fj_asm_finish(&as);
	prt_uint_eq(as.incomplete, 0);
	pr_fj_asm_fini(&as);
	return prt_passed();
}

static struct prt_result reassemble_missing_chunk(void)
{
	uint8_t bytes[8192] = { 1, 2, 3 };
	struct pr_fj_asm as;
	struct pr_fj_image img;
	struct pr_fj_rec rec;
	uint32_t csum = pr_crc32c(bytes, sizeof(bytes));

	pr_fj_asm_init(&as);
	chunk(&rec, bytes, sizeof(bytes), 0, 4096, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	prt_uint_eq(as.npending, 1);
	pr_fj_asm_finish(&as);
	prt_uint_eq(as.incomplete, 1);
	prt_uint_eq(as.complete, 0);
	prt_uint_eq(as.npending, 0);
	pr_fj_asm_fini(&as);
	return prt_passed();
}

static struct prt_result reassemble_bad_csum(void)
{
	uint8_t bytes[100] = { 1, 2, 3 };
	struct pr_fj_asm as;
	struct pr_fj_image img;
	struct pr_fj_rec rec;
	uint32_t csum = pr_crc32c(bytes, sizeof(bytes)) ^ 0x100;

	pr_fj_asm_init(&as);
	chunk(&rec, bytes, sizeof(bytes), 0, 50, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	chunk(&rec, bytes, sizeof(bytes), 50, 50, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	prt_uint_eq(as.bad_csum, 1);
	prt_uint_eq(as.npending, 0);
	pr_fj_asm_fini(&as);
	return prt_passed();
}

static struct prt_result reassemble_overlap(void)
{
	uint8_t bytes[100] = { 1, 2, 3 };
	struct pr_fj_asm as;
	struct pr_fj_image img;
	struct pr_fj_rec rec;
	uint32_t csum = pr_crc32c(bytes, sizeof(bytes));

	pr_fj_asm_init(&as);
	chunk(&rec, bytes, sizeof(bytes), 0, 60, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	chunk(&rec, bytes, sizeof(bytes), 40, 60, csum);
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	prt_uint_eq(as.overlap, 1);
	prt_uint_eq(as.complete, 0);
	pr_fj_asm_fini(&as);
	return prt_passed();
}

static struct prt_result two_revisions_interleaved(void)
{
	uint8_t a[100] = { 1 }, b[100] = { 2 };
	struct pr_fj_asm as;
	struct pr_fj_image img;
	struct pr_fj_rec rec;

	pr_fj_asm_init(&as);
	chunk(&rec, a, sizeof(a), 0, 50, pr_crc32c(a, sizeof(a)));
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	chunk(&rec, b, sizeof(b), 0, 50, pr_crc32c(b, sizeof(b)));
	rec.revision = 2;
	prt_int_eq(pr_fj_asm_add(&as, &rec, 6, &img), 0);
	prt_uint_eq(as.npending, 2);
	chunk(&rec, a, sizeof(a), 50, 50, pr_crc32c(a, sizeof(a)));
	prt_int_eq(pr_fj_asm_add(&as, &rec, 7, &img), 1);
	prt_uint_eq(img.rec.revision, 1);
	prt_uint_eq(img.bytes[0], 1);
	free(img.bytes);
	chunk(&rec, b, sizeof(b), 50, 50, pr_crc32c(b, sizeof(b)));
	rec.revision = 2;
	prt_int_eq(pr_fj_asm_add(&as, &rec, 8, &img), 1);
	prt_uint_eq(img.rec.revision, 2);
	prt_uint_eq(img.bytes[0], 2);
	prt_uint_eq(img.time, 6);
	free(img.bytes);
	pr_fj_asm_fini(&as);
	return prt_passed();
}

static struct prt_result too_large(void)
{
	uint8_t bytes[16] = { 0 };
	struct pr_fj_asm as;
	struct pr_fj_image img;
	struct pr_fj_rec rec;

	pr_fj_asm_init(&as);
	chunk(&rec, bytes, 16, 0, 16, 0);
	rec.len = (uint64_t)PR_FJ_IMAGE_MAX + 1;
	prt_int_eq(pr_fj_asm_add(&as, &rec, 5, &img), 0);
	prt_uint_eq(as.too_large, 1);
	prt_uint_eq(as.npending, 0);
	prt_int_eq(pr_fj_asm_add(NULL, &rec, 5, &img), -1);
	pr_fj_asm_fini(&as);
	pr_fj_asm_fini(NULL);
	pr_fj_asm_finish(NULL);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_flowjit: CRC-32C has the Castagnoli check value "
		"0xe3069283", crc_check_value);
	prt_run(suite, "pr_flowjit: a valid chunk record is parsed", parse_valid);
	prt_run(suite, "pr_flowjit: truncated, inconsistent and unknown "
		"records are rejected, other versions skipped", parse_bad);
	prt_run(suite, "pr_flowjit: chunks arriving out of order reassemble "
		"an image with the CRC checked", reassemble_out_of_order);
	prt_run(suite, "pr_flowjit: an image missing a chunk is counted "
		"incomplete", reassemble_missing_chunk);
	prt_run(suite, "pr_flowjit: an image with a bad CRC is dropped and "
		"counted", reassemble_bad_csum);
	prt_run(suite, "pr_flowjit: overlapping chunks make an image "
		"incomplete", reassemble_overlap);
	prt_run(suite, "pr_flowjit: chunks of two revisions of one address "
		"interleave", two_revisions_interleaved);
	prt_run(suite, "pr_flowjit: a hostile image length is refused without "
		"allocating", too_large);
	return prt_exit(&suite);
}
