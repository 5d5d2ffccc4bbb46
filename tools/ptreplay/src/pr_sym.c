// SPDX-License-Identifier: GPL-2.0
/*
 * pr_sym: ELF symbols (libelf).
 */
#include "pr_sym.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file's DWARF and the answers given: address -> text. */
struct pr_dwarf {
	Dwarf *dw;
	int fd;
	struct pr_dwarf_ans *ans;
	size_t nans, capans;
};

/* An answer: the line text of an address, or (func) a function's name. */
struct pr_dwarf_ans {
	uint64_t addr;
	int func;
	char *text;
};

/* The most answers cached per file (then they are worked out again). */
#define PR_DWARF_MAX_ANS	(1u << 20)

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
	pthread_mutex_init(&pe->lock, NULL);

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
	if (pe && !(pe->path = strdup(path))) {
		pr_elf_free(pe);
		return NULL;
	}
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
	if (elf->dw) {
		size_t i;

		for (i = 0; i < elf->dw->capans; ++i)
			free(elf->dw->ans[i].text);
		free(elf->dw->ans);
		dwarf_end(elf->dw->dw);
		close(elf->dw->fd);
		free(elf->dw);
	}
	pthread_mutex_destroy(&elf->lock);
	free(elf->path);
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

/* Returns the index of the first symbol of @elf above @vaddr (nsym: none). */
static size_t pr_elf_sym_above(const struct pr_elf *elf, uint64_t vaddr)
{
	size_t lo = 0, hi = elf->nsym;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (elf->sym[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t pr_elf_sym_next(const struct pr_elf *elf, uint64_t vaddr)
{
	size_t i = pr_elf_sym_above(elf, vaddr);

	return i < elf->nsym ? elf->sym[i].addr : UINT64_MAX;
}

const struct pr_sym *pr_elf_sym(const struct pr_elf *elf, uint64_t vaddr)
{
	const struct pr_sym *s;
	size_t lo;

	if (!elf || !elf->nsym)
		return NULL;
	/* the last symbol with addr <= vaddr */
	lo = pr_elf_sym_above(elf, vaddr);
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

/* Open the DWARF of @pe: the file's own, else its separate debug file by
 * build-id.  Returns it, or NULL.
 */
static struct pr_dwarf *pr_dwarf_open(struct pr_elf *pe)
{
	char debug[128];
	const char *paths[2] = { pe->path, NULL };
	struct pr_dwarf *d;
	size_t i;
	int n;

	if (pe->build_id_size > 1) {
		n = snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/"
			     "%02x/", pe->build_id[0]);
		for (i = 1; i < pe->build_id_size; ++i)
			n += snprintf(debug + n, sizeof(debug) - (size_t)n,
				      "%02x", pe->build_id[i]);
		snprintf(debug + n, sizeof(debug) - (size_t)n, ".debug");
		paths[1] = debug;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	for (i = 0; i < 2; ++i) {
		if (!paths[i])
			continue;
		d->fd = open(paths[i], O_RDONLY);
		if (d->fd < 0)
			continue;
		d->dw = dwarf_begin(d->fd, DWARF_C_READ);
		if (d->dw)
			return d;
		close(d->fd);
	}
	free(d);
	return NULL;
}

/* The cached answer slot for (@addr, @func) in @d: the entry with that
 * key, or the free slot for it (text NULL), or NULL if the cache is full.
 */
static struct pr_dwarf_ans *pr_dwarf_slot(struct pr_dwarf *d, uint64_t addr,
					  int func)
{
	size_t i, mask;

	if (d->nans * 2 >= d->capans) {
		size_t cap = d->capans ? 2 * d->capans : 1024;
		struct pr_dwarf_ans *n;

		if (d->nans >= PR_DWARF_MAX_ANS)
			return NULL;
		n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (i = 0; i < d->capans; ++i) {
			struct pr_dwarf_ans *o = &d->ans[i];
			size_t h;

			if (!o->text)
				continue;
			h = ((o->addr * 2 + (uint64_t)o->func) *
			     0x9e3779b97f4a7c15ULL) & (cap - 1);
			while (n[h].text)
				h = (h + 1) & (cap - 1);
			n[h] = *o;
		}
		free(d->ans);
		d->ans = n;
		d->capans = cap;
	}
	mask = d->capans - 1;
	i = ((addr * 2 + (uint64_t)func) * 0x9e3779b97f4a7c15ULL) & mask;
	while (d->ans[i].text &&
	       (d->ans[i].addr != addr || d->ans[i].func != func))
		i = (i + 1) & mask;
	return &d->ans[i];
}

/* @path without its directories. */
static const char *pr_dwarf_base(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "??";
}

/* The DW_AT_call_file/call_line of inlined subroutine @die of @cu. */
static void pr_dwarf_call_site(Dwarf_Die *cu, Dwarf_Die *die,
			       const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word v;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_attr_integrate(die, DW_AT_call_line, &attr) &&
	    dwarf_formudata(&attr, &v) == 0)
		*line = (int)v;
	if (dwarf_attr_integrate(die, DW_AT_call_file, &attr) &&
	    dwarf_formudata(&attr, &v) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
}

/* The scopes holding @addr in @cu, innermost first, as nested in the
 * code: after an inlined subroutine dwarf_getscopes() goes on with the
 * scopes of its abstract definition, so take the innermost scope's real
 * parents (dwarf_getscopes_die()).  Returns their number (*@scopes
 * malloc'd), 0 or -1 if none.
 */
static int pr_dwarf_scopes(Dwarf_Die *cu, uint64_t addr, Dwarf_Die **scopes)
{
	Dwarf_Die inner;
	int n = dwarf_getscopes(cu, addr, scopes);

	if (n <= 0)
		return n;
	inner = (*scopes)[0];
	free(*scopes);
	*scopes = NULL;
	return dwarf_getscopes_die(&inner, scopes);
}

/* The line text of @addr (see pr_elf_lines()) into @out, "" if none. */
static void pr_dwarf_text(Dwarf *dw, uint64_t addr, char *out, size_t size)
{
	Dwarf_Die cu, *scopes = NULL;
	Dwarf_Line *l;
	const char *file = NULL;
	int line = 0, n, i, inl = 0;
	size_t len = 0;

	out[0] = 0;
	if (!dwarf_addrdie(dw, addr, &cu))
		return;
	l = dwarf_getsrc_die(&cu, addr);
	if (l) {
		file = dwarf_linesrc(l, NULL, NULL);
		dwarf_lineno(l, &line);
	}
	n = pr_dwarf_scopes(&cu, addr, &scopes);
	for (i = 0; i < n && len < size; ++i) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name;

		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram)
			continue;
		if (tag == DW_TAG_subprogram && !inl)
			break;
		name = dwarf_diename(&scopes[i]);
		len += (size_t)snprintf(out + len, size - len, "%s%s at %s:%d",
					inl ? ", inlined in " : " (",
					name ? name : "??",
					pr_dwarf_base(file), line);
		inl += 1;
		if (tag == DW_TAG_subprogram)
			break;
		pr_dwarf_call_site(&cu, &scopes[i], &file, &line);
	}
	free(scopes);
	if (inl && len < size)
		snprintf(out + len, size - len, ")");
	else if (!inl && file)
		snprintf(out, size, " (%s:%d)", pr_dwarf_base(file), line);
}

/* "name (file:line)" of the function @s declared in @dw, into @out. */
static void pr_dwarf_func(Dwarf *dw, const struct pr_sym *s, char *out,
			  size_t size)
{
	Dwarf_Die cu, *scopes = NULL;
	const char *file = NULL;
	int line = 0, n, i;

	snprintf(out, size, "%s", s->name);
	if (!dwarf_addrdie(dw, s->addr, &cu))
		return;
	n = pr_dwarf_scopes(&cu, s->addr, &scopes);
	for (i = 0; i < n; ++i)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			file = dwarf_decl_file(&scopes[i]);
			dwarf_decl_line(&scopes[i], &line);
			break;
		}
	free(scopes);
	if (file)
		snprintf(out, size, "%s (%s:%d)", s->name,
			 pr_dwarf_base(file), line);
}

/* The cached answer for (@addr, @func) of @pe, worked out if needed;
 * into @tmp (of @size) if it cannot be cached.  Call with @pe->lock held.
 */
static const char *pr_dwarf_answer(struct pr_elf *pe, uint64_t addr,
				   const struct pr_sym *s, int func, char *tmp,
				   size_t size)
{
	struct pr_dwarf_ans *a = pr_dwarf_slot(pe->dw, addr, func);
	char *text;

	if (a && a->text)
		return a->text;
	if (func)
		pr_dwarf_func(pe->dw->dw, s, tmp, size);
	else
		pr_dwarf_text(pe->dw->dw, addr, tmp, size);
	if (!a || !(text = strdup(tmp)))
		return NULL;
	a->addr = addr;
	a->func = func;
	a->text = text;
	pe->dw->nans += 1;
	return text;
}

const char *pr_elf_lines(struct pr_elf *elf, uint64_t vaddr,
			 const struct pr_sym *s, char *buf, size_t size)
{
	char tmp[512];
	const char *text, *func = NULL;
	size_t len;

	if (!elf || !s || !buf || !size)
		return s ? s->name : NULL;
	pthread_mutex_lock(&elf->lock);
	if (!elf->dw_tried && elf->path) {
		elf->dw_tried = 1;
		elf->dw = pr_dwarf_open(elf);
	}
	if (!elf->dw)
		goto out_unlock;
	func = pr_dwarf_answer(elf, s->addr, s, 1, tmp, sizeof(tmp));
	text = pr_dwarf_answer(elf, vaddr, s, 0, tmp, sizeof(tmp));
	len = strlen(buf);
	if (len < size)
		snprintf(buf + len, size - len, "%s", text ? text : tmp);
out_unlock:
	pthread_mutex_unlock(&elf->lock);
	return func ? func : s->name;
}
