// SPDX-License-Identifier: GPL-2.0-only
/*
 * flowjit: rewrites of kernel text that PERF_RECORD_TEXT_POKE misses.
 *
 * perf already reports int3 batch patching (static keys, static calls,
 * kprobes, optprobes, ftrace) and ftrace trampolines as
 * PERF_RECORD_TEXT_POKE. This file reports the rest as flowjit records:
 *
 * - the BPF dispatcher image, as it is once written into the pack (a
 *   JIT image copied into the pack is the program's image record, and
 *   pack space filled with int3 follows its retire record: neither
 *   needs a text record of its own);
 * - BPF trampolines: the image once written and made read-only and
 *   executable, retired when it is freed;
 * - module text after relocation, alternatives, jump labels, static
 *   calls and ftrace were applied: when the module is coming (before its
 *   init function runs; core and init text) and again when it goes live
 *   (core text; the init text is retired), retired when it goes away.
 *
 * Every record is kernel code: flowjit_emit() gives it only to events
 * that do not exclude the kernel, which passed the checks of core.c.
 */
#include <linux/bpf.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/sched.h>

#include "base.h"
#include "internal.h"

/* module text records: sub says which part */
#define FLOWJIT_MODULE_CORE	0
#define FLOWJIT_MODULE_INIT	1

static void flowjit_text_emit(u8 kind, u8 op, const void *addr, u64 len,
			      u32 sub, u32 revision)
{
	struct flowjit_image img = {
		.kind		= kind,
		.op		= op,
		.asid		= FLOWJIT_ASID_KERNEL,
		.addr		= (unsigned long)addr,
		.len		= len,
		.sub		= sub,
		.revision	= revision,
		.bytes		= addr,
	};

	if (!len)
		return;
	flowjit_emit(&img);
}

/* the BPF dispatcher wrote its image [addr, addr + len) */
void __flowjit_text_write(const void *addr, size_t len)
{
	flowjit_text_emit(FLOWJIT_KIND_TEXT_POKE, FLOWJIT_OP_IMAGE, addr, len,
			  0, 1);
}

/* a BPF trampoline image of @len bytes is executable, or is being freed */
void __flowjit_bpf_trampoline(const void *image, unsigned int len, u8 op)
{
	flowjit_text_emit(FLOWJIT_KIND_BPF_TRAMPOLINE, op, image, len, 0, 1);
}

#ifdef CONFIG_MODULES
static void flowjit_module_part(struct module *mod, u8 op, u32 sub,
				u32 revision)
{
	unsigned int size;
	void *text = flowjit_module_text(mod, sub == FLOWJIT_MODULE_INIT,
					 &size);

	if (!text)
		return;
	flowjit_text_emit(FLOWJIT_KIND_MODULE_TEXT, op, text, size, sub,
			  revision);
}

/*
 * COMING: the text is relocated and patched, nothing of it has run yet.
 * LIVE: the init function returned; what it patched is in the records
 * already, the core text is reported once more as it is now (revision
 * 2) and the init text, freed next, retired. GOING: unload, or a failed
 * init.
 */
static int flowjit_module_notify(struct notifier_block *nb,
				 unsigned long state, void *data)
{
	struct module *mod = data;

	if (!static_branch_unlikely(&flowjit_active.key))
		return NOTIFY_DONE;

	switch (state) {
	case MODULE_STATE_COMING:
		flowjit_module_part(mod, FLOWJIT_OP_IMAGE,
				    FLOWJIT_MODULE_CORE, 1);
		flowjit_module_part(mod, FLOWJIT_OP_IMAGE,
				    FLOWJIT_MODULE_INIT, 1);
		break;
	case MODULE_STATE_LIVE:
		flowjit_module_part(mod, FLOWJIT_OP_RETIRE,
				    FLOWJIT_MODULE_INIT, 1);
		flowjit_module_part(mod, FLOWJIT_OP_IMAGE,
				    FLOWJIT_MODULE_CORE, 2);
		break;
	case MODULE_STATE_GOING:
		flowjit_module_part(mod, FLOWJIT_OP_RETIRE,
				    FLOWJIT_MODULE_INIT, 1);
		flowjit_module_part(mod, FLOWJIT_OP_RETIRE,
				    FLOWJIT_MODULE_CORE, 1);
		break;
	}
	return NOTIFY_DONE;
}

/*
 * Lowest priority: on COMING, run after the jump label and static call
 * notifiers have patched the module's sites.
 */
static struct notifier_block flowjit_module_nb = {
	.notifier_call	= flowjit_module_notify,
	.priority	= INT_MIN,
};

static int __init flowjit_text_init(void)
{
	return register_module_notifier(&flowjit_module_nb);
}
late_initcall(flowjit_text_init);
#endif /* CONFIG_MODULES */
