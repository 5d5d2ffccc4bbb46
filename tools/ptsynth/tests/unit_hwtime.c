// SPDX-License-Identifier: GPL-2.0
/*
 * The hardware time map (hwtime.c): instruction, system call and fault
 * costs; monotonic; a sideband time inside a system call's or an exec
 * fault's step lands inside its kernel window; anchors of interleaved
 * threads only go forward; perf time -> TSC is the exact inverse of
 * perf's conversion; the identity map changes nothing.
 */
#include <errno.h>

#include "tap.h"
#include "gtbuild.h"
#include "events.h"
#include "hwtime.h"
#include "perfdata.h"
#include "synth.h"

static const uint8_t nop[] = { 0x90 };
static const uint8_t sys[] = { 0x0f, 0x05 };

static const struct ps_hw_costs costs = {
	.insn = 1, .exec = 24000, .syscall = 2400, .fault = 3120, .fault_tail = 600,
	.signal = 4800,
	.sw = 4800, .irq = 2400,
};

/*
 * One thread: an exec'd program's comm and mapping, a nop, a syscall
 * with an MMAP logged after it, a nop whose fetch faults, three nops;
 * single steps 70 000 TSC ticks apart.
 */
static void build_one(struct gtr *b)
{
	uint64_t ip = 0x401000, tsc;
	int i;

	memset(b, 0, sizeof(*b));
	b->t.hdr.tc.time_shift = 31;
	b->t.hdr.tc.time_mult = 894784853;	/* 2.4 GHz */
	b->t.hdr.tc.time_zero = 1000;
	gtr_add(b, GT_COMM, sizeof(struct gt_comm), 100, 1000);
	gtr_add(b, GT_MMAP, sizeof(struct gt_mmap), 100, 2000);
	gtr_insn(b, 100, 10000, ip, nop, 1);			/* 2 */
	gtr_insn(b, 100, 80000, ip + 1, sys, 2);		/* 3 */
	gtr_add(b, GT_SYSCALL, sizeof(struct gt_syscall), 100, 140000);
	gtr_add(b, GT_MMAP, sizeof(struct gt_mmap), 100, 141000); /* 5 */
	for (i = 0, tsc = 150000; i < 4; i++, tsc += 70000)
		gtr_insn(b, 100, tsc, ip + 3 + i, nop, 1);	/* 6..9 */
}

static bool monotonic(const struct ps_hwtime *t, uint64_t from, uint64_t to)
{
	uint64_t u, last = 0;

	for (u = from; u < to; u += 37) {
		if (ps_hwtime_map(t, u) < last)
			return false;
		last = ps_hwtime_map(t, u);
	}
	return true;
}

static void one_thread(void)
{
	struct ps_synth_fault f[] = {
		{ .tid = 100, .tsc = 5000 },	/* before its first insn */
		{ .tid = 100, .tsc = 180000 },	/* fetching insn 6 */
		{ .tid = 999, .tsc = 180000 },	/* unknown thread */
	};
	const struct gt_timeconv *tc;
	struct ps_ev_list ev = { 0 };
	struct ps_hwtime t;
	struct gtr b;
	uint64_t win, fm, mm, pt;
	struct ps_ev *e;

	build_one(&b);
	tc = &b.t.hdr.tc;
	if (ps_ev_add_faults(&ev, &b.t, f, 3) || ps_hwtime_build(&t, &b.t,
							      &costs, 0, &ev))
		return;
	e = &ev.ev[0];
	TAP_OK(ev.nr == 1 && e->rec == 6 && ev.nr_faults_before == 1 &&
	       ev.nr_faults_dropped == 1,
	       "unit: hwtime: an exec fault belongs to the insn being stepped into (rec %zu), one before the first insn and one of an unknown thread are not",
	       ev.nr ? e->rec : 0);
	TAP_OK(t.pre[2] == 1000 && t.hw[2] == 1000 + costs.exec &&
	       t.hw[3] == t.hw[2] + costs.insn && t.hw[4] == t.hw[3] + costs.insn,
	       "unit: hwtime: the trace starts in the exec's kernel window, then one insn per %llu tick(s)",
	       (unsigned long long)costs.insn);
	win = t.hw[4] + costs.syscall;
	TAP_OK(t.start[6] == win && e->hw_start == win &&
	       e->hw_end == win + costs.fault && t.hw[6] == e->hw_end &&
	       t.hw[7] == t.hw[6] + costs.insn,
	       "unit: hwtime: a system call's kernel window, then the fault's window, then the insn");
	fm = ps_hwtime_map(&t, 180000);
	TAP_OK(fm > e->hw_start && fm < e->hw_end,
	       "unit: hwtime: the fault's sideband time maps inside its window (%llu in %llu..%llu)",
	       (unsigned long long)fm, (unsigned long long)e->hw_start,
	       (unsigned long long)e->hw_end);
	TAP_OK(fm == e->hw_end - costs.fault_tail,
	       "unit: hwtime: the fault's image is written %llu ticks before the fault returns",
	       (unsigned long long)(e->hw_end - fm));
	mm = t.hw[5];
	pt = ps_hwtime_perf(&t, tc, ps_perf_tsc_to_time(100000, tc));
	TAP_OK(mm > t.hw[4] && mm < win && pt > ps_perf_tsc_to_time(t.hw[4], tc) &&
	       pt < ps_perf_tsc_to_time(win, tc),
	       "unit: hwtime: records and perf times of a system call's step land in its kernel window");
	TAP_OK(t.hw[0] < t.hw[1] && t.hw[1] < t.hw[2],
	       "unit: hwtime: comm and mmap before the first insn keep their order, inside the exec");
	TAP_OK(monotonic(&t, 0, 800000), "unit: hwtime: the map is monotonic");
	ps_hwtime_free(&t);
	ps_ev_free(&ev);
	gtr_free(&b);
}

/*
 * Start-at mode: the program ran untraced from its exec (comm at 1000)
 * to the start signal; a mapping (2000) and an exec fault image (5000)
 * of that free run happened before tracing was enabled, so they map
 * before the trace's start (its PSB and TSC), which is where the tracer
 * stopped the thread for the first insn (10000), not at the exec.
 */
static void start_at(void)
{
	struct ps_synth_fault f[] = { { .tid = 100, .tsc = 5000 } };
	struct ps_ev_list ev = { 0 };
	struct ps_hwtime t;
	struct gtr b;

	build_one(&b);
	b.t.hdr.flags |= GT_FLAG_START_SIGNAL;
	if (ps_ev_add_faults(&ev, &b.t, f, 1) || ps_hwtime_build(&t, &b.t,
							      &costs, 0, &ev))
		return;
	TAP_OK(ev.nr_faults_before == 1 && t.pre[2] == 10000 &&
	       t.hw[2] == 10000 + costs.exec,
	       "unit: hwtime: start-at mode: the trace starts where the tracer stopped the thread at the start signal (%llu), then the delivery",
	       (unsigned long long)t.pre[2]);
	TAP_OK(ps_hwtime_map(&t, 5000) < t.pre[2] && t.hw[1] < t.pre[2] &&
	       ps_hwtime_map(&t, 5000) == 5000 && t.hw[1] == 2000,
	       "unit: hwtime: start-at mode: an exec fault image and a mapping of the free run land before the trace starts, at their own times");
	TAP_OK(monotonic(&t, 0, 800000),
	       "unit: hwtime: start-at mode: the map is monotonic");
	ps_hwtime_free(&t);
	ps_ev_free(&ev);
	gtr_free(&b);
}

/*
 * Two threads stepped at once: a GT_INSN's TSC (its stop) can be below
 * the one written before it.  Anchors never go back; a switch costs when
 * the threads share a CPU, not when each has its own core.
 */
static void two_threads(void)
{
	struct ps_hwtime t, own;
	struct gtr b;
	size_t i;
	bool fwd = true;

	memset(&b, 0, sizeof(b));
	b.t.hdr.tc.time_shift = 31;
	b.t.hdr.tc.time_mult = 894784853;
	gtr_insn(&b, 100, 1000, 0x401000, nop, 1);
	gtr_insn(&b, 101, 900, 0x402000, nop, 1);
	gtr_insn(&b, 100, 2000, 0x401001, nop, 1);
	gtr_insn(&b, 100, 3000, 0x401002, nop, 1);
	if (ps_hwtime_build(&t, &b.t, &costs, 1, NULL) ||
	    ps_hwtime_build(&own, &b.t, &costs, 0, NULL))
		return;
	for (i = 1; i < t.nr_a; i++)
		if (t.a[i].gt < t.a[i - 1].gt || t.a[i].hw < t.a[i - 1].hw)
			fwd = false;
	TAP_OK(fwd && monotonic(&t, 0, 10000),
	       "unit: hwtime: interleaved threads: anchors and map only go forward");
	TAP_OK(t.hw[0] == 1000 + costs.exec &&
	       t.hw[1] == t.hw[0] + costs.insn + costs.sw &&
	       t.hw[2] == t.hw[1] + costs.insn + costs.sw &&
	       t.hw[3] == t.hw[2] + costs.insn,
	       "unit: hwtime: on one CPU a thread switch costs %llu ticks",
	       (unsigned long long)costs.sw);
	TAP_OK(own.hw[1] == own.hw[0] + costs.insn &&
	       own.hw[3] == own.hw[0] + 3 * costs.insn,
	       "unit: hwtime: threads on cores of their own switch for free");
	ps_hwtime_free(&t);
	ps_hwtime_free(&own);
	gtr_free(&b);
}

/*
 * A fault whose sideband time lies below an anchor of another thread
 * logged before it: f puts it before the fault began (the anchors only
 * go forward), the image's perf time still lands in the fault's window.
 */
static void fault_behind_other_thread(void)
{
	struct ps_ev_list ev = { 0 };
	struct ps_synth_fault f;
	const struct gt_timeconv *tc;
	struct ps_hwtime t;
	struct gtr b;
	uint64_t ft, pt;
	struct ps_ev *e;

	memset(&b, 0, sizeof(b));
	b.t.hdr.tc.time_shift = 31;
	b.t.hdr.tc.time_mult = 894784853;
	tc = &b.t.hdr.tc;
	gtr_insn(&b, 100, 1000, 0x401000, nop, 1);	/* 0 */
	gtr_insn(&b, 101, 50000, 0x402000, nop, 1);	/* 1 */
	gtr_insn(&b, 100, 2000, 0x401001, nop, 1);	/* 2: its fetch faults */
	gtr_insn(&b, 100, 60000, 0x401002, nop, 1);	/* 3 */
	/* the image's perf time, between thread 100's stops 1 and 2 */
	ft = ps_perf_tsc_to_time(20000, tc);
	f.tid = 100;
	f.tsc = ps_perf_time_to_tsc(ft, tc);
	if (ps_ev_add_faults(&ev, &b.t, &f, 1) || ps_hwtime_build(&t, &b.t,
							      &costs, 0, &ev))
		return;
	e = &ev.ev[0];
	pt = ps_hwtime_perf(&t, tc, ft);
	TAP_OK(ev.nr == 1 && e->rec == 2 &&
	       ps_hwtime_map(&t, f.tsc) < e->hw_start &&
	       pt > ps_perf_tsc_to_time(e->hw_start, tc) &&
	       pt < ps_perf_tsc_to_time(e->hw_end, tc) &&
	       pt == ps_perf_tsc_to_time(e->hw_end - costs.fault_tail, tc),
	       "unit: hwtime: a fault logged behind another thread's later stop: its image still lands in its window");
	TAP_OK(monotonic(&t, 0, 100000),
	       "unit: hwtime: the map stays monotonic around it");
	ps_hwtime_free(&t);
	ps_ev_free(&ev);
	gtr_free(&b);
}

/*
 * The inverse of perf's TSC -> time: smallest TSC at or after a time,
 * for a TSC faster than 1 GHz (several ticks per ns) and slower (some
 * ns have no tick).
 */
static void inverse(const struct gt_timeconv *tc, const char *what)
{
	uint64_t seed = 42, tsc, t, back;
	int i, bad = 0;

	for (i = 0; i < 100000; i++) {
		tsc = ps_ev_rand(&seed) >> 14;
		t = ps_perf_tsc_to_time(tsc, tc);
		back = ps_perf_time_to_tsc(t, tc);
		if (back > tsc || ps_perf_tsc_to_time(back, tc) != t ||
		    (back && ps_perf_tsc_to_time(back - 1, tc) >= t))
			bad++;
		t += ps_ev_rand(&seed) % 3;
		back = ps_perf_time_to_tsc(t, tc);
		if (ps_perf_tsc_to_time(back, tc) < t ||
		    (back && ps_perf_tsc_to_time(back - 1, tc) >= t))
			bad++;
	}
	TAP_OK(!bad,
	       "unit: hwtime: perf time -> TSC is the smallest TSC at that time, %s (%d bad)",
	       what, bad);
}

static void identity(void)
{
	struct ps_hwtime t;
	struct gtr b;
	uint64_t seed = 7, x;
	int i, bad = 0;

	build_one(&b);
	if (ps_hwtime_build(&t, &b.t, NULL, 0, NULL))
		return;
	for (i = 0; i < 1000; i++) {
		x = ps_ev_rand(&seed) >> 16;
		if (ps_hwtime_map(&t, x) != x ||
		    ps_hwtime_perf(&t, &b.t.hdr.tc, x) != x)
			bad++;
	}
	TAP_OK(!bad && t.hw[6] == 150000,
	       "unit: hwtime: without costs (--timing=tsc) every time is the tracer's");
	ps_hwtime_free(&t);
	gtr_free(&b);
}

int main(void)
{
	struct gt_timeconv fast = { .time_shift = 31, .time_mult = 894784853,
				    .time_zero = 123456 };
	struct gt_timeconv slow = { .time_shift = 10, .time_mult = 3000,
				    .time_zero = 5000 };
	/* a guest's: its TSC ran before its sched clock began */
	struct gt_timeconv guest = { .time_shift = 31, .time_mult = 827188396,
				     .time_zero = (uint64_t)-336915126 };

	one_thread();
	start_at();
	two_threads();
	fault_behind_other_thread();
	inverse(&fast, "2.4 GHz TSC");
	inverse(&slow, "0.34 GHz TSC");
	inverse(&guest, "2.6 GHz TSC, negative time_zero");
	identity();
	return tap_failed ? 1 : 0;
}
