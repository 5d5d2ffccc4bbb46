// SPDX-License-Identifier: GPL-2.0
/*
 * flowjit_tie: fault images tied to the trace's TIP.PGE at their IP, only
 * the thread's next one, never beyond the latest time the decoder allows;
 * the fault index; lost records and missing revision numbers make
 * revisions suspect.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../libflowjit.h"
#include "tap.h"

#define PAGE	0x7f0000001000ULL
#define PAGE2	0x7f0000002000ULL
#define ASID	5

static uint8_t bytes[4][4096];
/* the decoder's instruction count: something ran between two resumes */
static uint64_t insns;

/* a user JIT record of pid 100 in ASID: @op of [@addr, @addr + @len) */
static void chunk(struct flowjit_chunk *c, uint8_t op, uint64_t addr, uint64_t len)
{
	memset(c, 0, sizeof(*c));
	c->rec.version = FLOWJIT_RECORD_VERSION;
	c->rec.kind = FLOWJIT_KIND_USER_JIT;
	c->rec.op = op;
	c->rec.asid = ASID;
	c->rec.pid = 100;
	c->rec.addr = addr;
	c->rec.len = len;
}

/* a user JIT image of @page by thread @tid, faulted at @ip, at @time */
static const struct flowjit_rev *fault(struct flowjit_store *st, uint32_t tid, uint64_t page,
				       uint64_t ip, uint32_t revision, int v, uint64_t time)
{
	const struct flowjit_rev *added = NULL;
	struct flowjit_chunk c;

	chunk(&c, FLOWJIT_OP_IMAGE, page, sizeof(bytes[v]));
	c.rec.tid = tid;
	c.rec.id = ip;
	c.rec.revision = revision;
	c.rec.csum = flowjit_csum(bytes[v], sizeof(bytes[v]));
	c.rec.chunk_len = sizeof(bytes[v]);
	c.bytes = bytes[v];
	if (flowjit_store_add_chunk(st, &c, time, &added))
		return NULL;
	return added;
}

/* a retire record of [@addr, @addr + @len) at @time */
static bool retire(struct flowjit_store *st, uint64_t addr, uint64_t len, uint64_t time)
{
	struct flowjit_chunk c;

	chunk(&c, FLOWJIT_OP_RETIRE, addr, len);
	return !flowjit_store_add_chunk(st, &c, time, NULL);
}

/* the revision a decoder with clock @time reads at @ip under @tie */
static uint32_t at(const struct flowjit_tie *tie, uint64_t ip, uint64_t time)
{
	const struct flowjit_rev *r;

	r = flowjit_store_find(tie->st, ASID, ip, flowjit_tie_time(tie, time));
	return r ? r->revision : 0;
}

static void fill(void)
{
	int i;

	for (i = 0; i < 4; i++)
		memset(bytes[i], 0x90 + i, sizeof(bytes[i]));
}

/*
 * A page rewritten in place and run again between two timing packets: the
 * clock (100) is older than the second image (150); the TIP.PGE at the
 * fault's IP ties it, and the switch is reported as tied by the event.
 */
static int rewrite_within_one_period(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r1, *r2;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	r1 = fault(st, 7, PAGE, PAGE + 0x40, 1, 0, 90);
	r2 = fault(st, 7, PAGE, PAGE + 0x40, 2, 1, 150);
	TAP_CHECK(r1 && r2);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	/* revision 1's TIP.PGE: the clock (95) passed its fault, no tie */
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 95, 300, ++insns));
	TAP_CHECK(tie.passed == 1 && tie.last == r1);
	/* without a tie the clock says revision 1 */
	TAP_CHECK(at(&tie, PAGE + 0x40, 100) == 1);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x40, 100, 300, ++insns) == r2);
	TAP_CHECK(at(&tie, PAGE + 0x40, 100) == 2);
	TAP_CHECK(flowjit_tie_how(&tie, r2, 100) == FLOWJIT_TIE_EVENT);
	TAP_CHECK(flowjit_tie_how(&tie, r1, 100) == FLOWJIT_TIE_TIME);
	TAP_CHECK(flowjit_tie_how(&tie, r2, 150) == FLOWJIT_TIE_TIME);
	TAP_CHECK(tie.resumes == 2 && tie.tied == 1 && tie.last == r2);
	/* a later clock never goes back */
	TAP_CHECK(flowjit_tie_time(&tie, 120) == 150 && flowjit_tie_time(&tie, 170) == 170);
	TAP_CHECK(!strcmp(flowjit_tie_how_name(FLOWJIT_TIE_EVENT), "event"));
	flowjit_store_free(st);
	return 0;
}

/*
 * An interrupt inside the page before the write (TIP.PGE at another IP)
 * ties nothing; one at the fault's IP but with a time_max before the
 * fault ties nothing either; the fault's own TIP.PGE does.
 */
static int interrupt_is_not_a_fault(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r2;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	TAP_CHECK(fault(st, 7, PAGE, PAGE + 0x40, 1, 0, 90));
	r2 = fault(st, 7, PAGE, PAGE + 0x40, 2, 1, 150);
	TAP_CHECK(r2);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x48, 100, UINT64_MAX, ++insns));
	TAP_CHECK(at(&tie, PAGE + 0x48, 100) == 1);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 100, 140, ++insns));
	TAP_CHECK(at(&tie, PAGE + 0x40, 100) == 1);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x40, 100, 160, ++insns) == r2);
	TAP_CHECK(tie.resumes == 3 && tie.tied == 1);
	flowjit_store_free(st);
	return 0;
}

/*
 * Only the thread's next fault is tied: a TIP.PGE at the IP of a later
 * one (an interrupt there, before the fault in between) ties nothing, and
 * another thread's faults are not this thread's.
 */
static int only_the_next_fault_of_the_thread(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *a, *b;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	a = fault(st, 7, PAGE, PAGE + 0x10, 1, 0, 110);
	b = fault(st, 7, PAGE2, PAGE2 + 0x20, 2, 1, 120);
	TAP_CHECK(fault(st, 8, PAGE, PAGE + 0x30, 3, 2, 115));
	TAP_CHECK(a && b);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE2 + 0x20, 100, UINT64_MAX, ++insns));
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x30, 100, UINT64_MAX, ++insns));
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x10, 100, UINT64_MAX, ++insns) == a);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE2 + 0x20, 100, UINT64_MAX, ++insns) == b);
	TAP_CHECK(flowjit_tie_time(&tie, 100) == 120);
	/* thread 8 has its own next fault */
	flowjit_tie_thread(&tie, ASID, 8);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x30, 100, UINT64_MAX, ++insns));	/* 115 < floor */
	flowjit_store_free(st);
	return 0;
}

/*
 * An instruction crossing into the next page faults once per page at the
 * same IP: one tie per TIP.PGE, in order. A fault whose TIP.PGE was lost
 * is passed by the clock, and the next one is tied again.
 */
static int same_ip_twice_and_a_lost_event(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *a, *b, *c, *d;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	a = fault(st, 7, PAGE, PAGE2 - 3, 1, 0, 100);
	b = fault(st, 7, PAGE2, PAGE2 - 3, 2, 1, 100);	/* same time: by seq */
	c = fault(st, 7, PAGE, PAGE + 0x80, 3, 2, 200);
	d = fault(st, 7, PAGE, PAGE + 0x90, 4, 3, 300);
	TAP_CHECK(a && b && c && d);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE2 - 3, 50, UINT64_MAX, ++insns) == a);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE2 - 3, 50, UINT64_MAX, ++insns) == b);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE2 - 3, 50, UINT64_MAX, ++insns));
	/* c's TIP.PGE was lost: d's ties only once the clock passed c */
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x90, 150, UINT64_MAX, ++insns));
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x90, 250, UINT64_MAX, ++insns) == d);
	TAP_CHECK(at(&tie, PAGE + 0x90, 250) == 4);
	flowjit_store_free(st);
	return 0;
}

/*
 * Files of kernels that did not record the IP (id 0): never tied, at no
 * IP of the page (an interrupt there would look the same), and they do
 * not hide the thread's faults after them either.
 */
static int no_ip_is_never_tied(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *b;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	TAP_CHECK(fault(st, 7, PAGE, 0, 1, 0, 100));
	b = fault(st, 7, PAGE2, PAGE2 + 4, 2, 1, 110);
	TAP_CHECK(b);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE, 50, UINT64_MAX, ++insns));
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0xffc, 50, UINT64_MAX, ++insns));
	TAP_CHECK(at(&tie, PAGE, 50) == 0);
	/* the clock passes it: the next fault is tied at its IP */
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE2 + 4, 100, UINT64_MAX, ++insns) == b);
	flowjit_store_free(st);
	return 0;
}

/* Without a thread, or for a fault the clock passed, nothing is tied. */
static int nothing_to_tie(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	struct flowjit_tie tie;

	TAP_CHECK(st);
	TAP_CHECK(fault(st, 7, PAGE, PAGE, 1, 0, 100));
	flowjit_tie_init(&tie, st);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE, 50, UINT64_MAX, ++insns));
	TAP_CHECK(tie.resumes == 0);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE, 100, UINT64_MAX, ++insns));	/* live by time */
	TAP_CHECK(flowjit_tie_how(&tie, NULL, 100) == FLOWJIT_TIE_NONE);
	TAP_CHECK(!flowjit_store_next_fault(st, ASID, 7, 100, UINT64_MAX));
	TAP_CHECK(!flowjit_store_next_fault(NULL, ASID, 7, 0, 0));
	TAP_CHECK(!flowjit_store_next_fault(st, ASID + 1, 7, 0, 0));
	flowjit_store_free(st);
	return 0;
}

/*
 * The thread's next fault bounds the real time of what it runs now: the
 * first after the lookup time (the floor a tie set, or a later clock),
 * its own, never another thread's; unknown after an overflow, for a
 * fault without its IP, and for no thread.
 */
static int next_fault_bounds_the_thread(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *a;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	a = fault(st, 7, PAGE, PAGE + 0x10, 1, 0, 100);
	TAP_CHECK(fault(st, 8, PAGE, PAGE + 0x20, 2, 1, 150));
	TAP_CHECK(fault(st, 7, PAGE, PAGE + 0x30, 3, 2, 200));
	TAP_CHECK(fault(st, 7, PAGE2, 0, 4, 3, 300));	/* no IP */
	TAP_CHECK(a);
	flowjit_tie_init(&tie, st);
	TAP_CHECK(flowjit_tie_next_fault(&tie, 50) == UINT64_MAX);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(flowjit_tie_next_fault(&tie, 50) == 100);
	/* tied at its TIP.PGE with the clock behind: the next is 200 */
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x10, 50, UINT64_MAX, ++insns) == a);
	TAP_CHECK(flowjit_tie_next_fault(&tie, flowjit_tie_time(&tie, 50)) == 200);
	/* the clock past 100 and at 200: the fault at 200 is reached */
	TAP_CHECK(flowjit_tie_next_fault(&tie, 120) == 200);
	TAP_CHECK(flowjit_tie_next_fault(&tie, 200) == UINT64_MAX);	/* no IP after */
	flowjit_tie_thread(&tie, ASID, 8);
	TAP_CHECK(flowjit_tie_next_fault(&tie, 120) == 150);
	TAP_CHECK(flowjit_tie_next_fault(&tie, 150) == UINT64_MAX);
	flowjit_tie_thread(&tie, ASID, 7);
	flowjit_tie_overflow(&tie, UINT64_MAX);
	TAP_CHECK(flowjit_tie_next_fault(&tie, 120) == UINT64_MAX);
	flowjit_store_free(st);
	return 0;
}

/* Random faults of several threads against a scan of all of them. */
static int next_fault_against_reference(void)
{
	enum { N = 2000 };
	static const struct flowjit_rev *all[N];
	struct flowjit_store *st = flowjit_store_alloc();
	uint64_t seed = 12345;
	int i, j, k;

	TAP_CHECK(st);
	for (i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		all[i] = fault(st, 1 + (seed >> 33) % 4, PAGE + ((seed >> 40) % 8) * 4096,
			       PAGE, i + 1, 0, (seed >> 20) % 500);
		TAP_CHECK(all[i]);
	}
	for (k = 0; k < 3000; k++) {
		const struct flowjit_rev *want = NULL, *got;
		uint32_t tid;
		uint64_t t, s;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		tid = 1 + (seed >> 33) % 5;
		t = (seed >> 20) % 520;
		s = (seed >> 45) % (N + 2);
		for (j = 0; j < N; j++) {
			const struct flowjit_rev *r = all[j];

			if (r->tid != tid || !(r->time > t || (r->time == t && r->seq > s)))
				continue;
			if (!want || r->time < want->time ||
			    (r->time == want->time && r->seq < want->seq))
				want = r;
		}
		got = flowjit_store_next_fault(st, ASID, tid, t, s);
		TAP_CHECK(got == want);
	}
	flowjit_store_free(st);
	return 0;
}

/*
 * A missing revision number makes the revisions before it suspect from
 * the gap on; a lost window makes every revision older than its end
 * suspect after its start; nothing else is.
 */
static int lost_and_missing(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r1, *r2, *r4;
	struct flowjit_store_stats s;

	TAP_CHECK(st);
	r1 = fault(st, 7, PAGE, PAGE, 1, 0, 100);
	r2 = fault(st, 7, PAGE2, PAGE2, 2, 1, 200);
	r4 = fault(st, 7, PAGE, PAGE, 4, 2, 400);	/* 3 is missing: in (200, 400) */
	TAP_CHECK(r1 && r2 && r4);
	flowjit_store_stats(st, &s);
	TAP_CHECK(s.missing_revs == 1 && s.faults == 3 && s.lost_windows == 0);
	TAP_CHECK(!flowjit_store_suspect(st, r1, 150));
	TAP_CHECK(!flowjit_store_suspect(st, r1, 200));	/* a's time 200 is not < 200 */
	TAP_CHECK(flowjit_store_suspect(st, r1, 250));
	TAP_CHECK(flowjit_store_suspect(st, r2, 250));
	TAP_CHECK(!flowjit_store_suspect(st, r4, 500));
	/* the same image twice (two events) is no gap, and no new number */
	TAP_CHECK(fault(st, 7, PAGE, PAGE, 4, 2, 400));
	flowjit_store_stats(st, &s);
	TAP_CHECK(s.missing_revs == 1);
	/* the missing one arrives late: no gap any more */
	TAP_CHECK(fault(st, 7, PAGE2, PAGE2, 3, 3, 300));
	flowjit_store_stats(st, &s);
	TAP_CHECK(s.missing_revs == 0);
	TAP_CHECK(!flowjit_store_suspect(st, r1, 250));
	/* a LOST record: records of (600, 700] may be gone */
	TAP_CHECK(!flowjit_store_add_lost(st, 600, 700));
	TAP_CHECK(flowjit_store_add_lost(st, 7, 6) == -EINVAL);
	TAP_CHECK(!flowjit_store_suspect(st, r4, 600));
	TAP_CHECK(flowjit_store_suspect(st, r4, 601));
	TAP_CHECK(flowjit_store_suspect(st, r4, 10000));
	flowjit_store_stats(st, &s);
	TAP_CHECK(s.lost_windows == 1);
	TAP_CHECK(!flowjit_store_suspect(NULL, r4, 601) && !flowjit_store_suspect(st, NULL, 1));
	flowjit_store_free(st);
	return 0;
}

/*
 * A newer revision the clock cannot rule out makes a read unordered only
 * where its bytes differ from the read revision's, only up to the time
 * given, and only within the read revision.
 */
static int unordered_where_bytes_differ(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r1, *r2, *r3;

	TAP_CHECK(st);
	memcpy(bytes[2], bytes[0], sizeof(bytes[0]));
	bytes[2][0x10] ^= 0xff;			/* one byte rewritten */
	r1 = fault(st, 7, PAGE, PAGE, 1, 0, 100);
	r2 = fault(st, 8, PAGE, PAGE + 0x10, 2, 2, 200);
	r3 = fault(st, 8, PAGE2, PAGE2, 3, 1, 300);
	TAP_CHECK(r1 && r2 && r3);
	/* r2 not yet live at 199, r1's bytes are all there are */
	TAP_CHECK(!flowjit_store_unordered(st, r1, PAGE, PAGE + 4096, 199));
	/* live at 200: the rewritten byte differs, the others do not */
	TAP_CHECK(flowjit_store_unordered(st, r1, PAGE, PAGE + 4096, 200));
	TAP_CHECK(flowjit_store_unordered(st, r1, PAGE + 0xc, PAGE + 0x11, 250));
	TAP_CHECK(!flowjit_store_unordered(st, r1, PAGE, PAGE + 0x10, 250));
	TAP_CHECK(!flowjit_store_unordered(st, r1, PAGE + 0x11, PAGE + 0x20, 250));
	/* the newest read is never unordered; nor beyond its page */
	TAP_CHECK(!flowjit_store_unordered(st, r2, PAGE, PAGE + 4096, 1000));
	TAP_CHECK(!flowjit_store_unordered(st, r1, PAGE2, PAGE2 + 4096, 1000));
	TAP_CHECK(!flowjit_store_unordered(NULL, r1, PAGE, PAGE + 1, 1000) &&
		  !flowjit_store_unordered(st, NULL, PAGE, PAGE + 1, 1000));
	/*
	 * Every revision up to the time counts: r2 differs, r4 has r1's
	 * bytes again and the page is retired at 500; by 600 r2 may still
	 * have run.
	 */
	TAP_CHECK(fault(st, 9, PAGE, PAGE, 4, 0, 400));
	TAP_CHECK(retire(st, PAGE, 4096, 500));
	TAP_CHECK(!flowjit_store_find(st, ASID, PAGE, 600));
	TAP_CHECK(flowjit_store_unordered(st, r1, PAGE + 0x10, PAGE + 0x11, 600));
	TAP_CHECK(!flowjit_store_unordered(st, r1, PAGE, PAGE + 0x10, 600));
	flowjit_store_free(st);
	fill();
	return 0;
}

/*
 * An image of a pinned page (FLOWJIT_F_PINNED) is suspect from its time
 * on, with nothing lost; it is counted. The next image of the page, not
 * pinned any more, is certain again.
 */
static int pinned_is_suspect(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r1 = NULL, *r2;
	struct flowjit_store_stats s;
	struct flowjit_chunk c;

	TAP_CHECK(st);
	chunk(&c, FLOWJIT_OP_IMAGE, PAGE, sizeof(bytes[0]));
	c.rec.flags = FLOWJIT_F_PINNED;
	c.rec.tid = 1;
	c.rec.id = PAGE;
	c.rec.revision = 1;
	c.rec.csum = flowjit_csum(bytes[0], sizeof(bytes[0]));
	c.rec.chunk_len = sizeof(bytes[0]);
	c.bytes = bytes[0];
	TAP_CHECK(!flowjit_store_add_chunk(st, &c, 100, &r1) && r1);
	TAP_CHECK(r1->flags & FLOWJIT_F_PINNED);
	TAP_CHECK(flowjit_store_suspect(st, r1, 100));
	TAP_CHECK(flowjit_store_suspect(st, r1, 5000));
	r2 = fault(st, 1, PAGE, PAGE, 2, 1, 200);
	TAP_CHECK(r2 && !flowjit_store_suspect(st, r2, 5000));
	flowjit_store_stats(st, &s);
	TAP_CHECK(s.pinned == 1 && s.images == 2 && s.missing_revs == 0);
	flowjit_store_free(st);
	return 0;
}

/* More lost windows than are kept: the last one grows to cover them. */
static int many_lost_windows(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r;
	uint64_t t;

	TAP_CHECK(st);
	r = fault(st, 7, PAGE, PAGE, 1, 0, 1);
	TAP_CHECK(r);
	for (t = 10; t < 10 + 3000 * 10; t += 10)
		TAP_CHECK(!flowjit_store_add_lost(st, t, t + 1));
	TAP_CHECK(flowjit_store_suspect(st, r, 10 + 2999 * 10 + 1));
	TAP_CHECK(!flowjit_store_suspect(st, r, 10));
	flowjit_store_free(st);
	return 0;
}

/*
 * An overflow that may have swallowed the TIP.PGE of the thread's next
 * fault: the revision that fault replaces is suspect until the clock
 * passes it or a later TIP.PGE ties a fault; other pages, faults beyond
 * the overflow's bound and other threads are not.
 */
static int overflow_makes_the_next_fault_uncertain(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r1, *r2, *o, *r3;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	r1 = fault(st, 7, PAGE, PAGE + 0x40, 1, 0, 100);
	o = fault(st, 7, PAGE2, PAGE2, 2, 1, 110);
	r2 = fault(st, 7, PAGE, PAGE + 0x40, 3, 2, 150);
	r3 = fault(st, 7, PAGE, PAGE + 0x40, 4, 3, 400);
	TAP_CHECK(r1 && o && r2 && r3);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x40, 95, 200, ++insns) == r1);
	TAP_CHECK(!flowjit_tie_suspect(&tie, r1, 100));
	/* an OVF, resuming at clock 105, real time before 200 */
	flowjit_tie_overflow(&tie, 200);
	TAP_CHECK(tie.overflows == 1);
	TAP_CHECK(flowjit_tie_suspect(&tie, r1, 105));	/* r2 (150) may be past */
	TAP_CHECK(!flowjit_tie_suspect(&tie, o, 105));	/* nothing newer of PAGE2 */
	TAP_CHECK(flowjit_tie_suspect(&tie, r1, 149));
	TAP_CHECK(!flowjit_tie_suspect(&tie, r2, 150));	/* the clock passed r2 */
	/* r3 (400) is beyond the overflow's bound: r2 is certain */
	TAP_CHECK(!flowjit_tie_suspect(&tie, r2, 160));
	/* another thread's view is not in doubt */
	flowjit_tie_thread(&tie, ASID, 8);
	TAP_CHECK(!flowjit_tie_suspect(&tie, r1, 105));
	flowjit_tie_thread(&tie, ASID, 7);
	/* a tie ends the doubt: faults come in order */
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE2, 105, 200, ++insns) == o);
	TAP_CHECK(!flowjit_tie_suspect(&tie, r1, 110));
	/* an overflow without a bound: every later fault of the page */
	flowjit_tie_overflow(&tie, UINT64_MAX);
	TAP_CHECK(flowjit_tie_suspect(&tie, r2, 300));
	TAP_CHECK(!flowjit_tie_suspect(&tie, r3, 400));
	flowjit_store_free(st);
	return 0;
}

/*
 * A fault's own TIP.PGE after the clock passed it (MTCs while the kernel
 * took it) is that fault's: the thread's next fault at the same IP, even
 * within t_max, is not tied there (it would decode the old bytes as the
 * new ones until it happens); at its own TIP.PGE it is.
 */
static int passed_fault_is_not_the_next_ones(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r1, *r2;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	r1 = fault(st, 7, PAGE, PAGE + 0x40, 1, 0, 100);
	r2 = fault(st, 7, PAGE, PAGE + 0x40, 2, 1, 130);
	TAP_CHECK(r1 && r2);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 110, 150, ++insns));
	TAP_CHECK(at(&tie, PAGE + 0x40, 110) == 1 && tie.passed == 1);
	/* an interrupt elsewhere in the page, then r2's TIP.PGE */
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x48, 112, 152, ++insns));
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x40, 115, 155, ++insns) == r2);
	TAP_CHECK(at(&tie, PAGE + 0x40, 115) == 2);
	flowjit_store_free(st);
	return 0;
}

/*
 * An interrupt taken just before the faulting fetch: TIP.PGE at the IP,
 * no instruction, then the fault's TIP.PGE at the same IP. The first
 * ties the fault; the second is the same place and must not tie the
 * thread's next fault at that IP (within t_max).
 */
static int same_place_ties_once(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r1, *r2;
	struct flowjit_tie tie;
	uint64_t n;

	TAP_CHECK(st);
	r1 = fault(st, 7, PAGE, PAGE + 0x40, 1, 0, 100);
	r2 = fault(st, 7, PAGE, PAGE + 0x40, 2, 1, 180);
	TAP_CHECK(r1 && r2);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	n = ++insns;
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x40, 90, 200, n) == r1);
	flowjit_tie_thread(&tie, ASID, 7);	/* the same thread: no change */
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 95, 200, n));
	TAP_CHECK(at(&tie, PAGE + 0x40, 95) == 1);
	/* after instructions ran, r2's own TIP.PGE ties it */
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x40, 96, 200, n + 5) == r2);
	/* another thread in between: not the same place */
	flowjit_tie_thread(&tie, ASID, 8);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(tie.tied == 2 && !tie.resumed);
	flowjit_store_free(st);
	return 0;
}

/*
 * An interrupt at the IP of the thread's next fault, within t_max of it,
 * ties the fault (the trace cannot tell); the fault's own TIP.PGE later,
 * with the clock at the TIP.PGD before it not past the fault, puts the tie
 * in doubt once. Leaving user mode with the clock past the fault closes
 * the tie: a TIP.PGE at its IP after that is no doubt.
 */
static int interrupt_at_the_fault_ip_is_doubted(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *r2;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	TAP_CHECK(fault(st, 7, PAGE, PAGE + 0x40, 1, 0, 90));
	r2 = fault(st, 7, PAGE, PAGE + 0x40, 2, 1, 150);
	TAP_CHECK(r2);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 95, 400, ++insns));
	/* the interrupt: tied, open, the floor before it 90 */
	flowjit_tie_leave(&tie, 98);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x40, 100, 400, ++insns) == r2);
	TAP_CHECK(!flowjit_tie_doubt(&tie) && tie.nopen == 1);
	TAP_CHECK(flowjit_tie_alt(&tie, 0, 100) == 100 && flowjit_tie_alt(&tie, 0, 80) == 90);
	TAP_CHECK(flowjit_tie_alt(&tie, 1, 80) == 80);
	/* elsewhere: no doubt */
	flowjit_tie_leave(&tie, 110);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x48, 112, 400, ++insns));
	TAP_CHECK(!flowjit_tie_doubt(&tie));
	/* the fault's own TIP.PGE: in doubt, once; the tie stays open */
	flowjit_tie_leave(&tie, 120);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 160, 400, ++insns));
	TAP_CHECK(flowjit_tie_doubt(&tie) && !flowjit_tie_doubt(&tie));
	TAP_CHECK(tie.nopen == 1 && tie.doubts == 1);
	/* nothing ran since: the same place, no doubt */
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 160, 400, insns));
	TAP_CHECK(!flowjit_tie_doubt(&tie));
	/* left user mode with the clock past 150: closed */
	flowjit_tie_leave(&tie, 170);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x40, 175, 400, ++insns));
	TAP_CHECK(!flowjit_tie_doubt(&tie) && tie.nopen == 0 && tie.doubts == 1);
	flowjit_store_free(st);
	return 0;
}

/*
 * Two ties open at once (interrupts at the IPs of the next two faults):
 * the first fault's own TIP.PGE puts them in doubt although the second
 * tie was made after it. The thread leaving the trace, or the trace's end,
 * with a tie open whose fault the clock did not pass is a doubt too; with
 * the clock past it, none.
 */
static int open_ties_until_the_clock_passes(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *a, *b;
	struct flowjit_tie tie;

	TAP_CHECK(st);
	a = fault(st, 7, PAGE, PAGE + 0x10, 1, 0, 150);
	b = fault(st, 7, PAGE2, PAGE2 + 0x20, 2, 1, 160);
	TAP_CHECK(a && b);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x10, 100, 400, ++insns) == a);
	flowjit_tie_leave(&tie, 101);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE2 + 0x20, 102, 400, ++insns) == b);
	TAP_CHECK(tie.nopen == 2 && flowjit_tie_alt(&tie, 1, 100) == 150);
	flowjit_tie_leave(&tie, 103);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x10, 104, 400, ++insns));
	TAP_CHECK(flowjit_tie_doubt(&tie));
	/* past a (150), not b (160): b stays open, then the thread goes */
	flowjit_tie_leave(&tie, 155);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x10, 156, 400, ++insns));
	TAP_CHECK(!flowjit_tie_doubt(&tie) && tie.nopen == 1 && tie.open[0].f == b);
	flowjit_tie_thread(&tie, ASID, 8);
	TAP_CHECK(flowjit_tie_doubt(&tie) && tie.nopen == 0);
	flowjit_store_free(st);

	st = flowjit_store_alloc();
	TAP_CHECK(st);
	a = fault(st, 7, PAGE, PAGE + 0x10, 1, 0, 150);
	TAP_CHECK(a);
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x10, 100, 400, ++insns) == a);
	flowjit_tie_end(&tie, 140);
	TAP_CHECK(flowjit_tie_doubt(&tie) && tie.nopen == 0);
	TAP_CHECK(!flowjit_tie_resume(&tie, PAGE + 0x10, 100, 400, ++insns));
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x10, 100, 400, ++insns) == a);
	flowjit_tie_end(&tie, 151);
	TAP_CHECK(!flowjit_tie_doubt(&tie) && tie.nopen == 0);
	flowjit_store_free(st);
	return 0;
}

/*
 * More open ties than a trace follows: the oldest is taken as in doubt,
 * never dropped in silence.
 */
static int too_many_open_ties(void)
{
	struct flowjit_store *st = flowjit_store_alloc();
	const struct flowjit_rev *f[FLOWJIT_TIE_OPEN_MAX + 1];
	struct flowjit_tie tie;
	unsigned int i;

	TAP_CHECK(st);
	for (i = 0; i <= FLOWJIT_TIE_OPEN_MAX; i++) {
		f[i] = fault(st, 7, PAGE, PAGE + 0x10 + i, i + 1, i % 4, 200 + i);
		TAP_CHECK(f[i]);
	}
	flowjit_tie_init(&tie, st);
	flowjit_tie_thread(&tie, ASID, 7);
	for (i = 0; i < FLOWJIT_TIE_OPEN_MAX; i++) {
		TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x10 + i, 100, 400, ++insns) == f[i]);
		TAP_CHECK(!flowjit_tie_doubt(&tie));
	}
	TAP_CHECK(tie.nopen == FLOWJIT_TIE_OPEN_MAX);
	TAP_CHECK(flowjit_tie_resume(&tie, PAGE + 0x10 + i, 100, 400, ++insns) == f[i]);
	TAP_CHECK(flowjit_tie_doubt(&tie) && tie.nopen == FLOWJIT_TIE_OPEN_MAX);
	TAP_CHECK(tie.open[0].f == f[1] && tie.open[FLOWJIT_TIE_OPEN_MAX - 1].f == f[i]);
	flowjit_store_free(st);
	return 0;
}

int main(void)
{
	fill();
	tap_run(rewrite_within_one_period,
		"tie: a page rewritten and run again before the next timing packet is tied at its fault's TIP.PGE");
	tap_run(interrupt_is_not_a_fault,
		"tie: an interrupt at another IP, or before the latest time allowed, ties nothing");
	tap_run(only_the_next_fault_of_the_thread,
		"tie: only the thread's next fault is tied, other threads' never");
	tap_run(passed_fault_is_not_the_next_ones,
		"tie: a fault's own TIP.PGE after the clock passed it does not tie the next fault at that IP");
	tap_run(same_place_ties_once,
		"tie: two resumes at one IP with nothing run between are one place: the fault after is not tied");
	tap_run(interrupt_at_the_fault_ip_is_doubted,
		"tie: an interrupt at the next fault's IP ties it; the fault's own TIP.PGE before the clock passed it puts the tie in doubt");
	tap_run(open_ties_until_the_clock_passes,
		"tie: ties stay open until the thread leaves user mode past their fault; leaving the trace before is a doubt");
	tap_run(too_many_open_ties,
		"tie: beyond 8 open ties the oldest is taken as in doubt");
	tap_run(same_ip_twice_and_a_lost_event,
		"tie: two faults at one IP tie in order; a fault whose TIP.PGE was lost is passed by the clock");
	tap_run(no_ip_is_never_tied,
		"tie: images without a fault IP (older kernels) are never tied, at no IP of their page");
	tap_run(nothing_to_tie,
		"tie: no thread, or a fault the clock passed: nothing tied; NULL store");
	tap_run(next_fault_bounds_the_thread,
		"tie: the thread's next fault after the lookup time bounds what it runs now; unknown after an overflow or without an IP");
	tap_run(next_fault_against_reference,
		"tie: the fault index answers as a scan of every fault (2 000 random faults, 3 000 queries)");
	tap_run(overflow_makes_the_next_fault_uncertain,
		"tie: after an overflow the revision the thread's next fault replaces is suspect until passed or tied");
	tap_run(lost_and_missing,
		"lost: missing revision numbers and LOST windows make older revisions suspect, nothing else");
	tap_run(pinned_is_suspect,
		"pinned: an image of a pinned page is suspect from its time on and counted; the next one is not");
	tap_run(unordered_where_bytes_differ,
		"unordered: a newer revision within the clock's lag makes a read unordered where its bytes differ only, replaced or retired since");
	tap_run(many_lost_windows,
		"lost: beyond 1024 windows the last one grows, nothing is forgotten");
	return tap_exit();
}
