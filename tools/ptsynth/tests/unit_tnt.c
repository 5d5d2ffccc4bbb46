// SPDX-License-Identifier: GPL-2.0
/* TNT accumulation and flushing (TNT-8 and TNT-64) before TIP/TIP.PGD. */
#include "tap.h"
#include "gtbuild.h"
#include "synth.h"

static const uint8_t jne_self[] = { 0x75, 0xfe };	/* jne . */
static const uint8_t jmp_rax[] = { 0xff, 0xe0 };
static const uint8_t sys[] = { 0x0f, 0x05 };

static void build(struct gtb *b, int loops)
{
	int i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < loops; i++)
		gtb_insn(b, 0x400000, jne_self, 2);	/* last falls through */
	gtb_insn(b, 0x400002, jmp_rax, 2);
	gtb_insn(b, 0x500000, sys, 2);
	gtb_finish(b);
}

static int run(bool long_tnt, struct pt_packet *p, int max, int loops)
{
	struct ps_synth_result res;
	struct ps_synth_opts o;
	struct gtb b;
	int n;

	build(&b, loops);
	ps_synth_opts_default(&o);
	o.long_tnt = long_tnt;
	if (ps_synth_run(&b.t, &o, &res))
		return -1;
	n = decode_packets(res.streams[0].buf.data, res.streams[0].buf.len,
			   p, max);
	ps_synth_result_free(&res);
	gtb_free(&b);
	return n;
}

static int find(const struct pt_packet *p, int n, enum pt_packet_type t)
{
	int i;

	for (i = 0; i < n; i++)
		if (p[i].type == t)
			return i;
	return -1;
}

int main(void)
{
	struct pt_packet p[64];
	int n, i, tip;

	/* 10 jne: 9 taken + 1 not taken => 1111111110 */
	n = run(false, p, 64, 10);
	i = find(p, n, ppt_tnt_8);
	tip = find(p, n, ppt_tip);
	TAP_OK(i >= 0 && p[i].payload.tnt.bit_size == 6 &&
	       p[i].payload.tnt.payload == 0x3f &&
	       p[i + 1].type == ppt_tnt_8 &&
	       p[i + 1].payload.tnt.bit_size == 4 &&
	       p[i + 1].payload.tnt.payload == 0xe,
	       "unit: TNT-8 holds 6 bits, oldest branch in the highest bit");
	TAP_OK(tip == i + 2 && p[tip].payload.ip.ip == 0x500000,
	       "unit: pending TNT bits are flushed before the TIP of an indirect jump");
	TAP_OK(n > 0 && p[n - 1].type == ppt_tip_pgd &&
	       p[n - 1].payload.ip.ipc == pt_ipc_suppressed,
	       "unit: syscall ends user tracing with TIP.PGD, IP suppressed");

	n = run(true, p, 64, 10);
	i = find(p, n, ppt_tnt_64);
	TAP_OK(i >= 0 && p[i].payload.tnt.bit_size == 10 &&
	       p[i].payload.tnt.payload == 0x3fe && p[i + 1].type == ppt_tip,
	       "unit: TNT-64 accumulates up to 47 bits and is flushed before TIP");

	n = run(true, p, 64, 100);
	i = find(p, n, ppt_tnt_64);
	TAP_OK(i >= 0 && p[i].payload.tnt.bit_size == 47 &&
	       p[i + 1].type == ppt_tnt_64 &&
	       p[i + 1].payload.tnt.bit_size == 47 &&
	       p[i + 2].payload.tnt.bit_size == 6,
	       "unit: a full TNT-64 (47 bits) is emitted as soon as it fills");
	return tap_failed ? 1 : 0;
}
