// SPDX-License-Identifier: GPL-2.0
/*
 * User-space JIT code captured without the JIT's help: in a tracked
 * address space, every revision of an executable anonymous page that
 * runs is snapshotted after its last write and before its first
 * instruction, and faults that are not flowjit's behave as without it.
 *
 * The "JIT" here writes functions "mov eax, imm32; ret" (b8 imm32 c3),
 * so a call's return value says which revision ran.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "harness.h"
#include "user_jit.h"

static struct fj_obj *find_retire(struct fj_set *set, uint64_t addr)
{
	int i;

	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (o->rec.kind == FLOWJIT_KIND_USER_JIT &&
		    o->rec.op == FLOWJIT_OP_RETIRE && o->rec.addr <= addr &&
		    addr < o->rec.addr + o->rec.len)
			return o;
	}
	return NULL;
}

/* wait for @pid to exit, then collect what it left in @sb into @set;
 * returns its exit status, or -1 if it did not exit normally
 */
static int wait_collect(pid_t pid, struct sb *sb, struct fj_set *set)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	fj_collect(sb, set);
	return WEXITSTATUS(status);
}

/*
 * How the code memory is made executable: the ways JITs do it.
 */
enum code_mode {
	CODE_MPROTECT,		/* mmap RW, write, mprotect RX */
	CODE_RWX,		/* mmap RWX, write and rewrite in place */
};

FIXTURE(user_jit) {
	struct sb sb;
	struct fj_set *set;
	uint8_t *code;		/* 4 pages */
};

FIXTURE_VARIANT(user_jit) {
	enum code_mode mode;
};

FIXTURE_VARIANT_ADD(user_jit, mprotect) {
	.mode = CODE_MPROTECT,
};

FIXTURE_VARIANT_ADD(user_jit, rwx) {
	.mode = CODE_RWX,
};

/* make the code writable (mprotect mode) before writing */
static void code_write_begin(struct _test_data_user_jit *self,
			     const struct _fixture_variant_user_jit *variant)
{
	if (variant->mode == CODE_MPROTECT)
		mprotect(self->code, 4 * PAGE, PROT_READ | PROT_WRITE);
}

static void code_write_end(struct _test_data_user_jit *self,
			   const struct _fixture_variant_user_jit *variant)
{
	if (variant->mode == CODE_MPROTECT)
		mprotect(self->code, 4 * PAGE, PROT_READ | PROT_EXEC);
}

FIXTURE_SETUP(user_jit)
{
	struct perf_event_attr attr;
	int prot = PROT_READ | PROT_WRITE;
	int err;

	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
	user_attr(&attr);
	err = sb_open_task(&self->sb, &attr, 0);
	ASSERT_EQ(0, err) TH_LOG("flowjit per-task event: %s", strerror(-err));
	if (variant->mode == CODE_RWX)
		prot |= PROT_EXEC;
	self->code = mmap(NULL, 4 * PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	ASSERT_NE(MAP_FAILED, self->code);
}

FIXTURE_TEARDOWN(user_jit)
{
	munmap(self->code, 4 * PAGE);
	sb_close(&self->sb);
	fj_reset(self->set);
	free(self->set);
}

/* The bytes that ran are the bytes in the snapshot, taken before. */
TEST_F(user_jit, first_execution_is_snapshotted)
{
	uint8_t expect[PAGE];
	struct fj_obj *o;

	code_write_begin(self, variant);
	emit_ret_imm(self->code + 64, 1234);
	memcpy(expect, self->code, PAGE);
	code_write_end(self, variant);
	ASSERT_EQ(1234, call(self->code + 64));

	fj_collect(&self->sb, self->set);
	o = find_page(self->set, (uintptr_t)self->code, 0);
	ASSERT_NE(NULL, o);
	EXPECT_TRUE(fj_complete(o));
	EXPECT_EQ(PAGE, o->rec.len);
	EXPECT_NE(FLOWJIT_ASID_KERNEL, o->rec.asid);
	EXPECT_EQ(getpid(), o->rec.pid);
	EXPECT_EQ(0, memcmp(o->bytes, expect, PAGE));
}

/* Rewriting code in place after it ran gives a new revision. */
TEST_F(user_jit, rewrite_after_execution_is_a_new_revision)
{
	uint8_t expect[3][PAGE];
	uint32_t rev = 0;
	struct fj_obj *o;
	int i;

	for (i = 0; i < 3; i++) {
		code_write_begin(self, variant);
		emit_ret_imm(self->code + 8 * i, 100 + i);
		memcpy(expect[i], self->code, PAGE);
		code_write_end(self, variant);
		ASSERT_EQ(100 + i, call(self->code + 8 * i));
	}
	fj_collect(&self->sb, self->set);
	for (i = 0; i < 3; i++) {
		o = find_page(self->set, (uintptr_t)self->code, rev);
		ASSERT_NE(NULL, o) TH_LOG("no snapshot of revision %d", i);
		EXPECT_TRUE(fj_complete(o));
		EXPECT_EQ(0, memcmp(o->bytes, expect[i], PAGE))
			TH_LOG("snapshot %d has other bytes", i);
		/* the IP of the fetch that faulted: the call's target */
		EXPECT_EQ((uintptr_t)self->code + 8 * i, o->rec.id);
		rev = o->rec.revision;
	}
}

/* A function that crosses a page boundary: both pages are captured. */
TEST_F(user_jit, code_spanning_two_pages)
{
	uint8_t *fn = self->code + PAGE - 3;
	struct fj_obj *a, *b;

	code_write_begin(self, variant);
	emit_ret_imm(fn, 77);
	code_write_end(self, variant);
	ASSERT_EQ(77, call(fn));
	fj_collect(&self->sb, self->set);
	a = find_page(self->set, (uintptr_t)self->code, 0);
	b = find_page(self->set, (uintptr_t)self->code + PAGE, 0);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(0, memcmp(a->bytes + PAGE - 3, fn, 3));
	EXPECT_EQ(0, memcmp(b->bytes, fn + 3, 3));
	/* both fetches faulted on the instruction at fn */
	EXPECT_EQ((uintptr_t)fn, a->rec.id);
	EXPECT_EQ((uintptr_t)fn, b->rec.id);
}

/* munmap() and MADV_DONTNEED of code retire its images. */
TEST_F(user_jit, munmap_and_dontneed_retire_code)
{
	code_write_begin(self, variant);
	emit_ret_imm(self->code, 5);
	emit_ret_imm(self->code + 2 * PAGE, 6);
	code_write_end(self, variant);
	ASSERT_EQ(5, call(self->code));
	ASSERT_EQ(6, call(self->code + 2 * PAGE));
	ASSERT_EQ(0, madvise(self->code, PAGE, MADV_DONTNEED));
	ASSERT_EQ(0, munmap(self->code + 2 * PAGE, PAGE));
	fj_collect(&self->sb, self->set);
	EXPECT_NE(NULL, find_retire(self->set, (uintptr_t)self->code));
	EXPECT_NE(NULL, find_retire(self->set, (uintptr_t)self->code + 2 * PAGE));
	EXPECT_EQ(NULL, find_retire(self->set, (uintptr_t)self->code + PAGE));
}

/* Code moved by mremap() is captured again at its new address. */
TEST_F(user_jit, mremap_rearms_at_the_new_address)
{
	uint8_t *moved, *dest, *old;

	code_write_begin(self, variant);
	emit_ret_imm(self->code, 9);
	code_write_end(self, variant);
	ASSERT_EQ(9, call(self->code));
	dest = mmap(NULL, 4 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, dest);
	moved = mremap(self->code, 4 * PAGE, 4 * PAGE,
		       MREMAP_MAYMOVE | MREMAP_FIXED, dest);
	ASSERT_EQ(dest, moved);
	old = self->code;
	self->code = moved;
	ASSERT_EQ(9, call(moved));
	fj_collect(&self->sb, self->set);
	EXPECT_NE(NULL, find_retire(self->set, (uintptr_t)old));
	EXPECT_NE(NULL, find_page(self->set, (uintptr_t)moved, 0));
}

struct racer {
	uint8_t *fn;
	int stop;
	int seen[64];		/* return values observed */
};

static void *run_loop(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		int v = call(r->fn);

		if (v >= 0 && v < 64)
			__atomic_store_n(&r->seen[v], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Three threads run the code while this one rewrites it in place (an RWX
 * cache: a W^X JIT cannot let code run while it writes it): every
 * revision a thread ran has a snapshot with its bytes. The rewrite is one
 * 4-byte store of the immediate, atomic for the other threads. The
 * threads inherit the event, as with perf record -- cmd: their faults
 * report to the parent's buffer.
 */
TEST(threads_run_while_one_rewrites)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct perf_event_attr attr;
	struct racer r;
	uint8_t *code;
	pthread_t t[3];
	struct sb sb;
	uint32_t v;
	int i, n = 0;

	ASSERT_NE(NULL, set);
	memset(&r, 0, sizeof(r));
	user_attr(&attr);
	attr.inherit = 1;	/* mmap needs per-CPU events then, as perf opens */
	ASSERT_EQ(0, sb_open_pid(&sb, &attr, 0));
	code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, code);
	r.fn = code + 16;
	emit_ret_imm(r.fn, 0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, run_loop, &r));
	for (v = 1; v < 64; v++) {
		usleep(2000);
		__atomic_store_n((uint32_t *)(r.fn + 1), v, __ATOMIC_RELEASE);
		/*
		 * Drain as a consumer would: a full buffer drops records, and
		 * PERF_RECORD_LOST only says so once a record fits again.
		 */
		fj_collect(&sb, set);
	}
	usleep(2000);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);

	fj_collect(&sb, set);
	for (v = 0; v < 64; v++) {
		bool found = false;
		int k;

		if (!r.seen[v])
			continue;
		n++;
		for (k = 0; k < set->nr; k++) {
			struct fj_obj *o = &set->obj[k];
			uint32_t imm;

			if (o->rec.kind != FLOWJIT_KIND_USER_JIT ||
			    o->rec.op != FLOWJIT_OP_IMAGE || !o->bytes ||
			    o->rec.addr != (uintptr_t)code)
				continue;
			memcpy(&imm, o->bytes + 17, 4);
			found |= o->bytes[16] == 0xb8 && imm == v;
		}
		EXPECT_TRUE(found) TH_LOG("revision %u ran but has no snapshot", v);
	}
	TH_LOG("%d revisions ran, %d snapshots, %llu lost", n,
	       count_images(set), (unsigned long long)fj_lost(&sb));
	EXPECT_LT(1, n);
	munmap(code, PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

static void write_byte(void *p)
{
	__atomic_store_n((uint8_t *)p, 0xc3, __ATOMIC_RELAXED);
}

static void call_it(void *p)
{
	call(p);
}

/* Faults that are not flowjit's still get SIGSEGV. */
TEST_F(user_jit, real_protection_faults_still_segv)
{
	uint8_t *ro, *rw, *none;

	code_write_begin(self, variant);
	emit_ret_imm(self->code, 1);
	code_write_end(self, variant);
	ASSERT_EQ(1, call(self->code));

	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rw = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_NE(MAP_FAILED, rw);
	ASSERT_NE(MAP_FAILED, none);
	emit_ret_imm(rw, 2);

	EXPECT_EQ(SIGSEGV, faults(write_byte, ro));	/* write to read-only */
	EXPECT_EQ(SIGSEGV, faults(call_it, rw));	/* exec of non-exec */
	EXPECT_EQ(SIGSEGV, faults(call_it, none));	/* PROT_NONE guard */
	EXPECT_EQ(SIGSEGV, faults(write_byte, none));
	if (variant->mode == CODE_MPROTECT)		/* RX code: no writes */
		EXPECT_EQ(SIGSEGV, faults(write_byte, self->code));
	munmap(ro, PAGE);
	munmap(rw, PAGE);
	munmap(none, PAGE);
}

/* A child forked without event inheritance runs the code untracked. */
TEST_F(user_jit, fork_child_without_inherit_runs_code)
{
	int status, before;
	pid_t pid;

	code_write_begin(self, variant);
	emit_ret_imm(self->code, 3);
	code_write_end(self, variant);
	fj_collect(&self->sb, self->set);
	before = count_images(self->set);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int ok = call(self->code) == 3;

		if (variant->mode == CODE_RWX) {	/* COW, then run again */
			emit_ret_imm(self->code, 4);
			ok &= call(self->code) == 4;
		}
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child died of signal %d",
					      WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(before, count_images(self->set))
		TH_LOG("the untracked child produced snapshots");
	/* and the parent is still tracked */
	ASSERT_EQ(3, call(self->code));
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(before + 1, count_images(self->set));
}

/*
 * A child forked with event inheritance (perf record -- CMD) is tracked:
 * the code it writes after fork (COW copies) is captured under its pid.
 */
TEST(fork_child_with_inherit_is_tracked)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct perf_event_attr attr;
	int i;
	bool found = false;
	uint8_t *code;
	struct sb sb;
	pid_t pid;

	ASSERT_NE(NULL, set);
	user_attr(&attr);
	attr.inherit = 1;
	ASSERT_EQ(0, sb_open_pid(&sb, &attr, 0));
	code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, code);
	emit_ret_imm(code, 31);
	ASSERT_EQ(31, call(code));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		emit_ret_imm(code, 32);		/* COW: the child's own page */
		_exit(call(code) == 32 ? 0 : 1);
	}
	ASSERT_EQ(0, wait_collect(pid, &sb, set));
	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (fj_user_image(o, pid) && o->rec.addr == (uintptr_t)code &&
		    fj_complete(o) && o->bytes[0] == 0xb8 && o->bytes[1] == 32)
			found = true;
	}
	EXPECT_TRUE(found) TH_LOG("no snapshot of the child's code");
	munmap(code, PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/*
 * A forked child gets an address space of its own (a new asid), with the
 * parent's code already in it. Code it runs without writing it first
 * must be captured again, under the child's asid: a decoder of the
 * child's trace has no other image of it (review finding 15).
 */
TEST(fork_child_running_parents_code_is_captured)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct fj_obj *parent = NULL, *child = NULL;
	struct perf_event_attr attr;
	uint8_t *code;
	struct sb sb;
	pid_t pid;
	int i;

	ASSERT_NE(NULL, set);
	user_attr(&attr);
	attr.inherit = 1;
	ASSERT_EQ(0, sb_open_pid(&sb, &attr, 0));
	code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, code);
	emit_ret_imm(code, 33);
	ASSERT_EQ(0, mprotect(code, PAGE, PROT_READ | PROT_EXEC));
	ASSERT_EQ(33, call(code));	/* executable in the parent now */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(call(code) == 33 ? 0 : 1);
	ASSERT_EQ(0, wait_collect(pid, &sb, set));
	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (o->rec.addr != (uintptr_t)code || !fj_complete(o) ||
		    o->bytes[0] != 0xb8 || o->bytes[1] != 33)
			continue;
		if (fj_user_image(o, getpid()))
			parent = o;
		else if (fj_user_image(o, pid))
			child = o;
	}
	ASSERT_NE(NULL, parent) TH_LOG("no snapshot of the parent's code");
	ASSERT_NE(NULL, child) TH_LOG("the child ran code it has no image of");
	EXPECT_NE(parent->rec.asid, child->rec.asid);
	munmap(code, PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/*
 * A child forked with inherited events that execs a JIT: its new
 * address space is tracked too (perf record -- sh -c 'a; jit').
 */
TEST(fork_exec_child_with_inherit_is_tracked)
{
	static const char jit[] = "/samples/ebpf-jit";
	struct fj_set *set = calloc(1, sizeof(*set));
	struct perf_event_attr attr;
	int i, images = 0;
	struct sb sb;
	pid_t pid;

	ASSERT_NE(NULL, set);
	if (access(jit, X_OK))
		SKIP(free(set); return, "no %s", jit);
	user_attr(&attr);
	attr.inherit = 1;
	attr.comm = 1;
	ASSERT_EQ(0, sb_open_pid(&sb, &attr, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execl(jit, jit, "--summary", "0", "loop42", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(0, wait_collect(pid, &sb, set));
	for (i = 0; i < set->nr; i++)
		images += fj_user_image(&set->obj[i], pid) &&
			  fj_complete(&set->obj[i]);
	EXPECT_LT(0, images) TH_LOG("no snapshot of the exec'd child's JIT code");
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/* After the event is closed the code still runs (pages back to normal). */
/* the revisions of the page at @x, in order: their first byte after b8 */
static int revisions_of(struct fj_set *set, uint8_t *x, uint8_t *imm,
			int max)
{
	uint32_t rev = 0;
	struct fj_obj *o;
	int n = 0;

	while (n < max && (o = find_page(set, (uintptr_t)x, rev))) {
		imm[n++] = fj_complete(o) ? o->bytes[1] : 0;
		rev = o->rec.revision;
	}
	return n;
}

/*
 * Writes of another kind than a store through the page tables reach the
 * page through GUP: /proc/PID/mem (FOLL_FORCE, which writes even a
 * read-only mapping) and process_vm_writev() (a writable mapping). The
 * code they write must be snapshotted when it runs (review finding 17:
 * a FOLL_FORCE write to an exclusive anonymous page took no fault, and
 * nothing re-armed the page).
 */
static ssize_t write_proc_mem(uint8_t *x, const uint8_t *code, size_t len)
{
	int fd = open("/proc/self/mem", O_RDWR);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pwrite(fd, code, len, (uintptr_t)x);
	close(fd);
	return n;
}

static ssize_t write_vm(uint8_t *x, const uint8_t *code, size_t len)
{
	struct iovec local = { .iov_base = (void *)code, .iov_len = len };
	struct iovec remote = { .iov_base = x, .iov_len = len };

	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
}

/*
 * ptrace(PTRACE_POKETEXT) from a tracer (a debugger setting a breakpoint
 * in JIT code): a child attaches to this process, writes the code a word
 * at a time (FOLL_FORCE, as /proc/PID/mem) and detaches.
 */
static ssize_t write_poketext(uint8_t *x, const uint8_t *code, size_t len)
{
	pid_t parent = getpid(), pid;
	int status;

	/* Yama (a distribution kernel) lets only a named tracer attach */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		size_t at;

		if (ptrace(PTRACE_ATTACH, parent, 0, 0) ||
		    waitpid(parent, &status, __WALL) != parent)
			_exit(1);
		for (at = 0; at < len; at += sizeof(long)) {
			long word;
			size_t n = len - at < sizeof(long) ? len - at :
				   sizeof(long);

			errno = 0;
			word = ptrace(PTRACE_PEEKTEXT, parent, x + at, 0);
			if (errno)
				_exit(2);
			memcpy(&word, code + at, n);
			if (ptrace(PTRACE_POKETEXT, parent, x + at, word))
				_exit(3);
		}
		_exit(ptrace(PTRACE_DETACH, parent, 0, 0) ? 4 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	prctl(PR_SET_PTRACER, 0, 0, 0, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = EIO;
		return -1;
	}
	return len;
}

FIXTURE(gup_write) {
	struct sb sb;
	struct fj_set *set;
	uint8_t *x;
};

FIXTURE_VARIANT(gup_write) {
	int prot;
	ssize_t (*write)(uint8_t *x, const uint8_t *code, size_t len);
};

FIXTURE_VARIANT_ADD(gup_write, proc_mem) {
	.prot = PROT_READ | PROT_EXEC,
	.write = write_proc_mem,
};

FIXTURE_VARIANT_ADD(gup_write, process_vm_writev) {
	.prot = PROT_READ | PROT_WRITE | PROT_EXEC,
	.write = write_vm,
};

FIXTURE_VARIANT_ADD(gup_write, ptrace_poketext) {
	.prot = PROT_READ | PROT_EXEC,
	.write = write_poketext,
};

FIXTURE_SETUP(gup_write)
{
	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
	ASSERT_EQ(0, open_self(&self->sb));
	self->x = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->x);
}

FIXTURE_TEARDOWN(gup_write)
{
	munmap(self->x, PAGE);
	sb_close(&self->sb);
	fj_reset(self->set);
	free(self->set);
}

TEST_F(gup_write, rewrite_is_snapshotted)
{
	uint8_t code[6], imm[4];

	emit_ret_imm(self->x, 41);
	ASSERT_EQ(0, mprotect(self->x, PAGE, variant->prot));
	ASSERT_EQ(41, call(self->x));
	emit_ret_imm(code, 42);
	ASSERT_EQ(sizeof(code), variant->write(self->x, code, sizeof(code)))
		TH_LOG("write: %s", strerror(errno));
	ASSERT_EQ(42, call(self->x));
	fj_collect(&self->sb, self->set);
	ASSERT_EQ(2, revisions_of(self->set, self->x, imm, 4))
		TH_LOG("the rewritten code ran without a snapshot");
	EXPECT_EQ(41, imm[0]);
	EXPECT_EQ(42, imm[1]);
}

/* An io_uring instance, its rings mapped (no liburing: static tests). */
struct uring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

/* Returns 0 or -errno. The mappings live until the process exits. */
static int uring_init(struct uring *u)
{
	struct io_uring_params p;
	uint8_t *sq, *cq;

	memset(&p, 0, sizeof(p));
	u->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (u->fd < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes +
		  p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       u->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || u->sqes == MAP_FAILED)
		return -errno;
	u->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned int *)(sq + p.sq_off.array);
	u->cq_head = (unsigned int *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	u->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* READ_FIXED of @len bytes of @fd into registered buffer 0 at @buf. */
static int uring_read_fixed(struct uring *u, int fd, void *buf,
			    unsigned int len)
{
	unsigned int tail = *u->sq_tail, idx = tail & *u->sq_mask, head;
	struct io_uring_sqe *sqe = &u->sqes[idx];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ_FIXED;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->buf_index = 0;
	u->sq_array[idx] = idx;
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0)
		return -errno;
	head = *u->cq_head;
	if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	res = u->cqes[head & *u->cq_mask].res;
	__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/*
 * A page registered as an io_uring fixed buffer is pinned (FOLL_WRITE |
 * FOLL_LONGTERM), and a READ_FIXED writes it through the kernel's own
 * mapping: no page table, no fault, no record. flowjit cannot see that
 * write; what it must do is say so. The snapshot the exec fault takes of
 * the pinned page carries FLOWJIT_F_PINNED (readers count the code run
 * from it as suspect). Once the buffer is unregistered (unpinned), a CPU
 * write re-arms the page and its next snapshot is certain again.
 */
TEST(io_uring_fixed_buffer_snapshot_is_flagged_pinned)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	uint8_t code[6], imm[4];
	struct uring u = { 0 };
	struct iovec iov;
	struct fj_obj *o;
	struct sb sb;
	uint8_t *x;
	int err, mfd, n;

	ASSERT_NE(NULL, set);
	/* the guest kernels have io_uring (configs/guest.config, Debian's) */
	err = uring_init(&u);
	if (err)
		SKIP(free(set); return, "no io_uring: %s", strerror(-err));
	ASSERT_EQ(0, open_self(&sb));
	x = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	emit_ret_imm(x, 41);
	iov.iov_base = x;
	iov.iov_len = PAGE;
	ASSERT_EQ(0, syscall(__NR_io_uring_register, u.fd,
			     IORING_REGISTER_BUFFERS, &iov, 1))
		TH_LOG("IORING_REGISTER_BUFFERS: %s", strerror(errno));
	ASSERT_EQ(41, call(x));
	/* new code through the pin, from a memfd */
	mfd = memfd_create("code", 0);
	ASSERT_LE(0, mfd);
	emit_ret_imm(code, 42);
	ASSERT_EQ(sizeof(code), write(mfd, code, sizeof(code)));
	ASSERT_EQ(sizeof(code), uring_read_fixed(&u, mfd, x, sizeof(code)));
	ASSERT_EQ(42, call(x));
	fj_collect(&sb, set);
	o = find_page(set, (uintptr_t)x, 0);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(41, o->bytes[1]);
	EXPECT_TRUE(o->rec.flags & FLOWJIT_F_PINNED)
		TH_LOG("the pinned page's snapshot is not flagged: the kernel's write is silent");
	/* unpinned, a CPU write re-arms the page as any other */
	ASSERT_EQ(0, syscall(__NR_io_uring_register, u.fd,
			     IORING_UNREGISTER_BUFFERS, NULL, 0));
	emit_ret_imm(x, 43);
	ASSERT_EQ(43, call(x));
	fj_collect(&sb, set);
	n = revisions_of(set, x, imm, 4);
	ASSERT_EQ(2, n) TH_LOG("%d revisions", n);
	EXPECT_EQ(43, imm[1]);
	o = find_page(set, (uintptr_t)x, o->rec.revision);
	ASSERT_NE(NULL, o);
	EXPECT_FALSE(o->rec.flags & FLOWJIT_F_PINNED);
	close(mfd);
	close(u.fd);
	munmap(x, PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/* write-protect (@wp) or unprotect [@x, @x + PAGE) through @uffd */
static int uffd_wp(int uffd, uint8_t *x, bool wp)
{
	struct uffdio_writeprotect arg = {
		.range = { .start = (uintptr_t)x, .len = PAGE },
		.mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &arg);
}

/*
 * userfaultfd write protection (live migration, snapshotting garbage
 * collectors) computes the protection of the pages it changes from the
 * VMA's flags: a tracked page must stay non-executable through it, or
 * code written before UFFDIO_WRITEPROTECT runs without a snapshot
 * (review finding 13).
 */
TEST(uffd_write_protect_keeps_code_armed)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	uint8_t imm[4];
	struct sb sb;
	uint8_t *x;
	int uffd;

	ASSERT_NE(NULL, set);
	ASSERT_EQ(0, open_self(&sb));
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	x = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	reg.range.start = (uintptr_t)x;
	reg.range.len = PAGE;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg))
		TH_LOG("UFFDIO_REGISTER_MODE_WP: %s", strerror(errno));
	emit_ret_imm(x, 51);
	ASSERT_EQ(51, call(x));
	emit_ret_imm(x, 52);		/* re-armed by the write fault */
	ASSERT_EQ(0, uffd_wp(uffd, x, true));
	ASSERT_EQ(52, call(x));
	ASSERT_EQ(0, uffd_wp(uffd, x, false));
	emit_ret_imm(x, 53);
	ASSERT_EQ(0, uffd_wp(uffd, x, true));
	ASSERT_EQ(0, uffd_wp(uffd, x, false));
	ASSERT_EQ(53, call(x));
	fj_collect(&sb, set);
	EXPECT_EQ(3, revisions_of(set, x, imm, 4));
	EXPECT_EQ(51, imm[0]);
	EXPECT_EQ(52, imm[1]) TH_LOG("code run after UFFDIO_WRITEPROTECT has no snapshot");
	EXPECT_EQ(53, imm[2]) TH_LOG("code run after unprotecting has no snapshot");
	close(uffd);
	munmap(x, PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/*
 * With READ_IMPLIES_EXEC (old binaries without PT_GNU_STACK) the heap
 * that brk() adds is executable, and JIT code may live there: a new brk
 * VMA of a tracked address space is armed as an mmap() one is (review
 * finding 17: do_brk_flags() set its protection without flowjit).
 */
TEST(brk_heap_code_is_snapshotted)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	int status;
	pid_t pid;

	ASSERT_NE(NULL, set);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct fj_obj *o;
		uintptr_t top;
		uint8_t *x;
		struct sb sb;

		if (personality(READ_IMPLIES_EXEC) < 0 || open_self(&sb))
			_exit(10);
		top = (uintptr_t)sbrk(0);
		x = (uint8_t *)((top + 2 * PAGE - 1) & ~(PAGE - 1));
		if (brk(x + PAGE))
			_exit(11);
		emit_ret_imm(x, 45);
		if (call(x) != 45)
			_exit(12);
		fj_collect(&sb, set);
		o = find_page(set, (uintptr_t)x, 0);
		_exit(!o ? 13 : !fj_complete(o) || o->bytes[1] != 45 ? 14 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("exit %d: 13 no snapshot of the brk page, 14 wrong bytes",
		       WEXITSTATUS(status));
	free(set);
}

static int set_flowjit_sysctl(const char *v)
{
	int fd = open("/proc/sys/kernel/flowjit", O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, v, 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/*
 * kernel.flowjit=0 turns flowjit off for the events already open too:
 * no records, and no more W^X faults or snapshots (review finding 11:
 * it stopped the records only). 50 rewrites of an RWX page take at
 * least 100 faults while it is tracked, none once it is executable and
 * writable again.
 */
TEST(sysctl_off_stops_tracking)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	long faults;
	struct sb sb;
	uint8_t *x;
	int i, ran = 0;

	ASSERT_NE(NULL, set);
	ASSERT_EQ(0, open_self(&sb));
	x = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, x);
	emit_ret_imm(x, 60);
	ASSERT_EQ(60, call(x));
	ASSERT_EQ(0, set_flowjit_sysctl("0"));
	emit_ret_imm(x, 61);
	ran += call(x) == 61;	/* the page becomes W+X here */
	faults = minor_faults();
	for (i = 0; i < 50; i++) {
		emit_ret_imm(x, 100 + i);
		ran += call(x) == 100 + i;
	}
	faults = minor_faults() - faults;
	ASSERT_EQ(0, set_flowjit_sysctl("1"));
	EXPECT_EQ(51, ran);
	EXPECT_GT(10, faults)
		TH_LOG("%ld faults for 50 rewrites with kernel.flowjit=0", faults);
	fj_collect(&sb, set);
	EXPECT_EQ(1, count_images(set));
	munmap(x, PAGE);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/*
 * Write and run @n new pages of @x (RWX, private anonymous): the minor
 * faults they took. A page takes a write fault, and an instruction
 * fetch fault too where flowjit's non-executable protection is left.
 */
static long fresh_code_faults(uint8_t *x, int n)
{
	long faults = minor_faults();
	int i;

	for (i = 0; i < n; i++) {
		emit_ret_imm(x + i * PAGE, 2000 + i);
		if (call(x + i * PAGE) != 2000 + i)
			return -1;
	}
	return minor_faults() - faults;
}

#define FRESH_PAGES	32

/*
 * When tracking of an address space ends, its VMAs get the protection
 * their flags give back, at the first instruction fetch that finds a
 * page flowjit armed (review 2026-11-24, performance: the
 * non-executable protection stayed for the life of the address space,
 * so every new code page took an extra fault for ever, and khugepaged's
 * huge pages were split again at every fetch). 32 pages written and run
 * after the event closed took 64 faults before, about 33 now.
 */
TEST(tracking_end_gives_the_protection_back)
{
	uint8_t *x = mmap(NULL, (FRESH_PAGES + 1) * PAGE,
			  PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sb sb;
	long faults;

	ASSERT_NE(MAP_FAILED, x);
	ASSERT_EQ(0, open_self(&sb));
	emit_ret_imm(x, 1);
	ASSERT_EQ(1, call(x));
	sb_close(&sb);
	faults = fresh_code_faults(x + PAGE, FRESH_PAGES);
	printf("# %ld faults for %d new code pages after tracking ended\n",
	       faults, FRESH_PAGES);
	EXPECT_LT(0, faults);
	EXPECT_GT(FRESH_PAGES * 3 / 2, faults)
		TH_LOG("%ld faults for %d new code pages after tracking ended",
		       faults, FRESH_PAGES);
	munmap(x, (FRESH_PAGES + 1) * PAGE);
}

/* The same in a child forked untracked from a tracked process. */
TEST(untracked_fork_child_gets_the_protection_back)
{
	uint8_t *x = mmap(NULL, (FRESH_PAGES + 1) * PAGE,
			  PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int pipefd[2], status;
	long faults = -1;
	struct sb sb;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, x);
	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, open_self(&sb));	/* not inherited */
	emit_ret_imm(x, 1);
	ASSERT_EQ(1, call(x));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		faults = fresh_code_faults(x + PAGE, FRESH_PAGES);
		_exit(write(pipefd[1], &faults, sizeof(faults)) !=
		      sizeof(faults));
	}
	ASSERT_EQ(sizeof(faults), read(pipefd[0], &faults, sizeof(faults)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	printf("# %ld faults for %d new code pages in the child\n",
	       faults, FRESH_PAGES);
	EXPECT_EQ(0, status);
	EXPECT_LT(0, faults);
	EXPECT_GT(FRESH_PAGES * 3 / 2, faults)
		TH_LOG("%ld faults for %d new code pages in the child",
		       faults, FRESH_PAGES);
	sb_close(&sb);
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(x, (FRESH_PAGES + 1) * PAGE);
}

TEST_F(user_jit, closing_the_event_untracks)
{
	code_write_begin(self, variant);
	emit_ret_imm(self->code, 11);
	code_write_end(self, variant);
	ASSERT_EQ(11, call(self->code));
	sb_close(&self->sb);
	code_write_begin(self, variant);
	emit_ret_imm(self->code, 12);
	code_write_end(self, variant);
	EXPECT_EQ(12, call(self->code));
	code_write_begin(self, variant);
	emit_ret_imm(self->code + 2 * PAGE - 8, 13);	/* not run before */
	code_write_end(self, variant);
	EXPECT_EQ(13, call(self->code + 2 * PAGE - 8));
}

/* Tracking another user's process needs more than reading its memory. */
static int track_init(void)
{
	struct perf_event_attr attr;

	user_attr(&attr);
	if (sb_perf_event_open(&attr, 1, -1) >= 0)	/* init, root */
		return 11;
	return errno == EACCES || errno == EPERM ? 0 : 12;
}

TEST(other_users_process_is_refused)
{
	int old;

	if (getuid() != 0)
		SKIP(return, "needs root to drop privileges");
	old = sb_paranoid_at_most(2);
	EXPECT_EQ(0, sb_run_as_nobody(track_init));
	sb_paranoid_restore(old);
}

/* An unprivileged process may track its own code. */
static int track_self(void)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct perf_event_attr attr;
	uint8_t *code;
	struct sb sb;

	user_attr(&attr);
	if (!set || sb_open_task(&sb, &attr, 0))
		return 11;
	code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 12;
	emit_ret_imm(code, 21);
	if (call(code) != 21)
		return 13;
	fj_collect(&sb, set);
	return find_page(set, (uintptr_t)code, 0) ? 0 : 14;
}

TEST(unprivileged_process_tracks_itself)
{
	int step, old;

	if (getuid() != 0)
		SKIP(return, "needs root to drop privileges");
	/* at upstream's default (Debian's 3 allows no one: see below) */
	old = sb_paranoid_at_most(2);
	step = sb_run_as_nobody(track_self);
	sb_paranoid_restore(old);
	EXPECT_EQ(0, step) TH_LOG("child step %d failed", step);
}

/* open a flowjit event on itself: 0 if refused with EACCES, else a step */
static int track_self_refused(void)
{
	struct perf_event_attr attr;

	user_attr(&attr);
	if (sb_perf_event_open(&attr, 0, -1) >= 0)
		return 21;
	return errno == EACCES ? 0 : 22;
}

/*
 * Debian's perf_event_paranoid 3 (its kernels' default) refuses perf
 * events to unprivileged users: flowjit does not open a way around it.
 */
TEST(paranoid_3_refuses_unprivileged_tracking)
{
	int step, old = sb_paranoid();

	if (getuid() != 0)
		SKIP(return, "needs root to drop privileges");
	ASSERT_EQ(0, sb_set_paranoid(3));
	step = sb_run_as_nobody(track_self_refused);
	sb_paranoid_restore(old);
	EXPECT_EQ(0, step) TH_LOG("child step %d failed", step);
}

FLOWJIT_HARNESS_MAIN
