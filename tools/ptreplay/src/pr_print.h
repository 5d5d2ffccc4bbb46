/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_print: ptxed-compatible output lines.
 *
 * Every function writes one complete line (or nothing) to @out, in the
 * format libipt's ptxed uses, so that `ptreplay raw` output can be compared
 * with ptxed's line by line.
 */
#ifndef PR_PRINT_H
#define PR_PRINT_H

#include <intel-pt.h>

#include <stdint.h>
#include <stdio.h>

/* Flags selecting optional event fields. */
enum pr_print_flag {
	/* Append ", ip: <ip>" (and other addresses) to events. */
	pr_print_event_ip	= 1 << 0,

	/* Prefix events having a TSC with "<tsc>  ". */
	pr_print_event_time	= 1 << 1,

	/* Prefix lines with the trace offset. */
	pr_print_offset		= 1 << 2,

	/* Prefix instructions with the last timestamp. */
	pr_print_time		= 1 << 3
};

/* Print @event as "[...]".  @offset is used with pr_print_offset.
 *
 * Returns zero on success, -pte_invalid if @out or @event is NULL.
 */
extern int pr_print_event(FILE *out, const struct pt_event *event,
			  uint32_t flags, uint64_t offset);

/* Print an instruction line: optional prefixes, "? " if @speculative, the
 * IP as 16 hex digits, then "  @text" if @text is not NULL.
 *
 * Returns zero on success, -pte_invalid if @out is NULL.
 */
extern int pr_print_insn(FILE *out, uint64_t ip, int speculative,
			 const char *text, uint32_t flags, uint64_t offset,
			 uint64_t time);

/* Print a diagnostic "[<offset>, <ip>: <kind>: <pt_errstr(errcode)>]".
 *
 * A negative @offset_status means the offset is unknown; it is reported
 * on its own line first and the offset printed as "?".
 *
 * Returns zero on success, -pte_invalid if @out or @kind is NULL.
 */
extern int pr_print_diag(FILE *out, int offset_status, uint64_t offset,
			 uint64_t ip, const char *kind, int errcode);

/* The name of an execution mode ("64-bit", ...). */
extern const char *pr_print_exec_mode(enum pt_exec_mode mode);

#endif /* PR_PRINT_H */
