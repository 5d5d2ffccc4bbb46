// SPDX-License-Identifier: GPL-2.0
/*
 * Tracked JIT code meets the rest of mm: swap-out and swap-in, KSM
 * merging and its copy-on-write break, migration to another NUMA node
 * (move_pages(), migrate_pages(), a NUMA hinting fault), compaction,
 * mlock() and mlockall(). Each rebuilds or moves the PTEs of code pages
 * flowjit keeps W^X. For private anonymous
 * code made executable by mprotect(), an RWX mapping and a memfd mapped
 * RW and RX, every test writes three revisions of the code, with the mm
 * operation between them, and checks that
 *
 * - every call returns what the bytes written say (the process behaves as
 *   it would untracked), also the calls right after the operation, and
 * - every revision that ran has exactly one snapshot, with its bytes (a
 *   page re-armed by the operation and run again unchanged is not
 *   reported again).
 *
 * Then userfaultfd's MISSING mode filling code pages, and a tracked
 * process OOM-killed by its memory cgroup. The guest has swap on zram,
 * two NUMA nodes and cgroup v2 (scripts/guest-init, scripts/run-guest);
 * tests whose facility is missing are skipped.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "harness.h"
#include "user_jit.h"

#define NPAGES		4
#define NREVS		3
#define REV_OFF(i)	(16 * (i))
#define REV_VAL(i)	(3000 + (i))

#define HPAGE		(2UL << 20)

enum code_mode {
	CODE_MPROTECT,		/* anonymous, RW while written, then RX */
	CODE_RWX,		/* anonymous RWX, rewritten in place */
	CODE_MEMFD,		/* memfd mapped RW at w and RX at x */
	CODE_THP,		/* as CODE_MPROTECT, in a transparent huge page */
};

FIXTURE(mm) {
	struct sb sb;
	struct fj_set *set;
	int fd;
	uint8_t *w;		/* where the code is written */
	uint8_t *x;		/* where it runs (w but for CODE_MEMFD) */
	size_t size;		/* of the mappings */
	uint8_t expect[NREVS][PAGE];
};

FIXTURE_VARIANT(mm) {
	enum code_mode mode;
};

FIXTURE_VARIANT_ADD(mm, mprotect) {
	.mode = CODE_MPROTECT,
};

FIXTURE_VARIANT_ADD(mm, rwx) {
	.mode = CODE_RWX,
};

FIXTURE_VARIANT_ADD(mm, memfd) {
	.mode = CODE_MEMFD,
};

FIXTURE_VARIANT_ADD(mm, thp) {
	.mode = CODE_THP,
};

/* kB of anonymous huge pages mapping @p, from /proc/self/smaps; -1: none */
static long anon_huge_kb(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long lo, hi;
	char line[256];
	long kb = -1;
	bool in = false;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo <= (uintptr_t)p && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "AnonHugePages:", 14))
			kb = strtol(line + 14, NULL, 10);
	}
	fclose(f);
	return kb;
}

/* an anonymous RW mapping of @size aligned to it, or MAP_FAILED */
static void *map_aligned(size_t size)
{
	uint8_t *m = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (m == MAP_FAILED)
		return m;
	a = ((uintptr_t)m + size - 1) & ~(size - 1);
	if (a > (uintptr_t)m)
		munmap(m, a - (uintptr_t)m);
	munmap((uint8_t *)a + size, (uintptr_t)m + size - a);
	return (void *)a;
}

FIXTURE_SETUP(mm)
{
	int prot = PROT_READ | PROT_WRITE, err;

	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
	err = open_self(&self->sb);
	ASSERT_EQ(0, err) TH_LOG("flowjit per-task event: %s", strerror(-err));
	self->fd = -1;
	self->size = variant->mode == CODE_THP ? HPAGE : NPAGES * PAGE;
	if (variant->mode == CODE_THP) {
		self->w = map_aligned(HPAGE);
		ASSERT_NE(MAP_FAILED, self->w);
		self->x = self->w;
		if (madvise(self->w, HPAGE, MADV_HUGEPAGE))
			SKIP(return, "no transparent huge pages (MADV_HUGEPAGE)");
		self->w[0] = 0xc3;	/* the first touch maps the huge page */
		if (anon_huge_kb(self->w) < 2048)
			SKIP(return, "no huge page for the code (THP never, or memory)");
		return;
	}
	if (variant->mode == CODE_MEMFD) {
		self->fd = memfd_create("fj-mm", MFD_CLOEXEC);
		ASSERT_LE(0, self->fd);
		ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PAGE));
		self->w = mmap(NULL, NPAGES * PAGE, prot, MAP_SHARED,
			       self->fd, 0);
		self->x = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_EXEC,
			       MAP_SHARED, self->fd, 0);
		ASSERT_NE(MAP_FAILED, self->x);
	} else {
		if (variant->mode == CODE_RWX)
			prot |= PROT_EXEC;
		self->w = mmap(NULL, NPAGES * PAGE, prot,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		self->x = self->w;
	}
	ASSERT_NE(MAP_FAILED, self->w);
}

static int numa_tune(bool on);

FIXTURE_TEARDOWN(mm)
{
	numa_tune(false);
	if (self->x != self->w)
		munmap(self->x, self->size);
	munmap(self->w, self->size);
	if (self->fd >= 0)
		close(self->fd);
	sb_close(&self->sb);
	fj_reset(self->set);
	free(self->set);
}

/* Write revision @i of the code (at its own offset) and run it. */
static int run_rev(struct _test_data_mm *self,
		   const struct _fixture_variant_mm *variant, int i)
{
	bool wx = variant->mode == CODE_MPROTECT || variant->mode == CODE_THP;

	if (wx)
		mprotect(self->w, self->size, PROT_READ | PROT_WRITE);
	emit_ret_imm(self->w + REV_OFF(i), REV_VAL(i));
	if (wx)
		mprotect(self->w, self->size, PROT_READ | PROT_EXEC);
	memcpy(self->expect[i], self->w, PAGE);
	return call(self->x + REV_OFF(i));
}

/* Every revision up to @n runs as written. */
static bool revisions_run(struct _test_data_mm *self, int n)
{
	int i;

	for (i = 0; i <= n; i++)
		if (call(self->x + REV_OFF(i)) != REV_VAL(i))
			return false;
	return true;
}

/* The snapshots of the code page at x with the bytes of @bytes. */
static int count_snapshots(struct fj_set *set, uint64_t addr,
			   const uint8_t *bytes)
{
	int i, n = 0;

	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (fj_user_image(o, 0) && o->rec.addr == addr &&
		    fj_complete(o) && !memcmp(o->bytes, bytes, PAGE))
			n++;
	}
	return n;
}

typedef void (*mm_op_t)(struct __test_metadata *_metadata,
			struct _test_data_mm *self,
			const struct _fixture_variant_mm *variant);

/*
 * Three revisions, @op after each of the first two, every revision run
 * again after it; then one snapshot per revision.
 */
static void revisions_around(struct __test_metadata *_metadata,
			     struct _test_data_mm *self,
			     const struct _fixture_variant_mm *variant,
			     mm_op_t op)
{
	int i;

	for (i = 0; i < NREVS; i++) {
		ASSERT_EQ(REV_VAL(i), run_rev(self, variant, i));
		if (i == NREVS - 1)
			break;
		op(_metadata, self, variant);
		ASSERT_TRUE(revisions_run(self, i))
			TH_LOG("code changed under revision %d", i);
	}
	fj_collect(&self->sb, self->set);
	for (i = 0; i < NREVS; i++)
		EXPECT_EQ(1, count_snapshots(self->set, (uintptr_t)self->x,
					     self->expect[i]))
			TH_LOG("revision %d: not one snapshot of its bytes", i);
	EXPECT_EQ(0, fj_lost(&self->sb));
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* the value of "@name value" lines in @path, -1 if it has none */
static long keyed(const char *path, const char *name)
{
	char key[64];
	long v, ret = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			ret = v;
	fclose(f);
	return ret;
}

static long vm_counter(const char *name)
{
	return keyed("/proc/vmstat", name);
}

static bool swap_on(void)
{
	char line[256];
	FILE *f = fopen("/proc/swaps", "r");
	int n = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n > 1;
}

/*
 * Is the page at @p mapped, its PTE present (/proc/self/pagemap bit 63)?
 * Not mincore(): a page just written to swap may stay in the swap cache
 * a while (6.12 frees it later than 6.1 does), and mincore() counts it,
 * though the next access faults all the same.
 */
static bool resident(const void *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &e, sizeof(e), (uintptr_t)p / PAGE * 8) != 8)
			e = 0;
		close(fd);
	}
	return e >> 63;
}

/*
 * MADV_PAGEOUT of [@p, @p + @size): how many times it had to be asked
 * again, or -1 if it failed. It drains only this CPU's batch of pages
 * on their way to the LRU (lru_add_drain()); a page faulted in on the
 * other CPU may still sit in that CPU's batch, off the LRU, where
 * reclaim cannot isolate it, until something drains it. Compaction
 * drains every CPU's batch (lru_add_drain_all()): ask for it, and page
 * out again.
 */
static int page_out_drained(void *p, size_t size)
{
	int again;

	for (again = 0; again < 3; again++) {
		if (madvise(p, size, MADV_PAGEOUT))
			return -1;
		if (!resident(p))
			break;
		write_str("/proc/sys/vm/compact_memory", "1");
	}
	return again;
}

/*
 * Page the code out to swap and let the next call swap it in. A shmem
 * page is only reclaimed when this is its one mapping: the RW view goes
 * for the time of the pageout.
 */
static void page_out(struct __test_metadata *_metadata,
		     struct _test_data_mm *self,
		     const struct _fixture_variant_mm *variant)
{
	int again;

	if (variant->mode == CODE_MEMFD)
		ASSERT_EQ(0, munmap(self->w, self->size));
	again = page_out_drained(self->x, self->size);
	ASSERT_LE(0, again);
	if (again)
		printf("# paged out after %d compaction%s drained the CPUs' LRU batches\n",
		       again, again > 1 ? "s" : "");
	EXPECT_FALSE(resident(self->x)) TH_LOG("the code page stayed in memory");
	if (variant->mode == CODE_MEMFD)
		ASSERT_EQ(self->w, mmap(self->w, self->size,
					PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_FIXED, self->fd, 0));
}

TEST_F(mm, swap_out_and_in_between_revisions)
{
	if (!swap_on())
		SKIP(return, "no swap");
	revisions_around(_metadata, self, variant, page_out);
	printf("# pswpout %ld, pswpin %ld\n", vm_counter("pswpout"),
	       vm_counter("pswpin"));
}

#define KSM	"/sys/kernel/mm/ksm/"

/* the page frame of @addr in @pid (root only), 0 if not present */
static uint64_t pfn_of(pid_t pid, const void *addr)
{
	uint64_t e = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / PAGE * sizeof(e)) !=
	    sizeof(e))
		e = 0;
	close(fd);
	return e >> 63 ? e & ((1ULL << 55) - 1) : 0;
}

/*
 * KSM merges the code page with an identical page of a child (its copy,
 * written again), then the next revision breaks the merge by
 * copy-on-write. The child checks that its copy still runs the old code.
 */
static void ksm_merge(struct __test_metadata *_metadata,
		      struct _test_data_mm *self,
		      const struct _fixture_variant_mm *variant)
{
	int ready[2], done[2], status, i;
	int limit = 30 * flowjit_timeout_scale();
	struct timespec t0, t;
	bool merged;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t copy[PAGE];
		bool ok;

		memcpy(copy, self->x, PAGE);
		mprotect(self->w, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
		memcpy(self->w, copy, PAGE);	/* a page of its own */
		madvise(self->w, PAGE, MADV_MERGEABLE);
		if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(2);
		ok = !memcmp(self->w, copy, PAGE);
		for (i = 0; ok && i < NREVS && copy[REV_OFF(i)] == 0xb8; i++)
			ok = call(self->w + REV_OFF(i)) == REV_VAL(i);
		_exit(!ok);
	}
	ASSERT_EQ(0, madvise(self->w, PAGE, MADV_MERGEABLE));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/*
	 * merged: the two processes map one page frame. ksmd runs at nice
	 * 5, so in a TCG guest on a busy host it may take a while.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		usleep(20000);
		merged = pfn_of(getpid(), self->x) &&
			 pfn_of(getpid(), self->x) == pfn_of(pid, self->x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!merged && t.tv_sec - t0.tv_sec < limit);
	EXPECT_TRUE(merged) TH_LOG("KSM did not merge the code in %d s", limit);
	ASSERT_EQ(1, write(done[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("the child's copy changed");
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
}

/* two waits for ksmd of up to 30 s each (times the scale) */
TEST_F_TIMEOUT(mm, ksm_merge_and_cow_break_between_revisions, 90)
{
	if (variant->mode == CODE_MEMFD)
		SKIP(return, "KSM merges anonymous pages only");
	if (write_str(KSM "pages_to_scan", "1000") ||
	    write_str(KSM "sleep_millisecs", "10") ||
	    write_str(KSM "run", "1"))
		SKIP(return, "no KSM");
	revisions_around(_metadata, self, variant, ksm_merge);
	printf("# ksm pages_shared %ld, full scans %ld\n",
	       read_long(KSM "pages_shared"), read_long(KSM "full_scans"));
	write_str(KSM "run", "2");	/* unmerge everything */
}

/*
 * The node of the page at @p, the start of its mapping, from
 * /proc/self/numa_maps: the one node it counts pages on, or -ENOENT.
 */
static int numa_maps_node(void *p)
{
	FILE *f = fopen("/proc/self/numa_maps", "r");
	int node = -ENOENT, n, pages;
	char line[512], *t;
	unsigned long start;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		start = strtoul(line, NULL, 16);
		if (start != (uintptr_t)p)
			continue;
		for (t = strstr(line, " N"); t; t = strstr(t + 1, " N"))
			if (sscanf(t, " N%d=%d", &n, &pages) == 2 && pages)
				node = node == -ENOENT ? n : -EINVAL;
		break;
	}
	fclose(f);
	return node;
}

/*
 * The node of the page at @p, or -errno. move_pages() says -ENOENT for
 * a page NUMA balancing has just made PROT_NONE (6.1's follow_page()
 * does not follow such PTEs; mainline does again since
 * FOLL_HONOR_NUMA_FAULT): numa_maps counts it.
 */
static int page_node(void *p)
{
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1, &p, NULL, &status, 0))
		return -errno;
	return status == -ENOENT ? numa_maps_node(p) : status;
}

/* Move the code page (and its RW alias) to the other node. */
static void migrate(struct __test_metadata *_metadata,
		    struct _test_data_mm *self,
		    const struct _fixture_variant_mm *variant)
{
	void *p = self->x;
	int from = page_node(p), to, status = -1;

	ASSERT_LE(0, from) TH_LOG("move_pages: %s", strerror(-from));
	to = !from;
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, 1, &p, &to, &status,
			     MPOL_MF_MOVE_ALL))
		TH_LOG("move_pages: %s", strerror(errno));
	ASSERT_EQ(to, status) TH_LOG("page not moved: %d", status);
}

TEST_F(mm, migration_to_other_node_between_revisions)
{
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "one NUMA node");
	revisions_around(_metadata, self, variant, migrate);
}

/* The same with migrate_pages(): every page of the process moves. */
static void migrate_all(struct __test_metadata *_metadata,
			struct _test_data_mm *self,
			const struct _fixture_variant_mm *variant)
{
	int from = page_node(self->x);
	unsigned long old_nodes, new_nodes;
	long left;
	int at;

	ASSERT_LE(0, from) TH_LOG("move_pages: %s", strerror(-from));
	old_nodes = 1UL << from;
	new_nodes = 1UL << !from;
	left = syscall(SYS_migrate_pages, 0, 8 * sizeof(old_nodes),
		       &old_nodes, &new_nodes);
	ASSERT_LE(0, left) TH_LOG("migrate_pages: %s", strerror(errno));
	at = page_node(self->x);
	ASSERT_EQ(!from, at) TH_LOG("%ld pages not moved", left);
}

TEST_F(mm, migrate_pages_of_the_process_between_revisions)
{
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "one NUMA node");
	revisions_around(_metadata, self, variant, migrate_all);
}

#define NUMA_DEBUGFS	"/sys/kernel/debug/sched/numa_balancing/"

/*
 * NUMA balancing's hinting fault: the scanner makes the code's PTE
 * PROT_NONE (change_prot_numa()), the next fetch takes do_numa_page(),
 * which migrates the page to the node of the CPU that touched it and
 * rebuilds the PTE from vm_page_prot. The scanner leaves alone a
 * single-threaded process's pages that are on its own node, so the code
 * goes to the other node first, and the thread is pinned to one CPU and
 * calls the code until the page has come back to that CPU's node.
 */
static void numa_hint(struct __test_metadata *_metadata,
		      struct _test_data_mm *self,
		      const struct _fixture_variant_mm *variant)
{
	long faults = vm_counter("numa_hint_faults"), calls = 0;
	long migrated = vm_counter("numa_pages_migrated");
	unsigned int cpu, node;
	struct timespec t0, t;
	cpu_set_t set;
	void *p = self->x;
	int to, status = -1, at;

	ASSERT_EQ(0, syscall(SYS_getcpu, &cpu, &node, NULL));
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	to = !node;
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, 1, &p, &to, &status,
			     MPOL_MF_MOVE_ALL))
		TH_LOG("move_pages: %s", strerror(errno));
	ASSERT_EQ(to, status);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++, calls++)
			ASSERT_EQ(REV_VAL(0), call(self->x + REV_OFF(0)));
		at = page_node(self->x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (at != (int)node && t.tv_sec - t0.tv_sec < 60);
	printf("# node %d to %d and back in %ld calls, %ld s: ", node, to,
	       calls, (long)(t.tv_sec - t0.tv_sec));
	printf("numa_hint_faults +%ld, numa_pages_migrated +%ld\n",
	       vm_counter("numa_hint_faults") - faults,
	       vm_counter("numa_pages_migrated") - migrated);
	ASSERT_EQ((int)node, at)
		TH_LOG("no hinting fault brought the code back in 60 s");
}

static const char *const numa_knobs[] = {
	"/proc/sys/kernel/numa_balancing",
	/* scan at once and often: the defaults wait a second of CPU time */
	NUMA_DEBUGFS "scan_delay_ms",
	NUMA_DEBUGFS "scan_period_min_ms",
	NUMA_DEBUGFS "scan_period_max_ms",
};

/*
 * Turn NUMA balancing on and make it scan often (@on), or put back what
 * was there: the tests after this one must not meet a scanner this busy.
 */
static int numa_tune(bool on)
{
	static const char *const want[] = { "1", "0", "10", "100" };
	static long saved[ARRAY_SIZE(numa_knobs)];
	static bool tuned;
	char v[32];
	size_t i;

	if (on == tuned)
		return 0;
	tuned = on;
	for (i = 0; i < ARRAY_SIZE(numa_knobs); i++) {
		if (on)
			saved[i] = read_long(numa_knobs[i]);
		snprintf(v, sizeof(v), "%ld", saved[i]);
		if (saved[i] >= 0 && write_str(numa_knobs[i], on ? want[i] : v) &&
		    !i)
			return -1;
	}
	return saved[0] < 0 ? -1 : 0;
}

/* the running kernel is @major.@minor or later */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

TEST_F_TIMEOUT(mm, numa_hinting_fault_between_revisions, 300)
{
	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "one NUMA node");
	if (variant->mode == CODE_MEMFD)
		SKIP(return, "shmem without a policy is not NUMA-scanned");
	/*
	 * Tracked THP code is PTE-mapped (__flowjit_split_huge_exec()):
	 * do_numa_page() migrates a large folio mapped by PTEs since 6.10
	 * (numa_rebuild_large_mapping()); before, it leaves it alone.
	 */
	if (variant->mode == CODE_THP && !kernel_at_least(6, 10))
		SKIP(return, "do_numa_page() before 6.10 migrates no PTE-mapped THP");
	if (numa_tune(true))
		SKIP(return, "no NUMA balancing");
	revisions_around(_metadata, self, variant, numa_hint);
}

static void compact(struct __test_metadata *_metadata,
		    struct _test_data_mm *self,
		    const struct _fixture_variant_mm *variant)
{
	ASSERT_EQ(0, write_str("/proc/sys/vm/compact_memory", "1"));
}

TEST_F(mm, compaction_between_revisions)
{
	long before = vm_counter("compact_migrate_scanned");

	if (before < 0)
		SKIP(return, "no compaction");
	revisions_around(_metadata, self, variant, compact);
	printf("# compact_migrate_scanned +%ld\n",
	       vm_counter("compact_migrate_scanned") - before);
}

static void relock(struct __test_metadata *_metadata,
		   struct _test_data_mm *self,
		   const struct _fixture_variant_mm *variant)
{
	ASSERT_EQ(0, munlock(self->x, self->size));
	ASSERT_EQ(0, mlock(self->x, self->size));
}

/* Locked code is rewritten and re-armed as any other. */
TEST_F(mm, mlocked_code_between_revisions)
{
	ASSERT_EQ(0, mlock(self->x, self->size));
	if (self->w != self->x)
		ASSERT_EQ(0, mlock(self->w, self->size));
	revisions_around(_metadata, self, variant, relock);
}

static void relock_all(struct __test_metadata *_metadata,
		       struct _test_data_mm *self,
		       const struct _fixture_variant_mm *variant)
{
	ASSERT_EQ(0, munlockall());
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE));
}

/* mlockall(MCL_FUTURE): VMAs made and changed later are locked too */
TEST_F(mm, mlockall_code_between_revisions)
{
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE))
		TH_LOG("mlockall: %s", strerror(errno));
	revisions_around(_metadata, self, variant, relock_all);
	munlockall();
}

/*
 * userfaultfd's MISSING mode: a handler thread fills each page of code
 * (UFFDIO_COPY) on its first touch, as a lazily restored JIT cache or a
 * post-copy migration does. The PTE the copy installs is the VMA's
 * protection too: the first call snapshots the bytes the handler put.
 */
struct uffd_filler {
	int uffd;
	uint8_t page[PAGE];	/* what each missing page gets */
	int served;
};

static void *uffd_fill(void *arg)
{
	struct uffd_filler *f = arg;
	struct uffd_msg msg;

	/* one fault per page (closing the fd would not end a read()) */
	while (f->served < NPAGES &&
	       read(f->uffd, &msg, sizeof(msg)) == sizeof(msg)) {
		struct uffdio_copy copy = {
			.src = (uintptr_t)f->page,
			.dst = msg.arg.pagefault.address & ~(PAGE - 1ULL),
			.len = PAGE,
		};

		if (msg.event != UFFD_EVENT_PAGEFAULT ||
		    ioctl(f->uffd, UFFDIO_COPY, &copy))
			break;
		f->served++;
	}
	return NULL;
}

TEST(uffd_missing_pages_filled_with_code_are_snapshotted)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct fj_set *set = calloc(1, sizeof(*set));
	struct uffd_filler f = { 0 };
	pthread_t th;
	struct sb sb;
	uint8_t *x;
	int i;

	ASSERT_NE(NULL, set);
	ASSERT_EQ(0, open_self(&sb));
	f.uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (f.uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(f.uffd, UFFDIO_API, &api));
	x = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	reg.range.start = (uintptr_t)x;
	reg.range.len = NPAGES * PAGE;
	ASSERT_EQ(0, ioctl(f.uffd, UFFDIO_REGISTER, &reg));
	emit_ret_imm(f.page, 4000);
	ASSERT_EQ(0, pthread_create(&th, NULL, uffd_fill, &f));
	for (i = 0; i < NPAGES; i++)
		ASSERT_EQ(4000, call(x + i * PAGE));	/* fetch: missing */
	pthread_join(th, NULL);
	close(f.uffd);
	EXPECT_EQ(NPAGES, f.served);
	fj_collect(&sb, set);
	for (i = 0; i < NPAGES; i++)
		EXPECT_EQ(1, count_snapshots(set, (uintptr_t)x + i * PAGE,
					     f.page))
			TH_LOG("page %d: not one snapshot of the bytes copied",
			       i);
	EXPECT_EQ(0, fj_lost(&sb));
	munmap(x, NPAGES * PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

#define CG	"/sys/fs/cgroup/"
#define CG_OOM	CG "fj-oom/"

/*
 * A tracked process that runs JIT code and then allocates past its memory
 * cgroup's limit is OOM-killed as an untracked one is, and another
 * tracked process goes on: its code still runs and is captured.
 */
TEST(memcg_oom_kills_a_tracked_process_cleanly)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	uint8_t *x;
	struct sb sb;
	int status, i;
	char pid[16];
	pid_t child;

	ASSERT_NE(NULL, set);
	if (access(CG "cgroup.subtree_control", W_OK) ||
	    write_str(CG "cgroup.subtree_control", "+memory"))
		SKIP(return, "no memory cgroup");
	rmdir(CG_OOM);
	ASSERT_EQ(0, mkdir(CG_OOM, 0755));
	ASSERT_EQ(0, write_str(CG_OOM "memory.max", "16M"));
	write_str(CG_OOM "memory.swap.max", "0");
	ASSERT_EQ(0, open_self(&sb));
	x = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	emit_ret_imm(x, 5000);
	ASSERT_EQ(5000, call(x));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct sb csb;
		uint8_t *c;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (write_str(CG_OOM "cgroup.procs", pid) || open_self(&csb))
			_exit(2);
		c = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		emit_ret_imm(c, 5001);
		if (call(c) != 5001)
			_exit(3);
		for (i = 0; i < 64; i++) {	/* 64 MiB: four times the limit */
			uint8_t *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED)
				_exit(4);
			memset(m, i, 1 << 20);
		}
		_exit(5);	/* not killed */
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child status %#x, not killed", status);
	for (i = 0; i < 3; i++) {
		emit_ret_imm(x, 5010 + i);
		EXPECT_EQ(5010 + i, call(x));
	}
	fj_collect(&sb, set);
	EXPECT_EQ(4, count_images(set));
	EXPECT_EQ(0, fj_lost(&sb));
	EXPECT_LE(1, keyed(CG_OOM "memory.events", "oom_kill"));
	munmap(x, PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
	EXPECT_EQ(0, rmdir(CG_OOM));
}

#define CG_FORK	CG "fj-fork/"
#define FORK_PAGES	8
#define FORK_KIDS	8

/*
 * fork() under memory pressure: a tracked process in a memory cgroup
 * with half the room its memory needs (the rest goes to swap on zram,
 * JIT pages too) forks children that run its code and rewrite it while
 * it and they swap. Everything behaves as untracked: every child finds
 * the parent's code and runs its own rewrite, the parent's code gives
 * its values after the children are gone, and every page the parent
 * ran was captured with its bytes, with no record lost.
 */
FIXTURE(pressure) {
	int unused;
};

FIXTURE_SETUP(pressure)
{
}

FIXTURE_TEARDOWN(pressure)
{
}

/* what the child's exit status in fork_under_memory_pressure says */
static const char *fork_step(int step)
{
	if (step < 10)
		return "set-up";
	if (step < 20)
		return "a grandchild ran other code than its parent's";
	if (step < 30)
		return "a grandchild failed (its number is step - 20)";
	if (step < 40)
		return "the code changed after the grandchildren";
	if (step == 40)
		return "records were lost";
	if (step < 60)
		return "a page was not captured (step - 50)";
	if (step < 70)
		return "a page was captured with other bytes (step - 60)";
	return "killed";
}

/* swapping 48 MiB through zram takes minutes under KASAN and TCG */
TEST_F_TIMEOUT(pressure, fork_under_memory_pressure, 600)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	int status, i, k, bad = 0;
	pid_t child;
	char pid[16];

	ASSERT_NE(NULL, set);
	if (access(CG "cgroup.subtree_control", W_OK) ||
	    write_str(CG "cgroup.subtree_control", "+memory"))
		SKIP(return, "no memory cgroup");
	if (!swap_on())
		SKIP(return, "no swap");
	rmdir(CG_FORK);
	ASSERT_EQ(0, mkdir(CG_FORK, 0755));
	ASSERT_EQ(0, write_str(CG_FORK "memory.max", "24M"));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		uint8_t *x, *m;
		struct sb sb;

		snprintf(pid, sizeof(pid), "%d", getpid());
		if (write_str(CG_FORK "cgroup.procs", pid) || open_self(&sb))
			_exit(2);
		x = mmap(NULL, FORK_PAGES * PAGE,
			 PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (x == MAP_FAILED)
			_exit(3);
		for (i = 0; i < FORK_PAGES; i++) {
			emit_ret_imm(x + i * PAGE, 6000 + i);
			if (call(x + i * PAGE) != 6000 + i)
				_exit(4);
		}
		/* 48 MiB touched: twice the limit */
		m = mmap(NULL, 48 << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(5);
		for (k = 0; k < FORK_KIDS; k++) {
			pid_t kid;

			memset(m + (k % 4) * (12 << 20), k, 12 << 20);
			kid = fork();
			if (kid < 0)
				_exit(6);
			if (!kid) {
				int j = k % FORK_PAGES;

				memset(m + ((k + 2) % 4) * (12 << 20), 1,
				       12 << 20);
				for (i = 0; i < FORK_PAGES; i++)
					if (call(x + i * PAGE) != 6000 + i)
						_exit(10 + i);
				emit_ret_imm(x + j * PAGE, 7000 + k);
				_exit(call(x + j * PAGE) == 7000 + k ? 0 : 9);
			}
			if (waitpid(kid, &status, 0) != kid ||
			    !WIFEXITED(status) || WEXITSTATUS(status))
				_exit(20 + k);
		}
		for (i = 0; i < FORK_PAGES; i++)
			if (call(x + i * PAGE) != 6000 + i)
				_exit(30 + i);
		fj_collect(&sb, set);
		if (fj_lost(&sb))
			_exit(40);
		for (i = 0; i < FORK_PAGES; i++) {
			struct fj_obj *o = find_page(set, (uintptr_t)x + i * PAGE,
						     0);
			uint32_t imm;

			if (!o || !fj_complete(o))
				_exit(50 + i);
			memcpy(&imm, o->bytes + 1, 4);
			if (imm != 6000u + i)
				_exit(60 + i);
		}
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		bad = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + status;
	EXPECT_EQ(0, bad)
		TH_LOG("step %d: %s", bad, fork_step(bad));
	EXPECT_LE(1, keyed(CG_FORK "memory.events", "max"));
	free(set);
	EXPECT_EQ(0, rmdir(CG_FORK));
}

FLOWJIT_HARNESS_MAIN
