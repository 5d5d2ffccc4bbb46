// SPDX-License-Identifier: GPL-2.0
/*
 * JIT code in a transparent huge page: flowjit splits the huge mapping at
 * the first instruction fetch and snapshots 4 KiB pages, each revision
 * of each page that runs, as for small pages. A huge page of a memfd
 * (shmem THP) is mapped with PTEs where flowjit made the mapping
 * non-executable: a file PMD cannot be split into PTEs, only zapped.
 *
 * The code is "mov eax, imm32; ret" (b8 imm32 c3).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "user_jit.h"

#define HPAGE	(2UL << 20)

/* @field of /proc/meminfo, in kB; -1 if absent */
static long meminfo_kb(const char *field)
{
	char line[128], fmt[64];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	snprintf(fmt, sizeof(fmt), "%s: %%ld kB", field);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* is /sys/kernel/mm/transparent_hugepage/enabled "[never]"? */
static bool thp_never(void)
{
	char buf[64] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strstr(buf, "[never]");
}

static long anon_huge_kb(void)
{
	return meminfo_kb("AnonHugePages");
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
	/* the kernel turns THP off below 512 MiB of RAM (KASAN's shadow
	 * takes much of a small guest's): say so rather than "no huge page"
	 */
	ASSERT_FALSE(thp_never())
		TH_LOG("THP is off here (enabled: never; MemTotal %ld kB)",
		       meminfo_kb("MemTotal"));
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

#define SHMEM_ENABLED	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"

/*
 * A memfd whose 2 MiB are one huge page, with an RW mapping and an RX
 * alias at PMD-aligned addresses (shmem_enabled "advise" and
 * MADV_HUGEPAGE, set by the fixture and restored after).
 */
FIXTURE(shmem_thp) {
	char saved[16];		/* shmem_enabled before */
	int fd;
	uint8_t *w, *x;		/* RW mapping, RX alias */
	struct sb sb;
	bool open;
	const char *skip;	/* why the tests cannot run here */
};

/* a PMD-aligned HPAGE of @fd at a fresh address, with @prot */
static uint8_t *map_aligned(int fd, int prot)
{
	uint8_t *raw = mmap(NULL, 2 * HPAGE, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *h;

	if (raw == MAP_FAILED)
		return MAP_FAILED;
	h = (uint8_t *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	if (mmap(h, HPAGE, prot, MAP_SHARED | MAP_FIXED, fd, 0) != h ||
	    madvise(h, HPAGE, MADV_HUGEPAGE))
		return MAP_FAILED;
	return h;
}

/* the selected value of @path ("a [b] c"), into @buf */
static int read_selected(const char *path, char *buf, size_t len)
{
	char line[128], *b, *e;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	b = fgets(line, sizeof(line), f);
	fclose(f);
	if (b)
		b = strchr(line, '[');
	e = b ? strchr(b, ']') : NULL;
	if (!e || (size_t)(e - b) > len)
		return -1;
	*e = 0;
	memcpy(buf, b + 1, e - b);	/* with the NUL */
	return 0;
}

/* ShmemPmdMapped of the VMA at @addr in /proc/self/smaps, in kB */
static long shmem_pmd_mapped_kb(void *addr)
{
	char line[256], start[32];
	bool in = false;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, start, strlen(start));
		else if (in && sscanf(line, "ShmemPmdMapped: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* (kselftest_harness.h of 6.1 runs the test after a SKIP() in setup) */
FIXTURE_SETUP(shmem_thp)
{
	long before;

	self->fd = -1;
	self->saved[0] = 0;
	if (read_selected(SHMEM_ENABLED, self->saved, sizeof(self->saved) - 1)) {
		self->saved[0] = 0;
		self->skip = "no shmem transparent huge pages in this kernel";
		return;
	}
	if (getuid() != 0) {
		self->saved[0] = 0;
		self->skip = "needs root to set " SHMEM_ENABLED;
		return;
	}
	ASSERT_EQ(0, sb_write_file(SHMEM_ENABLED, "advise"));
	self->fd = memfd_create("fj-thp", MFD_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, HPAGE));
	self->w = map_aligned(self->fd, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, self->w);
	before = meminfo_kb("ShmemHugePages");
	emit_ret_imm(self->w, 60);		/* the first touch */
	if (meminfo_kb("ShmemHugePages") < before + 2048)
		self->skip = "no huge page for the memfd";
}

FIXTURE_TEARDOWN(shmem_thp)
{
	if (self->open)
		sb_close(&self->sb);
	if (self->fd >= 0)
		close(self->fd);
	if (self->saved[0])
		sb_write_file(SHMEM_ENABLED, self->saved);
}

/*
 * Call @fn in a child that gets SIGALRM after 10 s: the value it
 * returned, or -signal if it died (a fetch that faults forever is
 * killed by the alarm).
 */
static int call_in_time(const uint8_t *fn)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1000;
	if (pid == 0) {
		alarm(10);
		_exit(call(fn));
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1000;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

/* a tracked process runs code from a huge memfd page (review finding 4) */
TEST_F(shmem_thp, exec_from_huge_page_of_memfd)
{
	struct fj_set *set;
	struct fj_obj *o;
	int v;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	set = calloc(1, sizeof(*set));
	ASSERT_NE(NULL, set);
	ASSERT_EQ(0, open_self(&self->sb));
	self->open = true;
	self->x = map_aligned(self->fd, PROT_READ | PROT_EXEC);
	ASSERT_NE(MAP_FAILED, self->x);
	v = call_in_time(self->x);
	ASSERT_EQ(60, v) TH_LOG("%s", v == -SIGALRM ?
		"the instruction fetch faulted for 10 s" : "the call failed");
	ASSERT_EQ(60, call(self->x));
	/* a rewrite through the RW mapping, itself PMD-mapped */
	emit_ret_imm(self->w + 16, 62);
	ASSERT_EQ(62, call(self->x + 16));
	fj_collect(&self->sb, set);
	o = find_page(set, (uintptr_t)self->x, 0);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(60, o->bytes[1]);
	o = find_page(set, (uintptr_t)self->x, o->rec.revision);
	ASSERT_NE(NULL, o) TH_LOG("no snapshot of the rewrite");
	EXPECT_EQ(0, memcmp(o->bytes, self->w, PAGE));
	fj_reset(set);
	free(set);
}

/* the same after the event is closed: the VMA was armed */
TEST_F(shmem_thp, exec_after_tracking_ended)
{
	int v;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, open_self(&self->sb));
	self->x = map_aligned(self->fd, PROT_READ | PROT_EXEC);
	ASSERT_NE(MAP_FAILED, self->x);
	sb_close(&self->sb);
	v = call_in_time(self->x);
	ASSERT_EQ(60, v) TH_LOG("%s", v == -SIGALRM ?
		"the instruction fetch faulted for 10 s" : "the call failed");
}

/*
 * The RX alias was mapped huge before tracking began, and arming made
 * the PMD non-executable: a write fault in another shared mapping walks
 * the aliases of the page (this one huge), and the next fetch snapshots
 * what was written.
 */
TEST_F(shmem_thp, huge_alias_mapped_before_tracking)
{
	struct fj_set *set;
	struct fj_obj *o;
	uint8_t *v4k;
	int v;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	set = calloc(1, sizeof(*set));
	ASSERT_NE(NULL, set);
	self->x = map_aligned(self->fd, PROT_READ | PROT_EXEC);
	ASSERT_NE(MAP_FAILED, self->x);
	ASSERT_EQ(0xb8, self->x[0]);		/* map it: a read fault */
	if (shmem_pmd_mapped_kb(self->x) < 2048)
		SKIP(free(set); return, "the RX alias is not PMD-mapped");
	ASSERT_EQ(0, open_self(&self->sb));
	self->open = true;
	/* self->w is PMD-mapped writable: write through a fresh small view */
	v4k = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, v4k);
	emit_ret_imm(v4k + 8, 61);		/* a write fault: the walk */
	munmap(v4k, PAGE);
	v = call_in_time(self->x + 8);
	ASSERT_EQ(61, v) TH_LOG("%s", v == -SIGALRM ?
		"the instruction fetch faulted for 10 s" : "the call failed");
	ASSERT_EQ(61, call(self->x + 8));
	fj_collect(&self->sb, set);
	o = find_page(set, (uintptr_t)self->x, 0);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, memcmp(o->bytes, self->w, PAGE));
	fj_reset(set);
	free(set);
}

FLOWJIT_HARNESS_MAIN
