// SPDX-License-Identifier: GPL-2.0
/*
 * Start-at mode (ptsynth trace --start-on-signal): the signal names the
 * tracer accepts, and the start of a stream whose ground truth begins
 * mid-run: PSB, TSC, PSBEND, then MODE.Exec + TIP.PGE at the first
 * instruction; exec faults before it are counted, not modelled.
 */
#include "tap.h"
#include "gtbuild.h"
#include "synth.h"
#include "tracer.h"

#include <signal.h>

static const uint8_t nop[] = { 0x90 };
static const uint8_t sys[] = { 0x0f, 0x05 };

static void signal_names(void)
{
	static const struct {
		const char *s;
		int sig;
	} cases[] = {
		{ "USR1", SIGUSR1 }, { "SIGUSR2", SIGUSR2 }, { "usr1", SIGUSR1 },
		{ "sigalrm", SIGALRM }, { "10", 10 }, { "34", 34 },
		{ "TRAP", -1 }, { "SIGSTOP", -1 }, { "KILL", -1 }, { "5", -1 },
		{ "0", -1 }, { "65", -1 }, { "-1", -1 }, { "USR", -1 },
		{ "10x", -1 }, { "", -1 },
	};
	unsigned int i, good = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int sig = ps_trace_parse_signal(cases[i].s);

		if (sig == cases[i].sig)
			good++;
		else
			TAP_DIAG("'%s': %d, expected %d", cases[i].s, sig,
				 cases[i].sig);
	}
	TAP_OK(good == i,
	       "unit: start/stop signals by name or number; TRAP, STOP, KILL and bad names refused");
}

int main(void)
{
	static const enum pt_packet_type start[] = {
		ppt_psb, ppt_tsc, ppt_psbend, ppt_mode, ppt_tip_pge,
	};
	struct ps_synth_fault faults[3] = {
		{ .tid = 100, .tsc = 500 },	/* before the first insn ran */
		{ .tid = 100, .tsc = 900 },	/* (the warming of a JIT) */
		{ .tid = 100, .tsc = 2500 },	/* while the first one is stepped */
	};
	static struct pt_packet p[64];
	struct ps_synth_result res;
	struct ps_synth_opts o;
	struct gtb b = { 0 };
	unsigned int i;
	int n, pge = 0, pgd = 0;
	bool good_start = true;

	signal_names();

	/* the ground truth of a start-at run: mid-run, no COMM/MMAP first */
	b.tsc = 1000;
	gtb_insn(&b, 0x7f0000001000ULL, nop, 1);	/* tsc 2000 */
	gtb_insn(&b, 0x7f0000001001ULL, nop, 1);	/* tsc 3000 */
	gtb_insn(&b, 0x7f0000001002ULL, sys, 2);	/* tsc 4000 */
	gtb_finish(&b);
	ps_synth_opts_default(&o);
	o.faults = faults;
	o.nr_faults = 3;
	o.fault_tsc = true;
	if (ps_synth_run(&b.t, &o, &res))
		return 1;
	n = decode_packets(res.streams[0].buf.data, res.streams[0].buf.len,
			   p, 64);
	for (i = 0; i < sizeof(start) / sizeof(start[0]); i++)
		if ((int)i >= n || p[i].type != start[i])
			good_start = false;
	good_start = good_start && p[1].payload.tsc.tsc == 2000 &&
		     ip_apply(0, &p[4].payload.ip) == 0x7f0000001000ULL;
	TAP_OK(good_start,
	       "unit: a stream starting mid-run is PSB, TSC (first insn), PSBEND, MODE.Exec, TIP.PGE at the first insn");
	for (i = 0; (int)i < n; i++) {
		pge += p[i].type == ppt_tip_pge;
		pgd += p[i].type == ppt_tip_pgd;
	}
	TAP_OK(res.nr_faults_before == 2 && res.nr_faults == 1 &&
	       !res.nr_faults_dropped && pge == 2 && pgd == 2,
	       "unit: exec faults before the first insn are counted (%llu), not modelled; the one after it is (%llu)",
	       (unsigned long long)res.nr_faults_before,
	       (unsigned long long)res.nr_faults);
	ps_synth_result_free(&res);
	gtb_free(&b);
	return tap_failed ? 1 : 0;
}
