// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_store: the code store versioned by address space,
 * range and time, its regions and the flowjit images of the library's
 * store, and the answer combining them.
 */
#include "pr_store.h"
#include "pr_test.h"

static const uint8_t A[16] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6,
			       0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad,
			       0xae, 0xaf };
static const uint8_t B[16] = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
			       0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd,
			       0xbe, 0xbf };

#define KADDR	0xffffffffa0000000ULL
#define SPACE	0x7ffffffff000ULL	/* retiring a whole address space */

/* A region with bytes (as TEXT_POKE makes them), or a name-only one. */
static struct pr_region *add(struct pr_store *s, uint32_t space,
			     uint64_t start, const uint8_t *bytes,
			     uint64_t len, uint64_t t, const char *name)
{
	struct pr_region r;

	memset(&r, 0, sizeof(r));
	r.space = space;
	r.kind = bytes ? PR_RGN_POKE : PR_RGN_NAME;
	r.start = start;
	r.end = start + len;
	r.t_start = t;
	r.bytes = bytes;
	r.nbytes = bytes ? len : 0;
	return pr_store_add(s, &r, name);
}

/* A flowjit record, one chunk of @len bytes at @bytes or (NULL) a retire
 * record; user records of process @pid, kernel ones for @asid 0.
 */
static int fj(struct pr_store *s, uint8_t kind, uint64_t asid, uint32_t pid,
	      uint64_t addr, const uint8_t *bytes, uint64_t len, uint64_t id,
	      uint32_t revision, uint64_t t)
{
	uint8_t body[sizeof(struct flowjit_record) + 16];
	struct flowjit_record rec = {
		.version = FLOWJIT_RECORD_VERSION, .kind = kind,
		.op = bytes ? FLOWJIT_OP_IMAGE : FLOWJIT_OP_RETIRE,
		.asid = asid, .pid = pid, .tid = pid, .addr = addr, .len = len,
		.id = id, .revision = revision,
		.csum = bytes ? flowjit_csum(bytes, len) : 0,
		.chunk_len = bytes ? len : 0,
	};

	if (bytes && len > 16)
		return -1;
	memcpy(body, &rec, sizeof(rec));
	if (bytes)
		memcpy(body + sizeof(rec), bytes, len);
	return pr_store_add_flowjit(s, body, sizeof(rec) + rec.chunk_len, t,
				    1);
}

static int bpf(struct pr_store *s, uint64_t addr, const uint8_t *bytes,
	       uint64_t len, uint64_t id, uint64_t t)
{
	return fj(s, FLOWJIT_KIND_BPF_PROG, FLOWJIT_ASID_KERNEL, 1, addr, bytes,
		  len, id, 1, t);
}

static int ujit(struct pr_store *s, uint64_t asid, uint32_t pid,
		uint64_t addr, const uint8_t *bytes, uint64_t len,
		uint32_t revision, uint64_t t)
{
	return fj(s, FLOWJIT_KIND_USER_JIT, asid, pid, addr, bytes, len, 0,
		  revision, t);
}

static uint8_t at(struct pr_store *s, uint32_t space, uint64_t ip,
		  uint64_t t)
{
	uint8_t b = 0;

	if (pr_store_read(s, space, ip, t, &b, 1) != 1)
		return 0;
	return b;
}

static struct prt_result null_and_empty(void)
{
	struct flowjit_store_stats st;
	struct pr_store s;
	uint8_t b;

	pr_store_init(&s);
	prt_null(pr_store_add(NULL, NULL, NULL));
	prt_null(add(&s, 0, 0x1000, A, 0, 1, "empty"));
	prt_int_eq(pr_store_add_flowjit(NULL, A, 16, 1, 1), 0);
	pr_store_name_flowjit(NULL, 0x1000, 1, "x");
	/* no flowjit record: no counts */
	st.records = 1;
	pr_store_flowjit_stats(&s, &st);
	prt_uint_eq(st.records, 0);
	pr_store_freeze(&s);
	prt_null(pr_store_lookup(&s, 0, 0x1000, 5, NULL, NULL));
	prt_uint_eq(pr_store_read(&s, 0, 0x1000, 5, &b, 1), 0);
	prt_uint_eq(pr_store_read(NULL, 0, 0x1000, 5, &b, 1), 0);
	/* frozen: no more regions or images */
	prt_null(add(&s, 0, 0x1000, A, 16, 1, "late"));
	prt_int_eq(bpf(&s, KADDR, A, 16, 7, 1), 0);
	pr_store_flowjit_stats(&s, &st);
	prt_uint_eq(st.records, 0);
	pr_store_fini(&s);
	pr_store_fini(NULL);
	return prt_passed();
}

/* A BPF program is unloaded and a second one reuses its address. */
static struct prt_result address_reuse(void)
{
	struct flowjit_store_stats st;
	struct pr_store s;
	const struct pr_region *r;
	uint64_t lo, hi;

	pr_store_init(&s);
	prt_int_eq(bpf(&s, KADDR, A, 16, 7, 100), 0);
	prt_int_eq(bpf(&s, KADDR, NULL, 16, 7, 200), 0);
	prt_int_eq(bpf(&s, KADDR, B, 16, 8, 300), 0);
	pr_store_freeze(&s);

	prt_uint_eq(at(&s, 0, KADDR + 1, 150), 0xa1);
	prt_uint_eq(at(&s, 0, KADDR + 1, 350), 0xb1);
	/* between unload and reload: the next image (time is a lower bound) */
	prt_uint_eq(at(&s, 0, KADDR + 1, 250), 0xb1);
	/* before the first load: the first image */
	prt_uint_eq(at(&s, 0, KADDR + 1, 50), 0xa1);
	r = pr_store_lookup(&s, 0, KADDR + 4, 150, &lo, &hi);
	prt_ptr(r);
	prt_str_eq(r->name, "bpf_prog_7");
	prt_uint_eq(r->kind, PR_RGN_FLOWJIT);
	prt_uint_eq(r->rev->id, 7);
	prt_uint_eq(r->t_start, 100);
	prt_uint_eq(lo, KADDR);
	prt_uint_eq(hi, KADDR + 16);
	r = pr_store_lookup(&s, 0, KADDR + 4, 250, NULL, NULL);
	prt_ptr(r);
	prt_str_eq(r->name, "bpf_prog_8");
	prt_uint_eq(s.fj_retired, 1);
	prt_uint_eq(s.fj_retire_unmatched, 0);
	pr_store_flowjit_stats(&s, &st);
	prt_uint_eq(st.images, 2);
	prt_uint_eq(st.retires, 1);
	pr_store_fini(&s);
	return prt_passed();
}

/* Epochs change exactly at the flowjit records' times: lookups within
 * one give one answer.
 */
static struct prt_result epochs(void)
{
	struct pr_store s;
	uint64_t t;

	pr_store_init(&s);
	prt_int_eq(bpf(&s, KADDR, A, 16, 7, 100), 0);
	prt_int_eq(bpf(&s, KADDR, NULL, 16, 7, 200), 0);
	prt_int_eq(bpf(&s, KADDR, B, 16, 8, 300), 0);
	pr_store_freeze(&s);

	prt_uint_eq(pr_store_epoch(&s, 0), 0);
	prt_uint_eq(pr_store_epoch(&s, 99), 0);
	prt_uint_eq(pr_store_epoch(&s, 100), 1);
	prt_uint_eq(pr_store_epoch(&s, 101), 2);
	prt_uint_eq(pr_store_epoch(&s, 199), 2);
	prt_uint_eq(pr_store_epoch(&s, 200), 3);
	prt_uint_eq(pr_store_epoch(&s, 300), 5);
	prt_uint_eq(pr_store_epoch(&s, UINT64_MAX), 6);
	/* the same epoch, the same answer */
	for (t = 1; t < 400; ++t)
		if (pr_store_epoch(&s, t) == pr_store_epoch(&s, t - 1))
			prt_uint_eq(at(&s, 0, KADDR + 1, t),
				    at(&s, 0, KADDR + 1, t - 1));
	pr_store_fini(&s);
	return prt_passed();
}

/* A user JIT page rewritten in place: the newest revision live wins;
 * processes are apart (by asid).
 */
static struct prt_result revision_switch(void)
{
	const struct pr_region *r;
	struct pr_store s;

	pr_store_init(&s);
	prt_int_eq(ujit(&s, 5, 100, 0x10000, A, 16, 1, 100), 0);
	prt_int_eq(ujit(&s, 5, 100, 0x10000, B, 16, 2, 200), 0);
	prt_int_eq(ujit(&s, 6, 101, 0x10000, B, 16, 1, 50), 0);
	pr_store_freeze(&s);
	prt_uint_eq(at(&s, 100, 0x10002, 150), 0xa2);
	prt_uint_eq(at(&s, 100, 0x10002, 200), 0xb2);
	prt_uint_eq(at(&s, 100, 0x10002, 1000), 0xb2);
	/* address spaces are separate */
	prt_uint_eq(at(&s, 101, 0x10002, 150), 0xb2);
	prt_uint_eq(at(&s, 102, 0x10002, 150), 0);
	prt_uint_eq(at(&s, 0, 0x10002, 150), 0);
	r = pr_store_lookup(&s, 100, 0x10002, 150, NULL, NULL);
	prt_ptr(r);
	prt_str_eq(r->name, "jit:100:0x10000");
	prt_uint_eq(r->rev->revision, 1);
	prt_uint_eq(r->space, 100);
	pr_store_fini(&s);
	return prt_passed();
}

/* An exec keeps the pid and gives a new address space: the old image is
 * not used once it ended, even before the new one at its address is live.
 */
static struct prt_result exec_new_asid(void)
{
	struct pr_store s;

	pr_store_init(&s);
	prt_int_eq(ujit(&s, 5, 100, 0x10000, A, 16, 1, 100), 0);
	prt_int_eq(ujit(&s, 5, 100, 0, NULL, SPACE, 0, 200), 0);
	prt_int_eq(ujit(&s, 9, 100, 0x10000, B, 16, 1, 300), 0);
	pr_store_freeze(&s);
	prt_uint_eq(at(&s, 100, 0x10003, 150), 0xa3);
	prt_uint_eq(at(&s, 100, 0x10003, 250), 0xb3);
	prt_uint_eq(at(&s, 100, 0x10003, 350), 0xb3);
	/* the exec's retire record of the whole space hid the page */
	prt_uint_eq(s.fj_retired, 1);
	pr_store_fini(&s);
	return prt_passed();
}

/* Retired code is gone; a retire record only counts if it hid code. */
static struct prt_result retire(void)
{
	struct pr_store s;

	pr_store_init(&s);
	prt_ptr(add(&s, 0, 0x1000, A, 16, 100, "a"));
	prt_uint_eq(pr_store_retire(&s, 0, 0x1000, 0x1010, 50, 0, 1), 0);
	prt_uint_eq(pr_store_retire(&s, 0, 0x1004, 0x1010, 150, 0, 1), 0);
	prt_uint_eq(pr_store_retire(&s, 0, 0x1000, 0x1010, 150, 0, 1), 1);
	prt_uint_eq(pr_store_retire(&s, 0, 0x1000, 0x1010, 160, 0, 1), 0);
	/* a flowjit image: before it, elsewhere, then for real, and again */
	prt_int_eq(bpf(&s, KADDR, A, 16, 7, 100), 0);
	prt_int_eq(bpf(&s, KADDR, NULL, 16, 7, 50), 0);
	prt_int_eq(bpf(&s, KADDR + 16, NULL, 16, 7, 150), 0);
	prt_int_eq(bpf(&s, KADDR, NULL, 16, 7, 150), 0);
	prt_int_eq(bpf(&s, KADDR, NULL, 16, 7, 160), 0);
	pr_store_freeze(&s);
	prt_uint_eq(s.fj_retired, 1);
	prt_uint_eq(s.fj_retire_unmatched, 3);
	prt_uint_eq(at(&s, 0, 0x1000, 120), 0xa0);
	prt_uint_eq(at(&s, 0, 0x1000, 150), 0);
	prt_uint_eq(at(&s, 0, 0x1000, 1000), 0);
	prt_uint_eq(at(&s, 0, KADDR, 120), 0xa0);
	prt_uint_eq(at(&s, 0, KADDR, 150), 0);
	prt_uint_eq(at(&s, 0, KADDR, 1000), 0);
	pr_store_fini(&s);
	return prt_passed();
}

/* Retiring part of an image hides that part only. */
static struct prt_result retire_part(void)
{
	uint8_t buf[16];
	struct pr_store s;

	pr_store_init(&s);
	prt_int_eq(ujit(&s, 5, 100, 0x10000, A, 16, 1, 100), 0);
	prt_int_eq(ujit(&s, 5, 100, 0x10004, NULL, 4, 0, 150), 0);
	pr_store_freeze(&s);
	prt_uint_eq(s.fj_retired, 1);
	prt_uint_eq(at(&s, 100, 0x10004, 120), 0xa4);
	prt_uint_eq(at(&s, 100, 0x10003, 200), 0xa3);
	prt_uint_eq(at(&s, 100, 0x10004, 200), 0);
	prt_uint_eq(at(&s, 100, 0x10007, 200), 0);
	prt_uint_eq(at(&s, 100, 0x10008, 200), 0xa8);
	/* reads stop at the hole */
	prt_uint_eq(pr_store_read(&s, 100, 0x10000, 200, buf, 16), 4);
	prt_uint_eq(pr_store_read(&s, 100, 0x10008, 200, buf, 16), 8);
	prt_uint_eq(buf[7], 0xaf);
	pr_store_fini(&s);
	return prt_passed();
}

/* A small patch over a larger region; reads cross region boundaries;
 * regions and flowjit images combine by their start times.
 */
static struct prt_result overlay_read(void)
{
	struct pr_store s;
	uint8_t buf[16];
	uint64_t lo, hi;
	const struct pr_region *r;

	pr_store_init(&s);
	prt_ptr(add(&s, 0, 0x1000, A, 16, 100, "text"));
	prt_ptr(add(&s, 0, 0x1004, B, 2, 200, "poke"));
	/* kernel text, a flowjit image over it from 300, a poke at 400 */
	prt_ptr(add(&s, 0, KADDR + 0x1000, A, 16, 100, "ktext"));
	prt_int_eq(bpf(&s, KADDR + 0x1000, B, 16, 7, 300), 0);
	prt_ptr(add(&s, 0, KADDR + 0x1008, A, 2, 400, "kpoke"));
	/* a region and an image of equal time: the one added later wins */
	prt_ptr(add(&s, 0, KADDR + 0x2000, A, 16, 500, "tie-a"));
	prt_int_eq(bpf(&s, KADDR + 0x2000, B, 16, 9, 500), 0);
	prt_int_eq(bpf(&s, KADDR + 0x3000, B, 16, 10, 500), 0);
	prt_ptr(add(&s, 0, KADDR + 0x3000, A, 16, 500, "tie-b"));
	pr_store_freeze(&s);
	prt_uint_eq(pr_store_read(&s, 0, 0x1002, 250, buf, 6), 6);
	prt_uint_eq(buf[0], 0xa2);
	prt_uint_eq(buf[1], 0xa3);
	prt_uint_eq(buf[2], 0xb0);
	prt_uint_eq(buf[3], 0xb1);
	prt_uint_eq(buf[4], 0xa6);
	prt_uint_eq(pr_store_read(&s, 0, 0x1002, 150, buf, 6), 6);
	prt_uint_eq(buf[2], 0xa4);
	/* the answer's address range stops at the patch */
	r = pr_store_lookup(&s, 0, 0x1001, 250, &lo, &hi);
	prt_ptr(r);
	prt_uint_eq(lo, 0x1000);
	prt_uint_eq(hi, 0x1004);
	/* reads stop at the end of the code */
	prt_uint_eq(pr_store_read(&s, 0, 0x100c, 250, buf, 15), 4);

	/* kernel text, the image from 300, the poke over the image */
	prt_uint_eq(at(&s, 0, KADDR + 0x1009, 250), 0xa9);
	prt_uint_eq(at(&s, 0, KADDR + 0x1009, 350), 0xb9);
	prt_uint_eq(at(&s, 0, KADDR + 0x1009, 450), 0xa1);
	prt_uint_eq(pr_store_read(&s, 0, KADDR + 0x1006, 450, buf, 6), 6);
	prt_uint_eq(buf[0], 0xb6);
	prt_uint_eq(buf[1], 0xb7);
	prt_uint_eq(buf[2], 0xa0);
	prt_uint_eq(buf[3], 0xa1);
	prt_uint_eq(buf[4], 0xba);
	/* the answer's range: where both the regions' and the images' hold */
	r = pr_store_lookup(&s, 0, KADDR + 0x1001, 450, &lo, &hi);
	prt_ptr(r);
	prt_str_eq(r->name, "bpf_prog_7");
	prt_uint_eq(lo, KADDR + 0x1000);
	prt_uint_eq(hi, KADDR + 0x1008);
	r = pr_store_lookup(&s, 0, KADDR + 0x100a, 450, &lo, &hi);
	prt_ptr(r);
	prt_uint_eq(lo, KADDR + 0x100a);
	prt_uint_eq(hi, KADDR + 0x1010);
	/* nothing live at 50: the first to come, the text */
	prt_uint_eq(at(&s, 0, KADDR + 0x1002, 50), 0xa2);
	/* ties: by order of adding, live and late alike */
	prt_uint_eq(at(&s, 0, KADDR + 0x2002, 600), 0xb2);
	prt_uint_eq(at(&s, 0, KADDR + 0x3002, 600), 0xa2);
	prt_uint_eq(at(&s, 0, KADDR + 0x2002, 450), 0xb2);
	prt_uint_eq(at(&s, 0, KADDR + 0x3002, 450), 0xa2);
	pr_store_fini(&s);
	return prt_passed();
}

/* Name-only regions (KSYMBOL) name code but give no bytes; a KSYMBOL at
 * a flowjit image's start names it while it is live.
 */
static struct prt_result names(void)
{
	struct pr_store s;
	const struct pr_region *r;

	pr_store_init(&s);
	prt_ptr(add(&s, 0, 0x2000, NULL, 16, 100, "bpf_prog_x"));
	prt_int_eq(bpf(&s, KADDR, A, 16, 7, 100), 0);
	pr_store_name_flowjit(&s, KADDR, 101, "bpf_prog_aaaa_A");
	/* not its start, not live: no name */
	prt_int_eq(bpf(&s, KADDR + 0x100, A, 16, 8, 100), 0);
	pr_store_name_flowjit(&s, KADDR + 0x104, 101, "inside");
	pr_store_name_flowjit(&s, KADDR + 0x100, 99, "early");
	prt_int_eq(ujit(&s, 5, 100, 0x10000, A, 16, 1, 100), 0);
	pr_store_freeze(&s);
	prt_null(pr_store_lookup(&s, 0, 0x2004, 150, NULL, NULL));
	r = pr_store_name(&s, 0, 0x2004, 150);
	prt_ptr(r);
	prt_str_eq(r->name, "bpf_prog_x");
	r = pr_store_name(&s, 0, KADDR + 4, 150);
	prt_ptr(r);
	prt_str_eq(r->name, "bpf_prog_aaaa_A");
	r = pr_store_name(&s, 0, KADDR + 0x104, 150);
	prt_ptr(r);
	prt_str_eq(r->name, "bpf_prog_8");
	r = pr_store_name(&s, 100, 0x10004, 150);
	prt_ptr(r);
	prt_str_eq(r->name, "jit:100:0x10000");
	pr_store_fini(&s);
	return prt_passed();
}

static struct prt_result missing_file(void)
{
	struct pr_store s;

	pr_store_init(&s);
	prt_null(pr_store_add_file(&s, 1, 0x1000, 0x1000, 0,
				   "/nonexistent/ptreplay", 1, NULL, 0));
	prt_null(pr_store_add_file(&s, 1, 0x1000, 0x1000, 0,
				   "/nonexistent/ptreplay", 1, NULL, 0));
	prt_uint_eq(s.files_missing, 1);
	pr_store_fini(&s);
	return prt_passed();
}

static struct prt_result file_and_buildid(void)
{
	struct pr_store s;
	const struct pr_region *r;
	uint8_t bid[20];

	pr_store_init(&s);
	r = pr_store_add_file(&s, 1, 0x400000, 0x1000, 0, "/proc/self/exe", 1,
			      NULL, 0);
	/* /proc/self/exe is not a regular file to stat... it is a link */
	if (!r)
		r = pr_store_add_file(&s, 1, 0x400000, 0x1000, 0,
				      "/bin/sh", 1, NULL, 0);
	prt_ptr(r);
	prt_uint_eq(pr_store_retire(&s, 1, 0, UINT64_MAX, 5, 0, 0), 1);
	memset(bid, 0x5a, sizeof(bid));
	prt_null(pr_store_add_file(&s, 1, 0x400000, 0x1000, 0, "/bin/sh", 10,
				   bid, sizeof(bid)));
	prt_uint_eq(s.buildid_mismatch, 1);
	pr_store_freeze(&s);
	prt_null(pr_store_lookup(&s, 1, 0x400000, 10, NULL, NULL));
	pr_store_fini(&s);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_store: NULL and empty regions are refused, a frozen "
		"store takes no more", null_and_empty);
	prt_run(suite, "pr_store: an address reused by a second image at a "
		"later time reads each in its own time", address_reuse);
	prt_run(suite, "pr_store: epochs change at the records' times only; "
		"within one, lookups answer the same", epochs);
	prt_run(suite, "pr_store: a revision switch mid-trace: the newest live "
		"revision wins, per address space", revision_switch);
	prt_run(suite, "pr_store: an exec gives a new address space: the old "
		"image is not used after it, a late new one is", exec_new_asid);
	prt_run(suite, "pr_store: a retired region or image gives no bytes "
		"after its retirement", retire);
	prt_run(suite, "pr_store: a retire record of part of an image hides "
		"that part only", retire_part);
	prt_run(suite, "pr_store: patches over regions and images: reads "
		"assemble bytes from both at the right time", overlay_read);
	prt_run(suite, "pr_store: name-only regions name code without bytes; "
		"KSYMBOL and default names of images", names);
	prt_run(suite, "pr_store: a missing file is counted once", missing_file);
	prt_run(suite, "pr_store: an ELF file maps; exec retires it; a wrong "
		"build-id is refused", file_and_buildid);
	return prt_exit(&suite);
}
