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

/* The test program built with -g (TEST_BIN_DIR/prog-jitmap): its
 * function symbol @name, via *@elf.
 */
static const struct pr_sym *prog_sym(struct pr_elf **elf, const char *name)
{
	const char *dir = getenv("TEST_BIN_DIR");
	char path[PATH_MAX];
	size_t i;

	snprintf(path, sizeof(path), "%s/prog-jitmap", dir ? dir : "build");
	*elf = pr_elf_open(path);
	for (i = 0; *elf && i < (*elf)->nsym; ++i)
		if (!strcmp((*elf)->sym[i].name, name))
			return &(*elf)->sym[i];
	return NULL;
}

/* Source lines and inlined frames of prog-jitmap.c (its PROG_LINE_*). */
static struct prt_result lines_and_inlined_frames(void)
{
	struct pr_elf *elf;
	const struct pr_sym *s = prog_sym(&elf, "prog_outer");
	const char *fn, *fn2;
	char buf[512], first[512] = "";
	uint64_t a;
	int inlined = 0, plain = 0;

	prt_ptr(elf);
	prt_ptr(s);
	prt_check(s->size > 0);
	for (a = s->addr; a < s->addr + s->size; ++a) {
		snprintf(buf, sizeof(buf), "prog_outer+0x%" PRIx64,
			 a - s->addr);
		fn = pr_elf_lines(elf, a, s, buf, sizeof(buf));
		prt_str_eq(fn, "prog_outer (prog-jitmap.c:28)");
		if (strstr(buf, " (prog_step at prog-jitmap.c:24, inlined in "
			   "prog_outer at prog-jitmap.c:33)"))
			inlined += 1;
		else if (strstr(buf, " (prog-jitmap.c:"))
			plain += 1;
		else
			prt_fail("no line for %.200s", buf);
		if (a == s->addr)
			snprintf(first, sizeof(first), "%s", buf);
	}
	prt_check(inlined > 0);
	prt_check(plain > 0);
	/* cached: the same answer, the same function name pointer */
	snprintf(buf, sizeof(buf), "prog_outer+0x0");
	fn2 = pr_elf_lines(elf, s->addr, s, buf, sizeof(buf));
	prt_str_eq(buf, first);
	prt_check(fn2 == pr_elf_lines(elf, s->addr, s, buf, sizeof(buf)));
	/* a small buffer is cut, never overrun */
	snprintf(buf, 8, "x");
	pr_elf_lines(elf, s->addr, s, buf, 8);
	prt_int_eq(strlen(buf), 7);
	pr_elf_free(elf);
	return prt_passed();
}

/* Without DWARF (an ELF image in memory): names unchanged. */
static struct prt_result lines_without_dwarf(void)
{
	struct pr_elf *elf;
	const struct pr_sym *s = prog_sym(&elf, "main");
	struct pr_sym fake = { .addr = 0x1000, .size = 16, .name = "f" };
	char buf[64] = "f+0x1";

	prt_ptr(s);
	pr_elf_free(elf);
	elf = calloc(1, sizeof(*elf));
	prt_ptr(elf);
	pthread_mutex_init(&elf->lock, NULL);
	prt_str_eq(pr_elf_lines(elf, 0x1001, &fake, buf, sizeof(buf)), "f");
	prt_str_eq(buf, "f+0x1");
	prt_null(pr_elf_lines(NULL, 0, NULL, buf, sizeof(buf)));
	pr_elf_free(elf);
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
	prt_run(suite, "pr_sym: --lines gives file:line and the inlined "
		"frames of a -g program (libdw), cached",
		lines_and_inlined_frames);
	prt_run(suite, "pr_sym: --lines leaves names alone without DWARF",
		lines_without_dwarf);
	return prt_exit(&suite);
}
