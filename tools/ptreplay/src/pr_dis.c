// SPDX-License-Identifier: GPL-2.0
/*
 * pr_dis: instruction disassembly text (capstone).
 */
#include "pr_dis.h"

#include <capstone/capstone.h>

#include <stdio.h>
#include <string.h>

int pr_dis_init(struct pr_dis *dis)
{
	if (!dis)
		return -pte_invalid;

	memset(dis, 0, sizeof(*dis));
	return 0;
}

void pr_dis_fini(struct pr_dis *dis)
{
	int idx;

	if (!dis)
		return;

	for (idx = 0; idx < 3; ++idx) {
		csh handle;

		if (!dis->open[idx])
			continue;

		handle = (csh) dis->handle[idx];
		cs_close(&handle);
		dis->open[idx] = 0;
	}
}

/* Get the capstone handle for @mode in *@handle, opening it if needed.
 *
 * Returns zero on success.
 * Returns -pte_bad_insn if @mode is not a known execution mode.
 * Returns -pte_not_supported if capstone fails to open.
 */
static int pr_dis_handle(struct pr_dis *dis, enum pt_exec_mode mode,
			 csh *handle)
{
	static const cs_mode modes[3] = { CS_MODE_16, CS_MODE_32, CS_MODE_64 };
	int idx;

	switch (mode) {
	case ptem_16bit:
		idx = 0;
		break;

	case ptem_32bit:
		idx = 1;
		break;

	case ptem_64bit:
		idx = 2;
		break;

	default:
		return -pte_bad_insn;
	}

	if (!dis->open[idx]) {
		csh new;

		if (cs_open(CS_ARCH_X86, modes[idx], &new) != CS_ERR_OK)
			return -pte_not_supported;

		dis->handle[idx] = (size_t) new;
		dis->open[idx] = 1;
	}

	*handle = (csh) dis->handle[idx];
	return 0;
}

int pr_dis_format(struct pr_dis *dis, enum pt_exec_mode mode,
		  const uint8_t *raw, size_t size, uint64_t ip,
		  char *buf, size_t len)
{
	cs_insn *insn;
	csh handle;
	size_t count;
	int errcode, isize;

	if (!dis || !raw || !buf || !len)
		return -pte_invalid;

	errcode = pr_dis_handle(dis, mode, &handle);
	if (errcode < 0)
		return errcode;

	count = cs_disasm(handle, raw, size, ip, 1, &insn);
	if (count != 1) {
		if (count)
			cs_free(insn, count);
		return -pte_bad_insn;
	}

	if (insn->op_str[0])
		snprintf(buf, len, "%s %s", insn->mnemonic, insn->op_str);
	else
		snprintf(buf, len, "%s", insn->mnemonic);

	isize = insn->size;
	cs_free(insn, count);

	return isize;
}
