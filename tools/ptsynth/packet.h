/* SPDX-License-Identifier: GPL-2.0 */
/*
 * packet.h - Intel PT packets of one synthesised stream (packet.c)
 *
 * struct ps_buf is a growing byte buffer, struct ps_pktenc appends packets
 * serialised by libipt's encoder to one, and struct ps_stream is the packet
 * layer of one stream: what a decoder follows (IP compression, pending
 * TNT bits, PacketEn, time).  synth.c and ksynth.c decide what to emit
 * when; the packets are built here.
 *
 * Functions returning int return 0 (or a size) on success and a negative
 * errno or libipt error code on failure.  The ps_stream_*() emitters return
 * nothing: the first encoder error is kept in ps_stream.err, reported on
 * stderr, and stops the stream.
 */
#ifndef PTSYNTH_PACKET_H
#define PTSYNTH_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <intel-pt.h>

struct gt_timeconv;

struct ps_buf {
	uint8_t *data;
	size_t len, cap;
};

/* libipt's encoder writing to a ps_buf; exposed for unit tests */
struct ps_pktenc;
struct ps_pktenc *ps_pktenc_new(struct ps_buf *out);
void ps_pktenc_free(struct ps_pktenc *pe);
int ps_pktenc_put(struct ps_pktenc *pe, const struct pt_packet *pkt);

/* the shortest pt_ipc_* compression of @ip after @last_ip (unit tests) */
int ps_stream_ipc_choose(uint64_t last_ip, uint64_t ip);

#define PS_TNT8_MAX	6	/* TNT bits of a TNT-8 packet */
#define PS_TNT64_MAX	47	/* ... of a TNT-64 packet */

struct ps_stream {
	struct ps_buf *buf;	/* the packets */
	struct ps_pktenc *pe;
	const char *who;	/* for error messages */
	int tnt_max;		/* TNT bits sent in one packet */
	bool enabled;		/* PacketEn: packets flowing */
	bool lost;		/* inside an OVF window: packets dropped */
	uint64_t last_ip;	/* for IP compression */
	uint64_t tnt;
	int tnt_n;
	uint64_t tnt_time;	/* of the first pending TNT bit */
	size_t psb_mark;	/* buffer length at the last PSB */
	bool in_psb;		/* between PSB and PSBEND: status only */
	uint64_t tsc;		/* now; for the next TSC packet */
	/* MTC (ps_stream_set_mtc): the CTC runs at TSC * ctc_d / ctc_n */
	int mtc_period;		/* -1: no MTC, no TMA */
	uint32_t ctc_n, ctc_d;	/* TSC/CTC ratio, CPUID 0x15 EBX/EAX */
	bool have_tma;		/* a PSB+ gave the CTC: MTCs may follow */
	uint64_t mtc_tick;	/* CTC >> mtc_period at the last MTC or TMA */
	uint64_t nr_mtc;
	uint8_t cbr;		/* core:bus ratio in PSB+ and at TraceEn, 0: none */
	/* CYC (ps_stream_set_cyc): core cycles are TSC ticks */
	bool cyc;
	uint64_t cyc_min;	/* cycles from one CYC to the next, >= 1 */
	uint64_t last_cyc;	/* TSC of the last CYC or of TraceEn 0->1 */
	uint64_t nr_cyc;
	uint64_t nr_packets, nr_psb;
	int err;		/* encoder error: no more packets */
};

int ps_stream_init(struct ps_stream *ps, struct ps_buf *buf, int tnt_max,
		   const char *who);
void ps_stream_exit(struct ps_stream *ps);
void ps_stream_emit(struct ps_stream *ps, const struct pt_packet *p);
void ps_stream_tnt_flush(struct ps_stream *ps);
void ps_stream_tnt(struct ps_stream *ps, bool taken);
void ps_stream_ip(struct ps_stream *ps, enum pt_packet_type type, uint64_t ip);
void ps_stream_simple(struct ps_stream *ps, enum pt_packet_type type);
void ps_stream_tsc(struct ps_stream *ps);
void ps_stream_set_mtc(struct ps_stream *ps, int period, uint32_t ctc_n,
		       uint32_t ctc_d);
void ps_stream_set_cbr(struct ps_stream *ps, uint8_t cbr);
void ps_stream_set_cyc(struct ps_stream *ps, int thresh);
void ps_stream_time(struct ps_stream *ps, uint64_t tsc);
void ps_stream_trace_en(struct ps_stream *ps, uint64_t tsc);
int ps_stream_ctc_ratio(const struct gt_timeconv *tc, uint32_t *n, uint32_t *d);
int ps_stream_cbr_ratio(const struct gt_timeconv *tc, uint8_t *cbr);
void ps_stream_mode_exec(struct ps_stream *ps);
void ps_stream_pgd(struct ps_stream *ps);
void ps_stream_fup_pgd(struct ps_stream *ps, uint64_t ip);
void ps_stream_pge(struct ps_stream *ps, uint64_t ip);
void ps_stream_psb(struct ps_stream *ps, uint64_t ip);
bool ps_stream_psb_due(const struct ps_stream *ps, uint64_t period);

#endif
