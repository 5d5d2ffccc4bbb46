// SPDX-License-Identifier: GPL-2.0
/*
 * AUX output cost: splice() vs mmap + write(), with the flowjit_aux test
 * PMU writing at a fixed rate on CPU 0. Prints BENCH lines.
 *
 * CPU is system-wide busy time from /proc/stat (user, nice, system, irq,
 * softirq, steal of all CPUs): the consumer, the pipe's reader process,
 * kernel work on their behalf and the PMU's own hrtimer all count.
 * "task" is getrusage() of the consumer and the sink process only: exact
 * run time (split by ticks), but blind to interrupts and other tasks.
 * "base" runs the PMU at the same rate in overwrite mode with no consumer
 * at all: what generating the data costs. "net" subtracts it.
 *
 * --idle-meter: busy time is the run's time minus what a SCHED_IDLE
 * spinner on each CPU ran (its exact run time). For QEMU's instruction
 * counting (one vCPU, idle time skipped to the next timer), where every
 * periodic tick lands in idle and /proc/stat's busy ticks read 0.
 *
 *   aux_drain_ratio: the cheapest way to storage (net CPU per MB) over
 *   write(): to the disk if the guest has one (/dev/vda: write(),
 *   splice() and O_DIRECT), else to the tmpfs file (write() and
 *   splice(); tmpfs has no O_DIRECT in 6.1). aux_drain_tmpfs_ratio is
 *   always the tmpfs file's.
 *
 *   file:  consumer -> a tmpfs file
 *   pipe:  consumer -> a pipe read (and dropped) by a child process
 *   disk:  consumer -> the block device /dev/vda (written from its
 *          start, wrapping at its end; no file system)
 *   write: poll(), write() from the AUX mmap, aux_tail update
 *   splice: poll(), splice() event fd -> pipe (-> file or disk)
 *   direct: poll(), O_DIRECT write() of the whole pages from the AUX
 *          mmap (the disk only; the last partial page through a bounce
 *          page at the end): the device reads the AUX pages, no copy
 *
 * The guest kernel runs with lockdep: the bench sets
 * kernel.prove_locking=0, but lock tracking and the other debug options
 * of the test kernel stay.
 *
 * Usage: aux_splice_bench [--idle-meter] [MB/s [seconds [repeats]]]
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "aux_splice.h"

#define AUX_PAGES	256		/* 1 MiB AUX area */
#define PIPE_SIZE	(1024 * 1024)

enum { M_WRITE, M_SPLICE, M_DIRECT, M_BASE };
enum { D_FILE, D_PIPE, D_DISK };
#define NMODES	3
#define NDESTS	3

static const char * const mname[] = { "write", "splice", "direct", "base" };
static const char * const dname[] = { "file", "pipe", "disk" };

/* the disk (D_DISK), its size, where the next write goes */
static const char *disk;
static uint64_t disk_size, disk_pos;
static int disk_fd = -1;

/* does mode @m go to dest @d? */
static bool measured(int m, int d)
{
	if (d == D_DISK && !disk)
		return false;
	return m != M_DIRECT || d == D_DISK;
}

struct result {
	double busy_s;		/* system-wide busy CPU seconds */
	double task_s;		/* consumer + sink: getrusage() */
	double mb;		/* MB moved (10^6 bytes) */
	uint64_t lost;		/* records lost */
	uint64_t truncated;
};

static uint64_t busy_ticks(void)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8)
		return 0;
	/* all but idle (3) and iowait (4) */
	return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

/* SCHED_IDLE spinners, one per CPU, for --idle-meter; nmeters 0 without */
static pid_t meters[64];
static int nmeters;

static void start_meters(void)
{
	struct sched_param sp = { 0 };
	int n = sysconf(_SC_NPROCESSORS_ONLN), i;
	cpu_set_t set;

	for (i = 0; i < n && i < 64; i++) {
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0) {
			CPU_ZERO(&set);
			CPU_SET(i, &set);
			sched_setaffinity(0, sizeof(set), &set);
			sched_setscheduler(0, SCHED_IDLE, &sp);
			for (;;)
				;
		}
		meters[nmeters++] = pid;
	}
}

static void stop_meters(void)
{
	while (nmeters--) {
		kill(meters[nmeters], SIGKILL);
		waitpid(meters[nmeters], NULL, 0);
	}
}

/* CPU seconds the spinners ran */
static double meters_s(void)
{
	struct timespec ts;
	clockid_t clk;
	double s = 0;
	int i;

	for (i = 0; i < nmeters; i++)
		if (!clock_getcpuclockid(meters[i], &clk) &&
		    !clock_gettime(clk, &ts))
			s += ts.tv_sec + ts.tv_nsec / 1e9;
	return s;
}

static double ru_s(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the pipe's far end: a process that reads and drops everything */
static pid_t start_sink(int *wfd)
{
	static char buf[65536];
	int p[2];
	pid_t pid;

	if (ax_pipe(p, PIPE_SIZE))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

/* the disk's next @len bytes: from its start again at its end */
static off_t disk_at(size_t len)
{
	if (disk_pos + len > disk_size)
		disk_pos = 0;
	disk_pos += len;
	return disk_pos - len;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = fd == disk_fd ? pwrite(fd, p, len, disk_at(len)) :
					    write(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* mmap + write(): what perf record does today */
static uint64_t consume_write(struct ax_event *ev, int out)
{
	uint64_t tail = ax_aux_tail(ev), head = ax_aux_head(ev);
	uint64_t moved = head - tail;

	while (tail != head) {
		size_t off = tail & (ev->aux_size - 1);
		size_t len = head - tail;

		if (len > ev->aux_size - off)
			len = ev->aux_size - off;
		if (write_all(out, (char *)ev->aux + off, len))
			return 0;
		tail += len;
	}
	__atomic_store_n(&ev->pg->aux_tail, tail, __ATOMIC_RELEASE);
	return moved;
}

/*
 * O_DIRECT: the whole pages from the AUX mmap, straight to the device;
 * what is left of a page waits for more data, or (@last) goes through a
 * bounce page padded with zeros. Returns the bytes moved, 0 on error.
 */
static uint64_t consume_direct(struct ax_event *ev, int out, bool last)
{
	uint64_t tail = ax_aux_tail(ev), head = ax_aux_head(ev);
	size_t page = ev->page_size;
	uint64_t end = head & ~(uint64_t)(page - 1);
	uint64_t moved = 0;

	if (end < tail)
		end = tail;
	while (tail < end) {
		size_t off = tail & (ev->aux_size - 1);
		size_t len = end - tail;
		ssize_t n;

		if (len > ev->aux_size - off)
			len = ev->aux_size - off;
		n = pwrite(out, (char *)ev->aux + off, len, disk_at(len));
		if (n != (ssize_t)len)
			return 0;
		tail += len;
		moved += len;
	}
	if (last && head > tail) {
		void *b;

		if (posix_memalign(&b, page, page))
			return 0;
		memset(b, 0, page);
		memcpy(b, (char *)ev->aux + (tail & (ev->aux_size - 1)),
		       head - tail);
		if (pwrite(out, b, page, disk_at(page)) != (ssize_t)page) {
			free(b);
			return 0;
		}
		free(b);
		moved += head - tail;
		tail = head;
	}
	__atomic_store_n(&ev->pg->aux_tail, tail, __ATOMIC_RELEASE);
	return moved;
}

/*
 * splice(): by reference into @pipe_w; to a file through @pipe_r. @pos is
 * how much was spliced so far; like write(), it blocks on a full pipe.
 */
static uint64_t consume_splice(struct ax_event *ev, int out, int pipe_w,
			       int pipe_r, uint64_t pos)
{
	uint64_t left = ax_aux_head(ev) - pos, moved = 0;
	ssize_t n, m;

	while (left) {
		n = splice(ev->fd, NULL, pipe_w, NULL, left, 0);
		if (n <= 0)
			break;
		moved += n;
		left -= n;
		while (pipe_r >= 0 && n > 0) {
			loff_t at = out == disk_fd ? disk_at(n) : 0;

			m = splice(pipe_r, NULL, out, out == disk_fd ? &at : NULL,
				   n, SPLICE_F_MOVE);
			if (m <= 0)
				return moved;
			n -= m;
		}
	}
	return moved;
}

static int run(int mode, int dest, double mbps, double secs,
	       struct result *res)
{
	uint64_t bytes = mbps * 1e6 / 1000;	/* per ms */
	/* the PMU writes at most FJAX_PERIOD_BYTES_MAX a period */
	uint64_t ticks = (bytes + FJAX_PERIOD_BYTES_MAX - 1) /
			 FJAX_PERIOD_BYTES_MAX;
	int out = -1, pw = -1, pr = -1, p[2];
	uint64_t b0, moved = 0;
	struct rusage ru0, ru1, ruc;
	struct ax_event ev;
	pid_t sink = -1;
	double t0, m0;
	int ret;

	memset(res, 0, sizeof(*res));
	if (dest == D_DISK) {
		out = open(disk, O_WRONLY | (mode == M_DIRECT ? O_DIRECT : 0));
		if (out < 0)
			return -errno;
		disk_fd = out;
		disk_pos = 0;
	} else if (dest == D_FILE) {
		out = open("/tmp/aux_bench.out", O_CREAT | O_TRUNC | O_WRONLY,
			   0600);
		if (out < 0)
			return -errno;
	} else {
		sink = start_sink(&out);
		if (sink < 0)
			return -EPIPE;
	}
	if (mode == M_SPLICE) {
		if (dest != D_PIPE) {
			if (ax_pipe(p, PIPE_SIZE))
				return -errno;
			pr = p[0];
			pw = p[1];
		} else {
			pw = out;	/* straight into the sink's pipe */
		}
	}
	ret = ax_open(&ev, 0, bytes / ticks, 1000000 / ticks, AUX_PAGES,
		      mode == M_BASE ? PROT_READ : PROT_READ | PROT_WRITE,
		      65536, false);
	if (ret)
		return ret;
	getrusage(RUSAGE_SELF, &ru0);
	b0 = busy_ticks();
	m0 = meters_s();
	t0 = now_s();
	while (now_s() - t0 < secs) {
		struct pollfd pfd = { .fd = ev.fd, .events = POLLIN };

		if (mode == M_BASE) {
			usleep(100000);
			continue;
		}
		poll(&pfd, 1, 10);
		if (mode == M_WRITE)
			moved += consume_write(&ev, out);
		else if (mode == M_DIRECT)
			moved += consume_direct(&ev, out, false);
		else
			moved += consume_splice(&ev, out, pw, pr, moved);
	}
	ioctl(ev.fd, PERF_EVENT_IOC_DISABLE, 0);
	if (mode == M_WRITE)
		moved += consume_write(&ev, out);
	else if (mode == M_DIRECT)
		moved += consume_direct(&ev, out, true);
	else if (mode == M_SPLICE)
		moved += consume_splice(&ev, out, pw, pr, moved);
	if (dest == D_DISK)
		fsync(out);	/* written back: the device's work counted */
	if (nmeters)
		res->busy_s = (now_s() - t0) * nmeters - (meters_s() - m0);
	else
		res->busy_s = (double)(busy_ticks() - b0) /
			      sysconf(_SC_CLK_TCK);
	getrusage(RUSAGE_SELF, &ru1);
	res->task_s = ru_s(&ru1) - ru_s(&ru0);
	res->mb = (mode == M_BASE ? ax_aux_head(&ev) : moved) / 1e6;
	res->lost = ax_lost(&ev);
	ax_drain_aux_records(&ev);
	res->truncated = mode == M_BASE ? 0 : ev.truncated;
	ax_close(&ev);
	if (pr >= 0)
		close(pr);
	if (pw >= 0 && pw != out)
		close(pw);
	close(out);
	disk_fd = -1;
	memset(&ruc, 0, sizeof(ruc));
	if (sink > 0)
		wait4(sink, NULL, 0, &ruc);
	res->task_s += ru_s(&ruc);
	unlink("/tmp/aux_bench.out");
	return 0;
}

static double median(double *v, int n)
{
	int i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (v[j] < v[i]) {
				double t = v[i];

				v[i] = v[j];
				v[j] = t;
			}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	bool meter = argc > 1 && !strcmp(argv[1], "--idle-meter");
	double mbps = argc > 1 + meter ? atof(argv[1 + meter]) : 32;
	double secs = argc > 2 + meter ? atof(argv[2 + meter]) : 3;
	int reps = argc > 3 + meter ? atoi(argv[3 + meter]) : 5;
	double cpu[NMODES][NDESTS][16], task[NMODES][NDESTS][16], base[16];
	double rates[] = { 16, 32, 64, 128, 256, 512, 0 };
	double c[NMODES][NDESTS], t[NMODES][NDESTS];
	struct stat st;
	struct result r;
	int m, d, i, k, err;

	if (reps > 16)
		reps = 16;
	signal(SIGPIPE, SIG_IGN);
	/*
	 * The test kernel has lockdep, which charges every lock taken; the
	 * splice path takes more locks per byte than write(). Switch the
	 * validation off (lock tracking itself stays) and say so.
	 */
	{
		FILE *f = fopen("/proc/sys/kernel/prove_locking", "w");

		if (f) {
			printf("# kernel.prove_locking=0 for the bench: %s\n",
			       fputs("0", f) < 0 || fclose(f) ? "failed" : "ok");
		} else {
			printf("# kernel.prove_locking: not there\n");
		}
	}
	if (!stat("/dev/vda", &st) && S_ISBLK(st.st_mode)) {
		int fd = open("/dev/vda", O_RDONLY);

		if (fd >= 0 && !ioctl(fd, BLKGETSIZE64, &disk_size) &&
		    disk_size >= (64 << 20))
			disk = "/dev/vda";
		if (fd >= 0)
			close(fd);
	}
	printf("# disk: %s\n", disk ? "/dev/vda" : "none (no O_DIRECT)");
	if (meter) {
		start_meters();
		printf("# busy time: run time minus %d SCHED_IDLE spinners\n",
		       nmeters);
	}
	/* CPU per MB at a fixed rate, modes interleaved */
	for (i = 0; i < reps; i++) {
		err = run(M_BASE, D_FILE, mbps, secs, &r);
		if (err) {
			printf("# base run failed: %s\n", strerror(-err));
			return 1;
		}
		if (r.mb <= 0)
			return 1;
		base[i] = r.busy_s / r.mb * 1000;
		printf("# rep %d base: %.2f CPU-s in %.1f s, %.1f MB generated\n",
		       i, r.busy_s, secs, r.mb);
		for (d = 0; d < NDESTS; d++)
			for (m = 0; m < NMODES; m++) {
				if (!measured(m, d))
					continue;
				err = run(m, d, mbps, secs, &r);
				if (err) {
					printf("# %s to %s failed: %s\n", mname[m],
					       dname[d], strerror(-err));
					return 1;
				}
				printf("# rep %d %s-%s: %.2f CPU-s (tasks %.3f), ",
				       i, mname[m], dname[d], r.busy_s, r.task_s);
				printf("%.1f MB, lost %llu, truncated %llu\n", r.mb,
				       (unsigned long long)r.lost,
				       (unsigned long long)r.truncated);
				if (r.mb <= 0)
					return 1;
				cpu[m][d][i] = r.busy_s / r.mb * 1000;
				task[m][d][i] = r.task_s / r.mb * 1000;
			}
	}
	for (d = 0; d < NDESTS; d++)
		for (m = 0; m < NMODES; m++) {
			double v[16];

			if (!measured(m, d))
				continue;
			for (i = 0; i < reps; i++)
				v[i] = cpu[m][d][i];
			c[m][d] = median(v, reps);
			printf("BENCH aux_%s_%s_cpu_ms_per_mb %.2f ms/MB\n",
			       mname[m], dname[d], c[m][d]);
			for (i = 0; i < reps; i++)
				v[i] = task[m][d][i];
			t[m][d] = median(v, reps);
			printf("BENCH aux_%s_%s_task_ms_per_mb %.2f ms/MB\n",
			       mname[m], dname[d], t[m][d]);
		}
	{
		double b = median(base, reps);

		printf("BENCH aux_base_cpu_ms_per_mb %.2f ms/MB\n", b);
		printf("BENCH aux_splice_cpu_ratio %.3f ratio\n",
		       c[M_SPLICE][D_FILE] / c[M_WRITE][D_FILE]);
		printf("BENCH aux_splice_pipe_cpu_ratio %.3f ratio\n",
		       c[M_SPLICE][D_PIPE] / c[M_WRITE][D_PIPE]);
		printf("BENCH aux_splice_task_ratio %.3f ratio\n",
		       t[M_SPLICE][D_FILE] / t[M_WRITE][D_FILE]);
		printf("BENCH aux_splice_pipe_task_ratio %.3f ratio\n",
		       t[M_SPLICE][D_PIPE] / t[M_WRITE][D_PIPE]);
		if (c[M_WRITE][D_FILE] > b && c[M_SPLICE][D_FILE] > b)
			printf("BENCH aux_splice_cpu_ratio_net %.3f ratio\n",
			       (c[M_SPLICE][D_FILE] - b) /
			       (c[M_WRITE][D_FILE] - b));
		if (c[M_WRITE][D_PIPE] > b && c[M_SPLICE][D_PIPE] > b)
			printf("BENCH aux_splice_pipe_cpu_ratio_net %.3f ratio\n",
			       (c[M_SPLICE][D_PIPE] - b) /
			       (c[M_WRITE][D_PIPE] - b));
		/* to storage: the cheapest path measured over write() */
		if (c[M_WRITE][D_FILE] > b && c[M_SPLICE][D_FILE] > b)
			printf("BENCH aux_drain_tmpfs_ratio %.3f ratio\n",
			       c[M_SPLICE][D_FILE] < c[M_WRITE][D_FILE] ?
			       (c[M_SPLICE][D_FILE] - b) /
			       (c[M_WRITE][D_FILE] - b) : 1.0);
		if (disk && c[M_WRITE][D_DISK] > b) {
			int best = M_WRITE;

			for (m = 0; m < NMODES; m++)
				if (c[m][D_DISK] < c[best][D_DISK])
					best = m;
			/*
			 * Busy time from ticks (2 vCPUs, wall time) can read
			 * 0 for a path that costs little: no tick landed in
			 * it. Then the exact task times give the ratio.
			 */
			if (c[best][D_DISK] > b)
				printf("BENCH aux_drain_ratio %.3f ratio\n",
				       (c[best][D_DISK] - b) /
				       (c[M_WRITE][D_DISK] - b));
			else
				printf("BENCH aux_drain_ratio %.3f ratio\n"
				       "# aux_drain: %s below the busy time's resolution: task times\n",
				       t[best][D_DISK] / t[M_WRITE][D_DISK],
				       mname[best]);
			printf("# aux_drain: to the disk, %s() the cheapest\n",
			       best == M_DIRECT ? "O_DIRECT write" : mname[best]);
			if (c[M_DIRECT][D_DISK] > b)
				printf("BENCH aux_direct_disk_cpu_ratio_net %.3f ratio\n",
				       (c[M_DIRECT][D_DISK] - b) /
				       (c[M_WRITE][D_DISK] - b));
		} else if (c[M_WRITE][D_FILE] > b && c[M_SPLICE][D_FILE] > b) {
			printf("BENCH aux_drain_ratio %.3f ratio\n",
			       c[M_SPLICE][D_FILE] < c[M_WRITE][D_FILE] ?
			       (c[M_SPLICE][D_FILE] - b) /
			       (c[M_WRITE][D_FILE] - b) : 1.0);
			printf("# aux_drain: to the tmpfs file (no disk)\n");
		}
	}
	stop_meters();
	/* the highest rate each way keeps up with, without loss */
	for (d = 0; d < NDESTS; d++)
		for (m = 0; m < NMODES; m++) {
			double best = 0, got = 0;

			if (!measured(m, d))
				continue;
			for (k = 0; rates[k]; k++) {
				err = run(m, d, rates[k], 1, &r);
				if (err)
					return 1;
				printf("# %s-%s at %.0f MB/s: %.1f MB, lost %llu\n",
				       mname[m], dname[d], rates[k], r.mb,
				       (unsigned long long)r.lost);
				if (r.lost || r.truncated)
					break;
				best = rates[k];
				got = r.mb;
			}
			printf("BENCH aux_%s_%s_max_lossless %.0f MB/s\n",
			       mname[m], dname[d], best);
			printf("# %s-%s moved %.1f MB in 1 s at that rate\n",
			       mname[m], dname[d], got);
		}
	printf("# rate %.1f MB/s, %.1f s per run, %d repeats, TCG guest\n",
	       mbps, secs, reps);
	return 0;
}
