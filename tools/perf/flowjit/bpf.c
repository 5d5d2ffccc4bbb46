// SPDX-License-Identifier: GPL-2.0
/*
 * perf and flowjit, with libbpf: names of eBPF programs from the
 * bpf_prog_info perf record saved (HEADER_BPF_PROG_INFO).
 */
#include <stdint.h>
#include <linux/bpf.h>
#include <linux/types.h>

#include "flowjit.h"
#include "util/bpf-event.h"
#include "util/bpf-utils.h"
#include "util/env.h"

const char *flowjit__bpf_prog_name(struct perf_env *env, u64 id)
{
	struct bpf_prog_info_node *node;

	if (id > UINT32_MAX)
		return NULL;
	node = perf_env__find_bpf_prog_info(env, id);
	if (!node || !node->info_linear)
		return NULL;
	return node->info_linear->info.name;
}
