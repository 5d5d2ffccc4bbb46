/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptsynth.h - synthesise Intel PT traces from single-stepped executions
 */
#ifndef PTSYNTH_H
#define PTSYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <intel-pt.h>

#include "gt.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

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
	/* MTC every 2^mtc_period CTC ticks (perf's mtc_period), -1: none */
	int mtc_period;
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
	uint64_t nr_mtc;
	uint32_t ctc_n, ctc_d;		/* TSC/CTC ratio of the MTCs, 0: none */
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
struct pktenc;
struct pktenc *pktenc_new(struct ptbuf *out);
void pktenc_free(struct pktenc *pe);
int pktenc_put(struct pktenc *pe, const struct pt_packet *pkt);
int ptbuf_append(struct ptbuf *b, const void *data, size_t len);

int ipc_choose(uint64_t last_ip, uint64_t ip);

/*
 * One PT packet stream of a synthesiser (packet.c): the state a decoder
 * follows (IP compression, TNT bits, PacketEn).  synth.c and ksynth.c
 * decide what to emit when; the packets are built here.
 */
#define PT_TNT8_MAX	6	/* TNT bits of a TNT-8 packet */
#define PT_TNT64_MAX	47	/* ... of a TNT-64 packet */

struct ptstream {
	struct ptbuf *buf;	/* the packets */
	struct pktenc *pe;
	const char *who;	/* for error messages */
	int tnt_max;		/* TNT bits sent in one packet */
	bool enabled;		/* PacketEn: packets flowing */
	bool lost;		/* inside an OVF window: packets dropped */
	uint64_t last_ip;	/* for IP compression */
	uint64_t tnt;
	int tnt_n;
	size_t psb_mark;	/* buffer length at the last PSB */
	uint64_t tsc;		/* for the next TSC packet */
	/* MTC (ptstream_set_mtc): the CTC runs at TSC * ctc_d / ctc_n */
	int mtc_period;		/* -1: no MTC, no TMA */
	uint32_t ctc_n, ctc_d;	/* TSC/CTC ratio, CPUID 0x15 EBX/EAX */
	bool have_tma;		/* a PSB+ gave the CTC: MTCs may follow */
	uint64_t mtc_tick;	/* CTC >> mtc_period at the last MTC or TMA */
	uint64_t nr_mtc;
	uint64_t nr_packets, nr_psb;
	int err;		/* encoder error: no more packets */
};

int ptstream_init(struct ptstream *ps, struct ptbuf *buf, int tnt_max,
		  const char *who);
void ptstream_exit(struct ptstream *ps);
void ptstream_emit(struct ptstream *ps, const struct pt_packet *p);
void ptstream_tnt_flush(struct ptstream *ps);
void ptstream_tnt(struct ptstream *ps, bool taken);
void ptstream_ip(struct ptstream *ps, enum pt_packet_type type, uint64_t ip);
void ptstream_simple(struct ptstream *ps, enum pt_packet_type type);
void ptstream_tsc(struct ptstream *ps);
void ptstream_set_mtc(struct ptstream *ps, int period, uint32_t ctc_n,
		      uint32_t ctc_d);
void ptstream_time(struct ptstream *ps, uint64_t tsc);
int pt_ctc_ratio(const struct gt_timeconv *tc, uint32_t *n, uint32_t *d);
void ptstream_mode_exec(struct ptstream *ps);
void ptstream_pgd(struct ptstream *ps);
void ptstream_fup_pgd(struct ptstream *ps, uint64_t ip);
void ptstream_pge(struct ptstream *ps, uint64_t ip);
void ptstream_psb(struct ptstream *ps, uint64_t ip);
bool ptstream_psb_due(const struct ptstream *ps, uint64_t period);

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
	uint64_t nr_flowjit, nr_images, nr_stripped, nr_skipped;
	uint64_t nr_bad;	/* malformed: dropped */
	uint64_t nr_synth;	/* kept: perf record's own (time 0) */
	uint64_t nr_renamed;
};

int sideband_load(struct sideband *sb, const char *path, const char *root,
		  bool strip_flowjit);
void sideband_free(struct sideband *sb);

/*
 * perfdata.c: the perf.data format (tools/perf/Documentation/
 * perf.data-file-format.txt), for the writers here and in ksynth.c and
 * for sideband.c
 */
#define PERF_MAGIC			0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_RECORD_AUXTRACE_INFO	70
#define PERF_RECORD_AUXTRACE		71

struct perf_file_section {
	uint64_t offset, size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;
	uint64_t adds_features[4];
};

/* PERF_RECORD_AUXTRACE after its header; the trace bytes follow it */
struct perf_auxtrace {
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu, reserved;
};

/* AUXTRACE_INFO of intel_pt without a filter string, in u64s */
#define INTEL_PT_INFO_WORDS		20

struct perf_event_attr;

bool perf_header_ok(const struct perf_file_header *h, uint64_t file_size);
struct perf_file_section perf_attr_ids(const uint8_t *attr, uint64_t attr_size);
uint64_t intel_pt_config(uint64_t psb_period, bool retcomp);
uint64_t intel_pt_mtc_config(int mtc_period);
void intel_pt_auxtrace_info_ctc(uint64_t *rec, uint32_t ctc_n, uint32_t ctc_d);
void intel_pt_attr(struct perf_event_attr *a, uint32_t pmu_type,
		   uint64_t config, uint64_t sample_type);
size_t intel_pt_auxtrace_info(uint64_t *rec, size_t max_words,
			      uint32_t pmu_type, const struct gt_timeconv *tc,
			      bool per_cpu, const char *filter);
void perf_auxtrace_fill(struct perf_auxtrace *a, const struct ptbuf *b,
			uint64_t reference, int idx, int tid, int cpu);
int perf_write_aux(FILE *f, const struct ptbuf *b);

struct perfdata_opts {
	const char *path;
	uint32_t pmu_type;
	bool per_cpu;
	bool retcomp;
	uint64_t psb_period;
	bool mtc;				/* MTC every 2^mtc_period */
	int mtc_period;
	const struct sideband *sideband;	/* real sideband, or NULL */
	bool flowjit;				/* set attr.flowjit (bit 63) */
};

int perfdata_write(const struct gt_trace *gt, const struct synth_result *res,
		   const struct perfdata_opts *o);

#endif
