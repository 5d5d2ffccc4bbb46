// SPDX-License-Identifier: GPL-2.0
/*
 * packet.c - serialise Intel PT packets with libipt's encoder
 *
 * libipt only serialises; which packet to emit, and with which IP
 * compression, is decided by synth.c.
 */
#include <errno.h>
#include <intel-pt.h>
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
