// SPDX-License-Identifier: GPL-2.0
/*
 * flowjit_store: revisions by (asid, range, time, seq), retire records,
 * pid -> asid, dropped records counted; random records against a
 * reference that looks at every record; many records with reads between.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../libflowjit.h"
#include "tap.h"

#define UJIT	0x7f0000001000ULL
#define KBPF	0xffffffffa0002000ULL
#define SPACE	0x7ffffffff000ULL	/* len of a whole address space's retire */

static uint8_t big[2 * FLOWJIT_CHUNK_MAX + 100];

/* one chunk [off, off + n) of an image of @len bytes of @obj, or a retire */
static void chunk(struct flowjit_chunk *c, uint8_t kind, uint8_t op, uint64_t asid,
		  uint32_t pid, uint64_t addr, uint64_t len, uint32_t revision,
		  const uint8_t *obj, uint32_t off, uint32_t n)
{
	memset(c, 0, sizeof(*c));
	c->rec.version = FLOWJIT_RECORD_VERSION;
	c->rec.kind = kind;
	c->rec.op = op;
	c->rec.asid = asid;
	c->rec.pid = pid;
	c->rec.tid = pid;
	c->rec.addr = addr;
	c->rec.len = len;
	c->rec.revision = revision;
	if (op == FLOWJIT_OP_IMAGE) {
		c->rec.csum = flowjit_csum(obj, len);
		c->rec.chunk_off = off;
		c->rec.chunk_len = n;
		c->bytes = obj + off;
	}
}

/* add a whole image (op IMAGE, one chunk) or a retire record at @time */
static int add(struct flowjit_store *st, uint8_t kind, uint8_t op, uint64_t asid,
	       uint32_t pid, uint64_t addr, uint64_t len, uint32_t revision,
	       const uint8_t *obj, uint64_t time)
{
	struct flowjit_chunk c;

	chunk(&c, kind, op, asid, pid, addr, len, revision, obj, 0,
	      op == FLOWJIT_OP_IMAGE ? len : 0);
	return flowjit_store_add_chunk(st, &c, time, NULL);
}

static int add_user(struct flowjit_store *st, uint64_t asid, uint64_t addr, uint64_t len,
		    uint32_t revision, const uint8_t *obj, uint64_t time)
{
	return add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, asid, 77, addr, len,
		   revision, obj, time);
}

static struct flowjit_store_stats stats(const struct flowjit_store *st)
{
	struct flowjit_store_stats s;

	flowjit_store_stats(st, &s);
	return s;
}

/* two revisions of a user JIT page, added in @reverse time order or not */
static int versions(bool reverse)
{
	static uint8_t v1[64], v2[64];
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r;
	uint8_t out[64];
	uint64_t asid;
	int i;

	TAP_CHECK(st);
	memset(v1, 0x90, sizeof(v1));
	memset(v2, 0xcc, sizeof(v2));
	for (i = 0; i < 2; i++) {
		bool second = reverse ? !i : i;

		TAP_CHECK(!add_user(st, 5, UJIT, 64, second ? 9 : 3, second ? v2 : v1,
				    second ? 200 : 100));
	}
	TAP_CHECK(stats(st).images == 2 && stats(st).revs == 2);
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT, 99));	/* nothing before the first */
	r = flowjit_store_find(st, 5, UJIT + 63, 100);
	TAP_CHECK(r && r->revision == 3 && r->time == 100 && r->pid == 77);
	r = flowjit_store_find(st, 5, UJIT, 199);
	TAP_CHECK(r && r->revision == 3);
	r = flowjit_store_find(st, 5, UJIT + 10, 200);
	TAP_CHECK(r && r->revision == 9 && r->kind == FLOWJIT_KIND_USER_JIT);
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT + 64, 300));	/* past the end */
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT - 1, 300));	/* before the start */
	TAP_CHECK(!flowjit_store_find(st, 6, UJIT, 300));	/* other asid */
	r = flowjit_store_find_late(st, 5, UJIT, 50);
	TAP_CHECK(r && r->revision == 3);
	r = flowjit_store_find_late(st, 5, UJIT, 150);
	TAP_CHECK(r && r->revision == 9);
	TAP_CHECK(!flowjit_store_find_late(st, 5, UJIT, 200));
	TAP_CHECK(flowjit_store_read(st, 5, UJIT, 150, false, out, 64, NULL) == 64 &&
		  !memcmp(out, v1, 64));
	TAP_CHECK(flowjit_store_read(st, 5, UJIT + 8, 250, false, out, 64, NULL) == 56 &&
		  !memcmp(out, v2, 56));
	TAP_CHECK(!flowjit_store_read(st, 5, UJIT, 50, false, out, 8, NULL));
	TAP_CHECK(flowjit_store_read(st, 5, UJIT, 50, true, out, 8, NULL) == 8 &&
		  !memcmp(out, v1, 8));
	TAP_CHECK(!flowjit_store_pid_asid(st, 77, 150, &asid) && asid == 5);
	TAP_CHECK(flowjit_store_pid_asid(st, 78, 150, &asid) == -ENOENT);
	flowjit_store_free(st);
	return 0;
}

static int versions_in_order(void)
{
	return versions(false);
}

static int versions_reversed(void)
{
	return versions(true);
}

/* of two images of equal time, the one added later is live */
static int equal_time_by_arrival(void)
{
	static uint8_t a[16], b[16];
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r, *r2;

	TAP_CHECK(st);
	TAP_CHECK(!add_user(st, 5, UJIT, 16, 1, a, 100));
	TAP_CHECK(!add_user(st, 5, UJIT, 16, 2, b, 100));
	r = flowjit_store_find(st, 5, UJIT, 100);
	TAP_CHECK(r && r->revision == 2);
	/* a retire of the same time added after both hides both */
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, UJIT, 16, 0,
		       NULL, 100));
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT, 100));
	/* a third image of that time, added after the retire, is live */
	TAP_CHECK(!add_user(st, 5, UJIT, 16, 3, a, 100));
	r = flowjit_store_find(st, 5, UJIT + 15, 1000);
	TAP_CHECK(r && r->revision == 3);
	/* find_late: the first of equal times is the one added first */
	r = flowjit_store_find_late(st, 5, UJIT, 99);
	r2 = flowjit_store_find(st, 5, UJIT, 99);
	TAP_CHECK(r && r->revision == 1 && !r2);
	TAP_CHECK(r->seq < flowjit_store_find(st, 5, UJIT, 100)->seq);
	flowjit_store_free(st);
	return 0;
}

/* an image is live from the time of the chunk that completes it */
static int time_of_last_chunk(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *added, *r;
	struct flowjit_chunk c;
	uint64_t len = sizeof(big);
	size_t i;

	TAP_CHECK(st);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13);
	/* chunks out of order, the last to arrive (the head) at 300 */
	chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big,
	      2 * FLOWJIT_CHUNK_MAX, 100);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 100, &added) && !added);
	chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big,
	      FLOWJIT_CHUNK_MAX, FLOWJIT_CHUNK_MAX);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 200, &added) && !added);
	TAP_CHECK(stats(st).pending == 1);
	chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big, 0,
	      FLOWJIT_CHUNK_MAX);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 300, &added) && added);
	TAP_CHECK(added->time == 300 && added->start == KBPF && added->end == KBPF + len);
	TAP_CHECK(!memcmp(added->bytes, big, len) && stats(st).pending == 0);
	TAP_CHECK(!flowjit_store_find(st, 0, KBPF, 299));
	r = flowjit_store_find(st, 0, KBPF + len - 1, 300);
	TAP_CHECK(r == added);
	flowjit_store_free(st);
	return 0;
}

static int overlap(void)
{
	static uint8_t page[4096], patch[16], pg2[4096];
	struct flowjit_store *st = flowjit_store_alloc();
	uint8_t out[64], want[64];
	size_t i;

	TAP_CHECK(st);
	for (i = 0; i < sizeof(page); i++)
		page[i] = (uint8_t)(i * 7 + (i >> 8));
	memset(patch, 0xe9, sizeof(patch));
	memset(pg2, 0x55, sizeof(pg2));
	/* a page, then 16 bytes rewritten inside it, then the next page */
	TAP_CHECK(!add_user(st, 5, UJIT, 4096, 1, page, 100));
	TAP_CHECK(!add_user(st, 5, UJIT + 100, 16, 2, patch, 150));
	TAP_CHECK(!add_user(st, 5, UJIT + 4096, 4096, 3, pg2, 300));

	memcpy(want, page + 96, 64);
	TAP_CHECK(flowjit_store_read(st, 5, UJIT + 96, 120, false, out, 64, NULL) == 64 &&
		  !memcmp(out, want, 64));
	memcpy(want + 4, patch, 16);
	TAP_CHECK(flowjit_store_read(st, 5, UJIT + 96, 200, false, out, 64, NULL) == 64 &&
		  !memcmp(out, want, 64));
	/* across the page end: the second page is live only from 300 */
	TAP_CHECK(flowjit_store_read(st, 5, UJIT + 4088, 200, false, out, 16, NULL) == 8);
	TAP_CHECK(flowjit_store_read(st, 5, UJIT + 4088, 200, true, out, 16, NULL) == 16 &&
		  !memcmp(out, page + 4088, 8) && !memcmp(out + 8, pg2, 8));
	TAP_CHECK(flowjit_store_read(st, 5, UJIT + 4088, 300, false, out, 16, NULL) == 16);
	flowjit_store_free(st);
	return 0;
}

/* span and lookup: how far the answer stays the same, both ways */
static int span_bounds(void)
{
	static uint8_t page[4096], patch[16];
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_store_reads reads = { 0 };
	const struct flowjit_rev *r;
	const uint8_t *bytes;
	uint64_t lo, hi;

	TAP_CHECK(st);
	TAP_CHECK(!add_user(st, 5, UJIT, 4096, 1, page, 100));
	TAP_CHECK(!add_user(st, 5, UJIT + 100, 16, 2, patch, 150));
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, UJIT + 1000, 24,
		       0, NULL, 50));
	/* before the patch is live: the page up to where the patch starts */
	TAP_CHECK(flowjit_store_span(st, 5, UJIT + 10, 120, false, &bytes, &r, &reads) == 90);
	TAP_CHECK(r && r->revision == 1 && bytes == r->bytes + 10 && reads.at_time == 1);
	/* in the patch at 200: its 16 bytes, then the page again */
	r = flowjit_store_lookup(st, 5, UJIT + 104, 200, false, &lo, &hi);
	TAP_CHECK(r && r->revision == 2 && lo == UJIT + 100 && hi == UJIT + 116);
	r = flowjit_store_lookup(st, 5, UJIT + 200, 200, false, &lo, &hi);
	TAP_CHECK(r && r->revision == 1 && lo == UJIT + 116 && hi == UJIT + 1000);
	/* an older retire record's ends bound the range, it hides nothing */
	r = flowjit_store_lookup(st, 5, UJIT + 1010, 200, false, &lo, &hi);
	TAP_CHECK(r && r->revision == 1 && lo == UJIT + 1000 && hi == UJIT + 1024);
	r = flowjit_store_lookup(st, 5, UJIT + 2000, 200, false, &lo, &hi);
	TAP_CHECK(r && lo == UJIT + 1024 && hi == UJIT + 4096);
	/* late: counted as such */
	TAP_CHECK(flowjit_store_span(st, 5, UJIT, 10, true, &bytes, &r, &reads) == 100);
	TAP_CHECK(r && r->time == 100 && reads.late == 1 && reads.at_time == 1);
	/* no answer: up to the page, nothing counted */
	TAP_CHECK(!flowjit_store_lookup(st, 5, UJIT - 1, 200, true, &lo, &hi));
	TAP_CHECK(lo == 0 && hi == UJIT);
	/* after the page: to the end of the address space */
	TAP_CHECK(!flowjit_store_lookup(st, 5, UJIT + 4096, 200, true, &lo, &hi));
	TAP_CHECK(lo == UJIT + 4096 && hi == UINT64_MAX);
	TAP_CHECK(!flowjit_store_lookup(st, 5, UINT64_MAX, 200, true, &lo, &hi));
	TAP_CHECK(lo == UJIT + 4096 && hi == UINT64_MAX);
	/* not live yet and no late answer asked: the page's time is 100 */
	TAP_CHECK(!flowjit_store_lookup(st, 5, UJIT + 8, 10, false, &lo, &hi));
	TAP_CHECK(lo == UJIT && hi == UJIT + 100);
	/* the same, where the retire record's ends bound the range */
	TAP_CHECK(!flowjit_store_lookup(st, 5, UJIT + 1008, 60, false, &lo, &hi));
	TAP_CHECK(lo == UJIT + 1000 && hi == UJIT + 1024);
	/* no such address space */
	TAP_CHECK(!flowjit_store_lookup(st, 6, UJIT, 200, true, &lo, &hi));
	TAP_CHECK(lo == 0 && hi == UINT64_MAX);
	TAP_CHECK(!flowjit_store_span(st, 5, UJIT - 1, 200, true, &bytes, &r, &reads) && !r);
	TAP_CHECK(reads.late == 1 && reads.at_time == 1);
	flowjit_store_free(st);
	return 0;
}

static int retire_reuse(void)
{
	static uint8_t a[32], b[48], u[64];
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r;

	TAP_CHECK(st);
	memset(a, 0x90, sizeof(a));
	memset(b, 0xc3, sizeof(b));
	memset(u, 0x90, sizeof(u));
	/* eBPF program 1 at an address, unloaded, program 2 at the same one */
	TAP_CHECK(!add(st, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, 32, 1, a, 100));
	TAP_CHECK(!add(st, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_RETIRE, 0, 0, KBPF, 32, 1, NULL,
		       200));
	TAP_CHECK(!add(st, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, 48, 1, b, 300));
	r = flowjit_store_find(st, 0, KBPF + 4, 150);
	TAP_CHECK(r && r->end == KBPF + 32);
	TAP_CHECK(!flowjit_store_find(st, 0, KBPF + 4, 200));
	TAP_CHECK(!flowjit_store_find(st, 0, KBPF + 4, 250));
	r = flowjit_store_find_late(st, 0, KBPF + 4, 250);
	TAP_CHECK(r && r->end == KBPF + 48);
	r = flowjit_store_find(st, 0, KBPF + 40, 300);
	TAP_CHECK(r && r->end == KBPF + 48);
	TAP_CHECK(stats(st).retires == 1 && stats(st).retire_ranges == 1);

	/* a user address space ends (exit: one retire of all of it) */
	TAP_CHECK(!add_user(st, 5, UJIT, 64, 1, u, 100));
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, 0, SPACE, 0, NULL,
		       400));
	TAP_CHECK(!add_user(st, 9, UJIT, 64, 1, u, 500));
	TAP_CHECK(flowjit_store_find(st, 5, UJIT, 399));
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT, 400));
	TAP_CHECK(flowjit_store_find(st, 0, KBPF, 400));	/* kernel untouched */
	TAP_CHECK(flowjit_store_find(st, 9, UJIT, 600));
	flowjit_store_free(st);
	return 0;
}

/* retiring part of an image hides only the addresses it covers */
static int retire_part(void)
{
	static uint8_t page[4096];
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r;
	uint8_t out[32];

	TAP_CHECK(st);
	memset(page, 0x90, sizeof(page));
	TAP_CHECK(!add_user(st, 5, UJIT, 4096, 1, page, 100));
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, UJIT + 2048, 1024,
		       0, NULL, 200));
	TAP_CHECK(flowjit_store_find(st, 5, UJIT + 2047, 250));
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT + 2048, 250));
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT + 3071, 250));
	TAP_CHECK(flowjit_store_find(st, 5, UJIT + 3072, 250));
	TAP_CHECK(flowjit_store_find(st, 5, UJIT + 2048, 199));
	/* a read stops at the retired part */
	TAP_CHECK(flowjit_store_read(st, 5, UJIT + 2040, 250, false, out, 32, NULL) == 8);
	/* a retire record of length 0 is counted, nothing else */
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, UJIT, 0, 0, NULL,
		       150));
	TAP_CHECK(stats(st).retires == 2 && stats(st).retire_ranges == 1);
	/* a later image over the hole is live again */
	TAP_CHECK(!add_user(st, 5, UJIT + 2048, 16, 2, page, 300));
	r = flowjit_store_find(st, 5, UJIT + 2050, 300);
	TAP_CHECK(r && r->revision == 2);
	TAP_CHECK(!flowjit_store_find(st, 5, UJIT + 2048 + 16, 300));
	flowjit_store_free(st);
	return 0;
}

static int pid_asid(void)
{
	static uint8_t u[64];
	struct flowjit_store *st = flowjit_store_alloc();
	uint64_t asid = 0;

	TAP_CHECK(st);
	/* pid 77 in asid 5 from 100, exits its space at 400, runs asid 9 from 500 */
	TAP_CHECK(!add_user(st, 5, UJIT, 64, 1, u, 200));
	TAP_CHECK(!add_user(st, 5, UJIT, 64, 1, u, 100));	/* out of time order */
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, 0, SPACE, 0, NULL,
		       400));
	TAP_CHECK(!add_user(st, 9, UJIT, 64, 1, u, 500));
	TAP_CHECK(!flowjit_store_pid_asid(st, 77, 350, &asid) && asid == 5);
	TAP_CHECK(!flowjit_store_pid_asid(st, 77, 100, &asid) && asid == 5);
	TAP_CHECK(!flowjit_store_pid_asid(st, 77, 500, &asid) && asid == 9);
	/* between exit and the next image: the first one after */
	TAP_CHECK(!flowjit_store_pid_asid(st, 77, 420, &asid) && asid == 9);
	TAP_CHECK(!flowjit_store_pid_asid(st, 77, 10, &asid) && asid == 5);
	/* a whole-space retire of an asid without images: nothing noted */
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 9, 78, 0, SPACE, 0, NULL,
		       450));
	TAP_CHECK(flowjit_store_pid_asid(st, 78, 450, &asid) == -ENOENT);
	/* a later exit of asid 5 does not move its end */
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, 0, SPACE, 0, NULL,
		       900));
	TAP_CHECK(!flowjit_store_pid_asid(st, 77, 420, &asid) && asid == 9);
	/* equal start times: the asid first seen last */
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 11, 80, UJIT, 64, 1, u,
		       100));
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 10, 80, UJIT, 64, 1, u,
		       100));
	TAP_CHECK(!flowjit_store_pid_asid(st, 80, 100, &asid) && asid == 10);
	/* the kernel's asid and pid 0 name no process */
	TAP_CHECK(!add(st, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 81, KBPF, 64, 1, u, 1));
	TAP_CHECK(flowjit_store_pid_asid(st, 81, 100, &asid) == -ENOENT);
	TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 13, 0, UJIT, 64, 1, u, 1));
	TAP_CHECK(flowjit_store_pid_asid(st, 0, 100, &asid) == -ENOENT);
	TAP_CHECK(flowjit_store_pid_asid(st, 77, 100, NULL) == -EINVAL);
	flowjit_store_free(st);
	return 0;
}

/* a record body: @rec and its chunk's bytes */
static size_t body(uint8_t *buf, const struct flowjit_chunk *c)
{
	memcpy(buf, &c->rec, sizeof(c->rec));
	if (c->rec.chunk_len)
		memcpy(buf + sizeof(c->rec), c->bytes, c->rec.chunk_len);
	return sizeof(c->rec) + ((c->rec.chunk_len + 7) & ~7u);
}

static int dropped(void)
{
	static uint8_t buf[sizeof(struct flowjit_record) + FLOWJIT_CHUNK_MAX];
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_store_stats s;
	const struct flowjit_rev *added;
	struct flowjit_chunk c;
	const char *why;
	uint64_t len = sizeof(big);
	uint8_t out[16];
	uint32_t off, n;
	size_t size;

	TAP_CHECK(st);
	/* a gap: the second chunk is lost; the third does not make an image */
	chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big, 0,
	      FLOWJIT_CHUNK_MAX);
	size = body(buf, &c);
	TAP_CHECK(!flowjit_store_add_record(st, buf, size, 10, &added, &why) && !added && !why);
	chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big,
	      2 * FLOWJIT_CHUNK_MAX, 100);
	size = body(buf, &c);
	TAP_CHECK(!flowjit_store_add_record(st, buf, size, 10, &added, NULL) && !added);
	TAP_CHECK(stats(st).pending == 1 && !stats(st).revs);
	/* a bad CRC-32C: dropped (another csum: another image than the gap's) */
	for (off = 0; off < len; off += n) {
		n = len - off < FLOWJIT_CHUNK_MAX ? len - off : FLOWJIT_CHUNK_MAX;
		chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big,
		      off, n);
		c.rec.csum ^= 1;
		TAP_CHECK(!flowjit_store_add_chunk(st, &c, 20, &added) && !added);
	}
	s = stats(st);
	TAP_CHECK(s.csum_errors == 1 && !s.chunk_errors && !s.revs && s.pending == 1);
	/* truncated, unknown version, refused by the caller's parser */
	chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big, 0, 16);
	size = body(buf, &c);
	TAP_CHECK(!flowjit_store_add_record(st, buf, 8, 30, NULL, &why) && why);
	((struct flowjit_record *)buf)->version = FLOWJIT_RECORD_VERSION + 1;
	TAP_CHECK(!flowjit_store_add_record(st, buf, size, 30, NULL, &why) && why);
	flowjit_store_add_refused(st, -EINVAL);
	flowjit_store_add_refused(st, -EOPNOTSUPP);
	/* an image claiming 1 TiB: refused, never allocated */
	chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big, 0, 16);
	c.rec.len = 1ULL << 40;
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 30, &added) && !added);
	s = stats(st);
	TAP_CHECK(s.bad_records == 3 && s.unknown_version == 2 && s.too_large == 1);
	TAP_CHECK(!flowjit_store_read(st, 0, KBPF, 40, true, out, 16, NULL));
	/* in order: one image; its head again counts the copy with a gap */
	for (off = 0; off < len; off += n) {
		n = len - off < FLOWJIT_CHUNK_MAX ? len - off : FLOWJIT_CHUNK_MAX;
		chunk(&c, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, KBPF, len, 1, big,
		      off, n);
		size = body(buf, &c);
		TAP_CHECK(!flowjit_store_add_record(st, buf, size, 50, &added, NULL));
	}
	s = stats(st);
	TAP_CHECK(added && s.revs == 1 && s.images == 1 && s.chunk_errors == 1);
	TAP_CHECK(s.incomplete == 1 && !s.overlaps);
	TAP_CHECK(flowjit_store_read(st, 0, KBPF + FLOWJIT_CHUNK_MAX - 8, 50, false, out, 16,
				     NULL) == 16 &&
		  !memcmp(out, big + FLOWJIT_CHUNK_MAX - 8, 16));
	TAP_CHECK(s.records == 2 + 3 + 4 + 1 + 3);
	flowjit_store_free(st);
	return 0;
}

/* chunk errors also counted by image: overlaps, heads again, evictions */
static int chunk_counts(void)
{
	static uint8_t obj[32];
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *added;
	struct flowjit_store_stats s;
	struct flowjit_chunk c;
	int i;

	TAP_CHECK(st);
	/* [8, 16) twice: all bytes there, dropped as an overlap */
	chunk(&c, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 5, 77, UJIT, 32, 1, obj, 0, 16);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 10, &added) && !added);
	chunk(&c, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 5, 77, UJIT, 32, 1, obj, 8, 24);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 11, &added) && !added);
	s = stats(st);
	TAP_CHECK(s.overlaps == 1 && !s.incomplete && s.chunk_errors == 1 && !s.pending);
	/* a head twice: the first copy lost its tail; the second completes */
	chunk(&c, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 5, 77, UJIT, 32, 2, obj, 0, 16);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 20, &added) && !added);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 21, &added) && !added);
	chunk(&c, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 5, 77, UJIT, 32, 2, obj, 16, 16);
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 22, &added) && added);
	s = stats(st);
	TAP_CHECK(s.overlaps == 1 && s.incomplete == 1 && s.chunk_errors == 2 && s.images == 1);
	/* one more pending image than there is room for: the oldest goes */
	for (i = 0; i <= FLOWJIT_PENDING_MAX; i++) {
		chunk(&c, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 5, 77, UJIT + 64 * i, 32, 3,
		      obj, 0, 16);
		TAP_CHECK(!flowjit_store_add_chunk(st, &c, 30 + i, &added) && !added);
	}
	s = stats(st);
	TAP_CHECK(s.incomplete == 2 && s.chunk_errors == 3 && s.pending == FLOWJIT_PENDING_MAX);
	TAP_CHECK(s.overlaps == 1 && !s.too_large && !s.bad_records);
	flowjit_store_free(st);
	return 0;
}

static int null_args(void)
{
	struct flowjit_store_stats s = { .records = 1 };
	struct flowjit_chunk c;
	const uint8_t *bytes;
	uint8_t out[4];
	uint64_t lo, hi;

	flowjit_store_free(NULL);
	flowjit_store_add_refused(NULL, -EINVAL);
	flowjit_store_stats(NULL, &s);
	TAP_CHECK(s.records == 1);
	memset(&c, 0, sizeof(c));
	TAP_CHECK(flowjit_store_add_chunk(NULL, &c, 0, NULL) == -EINVAL);
	TAP_CHECK(flowjit_store_add_record(NULL, &c, sizeof(c), 0, NULL, NULL) == -EINVAL);
	TAP_CHECK(!flowjit_store_find(NULL, 0, 0, 0) && !flowjit_store_find_late(NULL, 0, 0, 0));
	TAP_CHECK(!flowjit_store_lookup(NULL, 0, 5, 0, true, &lo, &hi));
	TAP_CHECK(lo == 0 && hi == UINT64_MAX);
	TAP_CHECK(!flowjit_store_span(NULL, 0, 0, 0, true, &bytes, NULL, NULL));
	TAP_CHECK(!flowjit_store_read(NULL, 0, 0, 0, true, out, 4, NULL));
	TAP_CHECK(flowjit_store_pid_asid(NULL, 1, 0, &lo) == -EINVAL);
	return 0;
}

/*
 * Random images and retire records of two address spaces, added in
 * random order of time, against a reference that looks at every record:
 * find, find_late, read and lookup's [lo, hi) must answer as it does.
 */
#define RND_RECS	160
#define RND_SPAN	512
#define RND_MAXLEN	96

struct rnd_rec {
	uint8_t		op;
	uint64_t	asid, start, end, time;
	uint8_t		bytes[RND_MAXLEN];
};

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (rnd_state >> 33) % n;
}

/* the record index find (or find_late) answers, by looking at them all */
static int rnd_ref(const struct rnd_rec *recs, int nr, uint64_t asid, uint64_t ip,
		   uint64_t time, bool late)
{
	int i, best = -1;

	for (i = 0; i < nr; i++) {
		const struct rnd_rec *r = &recs[i];

		if (r->op != FLOWJIT_OP_IMAGE || r->asid != asid || ip < r->start || ip >= r->end)
			continue;
		if (late ? r->time > time && (best < 0 || r->time < recs[best].time) :
			   r->time <= time && (best < 0 || r->time >= recs[best].time))
			best = i;
	}
	if (late || best < 0)
		return best;
	for (i = 0; i < nr; i++) {
		const struct rnd_rec *r = &recs[i];

		if (r->op == FLOWJIT_OP_RETIRE && r->asid == asid && ip >= r->start &&
		    ip < r->end && r->time <= time &&
		    (r->time > recs[best].time || (r->time == recs[best].time && i > best)))
			return -1;
	}
	return best;
}

/* what a lookup answers: find, else with @late find_late */
static int rnd_ref_lookup(const struct rnd_rec *recs, int nr, uint64_t asid, uint64_t ip,
			  uint64_t time, bool late)
{
	int ref = rnd_ref(recs, nr, asid, ip, time, false);

	return ref < 0 && late ? rnd_ref(recs, nr, asid, ip, time, true) : ref;
}

static int store_random(uint64_t seed)
{
	static struct rnd_rec recs[RND_RECS];
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r;
	uint8_t out[64], want[64];
	uint64_t a, lo, hi;
	int i, k, q, ref;

	TAP_CHECK(st);
	rnd_state = seed;
	for (i = 0; i < RND_RECS; i++) {
		struct rnd_rec *rec = &recs[i];
		uint64_t len = 1 + rnd(RND_MAXLEN);

		rec->op = rnd(5) ? FLOWJIT_OP_IMAGE : FLOWJIT_OP_RETIRE;
		rec->asid = 5 + rnd(2);
		rec->start = UJIT + rnd(RND_SPAN);
		rec->time = rnd(40) * 10;	/* equal times: order of adding */
		if (rec->op == FLOWJIT_OP_RETIRE && !rnd(10)) {
			rec->start = 0;		/* a whole address space */
			len = SPACE;
		}
		rec->end = rec->start + len;
		for (k = 0; k < RND_MAXLEN; k++)
			rec->bytes[k] = rnd(256);
		TAP_CHECK(!add(st, FLOWJIT_KIND_USER_JIT, rec->op, rec->asid, 77, rec->start, len,
			       i, rec->op == FLOWJIT_OP_IMAGE ? rec->bytes : NULL, rec->time));
	}
	for (q = 0; q < 4000; q++) {
		uint64_t asid = 5 + rnd(2), time = rnd(420), len = 1 + rnd(sizeof(out));
		uint64_t ip = UJIT - 8 + rnd(RND_SPAN + RND_MAXLEN + 16);
		bool late = rnd(2);
		size_t n, m;

		ref = rnd_ref(recs, RND_RECS, asid, ip, time, false);
		r = flowjit_store_find(st, asid, ip, time);
		TAP_CHECK(ref < 0 ? !r : r && r->revision == (uint32_t)ref);
		ref = rnd_ref(recs, RND_RECS, asid, ip, time, true);
		r = flowjit_store_find_late(st, asid, ip, time);
		TAP_CHECK(ref < 0 ? !r : r && r->revision == (uint32_t)ref);
		for (m = 0; m < len; m++) {
			ref = rnd_ref_lookup(recs, RND_RECS, asid, ip + m, time, late);
			if (ref < 0)
				break;
			want[m] = recs[ref].bytes[ip + m - recs[ref].start];
		}
		n = flowjit_store_read(st, asid, ip, time, late, out, len, NULL);
		TAP_CHECK(n == m && !memcmp(out, want, n));
		/* every address of [lo, hi) gets the answer ip gets */
		ref = rnd_ref_lookup(recs, RND_RECS, asid, ip, time, late);
		r = flowjit_store_lookup(st, asid, ip, time, late, &lo, &hi);
		TAP_CHECK(ref < 0 ? !r : r && r->revision == (uint32_t)ref);
		TAP_CHECK(lo <= ip && ip < hi);
		TAP_CHECK(!r || (lo >= r->start && hi <= r->end));
		/* without an answer: as far as records go, and up to them */
		if (lo < UJIT - 8)
			lo = UJIT - 8;
		if (hi > UJIT + RND_SPAN + RND_MAXLEN + 8)
			hi = UJIT + RND_SPAN + RND_MAXLEN + 8;
		for (a = lo; a < hi; a++)
			TAP_CHECK(rnd_ref_lookup(recs, RND_RECS, asid, a, time, late) == ref);
	}
	flowjit_store_free(st);
	return 0;
}

static int random_against_reference(void)
{
	uint64_t seed, first = 1, last = 16;
	int line;

	if (getenv("FLOWJIT_TEST_SEED")) {
		first = strtoull(getenv("FLOWJIT_TEST_SEED"), NULL, 0);
		last = first;
	}
	printf("# store: random seeds %llu..%llu (FLOWJIT_TEST_SEED=N runs one)\n",
	       (unsigned long long)first, (unsigned long long)last);
	for (seed = first; seed <= last; seed++) {
		line = store_random(seed);
		if (line) {
			printf("# store: seed %llu fails\n", (unsigned long long)seed);
			return line;
		}
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * 100 000 revisions: 50 000 JIT pages, each imaged, retired and imaged
 * again at a later time, in a random order of pages, with 200 000 reads
 * interleaved with the adds (a decoder adds records while it decodes).
 * An image is the first 256 bytes of its page, so that the time is the
 * store's and not that of faulting in 400 MB. Prints the time (well
 * under 1 s here) but does not check it: a test that fails on a slow or
 * loaded machine proves nothing, and ptreplay's decode_speed_ratio in
 * make bench is where the store's speed is measured.
 */
enum { BENCH_PAGES = 50000 };

static int benchmark_run(struct flowjit_store *st, uint32_t *order)
{
	enum { PAGES = BENCH_PAGES, PAGE = 4096, LEN = 256 };
	static uint8_t page[LEN];
	uint64_t i, found = 0, pg, t;
	struct flowjit_chunk c;
	double start, add_s = 0, read_s = 0, t0;
	uint8_t out[16];
	int pass;

	memset(page, 0x90, sizeof(page));
	for (i = 0; i < PAGES; i++)
		order[i] = i;
	rnd_state = 42;
	for (i = PAGES - 1; i > 0; i--) {
		uint32_t k = rnd(i + 1), x = order[i];

		order[i] = order[k];
		order[k] = x;
	}
	start = now();
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < PAGES; i++) {
			pg = UJIT + (uint64_t)order[i] * PAGE;
			t = 1000 * (uint64_t)pass + i;
			t0 = now();
			chunk(&c, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 5, 77, pg, LEN, pass,
			      page, 0, LEN);
			TAP_CHECK(!flowjit_store_add_chunk(st, &c, 10 * t, NULL));
			if (!pass) {
				chunk(&c, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, pg,
				      PAGE, 0, NULL, 0, 0);
				TAP_CHECK(!flowjit_store_add_chunk(st, &c, 10 * t + 5, NULL));
			}
			add_s += now() - t0;
			t0 = now();
			pg = UJIT + (uint64_t)order[rnd(i + 1)] * PAGE + rnd(LEN - 16);
			found += flowjit_store_read(st, 5, pg, 10 * t + 1, true, out, 16,
						    NULL) == 16;
			found += flowjit_store_read(st, 5, pg, 10 * t, false, out, 16,
						    NULL) == 16;
			read_s += now() - t0;
		}
	}
	printf("# store: %d revisions, %d retires, %d reads: %.3f s (adds %.3f, reads %.3f)\n",
	       2 * PAGES, PAGES, 4 * PAGES, now() - start, add_s, read_s);
	TAP_CHECK(stats(st).revs == 2 * PAGES && found > PAGES);
	return 0;
}

/* the store and the order are freed whichever check fails */
static int benchmark(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	uint32_t *order = malloc(BENCH_PAGES * sizeof(*order));
	int ret;

	if (st && order) {
		ret = benchmark_run(st, order);
	} else {
		tap_why = "st && order";
		ret = __LINE__;
	}
	flowjit_store_free(st);
	free(order);
	return ret;
}

int main(void)
{
	tap_run(versions_in_order,
		"store: two revisions of a page, live from their times; find_late the next one; pid -> asid");
	tap_run(versions_reversed,
		"store: the same records added in reverse time order answer the same");
	tap_run(equal_time_by_arrival,
		"store: records of equal time are ordered by arrival (seq)");
	tap_run(time_of_last_chunk,
		"store: an image is live from the time of the chunk that completes it");
	tap_run(overlap,
		"store: a small image over a page, reads across pages of different times");
	tap_run(span_bounds,
		"store: span and lookup's [lo, hi) stop where another revision or retire record begins or ends, with an answer or without");
	tap_run(retire_reuse,
		"store: a retired address reused by another program; a whole address space retired");
	tap_run(retire_part,
		"store: a retire record hides only the addresses it covers, from its time on");
	tap_run(pid_asid,
		"store: pid -> asid by time: out of order images, exit, exec, ties, kernel and pid 0");
	tap_run(dropped,
		"store: gaps, bad CRC-32C, malformed, unknown version and huge images are counted and dropped");
	tap_run(chunk_counts,
		"store: overlaps and images missing chunks are also counted by image");
	tap_run(null_args,
		"store: NULL arguments are -EINVAL or no answer; free takes NULL");
	tap_run(random_against_reference,
		"store: random records against a reference that looks at every record (find, find_late, read, lookup range)");
	tap_run(benchmark,
		"store: 100 000 revisions with interleaved reads: every revision kept, reads answered");
	return tap_exit();
}
