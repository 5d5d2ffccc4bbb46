/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events.h - what takes a thread out of user mode between two of its
 * instructions without the ground truth showing it (events.c): flowjit's
 * exec faults, known from the sideband, and asynchronous interrupts the
 * model injects.  Each event is attached to the GT_INSN record it comes
 * before; hwtime.c gives it a hardware time window, synth.c sends FUP +
 * TIP.PGD at its start and TIP.PGE at its end.
 *
 * Functions returning int return 0 or -ENOMEM.
 */
#ifndef PTSYNTH_EVENTS_H
#define PTSYNTH_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gt_trace;
struct ps_synth_fault;

enum ps_ev_type {
	PS_EV_IRQ,		/* an interrupt at the instruction boundary */
	PS_EV_FAULT,		/* the instruction's fetch faulted */
};

struct ps_ev {
	size_t rec;		/* index of the GT_INSN record it precedes */
	int tid;
	enum ps_ev_type type;
	uint64_t gt_tsc;	/* a fault: its sideband time, as TSC */
	uint64_t hw_start;	/* FUP + TIP.PGD (filled by hwtime.c) */
	uint64_t hw_end;	/* TIP.PGE */
};

struct ps_irq_opts {
	uint64_t every;		/* mean instructions between two, 0: none */
	uint64_t seed;		/* of the pseudo-random choice */
	bool jit;		/* one before and after each JIT rewrite */
	bool fault_ip;		/* one at each fault's IP the time before */
};

struct ps_ev_list {
	struct ps_ev *ev;	/* by record, interrupts before faults */
	size_t nr, cap;
	uint64_t nr_faults;		/* attached to an instruction */
	uint64_t nr_faults_before;	/* before the thread's first insn */
	uint64_t nr_faults_dropped;	/* no instruction of theirs */
	uint64_t nr_irq_random;		/* --irq-every */
	uint64_t nr_irq_jit;		/* --irq-jit */
	uint64_t nr_irq_fault_ip;	/* --irq-fault-ip */
	uint64_t nr_jit_rewrites;	/* JIT page revisions seen */
};

int ps_ev_add_faults(struct ps_ev_list *l, const struct gt_trace *gt,
		     const struct ps_synth_fault *f, size_t nr);
int ps_ev_add_irqs(struct ps_ev_list *l, const struct gt_trace *gt,
		   const struct ps_irq_opts *o);
void ps_ev_sort(struct ps_ev_list *l);
void ps_ev_free(struct ps_ev_list *l);
uint64_t ps_ev_rand(uint64_t *state);

#endif
