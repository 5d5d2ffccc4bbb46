// SPDX-License-Identifier: GPL-2.0
/*
 * User JIT code in shared memory: executable mappings of a memfd are
 * tracked as anonymous ones, and a write through another mapping of the
 * same page (the "dual mapping" W^X JITs use: RW at one address, RX at
 * another) re-arms the executable one, so every revision that runs is
 * snapshotted. Code in a file with a name is not tracked.
 *
 * The code is "mov eax, imm32; ret" (b8 imm32 c3): a call's return value
 * says which revision ran.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>

#include "harness.h"
#include "user_jit.h"

#define NPAGES	4

FIXTURE(shared) {
	struct sb sb;
	struct fj_set *set;
	int fd;
	uint8_t *w;		/* RW alias */
	uint8_t *x;		/* RX alias */
};

FIXTURE_SETUP(shared)
{
	struct perf_event_attr attr;
	int err;

	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
	sb_attr_init(&attr);
	attr.flowjit = 1;
	attr.exclude_kernel = 1;
	err = sb_open_task(&self->sb, &attr, 0);
	ASSERT_EQ(0, err) TH_LOG("flowjit per-task event: %s", strerror(-err));
	self->fd = memfd_create("fj-code", MFD_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, NPAGES * PAGE));
	self->w = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->w);
	self->x = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_EXEC,
		       MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->x);
}

FIXTURE_TEARDOWN(shared)
{
	munmap(self->w, NPAGES * PAGE);
	munmap(self->x, NPAGES * PAGE);
	close(self->fd);
	sb_close(&self->sb);
	fj_reset(self->set);
	free(self->set);
}

/*
 * Write through the RW alias, run through the RX alias, @n times at
 * offsets 8 apart; each revision must have a snapshot at the RX address
 * with the bytes that ran.
 */
static void check_revisions(struct __test_metadata *_metadata,
			    struct _test_data_shared *self, int n,
			    uint8_t (*expect)[PAGE])
{
	uint32_t rev = 0;
	int i;

	fj_collect(&self->sb, self->set);
	for (i = 0; i < n; i++) {
		struct fj_obj *o = find_page(self->set, (uintptr_t)self->x,
					     rev);

		ASSERT_NE(NULL, o) TH_LOG("no snapshot of revision %d", i);
		EXPECT_TRUE(fj_complete(o));
		EXPECT_EQ(getpid(), o->rec.pid);
		EXPECT_EQ(0, memcmp(o->bytes, expect[i], PAGE))
			TH_LOG("snapshot %d has other bytes", i);
		rev = o->rec.revision;
	}
	EXPECT_EQ(0, fj_lost(&self->sb));
}

/* RW and RX aliases in one process: each rewrite is a new revision. */
TEST_F(shared, dual_mapping_rewrites_are_captured)
{
	static uint8_t expect[4][PAGE];
	int i;

	for (i = 0; i < 4; i++) {
		emit_ret_imm(self->w + 8 * i, 300 + i);
		memcpy(expect[i], self->w, PAGE);
		ASSERT_EQ(300 + i, call(self->x + 8 * i));
	}
	check_revisions(_metadata, self, 4, expect);
}

/*
 * The same code run twice without a write in between is one snapshot;
 * a write to the other page of the RW alias does not re-arm this one.
 */
TEST_F(shared, dual_mapping_rearms_only_the_page_written)
{
	emit_ret_imm(self->w, 1);
	emit_ret_imm(self->w + PAGE, 2);
	ASSERT_EQ(1, call(self->x));
	ASSERT_EQ(2, call(self->x + PAGE));
	emit_ret_imm(self->w + PAGE, 3);
	ASSERT_EQ(1, call(self->x));
	ASSERT_EQ(3, call(self->x + PAGE));
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(3, count_images(self->set));
	EXPECT_EQ(0, fj_lost(&self->sb));
}

/* A fresh RW view for every write (do_shared_fault() makes it writable). */
TEST_F(shared, fresh_rw_view_for_each_write)
{
	static uint8_t expect[3][PAGE];
	int i;

	for (i = 0; i < 3; i++) {
		uint8_t *v = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				  MAP_SHARED, self->fd, 0);

		ASSERT_NE(MAP_FAILED, v);
		emit_ret_imm(v + 8 * i, 400 + i);
		memcpy(expect[i], v, PAGE);
		munmap(v, PAGE);
		ASSERT_EQ(400 + i, call(self->x + 8 * i));
	}
	check_revisions(_metadata, self, 3, expect);
}

/* The writer is another, untracked process with its own RW mapping. */
TEST_F(shared, writer_in_another_process)
{
	static uint8_t expect[3][PAGE];
	int i, status;

	for (i = 0; i < 3; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			uint8_t *v = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					  MAP_SHARED, self->fd, 0);

			if (v == MAP_FAILED)
				_exit(1);
			/* first through the mapping inherited, then its own */
			emit_ret_imm(self->w + 8 * i, 0);
			emit_ret_imm(v + 8 * i, 500 + i);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, status);
		memcpy(expect[i], self->w, PAGE);
		ASSERT_EQ(500 + i, call(self->x + 8 * i));
	}
	check_revisions(_metadata, self, 3, expect);
}

/*
 * A page of the RW alias mapped again by a read: the write after it must
 * still fault and re-arm the RX alias (review 2026-11-24, finding 14a:
 * shmem has no write-notify, so a read fault, or fault-around, mapped the
 * page writable and the write went through without a fault). Three ways
 * to get such a mapping: MADV_DONTNEED of the RW alias, a new RW view,
 * and a forked writer (fork copies no PTEs of shared file mappings).
 */
enum { READ_AFTER_DONTNEED, READ_NEW_VIEW, READ_IN_CHILD };

static void read_then_write(struct __test_metadata *_metadata,
			    struct _test_data_shared *self, int how,
			    int off, uint32_t val)
{
	uint8_t *v = self->w;
	int status;
	pid_t pid;

	switch (how) {
	case READ_AFTER_DONTNEED:
		ASSERT_EQ(0, madvise(self->w, NPAGES * PAGE, MADV_DONTNEED));
		break;
	case READ_NEW_VIEW:
		v = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, 0);
		ASSERT_NE(MAP_FAILED, v);
		break;
	case READ_IN_CHILD:
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (__atomic_load_n(v + off, __ATOMIC_RELAXED) == 0xff)
				_exit(2);	/* read first */
			emit_ret_imm(v + off, val);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, status);
		return;
	}
	/* read first: a read fault maps the page */
	if (__atomic_load_n(v + off, __ATOMIC_RELAXED) == 0xff)
		return;
	emit_ret_imm(v + off, val);
	if (how == READ_NEW_VIEW)
		munmap(v, PAGE);
}

static void read_first_rewrites(struct __test_metadata *_metadata,
				struct _test_data_shared *self, int how)
{
	static uint8_t expect[3][PAGE];
	int i;

	for (i = 0; i < 3; i++) {
		if (i == 0)
			emit_ret_imm(self->w, 800);
		else
			read_then_write(_metadata, self, how, 8 * i, 800 + i);
		memcpy(expect[i], self->w, PAGE);
		ASSERT_EQ(800 + i, call(self->x + 8 * i));
	}
	check_revisions(_metadata, self, 3, expect);
}

TEST_F(shared, read_after_dontneed_then_write_is_captured)
{
	read_first_rewrites(_metadata, self, READ_AFTER_DONTNEED);
}

TEST_F(shared, read_through_new_view_then_write_is_captured)
{
	read_first_rewrites(_metadata, self, READ_NEW_VIEW);
}

TEST_F(shared, child_reading_then_writing_is_captured)
{
	read_first_rewrites(_metadata, self, READ_IN_CHILD);
}

/* One shared RWX mapping of a memfd, rewritten in place. */
TEST_F(shared, shared_rwx_mapping_rewritten_in_place)
{
	static uint8_t expect[3][PAGE];
	uint8_t *rwx = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_SHARED, self->fd, 0);
	uint32_t rev = 0;
	int i;

	ASSERT_NE(MAP_FAILED, rwx);
	for (i = 0; i < 3; i++) {
		emit_ret_imm(rwx + 8 * i, 600 + i);
		memcpy(expect[i], rwx, PAGE);
		ASSERT_EQ(600 + i, call(rwx + 8 * i));
	}
	fj_collect(&self->sb, self->set);
	for (i = 0; i < 3; i++) {
		struct fj_obj *o = find_page(self->set, (uintptr_t)rwx, rev);

		ASSERT_NE(NULL, o) TH_LOG("no snapshot of revision %d", i);
		EXPECT_EQ(0, memcmp(o->bytes, expect[i], PAGE));
		rev = o->rec.revision;
	}
	munmap(rwx, PAGE);
}

/* Code in a tmpfs file with a name is read from the file: not tracked. */
TEST_F(shared, named_file_is_not_tracked)
{
	uint8_t code[PAGE] = { 0 };
	uint8_t *x;
	int fd;

	emit_ret_imm(code, 700);
	fd = open("/tmp/fj-named-code", O_RDWR | O_CREAT | O_TRUNC, 0700);
	ASSERT_LE(0, fd);
	ASSERT_EQ(PAGE, write(fd, code, PAGE));
	x = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, x);
	ASSERT_EQ(700, call(x));
	/* the memfd's RX alias next to it is tracked */
	emit_ret_imm(self->w, 701);
	ASSERT_EQ(701, call(self->x));
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(NULL, find_page(self->set, (uintptr_t)x, 0));
	EXPECT_NE(NULL, find_page(self->set, (uintptr_t)self->x, 0));
	munmap(x, PAGE);
	close(fd);
	unlink("/tmp/fj-named-code");
}

/*
 * SysV shared memory is a shmem file without a name too, attached twice
 * as JITs use a memfd: RW at one address, RX (SHM_EXEC) at another. Its
 * VMAs have the IPC layer's operations and file, not shmem's (review
 * 2026-11-24, finding 14b: no write re-armed the executable alias).
 */
TEST(sysv_shm_dual_mapping_rewrites_are_captured)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	uint8_t expect[PAGE] = { 0 };
	uint32_t rev = 0;
	struct fj_obj *o;
	uint8_t *w, *x;
	struct sb sb;
	int id, i;

	ASSERT_NE(NULL, set);
	ASSERT_EQ(0, open_self(&sb));
	id = shmget(IPC_PRIVATE, PAGE, IPC_CREAT | 0700);
	ASSERT_LE(0, id) TH_LOG("shmget: %s", strerror(errno));
	w = shmat(id, NULL, 0);
	x = shmat(id, NULL, SHM_RDONLY | SHM_EXEC);
	shmctl(id, IPC_RMID, NULL);	/* gone with the last detach */
	ASSERT_NE((void *)-1, w);
	ASSERT_NE((void *)-1, x);
	for (i = 0; i < 3; i++) {
		emit_ret_imm(w + 8 * i, 900 + i);
		ASSERT_EQ(900 + i, call(x + 8 * i));
	}
	fj_collect(&sb, set);
	for (i = 0; i < 3; i++) {
		emit_ret_imm(expect + 8 * i, 900 + i);
		o = find_page(set, (uintptr_t)x, rev);
		ASSERT_NE(NULL, o) TH_LOG("no snapshot of revision %d", i);
		EXPECT_TRUE(fj_complete(o));
		EXPECT_EQ(0, memcmp(o->bytes, expect, PAGE))
			TH_LOG("snapshot %d has other bytes", i);
		rev = o->rec.revision;
	}
	shmdt(w);
	shmdt(x);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/*
 * A tmpfs file without a name (O_TMPFILE) is tracked as a memfd is; its
 * mapping stays so after linkat() gives it a name (review 2026-11-24,
 * finding 9: the fetch from a page mapped after the link got SIGSEGV,
 * as the fault exemption looked at the link count again, while the
 * mapping kept flowjit's non-executable protection).
 */
static int linked_ret;

static void call_linked(void *x)
{
	linked_ret = call(x);
}

/* an O_TMPFILE on /tmp with "ret @first" and "ret @first + 1" pages */
static int tmpfile_code(int first)
{
	uint8_t code[PAGE] = { 0 };
	int fd = open("/tmp", O_TMPFILE | O_RDWR, 0700), i;

	for (i = 0; fd >= 0 && i < 2; i++) {
		emit_ret_imm(code, first + i);
		if (pwrite(fd, code, PAGE, i * PAGE) != PAGE)
			return -1;
	}
	return fd;
}

static int link_fd(int fd, const char *path)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	unlink(path);
	return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

FIXTURE(linked) {
	struct sb sb;
	struct fj_set *set;
	char path[32];
	uint8_t *x;
	int fd;
};

FIXTURE_VARIANT(linked) {
	bool end_tracking;	/* close the event before the link */
};

FIXTURE_VARIANT_ADD(linked, while_tracked) {
	.end_tracking = false,
};

FIXTURE_VARIANT_ADD(linked, after_tracking_ended) {
	.end_tracking = true,
};

FIXTURE_SETUP(linked)
{
	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
	snprintf(self->path, sizeof(self->path), "/tmp/fj-linked-%d",
		 getpid());
	ASSERT_EQ(0, open_self(&self->sb));
	self->fd = tmpfile_code(800);
	ASSERT_LE(0, self->fd);
	self->x = mmap(NULL, 2 * PAGE, PROT_READ | PROT_EXEC, MAP_SHARED,
		       self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->x);
}

FIXTURE_TEARDOWN(linked)
{
	munmap(self->x, 2 * PAGE);
	close(self->fd);
	unlink(self->path);
	if (!variant->end_tracking)
		sb_close(&self->sb);
	fj_reset(self->set);
	free(self->set);
}

TEST_F(linked, code_mapped_before_the_link_runs)
{
	ASSERT_EQ(800, call(self->x));
	if (variant->end_tracking)
		sb_close(&self->sb);
	ASSERT_EQ(0, link_fd(self->fd, self->path));
	/* the second page is first mapped now, after the link */
	ASSERT_EQ(0, faults(call_linked, self->x + PAGE))
		TH_LOG("running the code of a linked O_TMPFILE faulted");
	EXPECT_EQ(801, linked_ret);
	if (variant->end_tracking)
		return;
	/* tracked where it was armed: both pages have a snapshot */
	fj_collect(&self->sb, self->set);
	EXPECT_NE(NULL, find_page(self->set, (uintptr_t)self->x, 0));
	EXPECT_NE(NULL, find_page(self->set, (uintptr_t)self->x + PAGE, 0))
		TH_LOG("the page run after the link has no snapshot");
}

/*
 * Tracked processes that map the memfd executable exit while this one
 * rewrites and runs its code: every write fault walks the executable
 * mappings of the page, those of the exiting processes too, whose
 * flowjit state is freed as their address space goes (review 2026-11-24,
 * finding 3: it was read after kfree()). Without KASAN a read after free
 * goes unseen: what this shows on the test kernel is that the walk
 * survives the exits, and that every revision that ran is the one
 * written; a KASAN kernel reports the read itself.
 */
#define EXITERS_SECONDS	3

/* in a child: fork tracked processes that run the code and exit */
static void spawn_exiters(const uint8_t *x, int *spawned)
{
	time_t end = time(NULL) + EXITERS_SECONDS;

	while (time(NULL) < end) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			_exit(1);
		if (pid == 0) {
			struct perf_event_attr attr;

			/* its own flowjit state, armed, freed at exit */
			sb_attr_init(&attr);
			attr.flowjit = 1;
			attr.exclude_kernel = 1;
			if (sb_perf_event_open(&attr, 0, -1) < 0)
				_exit(2);
			call(x);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || status)
			_exit(3);
		__atomic_add_fetch(spawned, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

static void ignore_record(const struct perf_event_header *hdr,
			  const struct flowjit_sample_id *id, void *arg)
{
}

TEST_F(shared, alias_rearm_races_exiting_processes)
{
	int *spawned = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	time_t end = time(NULL) + EXITERS_SECONDS;
	pid_t spawner[2];
	int i, n = 0, status;

	ASSERT_NE(MAP_FAILED, spawned);
	*spawned = 0;
	emit_ret_imm(self->w, 0);
	for (i = 0; i < 2; i++) {
		spawner[i] = fork();
		ASSERT_LE(0, spawner[i]);
		if (spawner[i] == 0)
			spawn_exiters(self->x, spawned);
	}
	while (time(NULL) < end) {
		n++;
		emit_ret_imm(self->w, n);
		ASSERT_EQ(n, call(self->x));
		/* drain: a full buffer would only drop records */
		sb_drain(&self->sb, ignore_record, NULL);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(spawner[i], waitpid(spawner[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	TH_LOG("%d rewrites while %d tracked processes exited", n, *spawned);
	EXPECT_LT(0, *spawned);
	munmap(spawned, sizeof(int));
}

FLOWJIT_HARNESS_MAIN
