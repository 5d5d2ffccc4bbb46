/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flowjit_ring: read a perf event's ring buffer live, as a program that
 * consumes flowjit records without perf does (the selftests and the
 * samples): map the ring of an event, hand out each record in it, count
 * what the kernel says it lost.
 *
 * Apart from libflowjit.h (which reads records, wherever they come from)
 * because it is Linux-only: it needs <linux/perf_event.h>, mmap() and
 * perf_event_open(2); libc and the uapi headers are all it needs, so that
 * static programs can build it in ($(LIBFLOWJIT_RING_SRCS) of
 * libflowjit.mk). Tools that read perf.data files do not need it.
 *
 * The ring is the kernel's non-overwrite ring (mapped writable): records
 * are read between data_tail and data_head and data_tail is moved past
 * them once they were handed out, so the kernel never overwrites a record
 * being read; what does not fit is dropped by the kernel and reported by
 * a PERF_RECORD_LOST record, whose counts the reader sums.
 *
 * Functions return 0 or a positive count on success and a negative errno
 * value on failure unless they say otherwise.
 */
#ifndef FLOWJIT_RING_H
#define FLOWJIT_RING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/* One mapped event: embed it; flowjit_ring_open() or _map() fills it. */
struct flowjit_ring {
	int				fd;
	struct perf_event_mmap_page	*page;
	size_t				data_size;	/* bytes of the ring */
	uint64_t			lost;	/* sum of PERF_RECORD_LOST seen */
};

/*
 * The sample_id trailer of a record other than PERF_RECORD_SAMPLE (with
 * attr.sample_id_all): the fields the event's sample_type asks for, the
 * others 0.
 */
struct flowjit_sample_id {
	uint32_t	pid, tid;	/* PERF_SAMPLE_TID */
	uint64_t	time;		/* PERF_SAMPLE_TIME */
	uint64_t	id;		/* PERF_SAMPLE_ID or _IDENTIFIER */
	uint64_t	stream_id;	/* PERF_SAMPLE_STREAM_ID */
	uint32_t	cpu, res;	/* PERF_SAMPLE_CPU */
};

/* perf_event_open(2) with PERF_FLAG_FD_CLOEXEC: an fd, or -1 and errno. */
int flowjit_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu);

/*
 * Map the ring buffer of event @fd: a header page and @data_pages pages
 * of data (a power of 2). On success @ring owns @fd (flowjit_ring_close()
 * closes it); on failure @fd is left open.
 */
int flowjit_ring_map(struct flowjit_ring *ring, int fd, size_t data_pages);

/* Open @attr for (@pid, @cpu) as perf_event_open(2) and map its ring. */
int flowjit_ring_open(struct flowjit_ring *ring, struct perf_event_attr *attr,
		      pid_t pid, int cpu, size_t data_pages);

/* Unmap the ring and close its event; accepts a ring not mapped (page NULL). */
void flowjit_ring_close(struct flowjit_ring *ring);

/*
 * Called for each record: @hdr and the hdr->size bytes it starts are
 * valid until the callback returns (a record that wraps around the end
 * of the ring is handed out as a copy, the others in place).
 */
typedef void (*flowjit_ring_fn)(const struct perf_event_header *hdr, void *arg);

/*
 * Hand out every record now in @ring, oldest first, to @fn, sum the
 * counts of PERF_RECORD_LOST records into ring->lost, and give the space
 * back to the kernel. A record whose size is below its header's stops
 * the reading there (the ring is corrupt). Returns the records handed out.
 * It uses ring->page and ring->data_size only: a ring its caller mapped
 * (with an AUX area, say) is read through a struct filled in by hand.
 */
int flowjit_ring_drain(struct flowjit_ring *ring, flowjit_ring_fn fn, void *arg);

/*
 * Fill @id from the sample_id trailer of @hdr, a record of an event with
 * @sample_type and sample_id_all. Returns -EINVAL (and zeroes @id) for a
 * PERF_RECORD_SAMPLE or a record too short for the trailer.
 */
int flowjit_sample_id_parse(const struct perf_event_header *hdr, uint64_t sample_type,
			    struct flowjit_sample_id *id);

#endif /* FLOWJIT_RING_H */
