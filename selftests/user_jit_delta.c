// SPDX-License-Identifier: GPL-2.0
/*
 * Delta records (attr.flowjit_delta): a user JIT page whose next revision
 * changes a few bytes is recorded as the 16-byte blocks that changed,
 * against the page's last recorded revision, and a reader puts the
 * revision together again from its base (flowjit_records.h does, and
 * checks the CRC-32C of the result). Where a reader could not have the
 * base (the page's first revision, after a new event began to track the
 * address space, after a record could not be written) the revision goes
 * whole: as the blocks that are not zero (a delta over zeros, base 0)
 * where that is shorter, else as an image. An event without the bit
 * gets images only.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>

#include "harness.h"
#include "user_jit.h"

#define NREVS	4

/* the code page, written RW and run RX (W^X, as JITs do) */
static uint8_t *code_page(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Revision @i of the code: a function returning 100 + @i at offset 64 *
 * (@i % 2), the rest of the page as before. Written, then run.
 */
static int rev(uint8_t *p, int i, uint8_t *expect)
{
	mprotect(p, PAGE, PROT_READ | PROT_WRITE);
	emit_ret_imm(p + 64 * (i % 2), 100 + i);
	mprotect(p, PAGE, PROT_READ | PROT_EXEC);
	if (expect)
		memcpy(expect, p, PAGE);
	return call(p + 64 * (i % 2));
}

static int open_delta(struct flowjit_ring *ring, bool delta, int pages)
{
	struct perf_event_attr attr;

	user_attr(&attr);
	attr.flowjit_delta = delta;
	return flowjit_ring_open(ring, &attr, 0, -1, pages);
}

static void collect(struct flowjit_ring *ring, struct fj_set *set)
{
	struct sb sb = { .nr = 1 };

	sb.ring[0] = *ring;
	fj_collect(&sb, set);
	ring->lost = sb.ring[0].lost;
}

/* the revisions of the page at @addr, in order: IMAGE or DELTA ops */
static int ops_of(struct fj_set *set, uint64_t addr, uint8_t *ops, int max)
{
	int i, n = 0;

	for (i = 0; i < set->nr && n < max; i++)
		if (fj_user_image(&set->obj[i], 0) &&
		    set->obj[i].rec.addr == addr)
			ops[n++] = set->obj[i].rec.op;
	return n;
}

/* the snapshot of @addr with @bytes, whole or put together, or NULL */
static struct fj_obj *with_bytes(struct fj_set *set, uint64_t addr,
				 const uint8_t *bytes)
{
	int i;

	for (i = 0; i < set->nr; i++)
		if (fj_user_image(&set->obj[i], 0) &&
		    set->obj[i].rec.addr == addr && fj_complete(&set->obj[i]) &&
		    !memcmp(set->obj[i].bytes, bytes, PAGE))
			return &set->obj[i];
	return NULL;
}

TEST(delta_bit_needs_flowjit)
{
	struct perf_event_attr attr;
	int fd;

	sb_attr_init(&attr);
	attr.flowjit_delta = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EINVAL, errno);
	if (fd >= 0)
		close(fd);
}

/*
 * Four revisions, each changing one function: the first goes whole,
 * over zeros (one piece: the one function on the page), the others as
 * one piece of the block they changed, against the revision before, and
 * each puts together to the page's bytes.
 */
TEST(rewrites_go_as_the_blocks_that_changed)
{
	uint8_t expect[NREVS][PAGE], ops[NREVS + 2];
	struct flowjit_ring ring;
	struct fj_set *set = calloc(1, sizeof(*set));
	struct fj_obj *o, *prev = NULL;
	uint8_t *p = code_page();
	int i, n, err;

	ASSERT_NE(NULL, set);
	ASSERT_NE(NULL, p);
	err = open_delta(&ring, true, SB_DATA_PAGES);
	ASSERT_EQ(0, err) TH_LOG("flowjit event: %s", strerror(-err));
	for (i = 0; i < NREVS; i++)
		ASSERT_EQ(100 + i, rev(p, i, expect[i]));
	collect(&ring, set);
	n = ops_of(set, (uintptr_t)p, ops, NREVS + 2);
	ASSERT_EQ(NREVS, n);
	for (i = 0; i < NREVS; i++) {
		o = with_bytes(set, (uintptr_t)p, expect[i]);
		ASSERT_NE(NULL, o) TH_LOG("revision %d is not in the records", i);
		EXPECT_EQ(FLOWJIT_OP_DELTA, o->rec.op);
		EXPECT_EQ(i ? prev->rec.revision : 0, o->rec.base);
		/* "mov eax, imm; ret" is in one 16-byte block */
		EXPECT_EQ(sizeof(struct flowjit_delta_piece) + 16,
			  o->rec.chunk_len);
		prev = o;
	}
	EXPECT_EQ(0, ring.lost);
	flowjit_ring_close(&ring);
	fj_reset(set);
	free(set);
	munmap(p, PAGE);
}

/*
 * Two events on the task, one with deltas: each revision goes to both,
 * whole to the one without the bit.
 */
TEST(an_event_without_the_bit_gets_whole_images)
{
	uint8_t expect[NREVS][PAGE], ops[NREVS + 2];
	struct flowjit_ring with, without;
	struct fj_set *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	uint8_t *p = code_page();
	int i;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, open_delta(&with, true, SB_DATA_PAGES));
	ASSERT_EQ(0, open_delta(&without, false, SB_DATA_PAGES));
	for (i = 0; i < NREVS; i++)
		ASSERT_EQ(100 + i, rev(p, i, expect[i]));
	collect(&with, a);
	collect(&without, b);
	ASSERT_EQ(NREVS, ops_of(b, (uintptr_t)p, ops, NREVS + 2));
	for (i = 0; i < NREVS; i++) {
		EXPECT_EQ(FLOWJIT_OP_IMAGE, ops[i]);
		EXPECT_NE(NULL, with_bytes(a, (uintptr_t)p, expect[i]));
		EXPECT_NE(NULL, with_bytes(b, (uintptr_t)p, expect[i]));
	}
	ASSERT_EQ(NREVS, ops_of(a, (uintptr_t)p, ops, NREVS + 2));
	for (i = 0; i < NREVS; i++)
		EXPECT_EQ(FLOWJIT_OP_DELTA, ops[i]);
	flowjit_ring_close(&with);
	flowjit_ring_close(&without);
	fj_reset(a);
	fj_reset(b);
	free(a);
	free(b);
	munmap(p, PAGE);
}

/*
 * A new event begins to track the address space: it has no base, so
 * the next revision goes whole (over zeros), to the older event too.
 */
TEST(a_new_event_gets_a_whole_revision)
{
	uint8_t expect[PAGE], ops[NREVS + 2];
	struct flowjit_ring first, second;
	struct fj_set *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	uint8_t *p = code_page();
	struct fj_obj *o;
	int n;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, open_delta(&first, true, SB_DATA_PAGES));
	ASSERT_EQ(100, rev(p, 0, NULL));
	ASSERT_EQ(101, rev(p, 1, NULL));
	ASSERT_EQ(0, open_delta(&second, true, SB_DATA_PAGES));
	/* the arming work runs on the way back to user space */
	ASSERT_EQ(102, rev(p, 2, expect));
	collect(&first, a);
	collect(&second, b);
	n = ops_of(a, (uintptr_t)p, ops, NREVS + 2);
	ASSERT_EQ(3, n);
	o = with_bytes(a, (uintptr_t)p, expect);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, o->rec.base);
	ASSERT_EQ(1, ops_of(b, (uintptr_t)p, ops, NREVS + 2));
	o = with_bytes(b, (uintptr_t)p, expect);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, o->rec.base);
	flowjit_ring_close(&first);
	flowjit_ring_close(&second);
	fj_reset(a);
	fj_reset(b);
	free(a);
	free(b);
	munmap(p, PAGE);
}

/*
 * A ring of one page cannot take a whole image (a page and its header),
 * and a page full of bytes goes whole as an image: its first revision is
 * lost, so no later one may be a delta against it, or against any
 * revision lost after it: all are lost.
 */
TEST(no_delta_after_a_lost_record)
{
	struct flowjit_ring ring;
	struct fj_set *set = calloc(1, sizeof(*set));
	uint8_t ops[NREVS + 2];
	uint8_t *p = code_page();
	int i;

	ASSERT_NE(NULL, set);
	ASSERT_NE(NULL, p);
	memset(p, 0xcc, PAGE);	/* int3: no zero block */
	ASSERT_EQ(0, open_delta(&ring, true, 1));
	for (i = 0; i < NREVS; i++)
		ASSERT_EQ(100 + i, rev(p, i, NULL));
	/* a record that fits (the retire) brings the count of lost ones */
	munmap(p, PAGE);
	collect(&ring, set);
	EXPECT_LT(0, ring.lost);
	EXPECT_EQ(0, ops_of(set, (uintptr_t)p, ops, NREVS + 2));
	flowjit_ring_close(&ring);
	fj_reset(set);
	free(set);
}

FLOWJIT_HARNESS_MAIN
