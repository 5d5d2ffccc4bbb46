// SPDX-License-Identifier: GPL-2.0
/*
 * perf and flowjit: code bytes for perf's Intel PT decoder.
 *
 * util/intel-pt.c asks here first whenever it needs the instructions at
 * an address: flowjit_pt__walk() walks them in the image live at the
 * decoder's time, straight from the store, and only if no image covers
 * the address does perf go on to its maps and dsos. The image store is
 * filled before decoding starts, from all flowjit records of the file
 * (perf_session__peek_events()), because the decoder's clock lags: it is
 * the last timing packet, older than the instructions that follow it, so
 * an image written after that packet and run before the next one must
 * already be in the store. Without a seekable file (a pipe) the store is
 * filled as the session delivers the records in time order.
 *
 * Each Intel PT queue has a struct flowjit_pt_queue: the thread its trace
 * is of and a struct flowjit_tie (libflowjit.h, "Revision switches tied
 * to trace events"). At each TIP.PGE util/intel-pt.c calls
 * flowjit_pt__resume(), which ties the thread's next exec fault image if
 * the trace resumes at its IP; the walk then looks code up at
 * flowjit_tie_time(): a page rewritten and run again within one timing
 * period decodes with its new bytes. The walk counts what it decoded by
 * revision and by how the revision answered, what it decoded from
 * revisions a lost record may have replaced (flowjit_store_suspect()), and
 * what it decoded from user JIT bytes that a newer image within the
 * clock's lag has not (flowjit_store_unordered()).
 *
 * Without a seekable file each record reaches flowjit_pt__early_event()
 * before the decoders run up to its time: flowjit records go into the
 * store and PERF_RECORD_LOST gives its window then. The records also
 * reach flowjit_pt__event() in time order: there user
 * JIT images get a map and symbol "jit:<pid>:<addr>" so that samples in
 * them have a name (eBPF programs have theirs from PERF_RECORD_KSYMBOL),
 * and util/intel-pt.c invalidates the instruction blocks it cached from
 * dsos over the image's range.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "store.h"
#include "decode.h"
#include "util/config.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/session.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "util/intel-pt-decoder/intel-pt-insn-decoder.h"
#include "base.h"

#define FJPT_HOWS	(FLOWJIT_TIE_LATE + 1)

/*
 * A small open addressing hash map of (a, b, c) keys: the revision a
 * thread last decoded a range from, and the counts of each revision.
 */
struct fjpt_slot {
	u64				a, b;
	u32				c;
	bool				used;
	const struct flowjit_rev	*rev;
	u64				insns;
	u64				suspect;
	u64				switches[FJPT_HOWS];
};

struct fjpt_map {
	struct fjpt_slot	*slots;
	size_t			nr;
	unsigned int		bits;	/* 1 << bits slots, if slots */
};

struct flowjit_pt {
	struct flowjit_store		*store;
	struct flowjit_store_reads	reads;	/* what the decoder read */
	struct perf_session		*session;
	bool				preloaded;
	/* lost records: windows from the previous record of each CPU */
	u64				*cpu_time;
	size_t				nr_cpu_time;
	u64				lost_gen;	/* changes when suspects may */
	bool				may_suspect;	/* windows or numbers missing */
	u64				missing_revs;
	/* what deleted queues decoded */
	struct flowjit_pt_stats		stats;
	struct fjpt_map			revs;	/* a: the revision's address */
};

struct flowjit_pt_queue {
	struct flowjit_pt		*fp;
	struct flowjit_tie		tie;
	struct fjpt_map			last;	/* a: asid, b: start, c: tid */
	/* instructions of one revision, thread and how, not counted yet */
	const struct flowjit_rev	*run;
	int				run_tid;
	enum flowjit_tie_how		run_how;
	bool				run_suspect;
	bool				run_checked;	/* suspect at run_time */
	u64				run_time;
	u64				run_gen;
	u64				run_insns;
	/* how far the real time may be ahead of the clock (-1: no bound) */
	u64				lag;
	/* whether a newer revision than uo_rev differs, up to uo_max */
	const struct flowjit_rev	*uo_rev;
	u64				uo_time, uo_max;
	bool				uo_page;
	u64				unordered;
	/* decoded from bytes only open ties made live, since the last doubt */
	u64				td_n;
	u64				in_doubt;
	u64				clock;	/* the last clock seen */
};

static size_t fjpt_hash(const struct fjpt_map *m, u64 a, u64 b, u32 c)
{
	return hash_64(hash_64(hash_64(a, 64) ^ b, 64) ^ c, m->bits);
}

static struct fjpt_slot *fjpt_find(const struct fjpt_map *m, u64 a, u64 b, u32 c)
{
	size_t mask = ((size_t)1 << m->bits) - 1, i;

	for (i = fjpt_hash(m, a, b, c);; i = (i + 1) & mask) {
		struct fjpt_slot *s = &m->slots[i];

		if (!s->used || (s->a == a && s->b == b && s->c == c))
			return s;
	}
}

/* Returns the slot of (@a, @b, @c), a new zeroed one if there was none; NULL if out of memory. */
static struct fjpt_slot *fjpt_get(struct fjpt_map *m, u64 a, u64 b, u32 c)
{
	struct fjpt_slot *s;

	if (m->slots) {
		s = fjpt_find(m, a, b, c);
		if (s->used)
			return s;
	}
	/* at most half full */
	if (!m->slots || 2 * (m->nr + 1) > ((size_t)1 << m->bits)) {
		struct fjpt_map bigger = { .bits = m->slots ? m->bits + 1 : 6 };
		size_t i;

		bigger.slots = calloc((size_t)1 << bigger.bits, sizeof(*bigger.slots));
		if (!bigger.slots)
			return NULL;
		for (i = 0; m->slots && i < ((size_t)1 << m->bits); i++)
			if (m->slots[i].used)
				*fjpt_find(&bigger, m->slots[i].a, m->slots[i].b,
					   m->slots[i].c) = m->slots[i];
		bigger.nr = m->nr;
		free(m->slots);
		*m = bigger;
	}
	s = fjpt_find(m, a, b, c);
	*s = (struct fjpt_slot){ .a = a, .b = b, .c = c, .used = true };
	m->nr++;
	return s;
}

static void fjpt_free(struct fjpt_map *m)
{
	zfree(&m->slots);
	m->nr = 0;
}

static int flowjit_pt__config(const char *var, const char *value, void *data)
{
	bool *on = data;

	if (!strcmp(var, "intel-pt.flowjit"))
		*on = perf_config_bool(var, value);
	return 0;
}

/* Whether lost records may have left revisions suspect changed: look again. */
static void flowjit_pt__suspects_changed(struct flowjit_pt *fp)
{
	struct flowjit_store_stats s;

	flowjit_store_stats(fp->store, &s);
	fp->may_suspect = s.lost_windows || s.missing_revs;
	fp->missing_revs = s.missing_revs;
	fp->lost_gen++;
}

/*
 * A record of @type of CPU @cpu ((u32)-1: not known) at perf time @time
 * (0 or (u64)-1: not known), in the order of its CPU's ring buffer. A
 * PERF_RECORD_LOST says records of that ring buffer were lost after the
 * previous record it holds: the store gets that window. The records of
 * a ring buffer whose CPU is not known (not sampled) cannot be told
 * apart, so their window starts at 0.
 */
static int flowjit_pt__ring_record(struct flowjit_pt *fp, u32 type, u32 cpu, u64 time)
{
	bool known = time && time != (u64)-1;
	int err;

	if (type == PERF_RECORD_LOST) {
		u64 from = 0, to = known ? time : (u64)-1;

		if (cpu < fp->nr_cpu_time)
			from = min(fp->cpu_time[cpu], to);
		err = flowjit_store_add_lost(fp->store, from, to);
		if (err)
			return err;
		pr_debug("flowjit: records of cpu %d lost in (%llu, %llu]\n", (int)cpu,
			 (unsigned long long)from, (unsigned long long)to);
		flowjit_pt__suspects_changed(fp);
	}
	/*
	 * PERF_RECORD_LOST_SAMPLES counts samples the hardware dropped
	 * (PEBS), not side-band records: no flowjit record is in it.
	 */
	if (!known || cpu == (u32)-1 || cpu >= 1U << 16)
		return 0;
	if (cpu >= fp->nr_cpu_time) {
		size_t nr = cpu + 1;
		u64 *t = realloc(fp->cpu_time, nr * sizeof(*t));

		if (!t)
			return -ENOMEM;
		memset(t + fp->nr_cpu_time, 0, (nr - fp->nr_cpu_time) * sizeof(*t));
		fp->cpu_time = t;
		fp->nr_cpu_time = nr;
	}
	fp->cpu_time[cpu] = time;
	return 0;
}

static int flowjit_pt__peek(struct perf_session *session, union perf_event *event,
			    u64 offset __maybe_unused, void *data)
{
	struct flowjit_pt *fp = data;
	struct perf_sample sample = { .time = 0 };
	int err;

	/* user types (AUXTRACE, FINISHED_ROUND, ...) are not in a ring buffer */
	if (event->header.type >= PERF_RECORD_USER_TYPE_START)
		return 0;
	if (evlist__parse_sample(session->evlist, event, &sample)) {
		sample.time = 0;
		sample.cpu = (u32)-1;
	}
	/* in file order: each ring buffer's records in their order */
	err = flowjit_pt__ring_record(fp, event->header.type, sample.cpu, sample.time);
	if (err || event->header.type != PERF_RECORD_FLOWJIT)
		return err;
	return flowjit_store__add_event(fp->store, event, sample.time, NULL);
}

static struct flowjit_pt *flowjit_pt__alloc(struct perf_session *session,
					    struct flowjit_store *st)
{
	struct flowjit_pt *fp = zalloc(sizeof(*fp));

	if (!fp)
		return NULL;
	fp->store = st ? st : flowjit_store_alloc();
	if (!fp->store) {
		free(fp);
		return NULL;
	}
	fp->session = session;
	flowjit_pt__suspects_changed(fp);
	return fp;
}

struct flowjit_pt *flowjit_pt__new_store(struct flowjit_store *st)
{
	if (!st)
		return NULL;
	return flowjit_pt__alloc(NULL, st);
}

struct flowjit_pt *flowjit_pt__new(struct perf_session *session)
{
	struct flowjit_pt *fp;
	struct evsel *evsel;
	bool on = true, recorded = false;

	/* not recorded with --flowjit: decode exactly as without flowjit */
	evlist__for_each_entry(session->evlist, evsel)
		recorded |= evsel->core.attr.flowjit;
	if (!recorded)
		return NULL;
	perf_config(flowjit_pt__config, &on);
	if (!on) {
		pr_debug("flowjit: intel-pt.flowjit is off: not using flowjit images\n");
		return NULL;
	}
	fp = flowjit_pt__alloc(session, NULL);
	if (!fp)
		return NULL;
	if (!perf_data__is_pipe(session->data) &&
	    !perf_session__peek_events(session, session->header.data_offset,
				       session->header.data_size, flowjit_pt__peek, fp)) {
		fp->preloaded = true;
	} else {
		/* start over in time order */
		flowjit_store_free(fp->store);
		fp->store = flowjit_store_alloc();
		if (!fp->store) {
			free(fp);
			return NULL;
		}
		fp->nr_cpu_time = 0;
		zfree(&fp->cpu_time);
	}
	flowjit_pt__suspects_changed(fp);
	return fp;
}

static int flowjit_pt__cmp_rev(const void *a, const void *b)
{
	const struct flowjit_rev *x = (*(const struct fjpt_slot * const *)a)->rev;
	const struct flowjit_rev *y = (*(const struct fjpt_slot * const *)b)->rev;

	if (x->asid != y->asid)
		return x->asid < y->asid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Up to @max (-1: all) lines of the revisions decoded from, by address */
static size_t flowjit_pt__fprintf_revs(const struct flowjit_pt *fp, int max, FILE *out)
{
	const struct fjpt_map *m = &fp->revs;
	const struct fjpt_slot **v;
	size_t i, n = 0, ret = 0;

	if (!max || !m->nr)
		return 0;
	v = calloc(m->nr, sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < ((size_t)1 << m->bits); i++)
		if (m->slots[i].used)
			v[n++] = &m->slots[i];
	qsort(v, n, sizeof(*v), flowjit_pt__cmp_rev);
	for (i = 0; i < n && (max < 0 || i < (size_t)max); i++) {
		const struct flowjit_rev *r = v[i]->rev;

		ret += fprintf(out, "flowjit:   %s asid %llu %#llx-%#llx",
			       flowjit_kind_name(r->kind), (unsigned long long)r->asid,
			       (unsigned long long)r->start, (unsigned long long)r->end);
		ret += fprintf(out, " rev %u pid %u tid %u time %llu:", r->revision, r->pid, r->tid,
			       (unsigned long long)r->time);
		ret += fprintf(out, " %llu instructions, %llu suspect;",
			       (unsigned long long)v[i]->insns,
			       (unsigned long long)v[i]->suspect);
		ret += fprintf(out, " switched to %llu by time, %llu by event, %llu late\n",
			       (unsigned long long)v[i]->switches[FLOWJIT_TIE_TIME],
			       (unsigned long long)v[i]->switches[FLOWJIT_TIE_EVENT],
			       (unsigned long long)v[i]->switches[FLOWJIT_TIE_LATE]);
	}
	if (i < n)
		ret += fprintf(out, "flowjit:   and %zu more revisions (-vv shows all)\n", n - i);
	free(v);
	return ret;
}

void flowjit_pt__stats(const struct flowjit_pt *fp, struct flowjit_pt_stats *s)
{
	*s = fp->stats;
	s->revs = fp->revs.nr;
}

size_t flowjit_pt__fprintf_stats(const struct flowjit_pt *fp, int revs, FILE *out)
{
	const struct flowjit_pt_stats *s = &fp->stats;
	struct flowjit_store_stats st;
	size_t ret;

	flowjit_store_stats(fp->store, &st);
	ret = flowjit_store__fprintf_stats(fp->store, &fp->reads, out);
	ret += fprintf(out, "flowjit: decoded %llu instructions from %zu revisions:",
		       (unsigned long long)(s->insns[FLOWJIT_TIE_TIME] +
					    s->insns[FLOWJIT_TIE_EVENT] +
					    s->insns[FLOWJIT_TIE_LATE]), fp->revs.nr);
	ret += fprintf(out, " %llu by time, %llu by event, %llu late;",
		       (unsigned long long)s->insns[FLOWJIT_TIE_TIME],
		       (unsigned long long)s->insns[FLOWJIT_TIE_EVENT],
		       (unsigned long long)s->insns[FLOWJIT_TIE_LATE]);
	ret += fprintf(out, " revision switches: %llu by time, %llu by event, %llu late;",
		       (unsigned long long)s->switches[FLOWJIT_TIE_TIME],
		       (unsigned long long)s->switches[FLOWJIT_TIE_EVENT],
		       (unsigned long long)s->switches[FLOWJIT_TIE_LATE]);
	ret += fprintf(out, " %llu of %llu trace resumes tied to a fault;",
		       (unsigned long long)s->tied, (unsigned long long)s->resumes);
	ret += fprintf(out, " %llu suspect (%llu lost windows, %llu revision numbers missing);",
		       (unsigned long long)s->suspect, (unsigned long long)st.lost_windows,
		       (unsigned long long)st.missing_revs);
	ret += fprintf(out, " %llu unordered;", (unsigned long long)s->unordered);
	ret += fprintf(out, " %llu in doubt\n", (unsigned long long)s->in_doubt);
	ret += flowjit_pt__fprintf_revs(fp, revs, out);
	if (st.delta_no_base || st.delta_bad) {
		ret += fprintf(out, "flowjit: warning: %llu delta records without",
			       (unsigned long long)(st.delta_no_base + st.delta_bad));
		ret += fprintf(out, " their base image");
		ret += fprintf(out, " (or with a result that fails its CRC-32C):");
		ret += fprintf(out, " their code is missing from their time on,");
		ret += fprintf(out, " never decoded from older bytes\n");
	}
	if (st.pinned) {
		ret += fprintf(out, "flowjit: warning: %llu images of pinned pages",
			       (unsigned long long)st.pinned);
		ret += fprintf(out, " (io_uring fixed buffers, O_DIRECT, RDMA):");
		ret += fprintf(out, " the kernel may change their code without a record;");
		ret += fprintf(out, " what was decoded from them is counted as suspect\n");
	}
	if (s->suspect) {
		ret += fprintf(out, "flowjit: warning: %llu instructions were decoded",
			       (unsigned long long)s->suspect);
		ret += fprintf(out, " from code images that a lost record may have replaced:");
		ret += fprintf(out, " they may not be the instructions that ran\n");
	}
	if (s->unordered) {
		ret += fprintf(out, "flowjit: warning: %llu instructions were decoded",
			       (unsigned long long)s->unordered);
		ret += fprintf(out, " from user JIT code that a newer image");
		ret += fprintf(out, " within the clock's lag has other bytes for");
		ret += fprintf(out, " (a thread that did not take its fault):");
		ret += fprintf(out, " they may not be the instructions that ran\n");
	}
	if (s->in_doubt) {
		ret += fprintf(out, "flowjit: warning: %llu instructions were decoded",
			       (unsigned long long)s->in_doubt);
		ret += fprintf(out, " from user JIT code a fault image made live at a trace");
		ret += fprintf(out, " resume that another resume at the fault's IP may have been");
		ret += fprintf(out, " (an interrupt there):");
		ret += fprintf(out, " they may not be the instructions that ran\n");
	}
	return ret;
}

void flowjit_pt__delete(struct flowjit_pt *fp)
{
	struct flowjit_store_stats s;

	if (!fp)
		return;
	flowjit_store_stats(fp->store, &s);
	/*
	 * always say what was dropped, and what was decoded from bytes that
	 * may be wrong: the decode may have suffered from it
	 */
	if (s.records && (verbose > 0 || flowjit_store__dropped(fp->store) || fp->stats.suspect ||
			  fp->stats.unordered || fp->stats.in_doubt))
		flowjit_pt__fprintf_stats(fp, verbose > 1 ? -1 : verbose > 0 ? 20 : 0, stderr);
	flowjit_store_free(fp->store);
	fjpt_free(&fp->revs);
	free(fp->cpu_time);
	free(fp);
}

struct flowjit_pt_queue *flowjit_pt__queue_new(struct flowjit_pt *fp)
{
	struct flowjit_pt_queue *q;

	if (!fp)
		return NULL;
	q = zalloc(sizeof(*q));
	if (!q)
		return NULL;
	q->fp = fp;
	flowjit_tie_init(&q->tie, fp->store);
	return q;
}

/* Count the run of instructions of one revision, thread and how. */
static void flowjit_pt__run_end(struct flowjit_pt_queue *q)
{
	struct flowjit_pt *fp = q->fp;
	struct fjpt_slot *s;
	u64 n = q->run_insns;

	if (!q->run || !n)
		return;
	q->run_insns = 0;
	fp->stats.insns[q->run_how] += n;
	if (q->run_suspect)
		fp->stats.suspect += n;
	s = fjpt_get(&fp->revs, (uintptr_t)q->run, 0, 0);
	if (!s)
		return;
	s->rev = q->run;
	s->insns += n;
	if (q->run_suspect)
		s->suspect += n;
}

/* Thread @tid decodes [@rev->start, ...) from @rev, which answered @how. */
static void flowjit_pt__switch(struct flowjit_pt_queue *q, const struct flowjit_rev *rev, int tid,
			       enum flowjit_tie_how how)
{
	struct fjpt_slot *last, *s;

	last = fjpt_get(&q->last, rev->asid, rev->start, (u32)tid);
	if (!last)
		return;
	if (last->rev && last->rev != rev) {
		q->fp->stats.switches[how]++;
		s = fjpt_get(&q->fp->revs, (uintptr_t)rev, 0, 0);
		if (s) {
			s->rev = rev;
			s->switches[how]++;
		}
	}
	last->rev = rev;
}

/*
 * Thread @tid decoded @n instructions from @rev, looked up at @time with
 * the decoder's clock at @clock.
 */
static void flowjit_pt__count(struct flowjit_pt_queue *q, const struct flowjit_rev *rev, int tid,
			      u64 clock, u64 time, u64 n)
{
	struct flowjit_pt *fp = q->fp;
	enum flowjit_tie_how how;

	if (!rev || !n)
		return;
	how = flowjit_tie_how(&q->tie, rev, clock);
	if (rev != q->run || tid != q->run_tid) {
		flowjit_pt__run_end(q);
		flowjit_pt__switch(q, rev, tid, how);
		q->run = rev;
		q->run_tid = tid;
		q->run_how = how;
		q->run_suspect = false;
		q->run_checked = false;
	} else if (how != q->run_how) {
		flowjit_pt__run_end(q);
		q->run_how = how;
	}
	/*
	 * A read is at the clock or later, up to the clock's lag: ask about
	 * the latest time it may be at. Without a bound (no MTC) take the
	 * lookup time: the trace cannot say more.
	 */
	if (q->lag != (u64)-1 && clock + q->lag > time)
		time = clock + q->lag;
	/*
	 * Suspect at one time, suspect at every later one: ask again only
	 * for a later time, or when lost records or revision numbers changed.
	 */
	if (!q->run_suspect && fp->may_suspect &&
	    (!q->run_checked || time > q->run_time || q->run_gen != fp->lost_gen)) {
		if (flowjit_store_suspect(fp->store, rev, time)) {
			flowjit_pt__run_end(q);
			q->run_suspect = true;
		}
		q->run_checked = true;
		q->run_time = time;
		q->run_gen = fp->lost_gen;
	}
	q->run_insns += n;
}

/* After a tie call: count what waited for ties put in doubt, forget it once none is open. */
static void flowjit_pt__tie_check(struct flowjit_pt_queue *q)
{
	if (flowjit_tie_doubt(&q->tie)) {
		q->in_doubt += q->td_n;
		q->td_n = 0;
	}
	if (!q->tie.nopen)
		q->td_n = 0;
}

void flowjit_pt__queue_delete(struct flowjit_pt_queue *q)
{
	if (!q)
		return;
	flowjit_pt__run_end(q);
	/* the TIP.PGE of an open tie's fault may be past the trace's end */
	flowjit_tie_end(&q->tie, q->clock);
	flowjit_pt__tie_check(q);
	q->fp->stats.unordered += q->unordered;
	q->fp->stats.in_doubt += q->in_doubt;
	q->fp->stats.resumes += q->tie.resumes;
	q->fp->stats.tied += q->tie.tied;
	fjpt_free(&q->last);
	free(q);
}

/* the address space of @ip for process @pid at @time */
static bool flowjit_pt__asid(struct flowjit_pt *fp, int pid, bool kernel, u64 time, u64 *asid)
{
	uint64_t a = FLOWJIT_ASID_KERNEL;

	if (!kernel && (pid < 0 || flowjit_store_pid_asid(fp->store, pid, time, &a)))
		return false;
	*asid = a;
	return true;
}

bool flowjit_pt__resume(struct flowjit_pt_queue *q, int pid, int tid, u64 ip, u64 time,
			u64 time_max, u64 insns)
{
	const struct flowjit_rev *tied;
	u64 asid;

	if (!q || tid < 0)
		return false;
	/* the thread's address space at the time it is at (exec changes it) */
	if (!flowjit_pt__asid(q->fp, pid, false, flowjit_tie_time(&q->tie, time), &asid))
		return false;
	flowjit_tie_thread(&q->tie, asid, tid);
	q->lag = time_max == (u64)-1 || time_max < time ? (u64)-1 : time_max - time;
	q->clock = time;
	tied = flowjit_tie_resume(&q->tie, ip, time, time_max, insns);
	flowjit_pt__tie_check(q);
	return tied;
}

void flowjit_pt__error(struct flowjit_pt_queue *q)
{
	if (!q || !q->tie.nopen)
		return;
	q->in_doubt += q->td_n;
	q->td_n = 0;
}

void flowjit_pt__leave(struct flowjit_pt_queue *q, u64 time)
{
	if (!q)
		return;
	flowjit_tie_leave(&q->tie, time);
	q->clock = time;
}

/*
 * The instruction of @len bytes @bytes at @ip of @asid was decoded from
 * revision @rev (NULL: maybe from more than one) while ties are open:
 * where an open tie made it live and the bytes at its alternative time
 * (flowjit_tie_alt()) differ, it waits for the ties to close or be put in
 * doubt.
 */
static void flowjit_pt__tied(struct flowjit_pt_queue *q, const struct flowjit_rev *rev,
			     u64 asid, u64 ip, const u8 *bytes, size_t len, u64 clock, bool late)
{
	unsigned char b[INTEL_PT_INSN_BUF_SZ];
	u64 alt, prev = (u64)-1;
	unsigned int i;
	size_t nb;

	len = min_t(size_t, len, sizeof(b));
	for (i = 0; i < q->tie.nopen; i++) {
		alt = flowjit_tie_alt(&q->tie, i, clock);
		if ((rev && rev->time <= alt) || alt == prev)
			continue;
		prev = alt;
		nb = flowjit_store_read(q->fp->store, asid, ip, alt, late, b, len, NULL);
		if (nb != len || memcmp(bytes, b, len)) {
			q->td_n++;
			return;
		}
	}
}

/*
 * User JIT code: a map of its own named jit:<pid>:<addr>, for symbols.
 * Made when the record is delivered, and again when the decoder walks
 * the code if an mmap record replaced it or the decoder got there first.
 */
static int flowjit_pt__name_user_code(struct flowjit_pt *fp, const struct flowjit_rev *rev,
				      u32 pid)
{
	struct addr_location al;
	struct machine *machine;
	struct thread *thread;
	struct symbol *sym;
	struct dso *dso;
	struct map *map;
	char name[64];
	int err = -ENOMEM;

	if (!fp->session)
		return 0;
	machine = &fp->session->machines.host;
	thread = machine__find_thread(machine, pid, pid);
	if (!thread)
		return 0;
	snprintf(name, sizeof(name), "jit:%u:%#llx", pid, (unsigned long long)rev->start);
	/* named already (the name is the same for every revision there) */
	addr_location__init(&al);
	if (thread__find_map(thread, PERF_RECORD_MISC_USER, rev->start, &al) &&
	    map__start(al.map) == rev->start && map__end(al.map) == rev->end &&
	    map__dso(al.map) && !strcmp(dso__long_name(map__dso(al.map)), name))
		err = 0;
	addr_location__exit(&al);
	if (!err)
		goto out;
	dso = dso__new(name);
	if (!dso)
		goto out;
	map = map__new2(rev->start, dso);
	if (!map)
		goto out_dso;
	map__set_end(map, rev->end);
	sym = symbol__new(map__map_ip(map, rev->start), rev->end - rev->start, 0, 0, name);
	if (!sym)
		goto out_map;
	dso__insert_symbol(dso, sym);
	dso__set_loaded(dso);
	err = thread__insert_map(thread, map);
out_map:
	map__put(map);
out_dso:
	dso__put(dso);
out:
	thread__put(thread);
	return err;
}

/*
 * The user JIT instruction at [@ip, @end) was decoded from @rev at lookup
 * time @time; the real time is at most @clock_max: does a newer revision
 * live by then have other bytes there? (Asked of the whole page once per
 * revision and time, then of each instruction only if it does.)
 */
static void flowjit_pt__unordered(struct flowjit_pt_queue *q, const struct flowjit_rev *rev,
				  u64 ip, u64 end, u64 time, u64 clock_max)
{
	struct flowjit_store *st = q->fp->store;

	if (clock_max == (u64)-1 || clock_max <= time || rev->kind != FLOWJIT_KIND_USER_JIT)
		return;
	if (rev != q->uo_rev || time != q->uo_time || clock_max != q->uo_max) {
		q->uo_rev = rev;
		q->uo_time = time;
		q->uo_max = clock_max;
		q->uo_page = flowjit_store_unordered(st, rev, rev->start, rev->end, clock_max);
	}
	if (q->uo_page && flowjit_store_unordered(st, rev, ip, end, clock_max))
		q->unordered++;
}

/*
 * The latest real time of the instructions a walk at lookup time @time
 * decodes for thread @tid, where util/intel-pt.c knows no bound (no MTC:
 * the clock moves only at TSC packets). What a thread runs before its
 * next exec fault's TIP.PGE ran before that fault's time
 * (flowjit_tie_next_fault()), so a thread that runs alone is never
 * unordered against its own faults. With no such fault (none left, an
 * overflow, faults without an IP, another thread) nothing bounds it and
 * every newer revision may be what ran. ptreplay also takes the next TSC
 * packet as a bound; perf's decoder does not look ahead for it, so perf
 * warns of more such instructions than ptreplay does, never of fewer.
 */
static u64 flowjit_pt__max_no_mtc(struct flowjit_pt_queue *q, int tid, u64 time)
{
	u64 f = UINT64_MAX;

	if (q->tie.thread && q->tie.tid == (u32)tid)
		f = flowjit_tie_next_fault(&q->tie, time);
	if (f == UINT64_MAX || !f)
		return (u64)-2;
	return f - 1;
}

int flowjit_pt__walk(struct flowjit_pt_queue *q, int pid, int tid, bool kernel, u64 clock,
		     u64 clock_max, bool late, struct intel_pt_insn *insn, u64 *insn_cnt,
		     u64 *ip, u64 to_ip, u64 max_insn_cnt)
{
	unsigned char buf[INTEL_PT_INSN_BUF_SZ];
	const struct flowjit_rev *rev, *cur;
	struct flowjit_pt *fp;
	const u8 *bytes;
	size_t len, n;		/* bytes valid at *ip */
	u64 asid, time, done = 0;
	int ret;

	if (!q)
		return FLOWJIT_WALK_NONE;
	fp = q->fp;
	/* the decoder's clock, raised to the last fault image tied */
	time = flowjit_tie_time(&q->tie, clock);
	q->clock = clock;
	if (!flowjit_pt__asid(fp, pid, kernel, time, &asid))
		return FLOWJIT_WALK_NONE;
	len = flowjit_store_span(fp->store, asid, *ip, time, late, &bytes, &rev, &fp->reads);
	if (!len)
		return FLOWJIT_WALK_NONE;
	if (!kernel && clock != (u64)-1 && clock_max == (u64)-1)
		clock_max = flowjit_pt__max_no_mtc(q, tid, time);
	if (!kernel && rev->kind == FLOWJIT_KIND_USER_JIT)
		flowjit_pt__name_user_code(fp, rev, pid);
	cur = rev;
	while (1) {
		/*
		 * Decode in place in the bytes one lookup answered; at their
		 * end, in those of the next lookup; near their end, from a
		 * copy of what is live there (maybe from the next image).
		 */
		if (!len) {
			len = flowjit_store_span(fp->store, asid, *ip, time, late, &bytes, &rev,
						 &fp->reads);
			if (!len) {
				ret = FLOWJIT_WALK_NONE;
				break;
			}
		}
		if (rev != cur) {
			flowjit_pt__count(q, cur, tid, clock, time, done);
			done = 0;
			cur = rev;
		}
		if (len < INTEL_PT_INSN_BUF_SZ) {
			len = flowjit_store_read(fp->store, asid, *ip, time, late, buf,
						 sizeof(buf), &fp->reads);
			if (!len) {
				ret = FLOWJIT_WALK_NONE;
				break;
			}
			bytes = buf;
		}
		n = min_t(size_t, len, INTEL_PT_INSN_BUF_SZ);
		if (intel_pt_get_insn(bytes, n, 1, insn)) {
			/* maybe the rest is in an image that is not live yet */
			if (!late && n < INTEL_PT_INSN_BUF_SZ) {
				ret = FLOWJIT_WALK_NONE;
				break;
			}
			pr_debug("flowjit: cannot decode the image bytes at %#llx\n",
				 (unsigned long long)*ip);
			ret = -EINVAL;
			break;
		}
		insn->emulated_ptwrite = false;
		*insn_cnt += 1;
		done++;
		ret = 0;
		if (!kernel)
			flowjit_pt__unordered(q, cur, *ip, *ip + insn->length, time, clock_max);
		/* a copy may span two revisions: compare it whatever made them live */
		if (q->tie.nopen && (bytes == buf || cur->time > clock))
			flowjit_pt__tied(q, bytes == buf ? NULL : cur, asid, *ip, bytes,
					 insn->length, clock, late);
		if (insn->branch != INTEL_PT_BR_NO_BRANCH)
			break;
		if (max_insn_cnt && *insn_cnt >= max_insn_cnt)
			break;
		*ip += insn->length;
		if (to_ip && *ip == to_ip) {
			insn->length = 0;
			insn->op = INTEL_PT_OP_OTHER;
			break;
		}
		if (bytes == buf) {
			/* past the copied instruction: in place again */
			len = 0;
		} else {
			bytes += insn->length;
			len -= insn->length;
		}
	}
	flowjit_pt__count(q, cur, tid, clock, time, done);
	return ret;
}

int flowjit_pt__event(struct flowjit_pt *fp, union perf_event *event,
		      struct perf_sample *sample, u64 *asid, u64 *start, u64 *end)
{
	const struct flowjit_rev *rev = NULL;
	struct flowjit_chunk chunk;

	*start = *end = 0;
	/* in the store already (preloaded, or flowjit_pt__early_event()) */
	if (!flowjit__parse(event, &chunk, NULL) && chunk.rec.op == FLOWJIT_OP_IMAGE &&
	    chunk.rec.chunk_off + chunk.rec.chunk_len == chunk.rec.len) {
		/* the last chunk: the image is live from now on */
		rev = flowjit_store_find(fp->store, chunk.rec.asid, chunk.rec.addr,
					 sample->time);
		if (rev && (rev->start != chunk.rec.addr || rev->time != sample->time))
			rev = NULL;
	}
	if (!rev)
		return 0;
	*asid = rev->asid;
	*start = rev->start;
	*end = rev->end;
	if (rev->asid != FLOWJIT_ASID_KERNEL && rev->kind == FLOWJIT_KIND_USER_JIT)
		flowjit_pt__name_user_code(fp, rev, rev->pid);	/* names are best effort */
	return 0;
}

int flowjit_pt__early_event(struct flowjit_pt *fp, union perf_event *event,
			    struct perf_sample *sample)
{
	const struct flowjit_rev *rev = NULL;
	int err;

	/* preloaded: the store has every record, and every lost window */
	if (!fp || fp->preloaded || event->header.type >= PERF_RECORD_USER_TYPE_START)
		return 0;
	err = flowjit_pt__ring_record(fp, event->header.type, sample->cpu, sample->time);
	if (err || event->header.type != PERF_RECORD_FLOWJIT)
		return err;
	/*
	 * The store answers by time: a decoder whose clock is still behind
	 * the record sees its image only through a tie or a later-image
	 * lookup, as when the store was preloaded.
	 */
	err = flowjit_store__add_event(fp->store, event, sample->time, &rev);
	if (err)	/* out of memory: decode on without this image */
		pr_debug("flowjit: record dropped: %d\n", err);
	/* a revision number seen, or one seen missing */
	if (rev && rev->kind == FLOWJIT_KIND_USER_JIT) {
		struct flowjit_store_stats s;

		flowjit_store_stats(fp->store, &s);
		if (s.missing_revs != fp->missing_revs)
			flowjit_pt__suspects_changed(fp);
	}
	return 0;
}
