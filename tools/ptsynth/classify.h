/* SPDX-License-Identifier: GPL-2.0 */
/*
 * classify.h - classify x86-64 instructions for Intel PT (via Capstone)
 */
#ifndef PTSYNTH_CLASSIFY_H
#define PTSYNTH_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum insn_class {
	IC_INVALID,	/* could not be decoded */
	IC_OTHER,	/* no change of flow */
	IC_JCC,		/* conditional direct branch: one TNT bit */
	IC_JMP,		/* unconditional direct jump: no packet */
	IC_JMP_IND,	/* indirect jump: TIP */
	IC_CALL,	/* direct near call: no packet */
	IC_CALL_IND,	/* indirect near call: TIP */
	IC_RET,		/* near return: TIP (or TNT with ret compression) */
	IC_FAR,		/* far transfer: syscall, int, far jmp/call/ret, iret */
};

struct insn_info {
	enum insn_class cls;
	uint8_t len;
	bool rep_string;	/* REP-prefixed string insn: steps repeat */
	bool is_syscall;	/* SYSCALL or SYSENTER */
	uint64_t target;	/* direct branch target, if any */
};

int classify_init(void);
void classify_exit(void);
int classify(const uint8_t *bytes, size_t size, uint64_t ip,
	     struct insn_info *info);
int classify_fallback(const uint8_t *bytes, size_t size, uint8_t len_hint,
		      struct insn_info *info);
const char *insn_class_name(enum insn_class cls);

#endif
