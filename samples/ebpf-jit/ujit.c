// SPDX-License-Identifier: GPL-2.0
/*
 * ujit: validate, compile to x86-64 and interpret a subset of eBPF.
 *
 * Register mapping (as the kernel's x86-64 JIT): r0 rax, r1 rdi, r2 rsi,
 * r3 rdx, r4 rcx, r5 r8, r6 rbx, r7 r13, r8 r14, r9 r15; r11 is scratch.
 * r1-r5 are the SysV argument registers, so a helper call needs no moves.
 * Every jump is a rel32 jump, so instruction sizes do not depend on the
 * layout: one pass sizes the code, a second one emits it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ujit.h"

#define HW_RAX	0
#define HW_RCX	1
#define HW_RBX	3
#define HW_R11	11

static const __u8 hw[UJIT_NREGS] = { 0, 7, 6, 2, 1, 8, 3, 13, 14, 15 };

static __u64 helper_mix(__u64 a, __u64 b, __u64 c, __u64 d, __u64 e)
{
	return (a * 0x9e3779b97f4a7c15ULL) ^ (b + 3 * c + 5 * d + 7 * e);
}

static __u64 helper_umax(__u64 a, __u64 b, __u64 c, __u64 d, __u64 e)
{
	return a > b ? a : b;
}

static __u64 helper_popcount(__u64 a, __u64 b, __u64 c, __u64 d, __u64 e)
{
	return __builtin_popcountll(a);
}

static const ujit_fn helpers[UJIT_NHELPERS] = {
	[1] = helper_mix,
	[2] = helper_umax,
	[3] = helper_popcount,
};

__u64 ujit_helper(__s32 id, const __u64 *r)
{
	return helpers[id](r[1], r[2], r[3], r[4], r[5]);
}

/* ---- validation ---- */

static int fail(char *err, __u32 i, const char *msg, __u8 code)
{
	if (err)
		snprintf(err, UJIT_ERRLEN, "insn %u (opcode 0x%02x): %s", i, code, msg);
	return -EINVAL;
}

static int check_alu(const struct bpf_insn *in, __u32 i, char *err)
{
	__u8 op = BPF_OP(in->code), x = BPF_SRC(in->code) == BPF_X;

	switch (op) {
	case BPF_MOV: case BPF_ADD: case BPF_SUB: case BPF_MUL:
	case BPF_AND: case BPF_OR: case BPF_XOR:
		break;
	case BPF_LSH: case BPF_RSH: case BPF_ARSH:
		if (!x && (in->imm < 0 || in->imm > 63))
			return fail(err, i, "shift count out of 0..63", in->code);
		break;
	case BPF_NEG:
		if (x || in->imm)
			return fail(err, i, "neg takes no operand", in->code);
		break;
	default:
		return fail(err, i, "unsupported ALU64 operation", in->code);
	}
	if (in->off || (x && in->imm) || (!x && in->src_reg))
		return fail(err, i, "reserved field not zero", in->code);
	if (in->src_reg >= UJIT_NREGS)
		return fail(err, i, "source register out of r0-r9", in->code);
	return 0;
}

static int check_target(__u32 i, __s64 t, __u32 n, const __u8 *slot2, char *err,
			__u8 code)
{
	if (t < 0 || t >= n)
		return fail(err, i, "jump target out of the program", code);
	if (slot2[t])
		return fail(err, i, "jump into the middle of lddw", code);
	return 0;
}

static int check_jmp(const struct bpf_insn *in, __u32 i, __u32 n,
		     const __u8 *slot2, char *err)
{
	__u8 op = BPF_OP(in->code), x = BPF_SRC(in->code) == BPF_X;

	switch (op) {
	case BPF_EXIT:
	case BPF_JA:
	case BPF_CALL:
		if (x || in->dst_reg || in->src_reg ||
		    (op != BPF_CALL && in->imm) || (op != BPF_JA && in->off))
			return fail(err, i, "reserved field not zero", in->code);
		if (op == BPF_CALL && (in->imm < 1 || in->imm >= UJIT_NHELPERS))
			return fail(err, i, "unknown helper", in->code);
		if (op == BPF_JA)
			return check_target(i, (__s64)i + 1 + in->off, n, slot2,
					    err, in->code);
		return 0;
	case BPF_JEQ: case BPF_JNE: case BPF_JGT: case BPF_JGE:
	case BPF_JLT: case BPF_JLE: case BPF_JSGT: case BPF_JSGE:
	case BPF_JSLT: case BPF_JSLE: case BPF_JSET:
		break;
	default:
		return fail(err, i, "unsupported jump operation", in->code);
	}
	if ((x && in->imm) || (!x && in->src_reg))
		return fail(err, i, "reserved field not zero", in->code);
	if (in->src_reg >= UJIT_NREGS)
		return fail(err, i, "source register out of r0-r9", in->code);
	return check_target(i, (__s64)i + 1 + in->off, n, slot2, err, in->code);
}

static int falls_through(const struct bpf_insn *in)
{
	__u8 op = BPF_OP(in->code);

	return BPF_CLASS(in->code) != BPF_JMP || (op != BPF_EXIT && op != BPF_JA);
}

/* mark the second slots of lddw; 0 or an error */
static int mark_lddw(const struct bpf_insn *insns, __u32 n, __u8 *slot2, char *err)
{
	__u32 i;

	for (i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];

		if (BPF_CLASS(in->code) != BPF_LD)
			continue;
		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			return fail(err, i, "unsupported load (only lddw)", in->code);
		if (i + 1 >= n)
			return fail(err, i, "lddw without its second slot", in->code);
		if (in->src_reg || in->off || insns[i + 1].code ||
		    insns[i + 1].dst_reg || insns[i + 1].src_reg || insns[i + 1].off)
			return fail(err, i, "malformed lddw", in->code);
		slot2[++i] = 1;
	}
	return 0;
}

static int check_insn(const struct bpf_insn *in, __u32 i, __u32 n,
		      const __u8 *slot2, char *err)
{
	if (in->dst_reg >= UJIT_NREGS)
		return fail(err, i, "destination register out of r0-r9", in->code);
	switch (BPF_CLASS(in->code)) {
	case BPF_ALU64:
		return check_alu(in, i, err);
	case BPF_JMP:
		return check_jmp(in, i, n, slot2, err);
	case BPF_LD:
		return 0;
	case BPF_ALU:
		return fail(err, i, "32-bit ALU is not supported", in->code);
	default:
		return fail(err, i, "unsupported instruction class", in->code);
	}
}

int ujit_validate(const struct bpf_insn *insns, __u32 n, char *err)
{
	__u8 *slot2;
	__u32 i;
	int ret;

	if (!n || n > UJIT_MAX_INSNS) {
		if (err)
			snprintf(err, UJIT_ERRLEN, "program has %u insns, not 1..%u",
				 n, UJIT_MAX_INSNS);
		return -EINVAL;
	}
	slot2 = calloc(n, 1);
	if (!slot2)
		return -ENOMEM;
	ret = mark_lddw(insns, n, slot2, err);
	for (i = 0; !ret && i < n; i++) {
		__u32 next = i + (insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) ? 2 : 1);

		if (slot2[i])
			continue;
		ret = check_insn(&insns[i], i, n, slot2, err);
		if (!ret && falls_through(&insns[i]) && next >= n)
			ret = fail(err, i, "falls off the end of the program",
				   insns[i].code);
	}
	free(slot2);
	return ret;
}

/* ---- x86-64 emitter ---- */

struct emit {
	__u8 *buf;	/* NULL while sizing */
	__u32 cap;
	__u32 len;
};

static void emit1(struct emit *e, __u8 b)
{
	if (e->buf && e->len < e->cap)
		e->buf[e->len] = b;
	e->len++;
}

static void emitn(struct emit *e, __u64 v, int n)
{
	while (n--) {
		emit1(e, v & 0xff);
		v >>= 8;
	}
}

static void emit_rex(struct emit *e, int reg, int rm)
{
	emit1(e, 0x48 | (reg >= 8) << 2 | (rm >= 8));
}

static void emit_modrm(struct emit *e, int reg, int rm)
{
	emit1(e, 0xc0 | (reg & 7) << 3 | (rm & 7));
}

/* op r/m64, r64 */
static void emit_rr(struct emit *e, __u8 op, int reg, int rm)
{
	emit_rex(e, reg, rm);
	emit1(e, op);
	emit_modrm(e, reg, rm);
}

static int is_imm8(__s32 imm)
{
	return imm >= -128 && imm <= 127;
}

/* group-1 op r/m64, imm (add 0, or 1, and 4, sub 5, xor 6, cmp 7) */
static void emit_grp1(struct emit *e, int ext, int rm, __s32 imm)
{
	emit_rex(e, 0, rm);
	emit1(e, is_imm8(imm) ? 0x83 : 0x81);
	emit_modrm(e, ext, rm);
	emitn(e, (__u32)imm, is_imm8(imm) ? 1 : 4);
}

static void emit_push(struct emit *e, int r)
{
	if (r >= 8)
		emit1(e, 0x41);
	emit1(e, 0x50 + (r & 7));
}

static void emit_pop(struct emit *e, int r)
{
	if (r >= 8)
		emit1(e, 0x41);
	emit1(e, 0x58 + (r & 7));
}

/* xor r32, r32: zero a register in 2 or 3 bytes */
static void emit_zero(struct emit *e, int r)
{
	if (r >= 8)
		emit1(e, 0x45);
	emit1(e, 0x31);
	emit_modrm(e, r, r);
}

struct jit {
	struct emit e;
	const struct bpf_insn *insns;
	__u32 n;
	__u32 *addrs;		/* n + 1 insn offsets, from the sizing pass */
	__u16 saved;		/* bit per r6-r9 used */
	int pad;		/* sub rsp, 8 so that calls see rsp 16-aligned */
};

static void emit_prologue(struct jit *j)
{
	int r;

	for (r = 6; r < UJIT_NREGS; r++)
		if (j->saved & 1 << r)
			emit_push(&j->e, hw[r]);
	if (j->pad)
		emitn(&j->e, 0x08ec8348, 4);	/* sub rsp, 8 */
	emit_zero(&j->e, HW_RAX);
	for (r = 6; r < UJIT_NREGS; r++)
		if (j->saved & 1 << r)
			emit_zero(&j->e, hw[r]);
}

static void emit_epilogue(struct jit *j)
{
	int r;

	if (j->pad)
		emitn(&j->e, 0x08c48348, 4);	/* add rsp, 8 */
	for (r = UJIT_NREGS - 1; r >= 6; r--)
		if (j->saved & 1 << r)
			emit_pop(&j->e, hw[r]);
	emit1(&j->e, 0xc3);
}

static void emit_shift(struct emit *e, const struct bpf_insn *in, int dst)
{
	int ext = BPF_OP(in->code) == BPF_LSH ? 4 :
		  BPF_OP(in->code) == BPF_RSH ? 5 : 7;
	int src = hw[in->src_reg];

	if (BPF_SRC(in->code) == BPF_K) {
		emit_rex(e, 0, dst);
		emit1(e, 0xc1);
		emit_modrm(e, ext, dst);
		emit1(e, in->imm);
		return;
	}
	if (src == HW_RCX) {
		emit_rr(e, 0xd3, ext, dst);
		return;
	}
	/* r11 keeps rcx; if dst is rcx, r11 is shifted in its place */
	emit_rr(e, 0x89, HW_RCX, HW_R11);
	emit_rr(e, 0x89, src, HW_RCX);
	emit_rr(e, 0xd3, ext, dst == HW_RCX ? HW_R11 : dst);
	emit_rr(e, 0x89, HW_R11, HW_RCX);
}

static void emit_alu(struct emit *e, const struct bpf_insn *in)
{
	static const __u8 rr_op[16] = {
		[BPF_ADD >> 4] = 0x01, [BPF_SUB >> 4] = 0x29, [BPF_AND >> 4] = 0x21,
		[BPF_OR >> 4] = 0x09, [BPF_XOR >> 4] = 0x31, [BPF_MOV >> 4] = 0x89,
	};
	static const __u8 grp1[16] = {
		[BPF_ADD >> 4] = 0, [BPF_SUB >> 4] = 5, [BPF_AND >> 4] = 4,
		[BPF_OR >> 4] = 1, [BPF_XOR >> 4] = 6,
	};
	int dst = hw[in->dst_reg], src = hw[in->src_reg];
	__u8 op = BPF_OP(in->code);

	if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) {
		emit_shift(e, in, dst);
	} else if (op == BPF_NEG) {
		emit_rr(e, 0xf7, 3, dst);
	} else if (op == BPF_MUL && BPF_SRC(in->code) == BPF_X) {
		emit_rex(e, dst, src);
		emitn(e, 0xaf0f, 2);
		emit_modrm(e, dst, src);
	} else if (op == BPF_MUL) {
		emit_rr(e, is_imm8(in->imm) ? 0x6b : 0x69, dst, dst);
		emitn(e, (__u32)in->imm, is_imm8(in->imm) ? 1 : 4);
	} else if (BPF_SRC(in->code) == BPF_X) {
		emit_rr(e, rr_op[op >> 4], src, dst);
	} else if (op == BPF_MOV) {
		emit_rr(e, 0xc7, 0, dst);
		emitn(e, (__u32)in->imm, 4);
	} else {
		emit_grp1(e, grp1[op >> 4], dst, in->imm);
	}
}

static __u8 jcc_cond(__u8 op)
{
	switch (op) {
	case BPF_JEQ: return 0x4;
	case BPF_JNE: return 0x5;
	case BPF_JGT: return 0x7;
	case BPF_JGE: return 0x3;
	case BPF_JLT: return 0x2;
	case BPF_JLE: return 0x6;
	case BPF_JSGT: return 0xf;
	case BPF_JSGE: return 0xd;
	case BPF_JSLT: return 0xc;
	case BPF_JSLE: return 0xe;
	default: return 0x5;	/* jset: jnz after test */
	}
}

static void emit_cond_jmp(struct jit *j, const struct bpf_insn *in, __u32 i)
{
	struct emit *e = &j->e;
	int dst = hw[in->dst_reg], src = hw[in->src_reg];
	int jset = BPF_OP(in->code) == BPF_JSET;
	__u32 target = j->addrs ? j->addrs[i + 1 + in->off] : 0;

	if (BPF_SRC(in->code) == BPF_X) {
		emit_rr(e, jset ? 0x85 : 0x39, src, dst);
	} else if (jset) {
		emit_rr(e, 0xf7, 0, dst);
		emitn(e, (__u32)in->imm, 4);
	} else {
		emit_grp1(e, 7, dst, in->imm);
	}
	emit1(e, 0x0f);
	emit1(e, 0x80 | jcc_cond(BPF_OP(in->code)));
	emitn(e, (__u32)(target - (e->len + 4)), 4);
}

static void emit_jmp(struct jit *j, const struct bpf_insn *in, __u32 i)
{
	struct emit *e = &j->e;
	__u32 target = j->addrs ? j->addrs[i + 1 + in->off] : 0;

	switch (BPF_OP(in->code)) {
	case BPF_EXIT:
		emit_epilogue(j);
		break;
	case BPF_JA:
		emit1(e, 0xe9);
		emitn(e, (__u32)(target - (e->len + 4)), 4);
		break;
	case BPF_CALL:
		emitn(e, 0xb848, 2);		/* movabs rax, helper */
		emitn(e, (__u64)(unsigned long)helpers[in->imm], 8);
		emitn(e, 0xd0ff, 2);		/* call rax */
		break;
	default:
		emit_cond_jmp(j, in, i);
	}
}

static void emit_lddw(struct emit *e, const struct bpf_insn *in)
{
	int dst = hw[in->dst_reg];

	emit1(e, 0x48 | (dst >= 8));
	emit1(e, 0xb8 + (dst & 7));
	emitn(e, (__u32)in->imm, 4);
	emitn(e, (__u32)in[1].imm, 4);
}

/* one pass; fills offs[] (n + 1 entries) with where each insn starts */
static void jit_pass(struct jit *j, __u32 *offs)
{
	__u32 i;

	j->e.len = 0;
	emit_prologue(j);
	for (i = 0; i < j->n; i++) {
		const struct bpf_insn *in = &j->insns[i];

		offs[i] = j->e.len;
		if (BPF_CLASS(in->code) == BPF_ALU64) {
			emit_alu(&j->e, in);
		} else if (BPF_CLASS(in->code) == BPF_JMP) {
			emit_jmp(j, in, i);
		} else {
			emit_lddw(&j->e, in);
			offs[++i] = j->e.len;
		}
	}
	offs[j->n] = j->e.len;
}

static void jit_scan(struct jit *j)
{
	int has_call = 0, nsaved = 0;
	__u32 i;

	for (i = 0; i < j->n; i++) {
		const struct bpf_insn *in = &j->insns[i];

		if (in->code == (BPF_JMP | BPF_CALL))
			has_call = 1;
		if (in->dst_reg >= 6)
			j->saved |= 1 << in->dst_reg;
		if (in->src_reg >= 6 && BPF_SRC(in->code) == BPF_X)
			j->saved |= 1 << in->src_reg;
	}
	for (i = 6; i < UJIT_NREGS; i++)
		nsaved += !!(j->saved & 1 << i);
	/* entry rsp is 8 mod 16: an odd number of pushes aligns it */
	j->pad = has_call && !(nsaved & 1);
}

int ujit_compile(const struct bpf_insn *insns, __u32 n, __u8 *buf, __u32 cap,
		 struct ujit_image *img, char *err)
{
	struct jit j = { .insns = insns, .n = n };
	__u32 *offs;
	int ret;

	ret = ujit_validate(insns, n, err);
	if (ret)
		return ret;
	offs = calloc(n + 1, sizeof(*offs));
	if (!offs)
		return -ENOMEM;
	jit_scan(&j);
	jit_pass(&j, offs);		/* sizing */
	j.addrs = offs;
	if (j.e.len > cap) {
		if (err)
			snprintf(err, UJIT_ERRLEN, "code needs %u bytes, room for %u",
				 j.e.len, cap);
		free(offs);
		return -ENOSPC;
	}
	j.e.buf = buf;
	j.e.cap = cap;
	j.addrs = malloc((n + 1) * sizeof(*offs));
	if (!j.addrs) {
		free(offs);
		return -ENOMEM;
	}
	memcpy(j.addrs, offs, (n + 1) * sizeof(*offs));
	jit_pass(&j, offs);		/* emit; same sizes */
	img->len = j.e.len;
	if (img->insn_off)
		memcpy(img->insn_off, offs, (n + 1) * sizeof(*offs));
	free(j.addrs);
	free(offs);
	return 0;
}

/* ---- reference interpreter ---- */

static __u64 alu(__u8 op, __u64 d, __u64 s)
{
	switch (op) {
	case BPF_MOV: return s;
	case BPF_ADD: return d + s;
	case BPF_SUB: return d - s;
	case BPF_MUL: return d * s;
	case BPF_AND: return d & s;
	case BPF_OR: return d | s;
	case BPF_XOR: return d ^ s;
	case BPF_LSH: return d << (s & 63);
	case BPF_RSH: return d >> (s & 63);
	case BPF_ARSH: return (__u64)((__s64)d >> (s & 63));
	default: return -d;	/* neg */
	}
}

static int cond(__u8 op, __u64 d, __u64 s)
{
	switch (op) {
	case BPF_JEQ: return d == s;
	case BPF_JNE: return d != s;
	case BPF_JGT: return d > s;
	case BPF_JGE: return d >= s;
	case BPF_JLT: return d < s;
	case BPF_JLE: return d <= s;
	case BPF_JSGT: return (__s64)d > (__s64)s;
	case BPF_JSGE: return (__s64)d >= (__s64)s;
	case BPF_JSLT: return (__s64)d < (__s64)s;
	case BPF_JSLE: return (__s64)d <= (__s64)s;
	default: return !!(d & s);	/* jset */
	}
}

/* one step of a validated program; returns the next pc, or n on exit */
static __u32 step(const struct bpf_insn *in, __u32 pc, __u64 *r, struct ujit_stats *st)
{
	__u64 s = BPF_SRC(in->code) == BPF_X ? r[in->src_reg] : (__u64)(__s64)in->imm;
	__u8 op = BPF_OP(in->code);
	int t;

	if (BPF_CLASS(in->code) == BPF_ALU64) {
		r[in->dst_reg] = alu(op, r[in->dst_reg], s);
		return pc + 1;
	}
	if (BPF_CLASS(in->code) == BPF_LD) {
		r[in->dst_reg] = (__u32)in->imm | (__u64)(__u32)in[1].imm << 32;
		return pc + 2;
	}
	switch (op) {
	case BPF_EXIT:
		return UJIT_MAX_INSNS + 1;
	case BPF_JA:
		return pc + 1 + in->off;
	case BPF_CALL:
		r[0] = ujit_helper(in->imm, r);
		return pc + 1;
	}
	t = cond(op, r[in->dst_reg], s);
	if (st && st->taken && t)
		st->taken[pc]++;
	if (st && st->not_taken && !t)
		st->not_taken[pc]++;
	return t ? pc + 1 + in->off : pc + 1;
}

int ujit_interp(const struct bpf_insn *insns, __u32 n, const __u64 *args,
		__u64 *r0, struct ujit_stats *st, char *err)
{
	__u64 r[UJIT_NREGS] = { 0 }, steps = 0;
	__u32 pc = 0;
	int ret;

	ret = ujit_validate(insns, n, err);
	if (ret)
		return ret;
	memcpy(&r[1], args, UJIT_NARGS * sizeof(*args));
	while (pc < n) {
		if (++steps > UJIT_MAX_STEPS) {
			if (err)
				snprintf(err, UJIT_ERRLEN, "no exit after %llu steps",
					 (unsigned long long)UJIT_MAX_STEPS);
			return -ELOOP;
		}
		pc = step(&insns[pc], pc, r, st);
	}
	if (st)
		st->steps = steps;
	*r0 = r[0];
	return 0;
}
