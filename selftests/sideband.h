/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the flowjit selftests: one sideband (dummy) perf event per
 * CPU, each with its own ring buffer, and a reader that walks the records
 * of all of them.
 */
#ifndef FLOWJIT_SELFTEST_SIDEBAND_H
#define FLOWJIT_SELFTEST_SIDEBAND_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#define SB_MAX_CPUS	64
#ifndef SB_DATA_PAGES
#define SB_DATA_PAGES	64	/* ring buffer data pages per CPU */
#endif

/* the sample_id fields every record carries with sample_id_all */
#define SB_SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct sb_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

struct sb_ring {
	int fd;
	struct perf_event_mmap_page *page;
	size_t data_size;
	uint64_t lost;		/* sum of PERF_RECORD_LOST seen */
};

struct sb {
	int nr;
	struct sb_ring ring[SB_MAX_CPUS];
};

/* called with a copy of each record (wrap-around undone) */
typedef void (*sb_record_fn)(const struct perf_event_header *hdr,
			     const struct sb_id *id, void *arg);

static inline int sb_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				     int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1,
		       PERF_FLAG_FD_CLOEXEC);
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

/*
 * Open @attr for task @pid (-1: all tasks) on every online CPU and map
 * each ring buffer. Returns 0 or -errno of the first failure; on failure
 * nothing stays open.
 */
static inline int sb_open_pid(struct sb *sb, struct perf_event_attr *attr,
			      pid_t pid)
{
	long page_size = sysconf(_SC_PAGESIZE);
	int cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i, err;

	memset(sb, 0, sizeof(*sb));
	if (cpus > SB_MAX_CPUS)
		cpus = SB_MAX_CPUS;
	for (i = 0; i < cpus; i++) {
		struct sb_ring *r = &sb->ring[i];
		size_t len = (1 + SB_DATA_PAGES) * page_size;

		r->fd = sb_perf_event_open(attr, pid, i);
		if (r->fd < 0)
			goto fail;
		r->page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       r->fd, 0);
		if (r->page == MAP_FAILED) {
			close(r->fd);
			goto fail;
		}
		r->data_size = SB_DATA_PAGES * page_size;
		sb->nr++;
	}
	return 0;
fail:
	err = -errno;
	while (sb->nr--) {
		munmap(sb->ring[sb->nr].page,
		       sb->ring[sb->nr].data_size + page_size);
		close(sb->ring[sb->nr].fd);
	}
	sb->nr = 0;
	return err;
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
	long page_size = sysconf(_SC_PAGESIZE);
	struct sb_ring *r = &sb->ring[0];
	size_t len = (1 + SB_DATA_PAGES) * page_size;

	memset(sb, 0, sizeof(*sb));
	r->fd = sb_perf_event_open(attr, pid, -1);
	if (r->fd < 0)
		return -errno;
	r->page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->page == MAP_FAILED) {
		int err = -errno;

		close(r->fd);
		return err;
	}
	r->data_size = SB_DATA_PAGES * page_size;
	sb->nr = 1;
	return 0;
}

static inline void sb_close(struct sb *sb)
{
	long page_size = sysconf(_SC_PAGESIZE);
	int i;

	for (i = 0; i < sb->nr; i++) {
		munmap(sb->ring[i].page, sb->ring[i].data_size + page_size);
		close(sb->ring[i].fd);
	}
	sb->nr = 0;
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

/* the sample_id trailer of a non-sample record */
static inline void sb_parse_id(const struct perf_event_header *hdr,
			       struct sb_id *id)
{
	memset(id, 0, sizeof(*id));
	if (hdr->size >= sizeof(*hdr) + sizeof(*id))
		memcpy(id, (const char *)hdr + hdr->size - sizeof(*id),
		       sizeof(*id));
}

/*
 * Consume all records now in every ring buffer, in ring order (records of
 * different CPUs are not merged by time). Returns the number of records.
 */
static inline int sb_drain(struct sb *sb, sb_record_fn fn, void *arg)
{
	static union {
		struct perf_event_header hdr;
		char bytes[65536];
	} rec;
	int i, n = 0;

	for (i = 0; i < sb->nr; i++) {
		struct sb_ring *r = &sb->ring[i];
		const char *data = (const char *)r->page + r->page->data_offset;
		uint64_t head, tail = r->page->data_tail;

		/* pairs with the kernel's smp_wmb() before data_head update */
		head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
		while (tail < head) {
			uint64_t off = tail % r->data_size;
			struct perf_event_header h;
			size_t first;
			struct sb_id id;

			memcpy(&h, data + off, sizeof(h));	/* never wraps */
			if (h.size < sizeof(h))
				break;			/* corrupt: stop */
			first = r->data_size - off;
			if (first > h.size)
				first = h.size;
			memcpy(rec.bytes, data + off, first);
			memcpy(rec.bytes + first, data, h.size - first);
			if (rec.hdr.type == PERF_RECORD_LOST)
				r->lost += ((uint64_t *)(rec.bytes + 8))[1];
			sb_parse_id(&rec.hdr, &id);
			fn(&rec.hdr, &id, arg);
			tail += h.size;
			n++;
		}
		/* pairs with the kernel's read of data_tail before writing */
		__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
	}
	return n;
}

#endif /* FLOWJIT_SELFTEST_SIDEBAND_H */
