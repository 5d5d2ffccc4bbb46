// SPDX-License-Identifier: GPL-2.0
/*
 * ebpf-jit unit tests: every compiled program runs and its r0 is compared
 * with the reference interpreter, and where the answer is known, with C.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codemem.h"
#include "ujit.h"
#include "tap.h"

#define MAXP	96

static struct revlog tlog;
static struct cm_space space;
static struct cm_code code;
static __u64 rng_state = 0x2545f4914f6cdd1dULL;

static __u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const __u64 vals[] = {
	0, 1, 2, 63, 64, 127, 128, 0xff, 0x7fffffff, 0x80000000, 0xffffffff,
	0x100000000ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL, -1ULL, -2ULL,
	-128ULL, -129ULL, 0x8000000000000001ULL,
};

#define NVALS	(ARRAY_SIZE(vals))

static const __s32 imms[] = {
	0, 1, -1, 2, 63, 127, 128, -128, -129, 255, 0x7fffffff, -0x7fffffff - 1,
	0x12345678, -0x12345678,
};

#define NIMMS	(ARRAY_SIZE(imms))

static const __u8 alu_ops[] = {
	BPF_MOV, BPF_ADD, BPF_SUB, BPF_MUL, BPF_AND, BPF_OR, BPF_XOR,
	BPF_LSH, BPF_RSH, BPF_ARSH, BPF_NEG,
};

static const char *const alu_names[] = {
	"mov", "add", "sub", "mul", "and", "or", "xor", "lsh", "rsh", "arsh", "neg",
};

static const __u8 jmp_ops[] = {
	BPF_JEQ, BPF_JNE, BPF_JGT, BPF_JGE, BPF_JLT, BPF_JLE,
	BPF_JSGT, BPF_JSGE, BPF_JSLT, BPF_JSLE, BPF_JSET,
};

static const char *const jmp_names[] = {
	"jeq", "jne", "jgt", "jge", "jlt", "jle", "jsgt", "jsge", "jslt", "jsle", "jset",
};

/* C semantics, written apart from the interpreter */
static __u64 c_alu(__u8 op, __u64 d, __u64 s)
{
	switch (op) {
	case BPF_MOV: return s;
	case BPF_ADD: return d + s;
	case BPF_SUB: return d - s;
	case BPF_MUL: return d * s;
	case BPF_AND: return d & s;
	case BPF_OR: return d | s;
	case BPF_XOR: return d ^ s;
	case BPF_LSH: return d << (s % 64);
	case BPF_RSH: return d >> (s % 64);
	case BPF_NEG: return 0 - d;
	}
	/* arsh: shift the complement of a negative value */
	if ((__s64)d < 0)
		return ~(~d >> (s % 64));
	return d >> (s % 64);
}

static int c_cond(__u8 op, __u64 a, __u64 b)
{
	__s64 sa = a, sb = b;

	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	default: return (a & b) != 0;
	}
}

static const __u64 args5[UJIT_NARGS] = { 11, 22, 33, 44, 55 };

/* compile into the test's code object and run; -1 if it does not compile */
static int jit_run(const struct bpf_insn *p, __u32 n, const __u64 *args, __u64 *r0)
{
	__u8 buf[4096];
	struct ujit_image img = { 0 };
	char err[UJIT_ERRLEN] = "";

	if (ujit_compile(p, n, buf, sizeof(buf), &img, err)) {
		diag("compile: %s", err);
		return -1;
	}
	if (cm_code_install(&code, buf, img.len)) {
		diag("install failed");
		return -1;
	}
	*r0 = cm_code_run(&code, args);
	return 0;
}

/* 1 if the JIT and the interpreter agree (and with @want if @has_want) */
static int agree(const struct bpf_insn *p, __u32 n, const __u64 *args,
		 int has_want, __u64 want)
{
	char err[UJIT_ERRLEN] = "";
	__u64 j, i;

	if (ujit_interp(p, n, args, &i, NULL, err)) {
		diag("interp: %s", err);
		return 0;
	}
	if (jit_run(p, n, args, &j))
		return 0;
	if (j == i && (!has_want || i == want))
		return 1;
	diag("jit 0x%llx interp 0x%llx want 0x%llx", (unsigned long long)j,
	     (unsigned long long)i, (unsigned long long)want);
	return 0;
}

static void test_crc(void)
{
	ok(flowjit_csum("123456789", 9) == 0xe3069283,
	   "crc32c: check value of \"123456789\" is 0xe3069283 (Castagnoli)");
}

struct enc {
	const char *what;
	struct bpf_insn in[3];
	__u32 n;
	__u8 bytes[16];
	__u32 len;
};

/* bytes of insn 0, after the 2-byte xor eax, eax of the prologue */
static const struct enc encs[] = {
	{ "mov r0, 42", { UJ_ALU_K(MOV, 0, 42), UJ_EXIT() }, 2,
	  { 0x48, 0xc7, 0xc0, 0x2a, 0, 0, 0 }, 7 },
	{ "add r1, 127 (imm8)", { UJ_ALU_K(ADD, 1, 127), UJ_EXIT() }, 2,
	  { 0x48, 0x83, 0xc7, 0x7f }, 4 },
	{ "add r1, 128 (imm32)", { UJ_ALU_K(ADD, 1, 128), UJ_EXIT() }, 2,
	  { 0x48, 0x81, 0xc7, 0x80, 0, 0, 0 }, 7 },
	{ "sub r5, r2", { UJ_ALU_X(SUB, 5, 2), UJ_EXIT() }, 2,
	  { 0x49, 0x29, 0xf0 }, 3 },
	{ "lddw r5, 0x1122334455667788",
	  { UJ_LDDW_LO(5, 0x1122334455667788ULL), UJ_LDDW_HI(0x1122334455667788ULL),
	    UJ_EXIT() }, 3,
	  { 0x49, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 10 },
	{ "jge r0, 42, +0", { UJ_JMP_K(JGE, 0, 42, 0), UJ_EXIT() }, 2,
	  { 0x48, 0x83, 0xf8, 0x2a, 0x0f, 0x83, 0, 0, 0, 0 }, 10 },
	{ "ja +0", { UJ_JA(0), UJ_EXIT() }, 2, { 0xe9, 0, 0, 0, 0 }, 5 },
	{ "exit", { UJ_EXIT() }, 1, { 0xc3 }, 1 },
};

static void test_encoding(void)
{
	__u32 i, offs[4];
	__u8 buf[64];
	int good = 1;

	for (i = 0; i < ARRAY_SIZE(encs); i++) {
		const struct enc *e = &encs[i];
		struct ujit_image img = { .insn_off = offs };

		if (ujit_compile(e->in, e->n, buf, sizeof(buf), &img, NULL) ||
		    offs[0] != 2 || memcmp(buf + 2, e->bytes, e->len) ||
		    offs[1] != 2 + e->len) {
			diag("encoding of %s differs", e->what);
			good = 0;
		}
	}
	ok(good, "encoding: %zu instructions encode to the expected x86-64 bytes",
	   ARRAY_SIZE(encs));
}

static void test_progs(void)
{
	static const __u64 sets[][UJIT_NARGS] = {
		{ 1, 2, 3, 4, 5 }, { 0, 0, 0, 0, 0 }, { 27, 1000, 7, 8, 9 },
		{ 90, -1ULL, 3, 0x8000000000000000ULL, 1 }, { 255, 5, 64, 65, 127 },
	};
	__u32 i, s;

	for (i = 0; i < ujit_nprogs; i++) {
		const struct ujit_prog *p = &ujit_progs[i];
		int good = 1;

		for (s = 0; s < ARRAY_SIZE(sets); s++)
			good &= agree(p->insns, p->n, sets[s], 0, 0);
		ok(good, "program %s: JIT equals interpreter on %zu argument sets",
		   p->name, ARRAY_SIZE(sets));
	}
}

static void test_known(void)
{
	const struct ujit_prog *l = ujit_prog_find("loop42");
	__u32 taken[8] = { 0 }, not_taken[8] = { 0 };
	struct ujit_stats st = { .taken = taken, .not_taken = not_taken };
	__u64 a[UJIT_NARGS] = { 10 }, r0 = 0;

	ok(agree(l->insns, l->n, a, 1, 42) &&
	   !ujit_interp(l->insns, l->n, a, &r0, &st, NULL) &&
	   not_taken[2] == 41 && taken[2] == 1,
	   "loop42: r0 = 42, loop-exit branch 41 times not taken and once taken");
	ok(agree(ujit_prog_find("fib")->insns, ujit_prog_find("fib")->n, a, 1, 55),
	   "fib(10) = 55");
	a[0] = 90;
	ok(agree(ujit_prog_find("fib")->insns, ujit_prog_find("fib")->n, a, 1,
		 2880067194370816120ULL), "fib(90) = 2880067194370816120");
	a[0] = 27;
	a[1] = 1000;
	ok(agree(ujit_prog_find("collatz")->insns, ujit_prog_find("collatz")->n, a, 1,
		 111), "collatz(27) = 111 steps");
	a[0] = 0xf0f0f0f0f0f0f0f0ULL;
	ok(agree(ujit_prog_find("popcount")->insns, ujit_prog_find("popcount")->n, a, 1,
		 32), "popcount(0xf0f0f0f0f0f0f0f0) = 32 (jset, rsh loop)");
}

/* lddw every register, then @op, then fold all of r0-r9 into r0 */
static __u32 reg_prog(struct bpf_insn *p, const __u64 *v, struct bpf_insn op)
{
	__u32 n = 0, i;

	for (i = 0; i < UJIT_NREGS; i++) {
		p[n++] = UJ_LDDW_LO(i, v[i]);
		p[n++] = UJ_LDDW_HI(v[i]);
	}
	p[n++] = op;
	for (i = 1; i < UJIT_NREGS; i++) {
		p[n++] = UJ_ALU_K(MUL, 0, 31);
		p[n++] = UJ_ALU_X(XOR, 0, i);
	}
	p[n++] = UJ_EXIT();
	return n;
}

static __u64 c_fold(const __u64 *v)
{
	__u64 r0 = v[0];
	int i;

	for (i = 1; i < UJIT_NREGS; i++)
		r0 = r0 * 31 ^ v[i];
	return r0;
}

static void init_regs(__u64 *v)
{
	int i;

	for (i = 0; i < UJIT_NREGS; i++)
		v[i] = 0x1111111111111111ULL * (i + 1);
}

/* op dst, src for all 100 register pairs and 8 value pairs each */
static int alu_x(__u8 op, __u32 *count)
{
	struct bpf_insn p[MAXP];
	__u64 v[UJIT_NREGS];
	int d, s, k, good = 1;

	for (d = 0; d < UJIT_NREGS; d++)
		for (s = 0; s < UJIT_NREGS; s++)
			for (k = 0; k < 8; k++) {
				struct bpf_insn in = UJ_INSN(BPF_ALU64 | op | BPF_X, d, s, 0, 0);
				__u32 n;

				init_regs(v);
				v[s] = vals[(d * 7 + s * 3 + k * 5) % NVALS];
				v[d] = d == s ? v[s] : vals[(k * 11 + d) % NVALS];
				n = reg_prog(p, v, in);
				v[d] = c_alu(op, v[d], v[s]);
				good &= agree(p, n, args5, 1, c_fold(v));
				(*count)++;
			}
	return good;
}

/* op dst, imm for all 10 registers, the boundary imms, 3 values each */
static int alu_k(__u8 op, __u32 *count)
{
	static const __s32 shifts[] = { 0, 1, 7, 31, 32, 33, 62, 63 };
	int shift = op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH;
	int ni = op == BPF_NEG ? 1 : shift ? 8 : NIMMS;
	struct bpf_insn p[MAXP];
	__u64 v[UJIT_NREGS];
	int d, i, k, good = 1;

	for (d = 0; d < UJIT_NREGS; d++)
		for (i = 0; i < ni; i++)
			for (k = 0; k < 3; k++) {
				__s32 imm = op == BPF_NEG ? 0 : shift ? shifts[i] : imms[i];
				struct bpf_insn in = UJ_INSN(BPF_ALU64 | op | BPF_K, d, 0, 0, imm);
				__u32 n;

				init_regs(v);
				v[d] = vals[(d + i * 3 + k * 7) % NVALS];
				n = reg_prog(p, v, in);
				v[d] = c_alu(op, v[d], (__u64)(__s64)imm);
				good &= agree(p, n, args5, 1, c_fold(v));
				(*count)++;
			}
	return good;
}

static void test_alu(void)
{
	__u32 i;

	for (i = 0; i < sizeof(alu_ops); i++) {
		__u32 cx = 0, ck = 0;
		int gx = alu_ops[i] == BPF_NEG ? 1 : alu_x(alu_ops[i], &cx);
		int gk = alu_k(alu_ops[i], &ck);

		ok(gx && gk, "alu64 %s: %u reg and %u imm programs match C and the interpreter",
		   alu_names[i], cx, ck);
	}
}

/* if (a op b) r0 = 2 else r0 = 1, with a in @d and b in @s or imm */
static int one_jump(__u8 op, int x, int d, int s, __u64 a, __u64 b, __s32 imm)
{
	struct bpf_insn p[MAXP];
	__u64 v[UJIT_NREGS];
	__u32 n = 0, i;

	init_regs(v);
	v[s] = b;
	v[d] = a;
	if (!x)
		b = (__u64)(__s64)imm;
	else if (d == s)
		b = a;
	for (i = 0; i < UJIT_NREGS; i++) {
		p[n++] = UJ_LDDW_LO(i, v[i]);
		p[n++] = UJ_LDDW_HI(v[i]);
	}
	p[n++] = x ? UJ_INSN(BPF_JMP | op | BPF_X, d, s, 2, 0) :
		     UJ_INSN(BPF_JMP | op | BPF_K, d, 0, 2, imm);
	p[n++] = UJ_ALU_K(MOV, 0, 1);
	p[n++] = UJ_EXIT();
	p[n++] = UJ_ALU_K(MOV, 0, 2);
	p[n++] = UJ_EXIT();
	return agree(p, n, args5, 1, c_cond(op, a, b) ? 2 : 1);
}

static void test_jumps(void)
{
	__u32 i, a, b, cnt, taken;
	int d, s, good;

	for (i = 0; i < sizeof(jmp_ops); i++) {
		good = 1;
		cnt = 0;
		taken = 0;
		for (a = 0; a < NVALS; a++)
			for (b = 0; b < NVALS; b++, cnt++) {
				good &= one_jump(jmp_ops[i], 1, 3, 5, vals[a], vals[b], 0);
				taken += c_cond(jmp_ops[i], vals[a], vals[b]);
			}
		for (d = 0; d < UJIT_NREGS; d++)
			for (s = 0; s < UJIT_NREGS; s++, cnt++)
				good &= one_jump(jmp_ops[i], 1, d, s, vals[(d + s) % NVALS],
						 vals[(d * 3 + s) % NVALS], 0);
		for (a = 0; a < NVALS; a++)
			for (b = 0; b < NIMMS; b++, cnt++)
				good &= one_jump(jmp_ops[i], 0, a % UJIT_NREGS, 0, vals[a], 0,
						 imms[b]);
		ok(good && taken && taken < NVALS * NVALS,
		   "%s: %u programs (reg, imm, all reg pairs) taken and not taken right",
		   jmp_names[i], cnt);
	}
}

/* r0 counts iterations of: r1 += step; if r1 op limit goto loop */
static void test_loops(void)
{
	static const __s64 starts[] = { -5, 0, 5, 0x7ffffffe, -0x7fffffff };
	static const __s32 steps[] = { 1, -1, 3 };
	static const __s32 limits[] = { 0, 10, -10, 0x7fffffff, 1 };
	__u32 i, runs = 0, j, k, l;
	int good = 1;

	for (i = 0; i < sizeof(jmp_ops); i++)
		for (j = 0; j < 5; j++)
			for (k = 0; k < 3; k++)
				for (l = 0; l < 5; l++) {
					__u64 r1 = starts[j], it = 0;
					struct bpf_insn p[] = {
						UJ_ALU_K(MOV, 0, 0),
						UJ_LDDW_LO(1, r1), UJ_LDDW_HI(r1),
						UJ_ALU_K(ADD, 0, 1),
						UJ_ALU_K(ADD, 1, steps[k]),
						UJ_INSN(BPF_JMP | jmp_ops[i] | BPF_K, 1, 0, -3,
							limits[l]),
						UJ_EXIT(),
					};

					do {
						it++;
						r1 += steps[k];
					} while (it < 200 &&
						 c_cond(jmp_ops[i], r1, (__s64)limits[l]));
					if (it == 200)
						continue;
					good &= agree(p, 7, args5, 1, it);
					runs++;
				}
	ok(good && runs > 100,
	   "loops: %u backward-jump loops over all 11 conditions end with the C count",
	   runs);
}

struct gen {
	struct bpf_insn p[MAXP];
	__u32 n;
	__u32 start[MAXP];	/* items: first slot */
	__u32 nitems;
	int jump[MAXP];		/* item is a jump to fix */
};

static void gen_item(struct gen *g, struct bpf_insn in, int is_jump)
{
	g->start[g->nitems] = g->n;
	g->jump[g->nitems++] = is_jump;
	g->p[g->n++] = in;
}

static void gen_alu(struct gen *g)
{
	__u8 op = alu_ops[rnd() % sizeof(alu_ops)];
	int d = rnd() % UJIT_NREGS, x = rnd() & 1 && op != BPF_NEG;
	__s32 imm = rnd() & 1 ? imms[rnd() % NIMMS] : (__s32)rnd();

	if (op == BPF_NEG)
		imm = 0;
	else if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
		imm &= 63;
	if (x)
		gen_item(g, UJ_INSN(BPF_ALU64 | op | BPF_X, d, rnd() % UJIT_NREGS, 0, 0), 0);
	else
		gen_item(g, UJ_INSN(BPF_ALU64 | op | BPF_K, d, 0, 0, imm), 0);
}

static void gen_one(struct gen *g)
{
	__u32 k = rnd() % 20, i;
	__u64 v = vals[rnd() % NVALS] ^ (rnd() & 1 ? rnd() : 0);

	if (k < 12) {
		gen_alu(g);
	} else if (k < 14) {
		gen_item(g, UJ_LDDW_LO(rnd() % UJIT_NREGS, v), 0);
		g->p[g->n++] = UJ_LDDW_HI(v);
	} else if (k < 18) {
		__u8 op = jmp_ops[rnd() % sizeof(jmp_ops)];

		gen_item(g, rnd() & 1 ?
			 UJ_INSN(BPF_JMP | op | BPF_X, rnd() % 10, rnd() % 10, 0, 0) :
			 UJ_INSN(BPF_JMP | op | BPF_K, rnd() % 10, 0, 0,
				 imms[rnd() % NIMMS]), 1);
	} else if (k < 19) {
		gen_item(g, UJ_JA(0), 1);
	} else {
		gen_item(g, UJ_CALL(1 + rnd() % (UJIT_NHELPERS - 1)), 0);
		for (i = 1; i <= UJIT_NARGS; i++)	/* r1-r5 are unspecified */
			gen_item(g, UJ_ALU_K(MOV, i, (__s32)rnd()), 0);
	}
}

/* a random loop-free program: forward jumps only, ends with exit */
static void gen_prog(struct gen *g)
{
	__u32 want = 1 + rnd() % 40, i, t;

	g->n = 0;
	g->nitems = 0;
	while (g->n < want && g->n + 8 < MAXP)
		gen_one(g);
	gen_item(g, UJ_EXIT(), 0);
	for (i = 0; i < g->nitems; i++) {
		if (!g->jump[i])
			continue;
		t = i + 1 + rnd() % (g->nitems - i - 1);
		g->p[g->start[i]].off = g->start[t] - g->start[i] - 1;
	}
}

static void test_random(void)
{
	__u32 i, count = 3000, slots = 0;
	int good = 1;
	struct gen g;
	__u64 a[UJIT_NARGS];

	for (i = 0; i < count; i++) {
		gen_prog(&g);
		a[0] = rnd();
		a[1] = vals[rnd() % NVALS];
		a[2] = rnd() % 64;
		a[3] = rnd();
		a[4] = imms[rnd() % NIMMS];
		slots += g.n;
		if (!agree(g.p, g.n, a, 0, 0)) {
			diag("random program %u (%u insns) differs", i, g.n);
			good = 0;
		}
	}
	ok(good, "random: %u loop-free programs (%u insns) agree with the interpreter",
	   count, slots);
}

struct bad {
	const char *what;
	struct bpf_insn in[3];
	__u32 n;
};

static const struct bad bads[] = {
	{ "unknown opcode 0xff", { UJ_INSN(0xff, 0, 0, 0, 0), UJ_EXIT() }, 2 },
	{ "32-bit ALU", { UJ_INSN(BPF_ALU | BPF_ADD | BPF_K, 0, 0, 0, 1), UJ_EXIT() }, 2 },
	{ "div", { UJ_INSN(BPF_ALU64 | BPF_DIV | BPF_K, 0, 0, 0, 1), UJ_EXIT() }, 2 },
	{ "memory load", { UJ_INSN(BPF_LDX | BPF_MEM | BPF_DW, 0, 1, 0, 0), UJ_EXIT() }, 2 },
	{ "register r10", { UJ_ALU_K(MOV, 10, 1), UJ_EXIT() }, 2 },
	{ "source register r11", { UJ_ALU_X(MOV, 0, 11), UJ_EXIT() }, 2 },
	{ "shift by 64", { UJ_ALU_K(LSH, 0, 64), UJ_EXIT() }, 2 },
	{ "jump past the end", { UJ_JA(5), UJ_EXIT() }, 2 },
	{ "jump before the start", { UJ_JMP_K(JEQ, 0, 0, -2), UJ_EXIT() }, 2 },
	{ "jump into lddw", { UJ_JA(1), UJ_LDDW_LO(0, 1), UJ_LDDW_HI(1) }, 3 },
	{ "lddw without second slot", { UJ_ALU_K(MOV, 0, 0), UJ_LDDW_LO(0, 1) }, 2 },
	{ "falls off the end", { UJ_ALU_K(MOV, 0, 0) }, 1 },
	{ "conditional jump last", { UJ_JMP_K(JEQ, 0, 0, -1) }, 1 },
	{ "unknown helper", { UJ_CALL(99), UJ_EXIT() }, 2 },
	{ "helper 0", { UJ_CALL(0), UJ_EXIT() }, 2 },
	{ "exit with fields", { UJ_INSN(BPF_JMP | BPF_EXIT, 1, 0, 0, 0) }, 1 },
	{ "empty program", { UJ_EXIT() }, 0 },
};

static void test_invalid(void)
{
	char err[UJIT_ERRLEN];
	__u8 buf[256];
	struct ujit_image img = { 0 };
	__u32 i;

	for (i = 0; i < ARRAY_SIZE(bads); i++) {
		const struct bad *b = &bads[i];
		__u64 r0;
		int v, c, r;

		err[0] = 0;
		v = ujit_validate(b->in, b->n, err);
		c = ujit_compile(b->in, b->n, buf, sizeof(buf), &img, NULL);
		r = ujit_interp(b->in, b->n, args5, &r0, NULL, NULL);
		ok(v == -EINVAL && c == -EINVAL && r == -EINVAL && err[0],
		   "invalid: %s is rejected by validate, compile, interpret: \"%s\"",
		   b->what, err);
	}
}

/* random bytes, biased to real opcodes: never a crash */
static void test_garbage(void)
{
	static const __u8 codes[] = {
		0x07, 0x0f, 0xb7, 0xbf, 0x67, 0x6f, 0x77, 0xc7, 0x87, 0x27, 0x2f,
		0x15, 0x1d, 0x55, 0xa5, 0xd5, 0x45, 0x05, 0x85, 0x95, 0x18, 0x00,
	};
	__u32 i, j, n, valid = 0, ran = 0, count = 20000;
	struct bpf_insn p[8];
	int good = 1;

	for (i = 0; i < count; i++) {
		int back = 0;

		n = 1 + rnd() % 8;
		for (j = 0; j < n; j++) {
			__u64 r = rnd();

			memcpy(&p[j], &r, sizeof(r));
			if (rnd() % 5) {
				p[j].code = codes[rnd() % sizeof(codes)];
				p[j].dst_reg %= 11;
				p[j].src_reg = rnd() % 3 ? p[j].src_reg % 11 : 0;
				p[j].off = (__s16)(rnd() % 9) - 4;
				p[j].imm = rnd() % 3 ? (__s32)(rnd() % 70) : p[j].imm;
			}
		}
		if (rnd() % 4)
			p[n - 1] = UJ_EXIT();
		for (j = 0; j < n; j++)
			back |= BPF_CLASS(p[j].code) == BPF_JMP && p[j].off < 0;
		if (ujit_validate(p, n, NULL))
			continue;
		valid++;
		if (back)
			continue;
		ran++;
		good &= agree(p, n, args5, 0, 0);
	}
	ok(good && valid && ran, "garbage: %u random bytecodes, %u valid, %u run and agree",
	   count, valid, ran);
}

static void test_nospace(void)
{
	const struct ujit_prog *p = ujit_prog_find("call");
	struct ujit_image img = { 0 };
	char err[UJIT_ERRLEN] = "";
	__u8 buf[64];
	int ret;

	memset(buf, 0x5a, sizeof(buf));
	ret = ujit_compile(p->insns, p->n, buf, 16, &img, err);
	ok(ret == -ENOSPC && buf[16] == 0x5a && buf[63] == 0x5a && err[0],
	   "compile into too small a buffer: -ENOSPC, no byte written past it: \"%s\"",
	   err);
}

/* the permissions /proc/self/maps shows for @addr */
static void perms(const void *addr, char *out)
{
	unsigned long lo, hi, a = (unsigned long)addr;
	char line[512], p[8];
	FILE *f = fopen("/proc/self/maps", "r");

	memcpy(out, "none", sizeof("none"));
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, p) == 3 && a >= lo && a < hi) {
			memcpy(out, p, sizeof(p));
			break;
		}
	if (f)
		fclose(f);
}

static int bytes_logged(const struct revlog *log, size_t i, const struct cm_code *co,
			const __u8 *b, size_t len)
{
	return log->n > i && log->v[i].rev == co->rev &&
	       log->v[i].addr == (unsigned long)co->x && log->v[i].len == len &&
	       !memcmp(log->v[i].bytes, b, len);
}

/* install, run twice, install unrun, install, patch, run; check the log */
static int mode_cycle(struct cm_code *co, struct revlog *log, char *xperm)
{
	const struct ujit_prog *a = ujit_prog_find("sum"), *b = ujit_prog_find("fib");
	__u8 ba[256], bb[256];
	struct ujit_image ia = { 0 }, ib = { 0 };
	__u64 a5[UJIT_NARGS] = { 10, 2, 3, 4, 5 };
	int good;

	ujit_compile(a->insns, a->n, ba, sizeof(ba), &ia, NULL);
	ujit_compile(b->insns, b->n, bb, sizeof(bb), &ib, NULL);
	good = !cm_code_install(co, ba, ia.len) && cm_code_run(co, a5) == 24 &&
	       cm_code_run(co, a5) == 24 && bytes_logged(log, 0, co, ba, ia.len);
	perms(co->x, xperm);
	good &= !cm_code_install(co, bb, ib.len);		/* never runs */
	good &= !cm_code_install(co, bb, ib.len) && cm_code_run(co, a5) == 55 &&
		bytes_logged(log, 1, co, bb, ib.len) && log->v[1].rev == 3;
	/* sum again, then add r0, r2 (at byte 5) patched into sub r0, r2 */
	good &= !cm_code_install(co, ba, ia.len) && cm_code_run(co, a5) == 24;
	good &= !cm_code_patch(co, 6, (const __u8 *)"\x29", 1) && cm_code_run(co, a5) == 20;
	ba[6] = 0x29;
	return good && bytes_logged(log, 3, co, ba, ia.len) && log->n == 4 &&
	       log->last_rev == 5 && co->x[ia.len] == 0xcc;
}

static void test_modes(void)
{
	static const struct { enum cm_mode m; enum cm_map map; const char *perm; } ms[] = {
		{ CM_WX, CM_MAP_ONE, "r-xp" }, { CM_WX, CM_MAP_EACH, "r-xp" },
		{ CM_RWX, CM_MAP_ONE, "rwxp" }, { CM_MMAP_EXEC, CM_MAP_EACH, "rwxp" },
		{ CM_MEMFD_DUAL, CM_MAP_ONE, "r-xs" }, { CM_MEMFD_DUAL, CM_MAP_EACH, "r-xs" },
	};
	struct cm_space cs;
	struct cm_code co;
	struct revlog log;
	char xp[16], wp[16];
	__u32 i;

	for (i = 0; i < ARRAY_SIZE(ms); i++) {
		int good;

		revlog_init(&log);
		good = !cm_space_init(&cs, ms[i].m, ms[i].map, 2, &log) &&
		       !cm_code_alloc(&cs, &co, 4096, 0, NULL);
		good = good && mode_cycle(&co, &log, xp);
		perms(co.w, wp);
		good &= !strcmp(xp, ms[i].perm) &&
			(ms[i].m == CM_MEMFD_DUAL ? co.w != co.x && !strcmp(wp, "rw-s") :
			 co.w == co.x);
		ok(good, "mode %s, map %s: the 4 revisions that ran are logged, code is %s",
		   cm_mode_names[ms[i].m], ms[i].map == CM_MAP_ONE ? "one" : "each", xp);
		cm_code_free(&co);
		cm_space_fini(&cs);
		revlog_free(&log);
	}
}

static void test_logline(void)
{
	__u8 b[3] = { 0x31, 0xc0, 0xc3 };
	struct revlog_ent e = { .rev = 7, .addr = 0x7f0000000ffeULL, .len = 3, .bytes = b };
	char line[256] = "";
	FILE *f = fmemopen(line, sizeof(line), "w");

	revlog_write_line(f, &e, 4096);
	fclose(f);
	ok(!strcmp(line, "7 0x7f0000000ffe 3 0x80ca5e57 0x7f0000000000,0x7f0000001000 31c0c3\n"),
	   "log line: rev addr len crc32c pages bytes, two pages when code spans them");
	if (tap_failed)
		diag("got: %s", line);
}

int main(void)
{
	revlog_init(&tlog);
	if (cm_space_init(&space, CM_RWX, CM_MAP_ONE, 1, &tlog) ||
	    cm_code_alloc(&space, &code, 4096, 0, NULL)) {
		printf("not ok 1 cannot map code memory\n");
		return 1;
	}
	test_crc();
	test_logline();
	test_encoding();
	test_progs();
	test_known();
	test_alu();
	test_jumps();
	test_loops();
	test_random();
	test_invalid();
	test_garbage();
	test_nospace();
	test_modes();
	return tap_done();
}
