// SPDX-License-Identifier: GPL-2.0
/*
 * MTC and TMA: what ps_stream_time() and PSB+ send for a given TSC/CTC
 * ratio, and that a decoder computing time as perf's intel-pt decoder does
 * (TMA: CTC time = TSC - FC - low CTC bits * ratio; MTC: + ticks * ratio)
 * gets the TSC of every CTC tick back; branches before a tick leave in a
 * TNT in front of its MTC; TraceEn 0 -> 1 sends TSC, TMA, CBR and no MTC
 * for the time tracing was off.
 */
#include <errno.h>
#include <stdlib.h>

#include "tap.h"
#include "gtbuild.h"
#include "packet.h"

#define N	200	/* TSC/CTC = 100: CPUID 0x15 EBX/EAX */
#define D	2
#define PERIOD	3	/* an MTC every 8 CTC ticks = 800 TSC ticks */

int main(void)
{
	static struct pt_packet p[256];
	struct gt_timeconv tc = { .time_shift = 31 };
	struct ps_buf buf = { 0 };
	struct ps_stream ps;
	uint64_t ctc_time = 0, delta = 0, last_mtc = 0, t;
	uint32_t n, d;
	uint8_t cbr = 0;
	int i, np, nr_mtc = 0, bad_seq = 0, bad_time = 0, tma = -1;

	if (ps_stream_init(&ps, &buf, PS_TNT8_MAX, "unit_mtc"))
		return 1;
	ps_stream_set_mtc(&ps, PERIOD, N, D);
	ps_stream_time(&ps, 50000);		/* no TMA yet: nothing */
	TAP_OK(buf.len == 0, "unit: no MTC before the first PSB+ gives a TMA");

	ps.tsc = 100050;			/* CTC 1000, 50 TSC ticks on */
	ps_stream_psb(&ps, 0);
	ps_stream_time(&ps, 108050);		/* CTC 1080: ticks 126..135 */
	ps_stream_time(&ps, 108000);		/* time does not go back */
	np = decode_packets(buf.data, buf.len, p, 256);
	for (i = 0; i < np; i++) {
		if (p[i].type == ppt_tma) {
			tma = i;
			/* perf: ctc_timestamp = tsc - fc - ctc_rem * ratio */
			ctc_time = 100050 - p[i].payload.tma.fc -
				   (p[i].payload.tma.ctc & ((1 << PERIOD) - 1)) * N / D;
			last_mtc = (p[i].payload.tma.ctc >> PERIOD) & 0xff;
			TAP_DIAG("TMA ctc %#x fc %u", p[i].payload.tma.ctc,
				 p[i].payload.tma.fc);
		}
		if (p[i].type != ppt_mtc)
			continue;
		nr_mtc++;
		if (p[i].payload.mtc.ctc != ((last_mtc + 1) & 0xff))
			bad_seq++;
		delta += (uint64_t)((p[i].payload.mtc.ctc - last_mtc) & 0xff) << PERIOD;
		last_mtc = p[i].payload.mtc.ctc;
		t = ctc_time + delta * N / D;
		/* the tick's own TSC: 100800, 101600, ... */
		if (t != 100000 + (uint64_t)nr_mtc * 800)
			bad_time++;
	}
	TAP_OK(tma == 2 && p[0].type == ppt_psb && p[1].type == ppt_tsc,
	       "unit: PSB+ with MTC carries TSC then TMA");
	TAP_OK(nr_mtc == 10 && !bad_seq,
	       "unit: one MTC per toggle of CTC bit %d, payloads in sequence (%d MTC)",
	       PERIOD, nr_mtc);
	TAP_OK(!bad_time && nr_mtc,
	       "unit: perf's TMA/MTC arithmetic gives back the TSC of every tick");

	/* a branch at 108100, a tick at 108800, a branch at 108900 */
	buf.len = 0;
	ps_stream_time(&ps, 108100);
	ps_stream_tnt(&ps, true);
	ps_stream_time(&ps, 108900);
	ps_stream_tnt(&ps, false);
	ps_stream_tnt_flush(&ps);
	np = decode_packets(buf.data, buf.len, p, 256);
	TAP_OK(np == 3 && p[0].type == ppt_tnt_8 &&
	       p[0].payload.tnt.bit_size == 1 && p[1].type == ppt_mtc &&
	       p[2].type == ppt_tnt_8 && p[2].payload.tnt.bit_size == 1,
	       "unit: a branch before an MTC tick goes out in a TNT before the MTC, the next one after");

	/* TraceEn 1 -> 0 at 108900, 0 -> 1 at 200050 (CTC 2000, FC 50) */
	buf.len = 0;
	ps_stream_set_cbr(&ps, 24);
	ps_stream_trace_en(&ps, 200050);
	ps_stream_time(&ps, 200900);		/* CTC 2009: tick 251 */
	np = decode_packets(buf.data, buf.len, p, 256);
	TAP_OK(np == 4 && p[0].type == ppt_tsc &&
	       p[0].payload.tsc.tsc == 200050 && p[1].type == ppt_tma &&
	       p[1].payload.tma.ctc == 2000 && p[1].payload.tma.fc == 50 &&
	       p[2].type == ppt_cbr && p[2].payload.cbr.ratio == 24 &&
	       p[3].type == ppt_mtc && p[3].payload.mtc.ctc == 251,
	       "unit: TraceEn 0 -> 1 is TSC, TMA, CBR; no MTC for the time before, the next tick after");

	/* 2.4 GHz TSC: perf time = tsc * mult >> 31 with mult = 2^31 / 2.4 */
	tc.time_mult = (uint32_t)((double)(1ULL << 31) / 2.4 + 0.5);
	TAP_OK(!ps_stream_ctc_ratio(&tc, &n, &d) && n == 200 && d == 2,
	       "unit: a 2.4 GHz TSC over a 24 MHz crystal is the ratio 200/2 (got %u/%u)",
	       n, d);
	tc.time_mult = 1;	/* a 2^31 GHz TSC: FC would not fit in 9 bits */
	TAP_OK(ps_stream_ctc_ratio(&tc, &n, &d) == -ERANGE,
	       "unit: a ratio the TMA fast counter cannot hold is refused");
	tc.time_mult = (uint32_t)((double)(1ULL << 31) / 2.4 + 0.5);
	TAP_OK(!ps_stream_cbr_ratio(&tc, &cbr) && cbr == 24,
	       "unit: a core at the 2.4 GHz of its TSC has core:bus ratio 24 (got %u)",
	       cbr);
	ps_stream_exit(&ps);
	free(buf.data);
	return tap_failed ? 1 : 0;
}
