// SPDX-License-Identifier: GPL-2.0
/*
 * Tracking follows a task into the image it execs, as its events do, but
 * not where the events do not: not into an image that raises privileges
 * (perf detaches a task's events when exec makes it non-dumpable), and
 * not for an event opened with remove_on_exec.
 *
 * An unprivileged process opens a flowjit event on its child, which then
 * execs user_jit_probe: a plain copy, or a copy that is setuid root. The
 * probe's exit status is the number of faults its JIT code took (0:
 * untracked, 2 per page: tracked, see user_jit_probe.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "user_jit.h"

#define PROBE		"user_jit_probe"
#define PLAIN_PROBE	"/tmp/fj-probe"
#define SUID_PROBE	"/tmp/fj-suid-probe"
#define TRACKED_FAULTS	16	/* 2 * PROBE_PAGES */

/* what the unprivileged side saw, in memory shared with the test */
struct outcome {
	int open_err;		/* of the event: 0 or -errno */
	int status;		/* the probe's exit status, or -1 */
	int images;		/* user JIT snapshots of the probe's pid */
	int records;		/* flowjit records of any kind */
};

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open(src, O_RDONLY);
	if (in < 0)
		return -1;
	unlink(dst);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0700);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	close(in);
	/* set after the writes, which would clear the setuid bit */
	if (fchmod(out, mode))
		n = -1;
	close(out);
	return n < 0 ? -1 : 0;
}

enum how {
	ON_CHILD,		/* per-task event opened on the child */
	ON_CHILD_REMOVE_ON_EXEC,
	INHERITED,		/* opened on itself, inherited by the child */
};

/*
 * As nobody: fork a child, open a flowjit event that tracks it, let it
 * exec @path and wait for it. Never returns.
 */
static void run_probe(const char *path, enum how how, struct outcome *out)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct perf_event_attr attr;
	int go[2], status, i;
	struct sb sb;
	pid_t pid;
	char c;

	/* dumpable again, as a process nobody started (setuid() cleared it) */
	if (!set || setgid(65534) || setuid(65534) ||
	    prctl(PR_SET_DUMPABLE, 1) || pipe(go))
		_exit(10);
	sb_attr_init(&attr);
	attr.flowjit = 1;
	attr.exclude_kernel = 1;
	if (how == INHERITED) {
		attr.inherit = 1;
		out->open_err = sb_open_pid(&sb, &attr, 0);
		if (out->open_err)
			_exit(11);
	}
	pid = fork();
	if (pid < 0)
		_exit(12);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (read(go[0], &c, 1) != 1)
			_exit(250);
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execl(path, path, (char *)NULL);
		_exit(251);
	}
	if (how != INHERITED) {
		attr.remove_on_exec = how == ON_CHILD_REMOVE_ON_EXEC;
		out->open_err = sb_open_task(&sb, &attr, pid);
	}
	if (write(go[1], "g", 1) != 1)
		_exit(13);
	if (waitpid(pid, &status, 0) != pid)
		_exit(14);
	out->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (!out->open_err) {
		fj_collect(&sb, set);
		out->records = set->records;
		for (i = 0; i < set->nr; i++)
			out->images += fj_user_image(&set->obj[i], pid);
	}
	_exit(0);
}

FIXTURE(suid) {
	struct outcome *out;
	int paranoid;
};

FIXTURE_SETUP(suid)
{
	self->paranoid = -1;
	if (getuid() != 0)
		SKIP(return, "needs root to install a setuid program");
	/* nobody opens the events: Debian's 3 allows that to no one */
	self->paranoid = sb_paranoid_at_most(2);
	ASSERT_EQ(0, copy_file(PROBE, PLAIN_PROBE, 0755));
	ASSERT_EQ(0, copy_file(PROBE, SUID_PROBE, 04755));
	self->out = mmap(NULL, sizeof(*self->out), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->out);
}

FIXTURE_TEARDOWN(suid)
{
	sb_paranoid_restore(self->paranoid);
	unlink(PLAIN_PROBE);
	unlink(SUID_PROBE);
	if (self->out)
		munmap(self->out, sizeof(*self->out));
}

/* run the probe as nobody: 0, or the step that failed */
static int probe(struct outcome *out, const char *path, enum how how)
{
	int status;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	out->status = -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		run_probe(path, how, out);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* run the probe @how: its JIT code took @faults faults, was it tracked */
static void expect_probe(struct __test_metadata *_metadata,
			 struct outcome *o, const char *path, enum how how,
			 int faults)
{
	ASSERT_EQ(0, probe(o, path, how));
	ASSERT_EQ(0, o->open_err)
		TH_LOG("flowjit event: %s", strerror(-o->open_err));
	TH_LOG("probe: %d faults, %d snapshots, %d records", o->status,
	       o->images, o->records);
	EXPECT_EQ(faults, o->status);
	/* snapshots exactly when tracked */
	EXPECT_EQ(faults > 0, o->images > 0);
}

/* the probe tells tracked from untracked: tracking follows a plain exec */
TEST_F(suid, plain_exec_is_tracked)
{
	expect_probe(_metadata, self->out, PLAIN_PROBE, ON_CHILD, TRACKED_FAULTS);
}

TEST_F(suid, plain_exec_with_inherited_event_is_tracked)
{
	expect_probe(_metadata, self->out, PLAIN_PROBE, INHERITED, TRACKED_FAULTS);
}

/* a setuid image is not tracked for the user who opened the event */
TEST_F(suid, setuid_exec_is_not_tracked)
{
	expect_probe(_metadata, self->out, SUID_PROBE, ON_CHILD, 0);
}

TEST_F(suid, setuid_exec_with_inherited_event_is_not_tracked)
{
	expect_probe(_metadata, self->out, SUID_PROBE, INHERITED, 0);
}

/* perf removes a remove_on_exec event at exec: its tracking ends too */
TEST_F(suid, remove_on_exec_event_does_not_follow_exec)
{
	expect_probe(_metadata, self->out, PLAIN_PROBE, ON_CHILD_REMOVE_ON_EXEC, 0);
}

FLOWJIT_HARNESS_MAIN
