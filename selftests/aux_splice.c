// SPDX-License-Identifier: GPL-2.0
/*
 * splice() of perf AUX data (CONFIG_FLOWJIT_AUX_SPLICE), proved with the
 * flowjit_aux test PMU (CONFIG_FLOWJIT_AUX_TEST), which writes sequence
 * numbered records: every byte arrives once and in order, aux_tail moves
 * only when the pipe released the pages, back-pressure gives reported and
 * counted loss, closing the event mid-splice is safe, a user write of
 * aux_tail after the claim and overwrite mode are refused.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "aux_splice.h"
#include "../kselftest_harness.h"

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

/* 2 MiB at 4 MB/s through a pipe, read by another thread */
TEST(every_byte_once_in_order)
{
	struct reader rd = { 0 };
	struct ax_event ev;
	uint64_t total = 0;
	pthread_t th;
	int p[2];
	ssize_t n;

	ASSERT_EQ(0, open_or_skip(_metadata, &ev, RATE_BYTES, 64,
				  PROT_READ | PROT_WRITE, false));
	ASSERT_EQ(0, ax_pipe(p, PIPE_SIZE));
	rd.fd = p[0];
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_main, &rd));
	while (total < (2 << 20)) {
		n = ax_splice(ev.fd, p[1], PIPE_SIZE, 0);
		ASSERT_LT(0, n) TH_LOG("splice: %s", strerror(errno));
		total += n;
	}
	ASSERT_EQ(0, ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0));
	total += splice_all(ev.fd, p[1]);
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);
	ax_drain_aux_records(&ev);

	EXPECT_EQ(0, rd.check.bad) TH_LOG("%s", rd.check.first_error);
	EXPECT_EQ(0, rd.check.gaps);
	EXPECT_EQ(0, ax_lost(&ev));
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

TEST_HARNESS_MAIN
