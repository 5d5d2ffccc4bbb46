// SPDX-License-Identifier: GPL-2.0
/*
 * flowjit_chunk_parse(): what a valid record is, what is refused and why;
 * flowjit_rec_same_image(): the one definition of an image's chunks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../libflowjit.h"
#include "tap.h"

/* a record body: struct flowjit_record, chunk_len bytes, 8-byte pad */
static uint8_t body[sizeof(struct flowjit_record) + FLOWJIT_CHUNK_MAX + 64];

static size_t mkrec(uint8_t kind, uint8_t op, uint64_t len, uint32_t off,
		    uint32_t n)
{
	struct flowjit_record rec = {
		.version = FLOWJIT_RECORD_VERSION, .kind = kind, .op = op,
		.asid = 1, .pid = 100, .tid = 101, .addr = 0x1000, .len = len,
		.revision = 1, .csum = 7, .chunk_off = off, .chunk_len = n,
	};
	size_t i;

	memcpy(body, &rec, sizeof(rec));
	for (i = 0; i < n; i++)
		body[sizeof(rec) + i] = (uint8_t)i;
	return sizeof(rec) + ((n + 7) & ~7u);
}

static struct flowjit_record *rec_of_body(void)
{
	return (struct flowjit_record *)body;
}

static int parse_valid(void)
{
	struct flowjit_chunk c;
	size_t size = mkrec(FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 16, 8, 8);

	TAP_CHECK(flowjit_chunk_parse(&c, body, size, NULL) == 0);
	TAP_CHECK(c.rec.kind == FLOWJIT_KIND_USER_JIT && c.rec.pid == 100);
	TAP_CHECK(c.rec.chunk_off == 8 && c.rec.chunk_len == 8);
	TAP_CHECK(c.bytes == body + sizeof(struct flowjit_record));
	return 0;
}

/* the record is read at any alignment (it follows an 8-byte header) */
static int parse_unaligned(void)
{
	static uint8_t raw[sizeof(body) + 1];
	struct flowjit_chunk c;
	size_t size = mkrec(FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 8, 0, 8);

	memcpy(raw + 1, body, size);
	TAP_CHECK(flowjit_chunk_parse(&c, raw + 1, size, NULL) == 0);
	TAP_CHECK(c.rec.addr == 0x1000 && c.bytes[7] == 7);
	return 0;
}

static int parse_retire(void)
{
	struct flowjit_chunk c;
	const char *why = NULL;
	size_t size = mkrec(FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_RETIRE, 16, 0, 0);

	TAP_CHECK(flowjit_chunk_parse(&c, body, size, NULL) == 0);
	TAP_CHECK(!c.bytes);
	size = mkrec(FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_RETIRE, 16, 0, 8);
	TAP_CHECK(flowjit_chunk_parse(&c, body, size, &why) == -EINVAL);
	TAP_CHECK(why && !strcmp(why, "retire record carries bytes"));
	size = mkrec(FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_RETIRE, 16, 8, 0);
	TAP_CHECK(flowjit_chunk_parse(&c, body, size, NULL) == -EINVAL);
	return 0;
}

static int parse_truncated(void)
{
	struct flowjit_chunk c;
	const char *why = NULL;
	/* 5 bytes and 3 of padding */
	size_t size = mkrec(FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 16, 8, 5);

	TAP_CHECK(flowjit_chunk_parse(&c, body, sizeof(struct flowjit_record) - 1,
				      &why) == -EINVAL);
	TAP_CHECK(why && strstr(why, "shorter than struct flowjit_record"));
	TAP_CHECK(flowjit_chunk_parse(&c, body, size - 3, NULL) == 0);
	TAP_CHECK(flowjit_chunk_parse(&c, body, sizeof(struct flowjit_record) + 4,
				      &why) == -EINVAL);
	TAP_CHECK(why && strstr(why, "shorter than its chunk"));
	return 0;
}

/* each inconsistency is refused with its reason */
static int parse_inconsistent(void)
{
	static const struct {
		uint8_t kind, op;
		uint64_t len;
		uint32_t off, n;
		const char *why;
	} bad[] = {
		{ 0, FLOWJIT_OP_IMAGE, 16, 0, 8, "unknown kind" },
		{ FLOWJIT_KIND_MAX, FLOWJIT_OP_IMAGE, 16, 0, 8, "unknown kind" },
		{ 1, 0, 16, 0, 8, "unknown op" },
		{ 1, FLOWJIT_OP_MAX, 16, 0, 8, "unknown op" },
		{ 1, FLOWJIT_OP_IMAGE, 0, 0, 0, "empty object" },
		{ 1, FLOWJIT_OP_IMAGE, 16, 0, 0, "empty chunk" },
		{ 1, FLOWJIT_OP_IMAGE, 8192, 0, FLOWJIT_CHUNK_MAX + 1,
		  "chunk larger than FLOWJIT_CHUNK_MAX" },
		{ 1, FLOWJIT_OP_IMAGE, 12, 8, 8, "chunk beyond the end of its object" },
	};
	struct flowjit_chunk c;
	const char *why;
	size_t i, size;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		size = mkrec(bad[i].kind, bad[i].op, bad[i].len, bad[i].off,
			     bad[i].n > FLOWJIT_CHUNK_MAX ? 0 : bad[i].n);
		rec_of_body()->chunk_len = bad[i].n;
		size = sizeof(body);
		why = NULL;
		TAP_CHECK(flowjit_chunk_parse(&c, body, size, &why) == -EINVAL);
		TAP_CHECK(why && !strcmp(why, bad[i].why));
	}
	mkrec(1, FLOWJIT_OP_IMAGE, 16, 0, 8);
	rec_of_body()->addr = ~0ULL - 4;
	TAP_CHECK(flowjit_chunk_parse(&c, body, sizeof(body), &why) == -EINVAL);
	TAP_CHECK(!strcmp(why, "object wraps around the address space"));
	return 0;
}

static int parse_unknown_version(void)
{
	struct flowjit_chunk c;
	size_t size = mkrec(FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 16, 0, 8);

	rec_of_body()->version = FLOWJIT_RECORD_VERSION + 1;
	TAP_CHECK(flowjit_chunk_parse(&c, body, size, NULL) == -EOPNOTSUPP);
	/* an unknown version is skipped whatever the rest says */
	rec_of_body()->kind = 0;
	TAP_CHECK(flowjit_chunk_parse(&c, body, size, NULL) == -EOPNOTSUPP);
	return 0;
}

static int parse_null(void)
{
	struct flowjit_chunk c;

	TAP_CHECK(flowjit_chunk_parse(NULL, body, sizeof(body), NULL) == -EINVAL);
	TAP_CHECK(flowjit_chunk_parse(&c, NULL, sizeof(body), NULL) == -EINVAL);
	return 0;
}

/* records differing in any field but chunk_off/chunk_len are other images */
static int same_image_fields(void)
{
	struct flowjit_record a = {
		.version = 1, .kind = 7, .op = 1, .flags = 0, .asid = 3,
		.pid = 4, .tid = 5, .addr = 0x1000, .len = 9000, .id = 6,
		.sub = 0, .revision = 2, .csum = 77, .chunk_off = 0,
		.chunk_len = 4096,
	};
	struct flowjit_record b = a;

	b.chunk_off = 4096;
	b.chunk_len = 4096;
	TAP_CHECK(flowjit_rec_same_image(&a, &b));
#define DIFFERS(field) do {				\
	b = a;						\
	(b.field) += 1;					\
	TAP_CHECK(!flowjit_rec_same_image(&a, &b));	\
} while (0)
	DIFFERS(kind);
	DIFFERS(op);
	DIFFERS(flags);
	DIFFERS(asid);
	DIFFERS(pid);
	DIFFERS(tid);
	DIFFERS(addr);
	DIFFERS(len);
	DIFFERS(id);
	DIFFERS(sub);
	DIFFERS(revision);
	DIFFERS(csum);
#undef DIFFERS
	return 0;
}

static int names(void)
{
	TAP_CHECK(!strcmp(flowjit_kind_name(FLOWJIT_KIND_USER_JIT), "user_jit"));
	TAP_CHECK(!strcmp(flowjit_kind_name(0), "unknown"));
	TAP_CHECK(!strcmp(flowjit_kind_name(200), "unknown"));
	TAP_CHECK(!strcmp(flowjit_op_name(FLOWJIT_OP_RETIRE), "RETIRE"));
	TAP_CHECK(!strcmp(flowjit_op_name(9), "UNKNOWN"));
	return 0;
}

int main(void)
{
	tap_run(parse_valid,
		"record: a valid image chunk is parsed, its bytes after the fixed part");
	tap_run(parse_unaligned,
		"record: a record at an odd address is parsed (no alignment assumed)");
	tap_run(parse_retire,
		"record: a retire without bytes is valid, one with chunk_off or chunk_len is not");
	tap_run(parse_truncated,
		"record: a record shorter than struct flowjit_record or than its chunk is refused");
	tap_run(parse_inconsistent,
		"record: unknown kind or op, empty object or chunk, oversized chunk, chunk past its object, wrapping range: refused, each with its reason");
	tap_run(parse_unknown_version,
		"record: another version is -EOPNOTSUPP (skip), whatever its fields");
	tap_run(parse_null,
		"record: NULL chunk or body is -EINVAL");
	tap_run(same_image_fields,
		"record: chunks of one image differ in chunk_off and chunk_len only; any other field makes another image");
	tap_run(names,
		"record: kind and op names, unknown values named so");
	return tap_exit();
}
