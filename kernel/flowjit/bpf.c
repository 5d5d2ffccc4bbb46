// SPDX-License-Identifier: GPL-2.0-only
/*
 * flowjit: eBPF JIT images.
 *
 * The images are captured where perf_event_bpf_event() reports a load:
 * after the JIT has finalised them (bpf_prog_select_runtime(), and for
 * x86 bpf_jit_binary_pack_finalize() copying them into the read-only
 * pack) and before bpf_prog_new_fd() makes the program reachable from
 * user space. So no program runs, nor can be closed, before its image is
 * in the ring buffers. Unload can run from a workqueue (the last
 * reference dropped with interrupts off), where only CPU-wide events see
 * the retire records.
 *
 * Each record names the user that loaded the program: an event whose
 * creator lacked CAP_SYS_ADMIN receives only its own user's programs
 * (see flowjit_event_wants()).
 */
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/sched.h>

#include "internal.h"

static void flowjit_bpf_func(struct bpf_prog *prog, struct bpf_prog *func,
			     u32 sub, u8 op)
{
	struct flowjit_image img = {
		.kind		= sub ? FLOWJIT_KIND_BPF_SUBPROG :
					FLOWJIT_KIND_BPF_PROG,
		.op		= op,
		.asid		= FLOWJIT_ASID_KERNEL,
		.addr		= (unsigned long)func->bpf_func,
		.len		= func->jited_len,
		.id		= prog->aux->id,
		.sub		= sub,
		.revision	= 1,
		.bytes		= func->bpf_func,
		.has_owner	= !!prog->aux->user,
		.owner		= prog->aux->user ? prog->aux->user->uid :
						    INVALID_UID,
	};

	flowjit_emit(&img);
}

void __flowjit_bpf_event(struct bpf_prog *prog, enum perf_bpf_event_type type)
{
	u8 op;
	u32 i;

	if (!prog->jited)
		return;		/* interpreted: no image */
	if (type == PERF_BPF_EVENT_PROG_LOAD)
		op = FLOWJIT_OP_IMAGE;
	else if (type == PERF_BPF_EVENT_PROG_UNLOAD)
		op = FLOWJIT_OP_RETIRE;
	else
		return;

	/* as bpf_prog_get_info_by_fd(): func[0] is the main program */
	if (!prog->aux->func_cnt) {
		flowjit_bpf_func(prog, prog, 0, op);
		return;
	}
	for (i = 0; i < prog->aux->func_cnt; i++)
		flowjit_bpf_func(prog, prog->aux->func[i], i, op);
}
