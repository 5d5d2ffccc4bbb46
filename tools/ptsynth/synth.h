/* SPDX-License-Identifier: GPL-2.0 */
/*
 * synth.h - turn a user-space ground truth into PT packet streams (synth.c)
 *
 * ps_synth_run() fills a ps_synth_result: one packet stream per thread
 * (or per CPU), the context switches of per-CPU mode and counters.  It
 * returns 0, or a negative errno or libipt error code; the result is to be
 * freed with ps_synth_result_free() either way.
 */
#ifndef PTSYNTH_SYNTH_H
#define PTSYNTH_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet.h"

struct gt_trace;
struct ps_ev_list;
struct ps_hwtime;

struct ps_synth_opts {
	uint64_t psb_period;	/* bytes between PSB+, 0 = never after start */
	bool retcomp;		/* return compression (perf: noretcomp=0) */
	bool long_tnt;		/* use TNT-64 (47 bits) instead of TNT-8 */
	bool per_cpu;		/* one stream per CPU instead of per thread */
	int nr_cpus;		/* CPUs for per-cpu mode (threads round robin) */
	int64_t ovf_at;		/* inject OVF before this insn index, -1 none */
	uint64_t ovf_len;	/* instructions whose packets are lost */
	bool verbose;
	/*
	 * Time (hwtime.h): the hardware time of every record, NULL: the
	 * tracer's own.  Events (events.h): exec faults and interrupts as
	 * FUP + TIP.PGD, TIP.PGE, in their hwtime windows; NULL: the faults
	 * below, at their own times.
	 */
	const struct ps_hwtime *hw;
	struct ps_ev_list *events;
	const struct ps_synth_fault *faults;	/* sorted by tsc */
	size_t nr_faults;
	bool fault_tsc;		/* a TSC packet with the TIP.PGE of a fault */
	/* MTC every 2^mtc_period CTC ticks (perf's mtc_period), -1: none */
	int mtc_period;
	bool cbr;		/* CBR in PSB+ and at TraceEn 0 -> 1 */
	int cyc_thresh;		/* CYC with this CycThresh, -1: none */
};

struct ps_synth_fault {
	int tid;
	uint64_t tsc;
};

/* One AUX area: per thread (cpu = -1) or per CPU (tid = -1). */
struct ps_synth_stream {
	int idx;
	int cpu;
	int tid;
	int pid;
	struct ps_buf buf;
	uint64_t first_tsc, last_tsc;
};

/* A context switch on a CPU (per-cpu mode): sideband for perf. */
struct ps_synth_switch {
	uint64_t tsc;
	int cpu;
	bool out;
	int pid, tid;		/* the thread switched in or out */
	int next_prev_pid, next_prev_tid;
};

struct ps_synth_result {
	struct ps_synth_stream *streams;
	int nr_streams;
	struct ps_synth_switch *switches;
	size_t nr_switches;
	uint64_t nr_packets;
	uint64_t nr_insns;
	uint64_t nr_psb;
	uint64_t nr_mtc;
	uint64_t nr_cyc;
	uint32_t ctc_n, ctc_d;		/* TSC/CTC ratio of the MTCs, 0: none */
	uint8_t cbr;			/* core:bus ratio sent, 0: none */
	uint64_t ovf_resume_idx;	/* per-stream insn index after OVF */
	bool ovf_done;
	uint64_t nr_faults;		/* faults modelled */
	uint64_t nr_faults_dropped;	/* not while a user insn was pending */
	uint64_t nr_faults_before;	/* before the thread's first insn */
	uint64_t nr_irqs;		/* interrupts modelled */
};

void ps_synth_opts_default(struct ps_synth_opts *o);
int ps_synth_run(const struct gt_trace *gt, const struct ps_synth_opts *o,
		 struct ps_synth_result *res);
void ps_synth_result_free(struct ps_synth_result *res);

#endif
