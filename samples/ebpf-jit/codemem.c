// SPDX-License-Identifier: GPL-2.0
/*
 * Code memory: where code objects live, how their bytes are written in
 * each mode, and the log of every revision that ran.
 *
 * A revision is the bytes of one code object after a write (install or
 * patch). It is logged the first time the object runs after that write,
 * with the bytes read back from the address the code ran at.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codemem.h"
#include "ujit.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

const char *const cm_mode_names[] = {
	[CM_WX] = "wx",
	[CM_RWX] = "rwx",
	[CM_MMAP_EXEC] = "mmap-exec",
	[CM_MEMFD_DUAL] = "memfd-dual",
};

static int map_memfd(struct cm_area *a, size_t size, void *at, int fixed)
{
	int fd = memfd_create("ebpf-jit", MFD_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size)) {
		err = -errno;
		close(fd);
		return err;
	}
	a->x = mmap(at, size, PROT_READ | PROT_EXEC, MAP_SHARED | fixed, fd, 0);
	if (a->x == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	a->w = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = a->w == MAP_FAILED ? -errno : 0;
	if (err)
		munmap(a->x, size);
	close(fd);
	return err;
}

/* map @size bytes for code in @mode; at @at exactly if it is not NULL */
static int map_area(struct cm_area *a, enum cm_mode mode, size_t size, void *at)
{
	int fixed = at ? MAP_FIXED_NOREPLACE : 0;
	int prot = PROT_READ | PROT_WRITE | PROT_EXEC;
	int err;

	a->size = size;
	if (mode == CM_MEMFD_DUAL) {
		err = map_memfd(a, size, at, fixed);
		if (err)
			return err;
	} else {
		/* W^X: untouched and executable until the first write */
		if (mode == CM_WX)
			prot = PROT_READ | PROT_EXEC;
		a->x = mmap(at, size, prot, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
		if (a->x == MAP_FAILED)
			return -errno;
		a->w = a->x;
	}
	if (at && a->x != at) {		/* a kernel without MAP_FIXED_NOREPLACE */
		munmap(a->x, size);
		if (a->w != a->x)
			munmap(a->w, size);
		return -EEXIST;
	}
	return 0;
}

static void unmap_area(struct cm_area *a)
{
	if (!a->size)
		return;
	munmap(a->x, a->size);
	if (a->w != a->x)
		munmap(a->w, a->size);
	a->size = 0;
}

int cm_space_init(struct cm_space *cs, enum cm_mode mode, enum cm_map map,
		  size_t arena_pages, struct revlog *log)
{
	memset(cs, 0, sizeof(*cs));
	cs->mode = mode;
	cs->map = map;
	cs->page = sysconf(_SC_PAGESIZE);
	cs->log = log;
	if (map == CM_MAP_ONE)
		return map_area(&cs->arena, mode, arena_pages * cs->page, NULL);
	return 0;
}

void cm_space_fini(struct cm_space *cs)
{
	unmap_area(&cs->arena);
}

static size_t page_up(size_t v, size_t page)
{
	return (v + page - 1) & ~(page - 1);
}

/* room in the arena: at @at (reuse) or after what is used */
static int arena_alloc(struct cm_space *cs, size_t need, size_t page_off, void *at,
		       size_t *base)
{
	if (at) {
		*base = (__u8 *)at - page_off - cs->arena.x;
		if ((__u8 *)at < cs->arena.x + page_off || *base % cs->page)
			return -EINVAL;
	} else {
		*base = cs->next;
	}
	if (*base + need > cs->arena.size)
		return -ENOSPC;
	if (!at)
		cs->next += need;
	return 0;
}

/*
 * A code object with @cap bytes of room starting @page_off bytes into its
 * first page; at exec address @at if that is not NULL.
 */
int cm_code_alloc(struct cm_space *cs, struct cm_code *co, size_t cap,
		  size_t page_off, void *at)
{
	size_t need = page_up(page_off + cap, cs->page), base;
	int err;

	if (page_off >= cs->page)
		return -EINVAL;
	memset(co, 0, sizeof(*co));
	co->cs = cs;
	co->cap = need - page_off;
	if (cs->map == CM_MAP_EACH) {
		err = map_area(&co->own, cs->mode, need, at ? (__u8 *)at - page_off : NULL);
		if (err)
			return err;
		co->x = co->own.x + page_off;
		co->w = co->own.w + page_off;
		return 0;
	}
	err = arena_alloc(cs, need, page_off, at, &base);
	if (err)
		return err;
	co->x = cs->arena.x + base + page_off;
	co->w = cs->arena.w + base + page_off;
	return 0;
}

/* make [x, x + end) writable through w (W^X: flip those pages to RW) */
static int begin_write(struct cm_code *co, size_t end)
{
	size_t pg = co->cs->page;
	__u8 *lo = (__u8 *)((unsigned long)co->x & ~(pg - 1));

	if (co->cs->mode != CM_WX)
		return 0;
	if (mprotect(lo, page_up(co->x + end - lo, pg), PROT_READ | PROT_WRITE))
		return -errno;
	return 0;
}

static int end_write(struct cm_code *co, size_t end)
{
	size_t pg = co->cs->page;
	__u8 *lo = (__u8 *)((unsigned long)co->x & ~(pg - 1));

	__builtin___clear_cache((char *)co->x, (char *)co->x + end);
	if (co->cs->mode != CM_WX)
		return 0;
	if (mprotect(lo, page_up(co->x + end - lo, pg), PROT_READ | PROT_EXEC))
		return -errno;
	return 0;
}

static void new_revision(struct cm_code *co)
{
	__u64 rev = __atomic_add_fetch(&co->cs->log->last_rev, 1, __ATOMIC_SEQ_CST);

	__atomic_store_n(&co->rev, rev, __ATOMIC_RELEASE);
	__atomic_store_n(&co->pending, rev, __ATOMIC_RELEASE);
}

/* free: unmap, or in an arena fill the old code with int3 */
int cm_code_free(struct cm_code *co)
{
	size_t len = co->len;
	int err;

	if (co->cs->map == CM_MAP_EACH) {
		unmap_area(&co->own);
		return 0;
	}
	err = begin_write(co, len);
	if (err)
		return err;
	memset(co->w, 0xcc, len);
	co->len = 0;
	co->pending = 0;
	return end_write(co, len);
}

/* write new code over the object; what is left of the old code becomes int3 */
int cm_code_install(struct cm_code *co, const __u8 *code, size_t len)
{
	size_t end = len > co->len ? len : co->len;
	int err;

	if (!len || len > co->cap)
		return -ENOSPC;
	err = begin_write(co, end);
	if (err)
		return err;
	memcpy(co->w, code, len);
	if (co->len > len)
		memset(co->w + len, 0xcc, co->len - len);
	co->len = len;
	err = end_write(co, end);
	new_revision(co);
	return err;
}

/* change @n bytes at @off of the current code */
int cm_code_patch(struct cm_code *co, size_t off, const __u8 *bytes, size_t n)
{
	int err;

	if (off + n > co->len)
		return -EINVAL;
	err = begin_write(co, co->len);
	if (err)
		return err;
	memcpy(co->w + off, bytes, n);
	err = end_write(co, co->len);
	new_revision(co);
	return err;
}

/*
 * Replace the aligned 8 bytes at @off with one atomic store while other
 * threads may run the code (modes that write in place only).
 */
int cm_code_store8(struct cm_code *co, size_t off, __u64 v)
{
	if (co->cs->mode == CM_WX || off + 8 > co->len || ((unsigned long)co->w + off) % 8)
		return -EINVAL;
	__atomic_store_n((__u64 *)(co->w + off), v, __ATOMIC_SEQ_CST);
	new_revision(co);
	return 0;
}

/* pending while a revision is being logged: writers wait for 0 */
#define LOGGING	(~0ULL)

/* log revision @rev as run if it is the one waiting for its first run */
void cm_code_ran(struct cm_code *co, __u64 rev)
{
	__u64 want = rev;

	if (!rev || rev == LOGGING ||
	    !__atomic_compare_exchange_n(&co->pending, &want, LOGGING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	revlog_add(co->cs->log, rev, co->x, co->len);
	__atomic_store_n(&co->pending, 0, __ATOMIC_RELEASE);
}

/* run the code, logging nothing */
__u64 cm_code_call(struct cm_code *co, const __u64 *args)
{
	ujit_fn fn = (ujit_fn)(void *)co->x;

	return fn(args[0], args[1], args[2], args[3], args[4]);
}

/* run the code; its revision has run if it had not yet */
__u64 cm_code_run(struct cm_code *co, const __u64 *args)
{
	__u64 r0 = cm_code_call(co, args);

	cm_code_ran(co, __atomic_load_n(&co->pending, __ATOMIC_ACQUIRE));
	return r0;
}

/* ---- the revision log ---- */

void revlog_init(struct revlog *log)
{
	memset(log, 0, sizeof(*log));
	pthread_mutex_init(&log->lock, NULL);
}

void revlog_free(struct revlog *log)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		free(log->v[i].bytes);
	free(log->v);
	pthread_mutex_destroy(&log->lock);
	log->v = NULL;
	log->n = 0;
}

void revlog_add(struct revlog *log, __u64 rev, const __u8 *x, size_t len)
{
	struct revlog_ent *e;

	pthread_mutex_lock(&log->lock);
	if (log->n == log->cap) {
		size_t cap = log->cap ? 2 * log->cap : 64;
		void *v = realloc(log->v, cap * sizeof(*log->v));

		if (!v) {
			log->nomem = 1;
			goto out;
		}
		log->v = v;
		log->cap = cap;
	}
	e = &log->v[log->n];
	e->bytes = malloc(len);
	if (!e->bytes) {
		log->nomem = 1;
		goto out;
	}
	memcpy(e->bytes, x, len);
	e->rev = rev;
	e->addr = (unsigned long)x;
	e->len = len;
	log->n++;
out:
	pthread_mutex_unlock(&log->lock);
}

static void print_pages(FILE *f, __u64 addr, __u32 len, size_t page)
{
	__u64 p;

	for (p = addr & ~(__u64)(page - 1); p < addr + len; p += page)
		fprintf(f, "%s0x%llx", p > addr ? "," : "", (unsigned long long)p);
}

static void print_hex(FILE *f, const __u8 *b, __u32 len)
{
	__u32 i;

	for (i = 0; i < len; i++)
		fprintf(f, "%02x", b[i]);
}

/* rev addr len crc32c pages bytes */
void revlog_write_line(FILE *f, const struct revlog_ent *e, size_t page)
{
	fprintf(f, "%llu 0x%llx %u 0x%08x ", (unsigned long long)e->rev,
		(unsigned long long)e->addr, e->len, flowjit_csum(e->bytes, e->len));
	print_pages(f, e->addr, e->len, page);
	fputc(' ', f);
	print_hex(f, e->bytes, e->len);
	fputc('\n', f);
}

static int cmp_rev(const void *a, const void *b)
{
	const struct revlog_ent *x = a, *y = b;

	return x->rev < y->rev ? -1 : x->rev > y->rev;
}

int revlog_write(struct revlog *log, const char *path, const char *header,
		 size_t page)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -errno;
	qsort(log->v, log->n, sizeof(*log->v), cmp_rev);
	fprintf(f, "# ebpf-jit revision log v1\n# %s\n", header);
	fprintf(f, "# %llu revisions written, %zu executed\n",
		(unsigned long long)log->last_rev, log->n);
	fprintf(f, "# rev addr len crc32c pages bytes\n");
	for (i = 0; i < log->n; i++)
		revlog_write_line(f, &log->v[i], page);
	return fclose(f) ? -errno : 0;
}

/* the first @max revisions that ran, readably */
void revlog_summary(struct revlog *log, size_t page, size_t max)
{
	size_t i;

	qsort(log->v, log->n, sizeof(*log->v), cmp_rev);
	printf("revisions: %llu written, %zu executed\n",
	       (unsigned long long)log->last_rev, log->n);
	for (i = 0; i < log->n && i < max; i++) {
		const struct revlog_ent *e = &log->v[i];

		printf("  rev %llu at 0x%llx len %u crc32c 0x%08x pages ",
		       (unsigned long long)e->rev, (unsigned long long)e->addr,
		       e->len, flowjit_csum(e->bytes, e->len));
		print_pages(stdout, e->addr, e->len, page);
		printf("\n    ");
		print_hex(stdout, e->bytes, e->len > 48 ? 48 : e->len);
		printf("%s\n", e->len > 48 ? "..." : "");
	}
	if (log->n > max)
		printf("  ... %zu more (see --log)\n", log->n - max);
}
