/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_sym: ELF symbols (libelf) for naming code addresses.
 *
 * A pr_elf holds the function symbols of one ELF file sorted by address,
 * its PT_LOAD segments (to turn file offsets of a mapping into ELF
 * virtual addresses) and its build-id.
 */
#ifndef PR_SYM_H
#define PR_SYM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct pr_sym {
	uint64_t addr, size;
	const char *name;	/* points into @names */
};

struct pr_elf_load {
	uint64_t offset, vaddr, filesz;
};

struct pr_elf {
	struct pr_sym *sym;
	size_t nsym;
	char *names;
	struct pr_elf_load load[16];
	size_t nload;
	uint8_t build_id[32];
	size_t build_id_size;
	/* Source lines (libdw), opened at the first pr_elf_lines() of a
	 * file read by path; answers cached by address under @lock.
	 */
	char *path;
	pthread_mutex_t lock;
	struct pr_dwarf *dw;
	int dw_tried;
};

/* Read the ELF file @path (NULL if it is not ELF or cannot be read). */
extern struct pr_elf *pr_elf_open(const char *path);

/* Read an ELF image of @size bytes at @buf (copied as needed). */
extern struct pr_elf *pr_elf_mem(const uint8_t *buf, size_t size);

extern void pr_elf_free(struct pr_elf *elf);

/* Translate file offset @off into an ELF virtual address.
 * Returns zero on success, -1 if no PT_LOAD segment holds @off.
 */
extern int pr_elf_off_to_vaddr(const struct pr_elf *elf, uint64_t off,
			       uint64_t *vaddr);

/* The function symbol holding @vaddr (or the closest one below it, within
 * 64 KiB, for symbols without size), or NULL.
 */
/* Returns the first symbol address of @elf above @vaddr, or UINT64_MAX. */
extern uint64_t pr_elf_sym_next(const struct pr_elf *elf, uint64_t vaddr);

extern const struct pr_sym *pr_elf_sym(const struct pr_elf *elf,
				       uint64_t vaddr);

/* Source lines of @vaddr in function @s of @elf (DWARF of the file, or
 * of /usr/lib/debug/.build-id/xx/yyyy.debug): appends " (file:line)" to
 * the NUL-terminated name in @buf (of @size bytes), or with inlined
 * frames " (f at file:line, inlined in g at file:line)", innermost
 * first; file names without directories.  Thread-safe; answers are
 * cached per file and address.
 *
 * Returns the function's name with where it is declared, "name
 * (file:line)" (stable until pr_elf_free()), or @s->name without DWARF.
 */
extern const char *pr_elf_lines(struct pr_elf *elf, uint64_t vaddr,
				const struct pr_sym *s, char *buf,
				size_t size);

#endif /* PR_SYM_H */
