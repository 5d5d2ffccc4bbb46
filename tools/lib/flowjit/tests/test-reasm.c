// SPDX-License-Identifier: GPL-2.0
/*
 * flowjit_reasm: images from chunks in any order, the CRC-32C checked;
 * what is dropped is counted; the pending set stays bounded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../libflowjit.h"
#include "tap.h"

static uint8_t bytes[3 * FLOWJIT_CHUNK_MAX + 100];

static void fill(uint32_t seed)
{
	size_t i;

	for (i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7 + seed);
}

/* chunk [off, off + n) of an image of @len bytes at @addr */
static void chunk(struct flowjit_chunk *c, uint64_t addr, uint64_t len,
		  uint32_t off, uint32_t n, uint32_t csum)
{
	memset(c, 0, sizeof(*c));
	c->rec.version = FLOWJIT_RECORD_VERSION;
	c->rec.kind = FLOWJIT_KIND_USER_JIT;
	c->rec.op = FLOWJIT_OP_IMAGE;
	c->rec.asid = 1;
	c->rec.pid = 100;
	c->rec.addr = addr;
	c->rec.len = len;
	c->rec.revision = 1;
	c->rec.csum = csum;
	c->rec.chunk_off = off;
	c->rec.chunk_len = n;
	c->bytes = bytes + off;
}

static int in_order(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;
	uint32_t csum, off, len = 2 * FLOWJIT_CHUNK_MAX + 100;

	fill(1);
	csum = flowjit_csum(bytes, len);
	flowjit_reasm_init(&ra);
	for (off = 0; off < len; off += FLOWJIT_CHUNK_MAX) {
		uint32_t n = len - off < FLOWJIT_CHUNK_MAX ? len - off : FLOWJIT_CHUNK_MAX;

		chunk(&c, 0x1000, len, off, n, csum);
		TAP_CHECK(flowjit_reasm_add(&ra, &c, 10 + off, &img) ==
			  (off + n == len));
	}
	TAP_CHECK(!memcmp(img.bytes, bytes, len) && img.rec.len == len);
	TAP_CHECK(img.time == 10 && img.rec.addr == 0x1000);
	TAP_CHECK(ra.counts.complete == 1 && ra.nr_pending == 0);
	free(img.bytes);
	flowjit_reasm_fini(&ra);
	return 0;
}

static int out_of_order(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;
	uint32_t csum, len = 10000;

	fill(2);
	csum = flowjit_csum(bytes, len);
	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, len, 8192, len - 8192, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	chunk(&c, 0x1000, len, 0, 4096, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 6, &img) == 0);
	chunk(&c, 0x1000, len, 4096, 4096, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 7, &img) == 1);
	TAP_CHECK(!memcmp(img.bytes, bytes, len) && img.time == 5);
	free(img.bytes);
	flowjit_reasm_flush(&ra);
	TAP_CHECK(ra.counts.complete == 1 && ra.counts.incomplete == 0);
	flowjit_reasm_fini(&ra);
	return 0;
}

static int missing_chunk(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;

	fill(3);
	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, 8192, 0, 4096, flowjit_csum(bytes, 8192));
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	TAP_CHECK(ra.nr_pending == 1);
	flowjit_reasm_flush(&ra);
	TAP_CHECK(ra.counts.incomplete == 1 && ra.counts.complete == 0);
	TAP_CHECK(ra.nr_pending == 0 && ra.pending_bytes == 0);
	flowjit_reasm_fini(&ra);
	return 0;
}

static int bad_csum(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;
	uint32_t csum;

	fill(4);
	csum = flowjit_csum(bytes, 100) ^ 0x100;
	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, 100, 0, 50, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	chunk(&c, 0x1000, 100, 50, 50, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	TAP_CHECK(ra.counts.bad_csum == 1 && ra.nr_pending == 0);
	flowjit_reasm_fini(&ra);
	return 0;
}

static int overlap(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;
	uint32_t csum;

	fill(5);
	csum = flowjit_csum(bytes, 100);
	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, 100, 0, 60, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	chunk(&c, 0x1000, 100, 40, 60, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	TAP_CHECK(ra.counts.overlap == 1 && ra.counts.complete == 0);
	TAP_CHECK(ra.nr_pending == 0);
	flowjit_reasm_fini(&ra);
	return 0;
}

/* a lost chunk, then the image again from its head: the new copy counts */
static int head_restarts(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;
	uint32_t csum;

	fill(8);
	csum = flowjit_csum(bytes, 8192);
	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, 8192, 0, 4096, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 6, &img) == 0);
	TAP_CHECK(ra.counts.incomplete == 1 && ra.nr_pending == 1);
	chunk(&c, 0x1000, 8192, 4096, 4096, csum);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 7, &img) == 1);
	TAP_CHECK(img.time == 6 && !memcmp(img.bytes, bytes, 8192));
	TAP_CHECK(ra.counts.overlap == 0 && ra.counts.complete == 1);
	free(img.bytes);
	flowjit_reasm_fini(&ra);
	return 0;
}

/* two revisions at one address are two images, whatever the order */
static int revisions_interleave(void)
{
	static uint8_t a[100] = { 1 }, b[100] = { 2 };
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;

	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, 100, 0, 50, flowjit_csum(a, 100));
	c.bytes = a;
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	chunk(&c, 0x1000, 100, 0, 50, flowjit_csum(b, 100));
	c.rec.revision = 2;
	c.bytes = b;
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 6, &img) == 0);
	TAP_CHECK(ra.nr_pending == 2);
	chunk(&c, 0x1000, 100, 50, 50, flowjit_csum(a, 100));
	c.bytes = a + 50;
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 7, &img) == 1);
	TAP_CHECK(img.rec.revision == 1 && img.bytes[0] == 1);
	free(img.bytes);
	chunk(&c, 0x1000, 100, 50, 50, flowjit_csum(b, 100));
	c.rec.revision = 2;
	c.bytes = b + 50;
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 8, &img) == 1);
	TAP_CHECK(img.rec.revision == 2 && img.bytes[0] == 2 && img.time == 6);
	free(img.bytes);
	flowjit_reasm_fini(&ra);
	return 0;
}

static int too_large(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;

	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, (uint64_t)FLOWJIT_IMAGE_MAX + 1, 0, 16, 0);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == 0);
	TAP_CHECK(ra.counts.too_large == 1 && ra.nr_pending == 0);
	flowjit_reasm_fini(&ra);
	return 0;
}

/* the oldest pending image makes room, counted incomplete */
static int bounded_pending(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;
	uint64_t i;

	fill(6);
	flowjit_reasm_init(&ra);
	for (i = 0; i < FLOWJIT_PENDING_MAX + 10; i++) {
		chunk(&c, 0x1000 + i * 0x1000, 200, 0, 100, 1);
		TAP_CHECK(flowjit_reasm_add(&ra, &c, i, &img) == 0);
		TAP_CHECK(ra.nr_pending <= FLOWJIT_PENDING_MAX);
	}
	TAP_CHECK(ra.counts.incomplete == 10);
	/* the first ten are gone: their second halves start new objects */
	chunk(&c, 0x1000, 200, 100, 100, 1);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 1000, &img) == 0);
	TAP_CHECK(ra.counts.incomplete == 11);
	/* the newest is still there */
	chunk(&c, 0x1000 + (FLOWJIT_PENDING_MAX + 9) * 0x1000ULL, 200, 100, 100,
	      flowjit_csum(bytes, 200));
	c.rec.csum = 1;
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 1001, &img) == 0);
	TAP_CHECK(ra.counts.bad_csum == 1);
	flowjit_reasm_fini(&ra);
	return 0;
}

/* large images: the byte bound evicts before the object bound does */
static int bounded_bytes(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;
	uint64_t i, n = FLOWJIT_PENDING_BYTES_MAX / FLOWJIT_IMAGE_MAX;

	flowjit_reasm_init(&ra);
	for (i = 0; i <= n; i++) {
		chunk(&c, i << 32, FLOWJIT_IMAGE_MAX, 0, 16, 1);
		TAP_CHECK(flowjit_reasm_add(&ra, &c, i, &img) == 0);
		TAP_CHECK(ra.pending_bytes <= FLOWJIT_PENDING_BYTES_MAX);
	}
	TAP_CHECK(ra.nr_pending == n && ra.counts.incomplete == 1);
	flowjit_reasm_fini(&ra);
	return 0;
}

static int parse_counts(void)
{
	struct flowjit_record rec = {
		.version = FLOWJIT_RECORD_VERSION, .kind = 1, .op = 2,
		.len = 8, .addr = 0x1000,
	};
	struct flowjit_reasm ra;
	struct flowjit_chunk c;

	flowjit_reasm_init(&ra);
	TAP_CHECK(flowjit_reasm_parse(&ra, &c, &rec, sizeof(rec), NULL) == 0);
	rec.kind = 0;
	TAP_CHECK(flowjit_reasm_parse(&ra, &c, &rec, sizeof(rec), NULL) == -EINVAL);
	rec.version = 2;
	TAP_CHECK(flowjit_reasm_parse(&ra, &c, &rec, sizeof(rec), NULL) == -EOPNOTSUPP);
	TAP_CHECK(ra.counts.records == 3 && ra.counts.bad_records == 1 &&
		  ra.counts.unknown_version == 1);
	flowjit_reasm_fini(&ra);
	return 0;
}

static int add_invalid(void)
{
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;

	flowjit_reasm_init(&ra);
	chunk(&c, 0x1000, 100, 0, 50, 0);
	TAP_CHECK(flowjit_reasm_add(NULL, &c, 5, &img) == -EINVAL);
	TAP_CHECK(flowjit_reasm_add(&ra, NULL, 5, &img) == -EINVAL);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, NULL) == -EINVAL);
	c.rec.op = FLOWJIT_OP_RETIRE;
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == -EINVAL);
	chunk(&c, 0x1000, 100, 80, 50, 0);
	TAP_CHECK(flowjit_reasm_add(&ra, &c, 5, &img) == -EINVAL);
	TAP_CHECK(ra.nr_pending == 0);
	flowjit_reasm_fini(&ra);
	flowjit_reasm_fini(NULL);
	flowjit_reasm_flush(NULL);
	flowjit_reasm_init(NULL);
	return 0;
}

/*
 * Random: 40 images of random length, chunked, each chunk sent in a
 * random order among all of them, some chunks lost. Reference: an image
 * comes out exactly when none of its chunks was lost, with its bytes.
 */
static int random_against_reference(void)
{
	enum { NR = 40, MAXLEN = 3 * FLOWJIT_CHUNK_MAX + 100 };
	static uint8_t img_bytes[NR][MAXLEN];
	static struct { int img; uint32_t off, n; } sent[NR * 4];
	uint32_t len[NR], seed = 12345, off;
	int lost[NR], some[NR], out[NR], nsent = 0, round, i, j, k;
	struct flowjit_reasm ra;
	struct flowjit_image img;
	struct flowjit_chunk c;

#define RND() (seed = seed * 1103515245U + 12345U, seed >> 8)
	for (round = 0; round < 20; round++) {
		nsent = 0;
		flowjit_reasm_init(&ra);
		for (i = 0; i < NR; i++) {
			len[i] = 1 + RND() % MAXLEN;
			lost[i] = 0;
			some[i] = 0;
			out[i] = 0;
			for (j = 0; j < (int)len[i]; j++)
				img_bytes[i][j] = (uint8_t)RND();
			for (off = 0; off < len[i]; off += FLOWJIT_CHUNK_MAX) {
				if (RND() % 16 == 0) {
					lost[i] = 1;
					continue;
				}
				some[i] = 1;
				sent[nsent].img = i;
				sent[nsent].off = off;
				sent[nsent].n = len[i] - off < FLOWJIT_CHUNK_MAX ?
						len[i] - off : FLOWJIT_CHUNK_MAX;
				nsent++;
			}
		}
		for (j = nsent - 1; j > 0; j--) {
			k = RND() % (j + 1);
			sent[NR * 4 - 1] = sent[j];
			sent[j] = sent[k];
			sent[k] = sent[NR * 4 - 1];
		}
		for (j = 0; j < nsent; j++) {
			i = sent[j].img;
			memset(&c, 0, sizeof(c));
			c.rec.version = 1;
			c.rec.kind = FLOWJIT_KIND_BPF_PROG;
			c.rec.op = FLOWJIT_OP_IMAGE;
			c.rec.addr = 0x10000;	/* all at one address */
			c.rec.id = i;
			c.rec.len = len[i];
			c.rec.revision = 1;
			c.rec.csum = flowjit_csum(img_bytes[i], len[i]);
			c.rec.chunk_off = sent[j].off;
			c.rec.chunk_len = sent[j].n;
			c.bytes = img_bytes[i] + sent[j].off;
			k = flowjit_reasm_add(&ra, &c, j, &img);
			TAP_CHECK(k == 0 || k == 1);
			if (k == 1) {
				TAP_CHECK(img.rec.id == (uint64_t)i && !out[i]);
				TAP_CHECK(!memcmp(img.bytes, img_bytes[i], len[i]));
				out[i] = 1;
				free(img.bytes);
			}
		}
		flowjit_reasm_flush(&ra);
		k = 0;
		for (i = 0; i < NR; i++) {
			TAP_CHECK(out[i] == !lost[i]);
			k += lost[i] && some[i];
		}
		TAP_CHECK(ra.counts.incomplete == (uint64_t)k);
		for (i = 0; i < NR; i++)
			k += lost[i] && !some[i];
		TAP_CHECK(ra.counts.complete == (uint64_t)(NR - k));
		flowjit_reasm_fini(&ra);
	}
#undef RND
	return 0;
}

int main(void)
{
	tap_run(in_order,
		"reasm: chunks in order give the image, with the time of its first chunk");
	tap_run(out_of_order,
		"reasm: chunks out of order give the same image, the CRC-32C checked");
	tap_run(missing_chunk,
		"reasm: an image missing a chunk is counted incomplete when flushed");
	tap_run(bad_csum,
		"reasm: an image whose CRC-32C does not hold is dropped and counted");
	tap_run(overlap,
		"reasm: a chunk covering bytes twice drops its image, counted as overlap");
	tap_run(head_restarts,
		"reasm: a head chunk over a received head starts the image again, the old copy counted incomplete");
	tap_run(revisions_interleave,
		"reasm: two revisions at one address interleave as two images");
	tap_run(too_large,
		"reasm: a hostile image length is counted, nothing allocated");
	tap_run(bounded_pending,
		"reasm: at most FLOWJIT_PENDING_MAX images pending; the oldest is dropped, counted incomplete");
	tap_run(bounded_bytes,
		"reasm: at most FLOWJIT_PENDING_BYTES_MAX bytes pending; the oldest is dropped, counted incomplete");
	tap_run(parse_counts,
		"reasm: records, malformed and unknown-version records are counted by flowjit_reasm_parse()");
	tap_run(add_invalid,
		"reasm: NULL arguments, a retire or a chunk past its object are -EINVAL; fini, flush, init take NULL");
	tap_run(random_against_reference,
		"reasm: 20 rounds of 40 images shuffled at one address with lost chunks: exactly the whole images come out, with their bytes; the others counted incomplete");
	return tap_exit();
}
