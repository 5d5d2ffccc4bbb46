// SPDX-License-Identifier: GPL-2.0
/*
 * Delta records (FLOWJIT_OP_DELTA): the parser's checks of the pieces,
 * and the store making revisions of their bases; out of order, chained,
 * without a base, with a wrong result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../libflowjit.h"
#include "tap.h"

#define PAGE	4096
#define UJIT	0x7f0000001000ULL
#define ASID	5

/* a record body being built: the record, then pieces */
struct rb {
	uint8_t buf[sizeof(struct flowjit_record) + 2 * PAGE];
	struct flowjit_record *rec;
	uint32_t at;		/* bytes of pieces so far */
};

static void rb_init(struct rb *b, uint8_t op, uint32_t revision, uint32_t base)
{
	memset(b, 0, sizeof(*b));
	b->rec = (struct flowjit_record *)b->buf;
	b->rec->version = FLOWJIT_RECORD_VERSION;
	b->rec->kind = FLOWJIT_KIND_USER_JIT;
	b->rec->op = op;
	b->rec->asid = ASID;
	b->rec->pid = 77;
	b->rec->tid = 77;
	b->rec->addr = UJIT;
	b->rec->len = PAGE;
	b->rec->revision = revision;
	b->rec->base = base;
}

/* add a piece: @len bytes of @page at @off */
static void rb_piece(struct rb *b, uint16_t off, uint16_t len, const uint8_t *page)
{
	struct flowjit_delta_piece p = { .off = off, .len = len };
	uint8_t *at = b->buf + sizeof(*b->rec) + b->at;

	memcpy(at, &p, sizeof(p));
	memcpy(at + sizeof(p), page + off, len);
	b->at += sizeof(p) + len;
	b->rec->chunk_len = b->at;
}

static size_t rb_size(const struct rb *b)
{
	return sizeof(*b->rec) + ((b->at + 7) & ~7u);
}

/* a delta of @page (whose csum it carries) over @base: pieces at @offs */
static void delta(struct rb *b, uint32_t revision, uint32_t base, const uint8_t *page,
		  const uint16_t (*pieces)[2], int n)
{
	int i;

	rb_init(b, FLOWJIT_OP_DELTA, revision, base);
	b->rec->csum = flowjit_csum(page, PAGE);
	for (i = 0; i < n; i++)
		rb_piece(b, pieces[i][0], pieces[i][1], page);
}

static int add_image(struct flowjit_store *st, uint32_t revision, const uint8_t *page,
		     uint64_t time)
{
	struct rb b;

	rb_init(&b, FLOWJIT_OP_IMAGE, revision, 0);
	b.rec->csum = flowjit_csum(page, PAGE);
	b.rec->chunk_len = PAGE;
	memcpy(b.buf + sizeof(*b.rec), page, PAGE);
	return flowjit_store_add_record(st, b.buf, sizeof(*b.rec) + PAGE, time, NULL, NULL);
}

static int add_body(struct flowjit_store *st, const struct rb *b, uint64_t time,
		    const struct flowjit_rev **added)
{
	return flowjit_store_add_record(st, b->buf, rb_size(b), time, added, NULL);
}

/* the bytes find() answers at @time equal @page (NULL: no answer) */
static int reads(const struct flowjit_store *st, uint64_t time, const uint8_t *page)
{
	uint8_t out[PAGE];
	size_t n = flowjit_store_read(st, ASID, UJIT, time, false, out, PAGE, NULL);

	if (!page)
		return n == 0;
	return n == PAGE && !memcmp(out, page, PAGE);
}

static struct flowjit_store_stats stats(const struct flowjit_store *st)
{
	struct flowjit_store_stats s;

	flowjit_store_stats(st, &s);
	return s;
}

static uint8_t v1[PAGE], v2[PAGE], v3[PAGE];

/* v1; v2 changes 3 places of it; v3 changes one more place of v2 */
static void pages(void)
{
	int i;

	for (i = 0; i < PAGE; i++)
		v1[i] = i * 7 + 1;
	memcpy(v2, v1, PAGE);
	memset(v2 + 16, 0xc3, 16);
	v2[100] = 0x90;
	memset(v2 + PAGE - 8, 0xcc, 8);
	memcpy(v3, v2, PAGE);
	memset(v3 + 2000, 0xe8, 5);
}

static const uint16_t v2_pieces[][2] = { { 16, 16 }, { 100, 1 }, { PAGE - 8, 8 } };
static const uint16_t v3_pieces[][2] = { { 2000, 5 } };

static int parse_checks(void)
{
	static const uint16_t beyond[][2] = { { PAGE - 4, 4 } };
	struct flowjit_chunk c;
	const char *why;
	struct rb b;

	pages();
	delta(&b, 2, 1, v2, v2_pieces, 3);
	TAP_CHECK(!flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why));
	TAP_CHECK(c.rec.op == FLOWJIT_OP_DELTA && c.rec.base == 1);
	TAP_CHECK(!strcmp(flowjit_op_name(FLOWJIT_OP_DELTA), "DELTA"));

	/* base 0: over zeros */
	delta(&b, 2, 0, v2, v2_pieces, 3);
	TAP_CHECK(!flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why));
	/* base not earlier, in chunks, too long an object */
	delta(&b, 2, 2, v2, v2_pieces, 3);
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
	delta(&b, 2, 1, v2, v2_pieces, 3);
	b.rec->chunk_off = 8;
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
	delta(&b, 2, 1, v2, beyond, 1);
	b.rec->len = FLOWJIT_DELTA_LEN_MAX + 1;
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);

	/* a piece beyond the object */
	delta(&b, 2, 1, v2, beyond, 1);
	b.rec->len = PAGE - 2;
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
	TAP_CHECK(why && strstr(why, "beyond"));

	/* out of order, overlapping */
	{
		static const uint16_t back[][2] = { { 100, 4 }, { 50, 4 } };
		static const uint16_t over[][2] = { { 100, 4 }, { 103, 4 } };

		delta(&b, 2, 1, v2, back, 2);
		TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
		delta(&b, 2, 1, v2, over, 2);
		TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
	}

	/* a piece longer than what is left, a piece header cut, an empty one */
	delta(&b, 2, 1, v2, v2_pieces, 3);
	b.rec->chunk_len -= 1;
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
	delta(&b, 2, 1, v2, v2_pieces, 3);
	b.rec->chunk_len += 2;
	b.at += 2;
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
	TAP_CHECK(why && strstr(why, "truncated"));
	delta(&b, 2, 1, v2, v2_pieces, 1);
	rb_piece(&b, 200, 0, v2);
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);

	/* base set in an image record: not a delta, malformed */
	rb_init(&b, FLOWJIT_OP_IMAGE, 2, 1);
	b.rec->chunk_len = 8;
	b.at = 8;
	TAP_CHECK(flowjit_chunk_parse(&c, b.buf, rb_size(&b), &why) == -EINVAL);
	return 0;
}

static int applied_and_chained(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r = NULL;
	struct flowjit_store_stats s;
	struct rb b;

	TAP_CHECK(st);
	pages();
	TAP_CHECK(!add_image(st, 1, v1, 100));
	delta(&b, 2, 1, v2, v2_pieces, 3);
	TAP_CHECK(!add_body(st, &b, 200, &r));
	TAP_CHECK(r && r->revision == 2 && r->time == 200);
	delta(&b, 3, 2, v3, v3_pieces, 1);
	TAP_CHECK(!add_body(st, &b, 300, &r));
	TAP_CHECK(r && r->revision == 3);
	TAP_CHECK(reads(st, 150, v1));
	TAP_CHECK(reads(st, 250, v2));
	TAP_CHECK(reads(st, 350, v3));
	TAP_CHECK(!flowjit_store_settled(st));
	s = stats(st);
	TAP_CHECK(s.deltas == 2 && !s.delta_no_base && !s.delta_bad && !s.missing_revs);
	TAP_CHECK(s.revs == 3 && s.images == 3);
	flowjit_store_free(st);
	return 0;
}

/*
 * Base 0: the pieces over zeros, a whole revision on its own: no other
 * record needed, a wrong result hidden and counted as any.
 */
static int over_zeros(void)
{
	static const uint16_t code[][2] = { { 64, 16 }, { 4000, 8 } };
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r = NULL;
	uint8_t page[PAGE] = { 0 };
	struct flowjit_store_stats s;
	struct rb b;

	TAP_CHECK(st);
	memset(page + 64, 0xc3, 16);
	memset(page + 4000, 0x90, 8);
	delta(&b, 1, 0, page, code, 2);
	TAP_CHECK(!add_body(st, &b, 100, &r));
	TAP_CHECK(r && r->revision == 1 && r->time == 100);
	TAP_CHECK(reads(st, 150, page));
	/* the next one over it */
	memset(page + 64, 0xcc, 4);
	delta(&b, 2, 1, page, code, 1);
	TAP_CHECK(!add_body(st, &b, 200, &r));
	TAP_CHECK(reads(st, 250, page));
	/* a piece left out: its bytes would be zeros, the CRC-32C says no */
	memset(page + 4000, 0x91, 1);
	delta(&b, 3, 0, page, code, 1);
	TAP_CHECK(!add_body(st, &b, 300, &r));
	TAP_CHECK(reads(st, 350, NULL));
	s = stats(st);
	TAP_CHECK(s.deltas == 2 && !s.delta_no_base && s.delta_bad == 1);
	flowjit_store_free(st);
	return 0;
}

static int out_of_order(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r = NULL, *late;
	struct rb b;

	TAP_CHECK(st);
	pages();
	/* v3 over v2 over v1, added v3, v2, v1: the other ring came later */
	delta(&b, 3, 2, v3, v3_pieces, 1);
	TAP_CHECK(!add_body(st, &b, 300, &r));
	TAP_CHECK(!r);
	delta(&b, 2, 1, v2, v2_pieces, 3);
	TAP_CHECK(!add_body(st, &b, 200, &r));
	TAP_CHECK(!r);
	/* meanwhile nothing answers from the deltas' times on */
	TAP_CHECK(reads(st, 250, NULL) && reads(st, 350, NULL));
	TAP_CHECK(stats(st).delta_no_base == 2);
	TAP_CHECK(!add_image(st, 1, v1, 100));
	late = flowjit_store_settled(st);
	TAP_CHECK(late && late->revision == 2);
	late = flowjit_store_settled(st);
	TAP_CHECK(late && late->revision == 3);
	TAP_CHECK(!flowjit_store_settled(st));
	TAP_CHECK(reads(st, 150, v1) && reads(st, 250, v2) && reads(st, 350, v3));
	TAP_CHECK(!stats(st).delta_no_base && stats(st).deltas == 2);
	flowjit_store_free(st);
	return 0;
}

static int without_base(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_store_stats s;
	struct rb b;

	TAP_CHECK(st);
	pages();
	/* revision 1 is there, the delta needs 2 (lost): never 1's bytes */
	TAP_CHECK(!add_image(st, 1, v1, 100));
	delta(&b, 3, 2, v3, v3_pieces, 1);
	TAP_CHECK(!add_body(st, &b, 300, NULL));
	TAP_CHECK(reads(st, 150, v1));
	TAP_CHECK(reads(st, 350, NULL));
	s = stats(st);
	TAP_CHECK(s.delta_no_base == 1 && !s.deltas);
	/* revision 2 is missing, 3 is known */
	TAP_CHECK(s.missing_revs == 1);
	flowjit_store_free(st);
	return 0;
}

static int wrong_result(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_store_stats s;
	struct rb b;

	TAP_CHECK(st);
	pages();
	/* the reader's base is not what the kernel's was: the CRC says so */
	TAP_CHECK(!add_image(st, 1, v3, 100));
	delta(&b, 2, 1, v2, v2_pieces, 3);
	TAP_CHECK(!add_body(st, &b, 200, NULL));
	TAP_CHECK(reads(st, 250, NULL));
	s = stats(st);
	TAP_CHECK(s.delta_bad == 1 && s.csum_errors == 1 && !s.deltas);
	flowjit_store_free(st);
	return 0;
}

static int waits_bounded(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	struct rb b;
	uint32_t i;

	TAP_CHECK(st);
	pages();
	for (i = 0; i < FLOWJIT_PENDING_MAX + 10; i++) {
		delta(&b, 1000 + i, 900, v2, v2_pieces, 3);
		b.rec->addr = UJIT + (uint64_t)i * PAGE;
		TAP_CHECK(!add_body(st, &b, 200 + i, NULL));
	}
	TAP_CHECK(stats(st).delta_no_base == FLOWJIT_PENDING_MAX + 10);
	flowjit_store_free(st);
	return 0;
}

int main(void)
{
	tap_run(parse_checks,
		"delta: the parser takes pieces in order inside the object and refuses bad bases, chunks, overlaps, truncations");
	tap_run(applied_and_chained,
		"delta: a delta over its base, and one over that, read back as the whole pages");
	tap_run(over_zeros,
		"delta: base 0 puts the pieces over zeros, on its own; a wrong result is hidden and counted");
	tap_run(out_of_order,
		"delta: deltas before their base hide their range until it comes, then settle in order");
	tap_run(without_base,
		"delta: without its base a delta hides its range (never the older bytes) and is counted");
	tap_run(wrong_result,
		"delta: a result whose CRC-32C does not hold hides its range and is counted");
	tap_run(waits_bounded,
		"delta: at most FLOWJIT_PENDING_MAX deltas wait, all counted without base");
	return tap_exit();
}
