// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_sym: ELF symbols.
 */
#include "pr_sym.h"
#include "pr_test.h"

#include <limits.h>

int pr_test_sym_anchor(void);
int pr_test_sym_anchor(void)
{
	return 42;
}

static struct prt_result null_and_missing(void)
{
	uint64_t v;

	prt_null(pr_elf_open(NULL));
	prt_null(pr_elf_open("/nonexistent"));
	prt_null(pr_elf_mem(NULL, 0));
	prt_null(pr_elf_mem((const uint8_t *)"not elf at all", 14));
	prt_null(pr_elf_sym(NULL, 0));
	prt_int_eq(pr_elf_off_to_vaddr(NULL, 0, &v), -1);
	pr_elf_free(NULL);
	return prt_passed();
}

/* This test program's own symbols. */
static struct prt_result own_symbols(void)
{
	char path[PATH_MAX];
	struct pr_elf *elf;
	const struct pr_sym *s = NULL;
	size_t i;
	ssize_t n;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	prt_check(n > 0);
	path[n] = 0;
	elf = pr_elf_open(path);
	prt_ptr(elf);
	prt_check(elf->nsym > 0);
	prt_check(elf->nload > 0);
	for (i = 0; i < elf->nsym; ++i)
		if (!strcmp(elf->sym[i].name, "pr_test_sym_anchor"))
			s = &elf->sym[i];
	prt_ptr(s);
	prt_ptr(pr_elf_sym(elf, s->addr + 1));
	prt_str_eq(pr_elf_sym(elf, s->addr + 1)->name, "pr_test_sym_anchor");
	prt_check(elf->build_id_size == 20);
	pr_elf_free(elf);
	return prt_passed();
}

static struct prt_result offsets(void)
{
	struct pr_elf elf;
	uint64_t v;

	memset(&elf, 0, sizeof(elf));
	elf.nload = 1;
	elf.load[0].offset = 0x1000;
	elf.load[0].vaddr = 0x401000;
	elf.load[0].filesz = 0x2000;
	prt_int_eq(pr_elf_off_to_vaddr(&elf, 0x1234, &v), 0);
	prt_uint_eq(v, 0x401234);
	prt_int_eq(pr_elf_off_to_vaddr(&elf, 0x3000, &v), -1);
	prt_int_eq(pr_elf_off_to_vaddr(&elf, 0xfff, &v), -1);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_sym: NULL, missing and non-ELF inputs are refused",
		null_and_missing);
	prt_run(suite, "pr_sym: a program's function symbols and build-id are "
		"read", own_symbols);
	prt_run(suite, "pr_sym: file offsets translate through PT_LOAD",
		offsets);
	return prt_exit(&suite);
}
