// SPDX-License-Identifier: GPL-2.0
/*
 * splice() of perf AUX data (CONFIG_PERF_AUX_SPLICE), proved with the
 * flowjit_aux test PMU (CONFIG_FLOWJIT_AUX_TEST), which writes sequence
 * numbered records: every byte arrives once and in order, aux_tail moves
 * only when the pipe released the pages, back-pressure gives reported and
 * counted loss, closing the event mid-splice is safe, a user write of
 * aux_tail after the claim and overwrite mode are refused. A splice()
 * that finds the pipe full sleeps until there is space and dies of
 * signals (review finding 5); the test PMU refuses unprivileged users.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <grp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "aux_splice.h"
#include "harness.h"

#define RATE_BYTES	4096		/* per tick: 4 MB/s at 1 ms */
#define PERIOD_NS	1000000
#define PIPE_SIZE	(1024 * 1024)

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int open_or_skip(struct __test_metadata *_metadata,
			struct ax_event *ev, uint64_t bytes, unsigned int pages,
			int prot, bool disabled)
{
	int ret = ax_open(ev, 0, bytes, PERIOD_NS, pages, prot, 4096,
			  disabled);

	if (ret == -ENOENT)
		SKIP(return -1, "no flowjit_aux PMU (CONFIG_FLOWJIT_AUX_TEST)");
	return ret;
}

/* open a 64-page event and give it up to 1 s to write @bytes */
static int open_filled(struct __test_metadata *_metadata,
		       struct ax_event *ev, uint64_t bytes)
{
	int ret, i;

	ret = open_or_skip(_metadata, ev, RATE_BYTES, 64,
			   PROT_READ | PROT_WRITE, false);
	if (ret)
		return ret;
	for (i = 0; i < 1000 && ax_aux_head(ev) < bytes; i++)
		sleep_ms(1);
	return 0;
}

/* feed all that can be read from @fd to @check */
static void read_all(int fd, struct ax_check *check)
{
	static char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		ax_check_feed(check, buf, n);
}

struct reader {
	int fd;
	struct ax_check check;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	read_all(r->fd, &r->check);
	return NULL;
}

/* move everything there is, without blocking */
static uint64_t splice_all(int from, int to)
{
	uint64_t total = 0;
	ssize_t n;

	while ((n = ax_splice(from, to, PIPE_SIZE, SPLICE_F_NONBLOCK)) > 0)
		total += n;
	return total;
}

/*
 * 4 MiB at 1 MB/s through a pipe, read by another thread. The PMU writes
 * in real time, as hardware does, and what is tested here is the splice
 * path, not a rate: the 2 MiB area holds two seconds of data, so that
 * the sanitizer kernel's vCPUs under QEMU's TCG on a busy host keep up
 * (at 4 MB/s into 64 pages, 64 ms, they lost records in two runs); it
 * still wraps once. Loss is backpressure_loss_is_reported's test. The
 * PERF_RECORD_AUX records (one a tick, 4 096 of them) are read as they
 * come, as perf record reads them: the 16-page data ring holds about
 * 2 000.
 */
TEST(every_byte_once_in_order)
{
	struct reader rd = { 0 };
	struct ax_event ev;
	uint64_t total = 0;
	pthread_t th;
	int p[2], i;
	ssize_t n;

	ASSERT_EQ(0, open_or_skip(_metadata, &ev, RATE_BYTES / 4, 512,
				  PROT_READ | PROT_WRITE, false));
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	rd.fd = p[0];
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_main, &rd));
	while (total < (4 << 20)) {
		n = ax_splice(ev.fd, p[1], PIPE_SIZE, 0);
		ASSERT_LT(0, n) TH_LOG("splice: %s", strerror(errno));
		total += n;
		ax_drain_aux_records(&ev);
	}
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	/* the rest, as the reader makes room in the pipe (up to 10 s) */
	for (i = 0; i < 10000 && total < ax_aux_head(&ev); i++) {
		n = splice_all(ev.fd, p[1]);
		total += n;
		ax_drain_aux_records(&ev);
		if (!n)
			sleep_ms(1);
	}
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);
	ax_drain_aux_records(&ev);

	EXPECT_EQ(0, rd.check.bad) TH_LOG("%s", rd.check.first_error);
	EXPECT_EQ(0, rd.check.gaps);
	EXPECT_EQ(0, ax_lost(&ev));
	EXPECT_EQ(0, ev.ring_lost);
	EXPECT_EQ(0, ev.truncated);
	EXPECT_EQ(total, rd.check.bytes);
	EXPECT_EQ(total / FJAX_REC, rd.check.next_seq);
	EXPECT_EQ(ax_aux_head(&ev), total);
	EXPECT_EQ(ev.aux_bytes, total);
	/* everything was read from the pipe: all of it released */
	EXPECT_EQ(ax_aux_tail(&ev), total);
	ax_close(&ev);
}

/* pages in a pipe hold the tail back until the pipe's reader took them */
TEST(tail_moves_when_pipe_releases)
{
	struct ax_check check = { 0 };
	struct ax_event ev;
	char buf[4096];
	int p[2], i;

	ASSERT_EQ(0, open_filled(_metadata, &ev, 3 * 4096));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_LE(3 * 4096, ax_aux_head(&ev));
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	ASSERT_EQ(3 * 4096,
		  ax_splice(ev.fd, p[1], 3 * 4096, SPLICE_F_NONBLOCK));
	EXPECT_EQ(0, ax_aux_tail(&ev));
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(sizeof(buf), read(p[0], buf, sizeof(buf)));
		ax_check_feed(&check, buf, sizeof(buf));
		EXPECT_EQ(i * 4096, ax_aux_tail(&ev));
	}
	EXPECT_EQ(0, check.bad) TH_LOG("%s", check.first_error);
	EXPECT_EQ(0, check.gaps);
	close(p[0]);
	close(p[1]);
	ax_close(&ev);
}

/*
 * A 64 KiB AUX area, 300 records per 1 ms tick and a consumer that sleeps:
 * ticks stop fitting. Every gap in the sequence must sit where a
 * PERF_RECORD_AUX with TRUNCATED ended, the event count must equal the
 * records missing, and each record's own lost count must agree.
 */
TEST(backpressure_loss_is_reported)
{
	struct ax_check check = { 0 };
	struct ax_event ev;
	int p[2], round, i;

	ASSERT_EQ(0, open_or_skip(_metadata, &ev, 300 * FJAX_REC, 16,
				  PROT_READ | PROT_WRITE, false));
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	ASSERT_EQ(0, fcntl(p[0], F_SETFL, O_NONBLOCK));
	for (round = 0; round < 4; round++) {
		sleep_ms(30);
		splice_all(ev.fd, p[1]);
		read_all(p[0], &check);
		/* TRUNCATED disabled the event, as for BTS: start again */
		ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
	}
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	splice_all(ev.fd, p[1]);
	close(p[1]);
	read_all(p[0], &check);
	close(p[0]);
	ax_drain_aux_records(&ev);

	EXPECT_EQ(0, check.bad) TH_LOG("%s", check.first_error);
	ASSERT_LT(0, check.gaps) TH_LOG("no loss: back-pressure not reached");
	EXPECT_LT(0, ev.truncated);
	/*
	 * Each record carried the event count as it was written (checked
	 * per record); records lost after the last one written show only in
	 * the count, and only behind a TRUNCATED end of the stream.
	 */
	EXPECT_LE(check.lost, ax_lost(&ev));
	if (ax_lost(&ev) > check.lost)
		EXPECT_TRUE(ax_is_trunc_end(&ev, check.bytes));
	for (i = 0; i < (int)check.nr_gap_pos; i++)
		EXPECT_TRUE(ax_is_trunc_end(&ev, check.gap_pos[i]))
			TH_LOG("gap at byte %llu without TRUNCATED",
			       (unsigned long long)check.gap_pos[i]);
	EXPECT_EQ(ev.aux_bytes, check.bytes);
	TH_LOG("%llu records, %llu lost in %llu gaps, %llu TRUNCATED",
	       (unsigned long long)check.records,
	       (unsigned long long)check.lost,
	       (unsigned long long)check.gaps,
	       (unsigned long long)ev.truncated);
	ax_close(&ev);
}

/* data still in a pipe survives the event, its mappings and its fd */
TEST(close_with_data_in_pipe)
{
	struct ax_check check = { 0 };
	struct ax_event ev;
	ssize_t moved;
	int p[2];

	ASSERT_EQ(0, open_filled(_metadata, &ev, 32768));
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	moved = ax_splice(ev.fd, p[1], 32768, SPLICE_F_NONBLOCK);
	ASSERT_EQ(32768, moved);
	ax_close(&ev);
	close(p[1]);
	read_all(p[0], &check);
	close(p[0]);
	EXPECT_EQ(moved, check.bytes);
	EXPECT_EQ(0, check.bad) TH_LOG("%s", check.first_error);
	EXPECT_EQ(0, check.gaps);
}

struct blocked {
	int fd, pipe;
	ssize_t ret;
	int err;
};

static void *blocked_main(void *arg)
{
	struct blocked *b = arg;

	b->ret = ax_splice(b->fd, b->pipe, 4096, 0);
	b->err = errno;
	return NULL;
}

/* a splice() waiting for data returns when the AUX area goes away */
TEST(unmap_and_close_while_splice_waits)
{
	struct blocked b = { 0 };
	struct ax_event ev;
	pthread_t th;
	int p[2], fd;

	/* disabled: no data will come */
	ASSERT_EQ(0, open_or_skip(_metadata, &ev, RATE_BYTES, 16,
				  PROT_READ | PROT_WRITE, true));
	ASSERT_EQ(0, ax_pipe(p, 0));
	b.fd = ev.fd;
	b.pipe = p[1];
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_main, &b));
	sleep_ms(100);
	fd = ev.fd;
	ev.fd = -1;
	ax_unmap(&ev);
	close(fd);
	pthread_join(th, NULL);
	EXPECT_EQ(-1, b.ret);
	EXPECT_EQ(ENODATA, b.err);
	close(p[0]);
	close(p[1]);
}

/* after the first splice(), a user write of aux_tail is refused */
TEST(mmap_tail_write_after_splice_refused)
{
	struct ax_event ev;
	int p[2];

	ASSERT_EQ(0, open_filled(_metadata, &ev, 8192));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	ASSERT_EQ(4096, ax_splice(ev.fd, p[1], 4096, SPLICE_F_NONBLOCK));
	/* an mmap reader consumes the rest behind splice's back */
	__atomic_store_n(&ev.pg->aux_tail, ax_aux_head(&ev), __ATOMIC_RELEASE);
	EXPECT_EQ(-1, ax_splice(ev.fd, p[1], 4096, SPLICE_F_NONBLOCK));
	EXPECT_EQ(EBUSY, errno);
	close(p[0]);
	close(p[1]);
	ax_close(&ev);
}

/* data an mmap reader consumed before the first splice() stays consumed */
TEST(mmap_reader_then_splice)
{
	struct ax_check check = { 0 };
	struct ax_event ev;
	char buf[4096];
	int p[2];

	ASSERT_EQ(0, open_filled(_metadata, &ev, 8192));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	ax_check_feed(&check, ev.aux, 4096);
	__atomic_store_n(&ev.pg->aux_tail, 4096, __ATOMIC_RELEASE);
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	ASSERT_EQ(4096, ax_splice(ev.fd, p[1], 4096, SPLICE_F_NONBLOCK));
	ASSERT_EQ(4096, read(p[0], buf, sizeof(buf)));
	ax_check_feed(&check, buf, sizeof(buf));
	EXPECT_EQ(0, check.bad) TH_LOG("%s", check.first_error);
	EXPECT_EQ(0, check.gaps);
	EXPECT_EQ(8192, ax_aux_tail(&ev));
	close(p[0]);
	close(p[1]);
	ax_close(&ev);
}

/* overwrite (snapshot) mode has no tail to hold back */
TEST(overwrite_mode_refused)
{
	struct ax_event ev;
	int p[2];

	ASSERT_EQ(0, open_or_skip(_metadata, &ev, RATE_BYTES, 16, PROT_READ,
				  false));
	ASSERT_EQ(0, ax_pipe(p, 0));
	EXPECT_EQ(-1, ax_splice(ev.fd, p[1], 4096, SPLICE_F_NONBLOCK));
	EXPECT_EQ(EOPNOTSUPP, errno);
	close(p[0]);
	close(p[1]);
	ax_close(&ev);
}

/* no AUX area: nothing to splice */
TEST(no_aux_area)
{
	struct ax_event ev;
	int p[2];

	ASSERT_EQ(0, open_or_skip(_metadata, &ev, RATE_BYTES, 0, 0, false));
	ASSERT_EQ(0, ax_pipe(p, 0));
	EXPECT_EQ(-1, ax_splice(ev.fd, p[1], 4096, SPLICE_F_NONBLOCK));
	EXPECT_EQ(ENODATA, errno);
	close(p[0]);
	close(p[1]);
	ax_close(&ev);
}

/*
 * aux_head in the user page is user space's to write: splice() goes by
 * the kernel's own, so a bogus value moves nothing the PMU did not write.
 */
TEST(user_written_aux_head_is_ignored)
{
	struct ax_check check = { 0 };
	struct ax_event ev;
	uint64_t head;
	ssize_t n;
	int p[2];

	ASSERT_EQ(0, open_filled(_metadata, &ev, 8192));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	head = ax_aux_head(&ev);
	ASSERT_LE(8192, head);
	__atomic_store_n(&ev.pg->aux_head, head + 16384, __ATOMIC_RELEASE);
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	ASSERT_EQ(0, fcntl(p[0], F_SETFL, O_NONBLOCK));
	n = splice_all(ev.fd, p[1]);
	EXPECT_EQ(head, n);
	EXPECT_EQ(-1, ax_splice(ev.fd, p[1], 4096, SPLICE_F_NONBLOCK));
	EXPECT_EQ(EAGAIN, errno);
	read_all(p[0], &check);
	EXPECT_EQ(n, check.bytes);
	EXPECT_EQ(0, check.bad) TH_LOG("%s", check.first_error);
	close(p[0]);
	close(p[1]);
	ax_close(&ev);
}

/*
 * Why splicing AUX data on into a socket is not safe (and documented as
 * not supported): sendpage() keeps its own reference to the page, the
 * pipe buffer is released at once, and with it the AUX space, while the
 * bytes still wait in the socket for their reader. Nothing at splice()
 * time can refuse it: where the pipe goes is decided by a later splice()
 * of the pipe. This shows the tail moving early; the event is disabled,
 * so the bytes the reader then gets are still intact.
 */
TEST(socket_splice_releases_aux_space_early)
{
	struct ax_check check = { 0 };
	static char buf[65536];
	struct ax_event ev;
	int p[2], sv[2];
	ssize_t n;

	ASSERT_EQ(0, open_filled(_metadata, &ev, 8192));
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(8192, ax_splice(ev.fd, p[1], 8192, SPLICE_F_NONBLOCK));
	EXPECT_EQ(0, ax_aux_tail(&ev));
	n = splice(p[0], NULL, sv[0], NULL, 8192, SPLICE_F_NONBLOCK);
	ASSERT_EQ(8192, n) TH_LOG("splice to the socket: %s", strerror(errno));
	/* nothing read from the socket yet, and the space is the PMU's again */
	EXPECT_EQ(8192, ax_aux_tail(&ev));
	n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT);
	ASSERT_EQ(8192, n);
	ax_check_feed(&check, buf, n);
	EXPECT_EQ(0, check.bad) TH_LOG("%s", check.first_error);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	ax_close(&ev);
}

/*
 * Review finding 5: a splice() waiting for AUX data with the pipe
 * unlocked, while another writer fills that pipe. When the data comes,
 * nothing fits; the splice() must then sleep until the pipe has space
 * (or a signal comes), not spin in the kernel where SIGKILL cannot reach
 * it. The splicer is a child, so that a spinning one cannot hang the
 * test: it is killed with SIGKILL and must be gone within a bound.
 */
struct full_pipe {
	struct ax_event ev;
	int p[2];		/* the pipe the child splices into */
	int res[2];		/* the child's splice() result */
	pid_t child;
	size_t filler;		/* bytes another writer put into the pipe */
};

struct splice_res {
	ssize_t ret;
	int err;
};

static void on_usr1(int sig)
{
}

/* the CPU time of @pid in clock ticks and its state letter, or -1 */
static long long proc_ticks(pid_t pid, char *state)
{
	unsigned long long utime, stime;
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime" */
	if (!p || sscanf(p + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu",
			 state, &utime, &stime) != 3)
		return -1;
	return utime + stime;
}

/* true once @pid sleeps in splice(), false after ~5 s */
static bool sleeps_in_splice(pid_t pid)
{
	char path[64], buf[256], state;
	int i, fd, nr;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (i = 0; i < 500; i++) {
		sleep_ms(10);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		nr = strtol(buf, NULL, 10);
		if (nr == __NR_splice &&
		    proc_ticks(pid, &state) >= 0 && state == 'S')
			return true;
	}
	return false;
}

/* reap @pid if it exits within @ms: its wait status, or -1 */
static int exit_within(pid_t pid, int ms)
{
	int status, i;

	for (i = 0; i < ms; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		sleep_ms(1);
	}
	return -1;
}

/*
 * A child splices (blocking) from a disabled event into a pipe; once it
 * sleeps waiting for data, the pipe is filled through another open file
 * of it and the event enabled. Returns 0 with the child blocked on a full
 * pipe and AUX data waiting, or -errno.
 */
static int full_pipe_start(struct __test_metadata *_metadata,
			   struct full_pipe *f, bool catch_usr1)
{
	static char buf[4096];
	char path[64];
	int wfd, i, ret;

	memset(f, 0, sizeof(*f));
	f->child = -1;
	ret = open_or_skip(_metadata, &f->ev, RATE_BYTES, 64,
			   PROT_READ | PROT_WRITE, true);
	if (ret)
		return ret;
	if (ax_pipe(f->p, 0) || pipe2(f->res, O_CLOEXEC))
		return -errno;
	f->child = fork();
	if (f->child < 0)
		return -errno;
	if (!f->child) {
		struct splice_res r;

		if (catch_usr1) {
			struct sigaction sa = { .sa_handler = on_usr1 };

			/* no SA_RESTART: the splice() must return EINTR */
			sigaction(SIGUSR1, &sa, NULL);
		}
		r.ret = ax_splice(f->ev.fd, f->p[1], 65536, 0);
		r.err = errno;
		if (write(f->res[1], &r, sizeof(r)) != sizeof(r))
			_exit(2);
		_exit(0);
	}
	close(f->res[1]);
	f->res[1] = -1;
	if (!sleeps_in_splice(f->child))
		return -ETIMEDOUT;
	/* another writer: its own file of the pipe, non-blocking */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->p[1]);
	wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (wfd < 0)
		return -errno;
	memset(buf, 'f', sizeof(buf));
	while (write(wfd, buf, sizeof(buf)) == sizeof(buf))
		f->filler += sizeof(buf);
	ret = errno == EAGAIN ? 0 : -errno;
	close(wfd);
	if (ret)
		return ret;
	if (ioctl(f->ev.fd, PERF_EVENT_IOC_ENABLE, 0))
		return -errno;
	/* AUX data past the watermark: the child is woken and finds no space */
	for (i = 0; i < 2000 && ax_aux_head(&f->ev) < 8192; i++)
		sleep_ms(1);
	if (ax_aux_head(&f->ev) < 8192)
		return -ENODATA;
	sleep_ms(200);
	return 0;
}

static void full_pipe_end(struct full_pipe *f)
{
	if (f->child > 0 && exit_within(f->child, 0) < 0) {
		kill(f->child, SIGKILL);
		exit_within(f->child, 3000);
	}
	if (f->res[0] > 0)
		close(f->res[0]);
	close(f->p[0]);
	close(f->p[1]);
	ax_close(&f->ev);
}

/* the splicer sleeps on the full pipe, and SIGKILL ends it */
TEST(full_pipe_splice_sleeps_and_dies)
{
	long long t0, t1;
	struct full_pipe f;
	char state = '?';
	int status;

	ASSERT_EQ(0, full_pipe_start(_metadata, &f, false));
	t0 = proc_ticks(f.child, &state);
	sleep_ms(500);
	t1 = proc_ticks(f.child, &state);
	ASSERT_LE(0, t0);
	/* spinning, it would take all of those 500 ms (50 ticks) */
	EXPECT_GE(10, t1 - t0)
		TH_LOG("the splicer took %lld ticks of CPU in 500 ms (state %c)",
		       t1 - t0, state);
	EXPECT_EQ('S', state);
	ASSERT_EQ(0, kill(f.child, SIGKILL));
	status = exit_within(f.child, 3000);
	ASSERT_NE(-1, status)
		TH_LOG("the splicer survived SIGKILL for 3 s: it spins in the kernel");
	f.child = -1;
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	full_pipe_end(&f);
}

/* a signal with a handler interrupts it: EINTR, nothing lost */
TEST(full_pipe_splice_interrupted)
{
	struct splice_res r = { 0 };
	struct full_pipe f;
	int status;

	ASSERT_EQ(0, full_pipe_start(_metadata, &f, true));
	ASSERT_EQ(0, kill(f.child, SIGUSR1));
	status = exit_within(f.child, 3000);
	ASSERT_NE(-1, status)
		TH_LOG("SIGUSR1 did not end the splice() in 3 s");
	f.child = -1;
	ASSERT_EQ(sizeof(r), read(f.res[0], &r, sizeof(r)));
	EXPECT_EQ(-1, r.ret);
	EXPECT_EQ(EINTR, r.err);
	/* nothing went into the pipe: the tail is where it was */
	EXPECT_EQ(0, ax_aux_tail(&f.ev));
	full_pipe_end(&f);
}

/* when the pipe's reader makes space, the splice() goes on with the data */
TEST(full_pipe_splice_resumes_when_drained)
{
	struct splice_res r = { 0 };
	struct ax_check check = { 0 };
	static char buf[65536];
	struct full_pipe f;
	size_t drained = 0;
	int status;
	ssize_t n;

	ASSERT_EQ(0, full_pipe_start(_metadata, &f, false));
	while (drained < f.filler) {
		n = read(f.p[0], buf, sizeof(buf) < f.filler - drained ?
				 sizeof(buf) : f.filler - drained);
		ASSERT_LT(0, n);
		drained += n;
	}
	status = exit_within(f.child, 5000);
	ASSERT_NE(-1, status) TH_LOG("the splice() did not go on");
	f.child = -1;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(sizeof(r), read(f.res[0], &r, sizeof(r)));
	ASSERT_LT(0, r.ret) TH_LOG("splice: %s", strerror(r.err));
	close(f.p[1]);
	f.p[1] = -1;
	ASSERT_EQ(0, ioctl(f.ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	read_all(f.p[0], &check);
	EXPECT_EQ(r.ret, check.bytes);
	EXPECT_EQ(0, check.bad) TH_LOG("%s", check.first_error);
	EXPECT_EQ(0, check.gaps);
	EXPECT_EQ(r.ret, ax_aux_tail(&f.ev));
	full_pipe_end(&f);
}

/* open a flowjit_aux event on the calling task (pid 0, any CPU): -errno */
static int open_own(uint64_t bytes, uint64_t period_ns)
{
	struct perf_event_attr attr;
	int type = ax_pmu_type(), fd;

	if (type < 0)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = bytes;
	attr.config1 = period_ns;
	attr.disabled = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static int write_int(const char *path, int v)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%d\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"

/*
 * The test PMU is for tests: only CAP_PERFMON (or CAP_SYS_ADMIN) may
 * open it, however permissive perf_event_paranoid is. At paranoid 1 an
 * unprivileged user may open events on itself that count the kernel
 * (the PMU has no exclude_* support), which reached it before.
 */
TEST(unprivileged_open_refused)
{
	int paranoid, status, ret;
	pid_t pid;

	if (ax_pmu_type() < 0)
		SKIP(return, "no flowjit_aux PMU (CONFIG_FLOWJIT_AUX_TEST)");
	ASSERT_EQ(0, read_int(PARANOID, &paranoid));
	/* root may: the attr is fine */
	ASSERT_EQ(0, open_own(RATE_BYTES, PERIOD_NS));
	ASSERT_EQ(0, write_int(PARANOID, 1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		ret = open_own(RATE_BYTES, PERIOD_NS);
		_exit(ret == -EACCES ? 0 : ret == -EPERM ? 1 : ret == 0 ? 2 :
		      3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, write_int(PARANOID, paranoid));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_NE(100, WEXITSTATUS(status)) TH_LOG("cannot become nobody");
	EXPECT_GE(1, WEXITSTATUS(status))
		TH_LOG("nobody's open of flowjit_aux: %s",
		       WEXITSTATUS(status) == 2 ? "succeeded" : "other error");
}

/* clock reads a thread on @cpu gets done in @ms */
static uint64_t spin_on_cpu(int cpu, int ms)
{
	struct timespec t0, t;
	uint64_t n = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define BOUND_WINDOWS	7
#define BOUND_MS	100

/*
 * The most work the test PMU can be asked for: the largest write per
 * period at the shortest period, in overwrite mode (never out of
 * space). Its hrtimer runs in hard interrupt context on CPU 0; a thread
 * there must still get a fair share of the CPU, and the event must be
 * closeable. Configs beyond the per-tick bound are refused.
 *
 * Under TCG the guest's clock is the host's, and a host busy with other
 * work takes time from the vCPU unevenly over a second: short windows
 * with and without the event alternate, and the median of their ratios
 * is what is checked.
 */
TEST(pmu_work_is_bounded)
{
	double share[BOUND_WINDOWS];
	uint64_t idle, busy, head = 0, h;
	struct ax_event ev;
	int i;

	if (ax_pmu_type() < 0)
		SKIP(return, "no flowjit_aux PMU (CONFIG_FLOWJIT_AUX_TEST)");
	EXPECT_EQ(-EINVAL, open_own(FJAX_PERIOD_BYTES_MAX + FJAX_REC,
				    PERIOD_NS));
	ASSERT_EQ(0, ax_open(&ev, 0, FJAX_PERIOD_BYTES_MAX, 10000, 64,
			     PROT_READ, 4096, true));
	for (i = 0; i < BOUND_WINDOWS; i++) {
		idle = spin_on_cpu(0, BOUND_MS);
		h = ax_aux_head(&ev);
		ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_ENABLE, 0));
		busy = spin_on_cpu(0, BOUND_MS);
		ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
		head += ax_aux_head(&ev) - h;
		TH_LOG("window %d: loops on CPU 0 in %d ms: %llu alone, %llu with the PMU writing",
		       i, BOUND_MS, (unsigned long long)idle,
		       (unsigned long long)busy);
		ASSERT_LT(0, idle);
		share[i] = (double)busy / idle;
	}
	ax_close(&ev);
	qsort(share, BOUND_WINDOWS, sizeof(share[0]), cmp_double);
	TH_LOG("the thread kept %.0f%% (median; %.0f%% to %.0f%%), the PMU wrote %.1f MB/s",
	       100 * share[BOUND_WINDOWS / 2], 100 * share[0],
	       100 * share[BOUND_WINDOWS - 1],
	       head / (BOUND_WINDOWS * BOUND_MS * 1e3));
	EXPECT_LT(0, head);
	EXPECT_LE(1.0 / 3, share[BOUND_WINDOWS / 2]);
}

FLOWJIT_HARNESS_MAIN
