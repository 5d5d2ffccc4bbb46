// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded differential stress of user JIT tracking: a random sequence of
 * operations on executable memory runs twice, in two fresh processes
 * forked from one parent (the same address space layout), with the same
 * seed: once TRACKED (a flowjit event with inherit on the process, opened
 * by the parent, so the runner's address space holds nothing more than
 * the untracked one's) and once UNTRACKED. What each operation returns,
 * the errno it sets, the signal it gets (SIGSEGV, SIGBUS: caught with
 * sigsetjmp()/siglongjmp() and noted), the memory it reads back and what
 * the executed code returns must be the same in both runs. In the tracked
 * run, every revision of code that ran must have been snapshotted: an
 * image at that page's address, by the pid that ran it, with the bytes
 * that ran (compared by a 64-bit hash of the page).
 *
 * Operations: mmap (private anonymous RWX; private anonymous RW with code
 * written, then mprotect RX; a memfd mapped RW and RX, the dual mapping
 * of W^X JITs; a memfd mapped shared RWX), mprotect, write code, run
 * code, read memory, fork (the child runs code, or writes and runs it,
 * and exits), a thread that runs code, mremap (MREMAP_MAYMOVE), munmap,
 * madvise (MADV_DONTNEED, MADV_FREE, MADV_PAGEOUT, MADV_WIPEONFORK,
 * MADV_KEEPONFORK). Code is "mov eax, imm32; ret" (b8 imm32 c3), written
 * at 64-byte slots: code runs only where a read of its page finds that
 * pattern, or where the page cannot be read (then running faults too).
 * Writes with write() to a memfd bypass the page tables and are knowingly
 * not tracked: they are not used. A page MADV_FREE made lazily freed may
 * read as its old bytes or as zeros, whenever reclaim (MADV_PAGEOUT,
 * memory pressure) gets to it: until MADV_DONTNEED zeroes it or it is
 * unmapped, what is read or run there is not compared (it still runs,
 * and is checked against the images, where it holds code).
 *
 * The runner stops every STRESS_BATCH operations; the parent then drains
 * the ring buffers and checks the code run so far against the images.
 *
 * Options (a failure prints the ones that reproduce it):
 *	-s SEED	first seed (default 1)
 *	-r RUNS	seeds to run: SEED, SEED + 1, ... (default 10)
 *	-n OPS	operations per seed (default 1000)
 *	-v	print every operation of the tracked run and its result
 * The harness's options (-t TEST, -l, ...) may follow after "--".
 * FLOWJIT_STRESS_SECONDS=N in the environment: go on with further seeds
 * until N seconds have passed (at least RUNS seeds); the test's timeout
 * grows with it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define SB_DATA_PAGES	256	/* 1 MiB a CPU: a batch needs far less */
#include "../kselftest_harness.h"
#include "user_jit.h"

#define STRESS_REGIONS	6
#define STRESS_PAGES	4	/* a region's pages at mmap (and file size) */
#define STRESS_MAX	5	/* mremap up to this: past the file's end */
#define STRESS_SLOTS	(PAGE / 64)
#define STRESS_BATCH	16
#define STRESS_ACTS	3	/* actions of a fork child or thread */
/* pages whose bytes a batch may record as run */
#define STRESS_EXECS	(STRESS_BATCH * STRESS_ACTS + 8)
#define STRESS_TEXT	128
#define STRESS_RECENT	8	/* code written last, to run */

static unsigned long long opt_seed = 1;
static int opt_runs = 10, opt_ops = 1000, opt_seconds;
static bool opt_verbose;

/* ---- what a runner shares with the parent ---- */

struct op_log {
	char desc[STRESS_TEXT];		/* the operation */
	char res[STRESS_TEXT];		/* what it did: compared */
	int bad;			/* code ran other bytes than it read */
};

/* the page of code that ran, as the process that ran it read it before */
struct exec_rec {
	int32_t pid;
	uint32_t op;
	uint64_t addr;
	uint8_t bytes[PAGE];
};

struct run_shm {
	int cur;			/* operation under way */
	int nr_execs;			/* in this batch */
	int exec_overflow;
	int total_execs;
	struct exec_rec execs[STRESS_EXECS];
	struct op_log log[];		/* opt_ops + 1 (final read) */
};

/* ---- the runner's model of its memory ---- */

enum kind {
	K_ANON_RWX,		/* private anonymous RWX, rewritten in place */
	K_ANON_JIT,		/* private anonymous, RW to write, RX to run */
	K_MEMFD_DUAL,		/* memfd: RX view 0, RW view 1 */
	K_MEMFD_RWX,		/* memfd mapped shared RWX */
	NR_KINDS
};

static const char * const kind_name[NR_KINDS] = {
	"anon-rwx", "anon-rw-rx", "memfd-dual", "memfd-rwx",
};

struct view {
	uint8_t *addr;		/* NULL: not mapped */
	int pgoff;		/* page of the region at addr */
	int pages;
};

struct region {
	bool used;
	enum kind kind;
	int fd;
	struct view v[2];	/* 0: where code runs, 1: RW alias (dual) */
	struct {
		int page, slot;
	} recent[STRESS_RECENT];	/* where code was written last */
	int nr_written;
	unsigned int lazy;	/* region pages lazily freed (MADV_FREE) */
};

struct runner {
	struct run_shm *shm;
	struct region reg[STRESS_REGIONS];
	uint64_t rng;
	int op;
	int to_parent, from_parent;
};

/* an action of a run, a fork child or a thread: run code, maybe after
 * writing it
 */
struct act {
	int r, page, slot;	/* page of the region, slot in the page */
	int xview;		/* run through it (the other if not there) */
	int wview;		/* -1: run only; else write through it first */
	uint32_t val;
};

static uint64_t rnd(struct runner *ru)
{
	/* xorshift64* */
	ru->rng ^= ru->rng >> 12;
	ru->rng ^= ru->rng << 25;
	ru->rng ^= ru->rng >> 27;
	return ru->rng * 0x2545F4914F6CDD1DULL;
}

static int rndn(struct runner *ru, int n)
{
	return (int)((rnd(ru) >> 33) % n);
}

static uint64_t hash_page(const uint8_t *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int i;

	for (i = 0; i < (int)PAGE; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* what the log says of a page's bytes */
static unsigned int digest(const uint8_t *p)
{
	uint64_t h = hash_page(p);

	return (unsigned int)(h ^ (h >> 32));
}

static void addf(char *buf, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n >= STRESS_TEXT - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, STRESS_TEXT - n, fmt, ap);
	va_end(ap);
}

/* ---- faults: noted, not fatal ---- */

static __thread sigjmp_buf guard_jmp;
static __thread int guard_on;

static void on_fault(int sig)
{
	if (__atomic_load_n(&guard_on, __ATOMIC_RELAXED))
		siglongjmp(guard_jmp, sig);
	signal(sig, SIG_DFL);	/* a fault of the test itself: die of it */
}

static void catch_faults(void)
{
	struct sigaction sa = { .sa_handler = on_fault };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* the signal copying @len bytes from @src to @dst raised, or 0 */
static int guarded_copy(void *dst, const void *src, size_t len)
{
	int sig = sigsetjmp(guard_jmp, 1);

	if (!sig) {
		__atomic_store_n(&guard_on, 1, __ATOMIC_RELAXED);
		memcpy(dst, src, len);
	}
	__atomic_store_n(&guard_on, 0, __ATOMIC_RELAXED);
	return sig;
}

static int guarded_emit(uint8_t *p, uint32_t val)
{
	int sig = sigsetjmp(guard_jmp, 1);

	if (!sig) {
		__atomic_store_n(&guard_on, 1, __ATOMIC_RELAXED);
		emit_ret_imm(p, val);
	}
	__atomic_store_n(&guard_on, 0, __ATOMIC_RELAXED);
	return sig;
}

static int guarded_call(const uint8_t *fn, int *ret)
{
	int sig = sigsetjmp(guard_jmp, 1);

	if (!sig) {
		__atomic_store_n(&guard_on, 1, __ATOMIC_RELAXED);
		*ret = call(fn);
	}
	__atomic_store_n(&guard_on, 0, __ATOMIC_RELAXED);
	return sig;
}

static const char *sig_name(int sig)
{
	return sig == SIGSEGV ? "SEGV" : sig == SIGBUS ? "BUS" : "SIG?";
}

static const char *prot_name(int prot)
{
	static const char * const names[8] = {
		"---", "r--", "-w-", "rw-", "--x", "r-x", "-wx", "rwx",
	};

	return names[prot & 7];
}

/* ---- operations ---- */

static struct op_log *cur_log(struct runner *ru)
{
	return &ru->shm->log[ru->op];
}

#define DESC(ru, ...)	addf(cur_log(ru)->desc, __VA_ARGS__)
#define RES(ru, ...)	addf(cur_log(ru)->res, __VA_ARGS__)

static void res_errno(struct runner *ru, const char *what, long ret)
{
	if (ret < 0)
		RES(ru, "%s=-%s ", what, strerrorname_np(errno) ?: "?");
	else
		RES(ru, "%s=%ld ", what, ret);
}

/* the address of page @page of region @r in view @v, or NULL */
static uint8_t *page_at(struct region *r, int v, int page)
{
	struct view *w = &r->v[v];

	if (!w->addr || page < w->pgoff || page >= w->pgoff + w->pages)
		return NULL;
	return w->addr + (size_t)(page - w->pgoff) * PAGE;
}

/* Set (@on) or clear region @r's lazy bits of pages [@lo, @hi). */
static void set_lazy(struct region *r, int lo, int hi, bool on)
{
	for (; lo < hi && lo < 32; lo++) {
		if (on)
			r->lazy |= 1u << lo;
		else
			r->lazy &= ~(1u << lo);
	}
}

/* Is the page at @page lazily freed: its old bytes or zeros? */
static bool page_lazy(struct runner *ru, const uint8_t *page)
{
	int i, v, pg;

	for (i = 0; i < STRESS_REGIONS; i++) {
		struct region *r = &ru->reg[i];

		for (v = 0; r->used && r->lazy && v < 2; v++) {
			struct view *w = &r->v[v];

			if (!w->addr || page < w->addr ||
			    page >= w->addr + (size_t)w->pages * PAGE)
				continue;
			pg = w->pgoff + (int)((page - w->addr) / PAGE);
			return pg < 32 && (r->lazy & (1u << pg));
		}
	}
	return false;
}

static int pick_region(struct runner *ru)
{
	int used[STRESS_REGIONS], i, n = 0;

	for (i = 0; i < STRESS_REGIONS; i++)
		if (ru->reg[i].used)
			used[n++] = i;
	return n ? used[rndn(ru, n)] : -1;
}

/* a mapped view of @r, the code view mostly */
static int pick_view(struct runner *ru, struct region *r, int code_bias)
{
	bool can0 = r->v[0].addr, can1 = r->v[1].addr;

	if (can0 && can1)
		return rndn(ru, 100) < code_bias ? 0 : 1;
	return can0 ? 0 : 1;
}

/* a page of view @v of @r */
static int pick_page(struct runner *ru, struct region *r, int v)
{
	return r->v[v].pgoff + rndn(ru, r->v[v].pages);
}

static void record_exec(struct runner *ru, uint8_t *page, const uint8_t *buf)
{
	struct run_shm *shm = ru->shm;
	struct exec_rec *e;

	if (shm->nr_execs == STRESS_EXECS) {
		shm->exec_overflow = 1;
		return;
	}
	e = &shm->execs[shm->nr_execs++];
	e->pid = getpid();
	e->op = ru->op;
	e->addr = (uintptr_t)page;
	memcpy(e->bytes, buf, PAGE);
	shm->total_execs++;
}

/*
 * Run the code at @fn: read its page first (the bytes that run, and a
 * digest both runs compare), and run it only if it holds our pattern at
 * @fn or cannot be read (then running it faults as well).
 */
static void run_code(struct runner *ru, uint8_t *fn)
{
	uint8_t *page = (uint8_t *)((uintptr_t)fn & ~(PAGE - 1));
	static __thread uint8_t buf[PAGE];
	size_t off = fn - page;
	bool lazy = page_lazy(ru, page);
	int rsig, xsig, ret = 0;
	uint32_t imm;

	rsig = guarded_copy(buf, page, PAGE);
	if (lazy) {
		/* old bytes or zeros: run what is there, compare nothing */
		RES(ru, "rd=lazy ");
		if (rsig || buf[off] != 0xb8 || buf[off + 5] != 0xc3)
			return;
	} else if (rsig) {
		RES(ru, "rd=%s ", sig_name(rsig));
	} else {
		RES(ru, "rd=%08x ", digest(buf));
		if (buf[off] != 0xb8 || buf[off + 5] != 0xc3) {
			RES(ru, "nocode ");
			return;
		}
	}
	xsig = guarded_call(fn, &ret);
	if (xsig) {
		if (!lazy)
			RES(ru, "x=%s ", sig_name(xsig));
		return;
	}
	if (!lazy)
		RES(ru, "x=%d ", ret);
	if (rsig) {
		cur_log(ru)->bad = 2;	/* ran what it could not read */
		return;
	}
	memcpy(&imm, buf + off + 1, 4);
	if ((uint32_t)ret != imm)
		cur_log(ru)->bad = 1;	/* ran other bytes than it read */
	record_exec(ru, page, buf);
}

/* write code at @p, in an RW, RX region made writable for it if @jit */
static void note_code(struct region *r, int page, int slot)
{
	int i = r->nr_written++ % STRESS_RECENT;

	r->recent[i].page = page;
	r->recent[i].slot = slot;
}

static int write_code(struct runner *ru, uint8_t *p, uint32_t val, bool jit)
{
	uint8_t *page = (uint8_t *)((uintptr_t)p & ~(PAGE - 1));
	int sig;

	if (jit)
		res_errno(ru, "rw", mprotect(page, PAGE, PROT_READ | PROT_WRITE));
	sig = guarded_emit(p, val);
	RES(ru, "w=%s ", sig ? sig_name(sig) : "ok");
	if (jit)
		res_errno(ru, "rx", mprotect(page, PAGE, PROT_READ | PROT_EXEC));
	return sig;
}

/* plan an action: run code at a slot of a page, maybe written first */
static void plan_act(struct runner *ru, struct act *a, int write_pct)
{
	struct region *r;
	int v, n, x;

	a->r = pick_region(ru);
	r = &ru->reg[a->r];
	v = pick_view(ru, r, 90);
	a->xview = v;
	a->page = pick_page(ru, r, v);
	a->slot = rndn(ru, STRESS_SLOTS);
	n = r->nr_written < STRESS_RECENT ? r->nr_written : STRESS_RECENT;
	x = rndn(ru, 10);
	if (x < 6 && n) {	/* code written before, mostly */
		x = rndn(ru, n);
		a->page = r->recent[x].page;
		a->slot = r->recent[x].slot;
	} else if (x < 8) {
		a->slot = 0;	/* where mmap put code */
	}
	a->val = (uint32_t)rnd(ru);
	a->wview = -1;
	if (rndn(ru, 100) < write_pct)
		a->wview = pick_view(ru, r, r->kind == K_MEMFD_DUAL ? 20 : 100);
	DESC(ru, "r%d.%d p%d s%d", a->r, a->xview, a->page, a->slot);
	if (a->wview >= 0)
		DESC(ru, " w%d=%x", a->wview, a->val);
	DESC(ru, "; ");
}

static void do_act(struct runner *ru, const struct act *a)
{
	struct region *r = &ru->reg[a->r];
	uint8_t *p;

	if (a->wview >= 0) {
		p = page_at(r, a->wview, a->page);
		if (!p)
			RES(ru, "w=none ");
		else if (!write_code(ru, p + a->slot * 64, a->val,
				     r->kind == K_ANON_JIT))
			note_code(r, a->page, a->slot);
	}
	/* the other view if the page is not mapped in this one */
	p = page_at(r, a->xview, a->page) ?: page_at(r, !a->xview, a->page);
	if (!p)
		RES(ru, "x=none ");
	else
		run_code(ru, p + a->slot * 64);
	RES(ru, "| ");
}

static void op_mmap(struct runner *ru)
{
	int i, pages, pop, prot, pg;
	uint32_t vals[STRESS_PAGES];
	struct region *r = NULL;
	uint8_t *x, *w = NULL;
	size_t len;
	enum kind k;

	for (i = 0; i < STRESS_REGIONS && !r; i++)
		if (!ru->reg[i].used)
			r = &ru->reg[i];
	if (!r)
		return;		/* do_op() does not let it happen */
	k = rndn(ru, NR_KINDS);
	pages = 1 + rndn(ru, STRESS_PAGES);
	pop = rndn(ru, 4) ? 0 : MAP_POPULATE;
	for (pg = 0; pg < pages; pg++)
		vals[pg] = (uint32_t)rnd(ru);
	len = pages * PAGE;
	DESC(ru, "mmap r%d %s %dp%s", (int)(r - ru->reg), kind_name[k],
	     pages, pop ? " populate" : "");
	memset(r, 0, sizeof(*r));
	r->kind = k;
	r->fd = -1;
	if (k == K_ANON_RWX || k == K_ANON_JIT) {
		prot = PROT_READ | PROT_WRITE;
		if (k == K_ANON_RWX)
			prot |= PROT_EXEC;
		x = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | pop,
			 -1, 0);
	} else {
		r->fd = memfd_create("fj-stress", MFD_CLOEXEC);
		if (r->fd < 0 || ftruncate(r->fd, STRESS_PAGES * PAGE)) {
			res_errno(ru, "memfd", -1);
			if (r->fd >= 0)
				close(r->fd);
			return;
		}
		prot = PROT_READ | PROT_EXEC;
		if (k == K_MEMFD_RWX)
			prot |= PROT_WRITE;
		if (k == K_MEMFD_DUAL) {
			w = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_SHARED | pop, r->fd, 0);
			if (w == MAP_FAILED) {
				res_errno(ru, "mmap-rw", -1);
				close(r->fd);
				return;
			}
		}
		x = mmap(NULL, len, prot, MAP_SHARED | pop, r->fd, 0);
	}
	if (x == MAP_FAILED) {
		res_errno(ru, "mmap", -1);
		if (w)
			munmap(w, len);
		if (r->fd >= 0)
			close(r->fd);
		return;
	}
	RES(ru, "ok ");
	r->used = true;
	r->v[0] = (struct view){ .addr = x, .pages = pages };
	if (w)
		r->v[1] = (struct view){ .addr = w, .pages = pages };
	/* code in slot 0 of each page, as a JIT's first function */
	for (pg = 0; pg < pages; pg++) {
		int sig = guarded_emit((w ?: x) + pg * PAGE, vals[pg]);

		if (sig)
			RES(ru, "w%d=%s ", pg, sig_name(sig));
	}
	if (k == K_ANON_JIT)
		res_errno(ru, "rx", mprotect(x, len, PROT_READ | PROT_EXEC));
}

static void op_mprotect(struct runner *ru)
{
	static const int prots[] = {
		PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE,
		PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	int ri = pick_region(ru), v, first, n, prot;
	struct region *r = &ru->reg[ri];
	struct view *w;

	v = pick_view(ru, r, 60);
	w = &r->v[v];
	first = rndn(ru, w->pages);
	n = 1 + rndn(ru, w->pages - first);
	prot = prots[rndn(ru, ARRAY_SIZE(prots))];
	DESC(ru, "mprotect r%d.%d p%d+%d %s", ri, v, w->pgoff + first, n,
	     prot_name(prot));
	res_errno(ru, "ret", mprotect(w->addr + first * PAGE, n * PAGE, prot));
}

static void op_write(struct runner *ru)
{
	int ri = pick_region(ru), v, page, slot;
	struct region *r = &ru->reg[ri];
	uint32_t val;
	bool jit;

	v = pick_view(ru, r, r->kind == K_MEMFD_DUAL ? 20 : 100);
	page = pick_page(ru, r, v);
	slot = rndn(ru, STRESS_SLOTS);
	val = (uint32_t)rnd(ru);
	jit = r->kind == K_ANON_JIT && rndn(ru, 10) < 7;
	DESC(ru, "write r%d.%d p%d s%d =%x%s", ri, v, page, slot, val,
	     jit ? " jit" : "");
	if (!write_code(ru, page_at(r, v, page) + slot * 64, val, jit))
		note_code(r, page, slot);
}

static void op_exec(struct runner *ru)
{
	struct act a;

	DESC(ru, "exec ");
	plan_act(ru, &a, 0);
	do_act(ru, &a);
}

static void op_read(struct runner *ru)
{
	int ri = pick_region(ru), v, page, sig;
	struct region *r = &ru->reg[ri];
	uint8_t buf[PAGE];

	v = pick_view(ru, r, 50);
	page = pick_page(ru, r, v);
	DESC(ru, "read r%d.%d p%d", ri, v, page);
	sig = guarded_copy(buf, page_at(r, v, page), PAGE);
	if (page_lazy(ru, page_at(r, v, page)))
		RES(ru, "rd=lazy");
	else if (sig)
		RES(ru, "rd=%s", sig_name(sig));
	else
		RES(ru, "rd=%08x", digest(buf));
}

static void plan_acts(struct runner *ru, struct act *acts, int *n)
{
	int i;

	*n = 1 + rndn(ru, STRESS_ACTS);
	for (i = 0; i < *n; i++)
		plan_act(ru, &acts[i], 40);
}

static void op_fork(struct runner *ru)
{
	struct act acts[STRESS_ACTS];
	int i, n, status;
	pid_t pid;

	DESC(ru, "fork: ");
	plan_acts(ru, acts, &n);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < n; i++)
			do_act(ru, &acts[i]);
		_exit(0);
	}
	if (pid < 0) {
		res_errno(ru, "fork", -1);
		return;
	}
	if (waitpid(pid, &status, 0) != pid)
		RES(ru, "waitpid=-%s", strerrorname_np(errno));
	else if (WIFEXITED(status))
		RES(ru, "exit=%d", WEXITSTATUS(status));
	else
		RES(ru, "child died of signal %d", WTERMSIG(status));
}

struct thread_arg {
	struct runner *ru;
	struct act acts[STRESS_ACTS];
	int n;
};

static void *thread_fn(void *arg)
{
	struct thread_arg *t = arg;
	int i;

	for (i = 0; i < t->n; i++)
		do_act(t->ru, &t->acts[i]);
	return NULL;
}

static void op_thread(struct runner *ru)
{
	struct thread_arg t = { .ru = ru };
	pthread_t th;
	int err;

	DESC(ru, "thread: ");
	plan_acts(ru, t.acts, &t.n);
	err = pthread_create(&th, NULL, thread_fn, &t);
	if (err) {
		RES(ru, "pthread_create=-%s", strerrorname_np(err));
		return;
	}
	pthread_join(th, NULL);
}

static void drop_view(struct region *r, int v)
{
	r->v[v].addr = NULL;
	if (!r->v[0].addr && !r->v[1].addr) {
		if (r->fd >= 0)
			close(r->fd);
		r->used = false;
	}
}

static void op_mremap(struct runner *ru)
{
	int ri = pick_region(ru), v, pages;
	struct region *r = &ru->reg[ri];
	struct view *w;
	uint8_t *p;

	v = pick_view(ru, r, 70);
	w = &r->v[v];
	pages = 1 + rndn(ru, STRESS_MAX);
	DESC(ru, "mremap r%d.%d %dp->%dp", ri, v, w->pages, pages);
	p = mremap(w->addr, w->pages * PAGE, pages * PAGE, MREMAP_MAYMOVE);
	if (p == MAP_FAILED) {
		res_errno(ru, "ret", -1);
		return;
	}
	RES(ru, "ok %s", p == w->addr ? "in place" : "moved");
	/* pages past the old end, or cut off, are new zero pages */
	set_lazy(r, w->pgoff + (pages < w->pages ? pages : w->pages), 32, false);
	w->addr = p;
	w->pages = pages;
}

static void op_munmap(struct runner *ru)
{
	int ri = pick_region(ru), v, how, k = 0, ret;
	struct region *r = &ru->reg[ri];
	struct view *w;

	v = pick_view(ru, r, 60);
	w = &r->v[v];
	how = w->pages > 1 ? rndn(ru, 3) : 0;
	if (how)
		k = 1 + rndn(ru, w->pages - 1);
	if (how == 0) {
		DESC(ru, "munmap r%d.%d all %dp", ri, v, w->pages);
		ret = munmap(w->addr, w->pages * PAGE);
	} else if (how == 1) {
		DESC(ru, "munmap r%d.%d first %dp of %d", ri, v, k, w->pages);
		ret = munmap(w->addr, k * PAGE);
	} else {
		DESC(ru, "munmap r%d.%d last %dp of %d", ri, v, k, w->pages);
		ret = munmap(w->addr + (w->pages - k) * PAGE, k * PAGE);
	}
	res_errno(ru, "ret", ret);
	if (ret)
		return;
	if (how == 0) {
		drop_view(r, v);
	} else if (how == 1) {
		w->addr += k * PAGE;
		w->pgoff += k;
		w->pages -= k;
	} else {
		w->pages -= k;
		set_lazy(r, w->pgoff + w->pages, 32, false);
	}
}

static void op_madvise(struct runner *ru)
{
	static const struct {
		int advice;
		const char *name;
	} advs[] = {
		{ MADV_DONTNEED, "DONTNEED" },
		{ MADV_FREE, "FREE" },
		{ MADV_PAGEOUT, "PAGEOUT" },
		{ MADV_WIPEONFORK, "WIPEONFORK" },
		{ MADV_KEEPONFORK, "KEEPONFORK" },
	};
	int ri = pick_region(ru), v, first, n, a, ret;
	struct region *r = &ru->reg[ri];
	struct view *w;

	v = pick_view(ru, r, 60);
	w = &r->v[v];
	first = rndn(ru, w->pages);
	n = 1 + rndn(ru, w->pages - first);
	a = rndn(ru, ARRAY_SIZE(advs));
	DESC(ru, "madvise r%d.%d p%d+%d %s", ri, v, w->pgoff + first, n,
	     advs[a].name);
	ret = madvise(w->addr + first * PAGE, n * PAGE, advs[a].advice);
	res_errno(ru, "ret", ret);
	if (ret || (r->kind != K_ANON_RWX && r->kind != K_ANON_JIT))
		return;
	/* private anonymous: lazily freed, or zeroed */
	if (advs[a].advice == MADV_FREE)
		set_lazy(r, w->pgoff + first, w->pgoff + first + n, true);
	else if (advs[a].advice == MADV_DONTNEED)
		set_lazy(r, w->pgoff + first, w->pgoff + first + n, false);
}

/* the last operation: read back every page of every view */
static void op_final(struct runner *ru)
{
	uint64_t h = 0;
	uint8_t buf[PAGE];
	int ri, v, pg, n = 0;

	DESC(ru, "read back everything");
	for (ri = 0; ri < STRESS_REGIONS; ri++) {
		struct region *r = &ru->reg[ri];

		for (v = 0; r->used && v < 2; v++) {
			for (pg = 0; r->v[v].addr && pg < r->v[v].pages; pg++) {
				uint8_t *p = r->v[v].addr + pg * PAGE;
				int sig = guarded_copy(buf, p, PAGE);

				if (page_lazy(ru, p))
					sig = -1;	/* old bytes or zeros */
				h = h * 31 + (sig ? sig : hash_page(buf));
				n++;
			}
		}
	}
	RES(ru, "%d pages %016llx", n, (unsigned long long)h);
}

/* percentages of the operations */
static const struct {
	void (*fn)(struct runner *ru);
	int weight;
} ops[] = {
	{ op_mmap, 8 }, { op_mprotect, 10 }, { op_write, 18 },
	{ op_exec, 24 }, { op_read, 5 }, { op_fork, 6 }, { op_thread, 5 },
	{ op_mremap, 7 }, { op_munmap, 6 }, { op_madvise, 11 },
};

static void do_op(struct runner *ru)
{
	int i, nr = 0, x;

	for (i = 0; i < STRESS_REGIONS; i++)
		nr += ru->reg[i].used;
	if (!nr) {
		op_mmap(ru);
		return;
	}
	x = rndn(ru, 100);
	for (i = 0; i < (int)ARRAY_SIZE(ops); i++) {
		if (x < ops[i].weight)
			break;
		x -= ops[i].weight;
	}
	if (ops[i].fn == op_mmap && nr == STRESS_REGIONS)
		op_munmap(ru);
	else
		ops[i].fn(ru);
}

/* tell the parent a batch is done, wait for it to have checked it */
static void runner_sync(struct runner *ru)
{
	char c = 'b';

	if (write(ru->to_parent, &c, 1) != 1 || read(ru->from_parent, &c, 1) != 1)
		_exit(3);
}

static void runner(struct run_shm *shm, unsigned long long seed,
		   int to_parent, int from_parent)
{
	struct runner ru = {
		.shm = shm, .to_parent = to_parent, .from_parent = from_parent,
	};
	char c;

	/* never 0 for xorshift */
	ru.rng = seed * 0x9E3779B97F4A7C15ULL + 0x1234567;
	catch_faults();
	if (read(from_parent, &c, 1) != 1)	/* the event is open */
		_exit(2);
	for (ru.op = 0; ru.op < opt_ops; ru.op++) {
		shm->cur = ru.op;
		do_op(&ru);
		if ((ru.op + 1) % STRESS_BATCH == 0)
			runner_sync(&ru);
	}
	shm->cur = ru.op;
	op_final(&ru);
	runner_sync(&ru);
	_exit(0);
}

/* ---- the parent: what the tracked run snapshotted ---- */

struct seen_key {
	uint64_t addr, hash;
	uint32_t pid, used;
};

struct seen_set {
	struct seen_key *k;
	size_t cap, nr;
};

static size_t seen_slot(const struct seen_set *s, uint32_t pid,
			uint64_t addr, uint64_t hash)
{
	uint64_t h = (hash ^ (addr * 0x9E3779B97F4A7C15ULL)) + pid;

	return (h ^ (h >> 29)) & (s->cap - 1);
}

static struct seen_key *seen_find(struct seen_set *s, uint32_t pid,
				  uint64_t addr, uint64_t hash)
{
	size_t i = seen_slot(s, pid, addr, hash);

	while (s->k[i].used) {
		if (s->k[i].pid == pid && s->k[i].addr == addr &&
		    s->k[i].hash == hash)
			break;
		i = (i + 1) & (s->cap - 1);
	}
	return &s->k[i];
}

static void seen_add(struct seen_set *s, uint32_t pid, uint64_t addr,
		     uint64_t hash)
{
	struct seen_key *k;

	if (2 * (s->nr + 1) > s->cap) {
		struct seen_set bigger = { .cap = s->cap ? 2 * s->cap : 1024 };
		size_t i;

		bigger.k = calloc(bigger.cap, sizeof(*bigger.k));
		if (!bigger.k)
			abort();
		for (i = 0; i < s->cap; i++)
			if (s->k[i].used)
				*seen_find(&bigger, s->k[i].pid, s->k[i].addr,
					   s->k[i].hash) = s->k[i];
		bigger.nr = s->nr;
		free(s->k);
		*s = bigger;
	}
	k = seen_find(s, pid, addr, hash);
	if (k->used)
		return;
	*k = (struct seen_key){ .addr = addr, .hash = hash, .pid = pid,
				.used = 1 };
	s->nr++;
}

struct check {
	struct sb *sb;			/* NULL: untracked */
	struct fj_set *set;
	struct seen_set seen;
	int images, bad_images, execs, missing;
	int first_missing_op;
	pid_t first_missing_pid;
	uint64_t first_missing_addr;
};

/* the batch just done: its images, then whether each code run has one */
static void check_batch(struct check *c, struct run_shm *shm)
{
	int i;

	if (c->sb) {
		fj_collect(c->sb, c->set);
		for (i = 0; i < c->set->nr; i++) {
			struct fj_obj *o = &c->set->obj[i];

			if (!fj_user_image(o, 0))
				continue;
			c->images++;
			if (!fj_complete(o) || o->rec.len != PAGE) {
				c->bad_images++;
				continue;
			}
			seen_add(&c->seen, o->rec.pid, o->rec.addr,
				 hash_page(o->bytes));
		}
		c->bad_images += c->set->bad_records + c->set->bad_version;
		fj_reset(c->set);
		for (i = 0; i < shm->nr_execs; i++) {
			struct exec_rec *e = &shm->execs[i];

			c->execs++;
			if (c->seen.nr && seen_find(&c->seen, e->pid, e->addr,
						    hash_page(e->bytes))->used)
				continue;
			if (!c->missing++) {
				c->first_missing_op = e->op;
				c->first_missing_pid = e->pid;
				c->first_missing_addr = e->addr;
			}
		}
	}
	shm->nr_execs = 0;
}

/* let runner @pid go and check its batches; its exit status or -1 */
static int drive(pid_t pid, int to_child, int from_child,
		 struct run_shm *shm, struct check *c)
{
	char ch = 'g';
	int status;

	if (write(to_child, &ch, 1) != 1)
		return -1;
	while (read(from_child, &ch, 1) == 1) {
		check_batch(c, shm);
		if (write(to_child, &ch, 1) != 1)
			break;
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pid_t start_runner(struct run_shm *shm, unsigned long long seed,
			  int *to_child, int *from_child)
{
	int down[2], up[2];
	pid_t pid;

	if (pipe(down) || pipe(up))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		/* the same descriptors in both runners */
		if (dup2(up[1], 100) < 0 || dup2(down[0], 101) < 0)
			_exit(4);
		close_range(3, 99, 0);
		close_range(102, ~0U, 0);
		runner(shm, seed, 100, 101);
	}
	close(down[0]);
	close(up[1]);
	*to_child = down[1];
	*from_child = up[0];
	return pid;
}

static void print_ops(struct run_shm *shm, unsigned long long seed, int from,
		      int to)
{
	int i;

	for (i = from < 0 ? 0 : from; i <= to; i++)
		printf("# %llu.%d %s -> %s\n", seed, i, shm->log[i].desc,
		       shm->log[i].res);
}

/*
 * One seed: both runs, then the comparison. Returns true if all held;
 * prints what did not, with the seed and the operation.
 */
static bool run_seed(unsigned long long seed, struct fj_set *set)
{
	size_t size = sizeof(struct run_shm) +
		      (opt_ops + 1) * sizeof(struct op_log);
	struct run_shm *shm[2];
	struct check c[2] = { { .set = set }, { .set = set } };
	int to[2], from[2], st[2], i, bad = -1;
	double t0, t1, t2;
	struct perf_event_attr attr;
	pid_t pid[2];
	bool ok = true;
	struct sb sb;
	int err;

	size = (size + PAGE - 1) & ~(PAGE - 1);
	for (i = 0; i < 2; i++) {
		shm[i] = mmap(NULL, size, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shm[i] == MAP_FAILED) {
			printf("# seed %llu: mmap: %s\n", seed, strerror(errno));
			return false;
		}
	}
	/* both forked from the same state: the same address space layout */
	pid[0] = start_runner(shm[0], seed, &to[0], &from[0]);
	pid[1] = start_runner(shm[1], seed, &to[1], &from[1]);
	if (pid[0] < 0 || pid[1] < 0) {
		printf("# seed %llu: fork: %s\n", seed, strerror(errno));
		return false;
	}
	user_attr(&attr);
	attr.inherit = 1;	/* its forks and threads too */
	err = sb_open_pid(&sb, &attr, pid[0]);
	if (err) {
		printf("# seed %llu: flowjit event on the runner: %s\n", seed,
		       strerror(-err));
		kill(pid[0], SIGKILL);
		kill(pid[1], SIGKILL);
		waitpid(pid[0], NULL, 0);
		waitpid(pid[1], NULL, 0);
		return false;
	}
	c[0].sb = &sb;
	t0 = now();
	st[0] = drive(pid[0], to[0], from[0], shm[0], &c[0]);
	t1 = now();
	st[1] = drive(pid[1], to[1], from[1], shm[1], &c[1]);
	t2 = now();
	for (i = 0; i < 2; i++) {
		close(to[i]);
		close(from[i]);
	}

	printf("# seed %llu: %d ops, %d runs of code checked, %d images, ",
	       seed, opt_ops, c[0].execs, c[0].images);
	printf("%llu lost, tracked %.1f s, untracked %.1f s\n",
	       (unsigned long long)fj_lost(&sb), t1 - t0, t2 - t1);
	if (opt_verbose)
		print_ops(shm[0], seed, 0, opt_ops);
	for (i = 0; i < 2; i++) {
		if (st[i] == 0)
			continue;
		printf("# seed %llu: the %s runner ended with %d at op %d: %s\n",
		       seed, i ? "untracked" : "tracked", st[i], shm[i]->cur,
		       shm[i]->log[shm[i]->cur].desc);
		ok = false;
	}
	for (i = 0; i <= opt_ops && bad < 0; i++) {
		if (strcmp(shm[0]->log[i].desc, shm[1]->log[i].desc) ||
		    strcmp(shm[0]->log[i].res, shm[1]->log[i].res))
			bad = i;
	}
	if (bad >= 0) {
		printf("# seed %llu op %d: tracked and untracked runs differ\n",
		       seed, bad);
		printf("#   tracked:   %s -> %s\n", shm[0]->log[bad].desc,
		       shm[0]->log[bad].res);
		printf("#   untracked: %s -> %s\n", shm[1]->log[bad].desc,
		       shm[1]->log[bad].res);
		ok = false;
	}
	for (i = 0; i < opt_ops && bad < 0; i++) {
		if (!shm[0]->log[i].bad && !shm[1]->log[i].bad)
			continue;
		printf("# seed %llu op %d: code ran other bytes than read ",
		       seed, i);
		printf("(%d/%d): %s -> %s\n", shm[0]->log[i].bad,
		       shm[1]->log[i].bad, shm[0]->log[i].desc,
		       shm[0]->log[i].res);
		bad = i;
		ok = false;
	}
	if (c[0].missing) {
		printf("# seed %llu op %d: %d of %d runs of code have no image",
		       seed, c[0].first_missing_op, c[0].missing, c[0].execs);
		printf("; the first: pid %d, page %#llx%s\n",
		       c[0].first_missing_pid,
		       (unsigned long long)c[0].first_missing_addr,
		       fj_lost(&sb) ? " (records were lost)" : "");
		if (bad < 0 || c[0].first_missing_op < bad)
			bad = c[0].first_missing_op;
		ok = false;
	}
	if (fj_lost(&sb) || c[0].bad_images || shm[0]->exec_overflow) {
		printf("# seed %llu: %llu records lost, %d bad images, exec log overflow %d\n",
		       seed, (unsigned long long)fj_lost(&sb), c[0].bad_images,
		       shm[0]->exec_overflow);
		ok = false;
	}
	if (!ok && bad >= 0) {
		if (!opt_verbose)
			print_ops(shm[0], seed, bad - 40, bad);
		printf("# reproduce: user_jit_stress -s %llu -r 1 -n %d -v\n",
		       seed, bad + 1);
	}
	sb_close(&sb);
	free(c[0].seen.k);
	munmap(shm[0], size);
	munmap(shm[1], size);
	return ok;
}

FIXTURE(stress) {
	struct fj_set *set;
};

FIXTURE_SETUP(stress)
{
	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
}

FIXTURE_TEARDOWN(stress)
{
	free(self->set);
}

/* the timeout is set in main() from the options */
TEST_F(stress, random_ops_tracked_equal_untracked_and_every_run_revision_recorded)
{
	unsigned long long seed = opt_seed;
	double start = now();
	int runs = 0, failed = 0;

	while (runs < opt_runs ||
	       (opt_seconds && now() - start < opt_seconds)) {
		if (!run_seed(seed, self->set))
			failed++;
		runs++;
		seed++;
	}
	printf("# %d seeds from %llu, %d ops each: %d failed, %.1f s\n", runs,
	       opt_seed, opt_ops, failed, now() - start);
	EXPECT_EQ(0, failed);
}

/*
 * Reduced from the random runs (seed 28 and others: code run through the
 * RX view of a memfd had no image): a write-protected PTE of the RW alias
 * becomes writable again without a write fault, and the write that
 * follows does not re-arm the RX alias. @remake gives the RW alias its
 * write access back after the RX alias ran the first revision.
 */
static void alias_write_after(struct __test_metadata *_metadata,
			      int wprot, void (*remake)(uint8_t **w))
{
	struct fj_set *set = calloc(1, sizeof(*set));
	bool found = false;
	uint8_t *w, *x;
	struct sb sb;
	int fd, i;

	ASSERT_NE(NULL, set);
	ASSERT_EQ(0, open_self(&sb));
	fd = memfd_create("fj-alias", MFD_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, PAGE));
	w = mmap(NULL, PAGE, wprot, MAP_SHARED, fd, 0);
	x = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, w);
	ASSERT_NE(MAP_FAILED, x);
	emit_ret_imm(w, 1);
	ASSERT_EQ(1, call(x));		/* snapshot; @w write-protected */
	remake(&w);
	ASSERT_NE(MAP_FAILED, w);
	emit_ret_imm(w, 2);
	ASSERT_EQ(2, call(x));
	fj_collect(&sb, set);
	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		found |= fj_user_image(o, getpid()) &&
			 o->rec.addr == (uintptr_t)x && fj_complete(o) &&
			 o->bytes[0] == 0xb8 && o->bytes[1] == 2;
	}
	EXPECT_EQ(0, fj_lost(&sb));
	EXPECT_TRUE(found) TH_LOG("the second revision ran without an image");
	munmap(w, PAGE);
	munmap(x, PAGE);
	close(fd);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

static void reprotect_rw(uint8_t **w)
{
	if (mprotect(*w, PAGE, PROT_READ) ||
	    mprotect(*w, PAGE, PROT_READ | PROT_WRITE))
		*w = MAP_FAILED;
}

static void move_away(uint8_t **w)
{
	uint8_t *dest = mmap(NULL, PAGE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (dest == MAP_FAILED)
		*w = MAP_FAILED;
	else
		*w = mremap(*w, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
			    dest);
}

/* mprotect(PROT_READ), then PROT_READ | PROT_WRITE, of the RW alias */
TEST(memfd_rw_alias_reprotected_writable_then_written_is_captured)
{
	alias_write_after(_metadata, PROT_READ | PROT_WRITE, reprotect_rw);
}

/* mremap() of an RWX alias: flowjit re-applies its protection there */
TEST(memfd_rwx_alias_moved_then_written_is_captured)
{
	alias_write_after(_metadata, PROT_READ | PROT_WRITE | PROT_EXEC,
			  move_away);
}

int main(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	const char *env;
	int o;

	while ((o = getopt(argc, argv, "s:r:n:v")) != -1) {
		switch (o) {
		case 's':
			opt_seed = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			opt_runs = atoi(optarg);
			break;
		case 'n':
			opt_ops = atoi(optarg);
			break;
		case 'v':
			opt_verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-r RUNS] [-n OPS] [-v]\n",
				argv[0]);
			return KSFT_FAIL;
		}
	}
	if (opt_ops < 1)
		opt_ops = 1;
	/* the test child ends with _exit(): nothing may wait in a buffer */
	setvbuf(stdout, NULL, _IOLBF, 0);
	env = getenv("FLOWJIT_STRESS_SECONDS");
	if (env)
		opt_seconds = atoi(env);
	/* the harness kills a test after 30 s by default: scale it */
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t && !strcmp(f->name, "stress"); t = t->next)
			t->timeout = 300 + 2 * opt_seconds +
				     opt_runs * opt_ops / 10;
	/*
	 * The harness's own options follow ours; the 6.12 harness parses
	 * argv from the start again and stops at ours (it then ran nothing
	 * and passed).
	 */
	argv[optind - 1] = argv[0];
	argc -= optind - 1;
	argv += optind - 1;
	optind = 1;
	return test_harness_run(argc, argv);
}
