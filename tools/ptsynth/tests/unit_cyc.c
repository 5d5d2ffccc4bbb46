// SPDX-License-Identifier: GPL-2.0
/*
 * CYC (Intel SDM Vol. 3C, "Cycle-Accurate Mode"): a CYC goes in front of
 * the CYC-eligible packets (TNT, TIP*, FUP, MODE.Exec, MTC) outside PSB+,
 * with the cycles since the last CYC; the first counts from TraceEn 0 ->
 * 1; a TNT's gives the time of its first branch; at most one per cycle
 * and none before CycThresh allows.  A decoder adding up the CYCs gets
 * back the time of every packet they precede.
 */
#include "tap.h"
#include "gtbuild.h"
#include "packet.h"

#define N	200	/* TSC/CTC = 100 */
#define D	2
#define PERIOD	3	/* an MTC every 800 ticks: 1600, 2400, ... */

static bool eligible(enum pt_packet_type t)
{
	return t == ppt_tnt_8 || t == ppt_tnt_64 || t == ppt_tip ||
	       t == ppt_tip_pge || t == ppt_tip_pgd || t == ppt_fup ||
	       t == ppt_mode || t == ppt_mtc;
}

/* The stream of the test, CYC threshold @thresh */
static int run(int thresh, struct pt_packet *p, int max)
{
	struct ps_buf buf = { 0 };
	struct ps_stream ps;
	int n;

	if (ps_stream_init(&ps, &buf, PS_TNT8_MAX, "unit_cyc"))
		return -1;
	ps_stream_set_mtc(&ps, PERIOD, N, D);
	ps_stream_set_cbr(&ps, 24);
	ps_stream_set_cyc(&ps, thresh);
	ps.tsc = 1000;
	ps_stream_psb(&ps, 0);			/* TraceEn at 1000 */
	ps_stream_time(&ps, 1100);
	ps_stream_pge(&ps, 0x401000);		/* CYC 100, MODE, PGE */
	ps_stream_time(&ps, 1105);
	ps_stream_tnt(&ps, true);		/* first branch at 1105 */
	ps_stream_time(&ps, 1107);
	ps_stream_tnt(&ps, false);
	ps_stream_time(&ps, 1200);
	ps_stream_ip(&ps, ppt_tip, 0x402000);	/* CYC 5, TNT, CYC 95, TIP */
	ps_stream_time(&ps, 1202);
	ps_stream_ip(&ps, ppt_tip, 0x403000);	/* 2 cycles later */
	ps_stream_time(&ps, 1700);		/* CYC 400 (1600), MTC */
	ps_stream_fup_pgd(&ps, 0x403010);	/* one CYC, FUP, TIP.PGD */
	n = decode_packets(buf.data, buf.len, p, max);
	ps_stream_exit(&ps);
	free(buf.data);
	return n;
}

int main(void)
{
	static const uint64_t at[] = {	/* times of the eligible packets */
		1100, 1100, 1105, 1200, 1202, 1600, 1700, 1700,
	};
	static struct pt_packet p[128];
	uint64_t now = 1000, want;
	int i, n, k = 0, bad = 0, in_psb = 0, cyc_in_psb = 0, nr_cyc = 0;
	bool have_cyc = false;

	n = run(0, p, 128);
	for (i = 0; i < n; i++) {
		if (p[i].type == ppt_psb)
			in_psb = 1;
		if (p[i].type == ppt_psbend)
			in_psb = 0;
		if (p[i].type == ppt_cyc) {
			cyc_in_psb += in_psb;
			now += p[i].payload.cyc.value;
			have_cyc = true;
			nr_cyc++;
			continue;
		}
		if (in_psb || !eligible(p[i].type))
			continue;
		want = k < (int)(sizeof(at) / sizeof(at[0])) ? at[k] : 0;
		k++;
		/* a CYC in front, or the same cycle as the packet before */
		if (now != want || (!have_cyc && (k < 2 || at[k - 2] != want))) {
			TAP_DIAG("packet %d (type %d): CYC time %llu, expected %llu",
				 i, p[i].type, (unsigned long long)now,
				 (unsigned long long)want);
			bad++;
		}
		have_cyc = false;
	}
	TAP_OK(!cyc_in_psb && k == 8 && !bad && nr_cyc == 6,
	       "unit: CYC: one in front of each cycle's first eligible packet, none in PSB+, a TNT's at its first branch (%d CYC)",
	       nr_cyc);

	n = run(3, p, 128);		/* at least 4 cycles between two */
	for (i = 0, nr_cyc = 0; i < n; i++)
		nr_cyc += p[i].type == ppt_cyc;
	TAP_OK(nr_cyc == 5,
	       "unit: CYC: CycThresh 3 (4 cycles) drops the CYC of the TIP 2 cycles after the last (%d CYC)",
	       nr_cyc);
	return tap_failed ? 1 : 0;
}
