// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_insn: x86 instruction length decoding.
 */
#include "pr_insn.h"
#include "pr_test.h"

static struct prt_result decode_null(void)
{
	struct pr_insn_info info;
	uint8_t nop = 0x90;

	prt_int_eq(pr_insn_decode(NULL, ptem_64bit, &nop, 1), -pte_internal);
	prt_int_eq(pr_insn_decode(&info, ptem_64bit, NULL, 1), -pte_internal);
	prt_int_eq(pr_insn_next_ip(NULL, &info, 0), -pte_internal);

	return prt_passed();
}

/* Decode @len bytes @bytes in @mode; expect @size (or an error) and, for
 * relative branches, @disp.
 */
static struct prt_result length(enum pt_exec_mode mode, const char *bytes,
				size_t len, int size, int relbr,
				int64_t disp)
{
	struct pr_insn_info info;

	prt_int_eq(pr_insn_decode(&info, mode, (const uint8_t *) bytes, len),
		   size);
	if (size < 0)
		return prt_passed();

	prt_int_eq(info.size, size);
	prt_int_eq(info.relbr, relbr);
	if (relbr)
		prt_int_eq(info.disp, disp);

	return prt_passed();
}

static struct prt_result unknown_mode(void)
{
	struct pr_insn_info info;
	uint8_t nop = 0x90;

	prt_int_eq(pr_insn_decode(&info, ptem_unknown, &nop, 1),
		   -pte_bad_insn);

	return prt_passed();
}

static struct prt_result too_long(void)
{
	struct pr_insn_info info;
	uint8_t bytes[16];

	memset(bytes, 0x66, sizeof(bytes));
	bytes[15] = 0x90;
	prt_int_eq(pr_insn_decode(&info, ptem_64bit, bytes, 16),
		   -pte_bad_insn);

	/* Fourteen prefixes plus the opcode are fine. */
	prt_int_eq(pr_insn_decode(&info, ptem_64bit, &bytes[1], 15), 15);

	return prt_passed();
}

static struct prt_result next_ip(void)
{
	struct pr_insn_info info;
	uint64_t next;

	memset(&info, 0, sizeof(info));
	info.size = 2;
	prt_int_eq(pr_insn_next_ip(&next, &info, 0x1000), 0);
	prt_uint_eq(next, 0x1002);

	info.relbr = 1;
	info.disp = -4;
	prt_int_eq(pr_insn_next_ip(&next, &info, 0x1000), 0);
	prt_uint_eq(next, 0xffe);

	return prt_passed();
}

/* Run length() on a string literal of instruction bytes. */
#define L(what, mode, str, size, relbr, disp)				\
	prt_run(suite, what, length, mode, str, sizeof(str) - 1, size,	\
		relbr, disp)

/* Classes as libipt's decoder gives them, through prefixes and REX. */
static struct prt_result classes(void)
{
	static const struct {
		uint8_t raw[6];
		size_t size;
		enum pt_insn_class iclass;
	} c[] = {
		{ { 0xc3 }, 1, ptic_return },
		{ { 0xf3, 0xc3 }, 2, ptic_return },
		{ { 0xc2, 0x08, 0x00 }, 3, ptic_return },
		{ { 0xe8, 0, 0, 0, 0 }, 5, ptic_call },
		{ { 0x41, 0xff, 0xd3 }, 3, ptic_call },		/* call *%r11 */
		{ { 0xff, 0x15, 0, 0, 0, 0 }, 6, ptic_call },	/* call *rip */
		{ { 0xff, 0xe0 }, 2, ptic_jump },		/* jmp *%rax */
		{ { 0xff, 0x1c, 0x24 }, 3, ptic_far_call },
		{ { 0x0f, 0x05 }, 2, ptic_far_call },		/* syscall */
		{ { 0xcd, 0x80 }, 2, ptic_far_call },
		{ { 0x48, 0x0f, 0x07 }, 3, ptic_far_return },	/* sysretq */
		{ { 0x48, 0xcf }, 2, ptic_far_return },		/* iretq */
		{ { 0x74, 0x00 }, 2, ptic_cond_jump },
		{ { 0x0f, 0x84, 0, 0, 0, 0 }, 6, ptic_cond_jump },
		{ { 0x90 }, 1, ptic_other },
		{ { 0x0f, 0x01, 0xc1 }, 3, ptic_far_call },	/* vmcall */
		{ { 0x66 }, 1, ptic_error },
		{ { 0xff }, 1, ptic_error },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); ++i)
		prt_int_eq(pr_insn_class(ptem_64bit, c[i].raw, c[i].size),
			   c[i].iclass);
	prt_int_eq(pr_insn_class(ptem_64bit, NULL, 1), ptic_error);
	/* 0x41 is inc %ecx outside 64-bit mode */
	prt_int_eq(pr_insn_class(ptem_32bit, c[4].raw, c[4].size),
		   ptic_other);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_insn: decode and next_ip reject NULL arguments",
		decode_null);
	prt_run(suite, "pr_insn: an unknown execution mode is rejected",
		unknown_mode);
	prt_run(suite, "pr_insn: instructions over 15 bytes are rejected",
		too_long);
	prt_run(suite, "pr_insn: instruction classes as libipt gives them "
		"(calls, returns, far transfers, jumps) through prefixes",
		classes);
	prt_run(suite, "pr_insn: next_ip adds size and taken displacement",
		next_ip);
	L("pr_insn: nop is one byte",
	  ptem_64bit, "\x90", 1, 0, 0);
	L("pr_insn: an empty buffer is rejected",
	  ptem_64bit, "", -pte_bad_insn, 0, 0);
	L("pr_insn: call rel32 has a relative target",
	  ptem_64bit, "\xe8\xfb\xff\xff\xff", 5, 1, -5);
	L("pr_insn: a truncated call rel32 is rejected",
	  ptem_64bit, "\xe8\x00\x00", -pte_bad_insn, 0, 0);
	L("pr_insn: 0x66 does not shorten call rel32 in 64-bit",
	  ptem_64bit, "\x66\xe8\x01\x00\x00\x00", 6, 1, 1);
	L("pr_insn: call rel16 in 16-bit mode",
	  ptem_16bit, "\xe8\x10\x00", 3, 1, 0x10);
	L("pr_insn: 0x66 call rel16 in 32-bit mode",
	  ptem_32bit, "\x66\xe8\xff\xff", 4, 1, -1);
	L("pr_insn: jmp rel8 is sign-extended",
	  ptem_64bit, "\xeb\xfe", 2, 1, -2);
	L("pr_insn: jcc rel8",
	  ptem_64bit, "\x74\x05", 2, 1, 5);
	L("pr_insn: jcc rel32 (0f 8x)",
	  ptem_64bit, "\x0f\x84\x00\x01\x00\x00", 6, 1, 0x100);
	L("pr_insn: loop rel8",
	  ptem_64bit, "\xe2\xfe", 2, 1, -2);
	L("pr_insn: xbegin rel32 has a relative target",
	  ptem_64bit, "\xc7\xf8\x10\x00\x00\x00", 6, 1, 0x10);
	L("pr_insn: mov r/m32, imm32 (c7 /0) is no branch",
	  ptem_64bit, "\xc7\x00\x01\x00\x00\x00", 6, 0, 0);
	L("pr_insn: ret and indirect jmp have no target",
	  ptem_64bit, "\xff\xe0", 2, 0, 0);
	L("pr_insn: mov rax, imm64 (REX.W b8) is 10 bytes",
	  ptem_64bit, "\x48\xb8\x01\x02\x03\x04\x05\x06\x07\x08", 10, 0, 0);
	L("pr_insn: mov eax, imm32 is 5 bytes",
	  ptem_64bit, "\xb8\x01\x02\x03\x04", 5, 0, 0);
	L("pr_insn: 0x66 mov ax, imm16 is 4 bytes",
	  ptem_64bit, "\x66\xb8\x01\x02", 4, 0, 0);
	L("pr_insn: a REX before a legacy prefix is ignored",
	  ptem_64bit, "\x48\x66\xb8\x01\x02", 5, 0, 0);
	L("pr_insn: SIB with disp32 and no base",
	  ptem_64bit, "\x8b\x04\x25\x00\x10\x00\x00", 7, 0, 0);
	L("pr_insn: RIP-relative disp32",
	  ptem_64bit, "\x8b\x05\x00\x10\x00\x00", 6, 0, 0);
	L("pr_insn: ModRM disp8",
	  ptem_64bit, "\x8b\x40\x08", 3, 0, 0);
	L("pr_insn: 16-bit addressing with disp16",
	  ptem_16bit, "\x8b\x06\x00\x10", 4, 0, 0);
	L("pr_insn: 0x67 selects 16-bit addressing in 32-bit",
	  ptem_32bit, "\x67\x8b\x46\x08", 4, 0, 0);
	L("pr_insn: moffs is 8 bytes in 64-bit mode",
	  ptem_64bit, "\xa1\x01\x02\x03\x04\x05\x06\x07\x08", 9, 0, 0);
	L("pr_insn: test r/m8, imm8 (f6 /0)",
	  ptem_64bit, "\xf6\xc0\x01", 3, 0, 0);
	L("pr_insn: not r/m8 (f6 /2) has no immediate",
	  ptem_64bit, "\xf6\xd0", 2, 0, 0);
	L("pr_insn: test r/m32, imm32 (f7 /0)",
	  ptem_64bit, "\xf7\xc0\x01\x00\x00\x00", 6, 0, 0);
	L("pr_insn: enter imm16, imm8",
	  ptem_64bit, "\xc8\x10\x00\x01", 4, 0, 0);
	L("pr_insn: far call ptr16:32 in 32-bit mode",
	  ptem_32bit, "\x9a\x00\x00\x00\x00\x08\x00", 7, 0, 0);
	L("pr_insn: far call ptr is invalid in 64-bit mode",
	  ptem_64bit, "\x9a\x00\x00\x00\x00\x08\x00", -pte_bad_insn, 0, 0);
	L("pr_insn: syscall (0f 05) has no ModRM",
	  ptem_64bit, "\x0f\x05", 2, 0, 0);
	L("pr_insn: ptwrite eax (f3 0f ae /4)",
	  ptem_64bit, "\xf3\x0f\xae\xe0", 4, 0, 0);
	L("pr_insn: pshufd (0f 70) has an imm8",
	  ptem_64bit, "\x66\x0f\x70\xc1\x1b", 5, 0, 0);
	L("pr_insn: three-byte 0f 38 map",
	  ptem_64bit, "\x66\x0f\x38\x00\xc1", 5, 0, 0);
	L("pr_insn: three-byte 0f 3a map has an imm8",
	  ptem_64bit, "\x66\x0f\x3a\x0f\xc1\x08", 6, 0, 0);
	L("pr_insn: VEX2 vzeroupper has no ModRM",
	  ptem_64bit, "\xc5\xf8\x77", 3, 0, 0);
	L("pr_insn: VEX3 map 0f3a has an imm8",
	  ptem_64bit, "\xc4\xe3\x79\x0f\xc1\x08", 6, 0, 0);
	L("pr_insn: EVEX vmovups zmm0, [rax]",
	  ptem_64bit, "\x62\xf1\x7c\x48\x10\x00", 6, 0, 0);
	L("pr_insn: c4 with ModRM.mod != 3 is LES in 32-bit",
	  ptem_32bit, "\xc4\x00", 2, 0, 0);
	L("pr_insn: 8f /0 is POP, not XOP",
	  ptem_64bit, "\x8f\x00", 2, 0, 0);

	return prt_exit(&suite);
}
