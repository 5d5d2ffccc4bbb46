// SPDX-License-Identifier: GPL-2.0
/*
 * packet.c - serialise Intel PT packets with libipt's encoder
 *
 * libipt only serialises.  struct ps_stream keeps what the packet layer
 * of one stream must remember (last IP, pending TNT bits, PacketEn, the
 * PSB period); which packet to emit when is the model of the user
 * (synth.c) and the kernel (ksynth.c) synthesiser.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt.h"
#include "packet.h"

struct ps_pktenc {
	struct pt_encoder *enc;
	uint8_t scratch[64];
	struct ps_buf *out;
};

static int ps_buf_append(struct ps_buf *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		void *p;

		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

struct ps_pktenc *ps_pktenc_new(struct ps_buf *out)
{
	struct ps_pktenc *pe = calloc(1, sizeof(*pe));
	struct pt_config cfg;

	if (!pe)
		return NULL;
	pt_config_init(&cfg);
	cfg.begin = pe->scratch;
	cfg.end = pe->scratch + sizeof(pe->scratch);
	pe->enc = pt_alloc_encoder(&cfg);
	if (!pe->enc) {
		free(pe);
		return NULL;
	}
	pe->out = out;
	return pe;
}

void ps_pktenc_free(struct ps_pktenc *pe)
{
	if (!pe)
		return;
	pt_free_encoder(pe->enc);
	free(pe);
}

/* Encode one packet and append it to the output; returns its size. */
int ps_pktenc_put(struct ps_pktenc *pe, const struct pt_packet *pkt)
{
	struct pt_packet p = *pkt;
	int n;

	if (pt_enc_sync_set(pe->enc, 0) < 0)
		return -EINVAL;
	n = pt_enc_next(pe->enc, &p);
	if (n < 0)
		return n;
	if (ps_buf_append(pe->out, pe->scratch, n))
		return -ENOMEM;
	return n;
}

static uint64_t ps_stream_sext48(uint64_t ip)
{
	return (uint64_t)((int64_t)(ip << 16) >> 16);
}

/*
 * Choose the shortest IP compression that lets a decoder holding
 * @last_ip reconstruct @ip.
 */
int ps_stream_ipc_choose(uint64_t last_ip, uint64_t ip)
{
	uint64_t diff = ip ^ last_ip;

	if (!(diff >> 16))
		return pt_ipc_update_16;
	if (!(diff >> 32))
		return pt_ipc_update_32;
	if (ps_stream_sext48(ip) == ip)
		return pt_ipc_sext_48;
	if (!(diff >> 48))
		return pt_ipc_update_48;
	return pt_ipc_full;
}

/* ---- one packet stream ---- */

/*
 * Start stream @ps writing to @buf: TNT bits are sent after @tnt_max of
 * them (6: TNT-8 only, up to 47: TNT-64 when more than 6), errors are
 * reported as "@who: encoder error".
 */
int ps_stream_init(struct ps_stream *ps, struct ps_buf *buf, int tnt_max,
		   const char *who)
{
	memset(ps, 0, sizeof(*ps));
	ps->mtc_period = -1;
	ps->buf = buf;
	ps->tnt_max = tnt_max;
	ps->who = who;
	ps->pe = ps_pktenc_new(buf);
	return ps->pe ? 0 : -ENOMEM;
}

void ps_stream_exit(struct ps_stream *ps)
{
	ps_pktenc_free(ps->pe);
	ps->pe = NULL;
}

void ps_stream_emit(struct ps_stream *ps, const struct pt_packet *p)
{
	int n;

	if (ps->lost || ps->err)
		return;
	n = ps_pktenc_put(ps->pe, p);
	if (n < 0) {
		fprintf(stderr, "%s: encoder error: %s\n", ps->who,
			pt_errstr(pt_errcode(n)));
		ps->err = n;
		return;
	}
	ps->nr_packets++;
}

/*
 * A CYC-eligible packet at TSC @t (Intel SDM Vol. 3C, "Cycle-Accurate
 * Mode", "Cycle Packet Semantics": the CYC in front of a packet gives its
 * cycle time, of a TNT its first branch).  With CYC on and outside PSB+,
 * a CYC with the cycles since the last one goes first: at most one per
 * cycle, none before the threshold (CycThresh) has passed.  The model's
 * core runs at the TSC rate (CBR = max non-turbo ratio): a cycle is a
 * TSC tick.  Lost packets (OVF) send no CYC; the count goes on.
 */
static void ps_stream_emit_at(struct ps_stream *ps, const struct pt_packet *p,
			      uint64_t t)
{
	struct pt_packet c;

	if (ps->cyc && !ps->in_psb && !ps->lost && !ps->err &&
	    t >= ps->last_cyc + ps->cyc_min) {
		memset(&c, 0, sizeof(c));
		c.type = ppt_cyc;
		c.payload.cyc.value = t - ps->last_cyc;
		ps_stream_emit(ps, &c);
		ps->last_cyc = t;
		ps->nr_cyc++;
	}
	ps_stream_emit(ps, p);
}

void ps_stream_tnt_flush(struct ps_stream *ps)
{
	struct pt_packet p;

	if (!ps->tnt_n)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ps->tnt_n > PS_TNT8_MAX ? ppt_tnt_64 : ppt_tnt_8;
	p.payload.tnt.bit_size = ps->tnt_n;
	p.payload.tnt.payload = ps->tnt;
	ps_stream_emit_at(ps, &p, ps->tnt_time);
	ps->tnt = 0;
	ps->tnt_n = 0;
}

void ps_stream_tnt(struct ps_stream *ps, bool taken)
{
	if (!ps->tnt_n)
		ps->tnt_time = ps->tsc;
	ps->tnt = (ps->tnt << 1) | taken;
	if (++ps->tnt_n == ps->tnt_max)
		ps_stream_tnt_flush(ps);
}

/* A packet with an IP (TIP, TIP.PGE, TIP.PGD, FUP), compressed */
void ps_stream_ip(struct ps_stream *ps, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p;

	ps_stream_tnt_flush(ps);
	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = ps_stream_ipc_choose(ps->last_ip, ip);
	p.payload.ip.ip = ip;
	ps_stream_emit_at(ps, &p, ps->tsc);
	ps->last_ip = ip;
}

/* A packet without payload (PSB, PSBEND, OVF: CYC-eligible...) */
void ps_stream_simple(struct ps_stream *ps, enum pt_packet_type type)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	if (type == ppt_ovf)
		ps_stream_emit_at(ps, &p, ps->tsc);
	else
		ps_stream_emit(ps, &p);
}

/* TSC of ps->tsc */
void ps_stream_tsc(struct ps_stream *ps)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = ps->tsc & ((1ULL << 56) - 1);
	ps_stream_emit(ps, &p);
}

/*
 * Mini time counter (SDM Vol. 3C, "MTC Packet" and "TMA Packet"; libipt's
 * pt_time_update_tma/_mtc read them the same way).  The core crystal
 * clock (CTC, the ART) runs at TSC * ctc_d / ctc_n; hardware sends an MTC
 * carrying CTC[period+7:period] each time CTC bit @period toggles, and a
 * TMA with CTC[15:0] and the TSC ticks since the last CTC tick after
 * every TSC (PSB+, TraceEn 0 -> 1), which is what MTCs count from.
 */
void ps_stream_set_mtc(struct ps_stream *ps, int period, uint32_t ctc_n,
		       uint32_t ctc_d)
{
	ps->mtc_period = ctc_n && ctc_d ? period : -1;
	ps->ctc_n = ctc_n;
	ps->ctc_d = ctc_d;
}

static uint64_t ps_stream_tsc_to_ctc(const struct ps_stream *ps, uint64_t tsc)
{
	return (unsigned __int128)tsc * ps->ctc_d / ps->ctc_n;
}

/* The TSC at which the CTC reaches @ctc: the first with tsc * d / n >= ctc */
static uint64_t ps_stream_ctc_to_tsc(const struct ps_stream *ps, uint64_t ctc)
{
	return ((unsigned __int128)ctc * ps->ctc_n + ps->ctc_d - 1) / ps->ctc_d;
}

/*
 * Time passes to @tsc: one MTC for every toggle of the CTC bit since the
 * last one, whether or not packets are enabled (the MTC packet depends on
 * MTCEn and TriggerEn only, Intel SDM Vol. 3C, "MTC Packet").  Pending
 * TNT bits of branches before a tick go out first, in a partial TNT
 * ("TNT Packet": partial TNTs may be generated as a result of other
 * packets), so that a TNT never holds branches from both sides of a
 * timing packet (see README.rst "Timing").
 */
void ps_stream_time(struct ps_stream *ps, uint64_t tsc)
{
	struct pt_packet p;
	uint64_t tick;

	if (ps->mtc_period >= 0 && ps->have_tma && tsc > ps->tsc) {
		tick = ps_stream_tsc_to_ctc(ps, tsc) >> ps->mtc_period;
		memset(&p, 0, sizeof(p));
		p.type = ppt_mtc;
		while (ps->mtc_tick < tick) {
			ps->mtc_tick++;
			ps_stream_tnt_flush(ps);
			p.payload.mtc.ctc = ps->mtc_tick & 0xff;
			ps_stream_emit_at(ps, &p, ps_stream_ctc_to_tsc(ps,
					  ps->mtc_tick << ps->mtc_period));
			ps->nr_mtc++;
		}
	}
	ps->tsc = tsc;
}

/* TMA of ps->tsc, after a TSC */
static void ps_stream_tma(struct ps_stream *ps)
{
	uint64_t ctc = ps_stream_tsc_to_ctc(ps, ps->tsc);
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tma;
	p.payload.tma.ctc = ctc & 0xffff;
	/* TSC ticks since the CTC ticked: below ctc_n / ctc_d, 9 bits */
	p.payload.tma.fc = ps->tsc - ps_stream_ctc_to_tsc(ps, ctc);
	ps_stream_emit(ps, &p);
	ps->mtc_tick = ctc >> ps->mtc_period;
	ps->have_tma = true;
}

/* The core:bus ratio (CBR) packet, if the stream has one */
static void ps_stream_cbr(struct ps_stream *ps)
{
	struct pt_packet p;

	if (!ps->cbr)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cbr;
	p.payload.cbr.ratio = ps->cbr;
	ps_stream_emit(ps, &p);
}

/*
 * The timing packets of TSC @tsc: TSC, TMA with MTC (Intel SDM Vol. 3C,
 * "TMA Packet": sent with any TSC packet), CBR.
 */
static void ps_stream_timing(struct ps_stream *ps)
{
	ps_stream_tsc(ps);
	if (ps->mtc_period >= 0)
		ps_stream_tma(ps);
	ps_stream_cbr(ps);
}

/*
 * TraceEn 0 -> 1 at @tsc while packets were already written (perf
 * scheduling the event in): TSC, TMA, CBR (Intel SDM Vol. 3C, "Packet
 * Generation under Different Enable Conditions", TraceEn 0 -> 1 with
 * PacketByteCnt > 0).  No MTC covers the time TraceEn was 0; the cycle
 * counter starts again.
 */
void ps_stream_trace_en(struct ps_stream *ps, uint64_t tsc)
{
	ps_stream_tnt_flush(ps);
	ps->tsc = tsc;
	ps_stream_timing(ps);
	ps->last_cyc = tsc;
}

/*
 * The core:bus ratio of a core running at its nominal (max non-turbo)
 * frequency, which is the TSC's: the TSC frequency of @tc in 100 MHz.
 * Returns 0, or -EINVAL/-ERANGE if it is none of 1..255.
 */
int ps_stream_cbr_ratio(const struct gt_timeconv *tc, uint8_t *cbr)
{
	double tsc_hz, r;

	if (!tc->time_mult)
		return -EINVAL;
	tsc_hz = 1e9 * (double)(1ULL << tc->time_shift) / tc->time_mult;
	r = tsc_hz / 100e6 + 0.5;
	if (r < 1 || r >= 256)
		return -ERANGE;
	*cbr = (uint8_t)r;
	return 0;
}

/* CBR @cbr in PSB+ and at TraceEn 0 -> 1 (0: none) */
void ps_stream_set_cbr(struct ps_stream *ps, uint8_t cbr)
{
	ps->cbr = cbr;
}

/*
 * CYC packets with threshold @thresh (IA32_RTIT_CTL.CycThresh, perf's
 * cyc_thresh): at least 2^(thresh - 1) cycles between two, 0: any
 * cycle; -1: no CYC.
 */
void ps_stream_set_cyc(struct ps_stream *ps, int thresh)
{
	ps->cyc = thresh >= 0;
	ps->cyc_min = thresh > 0 ? 1ULL << (thresh - 1) : 1;
}

/*
 * The TSC/CTC ratio of a core whose crystal clock runs at 24 MHz (client
 * cores since Skylake; CPUID 0x15 EBX/EAX), with the TSC frequency of the
 * recording (@tc: perf time = TSC * time_mult >> time_shift, in ns).
 */
int ps_stream_ctc_ratio(const struct gt_timeconv *tc, uint32_t *n, uint32_t *d)
{
	double tsc_hz;

	if (!tc->time_mult)
		return -EINVAL;
	tsc_hz = 1e9 * (double)(1ULL << tc->time_shift) / tc->time_mult;
	*d = 2;
	*n = (uint32_t)(tsc_hz * 2 / 24e6 + 0.5);
	/* the TMA fast counter has 9 bits: it must hold ctc_n / ctc_d */
	if (*n < *d || *n / *d > 511)
		return -ERANGE;
	return 0;
}

void ps_stream_mode_exec(struct ps_stream *ps)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	ps_stream_emit_at(ps, &p, ps->tsc);
}

/* TIP.PGD with the IP suppressed: packets stop */
void ps_stream_pgd(struct ps_stream *ps)
{
	struct pt_packet p;

	ps_stream_tnt_flush(ps);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tip_pgd;
	p.payload.ip.ipc = pt_ipc_suppressed;
	ps_stream_emit_at(ps, &p, ps->tsc);
	ps->enabled = false;
}

/* An asynchronous disable at @ip: FUP, TIP.PGD (IP suppressed) */
void ps_stream_fup_pgd(struct ps_stream *ps, uint64_t ip)
{
	ps_stream_ip(ps, ppt_fup, ip);
	ps_stream_pgd(ps);
}

/* Packets start at @ip: MODE.Exec, TIP.PGE */
void ps_stream_pge(struct ps_stream *ps, uint64_t ip)
{
	ps_stream_tnt_flush(ps);
	ps_stream_mode_exec(ps);
	ps_stream_ip(ps, ppt_tip_pge, ip);
	ps->enabled = true;
}

/*
 * PSB+: PSB, TSC, TMA with MTC, CBR, MODE.Exec and FUP of @ip when
 * packets are enabled, PSBEND (Intel SDM Vol. 3C, "Decoder
 * Synchronization (PSB+)").  Status only: no CYC inside.  The PSB period
 * counts from the PSB; the first PSB+ is TraceEn 0 -> 1, where the cycle
 * counter starts.
 */
void ps_stream_psb(struct ps_stream *ps, uint64_t ip)
{
	ps_stream_tnt_flush(ps);
	if (!ps->buf->len)
		ps->last_cyc = ps->tsc;
	ps->psb_mark = ps->buf->len;
	ps->in_psb = true;
	ps_stream_simple(ps, ppt_psb);
	ps_stream_timing(ps);
	ps->last_ip = 0;
	if (ps->enabled) {
		ps_stream_mode_exec(ps);
		ps_stream_ip(ps, ppt_fup, ip);
	}
	ps_stream_simple(ps, ppt_psbend);
	ps->in_psb = false;
	ps->nr_psb++;
}

/* @period bytes (0: never) have been written since the last PSB */
bool ps_stream_psb_due(const struct ps_stream *ps, uint64_t period)
{
	return period && ps->buf->len - ps->psb_mark >= period;
}
