// SPDX-License-Identifier: GPL-2.0
/*
 * classify.c - instruction classification with Capstone
 *
 * Capstone does the x86 decoding (length, opcode, operands); this file
 * only maps its result to what matters for Intel PT packet generation.
 */
#include <capstone/capstone.h>
#include <stdio.h>
#include <string.h>

#include "classify.h"

static csh cs_handle;
static bool cs_ready;

static const char * const class_names[] = {
	[IC_INVALID]	= "invalid",
	[IC_OTHER]	= "other",
	[IC_JCC]	= "jcc",
	[IC_JMP]	= "jmp",
	[IC_JMP_IND]	= "jmp-ind",
	[IC_CALL]	= "call",
	[IC_CALL_IND]	= "call-ind",
	[IC_RET]	= "ret",
	[IC_FAR]	= "far",
};

const char *insn_class_name(enum insn_class cls)
{
	return class_names[cls];
}

int classify_init(void)
{
	if (cs_ready)
		return 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs_handle) != CS_ERR_OK) {
		fprintf(stderr, "ptsynth: cannot open capstone\n");
		return -1;
	}
	cs_option(cs_handle, CS_OPT_DETAIL, CS_OPT_ON);
	cs_ready = true;
	return 0;
}

void classify_exit(void)
{
	if (cs_ready)
		cs_close(&cs_handle);
	cs_ready = false;
}

static bool is_jcc(unsigned int id)
{
	switch (id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP:
	case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return true;
	default:
		return false;
	}
}

static bool is_far(unsigned int id)
{
	switch (id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_SYSRET:
	case X86_INS_SYSEXIT: case X86_INS_INT: case X86_INS_INT1:
	case X86_INS_INT3: case X86_INS_INTO: case X86_INS_IRET:
	case X86_INS_IRETD: case X86_INS_IRETQ: case X86_INS_LJMP:
	case X86_INS_LCALL: case X86_INS_RETF: case X86_INS_RETFQ:
	case X86_INS_UD2:
		return true;
	default:
		return false;
	}
}

static bool is_string(unsigned int id)
{
	switch (id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD:
	case X86_INS_MOVSQ: case X86_INS_STOSB: case X86_INS_STOSW:
	case X86_INS_STOSD: case X86_INS_STOSQ: case X86_INS_LODSB:
	case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD:
	case X86_INS_CMPSQ: case X86_INS_SCASB: case X86_INS_SCASW:
	case X86_INS_SCASD: case X86_INS_SCASQ: case X86_INS_INSB:
	case X86_INS_INSW: case X86_INS_INSD: case X86_INS_OUTSB:
	case X86_INS_OUTSW: case X86_INS_OUTSD:
		return true;
	default:
		return false;
	}
}

static enum insn_class classify_near(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;
	bool direct = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;

	if (direct)
		*target = x->operands[0].imm;
	switch (in->id) {
	case X86_INS_JMP:
		return direct ? IC_JMP : IC_JMP_IND;
	case X86_INS_CALL:
		return direct ? IC_CALL : IC_CALL_IND;
	case X86_INS_RET:
		return IC_RET;
	default:
		return IC_OTHER;
	}
}

int classify(const uint8_t *bytes, size_t size, uint64_t ip,
	     struct insn_info *info)
{
	const uint8_t *code = bytes;
	uint64_t addr = ip;
	cs_insn *in;
	int ret = 0;

	info->cls = IC_INVALID;
	info->len = 0;
	info->rep_string = false;
	info->is_syscall = false;
	info->target = 0;
	if (classify_init())
		return -1;
	in = cs_malloc(cs_handle);
	if (!in)
		return -1;
	if (!cs_disasm_iter(cs_handle, &code, &size, &addr, in)) {
		ret = -1;
		goto out;
	}
	info->len = in->size;
	if (is_jcc(in->id)) {
		info->cls = IC_JCC;
		info->target = in->detail->x86.operands[0].imm;
	} else if (is_far(in->id)) {
		info->cls = IC_FAR;
		info->is_syscall = in->id == X86_INS_SYSCALL ||
				   in->id == X86_INS_SYSENTER;
	} else {
		info->cls = classify_near(in, &info->target);
	}
	info->rep_string = is_string(in->id) &&
			   (in->detail->x86.prefix[0] == X86_PREFIX_REP ||
			    in->detail->x86.prefix[0] == X86_PREFIX_REPNE);
out:
	cs_free(in, 1);
	return ret;
}

/*
 * Capstone 4 does not know every encoding (e.g. some EVEX/AVX-512 forms
 * glibc uses on AVX-512 machines).  No VEX/EVEX/XOP-encoded instruction
 * changes the flow, so such an instruction is classified as IC_OTHER with
 * the length observed by single-stepping over it (@len_hint).
 */
int classify_fallback(const uint8_t *bytes, size_t size, uint8_t len_hint,
		      struct insn_info *info)
{
	memset(info, 0, sizeof(*info));
	info->cls = IC_INVALID;
	if (!size || !len_hint || len_hint > 15)
		return -1;
	switch (bytes[0]) {
	case 0x62: case 0xc4: case 0xc5: case 0x8f:
		info->cls = IC_OTHER;
		info->len = len_hint;
		return 0;
	default:
		return -1;
	}
}
