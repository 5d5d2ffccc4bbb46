// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_store: the code store versioned by address space,
 * range and time.
 */
#include "pr_store.h"
#include "pr_test.h"

static const uint8_t A[16] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6,
			       0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad,
			       0xae, 0xaf };
static const uint8_t B[16] = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
			       0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd,
			       0xbe, 0xbf };

static struct pr_region *add(struct pr_store *s, uint32_t space,
			     uint64_t start, const uint8_t *bytes,
			     uint64_t len, uint64_t t, const char *name)
{
	struct pr_region r;

	memset(&r, 0, sizeof(r));
	r.space = space;
	r.kind = bytes ? PR_RGN_FLOWJIT : PR_RGN_NAME;
	r.start = start;
	r.end = start + len;
	r.t_start = t;
	r.bytes = bytes;
	r.nbytes = bytes ? len : 0;
	return pr_store_add(s, &r, name);
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
	struct pr_store s;
	uint8_t b;

	pr_store_init(&s);
	prt_null(pr_store_add(NULL, NULL, NULL));
	prt_null(add(&s, 0, 0x1000, A, 0, 1, "empty"));
	pr_store_freeze(&s);
	prt_null(pr_store_lookup(&s, 0, 0x1000, 5, NULL, NULL));
	prt_uint_eq(pr_store_read(&s, 0, 0x1000, 5, &b, 1), 0);
	prt_uint_eq(pr_store_read(NULL, 0, 0x1000, 5, &b, 1), 0);
	/* frozen: no more regions */
	prt_null(add(&s, 0, 0x1000, A, 16, 1, "late"));
	pr_store_fini(&s);
	pr_store_fini(NULL);
	return prt_passed();
}

/* A BPF program is unloaded and a second one reuses its address. */
static struct prt_result address_reuse(void)
{
	struct pr_store s;
	const struct pr_region *r;

	pr_store_init(&s);
	prt_ptr(add(&s, 0, 0xffffffffa0000000ULL, A, 16, 100, "progA"));
	prt_uint_eq(pr_store_retire(&s, 0, 0xffffffffa0000000ULL,
				    0xffffffffa0000010ULL, 200,
				    PR_RGN_FLOWJIT, 1), 1);
	prt_ptr(add(&s, 0, 0xffffffffa0000000ULL, B, 16, 300, "progB"));
	pr_store_freeze(&s);

	prt_uint_eq(at(&s, 0, 0xffffffffa0000001ULL, 150), 0xa1);
	prt_uint_eq(at(&s, 0, 0xffffffffa0000001ULL, 350), 0xb1);
	/* between unload and reload: the next image (time is a lower bound) */
	prt_uint_eq(at(&s, 0, 0xffffffffa0000001ULL, 250), 0xb1);
	/* before the first load: the first image */
	prt_uint_eq(at(&s, 0, 0xffffffffa0000001ULL, 50), 0xa1);
	r = pr_store_lookup(&s, 0, 0xffffffffa0000004ULL, 150, NULL, NULL);
	prt_ptr(r);
	prt_str_eq(r->name, "progA");
	prt_uint_eq(r->t_end, 200);
	pr_store_fini(&s);
	return prt_passed();
}

/* A user JIT page rewritten in place: the newest revision live wins. */
static struct prt_result revision_switch(void)
{
	struct pr_store s;

	pr_store_init(&s);
	prt_ptr(add(&s, 100, 0x10000, A, 16, 100, "rev1"));
	prt_ptr(add(&s, 100, 0x10000, B, 16, 200, "rev2"));
	prt_ptr(add(&s, 101, 0x10000, B, 16, 50, "other pid"));
	pr_store_freeze(&s);
	prt_uint_eq(at(&s, 100, 0x10002, 150), 0xa2);
	prt_uint_eq(at(&s, 100, 0x10002, 200), 0xb2);
	prt_uint_eq(at(&s, 100, 0x10002, 1000), 0xb2);
	/* address spaces are separate */
	prt_uint_eq(at(&s, 101, 0x10002, 150), 0xb2);
	prt_uint_eq(at(&s, 102, 0x10002, 150), 0);
	pr_store_fini(&s);
	return prt_passed();
}

/* Retired code is gone; retire only matches live regions at its time. */
static struct prt_result retire(void)
{
	struct pr_store s;

	pr_store_init(&s);
	prt_ptr(add(&s, 0, 0x1000, A, 16, 100, "a"));
	prt_uint_eq(pr_store_retire(&s, 0, 0x1000, 0x1010, 50, 0, 1), 0);
	prt_uint_eq(pr_store_retire(&s, 0, 0x1004, 0x1010, 150, 0, 1), 0);
	prt_uint_eq(pr_store_retire(&s, 0, 0x1000, 0x1010, 150, 0, 1), 1);
	prt_uint_eq(pr_store_retire(&s, 0, 0x1000, 0x1010, 160, 0, 1), 0);
	pr_store_freeze(&s);
	prt_uint_eq(at(&s, 0, 0x1000, 120), 0xa0);
	prt_uint_eq(at(&s, 0, 0x1000, 150), 0);
	prt_uint_eq(at(&s, 0, 0x1000, 1000), 0);
	pr_store_fini(&s);
	return prt_passed();
}

/* A small patch over a larger region; reads cross region boundaries. */
static struct prt_result overlay_read(void)
{
	struct pr_store s;
	uint8_t buf[16];
	uint64_t lo, hi;
	const struct pr_region *r;

	pr_store_init(&s);
	prt_ptr(add(&s, 0, 0x1000, A, 16, 100, "text"));
	prt_ptr(add(&s, 0, 0x1004, B, 2, 200, "poke"));
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
	pr_store_fini(&s);
	return prt_passed();
}

/* Name-only regions (KSYMBOL) name code but give no bytes. */
static struct prt_result names(void)
{
	struct pr_store s;
	const struct pr_region *r;

	pr_store_init(&s);
	prt_ptr(add(&s, 0, 0x2000, NULL, 16, 100, "bpf_prog_x"));
	pr_store_freeze(&s);
	prt_null(pr_store_lookup(&s, 0, 0x2004, 150, NULL, NULL));
	r = pr_store_name(&s, 0, 0x2004, 150);
	prt_ptr(r);
	prt_str_eq(r->name, "bpf_prog_x");
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
	prt_run(suite, "pr_store: a revision switch mid-trace: the newest live "
		"revision wins, per address space", revision_switch);
	prt_run(suite, "pr_store: a retired image gives no bytes after its "
		"retirement", retire);
	prt_run(suite, "pr_store: a patch over a region: reads assemble bytes "
		"across regions at the right time", overlay_read);
	prt_run(suite, "pr_store: name-only regions name code without bytes",
		names);
	prt_run(suite, "pr_store: a missing file is counted once", missing_file);
	prt_run(suite, "pr_store: an ELF file maps; exec retires it; a wrong "
		"build-id is refused", file_and_buildid);
	return prt_exit(&suite);
}
