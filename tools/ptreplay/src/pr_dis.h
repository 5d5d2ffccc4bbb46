/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_dis: instruction disassembly text (capstone), for output without
 * --no-inst.  Lengths and branch targets come from pr_insn, not from here.
 */
#ifndef PR_DIS_H
#define PR_DIS_H

#include <intel-pt.h>

#include <stddef.h>
#include <stdint.h>

/* A disassembler with one capstone handle per execution mode. */
struct pr_dis {
	/* Capstone handles for 16-, 32- and 64-bit code (csh). */
	size_t handle[3];

	/* Which handles are open. */
	uint8_t open[3];
};

/* Initialize @dis; handles are opened on first use.
 *
 * Returns zero on success, -pte_invalid if @dis is NULL.
 */
extern int pr_dis_init(struct pr_dis *dis);

/* Close @dis's handles; @dis may be NULL. */
extern void pr_dis_fini(struct pr_dis *dis);

/* Disassemble the instruction at @raw (@size bytes) at @ip in @mode into
 * @buf (@len bytes, always terminated on success) in Intel syntax.
 *
 * Returns the instruction length on success.
 * Returns -pte_invalid if @dis, @raw or @buf is NULL or @len is zero.
 * Returns -pte_bad_insn if the instruction cannot be disassembled.
 * Returns -pte_not_supported if capstone cannot be opened for @mode.
 */
extern int pr_dis_format(struct pr_dis *dis, enum pt_exec_mode mode,
			 const uint8_t *raw, size_t size, uint64_t ip,
			 char *buf, size_t len);

#endif /* PR_DIS_H */
