/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf and flowjit: code bytes of runtime code images for perf's Intel PT
 * decoder (util/intel-pt.c). See tools/perf/flowjit/flowjit.rst.
 */
#ifndef __PERF_FLOWJIT_DECODE_H
#define __PERF_FLOWJIT_DECODE_H

#include <stdbool.h>
#include <linux/flowjit.h>
#include <linux/types.h>

union perf_event;
struct perf_sample;
struct perf_session;
struct intel_pt_insn;
struct flowjit_pt;

/* flowjit_pt__walk(): no image covers the address reached */
#define FLOWJIT_WALK_NONE	1

/*
 * The images of @session's flowjit records, or NULL when the perf config
 * says intel-pt.flowjit = false (or out of memory).
 */
struct flowjit_pt *flowjit_pt__new(struct perf_session *session);
void flowjit_pt__delete(struct flowjit_pt *fp);

/*
 * As util/intel-pt.c's walk_insn callback: walk the instructions from
 * *@ip in the images of process @pid (or the kernel's) live at perf time
 * @time, adding to *@insn_cnt, up to and including a branch, to @to_ip
 * or @max_insn_cnt instructions. With @late, code with no image live at
 * @time is read from the first image made after it. Returns 0 when done,
 * FLOWJIT_WALK_NONE when no image covers *@ip (*@ip and *@insn_cnt tell
 * how far it got), or -EINVAL for bytes that are no instruction.
 */
int flowjit_pt__walk(struct flowjit_pt *fp, u32 pid, bool kernel, u64 time, bool late,
		     struct intel_pt_insn *insn, u64 *insn_cnt, u64 *ip, u64 to_ip,
		     u64 max_insn_cnt);

/*
 * A flowjit record delivered in time order: adds it to the store if it
 * was not filled beforehand, names user JIT code, and sets [*@start,
 * *@end) of address space *@asid to the range of an image that becomes
 * live now (else *@start == *@end), for perf to drop cached blocks there.
 */
int flowjit_pt__event(struct flowjit_pt *fp, union perf_event *event,
		      struct perf_sample *sample, u64 *asid, u64 *start, u64 *end);

#endif /* __PERF_FLOWJIT_DECODE_H */
