// SPDX-License-Identifier: GPL-2.0
/*
 * perf test "flowjit records": parsing, chunk reassembly with its
 * CRC-32C, and corrupted or truncated records, all without a flowjit
 * kernel; the synthesis of existing eBPF images from bpf_prog_info;
 * perf's side of the image store (perf records in, the counts out); the
 * Intel PT decoder's walk through images with ties of exec fault images
 * to the trace's TIP.PGE, and its counts of revision switches and of
 * suspect instructions. The store's and the ties' own cases are
 * tools/lib/flowjit's (make -C tools/lib/flowjit check).
 */
#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>

#include "flowjit.h"
#include "store.h"
#ifdef HAVE_AUXTRACE_SUPPORT
#include "decode.h"
#include "util/intel-pt-decoder/intel-pt-insn-decoder.h"
#endif
#include "tests/tests.h"
#include "util/debug.h"
#include "util/event.h"
#include "util/evsel.h"
#include "util/machine.h"

#define FJT_BUF		(sizeof(struct perf_event_header) + \
			 sizeof(struct flowjit_record) + FLOWJIT_CHUNK_MAX + 64)

/* a record carrying [off, off + n) of @obj, with a sample_id of @id_size */
static union perf_event *fjt_record(void *buf, const u8 *obj, u64 len, u32 off,
				    u32 n, u32 id_size)
{
	union perf_event *event = buf;
	struct flowjit_record *rec = (void *)(&event->header + 1);

	memset(buf, 0, FJT_BUF);
	*rec = (struct flowjit_record) {
		.version = FLOWJIT_RECORD_VERSION,
		.kind = FLOWJIT_KIND_BPF_PROG,
		.op = FLOWJIT_OP_IMAGE,
		.addr = 0xffffffffa0001000ULL,
		.len = len,
		.id = 42,
		.revision = 1,
		.csum = flowjit_csum(obj, len),
		.chunk_off = off,
		.chunk_len = n,
	};
	memcpy(rec + 1, obj + off, n);
	event->header.type = PERF_RECORD_FLOWJIT;
	event->header.size = sizeof(event->header) + sizeof(*rec) +
			     PERF_ALIGN(n, sizeof(u64)) + id_size;
	return event;
}

#define FJT_CHECK_VALUE	0xe3069283U

static void fjt_fill(u8 *obj, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		obj[i] = (u8)(i * 7 + (i >> 8));
}

static int test__flowjit_crc32c(struct test_suite *t __maybe_unused,
				int subtest __maybe_unused)
{
	u32 crc;

	/* the check value of CRC-32C (iSCSI), as the uapi header says */
	TEST_ASSERT_VAL("crc32c(\"123456789\")",
			flowjit_csum("123456789", 9) == FJT_CHECK_VALUE);
	crc = flowjit_crc32c(~0U, "1234", 4);
	crc = flowjit_crc32c(crc, "56789", 5);
	TEST_ASSERT_VAL("crc32c in two steps", ~crc == FJT_CHECK_VALUE);
	TEST_ASSERT_VAL("crc32c of nothing", flowjit_csum("", 0) == 0);
	return TEST_OK;
}

static int test__flowjit_parse(struct test_suite *t __maybe_unused,
			       int subtest __maybe_unused)
{
	static u8 buf[FJT_BUF], obj[100];
	struct flowjit_chunk chunk;
	union perf_event *event;
	struct flowjit_record *rec;

	fjt_fill(obj, sizeof(obj));
	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 16);
	rec = (void *)(&event->header + 1);
	TEST_ASSERT_VAL("a good record parses", !flowjit__parse(event, &chunk, NULL));
	TEST_ASSERT_VAL("record fields", chunk.rec.id == 42 && chunk.rec.len == 100);
	TEST_ASSERT_VAL("record bytes", !memcmp(chunk.bytes, obj, sizeof(obj)));

	rec->op = FLOWJIT_OP_RETIRE;
	TEST_ASSERT_VAL("retire with bytes", flowjit__parse(event, &chunk, NULL) == -EINVAL);
	rec->chunk_len = 0;
	event->header.size = sizeof(event->header) + sizeof(*rec);
	TEST_ASSERT_VAL("retire parses", !flowjit__parse(event, &chunk, NULL));
	TEST_ASSERT_VAL("op name", !strcmp(flowjit_op_name(chunk.rec.op), "RETIRE"));
	TEST_ASSERT_VAL("kind name", !strcmp(flowjit_kind_name(FLOWJIT_KIND_USER_JIT),
					     "user_jit"));
	TEST_ASSERT_VAL("unknown kind name", !strcmp(flowjit_kind_name(200), "unknown"));

	/* a user JIT page, as the kernel's user JIT tracking reports it */
	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec = (void *)(&event->header + 1);
	rec->kind = FLOWJIT_KIND_USER_JIT;
	rec->asid = 3;
	TEST_ASSERT_VAL("user jit record parses", !flowjit__parse(event, &chunk, NULL));
	return TEST_OK;
}

/*
 * A perf.data of the other byte order: every field of the record, and of
 * a delta record's pieces, as the other machine wrote it; flowjit__swap()
 * gives back what this machine writes, which parses. The bytes of code
 * are not swapped.
 */
static void fjt_unswap_delta(u8 *p, u32 n)
{
	while (n >= sizeof(struct flowjit_delta_piece)) {
		struct flowjit_delta_piece piece;
		u16 len;

		memcpy(&piece, p, sizeof(piece));
		len = piece.len;
		piece.off = bswap_16(piece.off);
		piece.len = bswap_16(piece.len);
		memcpy(p, &piece, sizeof(piece));
		p += sizeof(piece) + len;
		n -= sizeof(piece) + len;
	}
}

static void fjt_unswap(union perf_event *event)
{
	struct flowjit_record *rec = (void *)(&event->header + 1);

	if (rec->op == FLOWJIT_OP_DELTA)
		fjt_unswap_delta((u8 *)(rec + 1), rec->chunk_len);
	rec->version = bswap_16(rec->version);
	rec->flags = bswap_32(rec->flags);
	rec->asid = bswap_64(rec->asid);
	rec->pid = bswap_32(rec->pid);
	rec->tid = bswap_32(rec->tid);
	rec->addr = bswap_64(rec->addr);
	rec->len = bswap_64(rec->len);
	rec->id = bswap_64(rec->id);
	rec->sub = bswap_32(rec->sub);
	rec->revision = bswap_32(rec->revision);
	rec->csum = bswap_32(rec->csum);
	rec->chunk_off = bswap_32(rec->chunk_off);
	rec->chunk_len = bswap_32(rec->chunk_len);
	rec->base = bswap_32(rec->base);
}

static int test__flowjit_swap(struct test_suite *t __maybe_unused,
			      int subtest __maybe_unused)
{
	static u8 buf[FJT_BUF], want[FJT_BUF], obj[100], page[0x200];
	struct flowjit_delta_piece piece;
	struct flowjit_record *rec;
	struct flowjit_chunk chunk;
	union perf_event *event;
	u8 *p;

	fjt_fill(obj, sizeof(obj));
	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec = (void *)(&event->header + 1);
	rec->flags = FLOWJIT_F_PINNED;
	rec->asid = 0x0102030405060708ULL;
	memcpy(want, buf, event->header.size);
	fjt_unswap(event);
	TEST_ASSERT_VAL("swap an image record", flowjit__swap(event));
	TEST_ASSERT_VAL("swapped back", !memcmp(buf, want, event->header.size));
	TEST_ASSERT_VAL("it parses", !flowjit__parse(event, &chunk, NULL));

	/* a delta: 3 bytes at 1, then 2 at 0x0102 (headers not aligned) */
	event = fjt_record(buf, page, sizeof(page), 0, 0, 0);
	rec = (void *)(&event->header + 1);
	rec->kind = FLOWJIT_KIND_USER_JIT;
	rec->op = FLOWJIT_OP_DELTA;
	rec->asid = 3;
	rec->revision = 2;
	rec->base = 1;
	p = (u8 *)(rec + 1);
	piece = (struct flowjit_delta_piece){ .off = 1, .len = 3 };
	memcpy(p, &piece, sizeof(piece));
	memcpy(p + sizeof(piece), "\x01\x02\x03", 3);
	p += sizeof(piece) + 3;
	piece = (struct flowjit_delta_piece){ .off = 0x0102, .len = 2 };
	memcpy(p, &piece, sizeof(piece));
	memcpy(p + sizeof(piece), "\x04\x05", 2);
	rec->chunk_len = 2 * sizeof(piece) + 5;
	event->header.size = sizeof(event->header) + sizeof(*rec) +
			     PERF_ALIGN(rec->chunk_len, sizeof(u64));
	memcpy(want, buf, event->header.size);
	fjt_unswap(event);
	TEST_ASSERT_VAL("the other order differs", memcmp(buf, want, event->header.size));
	TEST_ASSERT_VAL("swap a delta record", flowjit__swap(event));
	TEST_ASSERT_VAL("pieces swapped back", !memcmp(buf, want, event->header.size));
	TEST_ASSERT_VAL("the delta parses", !flowjit__parse(event, &chunk, NULL));
	return TEST_OK;
}

/* @event is refused with @expect and a reason, and prints without harm */
static bool fjt_bad(union perf_event *event, int expect)
{
	struct flowjit_chunk chunk;
	const char *why = NULL;
	FILE *null;

	if (flowjit__parse(event, &chunk, &why) != expect || !why)
		return false;
	pr_debug("flowjit: refused: %s\n", why);
	null = fopen("/dev/null", "w");
	if (!null)
		return false;
	perf_event__fprintf_flowjit(event, NULL, null);
	fclose(null);
	return true;
}

static int test__flowjit_corrupt(struct test_suite *t __maybe_unused,
				 int subtest __maybe_unused)
{
	static u8 buf[FJT_BUF], obj[100];
	union perf_event *event;
	struct flowjit_record *rec;

	fjt_fill(obj, sizeof(obj));

	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec = (void *)(&event->header + 1);
	event->header.size = sizeof(event->header) + sizeof(*rec) - 8;
	TEST_ASSERT_VAL("truncated header", fjt_bad(event, -EINVAL));
	event->header.size = sizeof(event->header) + sizeof(*rec) + 40;
	TEST_ASSERT_VAL("truncated bytes", fjt_bad(event, -EINVAL));

	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec->version = 2;
	TEST_ASSERT_VAL("unknown version", fjt_bad(event, -EOPNOTSUPP));

	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec->kind = FLOWJIT_KIND_MAX;
	TEST_ASSERT_VAL("bad kind", fjt_bad(event, -EINVAL));
	rec->kind = 0;
	TEST_ASSERT_VAL("kind 0", fjt_bad(event, -EINVAL));

	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec->op = 0;
	TEST_ASSERT_VAL("bad op", fjt_bad(event, -EINVAL));

	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec->chunk_off = 60;
	TEST_ASSERT_VAL("chunk beyond its object", fjt_bad(event, -EINVAL));
	rec->chunk_off = 0xffffffff;
	TEST_ASSERT_VAL("chunk offset overflow", fjt_bad(event, -EINVAL));

	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec->chunk_len = FLOWJIT_CHUNK_MAX + 8;
	rec->len = 1ULL << 40;
	TEST_ASSERT_VAL("oversized chunk", fjt_bad(event, -EINVAL));

	event = fjt_record(buf, obj, sizeof(obj), 0, sizeof(obj), 0);
	rec->chunk_len = 0;
	TEST_ASSERT_VAL("empty chunk", fjt_bad(event, -EINVAL));
	return TEST_OK;
}

static int test__flowjit_reasm(struct test_suite *t __maybe_unused,
			       int subtest __maybe_unused)
{
	static u8 buf[FJT_BUF], obj[2 * FLOWJIT_CHUNK_MAX + 1000];
	struct flowjit_chunk chunk;
	struct flowjit_reasm ra;
	struct flowjit_image img;
	union perf_event *event;
	u32 off, n;
	int err = 0;

	fjt_fill(obj, sizeof(obj));
	flowjit_reasm_init(&ra);

	/* three chunks, in order: one image, checksum ok */
	for (off = 0; off < sizeof(obj); off += n) {
		n = min_t(u32, sizeof(obj) - off, FLOWJIT_CHUNK_MAX);
		event = fjt_record(buf, obj, sizeof(obj), off, n, 8);
		TEST_ASSERT_VAL("chunk parses", !flowjit__parse(event, &chunk, NULL));
		err = flowjit_reasm_add(&ra, &chunk, off, &img);
		TEST_ASSERT_VAL("chunk added", err == (off + n == sizeof(obj)));
	}
	TEST_ASSERT_VAL("image finished", img.rec.len == sizeof(obj) && img.time == 0);
	TEST_ASSERT_VAL("image bytes", !memcmp(img.bytes, obj, sizeof(obj)));
	TEST_ASSERT_VAL("nothing pending", ra.nr_pending == 0);
	free(img.bytes);

	/* a corrupted byte in the second chunk: checksum bad, dropped */
	for (off = 0; off < sizeof(obj); off += n) {
		n = min_t(u32, sizeof(obj) - off, FLOWJIT_CHUNK_MAX);
		event = fjt_record(buf, obj, sizeof(obj), off, n, 0);
		if (off == FLOWJIT_CHUNK_MAX) {
			struct flowjit_record *rec = (void *)(&event->header + 1);

			((u8 *)(rec + 1))[5] ^= 1;
		}
		flowjit__parse(event, &chunk, NULL);
		err = flowjit_reasm_add(&ra, &chunk, 0, &img);
	}
	TEST_ASSERT_VAL("corrupted image: csum bad", err == 0 && ra.counts.bad_csum == 1);

	/* a missing middle chunk: the object stays unfinished */
	event = fjt_record(buf, obj, sizeof(obj), 0, FLOWJIT_CHUNK_MAX, 0);
	flowjit__parse(event, &chunk, NULL);
	TEST_ASSERT_VAL("first chunk", flowjit_reasm_add(&ra, &chunk, 0, &img) == 0);
	event = fjt_record(buf, obj, sizeof(obj), 2 * FLOWJIT_CHUNK_MAX, 1000, 0);
	flowjit__parse(event, &chunk, NULL);
	TEST_ASSERT_VAL("gap", flowjit_reasm_add(&ra, &chunk, 0, &img) == 0);
	TEST_ASSERT_VAL("gap: pending", ra.nr_pending == 1);
	flowjit_reasm_flush(&ra);
	TEST_ASSERT_VAL("gap: unfinished", ra.counts.incomplete == 1 && !ra.nr_pending);

	/* a repeated chunk: the object is dropped once all its bytes came */
	for (off = 0; off < sizeof(obj); off += n) {
		n = min_t(u32, sizeof(obj) - off, FLOWJIT_CHUNK_MAX);
		event = fjt_record(buf, obj, sizeof(obj), off, n, 0);
		flowjit__parse(event, &chunk, NULL);
		err = flowjit_reasm_add(&ra, &chunk, 0, &img);
		if (off == FLOWJIT_CHUNK_MAX)
			err = flowjit_reasm_add(&ra, &chunk, 0, &img);
	}
	TEST_ASSERT_VAL("repeat", err == 0 && ra.counts.overlap == 1 && !ra.nr_pending);

	/* its head again after a lost chunk: a new copy, the old one unfinished */
	event = fjt_record(buf, obj, sizeof(obj), 0, FLOWJIT_CHUNK_MAX, 0);
	flowjit__parse(event, &chunk, NULL);
	flowjit_reasm_add(&ra, &chunk, 0, &img);
	TEST_ASSERT_VAL("head again", flowjit_reasm_add(&ra, &chunk, 0, &img) == 0 &&
			ra.counts.incomplete == 2 && ra.nr_pending == 1);
	flowjit_reasm_flush(&ra);

	/* more unfinished objects than kept: the oldest go, no leak */
	for (off = 0; off < 2 * FLOWJIT_PENDING_MAX; off++) {
		struct flowjit_record *rec;

		event = fjt_record(buf, obj, sizeof(obj), 0, FLOWJIT_CHUNK_MAX, 0);
		rec = (void *)(&event->header + 1);
		rec->addr += off * 0x10000;
		flowjit__parse(event, &chunk, NULL);
		TEST_ASSERT_VAL("pending", flowjit_reasm_add(&ra, &chunk, 0, &img) == 0);
	}
	TEST_ASSERT_VAL("bounded", ra.nr_pending == FLOWJIT_PENDING_MAX);
	flowjit_reasm_fini(&ra);
	return TEST_OK;
}

/* one whole-object record of kind @kind and op @op with @bytes */
static union perf_event *fjt_obj(void *buf, u8 kind, u8 op, u64 asid, u32 pid, u64 addr,
				 u64 len, u32 revision, const u8 *bytes)
{
	union perf_event *event = buf;
	struct flowjit_record *rec = (void *)(&event->header + 1);
	u32 n = op == FLOWJIT_OP_IMAGE ? len : 0;

	memset(buf, 0, FJT_BUF);
	*rec = (struct flowjit_record) {
		.version = FLOWJIT_RECORD_VERSION,
		.kind = kind,
		.op = op,
		.asid = asid,
		.pid = pid,
		.tid = pid,
		.addr = addr,
		.len = len,
		.revision = revision,
		.csum = n ? flowjit_csum(bytes, n) : 0,
		.chunk_len = n,
	};
	if (n)
		memcpy(rec + 1, bytes, n);
	event->header.type = PERF_RECORD_FLOWJIT;
	event->header.size = sizeof(event->header) + sizeof(*rec) + PERF_ALIGN(n, sizeof(u64));
	return event;
}

#define FJT_UJIT	0x7f0000001000ULL
#define FJT_KBPF	0xffffffffa0002000ULL

/* add a whole-object record through perf's side of the store */
static int fjt_add(struct flowjit_store *st, void *buf, u8 kind, u8 op, u64 asid, u32 pid,
		   u64 addr, u64 len, u32 rev, const u8 *bytes, u64 time)
{
	return flowjit_store__add_event(st, fjt_obj(buf, kind, op, asid, pid, addr, len, rev,
						    bytes), time, NULL);
}

static int test__flowjit_store_reuse(struct test_suite *t __maybe_unused,
				     int subtest __maybe_unused)
{
	static u8 buf[FJT_BUF], a[32], b[48], u[64];
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_store_stats s;
	const struct flowjit_rev *r;
	uint64_t asid;

	TEST_ASSERT_VAL("store", st);
	memset(a, 0x90, sizeof(a));
	memset(b, 0xc3, sizeof(b));
	memset(u, 0x90, sizeof(u));
	/* eBPF program 1 at an address, unloaded, program 2 at the same one */
	fjt_add(st, buf, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, FJT_KBPF, 32, 1, a, 100);
	fjt_add(st, buf, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_RETIRE, 0, 0, FJT_KBPF, 32, 1, NULL,
		200);
	fjt_add(st, buf, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, 0, 0, FJT_KBPF, 48, 1, b, 300);
	r = flowjit_store_find(st, 0, FJT_KBPF + 4, 150);
	TEST_ASSERT_VAL("first program", r && r->end == FJT_KBPF + 32);
	TEST_ASSERT_VAL("retired", !flowjit_store_find(st, 0, FJT_KBPF + 4, 200) &&
			!flowjit_store_find(st, 0, FJT_KBPF + 4, 250));
	r = flowjit_store_find_late(st, 0, FJT_KBPF + 4, 250);
	TEST_ASSERT_VAL("late after the retire: second program", r && r->end == FJT_KBPF + 48);
	r = flowjit_store_find(st, 0, FJT_KBPF + 40, 300);
	TEST_ASSERT_VAL("second program", r && r->end == FJT_KBPF + 48);
	flowjit_store_stats(st, &s);
	TEST_ASSERT_VAL("retires counted", s.retires == 1);

	/* a user address space ends (exit: one retire of all of it), pid execs */
	fjt_add(st, buf, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 5, 77, FJT_UJIT, 64, 1, u, 100);
	fjt_add(st, buf, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 5, 77, 0, 0x7ffffffff000ULL, 0,
		NULL, 400);
	fjt_add(st, buf, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, 9, 77, FJT_UJIT, 64, 1, u, 500);
	TEST_ASSERT_VAL("user code live", flowjit_store_find(st, 5, FJT_UJIT, 399));
	TEST_ASSERT_VAL("address space retired", !flowjit_store_find(st, 5, FJT_UJIT, 400));
	TEST_ASSERT_VAL("kernel untouched", flowjit_store_find(st, 0, FJT_KBPF, 400));
	TEST_ASSERT_VAL("asid before exec",
			!flowjit_store_pid_asid(st, 77, 350, &asid) && asid == 5);
	TEST_ASSERT_VAL("asid after exec",
			!flowjit_store_pid_asid(st, 77, 500, &asid) && asid == 9);
	TEST_ASSERT_VAL("asid between exec and the next image",
			!flowjit_store_pid_asid(st, 77, 420, &asid) && asid == 9);
	TEST_ASSERT_VAL("asid before any", !flowjit_store_pid_asid(st, 77, 10, &asid) && asid == 5);
	TEST_ASSERT_VAL("new space", flowjit_store_find(st, 9, FJT_UJIT, 600));
	flowjit_store_free(st);
	return TEST_OK;
}

static int test__flowjit_store_errors(struct test_suite *t __maybe_unused,
				      int subtest __maybe_unused)
{
	static u8 buf[FJT_BUF], obj[2 * FLOWJIT_CHUNK_MAX + 100];
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_store_reads reads = { 0 };
	struct flowjit_store_stats s;
	struct flowjit_record *rec;
	union perf_event *event;
	const struct flowjit_rev *added;
	static const char * const want_stats[] = {
		"flowjit: 11 records: 1 images, 0 retires; ",
		"dropped: 2 bad, 1 unknown version, 1 out of sequence, ",
		"1 bad CRC-32C, 0 unfinished; ",
		"0 deltas (0 without base, 0 bad result); ",
		"0 images of pinned pages; ",
		"1 reads at their time, 0 from a later image\n",
	};
	char want[512];
	char line[512] = "";
	u8 out[16];
	u32 off, n;
	FILE *fp;

	TEST_ASSERT_VAL("store", st);
	fjt_fill(obj, sizeof(obj));
	/* a gap: the second chunk is lost; the third does not make an image */
	event = fjt_record(buf, obj, sizeof(obj), 0, FLOWJIT_CHUNK_MAX, 8);
	TEST_ASSERT_VAL("head", !flowjit_store__add_event(st, event, 10, &added) && !added);
	event = fjt_record(buf, obj, sizeof(obj), 2 * FLOWJIT_CHUNK_MAX, 100, 8);
	TEST_ASSERT_VAL("gap", !flowjit_store__add_event(st, event, 10, &added) && !added);
	flowjit_store_stats(st, &s);
	TEST_ASSERT_VAL("gap: unfinished", s.pending == 1 && !s.revs);
	TEST_ASSERT_VAL("gap: reported", flowjit_store__dropped(st));
	/* a bad CRC-32C: dropped */
	for (off = 0; off < sizeof(obj); off += n) {
		n = min_t(u32, sizeof(obj) - off, FLOWJIT_CHUNK_MAX);
		event = fjt_record(buf, obj, sizeof(obj), off, n, 8);
		rec = (void *)(&event->header + 1);
		rec->csum ^= 1;
		flowjit_store__add_event(st, event, 20, &added);
	}
	flowjit_store_stats(st, &s);
	TEST_ASSERT_VAL("bad crc counted", s.csum_errors == 1 && !s.revs);
	/* truncated and unknown version */
	event = fjt_record(buf, obj, sizeof(obj), 0, 16, 0);
	event->header.size = sizeof(event->header) + 8;
	flowjit_store__add_event(st, event, 30, NULL);
	event = fjt_record(buf, obj, sizeof(obj), 0, 16, 0);
	rec = (void *)(&event->header + 1);
	rec->version = FLOWJIT_RECORD_VERSION + 1;
	flowjit_store__add_event(st, event, 30, NULL);
	/* an image claiming 1 TiB: refused, never allocated */
	event = fjt_record(buf, obj, sizeof(obj), 0, 16, 0);
	rec = (void *)(&event->header + 1);
	rec->len = 1ULL << 40;
	TEST_ASSERT_VAL("huge image", !flowjit_store__add_event(st, event, 30, &added) && !added);
	flowjit_store_stats(st, &s);
	TEST_ASSERT_VAL("bad records counted", s.bad_records == 2);
	TEST_ASSERT_VAL("unknown version counted", s.unknown_version == 1);
	TEST_ASSERT_VAL("still nothing", !flowjit_store_read(st, 0, 0xffffffffa0001000ULL, 40,
							     true, out, 16, &reads));
	/* in order: one image, readable across its chunks */
	for (off = 0; off < sizeof(obj); off += n) {
		n = min_t(u32, sizeof(obj) - off, FLOWJIT_CHUNK_MAX);
		event = fjt_record(buf, obj, sizeof(obj), off, n, 8);
		flowjit_store__add_event(st, event, 50, &added);
	}
	flowjit_store_stats(st, &s);
	TEST_ASSERT_VAL("image added", added && s.revs == 1 && s.images == 1);
	TEST_ASSERT_VAL("the copy with a gap counted", s.chunk_errors == 1);
	TEST_ASSERT_VAL("read across chunks",
			flowjit_store_read(st, 0, 0xffffffffa0001000ULL + FLOWJIT_CHUNK_MAX - 8,
					   50, false, out, 16, &reads) == 16 &&
			!memcmp(out, obj + FLOWJIT_CHUNK_MAX - 8, 16));
	TEST_ASSERT_VAL("records counted", s.records == 2 + 3 + 3 + 3);
	/* the line perf prints when records were dropped */
	fp = fmemopen(line, sizeof(line) - 1, "w");
	TEST_ASSERT_VAL("fmemopen", fp);
	flowjit_store__fprintf_stats(st, &reads, fp);
	fclose(fp);
	pr_debug("%s", line);
	snprintf(want, sizeof(want), "%s%s%s%s%s%s", want_stats[0], want_stats[1],
		 want_stats[2], want_stats[3], want_stats[4], want_stats[5]);
	TEST_ASSERT_VAL("stats line", !strcmp(line, want));
	flowjit_store_free(st);
	return TEST_OK;
}

struct fjt_synth {
	struct flowjit_reasm	ra;
	int			records;
	int			images;
	int			bad;
	u64			addr[4];
	u64			len[4];
	u8			bytes[8192];
	u64			off;
};

static struct fjt_synth *fjt_synth;

static int fjt_synth_process(FLOWJIT_TOOL_CONST struct perf_tool *tool
			     __maybe_unused,
			     union perf_event *event,
			     struct perf_sample *sample __maybe_unused,
			     struct machine *machine __maybe_unused)
{
	struct fjt_synth *s = fjt_synth;
	struct flowjit_chunk chunk;
	struct flowjit_image img;
	int err;

	s->records++;
	if (flowjit__parse(event, &chunk, NULL) ||
	    !(chunk.rec.flags & FLOWJIT_F_EXISTING) || chunk.rec.sub >= 4 ||
	    chunk.rec.kind != (chunk.rec.sub ? FLOWJIT_KIND_BPF_SUBPROG :
						 FLOWJIT_KIND_BPF_PROG)) {
		s->bad++;
		return 0;
	}
	err = flowjit_reasm_add(&s->ra, &chunk, 0, &img);
	if (err < 0 || s->ra.counts.bad_csum) {
		s->bad++;
		return 0;
	}
	if (!err)
		return 0;
	if (img.rec.addr != s->addr[img.rec.sub] || img.rec.len != s->len[img.rec.sub] ||
	    memcmp(img.bytes, s->bytes + s->off, img.rec.len))
		s->bad++;
	s->off += img.rec.len;
	s->images++;
	free(img.bytes);
	return 0;
}

static int test__flowjit_synth_bpf(struct test_suite *t __maybe_unused,
				   int subtest __maybe_unused)
{
	static struct fjt_synth s;
	struct bpf_prog_info info = { .id = 7 };
	struct machine machine = { .id_hdr_size = 24 };
	u32 lens[2] = { 4096 + 300, 200 };
	int err;

	memset(&s, 0, sizeof(s));
	flowjit_reasm_init(&s.ra);
	fjt_fill(s.bytes, sizeof(s.bytes));
	s.addr[0] = 0xffffffffa0000000ULL;
	s.addr[1] = 0xffffffffa0002000ULL;
	s.len[0] = lens[0];
	s.len[1] = lens[1];
	info.nr_jited_ksyms = 2;
	info.nr_jited_func_lens = 2;
	info.jited_ksyms = (uintptr_t)s.addr;
	info.jited_func_lens = (uintptr_t)lens;
	info.jited_prog_insns = (uintptr_t)s.bytes;
	info.jited_prog_len = lens[0] + lens[1];
	fjt_synth = &s;

	err = flowjit__synthesize_bpf_prog(NULL, fjt_synth_process, &machine, &info);
	TEST_ASSERT_VAL("synthesized", !err);
	TEST_ASSERT_VAL("records: 2 chunks + 1", s.records == 3);
	TEST_ASSERT_VAL("images: prog and subprog", s.images == 2);
	TEST_ASSERT_VAL("images equal jited_prog_insns", !s.bad);

	/* func lens beyond jited_prog_len: refused, not read */
	info.jited_prog_len = 100;
	s.records = 0;
	err = flowjit__synthesize_bpf_prog(NULL, fjt_synth_process, &machine, &info);
	TEST_ASSERT_VAL("inconsistent info refused", err == -EINVAL && !s.records);
	flowjit_reasm_fini(&s.ra);
	return TEST_OK;
}

static int test__flowjit_no_fallback(struct test_suite *t __maybe_unused,
				     int subtest __maybe_unused)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TIME,
		.ksymbol = 1,
		.bpf_event = 1,
		.flowjit = 1,
	};
	struct evsel *evsel = evsel__new(&attr);
	char msg[BUFSIZ];

	TEST_ASSERT_VAL("evsel", evsel);
	/* EINVAL on a kernel without flowjit: no feature is switched off */
	TEST_ASSERT_VAL("no fallback", !evsel__detect_missing_features(evsel));
	TEST_ASSERT_VAL("bits kept", evsel->core.attr.ksymbol &&
			evsel->core.attr.bpf_event && evsel->core.attr.sample_id_all);
	TEST_ASSERT_VAL("open error explained",
			flowjit__open_strerror(evsel, EINVAL, msg, sizeof(msg)) > 0 &&
			strstr(msg, "flowjit"));
	pr_debug("flowjit: %s\n", msg);
	evsel__delete(evsel);
	return TEST_OK;
}

#ifdef HAVE_AUXTRACE_SUPPORT
/*
 * The decoder's walk on a user JIT page of process FJT_PID rewritten in
 * place: revision 1 at time 90 has "jmp" at FJT_IP, revision 2 at 150
 * "nop; nop; ret". Both are exec fault images of thread 7 taken at
 * FJT_IP. A decoder whose clock says 100 (the last MTC) when the thread
 * resumes at FJT_IP after the second fault decodes revision 1 unless the
 * TIP.PGE ties the fault.
 */
#define FJT_PID		100
#define FJT_ASID	5
#define FJT_IP		(FJT_UJIT + 0x40)
#define FJT_PAGE	4096

static u8 fjt_old[FJT_PAGE], fjt_new[FJT_PAGE];

static void fjt_pages(void)
{
	memset(fjt_old, 0x90, sizeof(fjt_old));
	memset(fjt_new, 0x90, sizeof(fjt_new));
	fjt_old[0x40] = 0xeb;	/* jmp .+0x12 */
	fjt_old[0x41] = 0x10;
	fjt_new[0x42] = 0xc3;	/* nop; nop; ret */
}

/* the image of the page with @bytes, made at the exec fault of @tid at @ip */
static int fjt_fault(struct flowjit_store *st, u32 tid, u64 ip, u32 revision, const u8 *bytes,
		     u64 time)
{
	static u8 buf[FJT_BUF];
	union perf_event *event;
	struct flowjit_record *rec;

	event = fjt_obj(buf, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_IMAGE, FJT_ASID, FJT_PID, FJT_UJIT,
			FJT_PAGE, revision, bytes);
	rec = (void *)(&event->header + 1);
	rec->tid = tid;
	rec->id = ip;
	return flowjit_store__add_event(st, event, time, NULL);
}

/*
 * Walk from @ip as the decoder does with its clock at @clock and the real
 * time at most @clock_max: returns the instructions up to the first
 * branch, and sets *@op to the branch's.
 */
static u64 fjt_walk_max(struct flowjit_pt_queue *q, int tid, u64 ip, u64 clock,
			u64 clock_max, enum intel_pt_insn_op *op)
{
	struct intel_pt_insn insn;
	u64 cnt = 0;

	memset(&insn, 0, sizeof(insn));
	if (flowjit_pt__walk(q, FJT_PID, tid, false, clock, clock_max, false, &insn, &cnt, &ip,
			     0, 0))
		return 0;
	*op = insn.op;
	return cnt;
}

/* fjt_walk_max() without a bound on the real time (no MTC) */
static u64 fjt_walk(struct flowjit_pt_queue *q, int tid, u64 ip, u64 clock,
		    enum intel_pt_insn_op *op)
{
	return fjt_walk_max(q, tid, ip, clock, (u64)-1, op);
}

/* the pair of faulted images, in a flowjit_pt as perf decodes with */
static struct flowjit_pt *fjt_rewrite(void)
{
	struct flowjit_store *st = flowjit_store_alloc();

	fjt_pages();
	if (!st || fjt_fault(st, 7, FJT_IP, 1, fjt_old, 90) ||
	    fjt_fault(st, 7, FJT_IP, 2, fjt_new, 150)) {
		flowjit_store_free(st);
		return NULL;
	}
	return flowjit_pt__new_store(st);
}

/* what perf prints of @fp (flowjit_pt__fprintf_stats(), @revs) into @line */
static int fjt_stats_line(struct flowjit_pt *fp, int revs, char *line, size_t size)
{
	FILE *f = fmemopen(line, size - 1, "w");

	if (!f)
		return -1;
	flowjit_pt__fprintf_stats(fp, revs, f);
	fclose(f);
	pr_debug("%s", line);
	return 0;
}

/* the decoder's instruction count at each resume: code ran between */
static u64 fjt_insns;

static int test__flowjit_tie_rewrite(struct test_suite *t __maybe_unused,
				     int subtest __maybe_unused)
{
	struct flowjit_pt *fp = fjt_rewrite();
	struct flowjit_pt_queue *untied, *q;
	struct flowjit_pt_stats s;
	enum intel_pt_insn_op op;

	TEST_ASSERT_VAL("store", fp);
	untied = flowjit_pt__queue_new(fp);
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queues", untied && q);

	/* by the clock alone the old bytes are decoded: the bug */
	TEST_ASSERT_VAL("untied: old jmp",
			fjt_walk(untied, 7, FJT_IP, 100, &op) == 1 && op == INTEL_PT_OP_JMP);

	/* revision 1's own TIP.PGE, the clock past its image: no tie */
	TEST_ASSERT_VAL("revision 1's TIP.PGE",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 92, (u64)-1, ++fjt_insns));
	/* the thread runs revision 1, faults, resumes at FJT_IP */
	TEST_ASSERT_VAL("before the fault: old jmp",
			fjt_walk(q, 7, FJT_IP, 95, &op) == 1 && op == INTEL_PT_OP_JMP);
	TEST_ASSERT_VAL("TIP.PGE ties",
			flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 100, (u64)-1, ++fjt_insns));
	TEST_ASSERT_VAL("tied: new nop; nop; ret",
			fjt_walk(q, 7, FJT_IP, 100, &op) == 3 && op == INTEL_PT_OP_RET);
	/* the clock passes the image: the same revision, now by time */
	TEST_ASSERT_VAL("later: new",
			fjt_walk(q, 7, FJT_IP, 160, &op) == 3 && op == INTEL_PT_OP_RET);
	/* an interrupt there after the thread left user mode past it */
	flowjit_pt__leave(q, 160);
	TEST_ASSERT_VAL("no second tie",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 160, (u64)-1, ++fjt_insns));
	flowjit_pt__queue_delete(untied);
	flowjit_pt__queue_delete(q);

	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("one switch, by event", s.switches[FLOWJIT_TIE_EVENT] == 1 &&
			!s.switches[FLOWJIT_TIE_TIME] && !s.switches[FLOWJIT_TIE_LATE]);
	TEST_ASSERT_VAL("instructions by event", s.insns[FLOWJIT_TIE_EVENT] == 3);
	TEST_ASSERT_VAL("instructions by time", s.insns[FLOWJIT_TIE_TIME] == 1 + 1 + 3);
	TEST_ASSERT_VAL("two revisions", s.revs == 2);
	TEST_ASSERT_VAL("ties counted", s.resumes == 3 && s.tied == 1);
	TEST_ASSERT_VAL("nothing suspect", !s.suspect);
	TEST_ASSERT_VAL("nothing in doubt", !s.in_doubt);
	flowjit_pt__delete(fp);
	return TEST_OK;
}

/*
 * An interrupt at the very IP of the thread's next fault (clock 100, the
 * fault's image at 150) looks like the fault: it is tied there. The
 * fault's own TIP.PGE, after a TIP.PGD with the clock at 120, could be
 * the fault's as well: what the tie made live since is counted in doubt
 * and perf warns. A TIP.PGD with the clock past 150 closes the tie.
 */
static int test__flowjit_tie_doubt(struct test_suite *t __maybe_unused,
				   int subtest __maybe_unused)
{
	struct flowjit_pt *fp = fjt_rewrite();
	struct flowjit_pt_queue *q;
	struct flowjit_pt_stats s;
	enum intel_pt_insn_op op;
	char line[2048] = "";

	TEST_ASSERT_VAL("store", fp);
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queue", q);
	/* revision 1's own TIP.PGE, the clock past it; the old bytes run */
	TEST_ASSERT_VAL("revision 1's TIP.PGE",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 92, 400, ++fjt_insns));
	TEST_ASSERT_VAL("old jmp", fjt_walk(q, 7, FJT_IP, 95, &op) == 1 &&
			op == INTEL_PT_OP_JMP);
	flowjit_pt__leave(q, 96);
	TEST_ASSERT_VAL("the interrupt ties",
			flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 100, 400, ++fjt_insns));
	TEST_ASSERT_VAL("new bytes", fjt_walk(q, 7, FJT_IP, 100, &op) == 3 &&
			op == INTEL_PT_OP_RET);
	flowjit_pt__leave(q, 120);
	TEST_ASSERT_VAL("the fault's TIP.PGE ties nothing more",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 130, 400, ++fjt_insns));
	TEST_ASSERT_VAL("new bytes", fjt_walk(q, 7, FJT_IP, 130, &op) == 3);
	flowjit_pt__leave(q, 170);
	TEST_ASSERT_VAL("past the fault: no tie",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 175, 400, ++fjt_insns));
	flowjit_pt__queue_delete(q);
	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("in doubt: what the first walk decoded from other bytes",
			s.in_doubt >= 1 && s.in_doubt <= 3);
	TEST_ASSERT_VAL("not unordered", !s.unordered);

	TEST_ASSERT_VAL("stats line", !fjt_stats_line(fp, 0, line, sizeof(line)));
	TEST_ASSERT_VAL("warning", strstr(line, " from user JIT code a fault image made live"));
	flowjit_pt__delete(fp);
	return TEST_OK;
}

static int test__flowjit_tie_interrupt(struct test_suite *t __maybe_unused,
				       int subtest __maybe_unused)
{
	struct flowjit_pt *fp = fjt_rewrite();
	struct flowjit_pt_queue *q;
	struct flowjit_pt_stats s;
	enum intel_pt_insn_op op;

	TEST_ASSERT_VAL("store", fp);
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queue", q);
	/* an interrupt of thread 7 at another IP of the page */
	TEST_ASSERT_VAL("other IP: no tie",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP + 8, 100, (u64)-1, ++fjt_insns));
	TEST_ASSERT_VAL("still old", fjt_walk(q, 7, FJT_IP, 100, &op) == 1 &&
			op == INTEL_PT_OP_JMP);
	/* at the fault's IP, but the fault is after the latest real time */
	TEST_ASSERT_VAL("after time_max: no tie",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 100, 140, ++fjt_insns));
	/* another thread of the process, or none known */
	TEST_ASSERT_VAL("other thread: no tie",
			!flowjit_pt__resume(q, FJT_PID, 8, FJT_IP, 100, (u64)-1, ++fjt_insns));
	TEST_ASSERT_VAL("no thread: no tie",
			!flowjit_pt__resume(q, -1, -1, FJT_IP, 100, (u64)-1, ++fjt_insns));
	TEST_ASSERT_VAL("still old", fjt_walk(q, 7, FJT_IP, 100, &op) == 1 &&
			op == INTEL_PT_OP_JMP);
	/* the fault's own TIP.PGE */
	TEST_ASSERT_VAL("the fault ties",
			flowjit_pt__resume(q, FJT_PID, 7, FJT_IP, 100, 160, ++fjt_insns));
	TEST_ASSERT_VAL("new", fjt_walk(q, 7, FJT_IP, 100, &op) == 3 && op == INTEL_PT_OP_RET);
	flowjit_pt__queue_delete(q);
	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("one tie", s.tied == 1 && s.switches[FLOWJIT_TIE_EVENT] == 1);
	flowjit_pt__delete(fp);
	return TEST_OK;
}

/*
 * Thread 8 runs the page without faulting (thread 7 took the faults):
 * with its clock at 145 the old jmp is decoded, and a real time up to 155
 * (one MTC period on) may be past revision 2's image at 150, whose bytes
 * at FJT_IP differ. The instruction is counted unordered and perf warns;
 * with the real time at most 149 it is not. Without MTC (no bound from
 * util/intel-pt.c) thread 7's own next fault, at 150, bounds what it runs
 * before it: not unordered; nothing bounds thread 8's: unordered. (That
 * unchanged bytes are not is libflowjit's test-tie.)
 */
static int test__flowjit_unordered(struct test_suite *t __maybe_unused,
				   int subtest __maybe_unused)
{
	struct flowjit_pt *fp = fjt_rewrite();
	struct flowjit_pt_queue *q;
	struct flowjit_pt_stats s;
	enum intel_pt_insn_op op;
	char line[2048] = "";

	TEST_ASSERT_VAL("store", fp);
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queue", q);
	TEST_ASSERT_VAL("before the image's time: old jmp",
			fjt_walk_max(q, 8, FJT_IP, 145, 149, &op) == 1 && op == INTEL_PT_OP_JMP);
	/* thread 7 resumes at another IP of the page: no tie, but followed */
	TEST_ASSERT_VAL("other IP: no tie",
			!flowjit_pt__resume(q, FJT_PID, 7, FJT_IP + 8, 140, (u64)-1, ++fjt_insns));
	TEST_ASSERT_VAL("no MTC, the faulting thread: old jmp",
			fjt_walk(q, 7, FJT_IP, 145, &op) == 1 && op == INTEL_PT_OP_JMP);
	flowjit_pt__queue_delete(q);
	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("nothing unordered", !s.unordered);
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queue", q);
	TEST_ASSERT_VAL("within the lag: old jmp, decoded by the clock",
			fjt_walk_max(q, 8, FJT_IP, 145, 155, &op) == 1 && op == INTEL_PT_OP_JMP);
	flowjit_pt__queue_delete(q);
	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("one unordered", s.unordered == 1);
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queue", q);
	TEST_ASSERT_VAL("no MTC, another thread: old jmp",
			fjt_walk(q, 8, FJT_IP, 145, &op) == 1 && op == INTEL_PT_OP_JMP);
	flowjit_pt__queue_delete(q);
	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("two unordered", s.unordered == 2);

	TEST_ASSERT_VAL("stats line", !fjt_stats_line(fp, 0, line, sizeof(line)));
	TEST_ASSERT_VAL("counted",
			strstr(line, "revision numbers missing); 2 unordered; 0 in doubt\n"));
	TEST_ASSERT_VAL("warning", strstr(line, "flowjit: warning: 2 instructions were decoded"));
	TEST_ASSERT_VAL("why", strstr(line, " from user JIT code that a newer image"));
	flowjit_pt__delete(fp);
	return TEST_OK;
}

/* a record of @type of @cpu at @time, as delivered to util/intel-pt.c */
static int fjt_ring(struct flowjit_pt *fp, u32 type, u32 cpu, u64 time)
{
	union perf_event event = { .header = { .type = type, .size = sizeof(event.header) } };
	struct perf_sample sample = { .cpu = cpu, .time = time };

	return flowjit_pt__early_event(fp, &event, &sample);
}

static int test__flowjit_suspect(struct test_suite *t __maybe_unused,
				 int subtest __maybe_unused)
{
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_pt_queue *q;
	struct flowjit_pt_stats s;
	struct flowjit_pt *fp;
	enum intel_pt_insn_op op;
	char line[2048] = "";

	fjt_pages();
	TEST_ASSERT_VAL("store", st && !fjt_fault(st, 7, FJT_IP, 1, fjt_old, 90));
	fp = flowjit_pt__new_store(st);
	TEST_ASSERT_VAL("flowjit_pt", fp);
	/* records of CPU 0 lost after its record at 95: in (95, 120] */
	TEST_ASSERT_VAL("cpu 0", !fjt_ring(fp, PERF_RECORD_COMM, 0, 95));
	TEST_ASSERT_VAL("cpu 1", !fjt_ring(fp, PERF_RECORD_COMM, 1, 110));
	TEST_ASSERT_VAL("lost", !fjt_ring(fp, PERF_RECORD_LOST, 0, 120));
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queue", q);
	/* before the window: nothing may have replaced revision 1 yet */
	TEST_ASSERT_VAL("walk", fjt_walk(q, 7, FJT_IP, 94, &op) == 1);
	flowjit_pt__queue_delete(q);
	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("not suspect before the window", !s.suspect);
	/* in it (CPU 1's record at 110 does not start it) */
	q = flowjit_pt__queue_new(fp);
	TEST_ASSERT_VAL("queue", q);
	TEST_ASSERT_VAL("walk", fjt_walk(q, 7, FJT_IP, 100, &op) == 1);
	TEST_ASSERT_VAL("walk", fjt_walk(q, 7, FJT_IP, 130, &op) == 1);
	flowjit_pt__queue_delete(q);
	flowjit_pt__stats(fp, &s);
	TEST_ASSERT_VAL("suspect in and after the window", s.suspect == 2);
	TEST_ASSERT_VAL("all by time", s.insns[FLOWJIT_TIE_TIME] == 3);

	/* what perf prints: always a warning for suspect instructions */
	TEST_ASSERT_VAL("stats line", !fjt_stats_line(fp, -1, line, sizeof(line)));
	TEST_ASSERT_VAL("decode line",
			strstr(line, "flowjit: decoded 3 instructions from 1 revisions:"));
	TEST_ASSERT_VAL("suspect counted", strstr(line, " 2 suspect (1 lost windows,"));
	TEST_ASSERT_VAL("warning", strstr(line, "flowjit: warning: 2 instructions were decoded"));
	TEST_ASSERT_VAL("revision line",
			strstr(line, " rev 1 pid 100 tid 7 time 90: 3 instructions, 2 suspect;"));
	flowjit_pt__delete(fp);
	return TEST_OK;
}
#endif

static struct test_case tests__flowjit[] = {
	TEST_CASE("CRC-32C", flowjit_crc32c),
	TEST_CASE("Parse records", flowjit_parse),
	TEST_CASE("Byte-swapped records, delta pieces included", flowjit_swap),
	TEST_CASE("Corrupted and truncated records", flowjit_corrupt),
	TEST_CASE("Chunk reassembly", flowjit_reasm),
	TEST_CASE("Synthesize existing eBPF images", flowjit_synth_bpf),
	TEST_CASE("No missing feature fallback for flowjit events", flowjit_no_fallback),
	TEST_CASE("Image store: retire and address reuse", flowjit_store_reuse),
	TEST_CASE("Image store: dropped records counted", flowjit_store_errors),
#ifdef HAVE_AUXTRACE_SUPPORT
	TEST_CASE("Decoder: a rewrite within one timing period, tied at TIP.PGE",
		  flowjit_tie_rewrite),
	TEST_CASE("Decoder: an interrupt at another IP ties nothing", flowjit_tie_interrupt),
	TEST_CASE("Decoder: a tie at an interrupt the fault's own TIP.PGE puts in doubt",
		  flowjit_tie_doubt),
	TEST_CASE("Decoder: instructions from suspect revisions after LOST", flowjit_suspect),
	TEST_CASE("Decoder: a newer image within the clock's lag makes old bytes unordered",
		  flowjit_unordered),
#endif
	{ .name = NULL, }
};

struct test_suite suite__flowjit = {
	.desc = "flowjit records",
	.test_cases = tests__flowjit,
};
