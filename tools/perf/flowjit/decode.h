/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf and flowjit: code bytes of runtime code images for perf's Intel PT
 * decoder (util/intel-pt.c). See tools/perf/flowjit/flowjit.rst.
 */
#ifndef __PERF_FLOWJIT_DECODE_H
#define __PERF_FLOWJIT_DECODE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/flowjit.h>
#include <linux/types.h>

union perf_event;
struct perf_sample;
struct perf_session;
struct intel_pt_insn;
struct flowjit_pt;
struct flowjit_pt_queue;
struct flowjit_store;

/* flowjit_pt__walk(): no image covers the address reached */
#define FLOWJIT_WALK_NONE	1

/*
 * The images of @session's flowjit records, or NULL when the perf config
 * says intel-pt.flowjit = false (or out of memory).
 */
struct flowjit_pt *flowjit_pt__new(struct perf_session *session);

/*
 * Decode with the records of @st (taken over, freed with the result),
 * without a session (user JIT code gets no symbols), as from a pipe:
 * flowjit_pt__early_event() adds records and the windows of lost ones.
 * For tests.
 */
struct flowjit_pt *flowjit_pt__new_store(struct flowjit_store *st);

/*
 * Prints the counts (flowjit_pt__fprintf_stats()) under -v, and always
 * when records were dropped or instructions were decoded from suspect
 * revisions; then frees @fp. Its queues must be deleted first.
 */
void flowjit_pt__delete(struct flowjit_pt *fp);

/*
 * One trace decoded with @fp's images (an Intel PT queue): the thread it
 * is of, and the ties of fault images to its trace (libflowjit.h,
 * "Revision switches tied to trace events"). Returns NULL for a NULL
 * @fp or out of memory.
 */
struct flowjit_pt_queue *flowjit_pt__queue_new(struct flowjit_pt *fp);
/* Count what the queue decoded into its flowjit_pt, and free it; accepts NULL. */
void flowjit_pt__queue_delete(struct flowjit_pt_queue *q);

/*
 * Tracing of @q's trace resumed (TIP.PGE; never an OVF's FUP) at @ip,
 * the decoder's clock at perf time @time and the real time at most
 * @time_max (U64_MAX if unknown), in thread @tid of process @pid (-1:
 * not known), after the decoder decoded @insns instructions of the queue
 * in all. Ties the thread's next fault image if it was taken at @ip.
 * Returns true if one was tied.
 */
bool flowjit_pt__resume(struct flowjit_pt_queue *q, int pid, int tid, u64 ip, u64 time,
			u64 time_max, u64 insns);

/*
 * Tracing of @q's trace stopped (TIP.PGD) with the decoder's clock at
 * perf time @time: a fault tied before whose time the clock passed there
 * cannot be the fault of a later TIP.PGE (libflowjit.h, open ties). Where
 * a later TIP.PGE at a tied fault's IP could be the fault's too, what was
 * decoded since the tie from bytes only it made live is counted as in
 * doubt.
 */
void flowjit_pt__leave(struct flowjit_pt_queue *q, u64 time);

/*
 * The decoder of @q's trace failed (it goes on at the next PSB): the
 * bytes of an open tie may be why, and the TIP.PGE of its fault may be in
 * what it skips, so what was decoded since from bytes only open ties made
 * live is counted as in doubt.
 */
void flowjit_pt__error(struct flowjit_pt_queue *q);

/*
 * As util/intel-pt.c's walk_insn callback: walk the instructions from
 * *@ip in the images of process @pid (or the kernel's) live at the time
 * the trace @q is at (the decoder's clock, perf time @time, raised by
 * the queue's ties), adding to *@insn_cnt, up to and including a branch,
 * to @to_ip or @max_insn_cnt instructions. @tid is the queue's thread.
 * With @late, code with no image live then is read from the first image
 * made after it. Returns 0 when done, FLOWJIT_WALK_NONE when no image
 * covers *@ip (*@ip and *@insn_cnt tell how far it got), or -EINVAL for
 * bytes that are no instruction.
 *
 * Counts the instructions by revision and by how the revision answered
 * (time, event or late; libflowjit.h flowjit_tie_how()), the switches
 * from one revision to another over the same range of the same thread,
 * and the instructions decoded from suspect revisions
 * (flowjit_store_suspect() at the time looked up at). The real time of
 * the instructions walked is at most @clock_max (the clock plus one MTC
 * period: the next MTC comes by then; U64_MAX: no MTC, then the
 * thread's next exec fault bounds it, or nothing does): a user JIT
 * instruction whose bytes a newer image live by then changes is counted
 * as unordered (flowjit_store_unordered()), since the trace cannot tell
 * which revision a thread that did not take the fault ran.
 */
int flowjit_pt__walk(struct flowjit_pt_queue *q, int pid, int tid, bool kernel, u64 time,
		     u64 clock_max, bool late, struct intel_pt_insn *insn, u64 *insn_cnt,
		     u64 *ip, u64 to_ip, u64 max_insn_cnt);

/*
 * A flowjit record delivered in time order, after the decoders ran up to
 * its time: names user JIT code, and sets [*@start, *@end) of address
 * space *@asid to the range of an image that becomes live now (else
 * *@start == *@end), for perf to drop cached blocks there.
 */
int flowjit_pt__event(struct flowjit_pt *fp, union perf_event *event,
		      struct perf_sample *sample, u64 *asid, u64 *start, u64 *end);

/*
 * Any record delivered in time order, before the decoders run up to its
 * time. Where the store was not filled beforehand (a pipe): a flowjit
 * record is added to it, and a PERF_RECORD_LOST gives it the window its
 * records were lost in (flowjit_store_add_lost(): from the previous
 * record of the same CPU on).
 */
int flowjit_pt__early_event(struct flowjit_pt *fp, union perf_event *event,
			    struct perf_sample *sample);

/* What the queues of a flowjit_pt decoded (enum flowjit_tie_how index) */
struct flowjit_pt_stats {
	u64	insns[4];	/* by how the revision answered */
	u64	switches[4];	/* to another revision, by how the new one answered */
	u64	suspect;	/* instructions from suspect revisions */
	u64	unordered;	/* user JIT instructions a newer image may change */
	u64	in_doubt;	/* decoded from bytes of a tie found in doubt */
	u64	revs;		/* revisions decoded from */
	u64	resumes;	/* flowjit_pt__resume() with a thread */
	u64	tied;		/* of them, faults tied */
};

/* Fill @s with what deleted queues of @fp decoded. */
void flowjit_pt__stats(const struct flowjit_pt *fp, struct flowjit_pt_stats *s);

/*
 * Print to @out the store's line (flowjit_store__fprintf_stats()), the
 * decoder's line, a line for each of the first @revs revisions decoded
 * from by address (0: none, -1: all) and, if instructions were decoded
 * from suspect revisions, a warning. Returns the characters printed.
 */
size_t flowjit_pt__fprintf_stats(const struct flowjit_pt *fp, int revs, FILE *out);

#endif /* __PERF_FLOWJIT_DECODE_H */
