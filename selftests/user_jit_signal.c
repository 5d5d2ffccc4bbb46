// SPDX-License-Identifier: GPL-2.0
/*
 * Starting to track a process must not disturb it: the arming of its
 * address space runs as task work before it next returns to user space,
 * and a task blocked in a system call must not see that call fail with
 * EINTR because of it (epoll_wait() returns -EINTR to user space on any
 * pending notification, it is not restarted).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "user_jit.h"

#define WAIT_MS		1500

/*
 * Fork a child that blocks in epoll_wait() on an empty set for WAIT_MS;
 * returns its pid, and the pipe its result (return value, errno) comes
 * back through.
 */
static pid_t blocked_child(int *rfd)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (!pid) {
		struct epoll_event ev;
		int res[2], ep = epoll_create1(0);

		res[0] = epoll_wait(ep, &ev, 1, WAIT_MS);
		res[1] = errno;
		if (write(pfd[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	*rfd = pfd[0];
	return pid;
}

static void child_result(struct __test_metadata *_metadata, pid_t pid,
			 int rfd)
{
	int res[2] = { -2, 0 }, status;

	ASSERT_EQ(sizeof(res), read(rfd, res, sizeof(res)));
	close(rfd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, res[0]) TH_LOG("epoll_wait() returned %d (%s) instead of timing out",
				    res[0], res[0] < 0 ? strerror(res[1]) : "ready");
}

/* a per-task event on a task blocked in epoll_wait() */
TEST(attach_does_not_interrupt_a_blocked_syscall)
{
	struct perf_event_attr attr;
	struct sb sb;
	int rfd, err;
	pid_t pid;

	pid = blocked_child(&rfd);
	ASSERT_LT(0, pid);
	usleep(300 * 1000);	/* the child is in epoll_wait() */
	user_attr(&attr);
	err = sb_open_task(&sb, &attr, pid);
	ASSERT_EQ(0, err) TH_LOG("flowjit event on the child: %s", strerror(-err));
	child_result(_metadata, pid, rfd);
	sb_close(&sb);
}

/* a CPU-wide event arms every process, the blocked one included */
TEST(cpu_wide_open_does_not_interrupt_a_blocked_syscall)
{
	struct sb sb;
	int rfd, err;
	pid_t pid;

	pid = blocked_child(&rfd);
	ASSERT_LT(0, pid);
	usleep(300 * 1000);
	err = open_cpu_wide(&sb);
	if (err == -EACCES || err == -EPERM) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		SKIP(return, "CPU-wide events need privileges");
	}
	ASSERT_EQ(0, err) TH_LOG("CPU-wide flowjit event: %s", strerror(-err));
	child_result(_metadata, pid, rfd);
	sb_close(&sb);
}

FLOWJIT_HARNESS_MAIN
