// SPDX-License-Identifier: GPL-2.0
/*
 * pr_insn: x86 instruction length decoding.
 *
 * Written from the Intel SDM opcode maps (volume 2, appendix A).  The
 * tables give, for each opcode, one bit per column in a row of sixteen.
 */
#include "pr_insn.h"

#include <string.h>

enum {
	pr_insn_max_size = 15
};

/* One-byte opcodes with a ModRM byte. */
static const uint16_t pr_map1_modrm[16] = {
	0x0f0f, 0x0f0f, 0x0f0f, 0x0f0f, 0x0000, 0x0000, 0x0a0c, 0x0000,
	0xffff, 0x0000, 0x0000, 0x0000, 0x00f3, 0xff0f, 0x0000, 0xc0c0
};

/* One-byte opcodes with an 8-bit immediate (including rel8). */
static const uint16_t pr_map1_imm8[16] = {
	0x1010, 0x1010, 0x1010, 0x1010, 0x0000, 0x0000, 0x0c00, 0xffff,
	0x000d, 0x0000, 0x0100, 0x00ff, 0x2043, 0x0030, 0x08ff, 0x0000
};

/* One-byte opcodes with a 16/32-bit immediate (including rel16/32). */
static const uint16_t pr_map1_immz[16] = {
	0x2020, 0x2020, 0x2020, 0x2020, 0x0000, 0x0000, 0x0300, 0x0000,
	0x0002, 0x0000, 0x0200, 0x0000, 0x0080, 0x0000, 0x0300, 0x0000
};

/* Two-byte (0f xx) opcodes without a ModRM byte. */
static const uint16_t pr_map2_nomodrm[16] = {
	0x4be0, 0x0000, 0x0000, 0x00ff, 0x0000, 0x0000, 0x0000, 0x0080,
	0xffff, 0x0000, 0x0707, 0x0000, 0xff00, 0x0000, 0x0000, 0x0000
};

/* Two-byte (0f xx) opcodes with an 8-bit immediate. */
static const uint16_t pr_map2_imm8[16] = {
	0x8000, 0x0000, 0x0000, 0x0000, 0x0000, 0x0000, 0x0000, 0x000f,
	0x0000, 0x0000, 0x1010, 0x0400, 0x0074, 0x0000, 0x0000, 0x0000
};

static int pr_insn_bit(const uint16_t *map, uint8_t opcode)
{
	return (map[opcode >> 4] >> (opcode & 0xf)) & 1;
}

/* The decode state while walking one instruction. */
struct pr_insn_state {
	const uint8_t *raw;
	size_t size;
	size_t pos;

	/* Operand and address size in bytes. */
	uint8_t osz;
	uint8_t asz;

	uint8_t rex_w;
	uint8_t mode64;
};

/* Fetch the next byte into *@byte.
 *
 * Returns zero on success, -pte_bad_insn past the end or the 15-byte limit.
 */
static int pr_insn_fetch(struct pr_insn_state *st, uint8_t *byte)
{
	if (st->size <= st->pos || pr_insn_max_size <= st->pos)
		return -pte_bad_insn;

	*byte = st->raw[st->pos++];
	return 0;
}

/* Skip @count bytes.
 *
 * Returns zero on success, -pte_bad_insn if they are not there.
 */
static int pr_insn_skip(struct pr_insn_state *st, size_t count)
{
	if (st->size < st->pos + count || pr_insn_max_size < st->pos + count)
		return -pte_bad_insn;

	st->pos += count;
	return 0;
}

/* Skip a ModRM byte and its SIB and displacement; store ModRM in @modrm.
 *
 * Returns zero on success, -pte_bad_insn if bytes are missing.
 */
static int pr_insn_modrm(struct pr_insn_state *st, uint8_t *modrm)
{
	uint8_t mod, rm, sib;
	int errcode;

	errcode = pr_insn_fetch(st, modrm);
	if (errcode < 0)
		return errcode;

	mod = *modrm >> 6;
	rm = *modrm & 7;
	if (mod == 3)
		return 0;

	if (st->asz == 2) {
		if (mod == 1)
			return pr_insn_skip(st, 1);
		if (mod == 2 || rm == 6)
			return pr_insn_skip(st, 2);
		return 0;
	}

	if (rm == 4) {
		errcode = pr_insn_fetch(st, &sib);
		if (errcode < 0)
			return errcode;

		if (mod == 0 && (sib & 7) == 5)
			return pr_insn_skip(st, 4);
	}

	if (mod == 1)
		return pr_insn_skip(st, 1);
	if (mod == 2 || (mod == 0 && rm == 5))
		return pr_insn_skip(st, 4);

	return 0;
}

/* Read a @width-byte little-endian immediate as a signed displacement.
 *
 * Returns zero on success, -pte_bad_insn if bytes are missing.
 */
static int pr_insn_rel(struct pr_insn_state *st, struct pr_insn_info *info,
		       uint8_t width)
{
	const uint8_t *p;
	int errcode;

	p = &st->raw[st->pos];
	errcode = pr_insn_skip(st, width);
	if (errcode < 0)
		return errcode;

	info->relbr = 1;
	switch (width) {
	case 1:
		info->disp = (int8_t) p[0];
		break;

	case 2:
		info->disp = (int16_t) (p[0] | (p[1] << 8));
		break;

	default:
		info->disp = (int32_t) ((uint32_t) p[0] |
					((uint32_t) p[1] << 8) |
					((uint32_t) p[2] << 16) |
					((uint32_t) p[3] << 24));
		break;
	}

	return 0;
}

/* The size of a 16/32-bit immediate for the current operand size. */
static uint8_t pr_insn_immz(const struct pr_insn_state *st)
{
	return st->osz == 2 ? 2 : 4;
}

/* Decode the rest of a VEX, EVEX or XOP instruction from its opcode byte.
 *
 * @map is 1 (0f), 2 (0f38), 3 (0f3a), 5, 6 (EVEX) or 8, 9, 10 (XOP).
 *
 * Returns zero on success, -pte_bad_insn otherwise.
 */
static int pr_insn_vex(struct pr_insn_state *st, uint8_t map)
{
	uint8_t opcode, modrm;
	int errcode;

	errcode = pr_insn_fetch(st, &opcode);
	if (errcode < 0)
		return errcode;

	/* vzeroupper and vzeroall have no ModRM. */
	if (map == 1 && opcode == 0x77)
		return 0;

	errcode = pr_insn_modrm(st, &modrm);
	if (errcode < 0)
		return errcode;

	switch (map) {
	case 1:
		if (pr_insn_bit(pr_map2_imm8, opcode))
			return pr_insn_skip(st, 1);
		return 0;

	case 3:
	case 8:
		return pr_insn_skip(st, 1);

	case 10:
		return pr_insn_skip(st, 4);

	case 2:
	case 5:
	case 6:
	case 9:
		return 0;
	}

	return -pte_bad_insn;
}

/* Decode a two-byte or three-byte legacy opcode after the 0f escape.
 *
 * Returns zero on success, -pte_bad_insn otherwise.
 */
static int pr_insn_map2(struct pr_insn_state *st, struct pr_insn_info *info)
{
	uint8_t opcode, modrm;
	int errcode;

	errcode = pr_insn_fetch(st, &opcode);
	if (errcode < 0)
		return errcode;

	if (opcode == 0x38 || opcode == 0x3a) {
		uint8_t op3;

		errcode = pr_insn_fetch(st, &op3);
		if (errcode < 0)
			return errcode;

		errcode = pr_insn_modrm(st, &modrm);
		if (errcode < 0)
			return errcode;

		return opcode == 0x3a ? pr_insn_skip(st, 1) : 0;
	}

	/* jcc rel16/32; Intel ignores 0x66 in 64-bit mode. */
	if ((opcode & 0xf0) == 0x80)
		return pr_insn_rel(st, info, st->mode64 ? 4 :
				   pr_insn_immz(st));

	if (!pr_insn_bit(pr_map2_nomodrm, opcode)) {
		errcode = pr_insn_modrm(st, &modrm);
		if (errcode < 0)
			return errcode;
	}

	if (pr_insn_bit(pr_map2_imm8, opcode))
		return pr_insn_skip(st, 1);

	return 0;
}

/* Decode a one-byte opcode @opcode.
 *
 * Returns zero on success, -pte_bad_insn otherwise.
 */
static int pr_insn_map1(struct pr_insn_state *st, struct pr_insn_info *info,
			uint8_t opcode)
{
	uint8_t modrm, reg;
	int errcode;

	modrm = 0;
	if (pr_insn_bit(pr_map1_modrm, opcode)) {
		errcode = pr_insn_modrm(st, &modrm);
		if (errcode < 0)
			return errcode;
	}
	reg = (modrm >> 3) & 7;

	switch (opcode) {
	case 0x70 ... 0x7f:
	case 0xe0 ... 0xe3:
	case 0xeb:
		return pr_insn_rel(st, info, 1);

	case 0xe8:
	case 0xe9:
		return pr_insn_rel(st, info, st->mode64 ? 4 :
				   pr_insn_immz(st));

	case 0xc7:
		/* xbegin */
		if (modrm == 0xf8)
			return pr_insn_rel(st, info, pr_insn_immz(st));
		break;

	case 0xf6:
		return reg < 2 ? pr_insn_skip(st, 1) : 0;

	case 0xf7:
		return reg < 2 ? pr_insn_skip(st, pr_insn_immz(st)) : 0;

	case 0xb8 ... 0xbf:
		return pr_insn_skip(st, st->rex_w ? 8 : pr_insn_immz(st));

	case 0xa0 ... 0xa3:
		return pr_insn_skip(st, st->asz);

	case 0xc2:
	case 0xca:
		return pr_insn_skip(st, 2);

	case 0xc8:
		return pr_insn_skip(st, 3);

	case 0x9a:
	case 0xea:
		if (st->mode64)
			return -pte_bad_insn;
		return pr_insn_skip(st, 2 + pr_insn_immz(st));
	}

	if (pr_insn_bit(pr_map1_imm8, opcode))
		return pr_insn_skip(st, 1);

	if (pr_insn_bit(pr_map1_immz, opcode))
		return pr_insn_skip(st, pr_insn_immz(st));

	return 0;
}

/* Decode a VEX/EVEX/XOP instruction whose first byte is @lead, or tell
 * that it is the legacy instruction sharing that byte.
 *
 * Returns 1 if it was decoded, 0 if @lead is a legacy opcode, or
 * -pte_bad_insn.
 */
static int pr_insn_try_vex(struct pr_insn_state *st, uint8_t lead)
{
	uint8_t next, map;
	int errcode;

	switch (lead) {
	case 0xc4:
	case 0xc5:
	case 0x62:
	case 0x8f:
		break;

	default:
		return 0;
	}

	if (st->size <= st->pos)
		return -pte_bad_insn;

	next = st->raw[st->pos];
	switch (lead) {
	case 0xc4:
	case 0xc5:
	case 0x62:
		/* Outside 64-bit mode these are LES/LDS/BOUND unless
		 * ModRM.mod would be 3.
		 */
		if (!st->mode64 && (next >> 6) != 3)
			return 0;
		break;

	case 0x8f:
		/* XOP uses map select 8 and up; else it is POP Ev. */
		if ((next & 0x1f) < 8)
			return 0;
		break;

	default:
		return 0;
	}

	switch (lead) {
	case 0xc5:
		map = 1;
		errcode = pr_insn_skip(st, 1);
		break;

	case 0xc4:
	case 0x8f:
		map = next & 0x1f;
		errcode = pr_insn_skip(st, 2);
		break;

	default:
		map = next & 0x7;
		errcode = pr_insn_skip(st, 3);
		break;
	}
	if (errcode < 0)
		return errcode;

	errcode = pr_insn_vex(st, map);
	if (errcode < 0)
		return errcode;

	return 1;
}

int pr_insn_decode(struct pr_insn_info *info, enum pt_exec_mode mode,
		   const uint8_t *raw, size_t size)
{
	struct pr_insn_state st;
	uint8_t byte, rex;
	int errcode;

	if (!info || !raw)
		return -pte_internal;

	memset(info, 0, sizeof(*info));
	memset(&st, 0, sizeof(st));
	st.raw = raw;
	st.size = size;

	switch (mode) {
	case ptem_16bit:
		st.osz = 2;
		st.asz = 2;
		break;

	case ptem_32bit:
		st.osz = 4;
		st.asz = 4;
		break;

	case ptem_64bit:
		st.osz = 4;
		st.asz = 8;
		st.mode64 = 1;
		break;

	default:
		return -pte_bad_insn;
	}

	/* Legacy prefixes and REX; a REX not right before the opcode is
	 * ignored.
	 */
	rex = 0;
	for (;;) {
		errcode = pr_insn_fetch(&st, &byte);
		if (errcode < 0)
			return errcode;

		if (st.mode64 && (byte & 0xf0) == 0x40) {
			rex = byte;
			continue;
		}

		switch (byte) {
		case 0x66:
			st.osz = mode == ptem_16bit ? 4 : 2;
			rex = 0;
			continue;

		case 0x67:
			st.asz = mode == ptem_32bit ? 2 : 4;
			rex = 0;
			continue;

		case 0xf0: case 0xf2: case 0xf3:
		case 0x26: case 0x2e: case 0x36: case 0x3e:
		case 0x64: case 0x65:
			rex = 0;
			continue;
		}
		break;
	}

	if (rex & 0x8) {
		st.rex_w = 1;
		st.osz = 8;
	}

	if (byte == 0x0f)
		errcode = pr_insn_map2(&st, info);
	else {
		errcode = pr_insn_try_vex(&st, byte);
		if (!errcode)
			errcode = pr_insn_map1(&st, info, byte);
	}
	if (errcode < 0)
		return errcode;

	info->size = (uint8_t) st.pos;
	return info->size;
}

int pr_insn_next_ip(uint64_t *next, const struct pr_insn_info *info,
		    uint64_t ip)
{
	if (!next || !info)
		return -pte_internal;

	ip += info->size;
	if (info->relbr)
		ip += (uint64_t) info->disp;

	*next = ip;
	return 0;
}

/* Is @byte a legacy prefix (or, in 64-bit mode, REX)? */
static int pr_insn_is_prefix(uint8_t byte, enum pt_exec_mode mode)
{
	switch (byte) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return 1;
	default:
		return mode == ptem_64bit && (byte & 0xf0) == 0x40;
	}
}

/* The class of two-byte opcode 0f @op with ModRM @modrm. */
static enum pt_insn_class pr_insn_class_0f(uint8_t op, uint8_t modrm)
{
	if (op >= 0x80 && op <= 0x8f)
		return ptic_cond_jump;
	switch (op) {
	case 0x05: case 0x34:		/* syscall, sysenter */
		return ptic_far_call;
	case 0x07: case 0x35:		/* sysret, sysexit */
		return ptic_far_return;
	case 0x01:
		if (modrm == 0xc1)	/* vmcall */
			return ptic_far_call;
		if (modrm == 0xc2 || modrm == 0xc3 || modrm == 0xec)
			return ptic_far_return;
		return ptic_other;
	default:
		return ptic_other;
	}
}

enum pt_insn_class pr_insn_class(enum pt_exec_mode mode, const uint8_t *raw,
				 size_t size)
{
	size_t pos = 0;
	uint8_t op;

	if (!raw)
		return ptic_error;
	if (size > pr_insn_max_size)
		size = pr_insn_max_size;
	while (pos < size && pr_insn_is_prefix(raw[pos], mode))
		pos += 1;
	if (pos >= size)
		return ptic_error;
	op = raw[pos++];
	if (op == 0x0f) {
		if (pos >= size)
			return ptic_error;
		op = raw[pos++];
		return pr_insn_class_0f(op, pos < size ? raw[pos] : 0);
	}
	if (op >= 0x70 && op <= 0x7f)
		return ptic_cond_jump;
	switch (op) {
	case 0xe8:
		return ptic_call;
	case 0x9a: case 0xcc: case 0xcd: case 0xce: case 0xf1:
		return ptic_far_call;
	case 0xc2: case 0xc3:
		return ptic_return;
	case 0xca: case 0xcb: case 0xcf:
		return ptic_far_return;
	case 0xe9: case 0xeb:
		return ptic_jump;
	case 0xea:
		return ptic_far_jump;
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:
		return ptic_cond_jump;
	case 0xff:
		if (pos >= size)
			return ptic_error;
		switch ((raw[pos] >> 3) & 7) {
		case 2:
			return ptic_call;
		case 3:
			return ptic_far_call;
		case 4:
			return ptic_jump;
		case 5:
			return ptic_far_jump;
		default:
			return ptic_other;
		}
	default:
		return ptic_other;
	}
}
