/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ujit: a small eBPF to x86-64 JIT that runs in user space.
 *
 * The bytecode is struct bpf_insn; the subset is 64-bit ALU (mov, add,
 * sub, mul, and, or, xor, lsh, rsh, arsh, neg; imm or reg operand),
 * lddw, ja, the conditional jumps (jeq, jne, jgt, jge, jlt, jle, jsgt,
 * jsge, jslt, jsle, jset; imm or reg), call of a fixed helper table and
 * exit. r0 is the result, r1-r5 the arguments; r0 and r6-r9 start at 0.
 * A call leaves r1-r5 unspecified. No memory access, no r10.
 */
#ifndef UJIT_H
#define UJIT_H

#include <stddef.h>
#include <linux/types.h>
#include <linux/bpf.h>

#define UJIT_NREGS	10		/* r0-r9 */
#define UJIT_NARGS	5		/* r1-r5 */
#define UJIT_MAX_INSNS	4096
#define UJIT_ERRLEN	160
#define UJIT_NHELPERS	4		/* helper ids 1..3 */
#define UJIT_MAX_STEPS	0x4000000ULL	/* interpreter budget, 2^26 */

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* what ujit_compile() reports besides the bytes */
struct ujit_image {
	__u32 len;		/* bytes of machine code */
	__u32 *insn_off;	/* optional, n + 1 entries: where insn i starts */
};

/* optional interpreter statistics; arrays of n entries or NULL */
struct ujit_stats {
	__u64 steps;
	__u32 *taken;		/* conditional jump i taken */
	__u32 *not_taken;	/* conditional jump i fell through */
};

typedef __u64 (*ujit_fn)(__u64, __u64, __u64, __u64, __u64);

int ujit_validate(const struct bpf_insn *insns, __u32 n, char *err);
int ujit_compile(const struct bpf_insn *insns, __u32 n, __u8 *buf, __u32 cap,
		 struct ujit_image *img, char *err);
int ujit_interp(const struct bpf_insn *insns, __u32 n, const __u64 *args,
		__u64 *r0, struct ujit_stats *st, char *err);
__u64 ujit_helper(__s32 id, const __u64 *r);

/* bytecode builders */
#define UJ_INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })
#define UJ_ALU_K(op, d, i)	UJ_INSN(BPF_ALU64 | BPF_##op | BPF_K, d, 0, 0, i)
#define UJ_ALU_X(op, d, s)	UJ_INSN(BPF_ALU64 | BPF_##op | BPF_X, d, s, 0, 0)
#define UJ_JMP_K(op, d, i, o)	UJ_INSN(BPF_JMP | BPF_##op | BPF_K, d, 0, o, i)
#define UJ_JMP_X(op, d, s, o)	UJ_INSN(BPF_JMP | BPF_##op | BPF_X, d, s, o, 0)
#define UJ_JA(o)		UJ_INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define UJ_CALL(id)		UJ_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define UJ_EXIT()		UJ_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* lddw takes two slots: UJ_LDDW_LO(d, v), UJ_LDDW_HI(v) */
#define UJ_LDDW_LO(d, v) \
	UJ_INSN(BPF_LD | BPF_IMM | BPF_DW, d, 0, 0, (__s32)(__u32)(__u64)(v))
#define UJ_LDDW_HI(v)	UJ_INSN(0, 0, 0, 0, (__s32)(__u32)((__u64)(v) >> 32))

/* built-in programs (progs.c) */
struct ujit_prog {
	const char *name;
	const char *what;
	const struct bpf_insn *insns;
	__u32 n;
};

extern const struct ujit_prog ujit_progs[];
extern const __u32 ujit_nprogs;
const struct ujit_prog *ujit_prog_find(const char *name);
__u32 ujit_prog_variant(__u32 k, struct bpf_insn *out, __u32 max);

#endif /* UJIT_H */
