// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupts the model injects (events.c): --irq-every is reproducible
 * from its seed and never in front of a thread's first instruction;
 * --irq-jit finds the rewrite of a JIT page from the bytes its
 * instructions ran with and puts one interrupt at the old revision's
 * last instruction, one in another JIT page in between, one at the new
 * revision's first.
 */
#include "tap.h"
#include "gtbuild.h"
#include "events.h"

static const uint8_t nop[] = { 0x90 };
static const uint8_t ret[] = { 0xc3 };
static const uint8_t int3[] = { 0xcc };

#define JIT	0x7f0000000000ULL

static void anon_map(struct gtr *b, uint64_t start, uint64_t len)
{
	struct gt_mmap *m = gtr_add(b, GT_MMAP, sizeof(*m) + 8, 100, 1);

	m->start = start;
	m->len = len;
	strcpy(m->name, "//anon");
}

/* the records an event list has interrupts in front of, as a bit mask */
static uint64_t irq_mask(const struct ps_ev_list *l)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (l->ev[i].type == PS_EV_IRQ && l->ev[i].rec < 64)
			m |= 1ULL << l->ev[i].rec;
	return m;
}

static void random_irqs(void)
{
	struct ps_irq_opts o = { .every = 10, .seed = 1 };
	struct ps_ev_list a = { 0 }, b = { 0 }, c = { 0 }, all = { 0 };
	struct gtr g;
	bool same = true;
	size_t i;
	int k;

	memset(&g, 0, sizeof(g));
	for (k = 0; k < 1000; k++)
		gtr_insn(&g, 100 + (k == 500), 1000 + k, 0x401000, nop, 1);
	ps_ev_add_irqs(&a, &g.t, &o);
	ps_ev_add_irqs(&b, &g.t, &o);
	o.seed = 2;
	ps_ev_add_irqs(&c, &g.t, &o);
	o.every = 1;
	ps_ev_add_irqs(&all, &g.t, &o);
	for (i = 0; i < a.nr && a.nr == b.nr; i++)
		same = same && a.ev[i].rec == b.ev[i].rec;
	TAP_OK(a.nr == b.nr && same && a.nr > 50 && a.nr < 150,
	       "unit: events: --irq-every 10 gives %zu interrupts in 1000 insns, the same for the same seed",
	       a.nr);
	same = c.nr == a.nr;
	for (i = 0; i < a.nr && same; i++)
		same = a.ev[i].rec == c.ev[i].rec;
	TAP_OK(!same, "unit: events: another seed, other interrupts");
	TAP_OK(all.nr == 998 && all.nr_irq_random == 998,
	       "unit: events: --irq-every 1: every boundary but each thread's first insn (%zu)",
	       all.nr);
	ps_ev_free(&a);
	ps_ev_free(&b);
	ps_ev_free(&c);
	ps_ev_free(&all);
	gtr_free(&g);
}

static void jit_irqs(void)
{
	struct ps_irq_opts o = { .jit = true };
	struct ps_ev_list l = { 0 };
	struct gtr g;

	memset(&g, 0, sizeof(g));
	anon_map(&g, JIT, 0x2000);				/* 0 */
	gtr_insn(&g, 100, 10, 0x401000, nop, 1);		/* 1 */
	gtr_insn(&g, 100, 20, JIT, nop, 1);			/* 2 */
	gtr_insn(&g, 100, 30, JIT + 1, ret, 1);			/* 3 */
	gtr_insn(&g, 100, 40, JIT + 0x1000, ret, 1);		/* 4 */
	gtr_insn(&g, 100, 50, 0x401001, nop, 1);		/* 5 */
	gtr_insn(&g, 100, 60, JIT, int3, 1);			/* 6 */
	gtr_insn(&g, 100, 70, JIT + 1, ret, 1);			/* 7 */
	gtr_insn(&g, 100, 80, JIT, int3, 1);			/* 8 */
	ps_ev_add_irqs(&l, &g.t, &o);
	TAP_OK(l.nr_jit_rewrites == 1 && l.nr_irq_jit == 3 &&
	       irq_mask(&l) == ((1 << 3) | (1 << 4) | (1 << 6)),
	       "unit: events: --irq-jit: one rewrite, interrupts at the old revision's last insn, in the other JIT page, at the new one's first (mask %#llx)",
	       (unsigned long long)irq_mask(&l));
	ps_ev_free(&l);
	gtr_free(&g);
}

int main(void)
{
	random_irqs();
	jit_irqs();
	return tap_failed ? 1 : 0;
}
