/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_export: the call/return flow of a decode for the viewers people
 * look at traces with.
 *
 * The decoder tells an exporter, one per AUX queue, what each thread ran:
 * instructions (pr_export_insns()), calls and returns (pr_export_call(),
 * pr_export_ret()) and where the trace broke (pr_export_error()).  The
 * exporter keeps a call stack per thread and writes
 *
 * - pr_export_chrome(): Chrome trace event JSON (Perfetto UI,
 *   chrome://tracing, speedscope): per thread one "X" (complete) slice per
 *   function activation, nested as the calls were, and an "i" (instant)
 *   event where the trace broke;
 * - pr_export_folded(): collapsed stacks, "a;b;c count" with the
 *   instructions executed with that stack (flamegraph.pl, speedscope).
 *
 * Stacks: the function running when a thread's trace starts (or restarts
 * after an error) is the bottom frame from then.  A return from the
 * bottom frame opens a frame for the function returned to, as the caller
 * of everything since that start (it was running all along); at most
 * PR_EXPORT_DEPTH_MAX such callers, then the stack restarts.  Calls deeper
 * than PR_EXPORT_DEPTH_MAX are counted, not kept.  An error or overflow
 * closes every open frame.  Frames still open when the trace ends close
 * there.
 *
 * Time: the decoder's perf time (ns) at each event; between two timing
 * packets it does not move, so a thread's events between two distinct
 * times are placed by instruction count, linearly; after its last time
 * change at its mean rate (or, with one time only, the mean rate of all
 * threads).  If a thread has no time at all, or no thread has two, the
 * whole file counts instructions instead (1 us = 1 instruction) and says
 * so in "otherData".
 */
#ifndef PR_EXPORT_H
#define PR_EXPORT_H

#include <stdint.h>
#include <stdio.h>

/* Frames kept per thread (calls and callers found by returns). */
#define PR_EXPORT_DEPTH_MAX	1024

struct pr_export;

/* What pr_export_alloc() records. */
enum {
	PR_EXPORT_SLICES	= 1 << 0,	/* for pr_export_chrome() */
	PR_EXPORT_STACKS	= 1 << 1,	/* for pr_export_folded() */
};

/* Returns a new exporter recording @what (PR_EXPORT_*), or NULL if out of
 * memory.
 */
extern struct pr_export *pr_export_alloc(unsigned int what);

/* Free @x; @x may be NULL. */
extern void pr_export_free(struct pr_export *x);

/* Thread @tid ran @n instructions at perf time @time (0: no timing) in the
 * function named @fn (NULL if unknown; it names the bottom frame).
 */
extern void pr_export_insns(struct pr_export *x, int32_t tid, uint64_t time,
			    const char *fn, uint64_t n);

/* Thread @tid called from function @from into function @to; @time as
 * above.  The instructions given after this are @to's.
 */
extern void pr_export_call(struct pr_export *x, int32_t tid, uint64_t time,
			   const char *from, const char *to);

/* Thread @tid returned from function @from to function @to. */
extern void pr_export_ret(struct pr_export *x, int32_t tid, uint64_t time,
			  const char *from, const char *to);

/* Thread @tid's trace broke (@what: a decode error, an overflow): its
 * frames close and an instant event says @what.
 */
extern void pr_export_error(struct pr_export *x, int32_t tid, uint64_t time,
			    const char *what);

/* What a writer says about a thread. */
struct pr_export_task {
	uint32_t pid;
	const char *comm;	/* NULL if unknown */
};

/* Fills @task for thread @tid; returns zero, or -1 if unknown. */
typedef int (*pr_export_task_fn)(void *ctx, int32_t tid,
				 struct pr_export_task *task);

/* Counters of all exporters, for the metadata and the tests. */
struct pr_export_stats {
	uint64_t threads, slices, errors;
	uint64_t callers;	/* frames opened by returns from the bottom */
	uint64_t restarts;	/* stacks restarted: too many such callers */
	uint64_t deep;		/* calls beyond PR_EXPORT_DEPTH_MAX */
	int by_insns;		/* time is instruction counts */
	double ns_per_insn;	/* the mean rate of threads with a rate */
	int failed;		/* out of memory: some events missing */
};

/* Add up the counters of the @n exporters @x into @st (closes open
 * frames, like the writers).
 */
extern void pr_export_stats(struct pr_export *const *x, size_t n,
			    struct pr_export_stats *st);

/* Write the slices of the @n exporters @x (recorded with
 * PR_EXPORT_SLICES) to @out as Chrome trace event JSON; @task (may be
 * NULL) names threads; @input goes into the metadata.
 *
 * Returns zero on success, -1 if out of memory or writing failed.
 */
extern int pr_export_chrome(FILE *out, struct pr_export *const *x, size_t n,
			    pr_export_task_fn task, void *ctx,
			    const char *input);

/* Write the stacks of the @n exporters @x (PR_EXPORT_STACKS) to @out as
 * collapsed stacks, one "a;b;c count" line per stack, sorted.
 *
 * Returns zero on success, -1 if out of memory or writing failed.
 */
extern int pr_export_folded(FILE *out, struct pr_export *const *x, size_t n);

/* Write @s to @out as a JSON string: quotes, backslashes and control
 * characters escaped, bytes that are not UTF-8 as U+FFFD.
 */
extern void pr_export_json_str(FILE *out, const char *s);

#endif /* PR_EXPORT_H */
