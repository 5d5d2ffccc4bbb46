// SPDX-License-Identifier: GPL-2.0
/*
 * JIT code in a transparent huge page: flowjit splits the huge mapping at
 * the first instruction fetch and snapshots 4 KiB pages, each revision
 * of each page that runs, as for small pages.
 *
 * The code is "mov eax, imm32; ret" (b8 imm32 c3).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "user_jit.h"

#define HPAGE	(2UL << 20)

/* AnonHugePages of /proc/meminfo, in kB; -1 if absent */
static long anon_huge_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

TEST(huge_page_code_is_snapshotted_per_4k_page)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	static uint8_t expect[3][PAGE];
	struct perf_event_attr attr;
	uint8_t *raw, *h;
	long before, after;
	struct fj_obj *o;
	struct sb sb;
	int err, i;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
		SKIP(return, "no transparent huge pages in this kernel");
	ASSERT_NE(NULL, set);
	sb_attr_init(&attr);
	attr.flowjit = 1;
	attr.exclude_kernel = 1;
	err = sb_open_task(&sb, &attr, 0);
	ASSERT_EQ(0, err) TH_LOG("flowjit per-task event: %s", strerror(-err));
	/* an aligned 2 MiB of RWX memory, huge where the kernel can */
	raw = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	h = (uint8_t *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	ASSERT_EQ(0, madvise(h, HPAGE, MADV_HUGEPAGE));
	before = anon_huge_kb();
	emit_ret_imm(h + 5 * PAGE, 50);		/* the first touch */
	after = anon_huge_kb();
	ASSERT_LE(before + 2048, after)
		TH_LOG("no huge page (AnonHugePages %ld -> %ld kB)", before,
		       after);
	emit_ret_imm(h + 300 * PAGE + 8, 51);
	memcpy(expect[0], h + 5 * PAGE, PAGE);
	memcpy(expect[1], h + 300 * PAGE, PAGE);
	ASSERT_EQ(50, call(h + 5 * PAGE));
	ASSERT_EQ(51, call(h + 300 * PAGE + 8));
	/* a rewrite of one 4 KiB page of it is a new revision of that page */
	emit_ret_imm(h + 5 * PAGE + 16, 52);
	memcpy(expect[2], h + 5 * PAGE, PAGE);
	ASSERT_EQ(52, call(h + 5 * PAGE + 16));
	fj_collect(&sb, set);
	o = find_page(set, (uintptr_t)(h + 5 * PAGE), 0);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(PAGE, o->rec.len);
	EXPECT_EQ(0, memcmp(o->bytes, expect[0], PAGE));
	o = find_page(set, (uintptr_t)(h + 5 * PAGE), o->rec.revision);
	ASSERT_NE(NULL, o) TH_LOG("no snapshot of the rewrite");
	EXPECT_EQ(0, memcmp(o->bytes, expect[2], PAGE));
	o = find_page(set, (uintptr_t)(h + 300 * PAGE), 0);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, memcmp(o->bytes, expect[1], PAGE));
	/* 4 KiB pages that did not run have no snapshot */
	for (i = 0; i < 512; i++)
		if (i != 5 && i != 300)
			EXPECT_EQ(NULL, find_page(set, (uintptr_t)(h + i * PAGE), 0));
	EXPECT_EQ(0, fj_lost(&sb));
	munmap(raw, 2 * HPAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

TEST_HARNESS_MAIN
