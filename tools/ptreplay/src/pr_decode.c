// SPDX-License-Identifier: GPL-2.0
/*
 * pr_decode: decoding the AUX queues of a pr_replay session in parallel
 * (see pr_decode.h).
 */
#define _GNU_SOURCE
#include "pr_decode.h"
#include "pr_export.h"
#include "pr_insn.h"
#include "pr_sym.h"

#include <intel-pt.h>

#include <inttypes.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

static int pr_buf_reserve(struct pr_buf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 1 << 16;

	while (cap < b->len + n)
		cap *= 2;
	char *p = realloc(b->p, cap);

	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

static void pr_buf_printf(struct pr_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pr_buf_printf(struct pr_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (pr_buf_reserve(b, 256) < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (pr_buf_reserve(b, (size_t)n + 1) < 0)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* The hex digits of each byte value, two characters each. */
static const char pr_hex2[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* "%16lx" of @ip at @p. */
static void pr_hex16(char *p, uint64_t ip)
{
	int n = ip ? (64 - __builtin_clzll(ip) + 3) / 4 : 1;
	char *d = p + 16;

	memset(p, ' ', (size_t)(16 - n));
	for (; n >= 2; n -= 2, ip >>= 8) {
		d -= 2;
		memcpy(d, pr_hex2 + 2 * (ip & 0xff), 2);
	}
	if (n)
		d[-1] = pr_hex2[2 * (ip & 0xf) + 1];
}

/* "%5d  %16lx\n" as perf script -F tid,ip prints it, fast: the tid's
 * part is made when the tid changes (in @pre, its length in pre[15], for
 * *@pre_tid).
 */
static void pr_buf_flow(struct pr_buf *b, int32_t tid, uint64_t ip, int json,
			int first, char *pre, int32_t *pre_tid)
{
	char *p;

	if (pr_buf_reserve(b, 64) < 0)
		return;
	if (json) {
		b->len += (size_t)sprintf(b->p + b->len,
					  "%s[%d,\"0x%" PRIx64 "\"]",
					  first ? "" : ",\n", tid, ip);
		return;
	}
	if (tid != *pre_tid || !pre[15]) {
		char tmp[16];
		int n = snprintf(tmp, sizeof(tmp), "%5d  ", tid);

		/* at most 11 digits and a sign; pre[15]: the length */
		memcpy(pre, tmp, (size_t)n);
		pre[15] = (char)n;
		*pre_tid = tid;
	}
	p = b->p + b->len;
	memcpy(p, pre, 16);
	p += pre[15];
	pr_hex16(p, ip);
	p[16] = '\n';
	b->len = (size_t)(p + 17 - b->p);
}

/* Output written while decoding (opts.stream, the command line's stdout):
 * flow and call lines go out in queue order as they are made.  A queue
 * holds at most PR_STREAM_CHUNK bytes of each; then, if it is its turn
 * (every queue before it is done) it writes them out, else it appends
 * them to spool files of its own (tmpfile()) that go out when its turn
 * comes: workers never wait for each other, and what waits is on disk.
 * With both --flow and --calls the call lines, in queue order, wait in a
 * spool of the stream until the flow is out.  What is written is what
 * pr_report_print() would print for them.
 */
struct pr_stream {
	FILE *out;
	FILE *spool;		/* NULL: call lines kept in memory */
	pthread_mutex_t lock;
	size_t head;		/* the queue whose lines go out now */
	struct pr_decode *d;
	int flow_any, calls_any;	/* an element of each is out */
};

/* Lines a queue holds before it writes them out or spools them. */
#define PR_STREAM_CHUNK		(1u << 20)

/* Append @b to @f: the JSON separator first if @first and *@any. */
static void pr_stream_put(const struct pr_qres *r, FILE *f,
			  const struct pr_buf *b, int *started, int *any)
{
	if (!b->len)
		return;
	if (!*started) {
		if (r->rp->opts.json && *any)
			fputs(",\n", f);
		*started = 1;
		*any = 1;
	}
	fwrite(b->p, 1, b->len, f);
}

/* Copy @from (a spool, from its start) to the end of @to; close it. */
static void pr_spool_copy(FILE *from, FILE *to)
{
	char buf[1 << 16];
	size_t n;

	if (!from)
		return;
	rewind(from);
	while ((n = fread(buf, 1, sizeof(buf), from)))
		fwrite(buf, 1, n, to);
	fclose(from);
}

/* Append @b to the spool *@f (made on first use).  Returns 0, -1 if no
 * spool can be made (then @b is kept).
 */
static int pr_spool_put(FILE **f, struct pr_buf *b)
{
	if (!b->len)
		return 0;
	if (!*f)
		*f = tmpfile();
	if (!*f)
		return -1;
	fwrite(b->p, 1, b->len, *f);
	b->len = 0;
	return 0;
}

/* Where call lines go in their turn: the stream's spool while the flow
 * goes out, else the output.  NULL: they stay in memory.
 */
static FILE *pr_stream_calls(const struct pr_stream *st,
			     const struct pr_replay_opts *o)
{
	if (!(o->outputs & PR_OUT_FLOW))
		return st->out;
	return st->spool;
}

/* Write @r's lines (spooled ones first) in its turn; under st->lock. */
static void pr_stream_turn(struct pr_stream *st, struct pr_qres *r)
{
	FILE *calls = pr_stream_calls(st, &r->rp->opts);
	int json = r->rp->opts.json;

	if (r->fspool) {
		if (!r->flow_started && json && st->flow_any)
			fputs(",\n", st->out);
		r->flow_started = st->flow_any = 1;
		pr_spool_copy(r->fspool, st->out);
		r->fspool = NULL;
	}
	pr_stream_put(r, st->out, &r->flow, &r->flow_started, &st->flow_any);
	r->flow.len = 0;
	if (!calls)
		return;
	if (r->cspool) {
		if (!r->calls_started && json && st->calls_any)
			fputs(",\n", calls);
		r->calls_started = st->calls_any = 1;
		pr_spool_copy(r->cspool, calls);
		r->cspool = NULL;
	}
	pr_stream_put(r, calls, &r->calls, &r->calls_started, &st->calls_any);
	r->calls.len = 0;
}

/* Write @r's lines out if it is its turn, else spool them; with @done
 * the queue is done: pass the turn on over the queues done.
 */
static void pr_qres_flush(struct pr_qres *r, int done)
{
	struct pr_stream *st = r->stream;

	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	if (st->head == r->index) {
		pr_stream_turn(st, r);
	} else {
		pthread_mutex_unlock(&st->lock);
		/* lines kept in memory if no spool can be made */
		(void)pr_spool_put(&r->fspool, &r->flow);
		if (pr_stream_calls(st, &r->rp->opts))
			(void)pr_spool_put(&r->cspool, &r->calls);
		pthread_mutex_lock(&st->lock);
		if (st->head == r->index)
			pr_stream_turn(st, r);
	}
	if (done) {
		r->finished = 1;
		while (st->head < st->d->nq && st->d->q[st->head].finished) {
			st->head += 1;
			if (st->head < st->d->nq)
				pr_stream_turn(st, &st->d->q[st->head]);
		}
	}
	pthread_mutex_unlock(&st->lock);
}

static void pr_qres_doubt(struct pr_qres *r);

/* Flow lines an open tie may still put in doubt stay in memory (their
 * mark goes before them, pr_qres_doubt()) up to this size; beyond, the
 * tie is taken as in doubt.
 */
#define PR_DOUBT_HOLD		(64u << 20)

/* Does the flow show trace error lines (-e, not JSON)? */
static int pr_qres_flow_marks(const struct pr_qres *r)
{
	const struct pr_replay_opts *o = &r->rp->opts;

	return o->flow_errors && (o->outputs & PR_OUT_FLOW) && !o->json;
}

/* Too many lines held: write them out or spool them. */
static inline void pr_qres_full(struct pr_qres *r)
{
	if (!r->stream || (r->flow.len < PR_STREAM_CHUNK &&
			   r->calls.len < PR_STREAM_CHUNK))
		return;
	if (r->td_have && pr_qres_flow_marks(r)) {
		if (r->flow.len < PR_DOUBT_HOLD)
			return;
		pr_qres_doubt(r);
	}
	pr_qres_flush(r, 0);
}

/* Start the output on @out: what comes before the first flow or call
 * line.  Returns the stream, or NULL (then nothing was written and the
 * lines stay in memory for pr_report_print()).
 */
static struct pr_stream *pr_stream_open(struct pr_decode *d, FILE *out)
{
	const struct pr_replay_opts *o = &d->rp->opts;
	struct pr_stream *st;

	if (!out || !(o->outputs & (PR_OUT_FLOW | PR_OUT_CALLS)))
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->out = out;
	st->d = d;
	if ((o->outputs & PR_OUT_FLOW) && (o->outputs & PR_OUT_CALLS))
		st->spool = tmpfile();
	pthread_mutex_init(&st->lock, NULL);
	if (o->json)
		fprintf(out, "{\"%s\":[\n", o->outputs & PR_OUT_FLOW ? "flow" :
			"calls");
	return st;
}

/* Finish the flow and call lines of @d: the spool's, or those kept. */
static void pr_stream_close(struct pr_decode *d)
{
	struct pr_stream *st = d->stream;
	const struct pr_replay_opts *o = &d->rp->opts;
	size_t i;

	if (!st)
		return;
	if (o->json)
		fputs("]", st->out);
	if ((o->outputs & PR_OUT_FLOW) && (o->outputs & PR_OUT_CALLS)) {
		if (o->json)
			fputs(",\n\"calls\":[\n", st->out);
		if (st->spool) {
			pr_spool_copy(st->spool, st->out);
		} else {
			for (i = 0; i < d->nq; ++i) {
				struct pr_qres *r = &d->q[i];

				pr_stream_put(r, st->out, &r->calls,
					      &r->calls_started,
					      &st->calls_any);
				r->calls.len = 0;
			}
		}
		if (o->json)
			fputs("]", st->out);
	}
	pthread_mutex_destroy(&st->lock);
	free(st);
	d->stream = NULL;
	d->streamed = 1;
}

/* Append @n bytes at @p to @b (room reserved). */
static char *pr_put(char *d, const char *p, size_t n)
{
	memcpy(d, p, n);
	return d + n;
}

/* @r's pending call line, "%5d %16lx %*s%s %s -> %s\n" with @indent,
 * @kind, its from and @to (@lt bytes), fast.
 */
static void pr_buf_call(struct pr_qres *r, int indent, const char *kind,
			const char *to, size_t lt)
{
	struct pr_buf *b = &r->calls;
	size_t lf = r->pend_from_len;
	char *d;

	if (r->pend_tid != r->calls_pre_tid || !r->calls_pre[15]) {
		char tmp[16];
		int n = snprintf(tmp, sizeof(tmp), "%5d ", r->pend_tid);

		memcpy(r->calls_pre, tmp, (size_t)n);
		r->calls_pre[15] = (char)n;
		r->calls_pre_tid = r->pend_tid;
	}
	if (pr_buf_reserve(b, 16 + 16 + 1 + (size_t)indent + 6 + 1 + lf +
			   4 + lt + 1) < 0)
		return;
	d = b->p + b->len;
	memcpy(d, r->calls_pre, 16);
	d += r->calls_pre[15];
	pr_hex16(d, r->pend_ip);
	d += 16;
	*d++ = ' ';
	memset(d, ' ', (size_t)indent);
	d += indent;
	d = pr_put(d, kind, 6);
	*d++ = ' ';
	d = pr_put(d, r->pend_from, lf);
	d = pr_put(d, " -> ", 4);
	d = pr_put(d, to, lt);
	*d++ = '\n';
	b->len = (size_t)(d - b->p);
}

/* Our own error kind: decoding made no trace progress. */
#define PR_ERR_LOOP	(-1000)
/* ... or the code store lookups of a queue cost too much. */
#define PR_ERR_COMPLEX	(-1001)
#define PR_DECODE_WORK_MAX	2000000000ULL

const char *pr_decode_err_name(int code)
{
	if (code == PR_ERR_LOOP)
		return "no trace progress (endless loop)";
	if (code == PR_ERR_COMPLEX)
		return "code lookups too costly (hostile input?): queue abandoned";
	return pt_errstr(pt_errcode(code));
}

static int pr_read_mem(uint8_t *buffer, size_t size,
		       const struct pt_asid *asid, uint64_t ip, void *context);

/* Give the decoder the image of its space and lookup time's epoch
 * (pr_image.h, "pr_rimage"); without one it reads through the callback.
 */
static void pr_qres_image(struct pr_qres *r)
{
	struct pt_image *image;
	uint64_t epoch;

	if (!r->sections || (!r->dec && !r->bdec))
		return;
	epoch = r->have_epoch ? r->epoch : pr_store_epoch(&r->rp->store,
							    r->ltime);
	image = pr_rimage_dec_select(r->rd, r->space, epoch);
	if (image == r->image)
		return;
	/* NULL: the decoder's own image, only the callback */
	if (image)
		pt_image_set_callback(image, pr_read_mem, r);
	r->image = image;
	if (r->bdec)
		pt_blk_set_image(r->bdec, image);
	else
		pt_insn_set_image(r->dec, image);
}

/* Lookups answer differently now (another epoch or address space):
 * forget the answers kept.
 */
static void pr_qres_names(struct pr_qres *r)
{
	r->c_rgn = NULL;
	r->f_valid = 0;
	r->nfn = 0;
}

/* The lookup time moved: into another epoch (or another jitdump name)? */
static void pr_qres_epoch(struct pr_qres *r)
{
	uint64_t epoch = pr_store_epoch(&r->rp->store, r->ltime);

	/* a jitdump's names change with time, not only with epochs */
	if (r->names_timed)
		pr_qres_names(r);
	if (r->have_epoch && epoch == r->epoch)
		return;
	r->epoch = epoch;
	r->have_epoch = 1;
	pr_qres_names(r);
	pr_qres_image(r);
}

/* Per-CPU queues: the task on the CPU at perf time @time.  Called when
 * tracing is (re-)enabled (a switch-in is a TIP.PGE after a TSC) and at
 * synchronization: the decoder's time runs ahead of the instructions
 * still being decoded, so it must not move the task between.
 */
static void pr_qres_task(struct pr_qres *r, uint64_t time)
{
	uint32_t pid, tid;

	if (r->q->tid >= 0 || r->q->cpu < 0)
		return;
	if (pr_replay_on_cpu(r->rp, (uint32_t)r->q->cpu, time, &pid,
			     &tid) != 0) {
		pid = 0;
		tid = (uint32_t)-1;
	}
	if (r->space != pid)
		pr_qres_names(r);
	r->space = pid;
	r->tid = (int32_t)tid;
	r->f_valid = 0;
	pr_qres_image(r);
}

/* The thread whose exec faults the trace shows now (libflowjit.h,
 * "Revision switches tied to trace events"): its address space at the
 * lookup time (an exec gives a new one) and tid.
 */
static void pr_qres_tie_thread(struct pr_qres *r)
{
	const struct flowjit_store *fj = r->rp->store.fj;
	uint64_t asid;

	if (!fj || r->tid < 0 || !r->space ||
	    flowjit_store_pid_asid(fj, r->space, r->ltime, &asid)) {
		r->tie.thread = false;
		return;
	}
	flowjit_tie_thread(&r->tie, asid, (uint32_t)r->tid);
}

/* MTC packets the hardware may drop in a row (Intel SDM Vol. 3C, "MTC
 * Packet": not more than 256), as perf's decoder of the series takes it.
 */
#define PR_MTC_LOST_MAX		256

/* The latest real time the clock allows: MTC packets go out each time
 * the crystal clock bit toggles, also while the thread is in the kernel
 * (their only conditions are MTCEn and TriggerEn), and up to 256 may be
 * dropped: the clock lags by less than 257 periods. With TSC packets
 * only nothing bounds it.
 */
static uint64_t pr_qres_time_max(const struct pr_qres *r)
{
	if (!r->mtc_ticks || !r->tsc)
		return UINT64_MAX;
	return pr_tsc_to_perf(&r->rp->info, r->tsc + (PR_MTC_LOST_MAX + 1) *
			      r->mtc_ticks) + 1;
}

/* An overflow lost packets: a fault's TIP.PGE may be among them. */
static void pr_qres_overflow(struct pr_qres *r)
{
	if (!r->rp->store.fj || r->rp->opts.no_tie)
		return;
	flowjit_tie_overflow(&r->tie, pr_qres_time_max(r));
	r->sus_rev = NULL;
}

/* An open tie was put in doubt (flowjit_tie_doubt()): the instructions
 * decoded since the ties were made (or the last doubt) from bytes only
 * they made live are unordered. A trace error line goes before the first
 * of them.
 */
static void pr_qres_doubt(struct pr_qres *r)
{
	char line[256];
	int n;

	if (!r->td_have)
		return;
	r->nunordered += r->td_n;
	r->nunordered_runs += 1;
	r->ndoubt += r->td_n;
	r->ndoubt_runs += 1;
	n = snprintf(line, sizeof(line), " instruction trace error type 1 "
		     "tid %d ip 0x%" PRIx64 " code 1: flowjit image may be "
		     "newer than the code that ran (another resume at its "
		     "fault's IP may be the fault's)\n", r->td_tid, r->td_ip);
	if (pr_qres_flow_marks(r) && n > 0 && (size_t)n < sizeof(line) &&
	    r->td_off <= r->flow.len &&
	    pr_buf_reserve(&r->flow, (size_t)n) == 0) {
		memmove(r->flow.p + r->td_off + n, r->flow.p + r->td_off,
			r->flow.len - r->td_off);
		memcpy(r->flow.p + r->td_off, line, (size_t)n);
		r->flow.len += (size_t)n;
	}
	r->td_have = 0;
	r->td_n = 0;
}

/* After a call that may close open ties or put them in doubt: mark what
 * waited for them, or forget it once none is open.
 */
static void pr_qres_tie_check(struct pr_qres *r)
{
	if (flowjit_tie_doubt(&r->tie))
		pr_qres_doubt(r);
	if (!r->tie.nopen) {
		r->td_have = 0;
		r->td_n = 0;
	}
}

/* Tracing resumed at @ip (TIP.PGE): an exec fault's image there is live
 * from now on even if the clock, the last timing packet, is older.
 */
static void pr_qres_resume(struct pr_qres *r, uint64_t ip)
{
	const struct flowjit_rev *f;

	if (!r->rp->store.fj || ip >> 63 || r->rp->opts.no_tie)
		return;
	pr_qres_tie_thread(r);
	f = flowjit_tie_resume(&r->tie, ip, r->time, pr_qres_time_max(r),
			       r->ninsn);
	pr_qres_tie_check(r);
	if (!f)
		return;
	r->ltime = flowjit_tie_time(&r->tie, r->time);
	r->sus_rev = NULL;
	pr_qres_epoch(r);
}

/* Update the trace time and the current task from the decoder. */
static void pr_qres_time(struct pr_qres *r)
{
	uint64_t tsc;
	int status;

	status = r->bdec ? pt_blk_time(r->bdec, &tsc, NULL, NULL) :
			   pt_insn_time(r->dec, &tsc, NULL, NULL);
	if (status < 0 && status != -pte_no_time)
		return;
	if (status < 0)
		tsc = 0;
	if (r->have_time && tsc == r->tsc)
		return;
	r->tsc = tsc;
	r->have_time = 1;
	r->time = tsc ? pr_tsc_to_perf(&r->rp->info, tsc) : 0;
	r->ltime = flowjit_tie_time(&r->tie, r->time);
	/* no task known yet on this CPU: maybe now */
	if (r->q->tid < 0 && r->q->cpu >= 0 && r->tid < 0)
		pr_qres_task(r, r->time);
	pr_qres_epoch(r);
}

/* libipt's read callback: the bytes live at the decoder's current time. */
static int pr_read_mem(uint8_t *buffer, size_t size,
		       const struct pt_asid *asid, uint64_t ip, void *context)
{
	struct pr_qres *r = context;
	const struct pr_region *rgn;
	uint32_t space;
	size_t n;

	(void)asid;
	pr_qres_time(r);
	space = ip >> 63 ? 0 : r->space;

	rgn = r->c_rgn;
	if (rgn && (!r->sections || r->c_nosec) && ip >= r->c_lo &&
	    ip < r->c_hi && size <= r->c_hi - ip && rgn->space == space) {
		memcpy(buffer, rgn->bytes + (ip - rgn->start), size);
		r->rd_ip = ip;
		r->rd_rev = rgn->kind == PR_RGN_FLOWJIT ? rgn->rev : NULL;
		return (int)size;
	}

	n = pr_store_read(&r->rp->store, space, ip, r->ltime, buffer, size);
	if (!n) {
		r->miss = 1;
		r->miss_ip = ip;
		return -pte_nomap;
	}
	/* cache the region for the next reads */
	{
		uint64_t lo, hi;

		rgn = pr_store_lookup(&r->rp->store, space, ip, r->ltime, &lo,
				      &hi);
		r->rd_ip = ip;
		r->rd_rev = rgn && rgn->kind == PR_RGN_FLOWJIT ? rgn->rev :
			    NULL;
		if (rgn && rgn->bytes) {
			uint64_t bend = rgn->start + rgn->nbytes;

			r->c_rgn = rgn;
			r->c_lo = lo;
			r->c_hi = hi < bend ? hi : bend;
			/* next time libipt reads it from a section; if
			 * none can be made, from this cache
			 */
			r->c_nosec = !r->sections || !r->rd->cur ||
				     pr_rimage_dec_add(r->rd, rgn, lo, hi) < 0;
		}
	}
	return (int)n;
}

static const char pr_unknown[] = "[unknown]";

/* --lines: @fn names function @s of @elf: its name becomes "name
 * (file:line)" where it is declared, and its text gets the lines of the
 * address (pr_fn_text()).
 */
static void pr_qres_fn_lines(struct pr_fn *fn, struct pr_elf *elf,
			     const struct pr_sym *s)
{
	char tmp[PR_NAME_MAX];

	tmp[0] = 0;
	fn->elf = elf;
	fn->sym = s;
	fn->name = pr_elf_lines(elf, s->addr, s, tmp, sizeof(tmp));
}

/* What names @ip at the lookup time into @fn: pr_elf_sym()'s function,
 * else the region's image, with the address range the answer holds for
 * (at this epoch).
 */
static void pr_qres_fn_make(struct pr_qres *r, uint64_t ip, struct pr_fn *fn)
{
	const struct pr_region *rgn;
	uint32_t space = ip >> 63 ? 0 : r->space;
	const struct pr_jitsym *js;
	const char *base;
	int stale;

	memset(fn, 0, sizeof(*fn));
	fn->lo = ip;
	fn->hi = ip + 1;
	fn->name = fn->dso = pr_unknown;
	rgn = pr_store_name(&r->rp->store, space, ip, r->ltime);
	if (!rgn)
		return;
	fn->dso = fn->name = rgn->name ? rgn->name : pr_unknown;
	/* user JIT code its runtime names (perf map, jitdump) */
	if (space && (js = pr_jitnames_find(&r->rp->names, &r->rp->store, rgn,
					    space, ip, r->ltime, &stale))) {
		fn->k1 = js;
		fn->k2 = (uint64_t)stale;
		fn->name = stale ? js->stale : js->name;
		fn->label = js->name;
		fn->label_len = strlen(js->name);
		fn->suffix = stale ? " [stale]" : NULL;
		fn->delta = js->start;
		fn->lo = js->start > rgn->start ? js->start : rgn->start;
		fn->hi = js->end < rgn->end ? js->end : rgn->end;
		if (ip < fn->lo || ip >= fn->hi) {
			fn->lo = ip;
			fn->hi = ip + 1;
		}
		return;
	}
	fn->k1 = rgn->name;
	fn->k2 = rgn->start;
	base = rgn->name ? rgn->name : "?";
	if (rgn->kind == PR_RGN_FILE && strrchr(base, '/'))
		base = strrchr(base, '/') + 1;
	fn->label = base;
	fn->label_len = strlen(base);
	fn->delta = rgn->start - rgn->pgoff;
	fn->lo = rgn->start;
	fn->hi = rgn->end;
	if (rgn->elf) {
		uint64_t vaddr, next;
		const struct pr_sym *s = NULL;

		if (pr_elf_off_to_vaddr(rgn->elf, ip - rgn->start + rgn->pgoff,
					&vaddr) < 0) {
			next = ip + 1;
		} else {
			s = pr_elf_sym(rgn->elf, vaddr);
			/* pr_elf_sym() answers the same up to the next */
			next = ip + (pr_elf_sym_next(rgn->elf, vaddr) - vaddr);
			if (next <= ip)
				next = UINT64_MAX;
		}
		if (next > rgn->end)
			next = rgn->end;
		/* no symbol: the image's name, up to the next symbol */
		fn->lo = ip;
		fn->hi = next;
		if (s) {
			fn->k1 = rgn->elf;
			fn->k2 = s->addr;
			fn->name = fn->label = s->name;
			fn->label_len = strlen(s->name);
			fn->lo = fn->delta = ip - (vaddr - s->addr);
			if (s->size && fn->lo + s->size < next)
				fn->hi = fn->lo + s->size;
			else if (!s->size)
				fn->hi = ip + 1;
			if (r->rp->opts.lines)
				pr_qres_fn_lines(fn, rgn->elf, s);
		}
	}
}

/* What names @ip now: from the last PR_FN_CACHE answers of this epoch
 * and address space, or made.
 */
static struct pr_fn *pr_qres_fn(struct pr_qres *r, uint64_t ip)
{
	struct pr_fn *fn;
	unsigned int i;

	if (r->nfn) {
		fn = &r->fn[r->fn_last];
		if (ip >= fn->lo && ip < fn->hi)
			return fn;
	}
	for (i = 0; i < r->nfn; ++i)
		if (ip >= r->fn[i].lo && ip < r->fn[i].hi) {
			r->fn_last = i;
			return &r->fn[i];
		}
	i = r->nfn < PR_FN_CACHE ? r->nfn++ : r->fn_next++ % PR_FN_CACHE;
	pr_qres_fn_make(r, ip, &r->fn[i]);
	r->fn_last = i;
	return &r->fn[i];
}

/* "name+0xoff" of @ip (named by @fn) into @buf of @size bytes, then
 * " [stale]" or the source lines (--lines) if @fn has them, cut as
 * snprintf() cuts.  Returns its length.
 */
static size_t pr_fn_text(const struct pr_fn *fn, uint64_t ip, char *buf,
			 size_t size)
{
	char hex[16];
	size_t len, n, k;
	uint64_t off = ip - fn->delta;

	if (!size)
		return 0;
	if (!fn->label) {
		snprintf(buf, size, "%s", pr_unknown);
		return strlen(buf);
	}
	len = fn->label_len < size - 1 ? fn->label_len : size - 1;
	memcpy(buf, fn->label, len);
	pr_hex16(hex, off);
	n = off ? (size_t)(64 - __builtin_clzll(off) + 3) / 4 : 1;
	if (len + 3 + n <= size - 1) {
		memcpy(buf + len, "+0x", 3);
		memcpy(buf + len + 3, hex + 16 - n, n);
		len += 3 + n;
	} else {
		for (k = 0; k < 3 && len < size - 1; ++k)
			buf[len++] = "+0x"[k];
		for (k = 16 - n; k < 16 && len < size - 1; ++k)
			buf[len++] = hex[k];
	}
	buf[len] = 0;
	if (fn->suffix)
		len += (size_t)snprintf(buf + len, size - len, "%s",
					fn->suffix);
	if (fn->elf) {
		pr_elf_lines(fn->elf, off + fn->sym->addr, fn->sym, buf, size);
		len = strlen(buf);
	}
	return len < size ? len : size - 1;
}

static struct pr_prof *pr_prof_get(struct pr_qres *r, const void *key1,
				   uint64_t key2, const char *name,
				   const char *dso)
{
	size_t i, mask;

	if (r->nprof * 2 >= r->capprof) {
		size_t cap = r->capprof ? 2 * r->capprof : 256;
		struct pr_prof *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < r->capprof; ++i) {
			struct pr_prof *o = &r->prof[i];
			size_t h;

			if (!o->name)
				continue;
			h = ((uintptr_t)o->key1 * 31 + o->key2) * 0x9e3779b97f4a7c15ULL;
			h &= cap - 1;
			while (n[h].name)
				h = (h + 1) & (cap - 1);
			n[h] = *o;
		}
		free(r->prof);
		r->prof = n;
		r->capprof = cap;
		r->prof_gen += 1;	/* entries moved */
	}
	mask = r->capprof - 1;
	i = (((uintptr_t)key1 * 31 + key2) * 0x9e3779b97f4a7c15ULL) & mask;
	while (r->prof[i].name) {
		if (r->prof[i].key1 == key1 && r->prof[i].key2 == key2)
			return &r->prof[i];
		i = (i + 1) & mask;
	}
	r->prof[i].key1 = key1;
	r->prof[i].key2 = key2;
	r->prof[i].name = name;
	r->prof[i].dso = dso;
	r->nprof += 1;
	return &r->prof[i];
}

/* A trace error line in the flow, as perf script --itrace=e words it. */
static void pr_qres_flow_error(struct pr_qres *r, int code, const char *what,
			       uint64_t ip)
{
	const struct pr_replay_opts *o = &r->rp->opts;

	if (!o->flow_errors || !(o->outputs & PR_OUT_FLOW) || o->json)
		return;
	pr_buf_printf(&r->flow, " instruction trace error type 1 tid %d ip "
		      "0x%" PRIx64 " code %d: %s\n", r->tid, ip, code, what);
}

static void pr_qres_error(struct pr_qres *r, int code)
{
	const struct pr_region *rgn;
	char region[96];
	size_t i;

	r->nerrors += 1;
	/* an open tie may be why (the trace did not match other bytes),
	 * and the fault's TIP.PGE is skipped with the rest up to the next
	 * PSB: what waited for the open ties is in doubt
	 */
	if (r->td_have)
		pr_qres_doubt(r);
	if (code == -pte_nomap && r->miss) {
		uint64_t ip = r->miss_ip;
		uint32_t space = ip >> 63 ? 0 : r->space;

		/* a region of any time names where it happened */
		rgn = pr_store_name(&r->rp->store, space, ip, UINT64_MAX - 1);
		if (!rgn)
			rgn = pr_store_name(&r->rp->store, space, ip, 0);
		if (rgn && rgn->name)
			snprintf(region, sizeof(region), "%s", rgn->name);
		else
			snprintf(region, sizeof(region), "[unknown %s]",
				 ip >> 63 ? "kernel" : "user");
	} else {
		uint32_t space = r->last_ip >> 63 ? 0 : r->space;

		rgn = r->ninsn > r->piece_insns ?
		      pr_store_name(&r->rp->store, space, r->last_ip,
				    r->ltime) : NULL;
		snprintf(region, sizeof(region), "%s",
			 rgn && rgn->name ? rgn->name : "[trace]");
	}
	r->miss = 0;
	pr_qres_flow_error(r, -code, pr_decode_err_name(code), r->last_ip);
	pr_export_error(r->x, r->tid, r->time, pr_decode_err_name(code));

	for (i = 0; i < r->nerr; ++i)
		if (r->err[i].code == code && !strcmp(r->err[i].region, region)) {
			r->err[i].count += 1;
			return;
		}
	if (r->nerr >= 256)
		return;
	struct pr_err_count *e = realloc(r->err, (r->nerr + 1) * sizeof(*e));

	if (!e) {
		r->failed = 1;
		return;
	}
	r->err = e;
	e = &r->err[r->nerr++];
	e->code = code;
	e->count = 1;
	snprintf(e->region, sizeof(e->region), "%s", region);
}

/* Make @str (of @size bytes) safe inside a JSON string: quotes,
 * backslashes and control characters become '?'.
 */
static void pr_json_escape(char *str, size_t size)
{
	size_t i;

	for (i = 0; i < size && str[i]; ++i)
		if (str[i] == '"' || str[i] == '\\' ||
		    (unsigned char)str[i] < 0x20)
			str[i] = '?';
}

/* The switches kept per queue; more are counted, not kept. */
#define PR_REV_SWITCHES_MAX	100000

/* Returns the revision @r's thread runs at @rev's image now, added. */
static struct pr_rev_cur *pr_qres_rev_cur(struct pr_qres *r,
					  const struct flowjit_rev *rev)
{
	struct pr_rev_cur *c;
	size_t i;

	c = r->last_cur < r->ncur ? &r->cur[r->last_cur] : NULL;
	if (c && c->tid == r->tid && c->start == rev->start)
		return c;
	for (i = 0; i < r->ncur; ++i)
		if (r->cur[i].tid == r->tid && r->cur[i].start == rev->start) {
			r->last_cur = i;
			return &r->cur[i];
		}
	if (r->ncur == r->capcur) {
		size_t cap = r->capcur ? 2 * r->capcur : 16;

		c = realloc(r->cur, cap * sizeof(*c));
		if (!c)
			return NULL;
		r->cur = c;
		r->capcur = cap;
	}
	c = &r->cur[r->ncur];
	memset(c, 0, sizeof(*c));
	c->tid = r->tid;
	c->start = rev->start;
	r->last_cur = r->ncur++;
	return c;
}

/* @c's thread now runs @rev there: note the switch. */
static void pr_qres_rev_switch(struct pr_qres *r, struct pr_rev_cur *c,
			       const struct flowjit_rev *rev)
{
	int how = flowjit_tie_how(&r->tie, rev, r->time);

	if (c->rev)
		r->nsw_by[how] += 1;
	if (r->nsw < PR_REV_SWITCHES_MAX) {
		if (r->nsw == r->capsw) {
			size_t cap = r->capsw ? 2 * r->capsw : 16;
			struct pr_rev_switch *sw;

			sw = realloc(r->sw, cap * sizeof(*sw));
			if (!sw) {
				r->failed = 1;
				goto out;
			}
			r->sw = sw;
			r->capsw = cap;
		}
		r->sw[r->nsw++] = (struct pr_rev_switch){
			.tid = c->tid, .start = c->start, .from = c->rev,
			.to = rev, .from_insns = c->insns, .at = r->ninsn,
			.how = how,
		};
	}
out:
	c->rev = rev;
	c->insns = 0;
	c->how = how;
}

/* @n instructions decoded from flowjit revision @rev, the first of them
 * the queue's r->ninsn-th.
 */
static void pr_qres_rev_insns(struct pr_qres *r, const struct flowjit_rev *rev,
			      uint64_t n)
{
	struct pr_rev_cur *c = pr_qres_rev_cur(r, rev);
	uint64_t hi;

	if (!c) {
		r->failed = 1;
		return;
	}
	if (c->rev != rev)
		pr_qres_rev_switch(r, c, rev);
	c->insns += n;
	/* a newer image may have been lost: never silently */
	/* the latest time the read may be at: the clock's bound with MTC
	 * (a tie's floor can lag the real time as the clock does); without
	 * MTC nothing bounds it, and the lookup time is taken
	 */
	if (rev != r->sus_rev || r->ltime != r->sus_time || r->tsc != r->sus_tsc) {
		int was = r->sus && rev == r->sus_rev;

		hi = r->mtc_ticks ? pr_qres_time_max(r) : r->ltime;
		if (hi < r->ltime)
			hi = r->ltime;
		r->sus_rev = rev;
		r->sus_time = r->ltime;
		r->sus_tsc = r->tsc;
		r->sus = flowjit_store_suspect(r->rp->store.fj, rev, hi) ||
			 flowjit_tie_suspect(&r->tie, rev, r->time);
		if (r->sus && !was) {
			r->nsuspect_runs += 1;
			pr_qres_flow_error(r, 1, "flowjit image may be stale "
					   "(records or trace lost)", rev->start);
		}
	}
	if (r->sus)
		r->nsuspect += n;
}

static uint64_t pr_qres_blk_next_ip(struct pr_qres *r,
				    const struct pt_block *blk, uint64_t ip);

/* The end of a run of @blk from @lo: @hi, or if 0 the end of its one
 * instruction at @lo (read only now), or @lo + 15 if unknown.
 */
static uint64_t pr_qres_run_end(struct pr_qres *r, const struct pt_block *blk,
				uint64_t lo, uint64_t hi)
{
	if (!hi && blk)
		hi = pr_qres_blk_next_ip(r, blk, lo);
	return hi > lo ? hi : lo + 15;
}

/* The decoder's offset in the queue's trace (not in its piece). */
static int pr_qres_offset(struct pr_qres *r, uint64_t *off)
{
	int err = r->bdec ? pt_blk_get_offset(r->bdec, off) :
			    pt_insn_get_offset(r->dec, off);

	if (!err)
		*off += r->base;
	return err;
}

/* Without MTC: the TSC packets of the piece in @config, whose first byte
 * is at r->base in the queue, into r->tscs. One missed (no memory, a
 * packet that does not decode) only widens pr_qres_uo_max()'s window.
 */
static void pr_qres_scan_tsc(struct pr_qres *r, const struct pt_config *config)
{
	struct pt_packet_decoder *pkt;
	struct pt_packet p;
	struct pr_tsc_at *t;
	uint64_t off;
	int status;

	r->ntscs = 0;
	if (r->mtc_ticks || !r->rp->store.fj)
		return;
	pkt = pt_pkt_alloc_decoder(config);
	if (!pkt)
		return;
	status = pt_pkt_sync_forward(pkt);
	while (status >= 0) {
		if (pt_pkt_get_offset(pkt, &off) < 0)
			break;
		status = pt_pkt_next(pkt, &p, sizeof(p));
		if (status == -pte_eos)
			break;
		if (status < 0) {
			status = pt_pkt_sync_forward(pkt);
			continue;
		}
		if (p.type != ppt_tsc)
			continue;
		if (r->ntscs == r->captscs) {
			size_t cap = r->captscs ? 2 * r->captscs : 64;

			t = realloc(r->tscs, cap * sizeof(*t));
			if (!t)
				break;
			r->tscs = t;
			r->captscs = cap;
		}
		r->tscs[r->ntscs].off = r->base + off;
		r->tscs[r->ntscs].tsc = p.payload.tsc.tsc;
		r->ntscs++;
	}
	pt_pkt_free_decoder(pkt);
}

/* Forget the piece's TSC packets (pr_qres_scan_tsc()). */
static void pr_qres_free_tscs(struct pr_qres *r)
{
	free(r->tscs);
	r->tscs = NULL;
	r->ntscs = 0;
	r->captscs = 0;
}

/* Without MTC: the TSC of the first TSC packet at or after the decoder's
 * offset, else of the next piece's PSB+; 0 if none is known. The trace's
 * packets go out in order, so it was sent after what was decoded so far
 * (a packet the decoder read ahead of its instruction is passed over,
 * which only widens the window).
 */
static uint64_t pr_qres_next_tsc(struct pr_qres *r)
{
	size_t lo = 0, hi = r->ntscs, mid;
	uint64_t off;

	if (pr_qres_offset(r, &off) < 0)
		return 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->tscs[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->ntscs ? r->tscs[lo].tsc : r->next_piece_tsc;
}

/* The latest real time of the instruction being decoded. With MTC the
 * clock lags the real time by less than one MTC period (the next MTC
 * comes when the crystal clock bit toggles again). Without, the next TSC
 * packet bounds it, and so does the thread's next fault
 * (flowjit_tie_next_fault()): a thread that runs alone is never
 * unordered against its own faults. UINT64_MAX if nothing bounds it.
 */
static uint64_t pr_qres_uo_max(struct pr_qres *r)
{
	uint64_t tsc, max, f;

	if (r->mtc_ticks)
		return pr_tsc_to_perf(&r->rp->info, r->tsc + r->mtc_ticks);
	tsc = pr_qres_next_tsc(r);
	max = tsc ? pr_tsc_to_perf(&r->rp->info, tsc) : UINT64_MAX;
	f = flowjit_tie_next_fault(&r->tie, r->ltime);
	if (f != UINT64_MAX && f && f <= max)
		max = f - 1;
	return max;
}

/* Whether a revision newer than user JIT revision @rev, made before the
 * latest real time (pr_qres_uo_max()), has other bytes anywhere in its
 * page; per revision, lookup time and latest real time, where a new run
 * of unordered instructions starts.
 */
static int pr_qres_uo_page(struct pr_qres *r, const struct flowjit_rev *rev)
{
	const struct flowjit_store *fj = r->rp->store.fj;
	uint64_t max;

	if (!fj || !r->tsc || rev->kind != FLOWJIT_KIND_USER_JIT)
		return 0;
	max = pr_qres_uo_max(r);
	if (rev != r->uo_rev || r->ltime != r->uo_time || max != r->uo_max) {
		r->uo_rev = rev;
		r->uo_time = r->ltime;
		r->uo_max = max;
		r->uo_page = max > r->ltime &&
			     flowjit_store_unordered(fj, rev, rev->start,
						     rev->end, max);
		r->uo = 0;
	}
	return r->uo_page;
}

/* @n instructions in [@lo, @hi) decoded from user JIT revision @rev (@hi
 * 0: the one instruction of @blk at @lo, its end read only if needed):
 * a newer image of the page made before the latest real time may be what
 * ran, if another thread faulted for it (a tie moves the lookup time for
 * the faulting one). Where its bytes differ from @rev's the trace cannot
 * say which ran: say so, and count them (flowjit_store_unordered()).
 */
static void pr_qres_unordered(struct pr_qres *r, const struct flowjit_rev *rev,
			      const struct pt_block *blk, uint64_t lo,
			      uint64_t hi, uint64_t n)
{
	const struct flowjit_store *fj = r->rp->store.fj;
	int was;

	if (!pr_qres_uo_page(r, rev)) {
		r->uo = 0;
		return;
	}
	was = r->uo;
	r->uo = 0;
	hi = pr_qres_run_end(r, blk, lo, hi);
	if (!flowjit_store_unordered(fj, rev, lo, hi, r->uo_max))
		return;
	r->uo = 1;
	r->nunordered += n;
	if (!was) {
		r->nunordered_runs += 1;
		pr_qres_flow_error(r, 1, "flowjit image may be older than the "
				   "code that ran (a newer one within the "
				   "clock's lag)", lo);
	}
}

/* Do the bytes in [@lo, @hi) of space @space differ at times @t1, @t2? */
static int pr_qres_bytes_differ(struct pr_qres *r, uint32_t space,
				uint64_t lo, uint64_t hi, uint64_t t1,
				uint64_t t2)
{
	uint8_t a[64], b[64];
	size_t k, na, nb;

	for (; lo < hi; lo += k) {
		k = hi - lo < sizeof(a) ? hi - lo : sizeof(a);
		na = pr_store_read(&r->rp->store, space, lo, t1, a, k);
		nb = pr_store_read(&r->rp->store, space, lo, t2, b, k);
		if (na != nb || memcmp(a, b, na))
			return 1;
		if (na < k)
			break;
	}
	return 0;
}

/* @n instructions in [@lo, @hi) decoded from revision @rev (@hi 0: the
 * one instruction of @blk at @lo, its end read only if needed) while
 * ties are open: where the bytes differ from those an open tie's
 * alternative time reads (flowjit_tie_alt()), they wait for the ties to
 * close or be put in doubt (pr_qres_doubt()).
 */
static void pr_qres_tied(struct pr_qres *r, const struct flowjit_rev *rev,
			 const struct pt_block *blk, uint64_t lo, uint64_t hi,
			 uint64_t n)
{
	uint64_t alt, prev = UINT64_MAX;
	uint32_t space;
	unsigned int i;

	/* live by the clock: no tie made it live */
	if (!r->tie.nopen || rev->time <= r->time)
		return;
	space = lo >> 63 ? 0 : r->space;
	for (i = 0; i < r->tie.nopen; i++) {
		alt = flowjit_tie_alt(&r->tie, i, r->time);
		if (rev->time <= alt || alt == prev)
			continue;
		if (prev == UINT64_MAX)
			hi = pr_qres_run_end(r, blk, lo, hi);
		prev = alt;
		if (pr_qres_bytes_differ(r, space, lo, hi, r->ltime, alt))
			break;
	}
	if (i == r->tie.nopen)
		return;
	if (!r->td_have) {
		r->td_have = 1;
		r->td_off = r->flow.len;
		r->td_ip = lo;
		r->td_tid = r->tid;
	}
	r->td_n += n;
}

/* The profile entry of the function at @ip (at the lookup time) becomes
 * the current one, with its address range.
 */
static void pr_qres_prof_func(struct pr_qres *r, uint64_t ip)
{
	struct pr_fn *fn = pr_qres_fn(r, ip);

	if (!fn->prof || fn->prof_gen != r->prof_gen) {
		if (fn->k1)
			fn->prof = pr_prof_get(r, fn->k1, fn->k2, fn->name,
					       fn->dso);
		else
			fn->prof = pr_prof_get(r, pr_unknown, 0, pr_unknown,
					       fn->dso);
		fn->prof_gen = r->prof_gen;
	}
	r->f_cur = fn->prof;
	r->f_lo = fn->lo;
	r->f_hi = fn->hi;
	r->f_valid = 1;
	if (!r->f_cur)
		r->failed = 1;
}

/* @n instructions more in the current function (profile, exporter). */
static void pr_qres_prof_add(struct pr_qres *r, uint64_t n)
{
	if (r->f_cur)
		r->f_cur->count += n;
	if (r->x)
		pr_export_insns(r->x, r->tid, r->time,
				r->f_cur ? r->f_cur->name : NULL, n);
}

/* Count @n instructions from @ip (and below @end) to their function:
 * the one place instructions are reported in a function (profile and
 * the exporter's stacks).  Returns whether all of [ip, end) is in the
 * current function (else nothing was counted and the caller goes
 * instruction by instruction).
 */
static int pr_qres_prof(struct pr_qres *r, uint64_t ip, uint64_t end,
			uint64_t n)
{
	if (!r->f_valid || ip < r->f_lo || ip >= r->f_hi || !r->f_cur)
		pr_qres_prof_func(r, ip);
	if (end > r->f_hi)
		return 0;
	pr_qres_prof_add(r, n);
	return 1;
}

/* The instruction after a call or return is at @ip: print the pending
 * line.  The one place call and return lines are made (--calls) and
 * given to the exporter.
 */
static void pr_qres_call_line(struct pr_qres *r, uint64_t ip)
{
	const struct pr_replay_opts *o = &r->rp->opts;
	char from[PR_NAME_MAX], to[PR_NAME_MAX];
	const struct pr_fn *fn = pr_qres_fn(r, ip);
	size_t lt;

	if (r->pend == 1)
		pr_export_call(r->x, r->pend_tid, r->time, r->pend_fn,
			       fn->name);
	else
		pr_export_ret(r->x, r->pend_tid, r->time, r->pend_fn,
			      fn->name);
	/* the lines, unless only the exporter wants the calls */
	if (!(o->outputs & PR_OUT_CALLS)) {
		/* nothing */
	} else if (o->json) {
		lt = pr_fn_text(fn, ip, to, sizeof(to));
		memcpy(from, r->pend_from, sizeof(from));
		pr_json_escape(from, sizeof(from));
		pr_json_escape(to, sizeof(to));
		pr_buf_printf(&r->calls, "%s{\"tid\":%d,\"ip\":"
			      "\"0x%" PRIx64 "\",\"kind\":\"%s\","
			      "\"from\":\"%s\",\"to\":\"%s\","
			      "\"target\":\"0x%" PRIx64 "\"}",
			      r->ncalls_el++ ? ",\n" : "",
			      r->pend_tid, r->pend_ip,
			      r->pend == 1 ? "call" : "return",
			      from, to, ip);
	} else {
		lt = pr_fn_text(fn, ip, to, sizeof(to));
		pr_buf_call(r, 2 * (r->depth > 30 ? 30 : r->depth),
			    r->pend == 1 ? "call  " : "return", to, lt);
	}
	if (r->pend == 1)
		r->depth += 1;
	else if (r->depth > 0)
		r->depth -= 1;
	r->pend = 0;
}

/* The instruction at @ip of class @iclass was decoded: a call or return
 * is printed at the next instruction.
 */
static void pr_qres_branch(struct pr_qres *r, uint64_t ip,
			   enum pt_insn_class iclass)
{
	const struct pr_fn *fn;

	switch (iclass) {
	case ptic_call:
	case ptic_far_call:
		r->pend = 1;
		break;
	case ptic_return:
	case ptic_far_return:
		r->pend = 2;
		break;
	default:
		return;
	}
	fn = pr_qres_fn(r, ip);
	r->pend_ip = ip;
	r->pend_tid = r->tid;
	r->pend_fn = fn->name;
	if (r->rp->opts.outputs & PR_OUT_CALLS)
		r->pend_from_len = pr_fn_text(fn, ip, r->pend_from,
					      sizeof(r->pend_from));
}

static void pr_qres_insn(struct pr_qres *r, const struct pt_insn *insn)
{
	const struct pr_replay_opts *o = &r->rp->opts;

	r->ninsn += 1;
	r->last_ip = insn->ip;
	if (insn->isid > 0) {
		const struct flowjit_rev *rev;

		rev = pr_rimage_dec_rev(r->rd, insn->isid);
		if (rev) {
			pr_qres_rev_insns(r, rev, 1);
			pr_qres_unordered(r, rev, NULL, insn->ip,
					  insn->ip + insn->size, 1);
			pr_qres_tied(r, rev, NULL, insn->ip,
				     insn->ip + insn->size, 1);
		}
	} else if (r->rd_rev && insn->ip == r->rd_ip) {
		pr_qres_rev_insns(r, r->rd_rev, 1);
		pr_qres_unordered(r, r->rd_rev, NULL, insn->ip,
				  insn->ip + insn->size, 1);
		pr_qres_tied(r, r->rd_rev, NULL, insn->ip,
			     insn->ip + insn->size, 1);
	}
	if (o->outputs & PR_OUT_FLOW)
		pr_buf_flow(&r->flow, r->tid, insn->ip, o->json,
			    !r->nflow_el++, r->flow_pre, &r->flow_pre_tid);
	/* the call or return before first: the exporter counts this
	 * instruction in the function called or returned to
	 */
	if ((o->outputs & (PR_OUT_CALLS | PR_OUT_EXPORT)) && r->pend)
		pr_qres_call_line(r, insn->ip);
	if (o->outputs & (PR_OUT_PROFILE | PR_OUT_EXPORT))
		pr_qres_prof(r, insn->ip, insn->ip + 1, 1);
	if (o->outputs & (PR_OUT_CALLS | PR_OUT_EXPORT))
		pr_qres_branch(r, insn->ip, insn->iclass);
}

/* The IP after the instruction at @ip in @mode (code at the lookup
 * time), or 0 if it cannot be read or decoded.
 */
static uint64_t pr_qres_next_ip(struct pr_qres *r, enum pt_exec_mode mode,
				uint64_t ip)
{
	struct pr_insn_info info;
	uint8_t raw[16];
	size_t n;

	n = pr_store_read(&r->rp->store, ip >> 63 ? 0 : r->space, ip, r->ltime,
			  raw, 15);
	if (!n || pr_insn_decode(&info, mode, raw, n) < 0)
		return 0;
	return ip + info.size;
}

/* The IP after the instruction at @ip of block @blk: from the lengths
 * of its section's instructions (pr_rimage_dec_next_ip()), else read
 * at the lookup time.
 */
static uint64_t pr_qres_blk_next_ip(struct pr_qres *r,
				    const struct pt_block *blk, uint64_t ip)
{
	uint64_t next = 0;

	if (blk->isid > 0 && r->rd)
		next = pr_rimage_dec_next_ip(r->rd, blk->isid, blk->mode, ip);
	return next ? next : pr_qres_next_ip(r, blk->mode, ip);
}

/* The flowjit revision of the code at @ip now, or NULL. */
static const struct flowjit_rev *pr_qres_rev_at(struct pr_qres *r,
						uint64_t ip)
{
	const struct pr_region *rgn;

	rgn = pr_store_lookup(&r->rp->store, ip >> 63 ? 0 : r->space, ip,
			      r->ltime, NULL, NULL);
	return rgn && rgn->kind == PR_RGN_FLOWJIT ? rgn->rev : NULL;
}

/* @n instructions of @blk from @ip, contiguous (the block decoder ends a
 * block at every branch: end_on_call, end_on_jump), all before @end, their
 * bytes before @bend (0: @n is 1, the instruction's end read if needed):
 * the instruction flow decoder's pr_qres_insn() for each, without their
 * classes (the caller gives the last one's).  Walks them one by one only
 * where a section does not tell their revision, they leave the function
 * or the flow lists them.
 */
static void pr_qres_insns(struct pr_qres *r, const struct pt_block *blk,
			  uint64_t ip, uint64_t end, uint64_t bend, uint64_t n)
{
	const struct pr_replay_opts *o = &r->rp->opts;
	const struct flowjit_rev *rev = NULL;
	int walk_rev = 0;
	uint64_t i, prev = ip, next;

	if (!n)
		return;
	if ((o->outputs & (PR_OUT_CALLS | PR_OUT_EXPORT)) && r->pend)
		pr_qres_call_line(r, ip);
	if (blk->isid > 0)
		rev = pr_rimage_dec_rev(r->rd, blk->isid);
	else
		walk_rev = r->rp->store.fj != NULL;
	/* where a newer revision may have run: one by one, as without
	 * sections, so that only the instructions whose bytes differ count
	 */
	if (rev && n > 1 && pr_qres_uo_page(r, rev))
		walk_rev = 1;
	if (!walk_rev) {
		r->ninsn += 1;
		if (rev) {
			pr_qres_rev_insns(r, rev, n);
			pr_qres_unordered(r, rev, blk, ip, bend, n);
			pr_qres_tied(r, rev, blk, ip, bend, n);
		}
		r->ninsn += n - 1;
		if (!(o->outputs & (PR_OUT_PROFILE | PR_OUT_EXPORT |
				    PR_OUT_FLOW)) ||
		    (!(o->outputs & PR_OUT_FLOW) &&
		     pr_qres_prof(r, ip, end, n)))
			return;
		r->ninsn -= n;
	}
	/* one by one */
	for (i = 0; i < n && ip; ++i) {
		prev = ip;
		next = i + 1 < n ? pr_qres_blk_next_ip(r, blk, ip) : bend;
		if (walk_rev) {
			r->ninsn += 1;
			rev = pr_qres_rev_at(r, ip);
			if (rev) {
				pr_qres_rev_insns(r, rev, 1);
				pr_qres_unordered(r, rev, blk, ip,
						  next > ip ? next : 0, 1);
				pr_qres_tied(r, rev, blk, ip,
					     next > ip ? next : 0, 1);
			}
		} else {
			r->ninsn += 1;
		}
		if (o->outputs & PR_OUT_FLOW)
			pr_buf_flow(&r->flow, r->tid, ip, o->json,
				    !r->nflow_el++, r->flow_pre,
				    &r->flow_pre_tid);
		if (o->outputs & (PR_OUT_PROFILE | PR_OUT_EXPORT))
			pr_qres_prof(r, ip, ip + 1, 1);
		if (i + 1 < n)
			ip = next;
	}
	/* undecodable code: count the rest where the walk stopped, in the
	 * function it stopped in (the exporter's counts add up)
	 */
	r->ninsn += n - i;
	if (n > i && (o->outputs & (PR_OUT_PROFILE | PR_OUT_EXPORT)))
		pr_qres_prof_add(r, n - i);
	/* libipt ran them, but they cannot be listed: an error, not a gap */
	if (n > i && (o->outputs & PR_OUT_FLOW)) {
		r->last_ip = prev;
		pr_qres_error(r, -pte_bad_insn);
	}
}

static volatile uint64_t pr_progress_bytes;

/* Instructions without trace progress before decoding gives up. */
#define PR_MAX_LOOP_INSNS	100000


/* The timing packets the intel_pt event asked for, for libipt's clock
 * (as perf's decoder takes them from the same AUXTRACE_INFO): MTC needs
 * the MTC period and the TSC/CTC ratio, CYC the core:bus clock ratio.
 */
static void pr_qres_timing(struct pr_qres *r, struct pt_config *config)
{
	const struct pr_replay *rp = r->rp;
	const struct pr_pt_info *info = &rp->info;

	if (!info->has_timing)
		return;
	if ((rp->pt_config & info->mtc_bit) && info->mtc_freq_bits &&
	    info->tsc_ctc_n && info->tsc_ctc_d) {
		config->mtc_freq = (uint8_t)((rp->pt_config &
					      info->mtc_freq_bits) >>
					     __builtin_ctzll(info->mtc_freq_bits));
		config->cpuid_0x15_eax = info->tsc_ctc_d;
		config->cpuid_0x15_ebx = info->tsc_ctc_n;
		if (config->mtc_freq < 32)
			r->mtc_ticks = ((1ULL << config->mtc_freq) *
					info->tsc_ctc_n + info->tsc_ctc_d - 1) /
				       info->tsc_ctc_d;
	}
	if ((rp->pt_config & info->cyc_bit) && info->max_nonturbo_ratio)
		config->nom_freq = (uint8_t)info->max_nonturbo_ratio;
}

/* libipt's decoder of a queue: the instruction flow decoder (r->dec) for
 * --flow, else the block decoder (r->bdec).  These wrap the calls both
 * have.
 */
static int pr_qres_sync_forward(struct pr_qres *r)
{
	return r->bdec ? pt_blk_sync_forward(r->bdec) :
			 pt_insn_sync_forward(r->dec);
}

static int pr_qres_event(struct pr_qres *r, struct pt_event *ev)
{
	return r->bdec ? pt_blk_event(r->bdec, ev, sizeof(*ev)) :
			 pt_insn_event(r->dec, ev, sizeof(*ev));
}

/* Handle the events pending in @status.  Returns the last status. */
static int pr_qres_events(struct pr_qres *r, int status)
{
	struct pt_event ev;

	while (status & pts_event_pending) {
		status = pr_qres_event(r, &ev);
		if (status < 0)
			break;
		if (ev.type == ptev_overflow) {
			r->noverflow += 1;
			r->pend = 0;
			pr_qres_time(r);
			pr_qres_overflow(r);
			pr_qres_flow_error(r, 6, "Overflow packet",
					   ev.variant.overflow.ip);
			pr_export_error(r->x, r->tid, r->time, "overflow");
		} else if (ev.type == ptev_enabled) {
			pr_qres_time(r);
			pr_qres_task(r, ev.has_tsc ?
				     pr_tsc_to_perf(&r->rp->info, ev.tsc) :
				     r->time);
			pr_qres_resume(r, ev.variant.enabled.ip);
		} else if (ev.type == ptev_disabled ||
			   ev.type == ptev_async_disabled) {
			r->ndisabled += 1;
			r->pend = 0;
			/* the clock then: a lower bound of the real time */
			flowjit_tie_leave(&r->tie, ev.has_tsc ?
					  pr_tsc_to_perf(&r->rp->info, ev.tsc) :
					  r->time);
		}
	}
	return status;
}

/* Add @off - *@reported bytes to the progress bar's count. */
static void pr_qres_progress(uint64_t off, uint64_t *reported)
{
	__atomic_add_fetch(&pr_progress_bytes, off - *reported,
			   __ATOMIC_RELAXED);
	*reported = off;
}

/* Direct branches need no trace: code that loops without packets would
 * decode forever (as perf, give up after a bound and resync at the next
 * PSB).  Called with the count of instructions since the last check at
 * PR_MAX_LOOP_INSNS.  Returns whether the trace did not move since.
 */
static int pr_qres_stuck(struct pr_qres *r)
{
	uint64_t off;

	r->stuck = 0;
	if (pr_qres_offset(r, &off) == 0 && off == r->stuck_off) {
		r->nloops += 1;
		return 1;
	}
	r->stuck_off = off;
	return 0;
}

/* Decode instructions with the instruction flow decoder until an error
 * or the end.  Returns the status (negative).
 */
static int pr_qres_run_insn(struct pr_qres *r, int status, uint64_t *reported)
{
	struct pt_insn insn;
	uint64_t off;

	for (;;) {
		if (status & pts_event_pending) {
			status = pr_qres_events(r, status);
			if (status < 0)
				return status;
			/* the image of the time the code is read at (else
			 * the time after the last instruction's)
			 */
			pr_qres_time(r);
		}
		if (status & pts_eos) {
			/* the next piece starts at a known IP: on to it */
			if (!r->stop_valid)
				return -pte_eos;
			r->gap = 1;
		}
		status = pt_insn_next(r->dec, &insn, sizeof(insn));
		if (status < 0)
			return status;
		if (r->gap && insn.ip == r->stop_ip)
			return -pte_eos;
		pr_qres_time(r);
		pr_qres_insn(r, &insn);
		pr_qres_full(r);
		if (pr_store_work > PR_DECODE_WORK_MAX)
			return PR_ERR_COMPLEX;
		if (++r->stuck >= PR_MAX_LOOP_INSNS && pr_qres_stuck(r))
			return PR_ERR_LOOP;
		if (!(r->ninsn & 0xffff) && pr_qres_offset(r, &off) == 0)
			pr_qres_progress(off, reported);
	}
}

/* The class of @blk's last instruction at @ip, if libipt left it out. */
static enum pt_insn_class pr_qres_block_class(struct pr_qres *r,
					      const struct pt_block *blk,
					      uint64_t ip)
{
	uint8_t raw[16];
	size_t n;

	if (blk->iclass != ptic_error || ip != blk->end_ip)
		return blk->iclass;
	if (blk->truncated)
		return pr_insn_class(blk->mode, blk->raw, blk->size);
	n = pr_store_read(&r->rp->store, ip >> 63 ? 0 : r->space, ip,
			  r->ltime, raw, 15);
	return pr_insn_class(blk->mode, raw, n);
}

/* The first @n instructions of block @blk decoded: report them as the
 * instruction flow decoder's would be.  libipt ends a block where the
 * time changes (tick events), after its last instruction: all but that
 * one are at the time before, the last one at the decoder's time after.
 */
static void pr_qres_block(struct pr_qres *r, const struct pt_block *blk,
			  uint64_t n)
{
	enum pt_insn_class iclass = ptic_other;
	uint64_t last = blk->end_ip, i;

	if (!n) {
		pr_qres_time(r);
		return;
	}
	/* cut short by the loop guard: walk to the n-th */
	for (i = 1, last = blk->ip; n < blk->ninsn && i < n && last; ++i)
		last = pr_qres_blk_next_ip(r, blk, last);
	if (n == blk->ninsn)
		last = blk->end_ip;
	pr_qres_insns(r, blk, blk->ip, last, last, n - 1);
	if ((r->rp->opts.outputs & (PR_OUT_CALLS | PR_OUT_EXPORT)) &&
	    n == blk->ninsn)
		iclass = pr_qres_block_class(r, blk, last);
	pr_qres_time(r);
	pr_qres_insns(r, blk, last, last + 1, 0, 1);
	r->last_ip = last;
	if (r->rp->opts.outputs & (PR_OUT_CALLS | PR_OUT_EXPORT))
		pr_qres_branch(r, last, iclass);
}

/* The instructions of @blk before @ip (the next piece's start). */
static uint64_t pr_qres_block_upto(struct pr_qres *r,
				   const struct pt_block *blk, uint64_t ip)
{
	uint64_t n = 0, at = blk->ip;

	while (at && at != ip && n < blk->ninsn) {
		at = pr_qres_blk_next_ip(r, blk, at);
		n += 1;
	}
	return at == ip ? n : blk->ninsn;
}

/* Decode blocks with the block decoder until an error or the end.
 * Returns the status (negative).
 */
static int pr_qres_run_blk(struct pr_qres *r, int status, uint64_t *reported)
{
	struct pt_block blk;
	uint64_t n, off, before;
	int loop;

	for (;;) {
		if (status & pts_event_pending) {
			status = pr_qres_events(r, status);
			if (status < 0)
				return status;
			pr_qres_time(r);
		}
		if (status & pts_eos) {
			/* the next piece starts at a known IP: on to it */
			if (!r->stop_valid)
				return -pte_eos;
			r->gap = 1;
		}
		status = pt_blk_next(r->bdec, &blk, sizeof(blk));
		/* a block cut short by an error still ran */
		n = blk.ninsn;
		if (r->gap && n && r->stop_ip >= blk.ip &&
		    r->stop_ip <= blk.end_ip) {
			n = pr_qres_block_upto(r, &blk, r->stop_ip);
			if (n < blk.ninsn) {
				pr_qres_block(r, &blk, n);
				return -pte_eos;
			}
		}
		loop = 0;
		if (n && r->stuck + n >= PR_MAX_LOOP_INSNS) {
			n = PR_MAX_LOOP_INSNS - r->stuck;
			loop = pr_qres_stuck(r);
			if (!loop) {
				r->stuck = blk.ninsn - n;
				n = blk.ninsn;
			}
		} else {
			r->stuck += n;
		}
		before = r->ninsn;
		if (n || status >= 0)
			pr_qres_block(r, &blk, n);
		pr_qres_full(r);
		if (loop)
			return PR_ERR_LOOP;
		if (status < 0)
			return status;
		if (pr_store_work > PR_DECODE_WORK_MAX)
			return PR_ERR_COMPLEX;
		if ((before >> 16) != (r->ninsn >> 16) &&
		    pr_qres_offset(r, &off) == 0)
			pr_qres_progress(off, reported);
	}
}

/* Make the decoder for @r's queue, @config's trace.  Returns 0, -1. */
static int pr_qres_alloc(struct pr_qres *r, struct pt_config *config)
{
	const struct pr_replay_opts *o = &r->rp->opts;
	struct pt_image *image;

	if (o->insn_decoder) {
		r->dec = pt_insn_alloc_decoder(config);
		if (!r->dec)
			return -1;
		image = pt_insn_get_image(r->dec);
	} else {
		/* blocks end where the time changes and at every branch */
		config->flags.variant.block.enable_tick_events = 1;
		config->flags.variant.block.end_on_call = 1;
		config->flags.variant.block.end_on_jump = 1;
		r->bdec = pt_blk_alloc_decoder(config);
		if (!r->bdec)
			return -1;
		image = pt_blk_get_image(r->bdec);
	}
	pt_image_set_callback(image, pr_read_mem, r);
	return 0;
}

/* The PSB pattern: a PSB packet is 02 82 repeated 8 times. */
static const uint8_t pr_psb[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/* The index of @q's segment holding byte @off, from *@seg (and *@base,
 * its first byte's offset) on: *@seg and *@base move forward to it.
 */
static void pr_queue_seek(const struct pr_queue *q, size_t off, size_t *seg,
			  size_t *base)
{
	if (off < *base) {
		*seg = 0;
		*base = 0;
	}
	while (*seg < q->nseg && off >= *base + q->seg[*seg].n) {
		*base += q->seg[*seg].n;
		*seg += 1;
	}
}

/* Copy bytes [@off, @off + @n) of @q's trace (all there) to @dst. */
static void pr_queue_copy(const struct pr_queue *q, size_t off, uint8_t *dst,
			  size_t n)
{
	size_t seg = 0, base = 0;

	while (n) {
		size_t at, k;

		pr_queue_seek(q, off, &seg, &base);
		if (seg >= q->nseg)
			return;
		at = off - base;
		k = q->seg[seg].n - at;
		if (k > n)
			k = n;
		memcpy(dst, q->seg[seg].p + at, k);
		dst += k;
		off += k;
		n -= k;
	}
}

/* The PSB in the run of 02 82 pairs that has one at @off: the run's last
 * 16 bytes.  What comes before them ends the packet before (the 02 of a
 * CYC, then a TNT 82: "0f 02 82 02 82 ..."), and nothing the hardware
 * sends after a PSB starts with 02 82.
 */
static size_t pr_queue_psb_last(const struct pr_queue *q, size_t off)
{
	uint8_t two[2];

	while (q->size - off >= sizeof(pr_psb) + 2) {
		pr_queue_copy(q, off + sizeof(pr_psb), two, 2);
		if (two[0] != pr_psb[0] || two[1] != pr_psb[1])
			break;
		off += 2;
	}
	return off;
}

/* The offset of the first PSB of @q's trace at or after @off and before
 * @limit, or @limit if there is none.
 */
static size_t pr_queue_psb(const struct pr_queue *q, size_t off, size_t limit)
{
	size_t seg = 0, base = 0;

	while (off < limit) {
		const uint8_t *p;
		uint8_t win[2 * sizeof(pr_psb)];
		size_t at, end, w;

		pr_queue_seek(q, off, &seg, &base);
		if (seg >= q->nseg)
			break;
		at = off - base;
		end = q->seg[seg].n;
		if (base + end > limit)
			end = limit - base;
		p = memmem(q->seg[seg].p + at, end - at, pr_psb,
			   sizeof(pr_psb));
		if (p)
			return pr_queue_psb_last(q, base +
						 (size_t)(p - q->seg[seg].p));
		if (base + end >= limit)
			break;
		/* one across the end of this segment */
		off = base + end - (end - at < sizeof(pr_psb) - 1 ? end - at :
				    sizeof(pr_psb) - 1);
		w = limit - off < sizeof(win) ? limit - off : sizeof(win);
		pr_queue_copy(q, off, win, w);
		p = memmem(win, w, pr_psb, sizeof(pr_psb));
		if (p)
			return pr_queue_psb_last(q, off + (size_t)(p - win));
		off = base + end;
	}
	return limit;
}

/* Trace bytes decoded at once: a queue is decoded in pieces that end at
 * the first PSB after PR_PIECE_SIZE bytes (or after PR_PIECE_MAX bytes
 * without one); opts.piece overrides the size (tests).
 */
#define PR_PIECE_SIZE	(4u << 20)
#define PR_PIECE_MAX	(64u << 20)

/* Pieces of a queue decoded in parallel: at most PR_PIECE_PAR bytes, and
 * smaller towards the end of the trace (guided scheduling: a quarter of
 * what is left per worker, not below PR_PIECE_PAR_MIN), so that the
 * workers end together.  On the bench's trace (2 queues, 2.9 MB) fixed
 * 256 KiB pieces left one worker idle for most of the last piece
 * (1.72-1.76 x on 2 threads); a piece costs a decoder and a PSB sync.
 */
#define PR_PIECE_PAR		(256u << 10)
#define PR_PIECE_PAR_MIN	(32u << 10)

/* Are @r's pieces decoded in parallel?  Only where nothing but counts
 * goes from one piece to the next (no flow or call lines, no exporter's
 * call stacks, no flowjit ties or revisions, one thread per queue),
 * with -j N and more than one piece: merged in order they give what one
 * decoder gives.
 */
static int pr_qres_split(const struct pr_qres *r)
{
	const struct pr_replay *rp = r->rp;

	return rp->opts.jobs > 1 && r->q->tid >= 0 && !rp->store.fj &&
	       !(rp->opts.outputs & (PR_OUT_FLOW | PR_OUT_CALLS |
				     PR_OUT_EXPORT)) &&
	       r->q->size > (rp->opts.piece ? rp->opts.piece : PR_PIECE_PAR);
}

/* The size of the piece of @r's queue that starts at @at, @left bytes of
 * trace not yet given out (this queue's and the queues' after it).
 */
static size_t pr_qres_piece_want(const struct pr_qres *r, uint64_t left)
{
	const struct pr_replay *rp = r->rp;
	uint64_t want;

	if (rp->opts.piece)
		return rp->opts.piece;
	if (!pr_qres_split(r))
		return PR_PIECE_SIZE;
	want = left / (4 * (uint64_t)rp->opts.jobs);
	if (want > PR_PIECE_PAR)
		want = PR_PIECE_PAR;
	if (want < PR_PIECE_PAR_MIN)
		want = PR_PIECE_PAR_MIN;
	return (size_t)want;
}

/* The end of the piece of @r's queue that starts at @at (@left: as for
 * pr_qres_piece_want()).
 */
static size_t pr_qres_piece_end(const struct pr_qres *r, size_t at,
				uint64_t left)
{
	const struct pr_queue *q = r->q;
	size_t want = pr_qres_piece_want(r, left);
	size_t limit = q->size - at > PR_PIECE_MAX ? at + PR_PIECE_MAX :
		       q->size;

	if (q->size - at <= want)
		return q->size;
	return pr_queue_psb(q, at + want, limit);
}

/* The bytes [@at, @end) of @r's queue in one buffer: in the file if one
 * AUXTRACE buffer holds them, else copied to r->pbuf.  NULL if out of
 * memory.
 */
static const uint8_t *pr_qres_piece(struct pr_qres *r, size_t at, size_t end)
{
	const struct pr_queue *q = r->q;
	size_t seg = 0, base = 0;

	pr_queue_seek(q, at, &seg, &base);
	if (seg < q->nseg && end <= base + q->seg[seg].n)
		return q->seg[seg].p + (at - base);
	if (end - at > r->pcap) {
		uint8_t *p = realloc(r->pbuf, end - at);

		if (!p)
			return NULL;
		r->pbuf = p;
		r->pcap = end - at;
	}
	pr_queue_copy(q, at, r->pbuf, end - at);
	return r->pbuf;
}

/* The most the kernel maps around a page fault (fault_around_bytes). */
#define PR_FAULT_AROUND		(64u << 10)

/* Give back the pages of [@at, @end) of @r's queue read from the mapped
 * perf.data (they are read again from the file if needed): what the
 * trace takes in memory does not grow with its length.  One madvise()
 * over the file from the range's first byte to its last: each one is a
 * TLB shootdown of the other workers.
 */
static void pr_qres_release(struct pr_qres *r, size_t at, size_t end)
{
	const struct pr_queue *q = r->q;
	size_t seg = 0, base = 0, page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t map = (uintptr_t)r->rp->perf.pd.buf;
	size_t size = r->rp->perf.pd.size;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	if (!r->rp->perf.pd.mapped)
		return;
	while (at < end) {
		uintptr_t a;
		size_t k;

		pr_queue_seek(q, at, &seg, &base);
		if (seg >= q->nseg)
			break;
		k = base + q->seg[seg].n - at;
		if (k > end - at)
			k = end - at;
		a = (uintptr_t)(q->seg[seg].p + (at - base));
		if (a < lo)
			lo = a;
		if (a + k > hi)
			hi = a + k;
		at += k;
	}
	if (hi <= lo)
		return;
	/* whole pages, those between of other queues, and those the
	 * kernel mapped around the ones read (fault-around, 64 KiB): what
	 * is still to come is read again from the file then
	 */
	lo = lo - map > PR_FAULT_AROUND ? lo - PR_FAULT_AROUND : map;
	hi = map + size - hi > PR_FAULT_AROUND ? hi + PR_FAULT_AROUND :
	     map + size;
	lo &= ~(uintptr_t)(page - 1);
	hi = (hi + page - 1) & ~(uintptr_t)(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Where the piece starting at @at of @r's queue starts decoding: the IP
 * of its PSB+ (FUP) into r->stop_ip, r->stop_valid 1; 0 if tracing is
 * off there or it has no PSB at @at.  The piece before decodes up to it.
 */
static void pr_qres_next_start(struct pr_qres *r, size_t at)
{
	const struct pr_queue *q = r->q;
	struct pt_query_decoder *qry;
	struct pt_config config;
	uint8_t head[4096];
	size_t n = q->size - at < sizeof(head) ? q->size - at : sizeof(head);
	uint64_t ip, tsc;
	int status;

	r->stop_valid = 0;
	r->next_piece_tsc = 0;
	if (!n)
		return;
	pr_queue_copy(q, at, head, n);
	if (n < sizeof(pr_psb) || memcmp(head, pr_psb, sizeof(pr_psb)))
		return;
	pt_config_init(&config);
	config.begin = head;
	config.end = head + n;
	qry = pt_qry_alloc_decoder(&config);
	if (!qry)
		return;
	status = pt_qry_sync_forward(qry, &ip);
	if (status >= 0 && !(status & pts_ip_suppressed)) {
		r->stop_ip = ip;
		r->stop_valid = 1;
	}
	/* its PSB+ TSC, sent after this piece's last instruction */
	if (status >= 0 && pt_qry_time(qry, &tsc, NULL, NULL) >= 0)
		r->next_piece_tsc = tsc;
	pt_qry_free_decoder(qry);
}

/* Decode the piece [@at, @end) of @r's queue with a decoder of its own,
 * from its first PSB to its end and, if the next piece starts at a known
 * IP, on without trace up to it (the instructions between the piece's
 * last packet and the next PSB).  Returns 1 if it ended decoding (the
 * next piece continues it), 0 if it ended looking for a PSB, -1 if the
 * queue is to be abandoned.
 */
static int pr_qres_decode_piece(struct pr_qres *r, size_t at, size_t end,
				uint64_t *reported)
{
	struct pt_config config;
	uint64_t last_off = UINT64_MAX, off;
	const uint8_t *buf;
	int status, first = 1, ended = 0, cont;

	buf = pr_qres_piece(r, at, end);
	if (!buf) {
		r->failed = 1;
		return -1;
	}
	pr_qres_next_start(r, end);
	r->base = at;
	r->gap = 0;
	/* the loop guard and the last IP of errors are the piece's: a
	 * piece decodes alike after the one before or on its own (-j)
	 */
	r->stuck = 0;
	r->stuck_off = 0;
	r->piece_insns = r->ninsn;
	pt_config_init(&config);
	config.begin = (uint8_t *)buf;
	config.end = (uint8_t *)buf + (end - at);
	pr_qres_timing(r, &config);
	pr_qres_scan_tsc(r, &config);
	if (pr_qres_alloc(r, &config) < 0) {
		pr_qres_free_tscs(r);
		r->failed = 1;
		return -1;
	}
	/* the new decoder gets the image in effect */
	r->image = NULL;
	pr_qres_image(r);

	for (;;) {
		status = pr_qres_sync_forward(r);
		if (status < 0) {
			if (status == -pte_eos)
				break;
			pr_qres_error(r, status);
			/* make sure we move on */
			if (pr_qres_offset(r, &off) < 0 || off == last_off)
				break;
			last_off = off;
			continue;
		}
		/* the piece before ended decoding: its PSB goes on (one
		 * decoder over the queue does not synchronize there, nor
		 * look for the CPU's task)
		 */
		cont = first && r->cont;
		if (!cont) {
			r->nsync += 1;
			r->pend = 0;
		}
		first = 0;
		pr_qres_time(r);
		if (!cont)
			pr_qres_task(r, r->time);

		status = r->bdec ? pr_qres_run_blk(r, status, reported) :
				   pr_qres_run_insn(r, status, reported);
		if (status == -pte_eos) {
			ended = 1;
			break;
		}
		pr_qres_error(r, status);
		if (status == PR_ERR_COMPLEX) {
			ended = -1;
			break;
		}
		if (pr_qres_offset(r, &off) == 0) {
			if (off == last_off && status != -pte_nomap)
				break;
			last_off = off;
		}
	}
	pt_insn_free_decoder(r->dec);
	pt_blk_free_decoder(r->bdec);
	r->dec = NULL;
	r->bdec = NULL;
	r->image = NULL;
	pr_qres_free_tscs(r);
	if (!pr_qres_split(r))
		pr_qres_release(r, at, end);
	return ended;
}

/* Set @r up to decode its queue from the start. */
static void pr_qres_start(struct pr_qres *r)
{
	const struct pr_queue *q = r->q;

	r->tid = q->tid;
	r->space = q->tid >= 0 ? pr_replay_pid(r->rp, (uint32_t)q->tid) : 0;
	flowjit_tie_init(&r->tie, r->rp->store.fj);
	r->names_timed = pr_jitnames_timed(&r->rp->names);
	r->cont = 0;
}

/* Decode queue @r->q, piece after piece (with the worker's images). */
static void pr_qres_decode(struct pr_qres *r, struct pr_rimage_dec *rd)
{
	struct pr_queue *q = r->q;
	uint64_t reported = 0;
	size_t at = 0, end;
	int ended;

	pr_store_work = 0;
	r->rd = rd;
	pr_qres_start(r);
	while (at < q->size) {
		end = pr_qres_piece_end(r, at, 0);
		ended = pr_qres_decode_piece(r, at, end, &reported);
		if (ended < 0)
			break;
		r->cont = ended;
		at = end;
	}
	pr_qres_progress(q->size, &reported);
	/* the open tie's TIP.PGE may be beyond the trace's end */
	if (r->rp->store.fj && !r->rp->opts.no_tie) {
		flowjit_tie_end(&r->tie, r->time);
		pr_qres_tie_check(r);
	}
	pr_qres_flush(r, 1);
	free(r->pbuf);
	r->pbuf = NULL;
	r->nsections = r->rd->nsections;
	r->nimages = r->rd->nimages;
}

/* The workers' queue: queues in turn, and the pieces of a queue that
 * decodes in parallel (pr_qres_split()) in turn.
 */
struct pr_pool {
	struct pr_decode *d;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t qi;		/* the queue given out now */
	size_t at;		/* where its next piece starts */
	uint64_t left;		/* trace bytes not given out yet */
	size_t done;		/* queues done */
};

/* Count @n of @code in @region, as pr_qres_error() does one. */
static void pr_qres_err_add(struct pr_qres *r, int code, const char *region,
			    uint64_t n)
{
	struct pr_err_count *e;
	size_t i;

	for (i = 0; i < r->nerr; ++i)
		if (r->err[i].code == code &&
		    !strcmp(r->err[i].region, region)) {
			r->err[i].count += n;
			return;
		}
	if (r->nerr >= 256)
		return;
	e = realloc(r->err, (r->nerr + 1) * sizeof(*e));
	if (!e) {
		r->failed = 1;
		return;
	}
	r->err = e;
	e = &r->err[r->nerr++];
	e->code = code;
	e->count = n;
	snprintf(e->region, sizeof(e->region), "%s", region);
}

/* Free what piece result @p holds, and @p. */
static void pr_qres_free_piece(struct pr_qres *p)
{
	free(p->flow.p);
	free(p->calls.p);
	free(p->prof);
	free(p->err);
	free(p->cur);
	free(p->sw);
	free(p->pbuf);
	free(p);
}

/* Add piece result @p, the next piece of @r's queue, to @r: as if @r had
 * decoded it after the pieces before.
 */
static void pr_qres_merge(struct pr_qres *r, struct pr_qres *p)
{
	size_t i;

	if (r->abandoned)
		return;
	r->ninsn += p->ninsn;
	/* a piece after one that ended decoding goes on: not a resync */
	r->nsync += p->nsync - (r->cont && p->nsync ? 1 : 0);
	r->noverflow += p->noverflow;
	r->nerrors += p->nerrors;
	r->ndisabled += p->ndisabled;
	r->nloops += p->nloops;
	r->failed |= p->failed;
	if (p->ninsn)
		r->last_ip = p->last_ip;
	for (i = 0; i < p->nerr; ++i)
		pr_qres_err_add(r, p->err[i].code, p->err[i].region,
				p->err[i].count);
	for (i = 0; i < p->capprof; ++i) {
		struct pr_prof *e;

		if (!p->prof[i].name)
			continue;
		e = pr_prof_get(r, p->prof[i].key1, p->prof[i].key2,
				p->prof[i].name, p->prof[i].dso);
		if (!e) {
			r->failed = 1;
			continue;
		}
		e->count += p->prof[i].count;
	}
	r->cont = p->ended > 0;
	r->abandoned = p->ended < 0;
}

/* Decode piece [@at, @end) of @r's queue on its own into a new result
 * (using the worker's images @rd and its buffer @buf of @cap bytes, for
 * a piece that spans AUXTRACE buffers, kept from piece to piece).
 * Returns it, NULL if out of memory.
 */
static struct pr_qres *pr_qres_decode_alone(struct pr_qres *r,
					    struct pr_rimage_dec *rd,
					    uint8_t **buf, size_t *cap,
					    size_t at, size_t end)
{
	struct pr_qres *p = calloc(1, sizeof(*p));
	uint64_t reported = at;

	if (!p)
		return NULL;
	p->rp = r->rp;
	p->q = r->q;
	p->index = r->index;
	p->sections = r->sections;
	p->rd = rd;
	p->pbuf = *buf;
	p->pcap = *cap;
	p->piece_end = end;
	pr_store_work = 0;
	pr_qres_start(p);
	p->ended = pr_qres_decode_piece(p, at, end, &reported);
	pr_qres_progress(end, &reported);
	*buf = p->pbuf;
	*cap = p->pcap;
	p->pbuf = NULL;
	p->pcap = 0;
	return p;
}

/* Give back what a queue decoded in pieces has read of the mapped file,
 * up to @end, by PR_RELEASE_STEP bytes at least (@all: all of it): a
 * madvise() per piece (twice with the pages around it, some of the other
 * queues') interrupted the other workers, a TLB shootdown each, and made
 * them fault the pages again.
 */
#define PR_RELEASE_STEP		(1u << 20)

static void pr_qres_release_merged(struct pr_qres *r, size_t end, int all)
{
	if (end > r->released && (all || end - r->released >= PR_RELEASE_STEP)) {
		pr_qres_release(r, r->released, end);
		r->released = end;
	}
}

/* Piece @k of @r's queue is decoded (@p, NULL: out of memory): merge the
 * pieces that are next in order; under pool->lock.  Returns whether the
 * queue is done.
 */
static int pr_pool_piece_done(struct pr_qres *r, size_t k, struct pr_qres *p)
{
	size_t slot = k % PR_PIECES_AHEAD;

	if (!p)
		r->failed = 1;
	r->pdone[slot] = p;
	r->pready[slot] = 1;
	while (r->pready[r->pmerged % PR_PIECES_AHEAD]) {
		slot = r->pmerged % PR_PIECES_AHEAD;
		if (r->pdone[slot]) {
			pr_qres_merge(r, r->pdone[slot]);
			pr_qres_release_merged(r, r->pdone[slot]->piece_end,
					       0);
			pr_qres_free_piece(r->pdone[slot]);
		}
		r->pdone[slot] = NULL;
		r->pready[slot] = 0;
		r->pmerged += 1;
	}
	if (r->split_done && r->pmerged == r->pissued) {
		pr_qres_release_merged(r, r->q->size, 1);
		return 1;
	}
	return 0;
}

static void *pr_worker(void *arg)
{
	struct pr_pool *pool = arg;
	struct pr_decode *d = pool->d;
	struct pr_rimage_dec rd;
	uint8_t *buf = NULL;
	size_t cap = 0;

	pr_rimage_dec_init(&rd, d->sections ? &d->ri : NULL);
	pthread_mutex_lock(&pool->lock);
	while (pool->qi < d->nq) {
		struct pr_qres *r = &d->q[pool->qi], *p;
		size_t at, end, k;

		if (!pr_qres_split(r)) {
			pool->qi += 1;
			pool->left -= r->q->size;
			pthread_mutex_unlock(&pool->lock);
			pr_qres_decode(r, &rd);
			pthread_mutex_lock(&pool->lock);
			__atomic_add_fetch(&pool->done, 1, __ATOMIC_RELEASE);
			continue;
		}
		if (r->pissued - r->pmerged >= PR_PIECES_AHEAD) {
			pthread_cond_wait(&pool->cond, &pool->lock);
			continue;
		}
		at = pool->at;
		end = pr_qres_piece_end(r, at, pool->left);
		k = r->pissued++;
		pool->at = end;
		pool->left -= end - at;
		if (end >= r->q->size) {
			r->split_done = 1;
			pool->qi += 1;
			pool->at = 0;
		}
		pthread_mutex_unlock(&pool->lock);
		p = pr_qres_decode_alone(r, &rd, &buf, &cap, at, end);
		pthread_mutex_lock(&pool->lock);
		if (pr_pool_piece_done(r, k, p))
			__atomic_add_fetch(&pool->done, 1, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&pool->cond);
	}
	pthread_mutex_unlock(&pool->lock);
	free(buf);
	pr_rimage_dec_fini(&rd);
	return NULL;
}

static double pr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct pr_decode *pr_decode_run(struct pr_replay *rp)
{
	struct pr_pool pool;
	pthread_t tids[64];
	uint64_t total = 0;
	struct pr_decode *d;
	size_t i;
	int n, started = 0, progress;
	double t0 = pr_now();

	if (!rp)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->rp = rp;
	d->nq = rp->nq;
	d->q = calloc(rp->nq ? rp->nq : 1, sizeof(*d->q));
	if (!d->q) {
		free(d);
		return NULL;
	}
	if (getenv("PTREPLAY_READ") && !strcmp(getenv("PTREPLAY_READ"),
						"callback"))
		rp->opts.read_callback = 1;
	if (getenv("PTREPLAY_PIECE"))
		rp->opts.piece = strtoul(getenv("PTREPLAY_PIECE"), NULL, 0);
	if (getenv("PTREPLAY_DECODER") && !strcmp(getenv("PTREPLAY_DECODER"),
						  "insn"))
		rp->opts.insn_decoder = 1;
	/* loading touched the records around each AUXTRACE header (and
	 * the kernel maps pages around a fault): give them back, decoding
	 * reads the trace piece by piece
	 */
	if (rp->perf.pd.mapped)
		(void)madvise((void *)rp->perf.pd.buf, rp->perf.pd.size,
			      MADV_DONTNEED);
	d->stream = pr_stream_open(d, rp->opts.stream);
	d->sections = !rp->opts.read_callback &&
		      pr_rimage_init(&d->ri, &rp->store) == 0;
	for (i = 0; i < rp->nq; ++i) {
		d->q[i].rp = rp;
		d->q[i].q = &rp->q[i];
		d->q[i].sections = d->sections;
		d->q[i].index = i;
		d->q[i].stream = d->stream;
		total += rp->q[i].size;
		if (rp->opts.outputs & PR_OUT_EXPORT)
			d->q[i].x = pr_export_alloc(
				(rp->opts.chrome_trace ? PR_EXPORT_SLICES : 0) |
				(rp->opts.folded ? PR_EXPORT_STACKS : 0));
	}
	memset(&pool, 0, sizeof(pool));
	pool.d = d;
	pool.left = total;
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.cond, NULL);
	n = rp->opts.jobs > 0 ? rp->opts.jobs : 1;
	if (n > 64)
		n = 64;
	if ((size_t)n > rp->nq)
		n = (int)rp->nq;
	progress = rp->opts.progress < 0 ? isatty(2) : rp->opts.progress;
	pr_progress_bytes = 0;

	for (i = 1; i < (size_t)n; ++i)
		if (pthread_create(&tids[started], NULL, pr_worker, &pool) == 0)
			started += 1;
	if (!progress) {
		pr_worker(&pool);
	} else {
		pthread_t self;
		int have_self = !pthread_create(&self, NULL, pr_worker, &pool);

		if (!have_self)
			pr_worker(&pool);
		while (__atomic_load_n(&pool.done, __ATOMIC_ACQUIRE) < d->nq) {
			uint64_t b = __atomic_load_n(&pr_progress_bytes,
						     __ATOMIC_RELAXED);
			int pct = total ? (int)(b * 100 / total) : 100;
			int k;

			fprintf(stderr, "\r[");
			for (k = 0; k < 40; ++k)
				fputc(k < pct * 40 / 100 ? '#' : ' ', stderr);
			fprintf(stderr, "] %3d%%", pct > 100 ? 100 : pct);
			fflush(stderr);
			usleep(100000);
		}
		if (have_self)
			pthread_join(self, NULL);
		fprintf(stderr, "\r[########################################]"
			" 100%%\n");
	}
	for (i = 0; i < (size_t)started; ++i)
		pthread_join(tids[i], NULL);
	pthread_mutex_destroy(&pool.lock);
	pthread_cond_destroy(&pool.cond);
	pr_stream_close(d);
	d->seconds = pr_now() - t0;
	return d;
}

void pr_decode_free(struct pr_decode *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nq; ++i) {
		struct pr_qres *r = &d->q[i];

		free(r->flow.p);
		free(r->calls.p);
		free(r->prof);
		free(r->err);
		free(r->cur);
		free(r->sw);
		pr_export_free(r->x);
	}
	free(d->q);
	if (d->sections)
		pr_rimage_fini(&d->ri);
	free(d);
}

uint64_t pr_decode_unordered(const struct pr_decode *d)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; d && i < d->nq; ++i)
		n += d->q[i].nunordered;
	return n;
}

uint64_t pr_decode_suspect(const struct pr_decode *d)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; d && i < d->nq; ++i)
		n += d->q[i].nsuspect;
	return n;
}
