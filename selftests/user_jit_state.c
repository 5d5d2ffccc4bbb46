// SPDX-License-Identifier: GPL-2.0
/*
 * What user JIT tracking keeps per address space: a page re-armed without
 * a change of its bytes (a W^X flip, the same bytes written again) is not
 * reported again, but a page whose image was retired, or that a new
 * event armed, is; and records that did not fit a ring buffer are
 * counted as lost, never silently dropped.
 *
 * The code is "mov eax, imm32; ret" (b8 imm32 c3).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

#include "harness.h"
#include "user_jit.h"

/* snapshots of the page at @addr in @set */
static int images_of(struct fj_set *set, uint64_t addr)
{
	int i, n = 0;

	for (i = 0; i < set->nr; i++)
		n += fj_user_image(&set->obj[i], 0) &&
		     set->obj[i].rec.addr == addr;
	return n;
}

FIXTURE(state) {
	struct sb sb;
	struct fj_set *set;
	uint8_t *code;
};

FIXTURE_SETUP(state)
{
	int err;

	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
	err = open_self(&self->sb);
	ASSERT_EQ(0, err) TH_LOG("flowjit per-task event: %s", strerror(-err));
	self->code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->code);
}

FIXTURE_TEARDOWN(state)
{
	munmap(self->code, PAGE);
	sb_close(&self->sb);
	fj_reset(self->set);
	free(self->set);
}

static void flip(uint8_t *p, int prot)
{
	mprotect(p, PAGE, prot);
}

/* W^X flips and identical rewrites: one record; a real change: another */
TEST_F(state, unchanged_bytes_are_reported_once)
{
	uint64_t a = (uintptr_t)self->code;
	int i;

	emit_ret_imm(self->code, 11);
	flip(self->code, PROT_READ | PROT_EXEC);
	ASSERT_EQ(11, call(self->code));
	for (i = 0; i < 3; i++) {
		flip(self->code, PROT_READ | PROT_WRITE);
		if (i == 2)
			emit_ret_imm(self->code, 11);	/* the same bytes */
		flip(self->code, PROT_READ | PROT_EXEC);
		ASSERT_EQ(11, call(self->code));
	}
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(1, images_of(self->set, a));
	flip(self->code, PROT_READ | PROT_WRITE);
	emit_ret_imm(self->code, 12);
	flip(self->code, PROT_READ | PROT_EXEC);
	ASSERT_EQ(12, call(self->code));
	/* and back to the first bytes: they are not the last snapshot */
	flip(self->code, PROT_READ | PROT_WRITE);
	emit_ret_imm(self->code, 11);
	flip(self->code, PROT_READ | PROT_EXEC);
	ASSERT_EQ(11, call(self->code));
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(3, images_of(self->set, a));
	EXPECT_EQ(0, fj_lost(&self->sb));
}

/* unmapped (retired) and mapped again with the same bytes: reported */
TEST_F(state, retired_page_is_reported_again)
{
	uint64_t a = (uintptr_t)self->code;
	uint8_t *again;

	emit_ret_imm(self->code, 21);
	flip(self->code, PROT_READ | PROT_EXEC);
	ASSERT_EQ(21, call(self->code));
	ASSERT_EQ(0, munmap(self->code, PAGE));
	again = mmap(self->code, PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(self->code, again);
	emit_ret_imm(self->code, 21);
	flip(self->code, PROT_READ | PROT_EXEC);
	ASSERT_EQ(21, call(self->code));
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(2, images_of(self->set, a));
}

/* a second event arms the address space again and gets every page */
TEST_F(state, new_event_gets_pages_again)
{
	uint64_t a = (uintptr_t)self->code;
	struct fj_set *set2 = calloc(1, sizeof(*set2));
	struct sb sb2;

	ASSERT_NE(NULL, set2);
	emit_ret_imm(self->code, 31);
	flip(self->code, PROT_READ | PROT_EXEC);
	ASSERT_EQ(31, call(self->code));
	ASSERT_EQ(0, open_self(&sb2));
	/* armed from task work on the way out of perf_event_open() */
	ASSERT_EQ(31, call(self->code));
	fj_collect(&sb2, set2);
	EXPECT_EQ(1, images_of(set2, a));
	sb_close(&sb2);
	fj_reset(set2);
	free(set2);
}

static void count_lost(const struct perf_event_header *hdr,
		       const struct flowjit_sample_id *id, void *arg)
{
	struct flowjit_chunk c;
	int *images = arg;

	(void)id;
	if (hdr->type == PERF_RECORD_FLOWJIT &&
	    !flowjit_chunk_parse(&c, hdr + 1, hdr->size - sizeof(*hdr), NULL) &&
	    c.rec.kind == FLOWJIT_KIND_USER_JIT && c.rec.op == FLOWJIT_OP_IMAGE)
		(*images)++;
}

/* more snapshots than the ring buffer holds: the rest count as lost */
TEST_F(state, records_that_do_not_fit_are_counted_lost)
{
	int n = 2 * SB_DATA_PAGES, images = 0, i;
	uint8_t *m = mmap(NULL, (n + 1) * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, m);
	for (i = 0; i <= n; i++)
		emit_ret_imm(m + i * PAGE, i);
	ASSERT_EQ(0, mprotect(m, (n + 1) * PAGE, PROT_READ | PROT_EXEC));
	for (i = 0; i < n; i++)
		ASSERT_EQ(i, call(m + i * PAGE));
	sb_drain(&self->sb, count_lost, &images);
	/* perf writes the LOST record once a record fits again */
	ASSERT_EQ(n, call(m + n * PAGE));
	sb_drain(&self->sb, count_lost, &images);
	TH_LOG("%d pages run, %d snapshots received, %llu lost", n + 1,
	       images, (unsigned long long)fj_lost(&self->sb));
	EXPECT_LT(images, n + 1);
	EXPECT_EQ(n + 1, images + fj_lost(&self->sb));
	munmap(m, (n + 1) * PAGE);
}

FLOWJIT_HARNESS_MAIN
