// SPDX-License-Identifier: GPL-2.0
/*
 * pr_sym: ELF symbols (libelf).
 */
#include "pr_sym.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pr_sym_cmp(const void *a, const void *b)
{
	const struct pr_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* sized symbols first among equals */
	return (x->size < y->size) - (x->size > y->size);
}

/* Collect function symbols of section @scn into @pe. */
static int pr_elf_symtab(struct pr_elf *pe, Elf *elf, Elf_Scn *scn,
			 GElf_Shdr *shdr, size_t *names_used, size_t *names_cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;

	if (!data || !shdr->sh_entsize)
		return 0;
	n = shdr->sh_size / shdr->sh_entsize;
	for (i = 0; i < n; ++i) {
		GElf_Sym s;
		const char *name;
		size_t len;
		struct pr_sym *sym;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC)
			continue;
		if (!s.st_value || s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, shdr->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		len = strlen(name) + 1;
		if (*names_used + len > *names_cap) {
			size_t cap = *names_cap ? 2 * *names_cap : 4096;
			char *nn;

			while (cap < *names_used + len)
				cap *= 2;
			nn = realloc(pe->names, cap);
			if (!nn)
				return -1;
			pe->names = nn;
			*names_cap = cap;
		}
		sym = realloc(pe->sym, (pe->nsym + 1) * sizeof(*sym));
		if (!sym)
			return -1;
		pe->sym = sym;
		sym[pe->nsym].addr = s.st_value;
		sym[pe->nsym].size = s.st_size;
		/* store the offset for now, fixed up when names are final */
		sym[pe->nsym].name = (const char *)(uintptr_t)*names_used;
		memcpy(pe->names + *names_used, name, len);
		*names_used += len;
		pe->nsym += 1;
	}
	return 0;
}

static struct pr_elf *pr_elf_read(Elf *elf)
{
	struct pr_elf *pe;
	Elf_Scn *scn = NULL;
	size_t names_used = 0, names_cap = 0, phnum, i;
	int have_symtab = 0, pass;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return NULL;
	pe = calloc(1, sizeof(*pe));
	if (!pe)
		return NULL;

	if (elf_getphdrnum(elf, &phnum) == 0)
		for (i = 0; i < phnum && pe->nload < 16; ++i) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph))
				break;
			if (ph.p_type == PT_LOAD) {
				pe->load[pe->nload].offset = ph.p_offset;
				pe->load[pe->nload].vaddr = ph.p_vaddr;
				pe->load[pe->nload].filesz = ph.p_filesz;
				pe->nload += 1;
			} else if (ph.p_type == PT_NOTE) {
				/* build-id via the section scan below */
			}
		}

	/* .symtab if present, else .dynsym */
	for (pass = 0; pass < 2; ++pass) {
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh))
				continue;
			if (pass == 0 && sh.sh_type == SHT_NOTE) {
				Elf_Data *d = elf_getdata(scn, NULL);
				size_t off = 0, noff, doff;
				GElf_Nhdr nh;

				while (d && (off = gelf_getnote(d, off, &nh,
							       &noff, &doff))) {
					if (nh.n_type == NT_GNU_BUILD_ID &&
					    nh.n_descsz <= 32 &&
					    nh.n_namesz == 4 &&
					    !memcmp((char *)d->d_buf + noff,
						    "GNU", 4)) {
						memcpy(pe->build_id,
						       (char *)d->d_buf + doff,
						       nh.n_descsz);
						pe->build_id_size = nh.n_descsz;
					}
				}
			}
			if ((pass == 0 && sh.sh_type == SHT_SYMTAB) ||
			    (pass == 1 && !have_symtab &&
			     sh.sh_type == SHT_DYNSYM)) {
				have_symtab = 1;
				if (pr_elf_symtab(pe, elf, scn, &sh,
						  &names_used, &names_cap) < 0) {
					pr_elf_free(pe);
					return NULL;
				}
			}
		}
	}

	for (i = 0; i < pe->nsym; ++i)
		pe->sym[i].name = pe->names + (uintptr_t)pe->sym[i].name;
	if (pe->nsym)
		qsort(pe->sym, pe->nsym, sizeof(*pe->sym), pr_sym_cmp);
	return pe;
}

struct pr_elf *pr_elf_open(const char *path)
{
	struct pr_elf *pe;
	Elf *elf;
	int fd;

	if (!path || elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	pe = pr_elf_read(elf);
	elf_end(elf);
	close(fd);
	return pe;
}

struct pr_elf *pr_elf_mem(const uint8_t *buf, size_t size)
{
	struct pr_elf *pe;
	char *copy;
	Elf *elf;

	if (!buf || !size || elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	copy = malloc(size);
	if (!copy)
		return NULL;
	memcpy(copy, buf, size);
	elf = elf_memory(copy, size);
	pe = pr_elf_read(elf);
	elf_end(elf);
	free(copy);
	return pe;
}

void pr_elf_free(struct pr_elf *elf)
{
	if (!elf)
		return;
	free(elf->sym);
	free(elf->names);
	free(elf);
}

int pr_elf_off_to_vaddr(const struct pr_elf *elf, uint64_t off,
			uint64_t *vaddr)
{
	size_t i;

	if (!elf || !vaddr)
		return -1;
	for (i = 0; i < elf->nload; ++i) {
		const struct pr_elf_load *l = &elf->load[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -1;
}

const struct pr_sym *pr_elf_sym(const struct pr_elf *elf, uint64_t vaddr)
{
	size_t lo = 0, hi;
	const struct pr_sym *s;

	if (!elf || !elf->nsym)
		return NULL;
	hi = elf->nsym;
	/* the last symbol with addr <= vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (elf->sym[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &elf->sym[lo - 1];
	/* among symbols at the same address, prefer the first (sized) */
	while (s > elf->sym && s[-1].addr == s->addr)
		s -= 1;
	if (s->size ? vaddr - s->addr < s->size : vaddr - s->addr < 0x10000)
		return s;
	return NULL;
}
