/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_insn: x86 instruction length decoding.
 *
 * The block decoder reports a block as (first ip, last ip, count); walking
 * it instruction by instruction needs each instruction's length and, for
 * relative branches that a block may span, the branch displacement.  This
 * is a table-driven length decoder for 16-, 32- and 64-bit code (legacy,
 * REX, VEX, EVEX and XOP encodings).  It does not check that an opcode is
 * valid beyond what its length needs.
 */
#ifndef PR_INSN_H
#define PR_INSN_H

#include <intel-pt.h>

#include <stddef.h>
#include <stdint.h>

/* What pr_insn_decode() finds out about one instruction. */
struct pr_insn_info {
	/* The instruction length in bytes. */
	uint8_t size;

	/* The instruction has a relative branch target (call/jmp/jcc rel,
	 * loop, jrcxz, xbegin).
	 */
	uint8_t relbr;

	/* The sign-extended branch displacement if @relbr. */
	int64_t disp;
};

/* Decode the instruction at @raw (up to @size bytes) in @mode.
 *
 * Returns the instruction length (positive) on success, filling @info.
 * Returns -pte_internal if @info or @raw is NULL.
 * Returns -pte_bad_insn if the instruction is longer than @size bytes or
 * than 15 bytes, or if it cannot be decoded in @mode.
 */
extern int pr_insn_decode(struct pr_insn_info *info, enum pt_exec_mode mode,
			  const uint8_t *raw, size_t size);

/* Compute the IP after executing @info at @ip, assuming a relative branch
 * is taken (like XED's next-IP: ip + size + displacement).
 *
 * Returns zero on success, -pte_internal if @next or @info is NULL.
 */
extern int pr_insn_next_ip(uint64_t *next, const struct pr_insn_info *info,
			   uint64_t ip);

/* The class of the instruction at @raw (up to @size bytes) in @mode, as
 * libipt's decoder gives it (ptic_call, ptic_return, ptic_far_call, ...;
 * ptic_other for anything that is not a branch), for the last
 * instruction of a block the block decoder leaves unclassified.
 *
 * Returns ptic_error if @raw is NULL or too short to tell.
 */
extern enum pt_insn_class pr_insn_class(enum pt_exec_mode mode,
					const uint8_t *raw, size_t size);

#endif /* PR_INSN_H */
