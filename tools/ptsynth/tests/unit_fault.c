// SPDX-License-Identifier: GPL-2.0
/*
 * An exec fault with hardware time, from the sideband's perf time to the
 * packets: FUP + TIP.PGD at the faulting instruction, MTCs while the
 * kernel takes the fault, TIP.PGE at the same IP, no TSC; the flowjit
 * image's time, through the time map, falls inside the fault's window,
 * --hw-fault-tail-ns before its end. Written early in the fault, an MTC
 * after it comes before the TIP.PGE and a decoder that picks code by
 * time knows the new image when the instruction runs; written just
 * before the return, the last MTC is older than the image and only the
 * fault's event can tell the decoder (flowjit_tie).
 */
#include "tap.h"
#include "gtbuild.h"
#include "events.h"
#include "hwtime.h"
#include "perfdata.h"
#include "synth.h"

static const uint8_t nop[] = { 0x90 };

#define RATIO	100	/* TSC ticks per CTC tick: 200/2 */
#define PERIOD	3	/* an MTC every 8 CTC ticks */

struct fault_run {
	int mtc, tsc, fup, pgd, pge;
	uint64_t img, t_mtc, start, end, insn;
	size_t rec, nr_faults;
};

/* Synthesise the fault with its image @tail_ns before its end. */
static int run(uint64_t tail_ns, struct fault_run *fr)
{
	static struct pt_packet p[1024];
	struct ps_hw_costs costs = { 0 };
	struct ps_hw_costs_ns ns = {
		.insn_ticks = 1, .exec = 100000, .syscall = 1000, .fault = 1300,
		.fault_tail = tail_ns,
		.signal = 2000, .sw = 2000, .irq = 1000,
	};
	const struct gt_timeconv *tc;
	struct ps_synth_fault f;
	struct ps_ev_list ev = { 0 };
	struct ps_synth_result res;
	struct ps_synth_opts o;
	struct ps_hwtime t;
	struct gtr b;
	uint64_t img, ip = 0x7f0000000010ULL, ctc_time = 0, delta = 0, t_mtc = 0;
	uint32_t last_ctc = 0;
	int i, n, fup = -1, pgd = -1, pge = -1, tsc = 0, mtc = 0;

	memset(&b, 0, sizeof(b));
	b.t.hdr.tc.time_shift = 31;
	b.t.hdr.tc.time_mult = 894784853;	/* 2.4 GHz: TSC/CTC 200/2 */
	tc = &b.t.hdr.tc;
	for (i = 0; i < 8; i++)
		gtr_insn(&b, 100, 1000000 + i * 70000, ip + i, nop, 1);
	/* the sideband's time of the image: in the step of insn 5 */
	f.tid = 100;
	f.tsc = ps_perf_time_to_tsc(ps_perf_tsc_to_time(1000000 + 5 * 70000 +
							 20000, tc), tc);
	if (ps_hw_costs_from_ns(&costs, tc, &ns) ||
	    ps_ev_add_faults(&ev, &b.t, &f, 1) ||
	    ps_hwtime_build(&t, &b.t, &costs, 0, &ev))
		return 1;
	ps_synth_opts_default(&o);
	o.hw = &t;
	o.events = &ev;
	o.mtc_period = 3;
	o.cbr = true;
	if (ps_synth_run(&b.t, &o, &res))
		return 1;
	img = ps_hwtime_map(&t, f.tsc);
	n = decode_packets(res.streams[0].buf.data, res.streams[0].buf.len,
			   p, 1024);
	for (i = 0; i < n; i++) {
		/* time as perf's decoder computes it (see unit_mtc) */
		if (p[i].type == ppt_tma) {
			ctc_time = p[i - 1].payload.tsc.tsc - p[i].payload.tma.fc -
				   (p[i].payload.tma.ctc & ((1 << PERIOD) - 1)) *
				   RATIO;
			last_ctc = (p[i].payload.tma.ctc >> PERIOD) & 0xff;
			delta = 0;
		}
		if (p[i].type == ppt_mtc && pge < 0) {
			delta += (uint64_t)((p[i].payload.mtc.ctc - last_ctc) &
					    0xff) << PERIOD;
			last_ctc = p[i].payload.mtc.ctc;
			t_mtc = ctc_time + delta * RATIO;
		}
		if (p[i].type == ppt_fup && fup < 0)
			fup = i;
		if (p[i].type == ppt_tip_pgd && fup >= 0 && pgd < 0)
			pgd = i;
		if (pgd >= 0 && pge < 0) {
			tsc += p[i].type == ppt_tsc;
			mtc += p[i].type == ppt_mtc;
			if (p[i].type == ppt_tip_pge)
				pge = i;
		}
	}
	*fr = (struct fault_run){
		.mtc = mtc, .tsc = tsc, .fup = fup, .pgd = pgd, .pge = pge,
		.img = img, .t_mtc = t_mtc, .rec = ev.nr == 1 ? ev.ev[0].rec : 0,
		.start = ev.nr ? ev.ev[0].hw_start : 0,
		.end = ev.nr ? ev.ev[0].hw_end : 0, .insn = t.hw[5],
		.nr_faults = res.nr_faults,
	};
	ps_synth_result_free(&res);
	ps_hwtime_free(&t);
	ps_ev_free(&ev);
	gtr_free(&b);
	return 0;
}

int main(void)
{
	struct fault_run early, late, dflt;

	if (run(1200, &early) || run(1, &late) || run(PS_HW_FAULT_TAIL_NS, &dflt))
		return 1;
	TAP_OK(dflt.rec == 5 && dflt.nr_faults == 1 && dflt.fup >= 0 &&
	       dflt.pgd == dflt.fup + 1 && dflt.pge > dflt.pgd && !dflt.tsc &&
	       dflt.mtc >= 3,
	       "unit: fault: FUP + TIP.PGD, %d MTC, TIP.PGE, no TSC (%d)",
	       dflt.mtc, dflt.tsc);
	TAP_OK(dflt.img > dflt.start && dflt.img < dflt.end && dflt.img < dflt.insn &&
	       dflt.end - dflt.img >= 590 && dflt.end - dflt.img <= 610,
	       "unit: fault: the image lands in the fault's window, %d ns (%llu ticks at 2.4 GHz) before it returns",
	       PS_HW_FAULT_TAIL_NS, (unsigned long long)(dflt.end - dflt.img));
	TAP_OK(early.mtc && early.t_mtc >= early.img,
	       "unit: fault: written early (1200 ns before the return), the last MTC before TIP.PGE (%llu) is past the image (%llu): a decoder by time knows it",
	       (unsigned long long)early.t_mtc, (unsigned long long)early.img);
	TAP_OK(late.mtc && late.t_mtc < late.img,
	       "unit: fault: written just before the return, the last MTC before TIP.PGE (%llu) is before the image (%llu): only the fault's event tells",
	       (unsigned long long)late.t_mtc, (unsigned long long)late.img);
	return tap_failed ? 1 : 0;
}
