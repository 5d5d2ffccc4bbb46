// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - exec faults and interrupts between two instructions
 *
 * The ground truth cannot show a thread leaving user mode when the
 * kernel handles something transparently: the single step just
 * completes.  With user-only tracing hardware shows it as FUP (the IP of
 * the instruction not yet executed) + TIP.PGD, and TIP.PGE at the same IP
 * when the kernel returns (Intel SDM Vol. 3C, "Intel Processor Trace",
 * the FUP and TIP.PGD packet definitions: asynchronous events).  Two
 * kinds are modelled, each attached to the GT_INSN record it precedes:
 *
 * - flowjit exec faults, from the sideband's USER_JIT images: the
 *   instruction the thread was being stepped into when the record was
 *   written is the one whose fetch faulted;
 * - interrupts the model injects: at pseudo-random instruction boundaries
 *   (--irq-every, --irq-seed), and around every rewrite of a JIT page
 *   (--irq-jit): JIT code is code in anonymous executable mappings, and a
 *   page is rewritten when an instruction runs there with bytes other
 *   than the ones an earlier instruction ran with; and at the IP of each
 *   exec fault, the last time the thread ran it before (--irq-fault-ip):
 *   the one place a trace shows exactly as it shows the fault.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "gt.h"
#include "synth.h"

#define JIT_PAGE_SHIFT	12
#define JIT_PAGE_SIZE	(1UL << JIT_PAGE_SHIFT)

/* A JIT page: the bytes the instructions of its current revision ran with. */
struct ps_ev_jit_page {
	uint64_t page;
	uint8_t bytes[JIT_PAGE_SIZE];
	uint8_t valid[JIT_PAGE_SIZE];
	size_t last_rec;	/* last insn of this revision */
	int last_tid;
};

struct ps_ev_jit {
	uint64_t (*range)[2];	/* anonymous executable mappings */
	size_t nr_range;
	struct ps_ev_jit_page *pages;
	size_t nr_pages;
};

/* Appends an event; returns 0 or -ENOMEM. */
static int ps_ev_add(struct ps_ev_list *l, size_t rec, int tid,
		     enum ps_ev_type type, uint64_t gt_tsc)
{
	struct ps_ev *e;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;

		e = realloc(l->ev, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		l->ev = e;
		l->cap = cap;
	}
	e = &l->ev[l->nr++];
	memset(e, 0, sizeof(*e));
	e->rec = rec;
	e->tid = tid;
	e->type = type;
	e->gt_tsc = gt_tsc;
	return 0;
}

/*
 * The record an exec fault of @tid at @tsc belongs to: the instruction
 * the thread was stepped into at that time, i.e. its last GT_INSN with a
 * TSC (the stop in front of it) below @tsc.  Returns the record index,
 * -1 if the thread had no instruction yet, -2 if the last thing it did
 * was no instruction (a signal delivery, its exit) or it is unknown.
 * Only the records of the thread's own stops count: their TSCs grow.
 */
static long ps_ev_fault_rec(const struct gt_trace *gt, int tid, uint64_t tsc)
{
	bool known = false, had_insn = false;
	long last = -2;
	size_t i;

	for (i = 0; i < gt->nr_recs; i++) {
		const struct gt_rec *r = gt->recs[i];

		if ((int)r->tid != tid ||
		    (r->type != GT_INSN && r->type != GT_SIGNAL &&
		     r->type != GT_EXIT))
			continue;
		known = true;
		if (r->tsc >= tsc)
			break;
		if (r->type == GT_INSN) {
			last = i;
			had_insn = true;
		} else if (r->type == GT_SIGNAL || r->type == GT_EXIT) {
			last = -2;
		}
	}
	if (known && !had_insn)
		return -1;
	return last;
}

int ps_ev_add_faults(struct ps_ev_list *l, const struct gt_trace *gt,
		     const struct ps_synth_fault *f, size_t nr)
{
	size_t i;
	long rec;
	int err;

	for (i = 0; i < nr; i++) {
		rec = ps_ev_fault_rec(gt, f[i].tid, f[i].tsc);
		if (rec == -1) {
			l->nr_faults_before++;
			continue;
		}
		if (rec < 0) {
			l->nr_faults_dropped++;
			continue;
		}
		err = ps_ev_add(l, rec, f[i].tid, PS_EV_FAULT, f[i].tsc);
		if (err)
			return err;
		l->nr_faults++;
	}
	return 0;
}

/*
 * splitmix64: the next pseudo-random number of the sequence @state
 * seeds; the same seed gives the same interrupts.
 */
uint64_t ps_ev_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Which GT_INSN records are the first of their thread (no interrupt in
 * front of those: the trace of the thread starts there).  Returns a
 * calloc()ed array of gt->nr_recs flags, NULL without memory.
 */
static bool *ps_ev_first_insns(const struct gt_trace *gt)
{
	bool *first = calloc(gt->nr_recs + 1, sizeof(*first));
	int *tids = calloc(gt->nr_recs + 1, sizeof(*tids));
	size_t i, j, nr = 0;

	if (!first || !tids) {
		free(first);
		free(tids);
		return NULL;
	}
	for (i = 0; i < gt->nr_recs; i++) {
		const struct gt_rec *r = gt->recs[i];

		if (r->type != GT_INSN)
			continue;
		for (j = 0; j < nr && tids[j] != (int)r->tid; j++)
			;
		if (j == nr) {
			tids[nr++] = r->tid;
			first[i] = true;
		}
	}
	free(tids);
	return first;
}

/* An interrupt before record @rec unless there is one or it is a first. */
static int ps_ev_add_irq(struct ps_ev_list *l, const struct gt_trace *gt,
			 size_t rec, bool *taken, const bool *first,
			 uint64_t *count)
{
	int err;

	if (taken[rec] || first[rec])
		return 0;
	err = ps_ev_add(l, rec, gt->recs[rec]->tid, PS_EV_IRQ, 0);
	if (err)
		return err;
	taken[rec] = true;
	(*count)++;
	return 0;
}

/* --irq-every: each boundary with probability 1/every. */
static int ps_ev_irqs_random(struct ps_ev_list *l, const struct gt_trace *gt,
			     const struct ps_irq_opts *o, bool *taken,
			     const bool *first)
{
	uint64_t state = o->seed;
	size_t i;
	int err;

	for (i = 0; i < gt->nr_recs; i++) {
		if (gt->recs[i]->type != GT_INSN || first[i])
			continue;
		if (ps_ev_rand(&state) % o->every)
			continue;
		err = ps_ev_add_irq(l, gt, i, taken, first, &l->nr_irq_random);
		if (err)
			return err;
	}
	return 0;
}

static bool ps_ev_jit_ip(const struct ps_ev_jit *j, uint64_t ip)
{
	size_t i;

	for (i = 0; i < j->nr_range; i++)
		if (ip >= j->range[i][0] && ip < j->range[i][1])
			return true;
	return false;
}

/* An anonymous executable mapping: JIT code (not [vdso]). */
static int ps_ev_jit_map(struct ps_ev_jit *j, const struct gt_mmap *m)
{
	uint64_t (*r)[2];

	if (m->ino || strcmp(m->name, "//anon"))
		return 0;
	r = realloc(j->range, (j->nr_range + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	j->range = r;
	r[j->nr_range][0] = m->start;
	r[j->nr_range][1] = m->start + m->len;
	j->nr_range++;
	return 0;
}

/* The page of @ip, added (empty) if new; NULL without memory. */
static struct ps_ev_jit_page *ps_ev_jit_page(struct ps_ev_jit *j, uint64_t ip)
{
	uint64_t page = ip >> JIT_PAGE_SHIFT;
	struct ps_ev_jit_page *p;
	size_t i;

	for (i = 0; i < j->nr_pages; i++)
		if (j->pages[i].page == page)
			return &j->pages[i];
	p = realloc(j->pages, (j->nr_pages + 1) * sizeof(*p));
	if (!p)
		return NULL;
	j->pages = p;
	p = &p[j->nr_pages++];
	memset(p, 0, sizeof(*p));
	p->page = page;
	p->last_rec = (size_t)-1;
	return p;
}

/*
 * Does @in run with other bytes than the current revision of page @p
 * holds where they overlap?  Bytes past the page end are not compared.
 */
static bool ps_ev_jit_differs(const struct ps_ev_jit_page *p,
			      const struct gt_insn *in)
{
	size_t off = in->ip & (JIT_PAGE_SIZE - 1), i;

	for (i = 0; i < in->len && off + i < JIT_PAGE_SIZE; i++)
		if (p->valid[off + i] && p->bytes[off + i] != in->bytes[i])
			return true;
	return false;
}

static void ps_ev_jit_learn(struct ps_ev_jit_page *p, const struct gt_insn *in,
			    size_t rec)
{
	size_t off = in->ip & (JIT_PAGE_SIZE - 1), i;

	for (i = 0; i < in->len && off + i < JIT_PAGE_SIZE; i++) {
		p->bytes[off + i] = in->bytes[i];
		p->valid[off + i] = 1;
	}
	p->last_rec = rec;
	p->last_tid = in->h.tid;
}

/*
 * The last instruction thread @tid ran in another JIT page than @p after
 * @p's old revision last ran and before @rec: after the rewrite, most
 * likely.  Returns its record index, (size_t)-1 if none.
 */
static size_t ps_ev_jit_other(const struct ps_ev_jit *j,
			      const struct ps_ev_jit_page *p, int tid,
			      size_t rec)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < j->nr_pages; i++) {
		const struct ps_ev_jit_page *q = &j->pages[i];

		if (q == p || q->last_rec == (size_t)-1 || q->last_tid != tid ||
		    q->last_rec <= p->last_rec || q->last_rec >= rec)
			continue;
		if (best == (size_t)-1 || q->last_rec > best)
			best = q->last_rec;
	}
	return best;
}

/*
 * Page @p runs again with other bytes at record @rec: an interrupt at
 * the last boundary inside it before (the old revision's last insn), one
 * at the first after (@rec), and one in another JIT page in between.
 */
static int ps_ev_jit_rewrite(struct ps_ev_list *l, const struct gt_trace *gt,
			     struct ps_ev_jit *j, struct ps_ev_jit_page *p,
			     size_t rec, bool *taken, const bool *first)
{
	size_t other = ps_ev_jit_other(j, p, gt->recs[rec]->tid, rec);
	int err;

	l->nr_jit_rewrites++;
	err = ps_ev_add_irq(l, gt, p->last_rec, taken, first, &l->nr_irq_jit);
	if (!err && other != (size_t)-1)
		err = ps_ev_add_irq(l, gt, other, taken, first, &l->nr_irq_jit);
	if (!err)
		err = ps_ev_add_irq(l, gt, rec, taken, first, &l->nr_irq_jit);
	memset(p->valid, 0, sizeof(p->valid));
	return err;
}

/* --irq-jit: interrupts around each rewrite of a JIT page. */
static int ps_ev_irqs_jit(struct ps_ev_list *l, const struct gt_trace *gt,
			  bool *taken, const bool *first)
{
	struct ps_ev_jit j = { 0 };
	struct ps_ev_jit_page *p;
	size_t i;
	int err = 0;

	for (i = 0; i < gt->nr_recs && !err; i++) {
		const struct gt_rec *r = gt->recs[i];
		const struct gt_insn *in = (const void *)r;

		if (r->type == GT_MMAP) {
			err = ps_ev_jit_map(&j, (const void *)r);
			continue;
		}
		if (r->type != GT_INSN || !ps_ev_jit_ip(&j, in->ip))
			continue;
		p = ps_ev_jit_page(&j, in->ip);
		if (!p) {
			err = -ENOMEM;
			break;
		}
		if (p->last_rec != (size_t)-1 && ps_ev_jit_differs(p, in))
			err = ps_ev_jit_rewrite(l, gt, &j, p, i, taken, first);
		ps_ev_jit_learn(p, in, i);
	}
	free(j.range);
	free(j.pages);
	return err;
}

/* Is one of the first @nr events a fault before record @rec? */
static bool ps_ev_fault_at(const struct ps_ev_list *l, size_t nr, size_t rec)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (l->ev[i].type == PS_EV_FAULT && l->ev[i].rec == rec)
			return true;
	return false;
}

/*
 * --irq-fault-ip: for each exec fault (added before), an interrupt before
 * the last instruction at the fault's IP the thread ran since its fault
 * before, if any.
 */
static int ps_ev_irqs_fault_ip(struct ps_ev_list *l, const struct gt_trace *gt,
			       bool *taken, const bool *first)
{
	size_t i, k, nr = l->nr;
	int err;

	for (i = 0; i < nr; i++) {
		const struct ps_ev *f = &l->ev[i];
		const struct gt_insn *in = (const void *)gt->recs[f->rec];
		int tid = f->tid;
		uint64_t ip;

		if (f->type != PS_EV_FAULT || gt->recs[f->rec]->type != GT_INSN)
			continue;
		ip = in->ip;
		for (k = f->rec; k-- > 0;) {
			const struct gt_insn *p = (const void *)gt->recs[k];

			if (gt->recs[k]->tid != tid || gt->recs[k]->type != GT_INSN)
				continue;
			if (ps_ev_fault_at(l, nr, k) || p->ip == ip)
				break;
		}
		if (k == (size_t)-1 || ps_ev_fault_at(l, nr, k))
			continue;
		err = ps_ev_add_irq(l, gt, k, taken, first, &l->nr_irq_fault_ip);
		if (err)
			return err;
	}
	return 0;
}

int ps_ev_add_irqs(struct ps_ev_list *l, const struct gt_trace *gt,
		   const struct ps_irq_opts *o)
{
	bool *taken, *first;
	int err = 0;

	if (!o->every && !o->jit && !o->fault_ip)
		return 0;
	taken = calloc(gt->nr_recs + 1, sizeof(*taken));
	first = ps_ev_first_insns(gt);
	if (!taken || !first) {
		free(taken);
		free(first);
		return -ENOMEM;
	}
	if (o->every)
		err = ps_ev_irqs_random(l, gt, o, taken, first);
	if (!err && o->jit)
		err = ps_ev_irqs_jit(l, gt, taken, first);
	if (!err && o->fault_ip)
		err = ps_ev_irqs_fault_ip(l, gt, taken, first);
	free(taken);
	free(first);
	return err;
}

static int ps_ev_cmp(const void *a, const void *b)
{
	const struct ps_ev *x = a, *y = b;

	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->gt_tsc < y->gt_tsc ? -1 : x->gt_tsc > y->gt_tsc;
}

/*
 * By record; at one boundary the interrupt comes first, then the fault
 * of the fetch that follows it.
 */
void ps_ev_sort(struct ps_ev_list *l)
{
	if (l->nr)
		qsort(l->ev, l->nr, sizeof(*l->ev), ps_ev_cmp);
}

void ps_ev_free(struct ps_ev_list *l)
{
	free(l->ev);
	memset(l, 0, sizeof(*l));
}
