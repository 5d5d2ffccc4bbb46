// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the flowjit record format, and of what an event counts
 * for when it is created.
 */
#include <kunit/test.h>
#include <linux/cred.h>
#include <linux/crc32.h>
#include <linux/perf_event.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "base.h"
#include "internal.h"

/* the check value of CRC-32C, the checksum the uapi header documents */
static void flowjit_csum_check_value(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, flowjit_csum("123456789", 9), 0xe3069283U);
	KUNIT_EXPECT_EQ(test, flowjit_csum("", 0), 0U);
}

/*
 * Once the first flowjit event was opened the CRC comes from the crypto
 * API's best crc32c, if the kernel has one: the same values as the
 * tables, for a page of random bytes at every alignment and length.
 */
static void flowjit_csum_driver_matches_tables(struct kunit *test)
{
	u8 *buf = kunit_kmalloc(test, PAGE_SIZE + 8, GFP_KERNEL);
	static const size_t lens[] = { 0, 1, 7, 8, 63, 255, 256, 1000, PAGE_SIZE };
	int i, off;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	get_random_bytes(buf, PAGE_SIZE + 8);
	flowjit_csum_setup();
	if (IS_BUILTIN(CONFIG_CRYPTO_CRC32C))
		KUNIT_ASSERT_NOT_NULL(test, flowjit_csum_driver());
	kunit_info(test, "CRC-32C by %s\n", flowjit_csum_driver() ?: "lib/crc32's tables");
	KUNIT_EXPECT_EQ(test, flowjit_csum("123456789", 9), 0xe3069283U);
	for (i = 0; i < ARRAY_SIZE(lens); i++)
		for (off = 0; off < 8; off++)
			KUNIT_EXPECT_EQ(test, flowjit_csum(buf + off, lens[i]),
					~__crc32c_le(~0U, buf + off, lens[i]));
}

/* the chunks of an image cover [0, len) once, none over the maximum */
static void flowjit_chunks_cover_image(struct kunit *test)
{
	static const u64 lens[] = {
		1, 7, FLOWJIT_CHUNK_MAX - 1, FLOWJIT_CHUNK_MAX,
		FLOWJIT_CHUNK_MAX + 1, 3 * FLOWJIT_CHUNK_MAX + 17,
	};
	struct flowjit_image img = { .op = FLOWJIT_OP_IMAGE };
	int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		u64 off, covered = 0;
		u32 n;

		img.len = lens[i];
		for (off = 0; off < img.len; off += FLOWJIT_CHUNK_MAX) {
			n = flowjit_chunk_len(&img, off);
			KUNIT_EXPECT_GT(test, n, 0U);
			KUNIT_EXPECT_LE(test, n, (u32)FLOWJIT_CHUNK_MAX);
			covered += n;
		}
		KUNIT_EXPECT_EQ(test, covered, img.len);
		KUNIT_EXPECT_EQ(test, flowjit_chunk_len(&img, off), 0U);
	}
}

/* a retire record carries no bytes */
static void flowjit_retire_has_no_bytes(struct kunit *test)
{
	struct flowjit_image img = { .op = FLOWJIT_OP_RETIRE, .len = 100 };
	struct flowjit_record rec;

	flowjit_record_init(&rec, &img, 0, 0);
	KUNIT_EXPECT_EQ(test, rec.chunk_len, 0U);
	KUNIT_EXPECT_EQ(test, rec.len, 100ULL);
	KUNIT_EXPECT_EQ(test, rec.op, (u8)FLOWJIT_OP_RETIRE);
}

/* every chunk's header names the whole object and its checksum */
static void flowjit_record_names_object(struct kunit *test)
{
	struct flowjit_image img = {
		.kind = FLOWJIT_KIND_BPF_SUBPROG, .op = FLOWJIT_OP_IMAGE,
		.addr = 0xffffffffa0001000ULL, .len = FLOWJIT_CHUNK_MAX + 5,
		.id = 42, .sub = 2, .revision = 1,
	};
	struct flowjit_record rec;

	flowjit_record_init(&rec, &img, 0x1234, FLOWJIT_CHUNK_MAX);
	KUNIT_EXPECT_EQ(test, rec.version, (u16)FLOWJIT_RECORD_VERSION);
	KUNIT_EXPECT_EQ(test, rec.addr, img.addr);
	KUNIT_EXPECT_EQ(test, rec.len, img.len);
	KUNIT_EXPECT_EQ(test, rec.chunk_off, (u32)FLOWJIT_CHUNK_MAX);
	KUNIT_EXPECT_EQ(test, rec.chunk_len, 5U);
	KUNIT_EXPECT_EQ(test, rec.csum, 0x1234U);
	KUNIT_EXPECT_EQ(test, rec.id, 42ULL);
	KUNIT_EXPECT_EQ(test, rec.sub, 2U);
	KUNIT_EXPECT_EQ(test, rec.base, 0U);
}

/* the blocks that changed, adjacent ones in one piece; the rest base's */
static void flowjit_delta_carries_changed_blocks(struct kunit *test)
{
	struct flowjit_delta_piece p[FLOWJIT_DELTA_PIECES];
	u8 *old = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u8 *new = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u32 len = 0;

	KUNIT_ASSERT_NOT_NULL(test, old);
	KUNIT_ASSERT_NOT_NULL(test, new);
	/* nothing changed: no delta */
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, false), 0U);
	/* one byte: its block; two blocks side by side: one piece */
	new[100] = 1;
	new[130] = 2;
	new[150] = 3;
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, false), 2U);
	KUNIT_EXPECT_EQ(test, p[0].off, 96);
	KUNIT_EXPECT_EQ(test, p[0].len, 16);
	KUNIT_EXPECT_EQ(test, p[1].off, 128);
	KUNIT_EXPECT_EQ(test, p[1].len, 32);
	KUNIT_EXPECT_EQ(test, len, 2 * sizeof(*p) + 48U);
	/* the last block */
	new[PAGE_SIZE - 1] = 4;
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, false), 3U);
	KUNIT_EXPECT_EQ(test, p[2].off + p[2].len, PAGE_SIZE);
	/* over zeros (no old bytes): the same pieces */
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(NULL, new, PAGE_SIZE, p,
						   &len, true), 3U);
	KUNIT_EXPECT_EQ(test, p[1].off, 128);
	KUNIT_EXPECT_EQ(test, p[1].len, 32);
	/* a length that is no multiple of a block: the last one is short */
	new[90 + 997] = 5;
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old + 90, new + 90, 1000,
						   p, &len, false), 3U);
	KUNIT_EXPECT_EQ(test, p[0].off, 0);
	KUNIT_EXPECT_EQ(test, p[1].off, 32);
	KUNIT_EXPECT_EQ(test, p[1].len, 32);
	KUNIT_EXPECT_EQ(test, p[2].off, 992);
	KUNIT_EXPECT_EQ(test, p[2].len, 8);
	/* one short block alone costs more than half of it: no delta */
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old + 90, new + 90, 13, p,
						   &len, false), 0U);
}

/* with update, the old bytes become the new, also when it does not pay */
static void flowjit_delta_update_copies_changed_blocks(struct kunit *test)
{
	struct flowjit_delta_piece p[FLOWJIT_DELTA_PIECES];
	u8 *old = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u8 *new = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	unsigned int i;
	u32 len = 0;

	KUNIT_ASSERT_NOT_NULL(test, old);
	KUNIT_ASSERT_NOT_NULL(test, new);
	new[7] = 1;
	new[2000] = 2;
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, true), 2U);
	KUNIT_EXPECT_EQ(test, memcmp(old, new, PAGE_SIZE), 0);
	/* the next compare finds nothing */
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, true), 0U);
	/* too many pieces: no delta, but all of it copied */
	for (i = 0; i < PAGE_SIZE; i += 2 * FLOWJIT_DELTA_BLOCK)
		new[i] = 3;
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, true), 0U);
	KUNIT_EXPECT_EQ(test, memcmp(old, new, PAGE_SIZE), 0);
}

/* a delta that would not pay is refused: the whole image goes */
static void flowjit_delta_refuses_what_does_not_pay(struct kunit *test)
{
	struct flowjit_delta_piece p[FLOWJIT_DELTA_PIECES];
	u8 *old = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	u8 *new = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	unsigned int i;
	u32 len = 0;

	KUNIT_ASSERT_NOT_NULL(test, old);
	KUNIT_ASSERT_NOT_NULL(test, new);
	/* one byte in every other block: more pieces than allowed */
	for (i = 0; i <= FLOWJIT_DELTA_PIECES; i++)
		new[i * 2 * FLOWJIT_DELTA_BLOCK] = 1;
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, false), 0U);
	/* more than half the page */
	memset(new, 0, PAGE_SIZE);
	memset(new, 1, PAGE_SIZE / 2 + 1);
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, false), 0U);
	/* half of it in one piece is still one */
	memset(new, 0, PAGE_SIZE);
	memset(new, 1, PAGE_SIZE / 2 - 2 * FLOWJIT_DELTA_BLOCK);
	KUNIT_EXPECT_EQ(test, flowjit_delta_pieces(old, new, PAGE_SIZE, p,
						   &len, false), 1U);
}

/*
 * flowjit_delta_pieces() by the definition: 16-byte blocks compared byte
 * by byte, adjacent ones in one piece; no delta if there are none, more
 * than FLOWJIT_DELTA_PIECES or more than half of @len bytes with the
 * pieces' headers.
 */
static unsigned int flowjit_delta_by_bytes(const u8 *old, const u8 *new,
					   u32 len,
					   struct flowjit_delta_piece *p,
					   u32 *delta_len)
{
	unsigned int n = 0, i;
	u32 off, blk, dlen = 0;
	bool same;

	for (off = 0; off < len; off += blk) {
		blk = min_t(u32, FLOWJIT_DELTA_BLOCK, len - off);
		same = true;
		for (i = 0; i < blk; i++)
			same &= new[off + i] == (old ? old[off + i] : 0);
		if (same)
			continue;
		if (n && p[n - 1].off + p[n - 1].len == off) {
			p[n - 1].len += blk;
		} else {
			if (n == FLOWJIT_DELTA_PIECES)
				return 0;
			p[n].off = off;
			p[n].len = blk;
			n++;
			dlen += sizeof(*p);
		}
		dlen += blk;
	}
	if (dlen > len / 2)
		return 0;
	*delta_len = dlen;
	return n;
}

/*
 * The word-wise compare (64-byte groups skipped at once, 16-byte blocks)
 * gives what the definition gives: random lengths, alignments of both
 * buffers, a few bytes changed or many, over old bytes or zeros; and an
 * update leaves the old bytes equal to the new.
 */
static void flowjit_delta_matches_byte_compare(struct kunit *test)
{
	struct flowjit_delta_piece p[FLOWJIT_DELTA_PIECES];
	struct flowjit_delta_piece q[FLOWJIT_DELTA_PIECES];
	u8 *obuf = kunit_kmalloc(test, PAGE_SIZE + 8, GFP_KERNEL);
	u8 *nbuf = kunit_kmalloc(test, PAGE_SIZE + 8, GFP_KERNEL);
	struct rnd_state rs;
	unsigned int round;

	KUNIT_ASSERT_NOT_NULL(test, obuf);
	KUNIT_ASSERT_NOT_NULL(test, nbuf);
	prandom_seed_state(&rs, 20261126);
	for (round = 0; round < 2000; round++) {
		u32 len = 1 + prandom_u32_state(&rs) % PAGE_SIZE;
		u8 *old = obuf + prandom_u32_state(&rs) % 8;
		u8 *new = nbuf + prandom_u32_state(&rs) % 8;
		bool zero = !(round % 4);
		u32 k = prandom_u32_state(&rs) % (round % 3 ? 8 : 200);
		u32 dl = 0, rl = 0, i;
		unsigned int n, r;

		if (len > PAGE_SIZE)
			len = PAGE_SIZE;
		prandom_bytes_state(&rs, old, len);
		memcpy(new, old, len);
		if (zero)
			memset(new, 0, len);
		for (i = 0; i < k; i++)
			new[prandom_u32_state(&rs) % len] ^=
				1 + prandom_u32_state(&rs) % 255;
		r = flowjit_delta_by_bytes(zero ? NULL : old, new, len, q, &rl);
		n = flowjit_delta_pieces(zero ? NULL : old, new, len, p, &dl,
					 !zero);
		KUNIT_ASSERT_EQ_MSG(test, n, r, "round %u, %u bytes", round, len);
		if (n)
			KUNIT_ASSERT_EQ(test, dl, rl);
		for (i = 0; i < n; i++) {
			KUNIT_ASSERT_EQ(test, p[i].off, q[i].off);
			KUNIT_ASSERT_EQ(test, p[i].len, q[i].len);
		}
		if (!zero)
			KUNIT_ASSERT_EQ(test, memcmp(old, new, len), 0);
	}
}

/*
 * The CRC of a buffer that is zero outside some pieces, from the pieces
 * alone (a multiplication a run of zeros), is the CRC of the buffer:
 * random lengths (whole pages and runs of whole blocks, which take the
 * table, and others), pieces of any length and place, or those a delta
 * over zeros finds.
 */
static void flowjit_csum_sparse_matches_csum(struct kunit *test)
{
	struct flowjit_delta_piece p[FLOWJIT_DELTA_PIECES];
	u8 *buf = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct rnd_state rs;
	unsigned int round;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	prandom_seed_state(&rs, 20261127);
	for (round = 0; round < 1000; round++) {
		u32 len = round % 2 ? PAGE_SIZE :
			  1 + prandom_u32_state(&rs) % PAGE_SIZE;
		unsigned int n = prandom_u32_state(&rs) % 5, i;
		u32 at = 0, dl;

		if (round % 4 == 2)
			len = ALIGN(len, FLOWJIT_DELTA_BLOCK);
		memset(buf, 0, len);
		for (i = 0; i < n && at < len; i++) {
			u32 gap = prandom_u32_state(&rs) % (len - at);
			u32 plen;

			if (at + gap >= len)
				break;
			plen = min(len - at - gap, 300U);
			plen = 1 + prandom_u32_state(&rs) % plen;
			p[i].off = at + gap;
			p[i].len = plen;
			prandom_bytes_state(&rs, buf + p[i].off, plen);
			at = p[i].off + plen;
		}
		n = i;
		if (round % 3 == 0) {
			n = flowjit_delta_pieces(NULL, buf, len, p, &dl, false);
			if (!n && memchr_inv(buf, 0, len))
				continue;	/* no delta: not sparse */
		}
		KUNIT_ASSERT_EQ_MSG(test, flowjit_csum_sparse(buf, len, p, n),
				    flowjit_csum(buf, len),
				    "round %u, %u bytes, %u pieces", round, len, n);
	}
}

static struct kunit_case flowjit_record_cases[] = {
	KUNIT_CASE(flowjit_csum_check_value),
	KUNIT_CASE(flowjit_csum_driver_matches_tables),
	KUNIT_CASE(flowjit_chunks_cover_image),
	KUNIT_CASE(flowjit_retire_has_no_bytes),
	KUNIT_CASE(flowjit_record_names_object),
	KUNIT_CASE(flowjit_delta_carries_changed_blocks),
	KUNIT_CASE(flowjit_delta_refuses_what_does_not_pay),
	KUNIT_CASE(flowjit_delta_update_copies_changed_blocks),
	KUNIT_CASE(flowjit_delta_matches_byte_compare),
	KUNIT_CASE(flowjit_csum_sparse_matches_csum),
	{ }
};

static struct kunit_suite flowjit_record_suite = {
	.name = "flowjit_record",
	.test_cases = flowjit_record_cases,
};

/* a CPU-wide event with attr.flowjit that does not exclude user space */
static struct perf_event *flowjit_cpu_wide_event(struct kunit *test)
{
	struct perf_event *event = kunit_kzalloc(test, sizeof(*event),
						 GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, event);
	event->attr.flowjit = 1;
	event->attr.sample_id_all = 1;
	event->attr.sample_type = PERF_SAMPLE_TIME;
	return event;
}

/*
 * Review finding 10: perf allocates (and flowjit accounts) an event
 * before it checks CPU-wide permission. An event that check refuses
 * must not count as tracking every address space, not even while perf
 * frees it, and freeing it must not uncount anything.
 */
static void flowjit_refused_cpu_wide_event_tracks_nothing(struct kunit *test)
{
	struct perf_event *event = flowjit_cpu_wide_event(test);
	const struct cred *old;
	struct cred *cred;

	if (READ_ONCE(sysctl_perf_event_paranoid) <= 0)
		kunit_skip(test, "perf_event_paranoid lets anyone open CPU-wide events");
	KUNIT_ASSERT_FALSE(test, flowjit_tracks_all());
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_clear(cred->cap_effective);
	old = override_creds(cred);
	KUNIT_ASSERT_NE(test, flowjit_perf_allow_cpu(event), 0);
	flowjit_perf_event_account(event);
	KUNIT_EXPECT_FALSE(test, flowjit_tracks_all());
	revert_creds(old);
	put_cred(cred);
	flowjit_perf_event_detach(event);
	KUNIT_EXPECT_FALSE(test, flowjit_tracks_all());
}

/* one that passes counts until it goes */
static void flowjit_allowed_cpu_wide_event_tracks_all(struct kunit *test)
{
	struct perf_event *event = flowjit_cpu_wide_event(test);

	KUNIT_ASSERT_FALSE(test, flowjit_tracks_all());
	KUNIT_ASSERT_EQ(test, flowjit_perf_allow_cpu(event), 0);
	flowjit_perf_event_account(event);
	KUNIT_EXPECT_TRUE(test, flowjit_tracks_all());
	flowjit_perf_event_detach(event);
	KUNIT_EXPECT_FALSE(test, flowjit_tracks_all());
}

static struct kunit_case flowjit_event_cases[] = {
	KUNIT_CASE(flowjit_refused_cpu_wide_event_tracks_nothing),
	KUNIT_CASE(flowjit_allowed_cpu_wide_event_tracks_all),
	{ }
};

static struct kunit_suite flowjit_event_suite = {
	.name = "flowjit_event",
	.test_cases = flowjit_event_cases,
};

kunit_test_suites(&flowjit_record_suite, &flowjit_event_suite);

MODULE_LICENSE("GPL");
