// SPDX-License-Identifier: GPL-2.0
/*
 * packet.c - serialise Intel PT packets with libipt's encoder
 *
 * libipt only serialises.  struct ptstream keeps what the packet layer
 * of one stream must remember (last IP, pending TNT bits, PacketEn, the
 * PSB period); which packet to emit when is the model of the user
 * (synth.c) and the kernel (ksynth.c) synthesiser.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptsynth.h"

struct pktenc {
	struct pt_encoder *enc;
	uint8_t scratch[64];
	struct ptbuf *out;
};

int ptbuf_append(struct ptbuf *b, const void *data, size_t len)
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

struct pktenc *pktenc_new(struct ptbuf *out)
{
	struct pktenc *pe = calloc(1, sizeof(*pe));
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

void pktenc_free(struct pktenc *pe)
{
	if (!pe)
		return;
	pt_free_encoder(pe->enc);
	free(pe);
}

/* Encode one packet and append it to the output; returns its size. */
int pktenc_put(struct pktenc *pe, const struct pt_packet *pkt)
{
	struct pt_packet p = *pkt;
	int n;

	if (pt_enc_sync_set(pe->enc, 0) < 0)
		return -EINVAL;
	n = pt_enc_next(pe->enc, &p);
	if (n < 0)
		return n;
	if (ptbuf_append(pe->out, pe->scratch, n))
		return -ENOMEM;
	return n;
}

static uint64_t sext48(uint64_t ip)
{
	return (uint64_t)((int64_t)(ip << 16) >> 16);
}

/*
 * Choose the shortest IP compression that lets a decoder holding
 * @last_ip reconstruct @ip.
 */
int ipc_choose(uint64_t last_ip, uint64_t ip)
{
	uint64_t diff = ip ^ last_ip;

	if (!(diff >> 16))
		return pt_ipc_update_16;
	if (!(diff >> 32))
		return pt_ipc_update_32;
	if (sext48(ip) == ip)
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
int ptstream_init(struct ptstream *ps, struct ptbuf *buf, int tnt_max,
		  const char *who)
{
	memset(ps, 0, sizeof(*ps));
	ps->buf = buf;
	ps->tnt_max = tnt_max;
	ps->who = who;
	ps->pe = pktenc_new(buf);
	return ps->pe ? 0 : -ENOMEM;
}

void ptstream_exit(struct ptstream *ps)
{
	pktenc_free(ps->pe);
	ps->pe = NULL;
}

void ptstream_emit(struct ptstream *ps, const struct pt_packet *p)
{
	int n;

	if (ps->lost || ps->err)
		return;
	n = pktenc_put(ps->pe, p);
	if (n < 0) {
		fprintf(stderr, "%s: encoder error: %s\n", ps->who,
			pt_errstr(pt_errcode(n)));
		ps->err = n;
		return;
	}
	ps->nr_packets++;
}

void ptstream_tnt_flush(struct ptstream *ps)
{
	struct pt_packet p;

	if (!ps->tnt_n)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ps->tnt_n > PT_TNT8_MAX ? ppt_tnt_64 : ppt_tnt_8;
	p.payload.tnt.bit_size = ps->tnt_n;
	p.payload.tnt.payload = ps->tnt;
	ptstream_emit(ps, &p);
	ps->tnt = 0;
	ps->tnt_n = 0;
}

void ptstream_tnt(struct ptstream *ps, bool taken)
{
	ps->tnt = (ps->tnt << 1) | taken;
	if (++ps->tnt_n == ps->tnt_max)
		ptstream_tnt_flush(ps);
}

/* A packet with an IP (TIP, TIP.PGE, TIP.PGD, FUP), compressed */
void ptstream_ip(struct ptstream *ps, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p;

	ptstream_tnt_flush(ps);
	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = ipc_choose(ps->last_ip, ip);
	p.payload.ip.ip = ip;
	ptstream_emit(ps, &p);
	ps->last_ip = ip;
}

/* A packet without payload (PSB, PSBEND, OVF...) */
void ptstream_simple(struct ptstream *ps, enum pt_packet_type type)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	ptstream_emit(ps, &p);
}

/* TSC of ps->tsc */
void ptstream_tsc(struct ptstream *ps)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = ps->tsc & ((1ULL << 56) - 1);
	ptstream_emit(ps, &p);
}

void ptstream_mode_exec(struct ptstream *ps)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	ptstream_emit(ps, &p);
}

/* TIP.PGD with the IP suppressed: packets stop */
void ptstream_pgd(struct ptstream *ps)
{
	struct pt_packet p;

	ptstream_tnt_flush(ps);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tip_pgd;
	p.payload.ip.ipc = pt_ipc_suppressed;
	ptstream_emit(ps, &p);
	ps->enabled = false;
}

/* An asynchronous disable at @ip: FUP, TIP.PGD (IP suppressed) */
void ptstream_fup_pgd(struct ptstream *ps, uint64_t ip)
{
	ptstream_ip(ps, ppt_fup, ip);
	ptstream_pgd(ps);
}

/* Packets start at @ip: MODE.Exec, TIP.PGE */
void ptstream_pge(struct ptstream *ps, uint64_t ip)
{
	ptstream_tnt_flush(ps);
	ptstream_mode_exec(ps);
	ptstream_ip(ps, ppt_tip_pge, ip);
	ps->enabled = true;
}

/*
 * PSB+: PSB, TSC, MODE.Exec and FUP of @ip when packets are enabled,
 * PSBEND.  The PSB period counts from the PSB.
 */
void ptstream_psb(struct ptstream *ps, uint64_t ip)
{
	ptstream_tnt_flush(ps);
	ps->psb_mark = ps->buf->len;
	ptstream_simple(ps, ppt_psb);
	ptstream_tsc(ps);
	ps->last_ip = 0;
	if (ps->enabled) {
		ptstream_mode_exec(ps);
		ptstream_ip(ps, ppt_fup, ip);
	}
	ptstream_simple(ps, ppt_psbend);
	ps->nr_psb++;
}

/* @period bytes (0: never) have been written since the last PSB */
bool ptstream_psb_due(const struct ptstream *ps, uint64_t period)
{
	return period && ps->buf->len - ps->psb_mark >= period;
}
