// SPDX-License-Identifier: GPL-2.0
/*
 * flowjit_ring: read a perf event's ring buffer live (flowjit_ring.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "flowjit_ring.h"

int flowjit_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static size_t flowjit_page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

int flowjit_ring_map(struct flowjit_ring *ring, int fd, size_t data_pages)
{
	size_t page = flowjit_page_size();
	void *p;

	if (!ring || !data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	p = mmap(NULL, (1 + data_pages) * page, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	memset(ring, 0, sizeof(*ring));
	ring->fd = fd;
	ring->page = p;
	ring->data_size = data_pages * page;
	return 0;
}

int flowjit_ring_open(struct flowjit_ring *ring, struct perf_event_attr *attr,
		      pid_t pid, int cpu, size_t data_pages)
{
	int fd, err;

	if (!ring || !attr)
		return -EINVAL;
	fd = flowjit_perf_event_open(attr, pid, cpu);
	if (fd < 0)
		return -errno;
	err = flowjit_ring_map(ring, fd, data_pages);
	if (err)
		close(fd);
	return err;
}

void flowjit_ring_close(struct flowjit_ring *ring)
{
	if (!ring || !ring->page)
		return;
	munmap(ring->page, flowjit_page_size() + ring->data_size);
	close(ring->fd);
	ring->page = NULL;
	ring->fd = -1;
}

/* The count of a PERF_RECORD_LOST record (struct { header; id; lost; }). */
static uint64_t flowjit_lost_count(const struct perf_event_header *hdr)
{
	uint64_t lost = 0;

	if (hdr->size >= sizeof(*hdr) + 2 * sizeof(uint64_t))
		memcpy(&lost, (const char *)(hdr + 1) + sizeof(uint64_t),
		       sizeof(lost));
	return lost;
}

int flowjit_ring_drain(struct flowjit_ring *ring, flowjit_ring_fn fn, void *arg)
{
	/* a record's size is a u16: a wrapped one is copied here */
	union {
		struct perf_event_header	hdr;
		uint64_t			align;
		char				bytes[65536];
	} copy;
	const char *data;
	uint64_t head, tail;
	int n = 0;

	if (!ring || !ring->page || !fn)
		return 0;
	data = (const char *)ring->page + (ring->page->data_offset ?
					   ring->page->data_offset : flowjit_page_size());
	tail = ring->page->data_tail;
	/* pairs with the kernel's smp_wmb() before its data_head update */
	head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
	while (head - tail >= sizeof(struct perf_event_header)) {
		uint64_t off = tail % ring->data_size;
		const struct perf_event_header *hdr;
		struct perf_event_header h;
		size_t first = ring->data_size - off;

		/* records are 8-byte aligned: a header never wraps */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		if (first >= h.size) {
			hdr = (const struct perf_event_header *)(data + off);
		} else {
			memcpy(copy.bytes, data + off, first);
			memcpy(copy.bytes + first, data, h.size - first);
			hdr = &copy.hdr;
		}
		if (hdr->type == PERF_RECORD_LOST)
			ring->lost += flowjit_lost_count(hdr);
		fn(hdr, arg);
		tail += h.size;
		n++;
	}
	/* pairs with the kernel's read of data_tail before it writes */
	__atomic_store_n(&ring->page->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

int flowjit_sample_id_parse(const struct perf_event_header *hdr, uint64_t sample_type,
			    struct flowjit_sample_id *id)
{
	static const uint64_t fields[] = {
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER,
	};
	uint64_t v[6];
	size_t i, n = 0;
	const char *p;

	memset(id, 0, sizeof(*id));
	for (i = 0; i < 6; i++)
		n += !!(sample_type & fields[i]);
	if (hdr->type == PERF_RECORD_SAMPLE ||
	    hdr->size < sizeof(*hdr) + n * sizeof(uint64_t))
		return -EINVAL;
	/* the trailer holds the fields asked for, in the order above */
	p = (const char *)hdr + hdr->size - n * sizeof(uint64_t);
	for (i = 0; i < 6; i++) {
		v[i] = 0;
		if (sample_type & fields[i]) {
			memcpy(&v[i], p, sizeof(v[i]));
			p += sizeof(v[i]);
		}
	}
	/* u32 pairs, as the kernel writes them */
	memcpy(&id->pid, &v[0], sizeof(id->pid));
	memcpy(&id->tid, (const char *)&v[0] + sizeof(id->pid), sizeof(id->tid));
	id->time = v[1];
	id->id = (sample_type & PERF_SAMPLE_IDENTIFIER) ? v[5] : v[2];
	id->stream_id = v[3];
	memcpy(&id->cpu, &v[4], sizeof(id->cpu));
	memcpy(&id->res, (const char *)&v[4] + sizeof(id->cpu), sizeof(id->res));
	return 0;
}
