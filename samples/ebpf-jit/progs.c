// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in programs, and a family of programs of different lengths for
 * the rewrite scenarios.
 */
#include <string.h>

#include "ujit.h"

/* r0 = r1 + r2 + r3 + r4 + r5 */
static const struct bpf_insn p_sum[] = {
	UJ_ALU_X(MOV, 0, 1),
	UJ_ALU_X(ADD, 0, 2),
	UJ_ALU_X(ADD, 0, 3),
	UJ_ALU_X(ADD, 0, 4),
	UJ_ALU_X(ADD, 0, 5),
	UJ_EXIT(),
};

/* the uBPF-style loop: 41 times not taken, then taken, on insn 2 */
static const struct bpf_insn p_loop42[] = {
	UJ_ALU_K(MOV, 0, 0),
	UJ_ALU_K(ADD, 0, 1),
	UJ_JMP_K(JGE, 0, 42, 1),
	UJ_JA(-3),
	UJ_EXIT(),
};

/* r0 = fib(r1), 64-bit wrapping */
static const struct bpf_insn p_fib[] = {
	UJ_ALU_K(MOV, 0, 0),
	UJ_ALU_K(MOV, 6, 1),
	UJ_JMP_K(JEQ, 1, 0, 6),
	UJ_ALU_X(MOV, 7, 0),
	UJ_ALU_X(ADD, 7, 6),
	UJ_ALU_X(MOV, 0, 6),
	UJ_ALU_X(MOV, 6, 7),
	UJ_ALU_K(SUB, 1, 1),
	UJ_JMP_K(JNE, 1, 0, -6),
	UJ_EXIT(),
};

/* r0 = Collatz steps of r1 (r1 = 0 gives 0), at most r2 steps */
static const struct bpf_insn p_collatz[] = {
	UJ_ALU_K(MOV, 0, 0),
	UJ_JMP_K(JLE, 1, 1, 10),
	UJ_JMP_X(JGE, 0, 2, 9),
	UJ_ALU_K(ADD, 0, 1),
	UJ_JMP_K(JSET, 1, 1, 2),
	UJ_ALU_K(RSH, 1, 1),
	UJ_JA(-6),
	UJ_ALU_X(MOV, 3, 1),
	UJ_ALU_K(LSH, 1, 1),
	UJ_ALU_X(ADD, 1, 3),
	UJ_ALU_K(ADD, 1, 1),
	UJ_JA(-11),
	UJ_EXIT(),
};

/* r0 = number of set bits of r1, by shifting */
static const struct bpf_insn p_popcount[] = {
	UJ_ALU_K(MOV, 0, 0),
	UJ_JMP_K(JEQ, 1, 0, 6),
	UJ_JMP_K(JSET, 1, 1, 0),
	UJ_ALU_X(MOV, 2, 1),
	UJ_ALU_K(AND, 2, 1),
	UJ_ALU_X(ADD, 0, 2),
	UJ_ALU_K(RSH, 1, 1),
	UJ_JA(-7),
	UJ_EXIT(),
};

/* helpers: mix(r1..r5), then umax with r6 = 1000, then + popcount */
static const struct bpf_insn p_call[] = {
	UJ_ALU_X(MOV, 6, 1),
	UJ_CALL(1),
	UJ_ALU_X(MOV, 7, 0),
	UJ_ALU_X(MOV, 1, 6),
	UJ_ALU_K(MOV, 2, 1000),
	UJ_CALL(2),
	UJ_ALU_X(MOV, 8, 0),
	UJ_ALU_X(MOV, 1, 7),
	UJ_CALL(3),
	UJ_ALU_X(ADD, 0, 8),
	UJ_ALU_X(XOR, 0, 7),
	UJ_EXIT(),
};

/* 64-bit immediates, signed shifts, neg, mul and register shifts */
static const struct bpf_insn p_mix[] = {
	UJ_LDDW_LO(0, 0x8000000000000001ULL),
	UJ_LDDW_HI(0x8000000000000001ULL),
	UJ_ALU_X(MUL, 0, 1),
	UJ_ALU_K(ARSH, 0, 7),
	UJ_ALU_X(MOV, 4, 2),
	UJ_ALU_X(LSH, 0, 4),
	UJ_ALU_X(RSH, 4, 3),
	UJ_ALU_X(XOR, 0, 4),
	UJ_ALU_K(NEG, 0, 0),
	UJ_ALU_K(MUL, 0, -129),
	UJ_ALU_K(OR, 0, 0x7fffffff),
	UJ_ALU_K(AND, 0, (__s32)0x80000000),
	UJ_ALU_X(SUB, 0, 5),
	UJ_EXIT(),
};

/* a "static key": insn 1 is the 5-byte site (see the static-key scenario) */
static const struct bpf_insn p_static_key[] = {
	UJ_ALU_K(MOV, 0, 1),
	UJ_JA(1),
	UJ_EXIT(),
	UJ_ALU_K(MOV, 0, 2),
	UJ_EXIT(),
};

#define PROG(n, w) { #n, w, p_##n, ARRAY_SIZE(p_##n) }

const struct ujit_prog ujit_progs[] = {
	PROG(sum, "r1 + r2 + r3 + r4 + r5"),
	PROG(loop42, "count to 42 in a loop (41 not taken + 1 taken)"),
	PROG(fib, "fib(r1), wrapping"),
	PROG(collatz, "Collatz steps of r1, at most r2"),
	PROG(popcount, "set bits of r1, by shifting"),
	PROG(call, "helper calls: mix, umax, popcount"),
	PROG(mix, "lddw, mul, shifts by reg (rcx), neg, boundary imms"),
	PROG(static_key, "static-key site: 1 through the nop, 2 through the jmp"),
};

const __u32 ujit_nprogs = ARRAY_SIZE(ujit_progs);

const struct ujit_prog *ujit_prog_find(const char *name)
{
	__u32 i;

	for (i = 0; i < ujit_nprogs; i++)
		if (!strcmp(ujit_progs[i].name, name))
			return &ujit_progs[i];
	return NULL;
}

/*
 * Variant k: r0 = r1 + k, then 1 + k % 5 rounds of r0 = r0 * 3 ^ round,
 * odd k adding a small loop over r2 & 7; consecutive variants differ in
 * length and bytes. Returns the number of insns (max >= 32).
 */
__u32 ujit_prog_variant(__u32 k, struct bpf_insn *out, __u32 max)
{
	__u32 n = 0, i;

	if (max < 32)
		return 0;
	out[n++] = UJ_ALU_X(MOV, 0, 1);
	out[n++] = UJ_ALU_K(ADD, 0, (__s32)k);
	for (i = 0; i <= k % 5; i++) {
		out[n++] = UJ_ALU_K(MUL, 0, 3);
		out[n++] = UJ_ALU_K(XOR, 0, (__s32)(i * 0x1001));
	}
	if (k & 1) {
		out[n++] = UJ_ALU_X(MOV, 6, 2);
		out[n++] = UJ_ALU_K(AND, 6, 7);
		out[n++] = UJ_JMP_K(JEQ, 6, 0, 3);
		out[n++] = UJ_ALU_K(ADD, 0, 5);
		out[n++] = UJ_ALU_K(SUB, 6, 1);
		out[n++] = UJ_JA(-4);
	}
	out[n++] = UJ_EXIT();
	return n;
}
