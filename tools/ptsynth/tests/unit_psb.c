// SPDX-License-Identifier: GPL-2.0
/* PSB+ period: placement, contents, last-IP reset. */
#include "tap.h"
#include "gtbuild.h"
#include "synth.h"

static const uint8_t jmp_rax[] = { 0xff, 0xe0 };

int main(void)
{
	static struct pt_packet p[8192];
	struct ps_synth_result res;
	struct ps_synth_opts o;
	struct gtb b = { 0 };
	int n, i, psb = 0, bad_plus = 0, bad_fup = 0, bad_dist = 0;
	uint64_t last_target = 0, last_ip = 0, off = 0, last_psb_off = 0;

	/* ping-pong between two indirect jumps: one TIP per insn */
	for (i = 0; i < 2000; i++)
		gtb_insn(&b, (i & 1) ? 0x7f0000001000ULL : 0x7f0000002000ULL,
			 jmp_rax, 2);
	gtb_finish(&b);
	ps_synth_opts_default(&o);
	o.psb_period = 256;
	if (ps_synth_run(&b.t, &o, &res))
		return 1;
	n = decode_packets(res.streams[0].buf.data, res.streams[0].buf.len,
			   p, 8192);
	for (i = 0; i < n; i++) {
		if (p[i].type == ppt_psb)
			last_ip = 0;
		if (p[i].type == ppt_tip || p[i].type == ppt_tip_pge ||
		    p[i].type == ppt_fup)
			last_ip = ip_apply(last_ip, &p[i].payload.ip);
		if (p[i].type == ppt_tip || p[i].type == ppt_tip_pge)
			last_target = last_ip;
		if (p[i].type == ppt_psb && i > 0) {
			psb++;
			if (i + 4 >= n || p[i + 1].type != ppt_tsc ||
			    p[i + 2].type != ppt_mode || p[i + 3].type != ppt_fup ||
			    p[i + 4].type != ppt_psbend)
				bad_plus++;
			else if (ip_apply(0, &p[i + 3].payload.ip) != last_target ||
				 p[i + 3].payload.ip.ipc == pt_ipc_update_16) {
				bad_fup++;
				TAP_DIAG("fup %#lx ipc %d last %#lx",
					(unsigned long)p[i + 3].payload.ip.ip,
					p[i + 3].payload.ip.ipc,
					(unsigned long)last_target);
			}
			if (off - last_psb_off < 256 || off - last_psb_off > 256 + 16) {
				bad_dist++;
				TAP_DIAG("psb at %lu, previous %lu",
					(unsigned long)off, (unsigned long)last_psb_off);
			}
			last_psb_off = off;
		}
		off += p[i].size;
	}
	TAP_DIAG("%d packets, %d PSB after the first, %zu bytes", n, psb,
		 res.streams[0].buf.len);
	TAP_OK(psb >= 10 && !bad_dist,
	       "unit: PSB+ is inserted at the first insn boundary after every 256 bytes");
	TAP_OK(psb && !bad_plus,
	       "unit: PSB+ carries TSC, MODE.Exec, FUP and PSBEND while tracing");
	TAP_OK(psb && !bad_fup,
	       "unit: the PSB+ FUP is the next IP, uncompressed after the last-IP reset");
	ps_synth_result_free(&res);
	gtb_free(&b);
	return tap_failed ? 1 : 0;
}
