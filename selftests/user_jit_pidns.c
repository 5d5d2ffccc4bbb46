// SPDX-License-Identifier: GPL-2.0
/*
 * The pid and tid of a user JIT record are numbers of the pid namespace
 * the event was opened in, as perf's own sample pid/tid are: a process in
 * a container sees its own numbers, never the host's, and a decoder can
 * match rec.pid with the sample_id pid of the same record.
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

TEST(records_carry_pids_of_the_events_namespace)
{
	struct result r;
	int pfd[2], status;
	pid_t pid;

	ASSERT_EQ(0, pipe(pfd));
	/* the next child is pid 1 of a new pid namespace */
	ASSERT_EQ(0, unshare(CLONE_NEWPID))
		TH_LOG("unshare(CLONE_NEWPID): %s", strerror(errno));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		child(pfd[1]);
	close(pfd[1]);
	ASSERT_EQ(sizeof(r), read(pfd[0], &r, sizeof(r)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, r.err) TH_LOG("flowjit event in the namespace: %s",
				   strerror(-r.err));
	ASSERT_EQ(1, r.pid);
	ASSERT_NE(-1, r.rec_pid) TH_LOG("no snapshot of the JIT page");
	EXPECT_EQ(r.pid, r.rec_pid)
		TH_LOG("rec.pid %d, the process is %d in its namespace (%d on the host)",
		       r.rec_pid, r.pid, pid);
	EXPECT_EQ(r.tid, r.rec_tid);
}

FLOWJIT_HARNESS_MAIN
