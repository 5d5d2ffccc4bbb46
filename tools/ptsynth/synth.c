// SPDX-License-Identifier: GPL-2.0
/*
 * synth.c - turn a ground-truth execution into Intel PT packet streams
 *
 * Model (see README.rst): user-only tracing (CPL filter), TraceEn set at
 * exec.  Conditional branches produce TNT bits, indirect branches and
 * returns TIP, far transfers (syscall, int...) TIP.PGD with the IP
 * suppressed, re-entry to user space TIP.PGE, asynchronous events (signal
 * delivery, preemption, exec faults and interrupts of events.h) FUP +
 * TIP.PGD.  PSB+ is inserted every psb_period bytes at the next
 * instruction boundary.  Time is hwtime.h's: the time map's hardware
 * time of each record, or the tracer's own.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "events.h"
#include "gt.h"
#include "hwtime.h"
#include "packet.h"
#include "synth.h"

#define RETSTACK_MAX	64
#define MAX_STREAMS	256
#define MAX_THREADS	1024

struct stream_state {
	struct ps_stream ps;	/* enabled: PacketEn, user mode */
	struct ps_synth_stream *out;
	const struct ps_synth_opts *o;
	struct ps_synth_result *res;
	bool trace_en;		/* TraceEn: initial PSB+ emitted */
	uint64_t retstack[RETSTACK_MAX];
	int ret_n;
	uint64_t nr_insn;
	int cur_tid;		/* per-cpu: thread currently running */
};

struct thread_state {
	int tid, pid;
	struct stream_state *s;
	bool pending;		/* insn executed, outcome not yet emitted */
	uint64_t ip;
	struct insn_info info;
	bool exited;
};

struct ps_synth {
	const struct gt_trace *gt;
	const struct ps_synth_opts *o;
	struct ps_synth_result *res;
	struct stream_state *ss;
	int nr_ss;
	uint32_t ctc_n, ctc_d;	/* TSC/CTC ratio for MTC */
	uint8_t cbr;
	struct thread_state *ts;
	int nr_ts;
	size_t cur_rec;
	const struct ps_hwtime *hw;
	struct ps_ev_list *ev;
	size_t next_ev;		/* next of ev to emit */
};

void ps_synth_opts_default(struct ps_synth_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->psb_period = 4096;
	o->nr_cpus = 1;
	o->ovf_at = -1;
	o->ovf_len = 32;
	o->mtc_period = -1;
	o->cyc_thresh = -1;
}

/* PSB+: return compression starts again from an empty stack */
static void ps_synth_emit_psb_plus(struct stream_state *s, uint64_t ip)
{
	ps_stream_psb(&s->ps, ip);
	s->ret_n = 0;
}

/* ---- instruction flow ---- */

static void ps_synth_ret_push(struct stream_state *s, uint64_t ip)
{
	if (s->ret_n == RETSTACK_MAX) {
		memmove(s->retstack, s->retstack + 1,
			(RETSTACK_MAX - 1) * sizeof(s->retstack[0]));
		s->ret_n--;
	}
	s->retstack[s->ret_n++] = ip;
}

static void ps_synth_resolve_ret(struct stream_state *s, uint64_t next_ip)
{
	if (s->o->retcomp && s->ret_n &&
	    s->retstack[s->ret_n - 1] == next_ip) {
		s->ret_n--;
		ps_stream_tnt(&s->ps, true);
		return;
	}
	/* conservative: never compress against a stack we may not share */
	s->ret_n = 0;
	ps_stream_ip(&s->ps, ppt_tip, next_ip);
}

/* Emit what the pending instruction of @th tells a decoder. */
static void ps_synth_resolve(struct thread_state *th, uint64_t next_ip,
			     bool known)
{
	struct stream_state *s = th->s;
	const struct insn_info *in = &th->info;
	uint64_t fall = th->ip + in->len;

	if (!th->pending)
		return;
	th->pending = false;
	switch (in->cls) {
	case IC_JCC:
		if (known && next_ip != fall && next_ip != in->target)
			fprintf(stderr, "ptsynth: warning: jcc at %#lx went to %#lx\n",
				(unsigned long)th->ip, (unsigned long)next_ip);
		ps_stream_tnt(&s->ps, known && next_ip != fall);
		break;
	case IC_CALL:
		ps_synth_ret_push(s, fall);
		break;
	case IC_CALL_IND:
		ps_synth_ret_push(s, fall);
		/* fall through */
	case IC_JMP_IND:
		if (known)
			ps_stream_ip(&s->ps, ppt_tip, next_ip);
		break;
	case IC_RET:
		if (known)
			ps_synth_resolve_ret(s, next_ip);
		break;
	case IC_FAR:
		ps_stream_pgd(&s->ps);
		break;
	default:
		break;
	}
}

static void ps_synth_ovf_boundary(struct stream_state *s, uint64_t ip)
{
	const struct ps_synth_opts *o = s->o;
	int64_t idx = s->nr_insn;

	if (o->ovf_at < 0)
		return;
	if (idx == o->ovf_at) {
		ps_stream_tnt_flush(&s->ps);
		s->ps.lost = true;
	}
	if (s->ps.lost && idx == o->ovf_at + (int64_t)o->ovf_len) {
		s->ps.lost = false;
		s->ps.tnt = 0;
		s->ps.tnt_n = 0;
		s->ret_n = 0;
		ps_stream_simple(&s->ps, ppt_ovf);
		s->ps.last_ip = 0;
		if (s->ps.enabled)
			ps_stream_ip(&s->ps, ppt_fup, ip);
		s->res->ovf_done = true;
		s->res->ovf_resume_idx = idx;
	}
}

/*
 * The stream of GT_INSN @r: at its first instruction tracing starts
 * (TraceEn 0 -> 1 at the exec, or when the thread is first switched in:
 * PSB+ with packets off), then time passes to the thread's return to
 * user mode at the instruction.
 */
static void ps_synth_stream_begin(struct ps_synth *sy, struct stream_state *s,
				  size_t r)
{
	if (!s->trace_en) {
		ps_stream_time(&s->ps, sy->hw->pre[r]);
		s->out->first_tsc = sy->hw->pre[r];
		ps_synth_emit_psb_plus(s, 0);
		s->trace_en = true;
	}
	ps_stream_time(&s->ps, sy->hw->start[r]);
}

/*
 * The events in front of GT_INSN @r of @th (events.h): an interrupt at
 * the boundary, the instruction's fetch faulting (a flowjit snapshot of
 * the page it is on).  With user-only tracing each is FUP (the IP of the
 * instruction, not executed yet) + TIP.PGD at its start, MODE.Exec +
 * TIP.PGE at the same IP when the kernel returns; the instruction's own
 * packets follow.  Hardware sends no TSC there: time passes in MTCs
 * (while TraceEn is 1 they go on in the kernel).  o->fault_tsc
 * (--timing=tsc-fault) puts the fault's time in a TSC packet instead,
 * see README.rst.
 */
static void ps_synth_events(struct ps_synth *sy, struct thread_state *th,
			    size_t r, uint64_t ip)
{
	struct stream_state *s = th->s;
	struct ps_ev_list *ev = sy->ev;
	bool tsc;

	while (sy->next_ev < ev->nr && ev->ev[sy->next_ev].rec <= r) {
		const struct ps_ev *e = &ev->ev[sy->next_ev++];

		if (e->rec != r)
			continue;
		if (!s->ps.enabled || s->ps.lost) {
			if (e->type == PS_EV_FAULT)
				s->res->nr_faults_dropped++;
			continue;
		}
		tsc = e->type == PS_EV_FAULT && sy->o->fault_tsc &&
		      e->hw_end > s->ps.tsc;
		ps_stream_time(&s->ps, e->hw_start);
		ps_stream_fup_pgd(&s->ps, ip);
		ps_stream_time(&s->ps, e->hw_end);
		if (tsc)
			ps_stream_tsc(&s->ps);
		ps_stream_pge(&s->ps, ip);
		if (e->type == PS_EV_FAULT)
			s->res->nr_faults++;
		else
			s->res->nr_irqs++;
	}
}

static void ps_synth_thread_insn(struct ps_synth *sy, struct thread_state *th,
				 size_t r, uint64_t ip,
				 const struct insn_info *info)
{
	struct stream_state *s = th->s;
	const struct ps_synth_opts *o = s->o;
	uint64_t t = sy->hw->hw[r];

	ps_synth_resolve(th, ip, true);
	ps_synth_stream_begin(sy, s, r);
	ps_synth_ovf_boundary(s, ip);
	if (!s->ps.enabled)
		ps_stream_pge(&s->ps, ip);
	else if (ps_stream_psb_due(&s->ps, o->psb_period))
		ps_synth_emit_psb_plus(s, ip);
	ps_synth_events(sy, th, r, ip);
	ps_stream_time(&s->ps, t);
	th->pending = true;
	th->ip = ip;
	th->info = *info;
	s->nr_insn++;
	s->out->last_tsc = t;
	s->res->nr_insns++;
}

/* Asynchronous exit from user mode (signal, preemption): FUP + TIP.PGD. */
static void ps_synth_thread_async(struct thread_state *th, uint64_t resume_ip,
				  uint64_t tsc)
{
	struct stream_state *s = th->s;

	ps_synth_resolve(th, resume_ip, true);
	ps_stream_time(&s->ps, tsc);
	if (s->ps.enabled)
		ps_stream_fup_pgd(&s->ps, resume_ip);
}

static void ps_synth_thread_end(struct thread_state *th)
{
	struct stream_state *s = th->s;

	if (th->exited)
		return;
	th->exited = true;
	if (th->pending && th->info.cls != IC_FAR) {
		/* killed: we cannot know where it would have gone */
		fprintf(stderr, "ptsynth: warning: thread %d ended after a non-far insn at %#lx\n",
			th->tid, (unsigned long)th->ip);
		th->pending = false;
		if (s->ps.enabled)
			ps_stream_fup_pgd(&s->ps, th->ip + th->info.len);
		return;
	}
	ps_synth_resolve(th, 0, false);
}

/* ---- driver ---- */

static struct thread_state *ps_synth_get_thread(struct ps_synth *sy, int pid,
						int tid)
{
	struct thread_state *th;
	int i;

	for (i = 0; i < sy->nr_ts; i++)
		if (sy->ts[i].tid == tid)
			return &sy->ts[i];
	if (sy->nr_ts == MAX_THREADS) {
		fprintf(stderr, "ptsynth: too many threads\n");
		return NULL;
	}
	th = &sy->ts[sy->nr_ts++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->pid = pid;
	return th;
}

static int ps_synth_new_stream(struct ps_synth *sy, int cpu, int pid, int tid)
{
	struct ps_synth_result *res = sy->res;
	struct stream_state *ss;
	int err;
	struct ps_synth_stream *st;

	if (res->nr_streams == MAX_STREAMS) {
		fprintf(stderr, "ptsynth: too many streams\n");
		return -ENOSPC;
	}
	st = &res->streams[res->nr_streams];
	memset(st, 0, sizeof(*st));
	st->idx = res->nr_streams;
	st->cpu = cpu;
	st->pid = pid;
	st->tid = tid;
	res->nr_streams++;
	ss = &sy->ss[sy->nr_ss++];
	memset(ss, 0, sizeof(*ss));
	ss->out = st;
	ss->o = sy->o;
	ss->res = res;
	ss->cur_tid = -1;
	err = ps_stream_init(&ss->ps, &st->buf,
			     sy->o->long_tnt ? PS_TNT64_MAX : PS_TNT8_MAX,
			     "ptsynth");
	if (!err && sy->o->mtc_period >= 0)
		ps_stream_set_mtc(&ss->ps, sy->o->mtc_period, sy->ctc_n, sy->ctc_d);
	ps_stream_set_cbr(&ss->ps, sy->cbr);
	ps_stream_set_cyc(&ss->ps, sy->o->cyc_thresh);
	return err;
}

static int ps_synth_add_switch(struct ps_synth *sy, struct stream_state *s,
			       bool out, struct thread_state *th,
			       struct thread_state *other, uint64_t tsc)
{
	struct ps_synth_result *res = sy->res;
	struct ps_synth_switch *sw;

	sw = realloc(res->switches, (res->nr_switches + 1) * sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	res->switches = sw;
	sw = &sw[res->nr_switches++];
	sw->tsc = tsc;
	sw->cpu = s->out->cpu;
	sw->out = out;
	sw->pid = th->pid;
	sw->tid = th->tid;
	sw->next_prev_pid = other ? other->pid : -1;
	sw->next_prev_tid = other ? other->tid : -1;
	return 0;
}

/* IP at which @tid resumes after record @from, for a switch out. */
static bool ps_synth_next_ip_of(struct ps_synth *sy, int tid, uint64_t *ip)
{
	size_t i;

	for (i = sy->cur_rec; i < sy->gt->nr_recs; i++) {
		const struct gt_rec *r = sy->gt->recs[i];

		if ((int)r->tid != tid)
			continue;
		if (r->type == GT_INSN) {
			*ip = ((const struct gt_insn *)r)->ip;
			return true;
		}
		if (r->type == GT_SIGNAL) {
			*ip = ((const struct gt_signal *)r)->resume_ip;
			return true;
		}
		if (r->type == GT_EXIT)
			return false;
	}
	return false;
}

static struct thread_state *ps_synth_find_ts(struct ps_synth *sy, int tid)
{
	int i;

	for (i = 0; i < sy->nr_ts; i++)
		if (sy->ts[i].tid == tid)
			return &sy->ts[i];
	return NULL;
}

/*
 * The time of a switch to GT_INSN @r on @s: the middle of the switch's
 * hardware time window, or (the tracer's time) half-way between the two
 * threads' instructions.  The first thread of a CPU already runs when
 * tracing starts: its switch in comes before the stream's first PSB+
 * (at @r's pre time with hardware time), as hardware tracing starts
 * while the thread is on the CPU.
 */
static uint64_t ps_synth_switch_time(struct ps_synth *sy,
				     struct stream_state *s, size_t r)
{
	uint64_t pre = sy->hw->pre[r], start = sy->hw->start[r];
	uint64_t last = s->out->last_tsc;

	if (pre < start)
		return s->trace_en ? pre + (start - pre) / 2 : pre - 1;
	return last && last < start ? last + (start - last) / 2 : start - 1;
}

/*
 * per-cpu: @th is about to run GT_INSN @r on @s; switch the previous
 * thread out: its asynchronous exit (FUP + TIP.PGD) when the switch
 * starts, perf scheduling the event out (TraceEn 1 -> 0: no packets, no
 * MTC) and in (TraceEn 0 -> 1: TSC, TMA, CBR) at the switch; the new
 * thread's TIP.PGE follows when it is back in user mode.
 */
static int ps_synth_cpu_switch(struct ps_synth *sy, struct stream_state *s,
			       struct thread_state *th, size_t r)
{
	struct thread_state *prev = ps_synth_find_ts(sy, s->cur_tid);
	uint64_t ip, sw_tsc, in_tsc;

	if (s->cur_tid == th->tid)
		return 0;
	sw_tsc = ps_synth_switch_time(sy, s, r);
	in_tsc = sy->hw->pre[r] < sy->hw->start[r] ? sw_tsc : sy->hw->start[r];
	if (prev) {
		if (sy->hw->pre[r] < sy->hw->start[r])
			ps_stream_time(&s->ps, sy->hw->pre[r]);
		if (!prev->exited && ps_synth_next_ip_of(sy, prev->tid, &ip))
			ps_synth_thread_async(prev, ip, prev->s->ps.tsc);
		else
			ps_synth_thread_end(prev);
		if (ps_synth_add_switch(sy, s, true, prev, th, sw_tsc))
			return -ENOMEM;
	}
	if (ps_synth_add_switch(sy, s, false, th, prev, sw_tsc))
		return -ENOMEM;
	s->cur_tid = th->tid;
	if (s->trace_en) {
		ps_stream_time(&s->ps, in_tsc > sw_tsc ? sw_tsc : in_tsc);
		ps_stream_trace_en(&s->ps, in_tsc);
	} else {
		ps_stream_time(&s->ps, in_tsc);
	}
	return 0;
}

static int ps_synth_attach_stream(struct ps_synth *sy, struct thread_state *th)
{
	const struct ps_synth_opts *o = sy->o;
	int cpu, err;

	if (th->s)
		return 0;
	if (o->per_cpu) {
		cpu = (sy->nr_ts - 1) % (o->nr_cpus > 0 ? o->nr_cpus : 1);
		while (sy->res->nr_streams <= cpu) {
			err = ps_synth_new_stream(sy, sy->res->nr_streams,
						  -1, -1);
			if (err)
				return err;
		}
	} else {
		err = ps_synth_new_stream(sy, -1, th->pid, th->tid);
		if (err)
			return err;
		cpu = sy->res->nr_streams - 1;
	}
	th->s = &sy->ss[cpu];
	return 0;
}

static int ps_synth_do_insn(struct ps_synth *sy, const struct gt_insn *r)
{
	struct thread_state *th = ps_synth_get_thread(sy, r->h.pid, r->h.tid);
	struct insn_info info;
	int err;

	if (!th)
		return -ENOMEM;
	err = ps_synth_attach_stream(sy, th);
	if (err)
		return err;
	if (classify(r->bytes, r->len ? r->len : GT_MAX_INSN, r->ip, &info) &&
	    classify_fallback(r->bytes, GT_MAX_INSN, r->len, &info)) {
		fprintf(stderr, "ptsynth: undecodable insn at %#lx\n",
			(unsigned long)r->ip);
		return -EINVAL;
	}
	if (sy->o->per_cpu) {
		err = ps_synth_cpu_switch(sy, th->s, th, sy->cur_rec);
		if (err)
			return err;
	}
	ps_synth_thread_insn(sy, th, sy->cur_rec, r->ip, &info);
	return th->s->ps.err;
}

static int ps_synth_do_record(struct ps_synth *sy, const struct gt_rec *r)
{
	struct thread_state *th;

	switch (r->type) {
	case GT_INSN:
		return ps_synth_do_insn(sy, (const struct gt_insn *)r);
	case GT_SIGNAL:
		th = ps_synth_find_ts(sy, r->tid);
		if (th && th->s && (!sy->o->per_cpu || th->s->cur_tid == th->tid))
			ps_synth_thread_async(th, ((const struct gt_signal *)r)->resume_ip,
					      sy->hw->hw[sy->cur_rec]);
		return 0;
	case GT_EXIT:
		th = ps_synth_find_ts(sy, r->tid);
		if (th && th->s)
			ps_synth_thread_end(th);
		return 0;
	default:
		return 0;
	}
}

/*
 * The time and the events of the run: @o's, else the tracer's time and
 * @o->faults at their own times, into @own_hw and @own_ev.  Returns 0 or
 * -ENOMEM.
 */
static int ps_synth_time(struct ps_synth *sy, struct ps_hwtime *own_hw,
			 struct ps_ev_list *own_ev)
{
	const struct ps_synth_opts *o = sy->o;
	int err = 0;

	sy->ev = o->events;
	if (!sy->ev) {
		sy->ev = own_ev;
		err = ps_ev_add_faults(own_ev, sy->gt, o->faults, o->nr_faults);
		ps_ev_sort(own_ev);
	}
	sy->hw = o->hw;
	if (!err && !sy->hw) {
		sy->hw = own_hw;
		err = ps_hwtime_build(own_hw, sy->gt, NULL, 0, sy->ev);
	}
	sy->res->nr_faults_before = sy->ev->nr_faults_before;
	sy->res->nr_faults_dropped = sy->ev->nr_faults_dropped;
	return err;
}

/* The TSC/CTC ratio of MTC and the CBR; 0 or -EINVAL/-ERANGE. */
static int ps_synth_ratios(struct ps_synth *sy)
{
	const struct gt_timeconv *tc = &sy->gt->hdr.tc;
	int err;

	if (sy->o->mtc_period >= 0) {
		err = ps_stream_ctc_ratio(tc, &sy->ctc_n, &sy->ctc_d);
		if (err) {
			fprintf(stderr, "ptsynth: no TSC/CTC ratio for MTC from the time conversion (time_mult %u, time_shift %u)\n",
				tc->time_mult, tc->time_shift);
			return err;
		}
		sy->res->ctc_n = sy->ctc_n;
		sy->res->ctc_d = sy->ctc_d;
	}
	if (sy->o->cbr || sy->o->cyc_thresh >= 0) {
		err = ps_stream_cbr_ratio(tc, &sy->cbr);
		if (err) {
			fprintf(stderr, "ptsynth: no core:bus ratio from the time conversion (time_mult %u, time_shift %u)\n",
				tc->time_mult, tc->time_shift);
			return err;
		}
		sy->res->cbr = sy->cbr;
	}
	return 0;
}

/* Flush and count the streams; returns the first stream error. */
static int ps_synth_finish(struct ps_synth *sy, int err)
{
	struct ps_synth_result *res = sy->res;
	int i;

	for (i = 0; i < sy->nr_ts && !err; i++)
		if (sy->ts[i].s)
			ps_synth_thread_end(&sy->ts[i]);
	for (i = 0; i < sy->nr_ss && !err; i++) {
		ps_stream_tnt_flush(&sy->ss[i].ps);
		err = sy->ss[i].ps.err;
	}
	for (i = 0; i < sy->nr_ss; i++) {
		res->nr_packets += sy->ss[i].ps.nr_packets;
		res->nr_psb += sy->ss[i].ps.nr_psb;
		res->nr_mtc += sy->ss[i].ps.nr_mtc;
		res->nr_cyc += sy->ss[i].ps.nr_cyc;
		ps_stream_exit(&sy->ss[i].ps);
	}
	return err;
}

int ps_synth_run(const struct gt_trace *gt, const struct ps_synth_opts *o,
		 struct ps_synth_result *res)
{
	struct ps_ev_list own_ev = { 0 };
	struct ps_hwtime own_hw = { 0 };
	struct ps_synth sy;
	int err;

	memset(res, 0, sizeof(*res));
	memset(&sy, 0, sizeof(sy));
	sy.gt = gt;
	sy.o = o;
	sy.res = res;
	res->streams = calloc(MAX_STREAMS, sizeof(*res->streams));
	sy.ss = calloc(MAX_STREAMS, sizeof(*sy.ss));
	sy.ts = calloc(MAX_THREADS, sizeof(*sy.ts));
	if (!res->streams || !sy.ss || !sy.ts || classify_init()) {
		err = -ENOMEM;
		goto out;
	}
	err = ps_synth_time(&sy, &own_hw, &own_ev);
	if (!err)
		err = ps_synth_ratios(&sy);
	if (err)
		goto out;
	for (sy.cur_rec = 0; sy.cur_rec < gt->nr_recs && !err; sy.cur_rec++)
		err = ps_synth_do_record(&sy, gt->recs[sy.cur_rec]);
	err = ps_synth_finish(&sy, err);
out:
	ps_hwtime_free(&own_hw);
	ps_ev_free(&own_ev);
	free(sy.ss);
	free(sy.ts);
	return err;
}

void ps_synth_result_free(struct ps_synth_result *res)
{
	int i;

	for (i = 0; i < res->nr_streams; i++)
		free(res->streams[i].buf.data);
	free(res->streams);
	free(res->switches);
	memset(res, 0, sizeof(*res));
}
