// SPDX-License-Identifier: GPL-2.0
/*
 * libflowjit: revision switches tied to trace events (libflowjit.h,
 * "Revision switches tied to trace events", states what a tie does).
 *
 * A tie only ever raises a lower bound of the real time: the time of a
 * fault record that the kernel wrote before the thread resumed. It never
 * changes what the image store answers for a time, so the one definition
 * of which revision is live stays flowjit_store_lookup()'s.
 */
#include <string.h>

#include "libflowjit.h"

void flowjit_tie_init(struct flowjit_tie *tie, const struct flowjit_store *st)
{
	memset(tie, 0, sizeof(*tie));
	tie->st = st;
}

/* An open tie's fault may come after now: it is in doubt. */
static void flowjit_tie_put_in_doubt(struct flowjit_tie *tie)
{
	tie->doubt = true;
	tie->doubts++;
}

/* Open ties whose fault the real time passed (before @time) are closed. */
static void flowjit_tie_pass(struct flowjit_tie *tie, uint64_t time)
{
	unsigned int n = 0;

	while (n < tie->nopen && tie->open[n].f->time < time)
		n++;
	if (!n)
		return;
	memmove(tie->open, tie->open + n, (tie->nopen - n) * sizeof(tie->open[0]));
	tie->nopen -= n;
}

/*
 * The followed thread is gone from the trace (another thread, its end)
 * with the clock at @time: the TIP.PGE of an open tie's fault the clock
 * did not pass may come elsewhere. The ties are closed either way.
 */
static void flowjit_tie_close(struct flowjit_tie *tie, uint64_t time)
{
	flowjit_tie_pass(tie, time);
	if (tie->nopen)
		flowjit_tie_put_in_doubt(tie);
	tie->nopen = 0;
}

void flowjit_tie_thread(struct flowjit_tie *tie, uint64_t asid, uint32_t tid)
{
	if (tie->thread && tie->asid == asid && tie->tid == tid)
		return;
	if (tie->nopen)
		flowjit_tie_close(tie, tie->have_left ? tie->left : 0);
	/* the floor stays: it is a time, and time runs on in the trace */
	tie->asid = asid;
	tie->tid = tid;
	tie->thread = true;
	tie->resumed = false;
}

/*
 * Returns true if the trace resuming at @ip is where @rev's fault was.
 * Without the IP (rec.id 0, older kernels) never: tracing resumes in a
 * JIT page after every interrupt, system call and other fault there.
 */
static bool flowjit_tie_at(const struct flowjit_rev *rev, uint64_t ip)
{
	return rev->id && rev->id == ip;
}

/* Faults the clock passed since the last resume looked at, at most. */
#define FLOWJIT_TIE_PASSED_SCAN	64

/* (@time, @seq) is the thread's place from now on: its faults up to it ran. */
static void flowjit_tie_reach(struct flowjit_tie *tie, const struct flowjit_rev *f)
{
	tie->floor = f->time;
	tie->floor_seq = f->seq;
	tie->last = f;
	/* the faults are in order: none before this one is in doubt now */
	tie->ovf = false;
}

const struct flowjit_rev *flowjit_tie_resume(struct flowjit_tie *tie, uint64_t ip,
					     uint64_t time, uint64_t time_max, uint64_t insns)
{
	const struct flowjit_rev *f;
	uint64_t after = tie->floor, seq = tie->floor_seq;
	bool same;
	int n;

	if (!tie->st || !tie->thread)
		return NULL;
	tie->resumes++;
	/*
	 * Back where it resumed last, nothing run since: an interrupt taken
	 * just before the faulting fetch, or just after the fault. What the
	 * last resume decided stands.
	 */
	same = tie->resumed && ip == tie->last_ip && insns == tie->last_insns;
	tie->resumed = true;
	tie->last_ip = ip;
	tie->last_insns = insns;
	if (same) {
		tie->have_left = false;
		return NULL;
	}
	/*
	 * Open ties: closed if the thread left user mode with the clock past
	 * their fault; else a TIP.PGE at the fault's IP may be the fault's
	 * too.
	 */
	if (tie->have_left)
		flowjit_tie_pass(tie, tie->left);
	tie->have_left = false;
	for (n = 0; n < (int)tie->nopen; n++) {
		if (flowjit_tie_at(tie->open[n].f, ip)) {
			flowjit_tie_put_in_doubt(tie);
			break;
		}
	}
	if (tie->last_resume > after) {
		after = tie->last_resume;
		seq = UINT64_MAX - 1;
	}
	tie->last_resume = time;
	/*
	 * A fault at ip since the last resume that the clock passed already
	 * (MTCs while the kernel took it): this TIP.PGE is its own, live by
	 * time. No later fault is this TIP.PGE's then.
	 */
	f = flowjit_store_next_fault(tie->st, tie->asid, tie->tid, after, seq);
	for (n = 0; f && f->time <= time; n++) {
		if (n == FLOWJIT_TIE_PASSED_SCAN)
			return NULL;
		if (flowjit_tie_at(f, ip)) {
			/* the faults before it were taken before it */
			flowjit_tie_pass(tie, f->time);
			flowjit_tie_reach(tie, f);
			tie->passed++;
			return NULL;
		}
		f = flowjit_store_next_fault(tie->st, tie->asid, tie->tid, f->time, f->seq);
	}
	/* the first fault after the clock, if it was taken here */
	if (!f || f->time > time_max || !flowjit_tie_at(f, ip))
		return NULL;
	if (tie->nopen == FLOWJIT_TIE_OPEN_MAX) {
		/* no room to follow the oldest: take it as in doubt */
		flowjit_tie_put_in_doubt(tie);
		flowjit_tie_pass(tie, tie->open[0].f->time + 1);
	}
	tie->open[tie->nopen].f = f;
	tie->open[tie->nopen].from = tie->floor;
	tie->nopen++;
	flowjit_tie_reach(tie, f);
	tie->tied++;
	return f;
}

void flowjit_tie_leave(struct flowjit_tie *tie, uint64_t time)
{
	tie->left = time;
	tie->have_left = true;
}

void flowjit_tie_end(struct flowjit_tie *tie, uint64_t time)
{
	if (tie->have_left && tie->left > time)
		time = tie->left;
	flowjit_tie_close(tie, time);
}

bool flowjit_tie_doubt(struct flowjit_tie *tie)
{
	bool doubt = tie->doubt;

	tie->doubt = false;
	return doubt;
}

uint64_t flowjit_tie_alt(const struct flowjit_tie *tie, unsigned int i, uint64_t time)
{
	if (i >= tie->nopen || tie->open[i].from <= time)
		return time;
	return tie->open[i].from;
}

void flowjit_tie_overflow(struct flowjit_tie *tie, uint64_t time_max)
{
	tie->overflows++;
	if (!tie->ovf || time_max > tie->ovf_max)
		tie->ovf_max = time_max;
	tie->ovf = true;
}

/* Faults looked at by flowjit_tie_suspect(); beyond, it answers yes. */
#define FLOWJIT_TIE_SUSPECT_SCAN	64

bool flowjit_tie_suspect(const struct flowjit_tie *tie, const struct flowjit_rev *rev,
			 uint64_t time)
{
	const struct flowjit_rev *f;
	uint64_t after = tie->floor, seq = tie->floor_seq;
	int n;

	if (!tie->ovf || !tie->thread || !tie->st || !rev || rev->asid != tie->asid ||
	    rev->kind != FLOWJIT_KIND_USER_JIT)
		return false;
	if (time >= after) {
		after = time;
		seq = UINT64_MAX - 1;
	}
	f = flowjit_store_next_fault(tie->st, tie->asid, tie->tid, after, seq);
	for (n = 0; f && f->time <= tie->ovf_max; n++) {
		if (n == FLOWJIT_TIE_SUSPECT_SCAN)
			return true;
		/* a newer image of the same bytes' addresses */
		if (f->start < rev->end && rev->start < f->end &&
		    (f->time > rev->time || (f->time == rev->time && f->seq > rev->seq)))
			return true;
		f = flowjit_store_next_fault(tie->st, tie->asid, tie->tid, f->time, f->seq);
	}
	return false;
}

uint64_t flowjit_tie_time(const struct flowjit_tie *tie, uint64_t time)
{
	return tie->floor > time ? tie->floor : time;
}

uint64_t flowjit_tie_next_fault(const struct flowjit_tie *tie, uint64_t time)
{
	const struct flowjit_rev *f;
	uint64_t after = tie->floor, seq = tie->floor_seq;

	if (!tie->st || !tie->thread || tie->ovf)
		return UINT64_MAX;
	if (time > after) {
		after = time;
		seq = UINT64_MAX - 1;
	}
	f = flowjit_store_next_fault(tie->st, tie->asid, tie->tid, after, seq);
	return f && f->id ? f->time : UINT64_MAX;
}

enum flowjit_tie_how flowjit_tie_how(const struct flowjit_tie *tie, const struct flowjit_rev *rev,
				     uint64_t time)
{
	if (!rev)
		return FLOWJIT_TIE_NONE;
	if (rev->time <= time)
		return FLOWJIT_TIE_TIME;
	if (rev->time <= tie->floor)
		return FLOWJIT_TIE_EVENT;
	return FLOWJIT_TIE_LATE;
}

const char *flowjit_tie_how_name(enum flowjit_tie_how how)
{
	switch (how) {
	case FLOWJIT_TIE_TIME:
		return "time";
	case FLOWJIT_TIE_EVENT:
		return "event";
	case FLOWJIT_TIE_LATE:
		return "late";
	case FLOWJIT_TIE_NONE:
	default:
		break;
	}
	return "none";
}
