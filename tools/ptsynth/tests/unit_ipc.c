// SPDX-License-Identifier: GPL-2.0
/* IP compression choice and its serialisation by libipt. */
#include "tap.h"
#include "gtbuild.h"
#include "packet.h"

struct ipc_case {
	uint64_t last, ip;
	enum pt_ip_compression ipc;
	int size;
};

static const struct ipc_case cases[] = {
	{ 0x7fff12345678ULL, 0x7fff12349999ULL, pt_ipc_update_16, 3 },
	{ 0x7fff12345678ULL, 0x7fff99995678ULL, pt_ipc_update_32, 5 },
	{ 0x7f0012345678ULL, 0x7f1112345678ULL, pt_ipc_sext_48, 7 },
	{ 0, 0xffff800000001000ULL, pt_ipc_sext_48, 7 },
	{ 0xffff000000000000ULL, 0xffff123400000000ULL, pt_ipc_update_48, 7 },
	{ 0, 0x1234567800000000ULL, pt_ipc_full, 9 },
};

int main(void)
{
	unsigned int i, good_choice = 0, good_rt = 0;
	struct ps_buf buf = { 0 };
	struct ps_pktenc *pe = ps_pktenc_new(&buf);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ipc_case *c = &cases[i];
		struct pt_packet p, d;
		size_t off = buf.len;

		if (ps_stream_ipc_choose(c->last, c->ip) == (int)c->ipc)
			good_choice++;
		else
			TAP_DIAG("case %u: chose %d, want %d", i,
				 ps_stream_ipc_choose(c->last, c->ip), c->ipc);
		memset(&p, 0, sizeof(p));
		p.type = ppt_fup;
		p.payload.ip.ipc = ps_stream_ipc_choose(c->last, c->ip);
		p.payload.ip.ip = c->ip;
		if (ps_pktenc_put(pe, &p) != c->size) {
			TAP_DIAG("case %u: size %zu", i, buf.len - off);
			continue;
		}
		if (decode_packets(buf.data + off, buf.len - off, &d, 1) == 1 &&
		    d.type == ppt_fup && ip_apply(c->last, &d.payload.ip) == c->ip)
			good_rt++;
		else
			TAP_DIAG("case %u: decoded %#lx ipc %d", i,
				 (unsigned long)d.payload.ip.ip, d.payload.ip.ipc);
	}
	TAP_OK(good_choice == i,
	       "unit: IP compression picks the shortest of update-16/32, sext-48, update-48, full");
	TAP_OK(good_rt == i,
	       "unit: compressed FUP IPs serialise to the right size and decode back to the same IP");
	ps_pktenc_free(pe);
	free(buf.data);
	return tap_failed ? 1 : 0;
}
