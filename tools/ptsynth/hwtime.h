/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwtime.h - the time the traced program would have taken on a real core
 * (hwtime.c)
 *
 * The ground truth's time is the tracer's TSC, stretched by
 * single-stepping (tens of microseconds to milliseconds per instruction).
 * ps_hwtime_build() walks the records in file order and gives each one a
 * "hardware" TSC from model costs (an instruction, a system call, an exec
 * fault, ...), and builds a monotonic piecewise-linear map from
 * ground-truth TSC to hardware TSC through anchors at the thread's stops,
 * so that anything else timed by the tracer's clock (the sideband of a
 * real perf record) lands where it happened between two instructions.
 *
 * ps_hwtime_build() returns 0 or -ENOMEM; the map functions return a TSC
 * (or perf time).  With costs NULL the map is the identity: the tracer's
 * own times, as ptsynth used before (--timing=tsc, tsc-fault).  A thread
 * switch costs time where two threads share a CPU: with nr_cpus > 0 the
 * threads take CPUs round robin in the order of their first instruction
 * (as synth.c's per-CPU layout), with 0 each thread has a core of its own.
 */
#ifndef PTSYNTH_HWTIME_H
#define PTSYNTH_HWTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gt_trace;
struct gt_timeconv;
struct ps_ev_list;

/* Model costs in TSC ticks: parameters, not measurements. */
struct ps_hw_costs {
	uint64_t insn;		/* a user instruction (IPC 1: one cycle) */
	uint64_t exec;		/* the exec (start signal) starting the trace */
	uint64_t syscall;	/* a system call */
	uint64_t fault;		/* an exec fault flowjit takes */
	uint64_t fault_tail;	/* from its image record to its return */
	uint64_t signal;	/* delivering a signal */
	uint64_t sw;		/* switching threads on a CPU (see below) */
	uint64_t irq;		/* an asynchronous interrupt */
};

/* Defaults in nanoseconds (insn: in ticks), see README.rst "Timing". */
#define PS_HW_INSN_TICKS	1
#define PS_HW_EXEC_NS		100000
#define PS_HW_SYSCALL_NS	1000
#define PS_HW_FAULT_NS		1300
#define PS_HW_FAULT_TAIL_NS	250
#define PS_HW_SIGNAL_NS		2000
#define PS_HW_SWITCH_NS		2000
#define PS_HW_IRQ_NS		1000

struct ps_hw_anchor {
	uint64_t gt;		/* ground-truth TSC */
	uint64_t hw;		/* hardware TSC */
};

/*
 * Per record @hw[r]: a GT_INSN executes at that time; a GT_SYSCALL is
 * the kernel entry after its instruction; a GT_SIGNAL the start of the
 * delivery; any other record f(its TSC).  Per GT_INSN @pre[r]: the time
 * before the step began (a thread switch, the trace's first exec and
 * events come between); @start[r]: the thread is back in user mode at
 * the instruction, before its events (faults, interrupts).
 */
struct ps_hwtime {
	bool identity;
	uint64_t *hw, *pre, *start;
	size_t nr;
	struct ps_hw_anchor *a;
	size_t nr_a, cap_a;
	/*
	 * Exec fault images, by their ground-truth TSC: each in its fault's
	 * window, whatever f gives where anchors of interleaved threads
	 * were raised (ps_hwtime_perf())
	 */
	struct ps_hw_anchor *pin;
	size_t nr_pin, cap_pin;
	uint64_t end;		/* after the last record */
};

/* The costs in nanoseconds (an instruction in ticks) */
struct ps_hw_costs_ns {
	uint64_t insn_ticks, exec, syscall, fault, fault_tail, signal, sw, irq;
};

int ps_hw_costs_from_ns(struct ps_hw_costs *c, const struct gt_timeconv *tc,
			const struct ps_hw_costs_ns *ns);
int ps_hwtime_build(struct ps_hwtime *t, const struct gt_trace *gt,
		    const struct ps_hw_costs *c, int nr_cpus,
		    struct ps_ev_list *ev);
void ps_hwtime_free(struct ps_hwtime *t);
uint64_t ps_hwtime_map(const struct ps_hwtime *t, uint64_t gt_tsc);
uint64_t ps_hwtime_perf(const struct ps_hwtime *t,
			const struct gt_timeconv *tc, uint64_t perf_time);
uint64_t ps_perf_time_to_tsc(uint64_t perf_time,
			     const struct gt_timeconv *tc);

#endif
