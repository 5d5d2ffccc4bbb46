// SPDX-License-Identifier: GPL-2.0
/*
 * hwtime.c - remap the tracer's time to the time a real core would take
 *
 * Walk the ground truth in file order (the order the tracer saw things
 * complete, one global order across threads) with a hardware clock H:
 *
 *   GT_INSN     a thread switch first if another thread ran the last
 *               instruction on its CPU (costs->sw; only when threads
 *               share CPUs: nr_cpus > 0), before the very first one the
 *               exec that enabled tracing (costs->exec: in start-at mode
 *               the start signal's delivery, the free run before it at
 *               the tracer's own times); then the
 *               events attached to it (interrupts, exec faults: each a
 *               window [hw_start, hw_end]); then the instruction executes
 *               at H and takes costs->insn
 *   GT_SYSCALL  the kernel entry after its instruction: costs->syscall
 *   GT_SIGNAL   a signal delivery: costs->signal
 *   others      take no time (mappings, comm, fork, exit)
 *
 * The map f from ground-truth TSC to hardware TSC is piecewise linear
 * between anchors (gt, hw) laid at what the tracer knows the time of:
 * a thread's stop in front of an instruction (the GT_INSN's TSC), each
 * exec fault (the sideband's time, costs->fault_tail before the end of
 * its window), the
 * instruction itself one tick after the stop (or after its last fault:
 * an instruction runs as soon as the tracer resumes the thread, its
 * fetch faults first) and its end one tick later, a signal delivery.
 * So a system call's kernel work, e.g. an MMAP record, falls in its
 * kernel window, an exec fault's image inside the fault's window,
 * between the TIP.PGD and the TIP.PGE.  Anchors only go forward: a
 * ground-truth TSC below an earlier anchor's (another thread's stop)
 * is raised to it.  Before the first anchor and after the last, f runs
 * at the TSC's own rate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "gt.h"
#include "hwtime.h"
#include "perfdata.h"

/* @ns nanoseconds in TSC ticks of @tc (perf time = TSC * mult >> shift) */
static uint64_t ps_hw_ns_to_ticks(uint64_t ns, const struct gt_timeconv *tc)
{
	return ((unsigned __int128)ns << tc->time_shift) / tc->time_mult;
}

/*
 * Costs in ticks of the recording's TSC from nanoseconds (an instruction
 * in ticks).  Returns 0, or -EINVAL without a time conversion.
 */
int ps_hw_costs_from_ns(struct ps_hw_costs *c, const struct gt_timeconv *tc,
			const struct ps_hw_costs_ns *ns)
{
	if (!tc->time_mult)
		return -EINVAL;
	c->insn = ns->insn_ticks;
	c->exec = ps_hw_ns_to_ticks(ns->exec, tc);
	c->syscall = ps_hw_ns_to_ticks(ns->syscall, tc);
	c->fault = ps_hw_ns_to_ticks(ns->fault, tc);
	c->fault_tail = ps_hw_ns_to_ticks(ns->fault_tail, tc);
	if (c->fault_tail > c->fault)
		c->fault_tail = c->fault;
	c->signal = ps_hw_ns_to_ticks(ns->signal, tc);
	c->sw = ps_hw_ns_to_ticks(ns->sw, tc);
	c->irq = ps_hw_ns_to_ticks(ns->irq, tc);
	return 0;
}

/* Appends (@gt, @hw) to the array *@a of *@nr (room for *@cap); 0 or -ENOMEM. */
static int ps_hw_push(struct ps_hw_anchor **a, size_t *nr, size_t *cap,
		      uint64_t gt, uint64_t hw)
{
	struct ps_hw_anchor *n;

	if (*nr == *cap) {
		size_t c = *cap ? 2 * *cap : 64;

		n = realloc(*a, c * sizeof(*n));
		if (!n)
			return -ENOMEM;
		*a = n;
		*cap = c;
	}
	(*a)[(*nr)++] = (struct ps_hw_anchor){ gt, hw };
	return 0;
}

/* Adds anchor (@gt, @hw), @gt raised to the last one's; 0 or -ENOMEM. */
static int ps_hw_anchor(struct ps_hwtime *t, uint64_t gt, uint64_t hw)
{
	if (t->nr_a && gt < t->a[t->nr_a - 1].gt)
		gt = t->a[t->nr_a - 1].gt;
	return ps_hw_push(&t->a, &t->nr_a, &t->cap_a, gt, hw);
}

/* The exec fault image of ground-truth TSC @gt is written at @hw. */
static int ps_hw_pin(struct ps_hwtime *t, uint64_t gt, uint64_t hw)
{
	return ps_hw_push(&t->pin, &t->nr_pin, &t->cap_pin, gt, hw);
}

static int ps_hw_pin_cmp(const void *x, const void *y)
{
	const struct ps_hw_anchor *a = x, *b = y;

	return a->gt < b->gt ? -1 : a->gt > b->gt;
}

/* The identity: every time the tracer's, events at their own times. */
static void ps_hw_identity(struct ps_hwtime *t, const struct gt_trace *gt,
			   struct ps_ev_list *ev)
{
	size_t i;

	t->identity = true;
	for (i = 0; i < gt->nr_recs; i++)
		t->hw[i] = t->pre[i] = t->start[i] = gt->recs[i]->tsc;
	for (i = 0; ev && i < ev->nr; i++) {
		struct ps_ev *e = &ev->ev[i];

		e->hw_start = e->hw_end = e->type == PS_EV_FAULT ? e->gt_tsc :
					  gt->recs[e->rec]->tsc;
	}
	t->end = gt->nr_recs ? gt->recs[gt->nr_recs - 1]->tsc : 0;
}

struct ps_hw_walk {
	struct ps_hwtime *t;
	const struct gt_trace *gt;
	const struct ps_hw_costs *c;
	struct ps_ev_list *ev;
	size_t next_ev;
	uint64_t h;
	bool begun;		/* the first GT_INSN was seen */
	int nr_cpus;		/* 0: each thread on a core of its own */
	int *tids;		/* threads by first instruction */
	int nr_tids;
	int *cur;		/* per CPU: the thread on it, -1: none yet */
};

/*
 * The events of GT_INSN record @r, from @w->next_ev on: each its window;
 * a fault anchored costs->fault_tail before its end (flowjit writes the
 * image, then the kernel makes the page executable and returns), *@x
 * raised to its ground-truth TSC.  Returns 0 or -ENOMEM.
 */
static int ps_hw_events(struct ps_hw_walk *w, size_t r, uint64_t *x)
{
	struct ps_ev_list *ev = w->ev;
	int err;

	while (ev && w->next_ev < ev->nr && ev->ev[w->next_ev].rec <= r) {
		struct ps_ev *e = &ev->ev[w->next_ev++];
		uint64_t cost;

		if (e->rec < r)
			continue;	/* not on an instruction: ignored */
		cost = e->type == PS_EV_FAULT ? w->c->fault : w->c->irq;
		e->hw_start = w->h;
		if (e->type == PS_EV_FAULT) {
			err = ps_hw_anchor(w->t, e->gt_tsc,
					   w->h + cost - w->c->fault_tail) ?:
			      ps_hw_pin(w->t, e->gt_tsc,
					w->h + cost - w->c->fault_tail);
			if (err)
				return err;
			if (e->gt_tsc > *x)
				*x = e->gt_tsc;
		}
		w->h += cost;
		e->hw_end = w->h;
	}
	return 0;
}

/*
 * Does thread @tid switch in on its CPU?  Threads take CPUs round robin
 * in the order of their first instruction.  Returns 1 if another thread
 * ran there last, 0 if not, -ENOMEM.
 */
static int ps_hw_switch(struct ps_hw_walk *w, int tid)
{
	int i, cpu, *p;

	if (!w->nr_cpus)
		return 0;
	for (i = 0; i < w->nr_tids && w->tids[i] != tid; i++)
		;
	if (i == w->nr_tids) {
		p = realloc(w->tids, (w->nr_tids + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->tids = p;
		w->tids[w->nr_tids++] = tid;
	}
	cpu = i % w->nr_cpus;
	i = w->cur[cpu] >= 0 && w->cur[cpu] != tid;
	w->cur[cpu] = tid;
	return i;
}

/* One GT_INSN record @r: switch, events, the instruction. */
static int ps_hw_insn(struct ps_hw_walk *w, size_t r)
{
	const struct gt_rec *rec = w->gt->recs[r];
	struct ps_hwtime *t = w->t;
	uint64_t x = rec->tsc;
	int err, sw;

	/*
	 * Start-at mode: the program ran untraced up to the start signal,
	 * and everything logged meanwhile (mappings, the exec fault images
	 * of JIT code it compiled) happened at its own time, before tracing
	 * began. Tracing is enabled when the tracer stops the thread there
	 * (TraceEn 0 -> 1: the PSB+ and TSC carry that time), not at the
	 * exec, where the walk's clock still is.
	 */
	if (!w->begun && (w->gt->hdr.flags & GT_FLAG_START_SIGNAL) &&
	    rec->tsc > w->h) {
		w->h = rec->tsc;
		err = ps_hw_anchor(t, rec->tsc, w->h);
		if (err)
			return err;
	}
	t->pre[r] = w->h;
	sw = ps_hw_switch(w, rec->tid);
	if (sw < 0)
		return sw;
	if (!w->begun)
		w->h += w->c->exec;	/* the exec enabling the trace */
	else if (sw)
		w->h += w->c->sw;
	w->begun = true;
	t->start[r] = w->h;
	err = ps_hw_anchor(t, rec->tsc, w->h);
	if (err)
		return err;
	err = ps_hw_events(w, r, &x);
	if (err)
		return err;
	t->hw[r] = w->h;
	err = ps_hw_anchor(t, x + 1, w->h);
	w->h += w->c->insn;
	return err ? err : ps_hw_anchor(t, x + 2, w->h);
}

/* One record of the walk; 0 or -ENOMEM. */
static int ps_hw_record(struct ps_hw_walk *w, size_t r)
{
	const struct gt_rec *rec = w->gt->recs[r];
	struct ps_hwtime *t = w->t;

	switch (rec->type) {
	case GT_INSN:
		return ps_hw_insn(w, r);
	case GT_SYSCALL:
		t->hw[r] = w->h;
		w->h += w->c->syscall;
		return 0;
	case GT_SIGNAL:
		t->hw[r] = w->h;
		w->h += w->c->signal;
		return ps_hw_anchor(t, rec->tsc, t->hw[r]);
	default:
		return 0;
	}
}

static bool ps_hw_timed_by_walk(unsigned int type)
{
	return type == GT_INSN || type == GT_SYSCALL || type == GT_SIGNAL;
}

/* The walk of @c's costs over @gt; returns 0 or -ENOMEM */
static int ps_hw_walk(struct ps_hw_walk *w)
{
	const struct gt_trace *gt = w->gt;
	uint64_t last = 0;
	size_t i;
	int err = 0;

	w->h = gt->nr_recs ? gt->recs[0]->tsc : 0;
	if (gt->nr_recs)
		err = ps_hw_anchor(w->t, w->h, w->h);
	for (i = 0; i < gt->nr_recs && !err; i++) {
		err = ps_hw_record(w, i);
		if (gt->recs[i]->tsc > last)
			last = gt->recs[i]->tsc;
	}
	if (!err)
		err = ps_hw_anchor(w->t, last + 1, w->h);
	w->t->end = w->h;
	return err;
}

int ps_hwtime_build(struct ps_hwtime *t, const struct gt_trace *gt,
		    const struct ps_hw_costs *c, int nr_cpus,
		    struct ps_ev_list *ev)
{
	struct ps_hw_walk w = { .t = t, .gt = gt, .c = c, .ev = ev,
				.nr_cpus = nr_cpus > 0 ? nr_cpus : 0 };
	size_t i;
	int err;

	memset(t, 0, sizeof(*t));
	t->nr = gt->nr_recs;
	t->hw = calloc(gt->nr_recs + 1, sizeof(*t->hw));
	t->pre = calloc(gt->nr_recs + 1, sizeof(*t->pre));
	t->start = calloc(gt->nr_recs + 1, sizeof(*t->start));
	if (!t->hw || !t->pre || !t->start) {
		ps_hwtime_free(t);
		return -ENOMEM;
	}
	if (!c) {
		ps_hw_identity(t, gt, ev);
		return 0;
	}
	w.cur = malloc((w.nr_cpus + 1) * sizeof(*w.cur));
	if (!w.cur) {
		ps_hwtime_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < (size_t)w.nr_cpus; i++)
		w.cur[i] = -1;
	err = ps_hw_walk(&w);
	free(w.cur);
	free(w.tids);
	if (err) {
		ps_hwtime_free(t);
		return err;
	}
	for (i = 0; i < gt->nr_recs; i++)
		if (!ps_hw_timed_by_walk(gt->recs[i]->type))
			t->hw[i] = ps_hwtime_map(t, gt->recs[i]->tsc);
	if (t->nr_pin)
		qsort(t->pin, t->nr_pin, sizeof(*t->pin), ps_hw_pin_cmp);
	return 0;
}

void ps_hwtime_free(struct ps_hwtime *t)
{
	free(t->hw);
	free(t->pre);
	free(t->start);
	free(t->a);
	free(t->pin);
	memset(t, 0, sizeof(*t));
}

/* The last anchor at or before @gt, -1 if none. */
static long ps_hw_find(const struct ps_hwtime *t, uint64_t gt)
{
	long lo = 0, hi = (long)t->nr_a - 1, found = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (t->a[mid].gt <= gt) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

/*
 * f: the hardware TSC of ground-truth TSC @gt, interpolated between the
 * anchors around it (rounded down), at the TSC's rate outside them.
 */
uint64_t ps_hwtime_map(const struct ps_hwtime *t, uint64_t gt)
{
	const struct ps_hw_anchor *a, *b;
	long i;

	if (t->identity || !t->nr_a)
		return gt;
	i = ps_hw_find(t, gt);
	if (i < 0) {
		a = &t->a[0];
		return a->hw > a->gt - gt ? a->hw - (a->gt - gt) : 0;
	}
	a = &t->a[i];
	if (i + 1 == (long)t->nr_a)
		return a->hw + (gt - a->gt);
	b = a + 1;
	return a->hw + (unsigned __int128)(gt - a->gt) * (b->hw - a->hw) /
		       (b->gt - a->gt);
}

/*
 * The smallest TSC whose perf time is @perf_time or later: the exact
 * inverse of perf's conversion, time = time_zero + (tsc >> shift) * mult
 * + (((tsc & mask) * mult) >> shift), where it is invertible. The sum
 * wraps: time_zero is often "negative" (a guest's TSC started before its
 * sched clock), so a time at or before TSC 0's is told by the signed
 * difference, not by comparing the two.
 */
uint64_t ps_perf_time_to_tsc(uint64_t perf_time, const struct gt_timeconv *tc)
{
	uint64_t tsc;

	if (!tc->time_mult ||
	    (int64_t)(perf_time - ps_perf_tsc_to_time(0, tc)) <= 0)
		return 0;
	tsc = pdata_time_to_tsc(perf_time, tc->time_shift, tc->time_mult,
				tc->time_zero);
	while (ps_perf_tsc_to_time(tsc, tc) < perf_time)
		tsc++;
	while (tsc && ps_perf_tsc_to_time(tsc - 1, tc) >= perf_time)
		tsc--;
	return tsc;
}

/*
 * A perf time of the tracer's clock (a sideband record) on the hardware
 * clock: to TSC, through f, back to perf time.  Time 0 (records perf
 * record made itself) stays 0; the identity map changes nothing.
 */
uint64_t ps_hwtime_perf(const struct ps_hwtime *t,
			const struct gt_timeconv *tc, uint64_t perf_time)
{
	struct ps_hw_anchor key, *pin;

	if (!perf_time || t->identity)
		return perf_time;
	key.gt = ps_perf_time_to_tsc(perf_time, tc);
	/*
	 * an exec fault's image: in its window even where f, interpolating
	 * between anchors raised past the fault's TSC (another thread's
	 * stop logged before it with a later TSC), would put it before the
	 * fault began, where the thread still ran the old bytes
	 */
	pin = t->nr_pin ? bsearch(&key, t->pin, t->nr_pin, sizeof(*t->pin),
				  ps_hw_pin_cmp) : NULL;
	return ps_perf_tsc_to_time(pin ? pin->hw : ps_hwtime_map(t, key.gt), tc);
}
