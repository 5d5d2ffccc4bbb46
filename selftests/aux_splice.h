/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the AUX splice tests and benchmark: events of the
 * flowjit_aux test PMU (kernel/flowjit/aux_test.c), their buffers, the
 * PERF_RECORD_AUX records and a checker of the records the PMU writes.
 */
#ifndef FLOWJIT_SELFTEST_AUX_SPLICE_H
#define FLOWJIT_SELFTEST_AUX_SPLICE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* splice(), F_SETPIPE_SZ */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "flowjit_ring.h"

#define FJAX_MAGIC	0x58414a46u	/* "FJAX" */
#define FJAX_REC	64
/* the most attr.config may ask for, see kernel/flowjit/aux_test.c */
#define FJAX_PERIOD_BYTES_MAX	(64 * 1024)
#define AX_DATA_PAGES	16

/* one record of the test PMU, see kernel/flowjit/aux_test.c */
struct fjax_rec {
	uint32_t magic;
	uint32_t cpu;
	uint64_t seq;
	uint64_t lost;
	uint8_t payload[FJAX_REC - 24];
};

struct ax_event {
	int fd;
	struct perf_event_mmap_page *pg;
	size_t page_size;
	size_t data_size;
	void *aux;
	size_t aux_size;
	/* from PERF_RECORD_AUX */
	uint64_t aux_records, aux_bytes, truncated;
	/* records the data ring had no room for (PERF_RECORD_LOST) */
	uint64_t ring_lost;
	uint64_t trunc_end[256];	/* aux_offset + aux_size of TRUNCATED */
	unsigned int nr_trunc_end;
};

static inline int ax_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/flowjit_aux/type", "r");
	int type = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

static inline void ax_unmap(struct ax_event *ev)
{
	if (ev->aux)
		munmap(ev->aux, ev->aux_size);
	ev->aux = NULL;
	if (ev->pg)
		munmap(ev->pg, ev->page_size + ev->data_size);
	ev->pg = NULL;
}

/*
 * Open a flowjit_aux event on @cpu (all tasks) writing @bytes per tick
 * of @period_ns, started at once unless @disabled. @aux_pages 0: no AUX
 * area; @aux_prot without PROT_WRITE maps it in overwrite mode.
 * Returns 0 or -errno.
 */
static inline int ax_open(struct ax_event *ev, int cpu, uint64_t bytes,
			  uint64_t period_ns, unsigned int aux_pages,
			  int aux_prot, uint32_t watermark, bool disabled)
{
	struct perf_event_attr attr;
	int type = ax_pmu_type();
	void *p;

	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	if (type < 0)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = bytes;
	attr.config1 = period_ns;
	/* attaching a buffer stops an AUX event: enable it after mmap */
	attr.disabled = 1;
	attr.aux_watermark = watermark;
	ev->fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
			 PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0)
		return -errno;
	ev->page_size = sysconf(_SC_PAGESIZE);
	ev->data_size = AX_DATA_PAGES * ev->page_size;
	p = mmap(NULL, ev->page_size + ev->data_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, ev->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	ev->pg = p;
	if (!aux_pages)
		goto enable;
	ev->aux_size = aux_pages * ev->page_size;
	ev->pg->aux_offset = ev->page_size + ev->data_size;
	ev->pg->aux_size = ev->aux_size;
	p = mmap(NULL, ev->aux_size, aux_prot, MAP_SHARED, ev->fd,
		 ev->pg->aux_offset);
	if (p == MAP_FAILED)
		goto fail;
	ev->aux = p;
enable:
	if (!disabled && ioctl(ev->fd, PERF_EVENT_IOC_ENABLE, 0))
		goto fail;
	return 0;
fail:
	{
		int err = -errno;

		ax_unmap(ev);
		close(ev->fd);
		ev->fd = -1;
		return err;
	}
}

static inline void ax_close(struct ax_event *ev)
{
	ax_unmap(ev);
	if (ev->fd >= 0)
		close(ev->fd);
	ev->fd = -1;
}

static inline uint64_t ax_aux_head(struct ax_event *ev)
{
	return __atomic_load_n(&ev->pg->aux_head, __ATOMIC_ACQUIRE);
}

static inline uint64_t ax_aux_tail(struct ax_event *ev)
{
	return __atomic_load_n(&ev->pg->aux_tail, __ATOMIC_ACQUIRE);
}

/* records lost so far: the count of a flowjit_aux event */
static inline uint64_t ax_lost(struct ax_event *ev)
{
	uint64_t v = 0;

	if (read(ev->fd, &v, sizeof(v)) != sizeof(v))
		return UINT64_MAX;
	return v;
}

/*
 * count a PERF_RECORD_AUX record (aux_offset, aux_size, flags), and the
 * records a PERF_RECORD_LOST says the data ring dropped
 */
static inline void ax_note_aux(const struct perf_event_header *hdr, void *arg)
{
	struct ax_event *ev = arg;
	uint64_t rec[3];

	if (hdr->type == PERF_RECORD_LOST &&
	    hdr->size >= sizeof(*hdr) + 2 * sizeof(uint64_t)) {
		memcpy(rec, hdr + 1, 2 * sizeof(uint64_t));	/* id, lost */
		ev->ring_lost += rec[1];
		return;
	}
	if (hdr->type != PERF_RECORD_AUX ||
	    hdr->size < sizeof(*hdr) + sizeof(rec))
		return;
	memcpy(rec, hdr + 1, sizeof(rec));
	ev->aux_records++;
	ev->aux_bytes += rec[1];
	if (rec[2] & PERF_AUX_FLAG_TRUNCATED) {
		ev->truncated++;
		if (ev->nr_trunc_end < 256)
			ev->trunc_end[ev->nr_trunc_end++] = rec[0] + rec[1];
	}
}

/*
 * read the PERF_RECORD_AUX records of the data ring, with
 * tools/lib/flowjit's reader (the event maps its ring with its AUX area)
 */
static inline void ax_drain_aux_records(struct ax_event *ev)
{
	struct flowjit_ring ring = {
		.fd = ev->fd, .page = ev->pg, .data_size = ev->data_size,
	};

	flowjit_ring_drain(&ring, ax_note_aux, ev);
}

static inline bool ax_is_trunc_end(struct ax_event *ev, uint64_t pos)
{
	unsigned int i;

	for (i = 0; i < ev->nr_trunc_end; i++)
		if (ev->trunc_end[i] == pos)
			return true;
	return false;
}

/* checks a byte stream of records, in whatever pieces it arrives */
struct ax_check {
	uint64_t bytes;		/* stream bytes seen */
	uint64_t records;
	uint64_t next_seq;
	uint64_t gaps, lost;	/* sequence gaps and records missing */
	uint64_t bad;		/* records with wrong contents */
	uint64_t gap_pos[64];	/* stream offsets of the gaps */
	unsigned int nr_gap_pos;
	char first_error[128];
	uint8_t part[FJAX_REC];
	size_t part_len;
};

static inline void ax_check_rec(struct ax_check *c, const struct fjax_rec *r)
{
	uint64_t pos = c->bytes - FJAX_REC;
	size_t i;
	bool ok = r->magic == FJAX_MAGIC && r->seq >= c->next_seq;

	if (ok && r->seq > c->next_seq) {
		c->gaps++;
		c->lost += r->seq - c->next_seq;
		if (c->nr_gap_pos < 64)
			c->gap_pos[c->nr_gap_pos++] = pos;
	}
	/* every record knows how many were lost before it */
	if (ok && r->lost != r->seq - c->records)
		ok = false;
	for (i = 0; ok && i < sizeof(r->payload); i++)
		ok = r->payload[i] == (uint8_t)(r->seq * 7 + i);
	if (!ok) {
		if (!c->bad)
			snprintf(c->first_error, sizeof(c->first_error),
				 "record at byte %llu: magic %x seq %llu (want >= %llu) lost %llu",
				 (unsigned long long)pos, r->magic,
				 (unsigned long long)r->seq,
				 (unsigned long long)c->next_seq,
				 (unsigned long long)r->lost);
		c->bad++;
	} else {
		c->next_seq = r->seq + 1;
	}
	c->records++;
}

static inline void ax_check_feed(struct ax_check *c, const void *buf,
				 size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		size_t n = FJAX_REC - c->part_len;

		if (n > len)
			n = len;
		memcpy(c->part + c->part_len, p, n);
		c->part_len += n;
		c->bytes += n;
		p += n;
		len -= n;
		if (c->part_len == FJAX_REC) {
			ax_check_rec(c, (const struct fjax_rec *)c->part);
			c->part_len = 0;
		}
	}
}

static inline int ax_pipe(int fds[2], int size)
{
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	if (size && fcntl(fds[1], F_SETPIPE_SZ, size) < 0)
		return -errno;
	return 0;
}

static inline ssize_t ax_splice(int from, int to, size_t len,
				unsigned int flags)
{
	return splice(from, NULL, to, NULL, len, flags);
}

#endif
