// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU layout with hardware time: two threads on one CPU.  The first
 * thread already runs when tracing starts (its SWITCH in comes before the
 * stream's first PSB+); a switch is the old thread's FUP + TIP.PGD, the
 * SWITCH out/in records inside the switch's time window, TSC + TMA + CBR
 * at the switch in (TraceEn 0 -> 1), and the new thread's TIP.PGE after.
 */
#include "tap.h"
#include "gtbuild.h"
#include "events.h"
#include "hwtime.h"
#include "synth.h"

static const uint8_t nop[] = { 0x90 };

static const struct ps_hw_costs costs = {
	.insn = 1, .exec = 240000, .syscall = 2400, .fault = 3120,
	.signal = 4800, .sw = 48000, .irq = 2400,
};

int main(void)
{
	static struct pt_packet p[4096];
	struct ps_synth_result res;
	struct ps_synth_opts o;
	struct ps_hwtime t;
	struct gtr b;
	const struct ps_synth_switch *sw;
	uint64_t first_psb_tsc = 0, tsc_after = 0, in_time;
	int i, n, nr_psb = 0, fup = -1, pgd = -1, tsc_i = -1, tma = -1,
	    cbr = -1, pge = -1;
	bool after_switch = false;

	memset(&b, 0, sizeof(b));
	b.t.hdr.tc.time_shift = 31;
	b.t.hdr.tc.time_mult = 894784853;	/* 2.4 GHz: TSC/CTC 200/2 */
	for (i = 0; i < 20; i++)
		gtr_insn(&b, 100, 1000000 + i * 70000, 0x401000 + i, nop, 1);
	for (i = 0; i < 20; i++)
		gtr_insn(&b, 101, 3000000 + i * 70000, 0x402000 + i, nop, 1);
	if (ps_hwtime_build(&t, &b.t, &costs, 1, NULL))
		return 1;
	ps_synth_opts_default(&o);
	o.per_cpu = true;
	o.nr_cpus = 1;
	o.hw = &t;
	o.mtc_period = 3;
	o.cbr = true;
	if (ps_synth_run(&b.t, &o, &res) || res.nr_switches != 3)
		return 1;
	sw = res.switches;
	n = decode_packets(res.streams[0].buf.data, res.streams[0].buf.len,
			   p, 4096);
	for (i = 0; i < n; i++) {
		if (p[i].type == ppt_psb && !nr_psb++)
			first_psb_tsc = p[i + 1].payload.tsc.tsc;
		if (p[i].type == ppt_fup && fup < 0)
			fup = i;
		if (p[i].type == ppt_tip_pgd && fup >= 0 && pgd < 0)
			pgd = i;
		if (p[i].type == ppt_tsc && pgd >= 0 && tsc_i < 0) {
			tsc_i = i;
			tsc_after = p[i].payload.tsc.tsc;
			after_switch = true;
		}
		if (after_switch && p[i].type == ppt_tma && tma < 0)
			tma = i;
		if (after_switch && p[i].type == ppt_cbr && cbr < 0)
			cbr = i;
		if (after_switch && p[i].type == ppt_tip_pge && pge < 0)
			pge = i;
	}
	TAP_OK(!sw[0].out && sw[0].tid == 100 && sw[0].tsc < first_psb_tsc &&
	       first_psb_tsc == t.pre[0],
	       "unit: per-cpu: the first thread's SWITCH in is before the first PSB+ (%llu < %llu)",
	       (unsigned long long)sw[0].tsc,
	       (unsigned long long)first_psb_tsc);
	in_time = sw[2].tsc;
	TAP_OK(sw[1].out && sw[1].tid == 100 && !sw[2].out && sw[2].tid == 101 &&
	       sw[1].tsc > t.hw[19] && sw[1].tsc <= in_time &&
	       in_time < t.start[20] && t.start[20] - t.pre[20] == costs.sw,
	       "unit: per-cpu: SWITCH out and in fall inside the switch's window");
	TAP_OK(fup > 0 && pgd == fup + 1 && tsc_i > pgd && tma == tsc_i + 1 &&
	       cbr == tma + 1 && pge > cbr && tsc_after == in_time,
	       "unit: per-cpu: FUP + TIP.PGD, then TSC TMA CBR at the switch in, then TIP.PGE");
	ps_synth_result_free(&res);
	ps_hwtime_free(&t);
	gtr_free(&b);
	return tap_failed ? 1 : 0;
}
