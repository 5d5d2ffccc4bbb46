// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_dis: disassembly text.
 */
#include "pr_dis.h"
#include "pr_test.h"

static struct prt_result init_null(void)
{
	prt_int_eq(pr_dis_init(NULL), -pte_invalid);
	pr_dis_fini(NULL);

	return prt_passed();
}

/* A fixture: an initialized disassembler and an output buffer. */
struct dis_fixture {
	struct pr_dis dis;
	char buf[64];

	struct prt_result (*init)(struct dis_fixture *);
	struct prt_result (*fini)(struct dis_fixture *);
};

static struct prt_result dfx_init(struct dis_fixture *fx)
{
	prt_int_eq(pr_dis_init(&fx->dis), 0);
	memset(fx->buf, 0, sizeof(fx->buf));

	return prt_passed();
}

static struct prt_result dfx_fini(struct dis_fixture *fx)
{
	pr_dis_fini(&fx->dis);
	pr_dis_fini(&fx->dis);

	return prt_passed();
}

static struct prt_result format_null(struct dis_fixture *fx)
{
	const uint8_t nop = 0x90;

	prt_int_eq(pr_dis_format(NULL, ptem_64bit, &nop, 1, 0, fx->buf, 64),
		   -pte_invalid);
	prt_int_eq(pr_dis_format(&fx->dis, ptem_64bit, NULL, 1, 0, fx->buf,
				 64), -pte_invalid);
	prt_int_eq(pr_dis_format(&fx->dis, ptem_64bit, &nop, 1, 0, NULL, 64),
		   -pte_invalid);
	prt_int_eq(pr_dis_format(&fx->dis, ptem_64bit, &nop, 1, 0, fx->buf,
				 0), -pte_invalid);

	return prt_passed();
}

static struct prt_result format_nop(struct dis_fixture *fx)
{
	const uint8_t nop = 0x90;

	prt_int_eq(pr_dis_format(&fx->dis, ptem_64bit, &nop, 1, 0x1000,
				 fx->buf, sizeof(fx->buf)), 1);
	prt_str_eq(fx->buf, "nop");

	return prt_passed();
}

static struct prt_result format_branch_target(struct dis_fixture *fx)
{
	const uint8_t jmp[] = { 0xeb, 0xfe };

	prt_int_eq(pr_dis_format(&fx->dis, ptem_32bit, jmp, sizeof(jmp),
				 0x1000, fx->buf, sizeof(fx->buf)), 2);
	prt_str_eq(fx->buf, "jmp 0x1000");

	return prt_passed();
}

static struct prt_result format_bad_mode(struct dis_fixture *fx)
{
	const uint8_t nop = 0x90;

	prt_int_eq(pr_dis_format(&fx->dis, ptem_unknown, &nop, 1, 0, fx->buf,
				 sizeof(fx->buf)), -pte_bad_insn);

	return prt_passed();
}

static struct prt_result format_truncated(struct dis_fixture *fx)
{
	const uint8_t call[] = { 0xe8, 0x00 };

	prt_int_eq(pr_dis_format(&fx->dis, ptem_64bit, call, sizeof(call), 0,
				 fx->buf, sizeof(fx->buf)), -pte_bad_insn);

	return prt_passed();
}

static struct prt_result format_small_buffer(struct dis_fixture *fx)
{
	const uint8_t mov[] = { 0x48, 0x89, 0xc3 };

	prt_int_eq(pr_dis_format(&fx->dis, ptem_64bit, mov, sizeof(mov), 0,
				 fx->buf, 4), 3);
	prt_int_eq(strlen(fx->buf), 3);

	return prt_passed();
}

int main(void)
{
	struct dis_fixture dfx = { .init = dfx_init, .fini = dfx_fini };
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_dis: init and fini accept NULL", init_null);
	prt_run_fx(suite, "pr_dis: format rejects NULL arguments",
		   format_null, dfx);
	prt_run_fx(suite, "pr_dis: nop is formatted as 'nop'", format_nop,
		   dfx);
	prt_run_fx(suite, "pr_dis: branch targets are absolute addresses",
		   format_branch_target, dfx);
	prt_run_fx(suite, "pr_dis: an unknown mode is rejected",
		   format_bad_mode, dfx);
	prt_run_fx(suite, "pr_dis: a truncated instruction is rejected",
		   format_truncated, dfx);
	prt_run_fx(suite, "pr_dis: the text is cut to the buffer",
		   format_small_buffer, dfx);

	return prt_exit(&suite);
}
