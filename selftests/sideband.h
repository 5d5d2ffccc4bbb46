/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the flowjit selftests: one sideband (dummy) perf event per
 * CPU, each with its own ring buffer, and a reader that walks the records
 * of all of them. Each ring is tools/lib/flowjit's flowjit_ring, as the
 * samples read theirs.
 */
#ifndef FLOWJIT_SELFTEST_SIDEBAND_H
#define FLOWJIT_SELFTEST_SIDEBAND_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "flowjit_ring.h"

#define SB_MAX_CPUS	64
#ifndef SB_DATA_PAGES
#define SB_DATA_PAGES	64	/* ring buffer data pages per CPU */
#endif

/* the sample_id fields every record carries with sample_id_all */
#define SB_SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* the rings of one event per CPU (or one, sb_open_task()) */
struct sb {
	int nr;
	struct flowjit_ring ring[SB_MAX_CPUS];
};

/* called with each record (wrap-around undone) and its sample_id */
typedef void (*sb_record_fn)(const struct perf_event_header *hdr,
			     const struct flowjit_sample_id *id, void *arg);

static inline int sb_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				     int cpu)
{
	return flowjit_perf_event_open(attr, pid, cpu);
}

static inline void sb_attr_init(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->sample_type = SB_SAMPLE_TYPE;
	attr->sample_id_all = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = 1;
}

static inline void sb_close(struct sb *sb)
{
	int i;

	for (i = 0; i < sb->nr; i++)
		flowjit_ring_close(&sb->ring[i]);
	sb->nr = 0;
}

/*
 * Open @attr for task @pid (-1: all tasks) on every online CPU and map
 * each ring buffer. Returns 0 or -errno of the first failure; on failure
 * nothing stays open.
 */
static inline int sb_open_pid(struct sb *sb, struct perf_event_attr *attr,
			      pid_t pid)
{
	int cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i, err;

	memset(sb, 0, sizeof(*sb));
	if (cpus > SB_MAX_CPUS)
		cpus = SB_MAX_CPUS;
	for (i = 0; i < cpus; i++) {
		err = flowjit_ring_open(&sb->ring[i], attr, pid, i,
					SB_DATA_PAGES);
		if (err) {
			sb_close(sb);
			return err;
		}
		sb->nr++;
	}
	return 0;
}

/* Open @attr on every online CPU, system-wide. */
static inline int sb_open(struct sb *sb, struct perf_event_attr *attr)
{
	return sb_open_pid(sb, attr, -1);
}

/* Open @attr on task @pid (0: self), any CPU, with one ring buffer. */
static inline int sb_open_task(struct sb *sb, struct perf_event_attr *attr,
			       pid_t pid)
{
	int err;

	memset(sb, 0, sizeof(*sb));
	err = flowjit_ring_open(&sb->ring[0], attr, pid, -1, SB_DATA_PAGES);
	if (!err)
		sb->nr = 1;
	return err;
}

/* write @s to @path (a sysctl, a tracefs file); returns 0 or -errno */
static inline int sb_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * Run @fn in a child that dropped to nobody (uid and gid 65534). Returns
 * its exit status: what @fn returned, 10 if dropping failed, or -1 if
 * the child did not exit normally.
 */
static inline int sb_run_as_nobody(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(10);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * kernel.perf_event_paranoid. Debian's kernels (its patch "Add sysctl to
 * disallow unprivileged perf", CONFIG_SECURITY_PERF_EVENTS_RESTRICT)
 * default it to 3: perf_event_open() needs CAP_SYS_ADMIN, CAP_PERFMON is
 * not enough. The tests of what an unprivileged user may do with flowjit
 * lower it to upstream's default 2, as an administrator who allows perf
 * does, and put it back. Returns the value it had, -1 if unreadable.
 */
#define SB_PARANOID	"/proc/sys/kernel/perf_event_paranoid"

static inline int sb_paranoid(void)
{
	FILE *f = fopen(SB_PARANOID, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static inline int sb_set_paranoid(int v)
{
	FILE *f = fopen(SB_PARANOID, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%d\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* lower perf_event_paranoid to @max if above; returns the old value */
static inline int sb_paranoid_at_most(int max)
{
	int old = sb_paranoid();

	if (old > max)
		sb_set_paranoid(max);
	return old;
}

static inline void sb_paranoid_restore(int old)
{
	if (old >= 0 && sb_paranoid() != old)
		sb_set_paranoid(old);
}

struct sb_drain_ctx {
	sb_record_fn fn;
	void *arg;
};

static inline void sb_drain_one(const struct perf_event_header *hdr,
				void *arg)
{
	struct sb_drain_ctx *ctx = arg;
	struct flowjit_sample_id id;

	flowjit_sample_id_parse(hdr, SB_SAMPLE_TYPE, &id);
	ctx->fn(hdr, &id, ctx->arg);
}

/*
 * Consume all records now in every ring buffer, in ring order (records of
 * different CPUs are not merged by time). Returns the number of records.
 */
static inline int sb_drain(struct sb *sb, sb_record_fn fn, void *arg)
{
	struct sb_drain_ctx ctx = { .fn = fn, .arg = arg };
	int i, n = 0;

	for (i = 0; i < sb->nr; i++)
		n += flowjit_ring_drain(&sb->ring[i], sb_drain_one, &ctx);
	return n;
}

#endif /* FLOWJIT_SELFTEST_SIDEBAND_H */
