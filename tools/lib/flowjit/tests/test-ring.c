// SPDX-License-Identifier: GPL-2.0
/*
 * flowjit_ring: records handed out oldest first, in place or copied when
 * they wrap, PERF_RECORD_LOST summed, data_tail given back; the
 * sample_id trailer read as sample_type says. The ring is a buffer laid
 * out as the kernel maps it, without an event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../flowjit_ring.h"
#include "tap.h"

#define DATA	256	/* bytes of the fake ring */

static uint64_t *mem;	/* header page, then the data */
static struct flowjit_ring ring;
static size_t page;

struct seen {
	int n;
	uint16_t type[16];
	uint16_t size[16];
	uint8_t fill[16];	/* the byte the body is filled with */
	int fill_ok;
};

static void fake_ring(void)
{
	free(mem);
	page = (size_t)sysconf(_SC_PAGESIZE);
	mem = calloc(1, page + DATA);
	memset(&ring, 0, sizeof(ring));
	ring.fd = -1;
	ring.page = (struct perf_event_mmap_page *)mem;
	ring.page->data_offset = page;
	ring.page->data_size = DATA;
	ring.data_size = DATA;
}

/* write a record of @size bytes of @type at ring position @pos */
static void put(uint64_t pos, uint16_t type, uint16_t size, uint8_t fill)
{
	char rec[DATA];
	struct perf_event_header h = { .type = type, .size = size };
	char *data = (char *)mem + page;
	uint16_t i;

	memset(rec, fill, size);
	memcpy(rec, &h, sizeof(h));
	for (i = 0; i < size; i++)
		data[(pos + i) % DATA] = rec[i];
}

static void note(const struct perf_event_header *hdr, void *arg)
{
	struct seen *s = arg;
	const uint8_t *b = (const uint8_t *)(hdr + 1);
	uint16_t i;

	if (s->n == 16)
		return;
	s->type[s->n] = hdr->type;
	s->size[s->n] = hdr->size;
	s->fill[s->n] = b[0];
	for (i = 0; i < hdr->size - sizeof(*hdr); i++)
		s->fill_ok &= b[i] == b[0];
	s->n++;
}

static int test_in_order_and_wrapped(void)
{
	struct seen s = { .fill_ok = 1 };

	fake_ring();
	/* start near the end: the second record wraps around */
	ring.page->data_tail = 4 * DATA + 160;
	put(160, PERF_RECORD_MMAP, 64, 0x11);
	put(224, PERF_RECORD_COMM, 72, 0x22);
	put(40, PERF_RECORD_EXIT, 16, 0x33);
	ring.page->data_head = 4 * DATA + 160 + 64 + 72 + 16;
	TAP_CHECK(flowjit_ring_drain(&ring, note, &s) == 3);
	TAP_CHECK(s.n == 3 && s.fill_ok);
	TAP_CHECK(s.type[0] == PERF_RECORD_MMAP && s.fill[0] == 0x11);
	TAP_CHECK(s.type[1] == PERF_RECORD_COMM && s.size[1] == 72 &&
		  s.fill[1] == 0x22);
	TAP_CHECK(s.type[2] == PERF_RECORD_EXIT && s.fill[2] == 0x33);
	TAP_CHECK(ring.page->data_tail == ring.page->data_head);
	TAP_CHECK(flowjit_ring_drain(&ring, note, &s) == 0 && s.n == 3);
	return 0;
}

static int test_lost_summed(void)
{
	struct seen s = { .fill_ok = 1 };
	char *data;
	uint64_t v;

	fake_ring();
	data = (char *)mem + page;
	put(0, PERF_RECORD_LOST, 24, 0);
	v = 7;
	memcpy(data + 16, &v, sizeof(v));
	put(24, PERF_RECORD_LOST, 24, 0);
	v = 5;
	memcpy(data + 40, &v, sizeof(v));
	ring.page->data_head = 48;
	TAP_CHECK(flowjit_ring_drain(&ring, note, &s) == 2);
	TAP_CHECK(ring.lost == 12);
	return 0;
}

static int test_corrupt_stops(void)
{
	struct seen s = { .fill_ok = 1 };

	fake_ring();
	put(0, PERF_RECORD_EXIT, 16, 1);
	put(16, PERF_RECORD_EXIT, 4, 2);	/* below its header's size */
	ring.page->data_head = 64;
	TAP_CHECK(flowjit_ring_drain(&ring, note, &s) == 1);
	TAP_CHECK(ring.page->data_tail == 16);
	return 0;
}

static int test_sample_id(void)
{
	union {
		struct perf_event_header h;
		uint64_t u[8];
	} r;
	struct flowjit_sample_id id;
	uint64_t t = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		     PERF_SAMPLE_IDENTIFIER;

	memset(&r, 0, sizeof(r));
	r.h.type = PERF_RECORD_EXIT;
	r.h.size = sizeof(r);
	/* trailer: pid/tid, time, cpu/res, identifier */
	r.u[4] = 100 | (101ULL << 32);
	r.u[5] = 123456789;
	r.u[6] = 3;
	r.u[7] = 42;
	TAP_CHECK(flowjit_sample_id_parse(&r.h, t, &id) == 0);
	TAP_CHECK(id.pid == 100 && id.tid == 101 && id.time == 123456789);
	TAP_CHECK(id.cpu == 3 && id.id == 42 && !id.stream_id);
	/* time alone: the last u64 */
	TAP_CHECK(flowjit_sample_id_parse(&r.h, PERF_SAMPLE_TIME, &id) == 0);
	TAP_CHECK(id.time == 42 && !id.pid && !id.cpu);
	r.h.size = 16;
	TAP_CHECK(flowjit_sample_id_parse(&r.h, t, &id) == -EINVAL);
	r.h.type = PERF_RECORD_SAMPLE;
	r.h.size = sizeof(r);
	TAP_CHECK(flowjit_sample_id_parse(&r.h, t, &id) == -EINVAL);
	return 0;
}

static int test_map_checks(void)
{
	struct flowjit_ring r = { .fd = -1 };

	TAP_CHECK(flowjit_ring_map(&r, -1, 3) == -EINVAL);
	TAP_CHECK(flowjit_ring_map(&r, -1, 0) == -EINVAL);
	TAP_CHECK(flowjit_ring_map(&r, -1, 4) < 0);
	flowjit_ring_close(&r);		/* not mapped: nothing to do */
	TAP_CHECK(flowjit_ring_drain(&r, note, NULL) == 0);
	return 0;
}

int main(void)
{
	tap_run(test_in_order_and_wrapped, "ring: records in order, a wrapped one copied");
	tap_run(test_lost_summed, "ring: PERF_RECORD_LOST counts summed");
	tap_run(test_corrupt_stops, "ring: a corrupt size stops the reading");
	tap_run(test_sample_id, "ring: sample_id trailer as sample_type says");
	tap_run(test_map_checks, "ring: map refuses bad sizes, close of an unmapped ring");
	free(mem);
	return tap_exit();
}
