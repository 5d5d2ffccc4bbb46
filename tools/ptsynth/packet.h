/* SPDX-License-Identifier: GPL-2.0 */
/*
 * packet.h - Intel PT packets of one synthesised stream (packet.c)
 *
 * struct ptbuf is a growing byte buffer, struct pktenc appends packets
 * serialised by libipt's encoder to one, and struct ptstream is the packet
 * layer of one stream: what a decoder follows (IP compression, pending
 * TNT bits, PacketEn, time).  synth.c and ksynth.c decide what to emit
 * when; the packets are built here.
 *
 * Functions returning int return 0 (or a size) on success and a negative
 * errno or libipt error code on failure.  The ptstream_*() emitters return
 * nothing: the first encoder error is kept in ptstream.err, reported on
 * stderr, and stops the stream.
 */
#ifndef PTSYNTH_PACKET_H
#define PTSYNTH_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>

struct gt_timeconv;

struct ptbuf {
	uint8_t *data;
	size_t len, cap;
};

/* libipt's encoder writing to a ptbuf; exposed for unit tests */
struct pktenc;
struct pktenc *pktenc_new(struct ptbuf *out);
void pktenc_free(struct pktenc *pe);
int pktenc_put(struct pktenc *pe, const struct pt_packet *pkt);

int ipc_choose(uint64_t last_ip, uint64_t ip);

#define PT_TNT8_MAX	6	/* TNT bits of a TNT-8 packet */
#define PT_TNT64_MAX	47	/* ... of a TNT-64 packet */

struct ptstream {
	struct ptbuf *buf;	/* the packets */
	struct pktenc *pe;
	const char *who;	/* for error messages */
	int tnt_max;		/* TNT bits sent in one packet */
	bool enabled;		/* PacketEn: packets flowing */
	bool lost;		/* inside an OVF window: packets dropped */
	uint64_t last_ip;	/* for IP compression */
	uint64_t tnt;
	int tnt_n;
	size_t psb_mark;	/* buffer length at the last PSB */
	uint64_t tsc;		/* for the next TSC packet */
	/* MTC (ptstream_set_mtc): the CTC runs at TSC * ctc_d / ctc_n */
	int mtc_period;		/* -1: no MTC, no TMA */
	uint32_t ctc_n, ctc_d;	/* TSC/CTC ratio, CPUID 0x15 EBX/EAX */
	bool have_tma;		/* a PSB+ gave the CTC: MTCs may follow */
	uint64_t mtc_tick;	/* CTC >> mtc_period at the last MTC or TMA */
	uint64_t nr_mtc;
	uint64_t nr_packets, nr_psb;
	int err;		/* encoder error: no more packets */
};

int ptstream_init(struct ptstream *ps, struct ptbuf *buf, int tnt_max,
		  const char *who);
void ptstream_exit(struct ptstream *ps);
void ptstream_emit(struct ptstream *ps, const struct pt_packet *p);
void ptstream_tnt_flush(struct ptstream *ps);
void ptstream_tnt(struct ptstream *ps, bool taken);
void ptstream_ip(struct ptstream *ps, enum pt_packet_type type, uint64_t ip);
void ptstream_simple(struct ptstream *ps, enum pt_packet_type type);
void ptstream_tsc(struct ptstream *ps);
void ptstream_set_mtc(struct ptstream *ps, int period, uint32_t ctc_n,
		      uint32_t ctc_d);
void ptstream_time(struct ptstream *ps, uint64_t tsc);
int pt_ctc_ratio(const struct gt_timeconv *tc, uint32_t *n, uint32_t *d);
void ptstream_mode_exec(struct ptstream *ps);
void ptstream_pgd(struct ptstream *ps);
void ptstream_fup_pgd(struct ptstream *ps, uint64_t ip);
void ptstream_pge(struct ptstream *ps, uint64_t ip);
void ptstream_psb(struct ptstream *ps, uint64_t ip);
bool ptstream_psb_due(const struct ptstream *ps, uint64_t period);

#endif
