/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptsynth.h - synthesise Intel PT traces from single-stepped executions
 */
#ifndef PTSYNTH_H
#define PTSYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt.h"

uint64_t tsc_to_perf_time(uint64_t tsc, const struct gt_timeconv *tc);

/* tracer.c */
int read_time_conv(struct gt_timeconv *tc, bool *calibrated);
struct trace_opts {
	uint64_t max_insns;	/* kill the program after this many, 0: no */
	int start_sig;		/* start-at mode: step from this signal on */
	int stop_sig;		/* ... up to this one (0: up to the exit) */
};

int trace_parse_signal(const char *s);
int trace_program(const char *gt_path, char **argv,
		  const struct trace_opts *o, int *exit_status);

/* synth.c: packet generation */
struct synth_opts {
	uint64_t psb_period;	/* bytes between PSB+, 0 = never after start */
	bool retcomp;		/* return compression (perf: noretcomp=0) */
	bool long_tnt;		/* use TNT-64 (47 bits) instead of TNT-8 */
	bool per_cpu;		/* one stream per CPU instead of per thread */
	int nr_cpus;		/* CPUs for per-cpu mode (threads round robin) */
	int64_t ovf_at;		/* inject OVF before this insn index, -1 none */
	uint64_t ovf_len;	/* instructions whose packets are lost */
	bool verbose;
	/* exec faults (flowjit snapshots): FUP + TIP.PGD, TIP.PGE */
	const struct synth_fault *faults;	/* sorted by tsc */
	size_t nr_faults;
	bool fault_tsc;		/* a TSC packet with the TIP.PGE of a fault */
};

struct synth_fault {
	int tid;
	uint64_t tsc;
};

struct ptbuf {
	uint8_t *data;
	size_t len, cap;
};

/* One AUX area: per thread (cpu = -1) or per CPU (tid = -1). */
struct synth_stream {
	int idx;
	int cpu;
	int tid;
	int pid;
	struct ptbuf buf;
	uint64_t first_tsc, last_tsc;
};

/* A context switch on a CPU (per-cpu mode): sideband for perf. */
struct synth_switch {
	uint64_t tsc;
	int cpu;
	bool out;
	int pid, tid;		/* the thread switched in or out */
	int next_prev_pid, next_prev_tid;
};

struct synth_result {
	struct synth_stream *streams;
	int nr_streams;
	struct synth_switch *switches;
	size_t nr_switches;
	uint64_t nr_packets;
	uint64_t nr_insns;
	uint64_t nr_psb;
	uint64_t ovf_resume_idx;	/* per-stream insn index after OVF */
	bool ovf_done;
	uint64_t nr_faults;		/* faults modelled */
	uint64_t nr_faults_dropped;	/* not while a user insn was pending */
	uint64_t nr_faults_before;	/* before the thread's first insn */
};

void synth_opts_default(struct synth_opts *o);
int synth_run(const struct gt_trace *gt, const struct synth_opts *o,
	      struct synth_result *res);
void synth_result_free(struct synth_result *res);

/* pt packet helpers (packet.c), exposed for unit tests */
struct pt_packet;
struct pktenc;
struct pktenc *pktenc_new(struct ptbuf *out);
void pktenc_free(struct pktenc *pe);
int pktenc_put(struct pktenc *pe, const struct pt_packet *pkt);
int ptbuf_append(struct ptbuf *b, const void *data, size_t len);

int ipc_choose(uint64_t last_ip, uint64_t ip);

/* sideband.c: the sideband of a real perf record --flowjit of the run */
struct sb_rec {
	uint64_t time;
	int pid, tid, cpu;
	uint8_t *data;		/* header + body, no sample_id trailer */
	size_t body_len;
};

struct sb_fault {
	int tid;
	uint64_t time;		/* perf time */
};

struct sideband {
	struct sb_rec *recs;
	size_t nr, cap;
	struct sb_fault *faults;	/* sorted by time */
	size_t nr_faults;
	uint64_t nr_flowjit, nr_images, nr_stripped, nr_skipped, nr_bad;
	uint64_t nr_renamed;
};

int sideband_load(struct sideband *sb, const char *path, const char *root,
		  bool strip_flowjit);
void sideband_free(struct sideband *sb);

/* perfdata.c */
struct perfdata_opts {
	const char *path;
	uint32_t pmu_type;
	bool per_cpu;
	bool retcomp;
	uint64_t psb_period;
	const struct sideband *sideband;	/* real sideband, or NULL */
	bool flowjit;				/* set attr.flowjit (bit 63) */
};

int perfdata_write(const struct gt_trace *gt, const struct synth_result *res,
		   const struct perfdata_opts *o);

#endif
