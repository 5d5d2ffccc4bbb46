/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_decode: decoding the AUX queues of a loaded pr_replay session, a
 * queue at a time per thread of a pool, with libipt's instruction flow
 * decoder reading code through a callback that asks the store for the
 * bytes live at the decoder's current time.
 *
 * What decoding a queue gives (flow and call lines, the profile, error
 * counts) is a struct pr_qres; the results of a session, one per queue,
 * belong to the struct pr_decode that pr_decode_run() returns, until
 * pr_decode_free(). pr_report prints them; nothing else frees them.
 */
#ifndef PR_DECODE_H
#define PR_DECODE_H

#include "pr_image.h"
#include "pr_replay.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pt_insn_decoder;
struct pt_block_decoder;
struct pr_stream;
struct pr_export;
struct pr_elf;
struct pr_sym;

/* The longest name printed in a call line (with --lines, inlined
 * frames make names long).
 */
#define PR_NAME_MAX	512

/* A growable output buffer. */
struct pr_buf {
	char *p;
	size_t len, cap;
};

/* Errors by kind and region. */
struct pr_err_count {
	int code;
	char region[96];
	uint64_t count;
};

/* A profile entry. */
struct pr_prof {
	const void *key1;
	uint64_t key2;
	const char *name;	/* function or image name */
	const char *dso;
	uint64_t count;
};

/* A switch of the flowjit revision one thread runs at one image's
 * addresses: from @from (NULL: the first) to @to, whose first instruction
 * is the queue's @at-th (from 1), tied by @how (enum flowjit_tie_how);
 * @from ran @from_insns instructions since it became the thread's there.
 */
struct pr_rev_switch {
	int32_t tid;
	uint64_t start;
	const struct flowjit_rev *from, *to;
	uint64_t from_insns, at;
	int how;
};

/* The revision a thread runs now at one image's addresses. */
struct pr_rev_cur {
	int32_t tid;
	uint64_t start;
	const struct flowjit_rev *rev;
	uint64_t insns;		/* since it became the thread's there */
	int how;
};

/* What names an address range at one epoch (pr_decode.c, pr_qres_fn()):
 * the profile's key (@k1, @k2: NULL if unknown), function and image
 * names, the printed name @label (NULL: "[unknown]") and the printed
 * offset's base @delta, then @suffix (" [stale]" of a JIT name, or
 * NULL); with --lines, the ELF symbol @sym of @elf whose source lines
 * follow (pr_elf_lines()); the profile entry if made (of @prof_gen).
 */
struct pr_fn {
	uint64_t lo, hi;
	const void *k1;
	uint64_t k2;
	const char *name, *dso, *label, *suffix;
	size_t label_len;
	uint64_t delta;
	struct pr_elf *elf;
	const struct pr_sym *sym;
	struct pr_prof *prof;
	uint64_t prof_gen;
};

/* Pieces of a queue decoded in parallel but not merged yet, at most. */
#define PR_PIECES_AHEAD	16

/* Names a queue keeps (for the epoch and address space in effect). */
#define PR_FN_CACHE	16

/* A TSC packet of a piece: its offset in the queue, the TSC it gives. */
struct pr_tsc_at {
	uint64_t off, tsc;
};

/* The results and state of decoding one queue. */
struct pr_qres {
	struct pr_replay *rp;
	struct pr_queue *q;
	/* The decoder: instruction flow (--flow) or block. */
	struct pt_insn_decoder *dec;
	struct pt_block_decoder *bdec;

	/* Trace time, perf and TSC; the time code is looked up at. */
	uint64_t tsc, time, ltime;
	int have_time;
	/* Revision switches tied to the trace's resumes (libflowjit.h). */
	struct flowjit_tie tie;
	/* MTC: one period in TSC ticks (0: no MTC): the clock lags the real
	 * time by less, also at a TIP.PGE after time in the kernel.
	 */
	uint64_t mtc_ticks;
	/* The flowjit revision of the last instruction bytes read, at. */
	const struct flowjit_rev *rd_rev;
	uint64_t rd_ip;
	/* Revisions in use, switches, suspect instructions. */
	struct pr_rev_cur *cur;
	size_t ncur, capcur, last_cur;
	struct pr_rev_switch *sw;
	size_t nsw, capsw;
	uint64_t nsw_by[4];
	const struct flowjit_rev *sus_rev;
	uint64_t sus_time, sus_tsc;	/* the lookup time and clock it is for */
	int sus;
	uint64_t nsuspect, nsuspect_runs;
	/* Instructions the clock cannot order against a newer image. */
	const struct flowjit_rev *uo_rev;
	uint64_t uo_time;		/* the lookup time it is for */
	uint64_t uo_max;		/* the latest real time then */
	int uo_page, uo;		/* a newer page differs; so did the last */
	/* Without MTC: the piece's TSC packets by offset, and the TSC of
	 * the next piece's PSB+ (0: none), which bound the real time of
	 * what is decoded before them (pr_qres_uo_max()).
	 */
	struct pr_tsc_at *tscs;
	size_t ntscs, captscs;
	uint64_t next_piece_tsc;
	uint64_t nunordered, nunordered_runs;
	/* Of them, decoded with bytes only an open tie made live, then put
	 * in doubt (flowjit_tie_doubt()); since the tie or the last doubt:
	 * how many, the first one's IP, tid and place in @flow.
	 */
	uint64_t ndoubt, ndoubt_runs;
	uint64_t td_n, td_ip;
	int32_t td_tid;
	size_t td_off;
	int td_have;
	/* The task now: space (pid) and tid. */
	uint32_t space;
	int32_t tid;

	/* The code read cache (for reads no section can serve). */
	const struct pr_region *c_rgn;
	uint64_t c_lo, c_hi, c_time;
	int c_nosec;		/* no section could be made for it */

	/* Code as image sections (pr_image.h), unless @sections is 0:
	 * the images of the worker decoding it.
	 */
	int sections;
	struct pr_rimage_dec *rd;
	struct pt_image *image;	/* the decoder's now */
	uint64_t nsections, nimages;	/* made while decoding */

	/* The last IP the decoder failed to read. */
	uint64_t miss_ip;
	int miss;
	uint64_t last_ip;

	/* Lines not out yet (pr_decode.c, "struct pr_stream"), elements. */
	struct pr_buf flow, calls;
	struct pr_stream *stream;
	size_t index;		/* the queue's, in rp->q */
	int flow_started, calls_started;
	uint64_t nflow_el, ncalls_el;
	FILE *fspool, *cspool;	/* lines spooled until its turn */
	int finished;		/* all its lines are out or spooled */
	char flow_pre[16];	/* "%5d  " of @flow_pre_tid, its length */
	int32_t flow_pre_tid;

	/* Pending call/return: print at the next instruction. */
	int pend;		/* 0, 1 call, 2 return */
	uint64_t pend_ip;
	char pend_from[PR_NAME_MAX];
	size_t pend_from_len;
	char calls_pre[16];	/* "%5d " of @calls_pre_tid, its length */
	int32_t calls_pre_tid;
	int32_t pend_tid;
	const char *pend_fn;	/* the function of pend_ip */
	int depth;

	/* The call stacks for --chrome-trace/--folded, or NULL. */
	struct pr_export *x;

	/* Names (pr_fn) of the lookup time's epoch (and of the lookup time
	 * itself if @names_timed: a jitdump names code).
	 */
	uint64_t epoch;
	int have_epoch, names_timed;
	struct pr_fn fn[PR_FN_CACHE];
	unsigned int nfn, fn_last, fn_next;

	/* Profile: a hash table and the current function's range. */
	struct pr_prof *prof;
	size_t nprof, capprof;
	uint64_t prof_gen;
	uint64_t f_lo, f_hi, f_time;
	struct pr_prof *f_cur;
	int f_valid;

	/* The piece being decoded (its offset in the queue, a buffer for
	 * pieces over several AUXTRACE buffers); @cont: the piece before
	 * ended decoding, this one goes on; @stop_ip: where the next piece
	 * starts (if @stop_valid), to decode up to once the trace is out
	 * (@gap).
	 */
	size_t base;
	uint8_t *pbuf;
	size_t pcap;
	int cont, gap, stop_valid;
	uint64_t stop_ip;

	/* Instructions before this piece (errors name the last IP of the
	 * piece's); how the piece ended (pr_qres_decode_piece()).
	 */
	uint64_t piece_insns;
	int ended;

	/* Pieces decoded in parallel (pr_decode.c, pr_qres_split()): given
	 * out, merged; results waiting for their turn; all given out; a
	 * piece abandoned the queue (code lookups too costly).
	 */
	size_t pissued, pmerged;
	struct pr_qres *pdone[PR_PIECES_AHEAD];
	char pready[PR_PIECES_AHEAD];
	int split_done, abandoned;

	/* Where such a piece ends in the queue; what the queue has given
	 * back (pr_qres_release()) of the pieces merged: its pieces do not
	 * give back their own.
	 */
	size_t piece_end, released;

	/* Instructions since the trace offset was last seen to move. */
	uint64_t stuck, stuck_off;

	/* Counters. */
	uint64_t ninsn, nsync, noverflow, nerrors, ndisabled, nloops;
	struct pr_err_count *err;
	size_t nerr;
	int failed;		/* out of memory */
};

/* The decode results of a session. */
struct pr_decode {
	struct pr_replay *rp;
	/* Code as sections, shared by the decoders (unless @sections 0). */
	struct pr_rimage ri;
	int sections;
	/* One per AUX queue of @rp, in queue order. */
	struct pr_qres *q;
	size_t nq;
	/* Wall time decoding took. */
	double seconds;
	/* The flow and call lines were written while decoding (@streamed;
	 * then pr_report_print() prints only what follows them).
	 */
	struct pr_stream *stream;
	int streamed;
};

/* Decode every queue of @rp (loaded) with @rp->opts.jobs threads.  With
 * @rp->opts.stream the flow and call lines are written there while
 * decoding, in queue order; memory stays bounded however long the trace.
 *
 * Returns the results, or NULL if out of memory.
 */
extern struct pr_decode *pr_decode_run(struct pr_replay *rp);

/* Free @d and its results; @d may be NULL. */
extern void pr_decode_free(struct pr_decode *d);

/* Instructions of @d decoded from flowjit images that may be stale (a
 * newer image may have been lost: flowjit_store_suspect()).
 */
extern uint64_t pr_decode_suspect(const struct pr_decode *d);
extern uint64_t pr_decode_unordered(const struct pr_decode *d);

/* What went wrong, for an error code of struct pr_err_count. */
extern const char *pr_decode_err_name(int code);

#endif /* PR_DECODE_H */
