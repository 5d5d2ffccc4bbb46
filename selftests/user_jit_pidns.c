// SPDX-License-Identifier: GPL-2.0
/*
 * The pid and tid of a user JIT record are numbers of the pid namespace
 * the event was opened in, as perf's own sample pid/tid are: a process in
 * a container sees its own numbers, never the host's, and a decoder can
 * match rec.pid with the sample_id pid of the same record. So are those of
 * an inherited event's records: in the namespace of the event that was
 * opened, not of the task that forked the one that runs the JIT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "user_jit.h"

struct result {
	int err;		/* of the perf_event_open() */
	int pid, tid;		/* getpid(), gettid() in the namespace */
	int rec_pid, rec_tid;	/* of the snapshot record, -1: none */
};

/* in the new namespace: track itself, run a JIT page, report */
static void child(int wfd)
{
	struct result r = { .rec_pid = -1, .rec_tid = -1 };
	struct fj_set *set = calloc(1, sizeof(*set));
	struct fj_obj *o;
	struct sb sb;
	uint8_t *code;

	r.pid = getpid();
	r.tid = gettid();
	r.err = open_self(&sb);
	code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!r.err && set && code != MAP_FAILED) {
		emit_ret_imm(code, 77);
		mprotect(code, PAGE, PROT_READ | PROT_EXEC);
		if (call(code) == 77) {
			fj_collect(&sb, set);
			o = find_page(set, (uintptr_t)code, 0);
			if (o) {
				r.rec_pid = o->rec.pid;
				r.rec_tid = o->rec.tid;
			}
		}
		sb_close(&sb);
	}
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

/*
 * Run @fn in a child that is pid 1 of a new pid namespace (this task's
 * next child: unshare() moves only those) and read its @len bytes of
 * result into @res. Returns its pid on the host, or -errno.
 */
static pid_t run_in_new_pidns(void (*fn)(int wfd), void *res, size_t len)
{
	int pfd[2], status, err = 0;
	pid_t pid;

	if (pipe(pfd) || unshare(CLONE_NEWPID))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		fn(pfd[1]);
	close(pfd[1]);
	if (read(pfd[0], res, len) != (ssize_t)len)
		err = -EIO;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		err = -ECHILD;
	return err ? err : pid;
}

TEST(records_carry_pids_of_the_events_namespace)
{
	struct result r;
	pid_t pid = run_in_new_pidns(child, &r, sizeof(r));

	ASSERT_LT(0, pid) TH_LOG("child in a new pid namespace: %s",
				 strerror(-pid));
	ASSERT_EQ(0, r.err) TH_LOG("flowjit event in the namespace: %s",
				   strerror(-r.err));
	ASSERT_EQ(1, r.pid);
	ASSERT_NE(-1, r.rec_pid) TH_LOG("no snapshot of the JIT page");
	EXPECT_EQ(r.pid, r.rec_pid)
		TH_LOG("rec.pid %d, the process is %d in its namespace (%d on the host)",
		       r.rec_pid, r.pid, pid);
	EXPECT_EQ(r.tid, r.rec_tid);
}

/* what the grandchild of inherited_events_number_pids_as_the_opened_one did */
struct grandchild {
	int pid;		/* getpid() in the new namespace */
	int ran;		/* its JIT page returned 77 */
	uint64_t addr;		/* of the page */
};

/* the first record of the page at @addr, and its sample id */
struct found {
	uint64_t addr;
	int n;
	struct flowjit_record rec;
	struct flowjit_sample_id id;
};

static void find_rec(const struct perf_event_header *hdr,
		     const struct flowjit_sample_id *id, void *arg)
{
	struct found *f = arg;
	struct flowjit_chunk c;

	if (hdr->type != PERF_RECORD_FLOWJIT ||
	    flowjit_chunk_parse(&c, hdr + 1, hdr->size - sizeof(*hdr), NULL) ||
	    c.rec.kind != FLOWJIT_KIND_USER_JIT ||
	    c.rec.op == FLOWJIT_OP_RETIRE || c.rec.addr != f->addr)
		return;
	if (!f->n++) {
		f->rec = c.rec;
		f->id = *id;
	}
}

/*
 * pid 1 of the new namespace: its fork() makes the grandchild's events
 * while it runs in that namespace (perf_event_alloc() takes the pid
 * namespace of the task that forks); the grandchild runs a JIT page
 */
static void middle(int wfd)
{
	struct grandchild r = { 0 };
	uint8_t *code;
	pid_t pid = fork();

	if (pid < 0)
		_exit(1);
	if (pid) {
		waitpid(pid, NULL, 0);
		_exit(0);
	}
	r.pid = getpid();
	code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code != MAP_FAILED) {
		emit_ret_imm(code, 77);
		mprotect(code, PAGE, PROT_READ | PROT_EXEC);
		r.ran = call(code) == 77;
		r.addr = (uintptr_t)code;
	}
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

/*
 * perf record's events: inherited, one per CPU, opened here in the
 * initial namespace. A grandchild in a new pid namespace runs a JIT page:
 * its record carries the pid perf's sample id gives it (this namespace's
 * number), not the new namespace's one (2), which it carried while the
 * kernel took the namespace of the event it wrote to.
 */
TEST(inherited_events_number_pids_as_the_opened_one)
{
	struct perf_event_attr attr;
	struct found f = { 0 };
	struct grandchild r;
	struct sb sb;
	pid_t pid;

	user_attr(&attr);
	attr.inherit = 1;
	ASSERT_EQ(0, sb_open_pid(&sb, &attr, 0));
	pid = run_in_new_pidns(middle, &r, sizeof(r));
	ASSERT_LT(0, pid) TH_LOG("child in a new pid namespace: %s",
				 strerror(-pid));
	ASSERT_TRUE(r.ran);
	ASSERT_EQ(2, r.pid);
	f.addr = r.addr;
	sb_drain(&sb, find_rec, &f);
	sb_close(&sb);
	ASSERT_NE(0, f.n) TH_LOG("no snapshot of the grandchild's JIT page");
	EXPECT_EQ(f.id.pid, f.rec.pid)
		TH_LOG("rec.pid %u, its sample id says %u; %d in the new namespace",
		       f.rec.pid, f.id.pid, r.pid);
	EXPECT_EQ(f.id.tid, f.rec.tid);
	EXPECT_NE(r.pid, f.rec.pid);
}

FLOWJIT_HARNESS_MAIN
