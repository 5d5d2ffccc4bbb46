/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_replay: `ptreplay decode`, replaying a perf.data through the
 * versioned code store.
 *
 * pr_replay_load() reads the perf.data: it collects the AUX queues, builds
 * the code store from the sideband (MMAP/MMAP2, COMM exec, FORK, KSYMBOL,
 * TEXT_POKE, flowjit) and the task tables (FORK/COMM/ITRACE_START, context
 * switches), and counts what was lost.  pr_decode_run() (pr_decode.h)
 * decodes the queues; pr_report_print() (pr_report.h) writes the outputs.
 */
#ifndef PR_REPLAY_H
#define PR_REPLAY_H

#include "pr_perf.h"
#include "pr_store.h"
#include "pr_jitmap.h"

#include <stdint.h>
#include <stdio.h>

/* Outputs. */
enum {
	PR_OUT_FLOW	= 1 << 0,
	PR_OUT_CALLS	= 1 << 1,
	PR_OUT_PROFILE	= 1 << 2,
	PR_OUT_HEALTH	= 1 << 3,
	PR_OUT_EXPORT	= 1 << 4,	/* --chrome-trace, --folded */
};

struct pr_replay_opts {
	const char *input;
	uint32_t outputs;
	int jobs;
	int no_flowjit;
	int json;
	int flow_errors;	/* trace error lines in the flow (perf's 'e') */
	int progress;		/* -1: if stderr is a terminal */
	int no_files;		/* do not open files named in the trace */
	int no_vdso;
	const char *vmlinux;	/* kernel text (ELF) from time 0 */
	int no_text_poke;	/* ignore TEXT_POKE records */
	int no_tie;		/* flowjit revisions by time only */
	const char *perf_map_dir; /* DIR/perf-PID.map names JIT code */
	const char *jitdump;	/* a jitdump naming JIT code */
	int lines;		/* file:line and inlined frames (libdw) */
	const char *chrome_trace;	/* Chrome trace event JSON to write */
	const char *folded;		/* collapsed stacks to write */
	/* Measuring (PTREPLAY_READ=callback): every code byte through
	 * libipt's read callback, no image sections.
	 */
	int read_callback;
	/* Measuring (PTREPLAY_DECODER=insn): the instruction flow decoder
	 * also where the block decoder does (--calls, --profile, --health).
	 */
	int insn_decoder;
	/* Trace bytes per piece (0: the default; tests, PTREPLAY_PIECE). */
	size_t piece;
	/* Where flow and call lines are written as they are decoded (NULL:
	 * kept for pr_report_print()).
	 */
	FILE *stream;
};

/* One AUXTRACE buffer of a queue: @n trace bytes at @p (in the file). */
struct pr_seg {
	const uint8_t *p;
	size_t n;
};

/* An AUX queue: its AUXTRACE buffers, in the file's order, make one
 * trace of @size bytes (not copied: pr_decode reads it piece by piece).
 */
struct pr_queue {
	uint32_t idx;
	int32_t tid, cpu;
	struct pr_seg *seg;
	size_t nseg, capseg;
	size_t size;
	uint32_t nbuffers;
};

struct pr_task {
	uint32_t tid, pid;
	char comm[16];		/* the last COMM's name ("" if none) */
};

struct pr_switch {
	uint64_t time;
	uint32_t pid, tid;
	int out;
};

struct pr_cpu_sched {
	uint32_t cpu;
	struct pr_switch *sw;
	size_t nsw, cap;
	/* The time of the last record with a time from this CPU. */
	uint64_t last_time;
};

/* Record counters for the health report. */
struct pr_replay_counts {
	uint64_t records;
	uint64_t by_type[72];
	uint64_t lost;			/* records lost (PERF_RECORD_LOST) */
	uint64_t lost_events;		/* LOST records */
	uint64_t lost_samples;
	uint64_t aux_truncated, aux_partial, aux_collision;
	uint64_t mmaps, mmaps_unreadable;
	uint64_t ksymbols, bpf_loads, bpf_unloads, text_pokes;
	uint64_t fj_records, fj_ignored;
	uint64_t execs, forks;
};

struct pr_replay {
	struct pr_replay_opts opts;
	struct pr_perf perf;
	struct pr_pt_info info;
	/* Code: regions and flowjit images (pr_store.h). */
	struct pr_store store;
	/* Names of user JIT code from perf maps and jitdump (pr_jitmap.h). */
	struct pr_jitnames names;

	struct pr_queue *q;
	size_t nq;

	/* tid -> pid, open addressing (tid 0 marks a free slot). */
	struct pr_task *task;
	size_t ntask, captask;

	/* Sideband processing steps: hostile input must not take forever. */
	uint64_t work;

	struct pr_cpu_sched *cpu;
	size_t ncpu;

	struct pr_replay_counts cnt;

	/* The intel_pt attr's config (0 if none was found). */
	uint64_t pt_config;

	/* The last error. */
	char error[200];
};

/* Initialize @rp with @opts (copied). */
extern void pr_replay_init(struct pr_replay *rp,
			   const struct pr_replay_opts *opts);
extern void pr_replay_fini(struct pr_replay *rp);

/* Load a perf.data from @size bytes at @buf (kept), or from the file
 * @rp->opts.input if @buf is NULL.
 *
 * Returns zero on success, -1 with @rp->error set if the file is malformed
 * or has no Intel PT data.
 */
extern int pr_replay_load(struct pr_replay *rp, const uint8_t *buf,
			  size_t size);

/* The pid owning thread @tid (@tid itself if unknown). */
extern uint32_t pr_replay_pid(const struct pr_replay *rp, uint32_t tid);

/* The name of thread @tid from its last COMM (or its parent's at FORK),
 * or NULL if none was seen.
 */
extern const char *pr_replay_comm(const struct pr_replay *rp, uint32_t tid);

/* The task on @cpu at @time: 0 if it ran a task, -1 if idle/unknown. */
extern int pr_replay_on_cpu(const struct pr_replay *rp, uint32_t cpu,
			    uint64_t time, uint32_t *pid, uint32_t *tid);

#endif /* PR_REPLAY_H */
