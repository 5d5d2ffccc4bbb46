/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgt.h - kernel ground truth from QEMU's execution log (ptsynth kernel
 * mode, README.rst "Kernel scenario")
 */
#ifndef PTSYNTH_KGT_H
#define PTSYNTH_KGT_H

#include <stddef.h>
#include <stdint.h>

#include "gt.h"

/*
 * Record type of the kernel mode, numbered away from gt.h's own types:
 * the instruction before it (a GT_INSN inside the trace filter) left the
 * filtered ranges for @target (TIP.PGD).  The next GT_INSN re-enters them
 * (TIP.PGE).
 */
#define GT_KEXIT	0x100
/*
 * A hardware interrupt was taken inside the filter before the next
 * instruction (at @ip) ran: FUP(ip) + TIP.PGD, then TIP.PGE at @ip.
 */
#define GT_KIRQ		0x101

/* GT_INSN flag: a kernel (CPL 0) instruction */
#define GT_INSN_KERNEL	1

struct gt_kexit {
	struct gt_rec h;
	uint64_t target;
};

struct gt_kirq {
	struct gt_rec h;
	uint64_t ip;
};

#define KGT_MAX_RANGES	16

struct kgt_range {
	uint64_t start, end;	/* [start, end) */
};

struct kgt_opts {
	const char *log;		/* QEMU -d in_asm,exec,nochain log */
	const char *marks;		/* the guest program's output */
	const char *out;		/* .gt file */
	struct kgt_range filter[KGT_MAX_RANGES];
	int nr_filter;
	int verbose;
};

int kgt_parse_ranges(const char *s, struct kgt_range *r, int max);
int kgt_run(const struct kgt_opts *o);

/* ksynth.c: kernel GT -> PT stream -> perf.data merged with a guest's */
struct ksynth_opts {
	const char *gt;
	const char *sideband;		/* perf.data of perf record in the guest */
	const char *out;
	const char *raw;		/* also write the PT stream here */
	uint64_t psb_period;
	uint32_t pmu_type;
	/* the filter, for AUXTRACE_INFO's filter string (perf record --filter) */
	struct kgt_range filter[KGT_MAX_RANGES];
	int nr_filter;
};

int ksynth_run(const struct ksynth_opts *o);
uint8_t *kgt_read_file(const char *path, size_t *size);

#endif
