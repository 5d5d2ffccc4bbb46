/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flowjit: runtime code images for branch trace decoders.
 *
 * The hooks other subsystems call are one-line static inlines: a static
 * branch that is enabled only while a perf event with attr.flowjit
 * exists, and a call into kernel/flowjit/ behind it. Without
 * CONFIG_FLOWJIT they compile away, and attr.flowjit is rejected.
 */
#ifndef _LINUX_FLOWJIT_H
#define _LINUX_FLOWJIT_H

#include <linux/errno.h>
#include <linux/jump_label_ratelimit.h>
#include <linux/perf_event.h>
#include <uapi/linux/flowjit.h>

struct bpf_prog;

#ifdef CONFIG_FLOWJIT

extern struct static_key_false_deferred flowjit_active;

int flowjit_perf_event_open(const struct perf_event_attr *attr);
void flowjit_account_event(struct perf_event *event);
void flowjit_unaccount_event(struct perf_event *event);
void __flowjit_bpf_event(struct bpf_prog *prog, enum perf_bpf_event_type type);

/* a BPF program was loaded (its image is final) or is being freed */
static inline void flowjit_bpf_event(struct bpf_prog *prog,
				     enum perf_bpf_event_type type)
{
	if (static_branch_unlikely(&flowjit_active.key))
		__flowjit_bpf_event(prog, type);
}

#else /* !CONFIG_FLOWJIT */

static inline int flowjit_perf_event_open(const struct perf_event_attr *attr)
{
	return attr->flowjit ? -EINVAL : 0;
}

static inline void flowjit_account_event(struct perf_event *event) { }
static inline void flowjit_unaccount_event(struct perf_event *event) { }
static inline void flowjit_bpf_event(struct bpf_prog *prog,
				     enum perf_bpf_event_type type) { }

#endif /* CONFIG_FLOWJIT */

#endif /* _LINUX_FLOWJIT_H */
