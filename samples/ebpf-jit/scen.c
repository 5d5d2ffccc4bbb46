// SPDX-License-Identifier: GPL-2.0
/*
 * The scenarios: each one compiles, writes and runs code in a fixed way,
 * checks every result against the interpreter, and prints what it did.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scen.h"

static const __u8 nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static int jit_compile(const struct bpf_insn *p, __u32 n, __u8 *buf, __u32 *len,
		       __u32 *offs)
{
	struct ujit_image img = { .insn_off = offs };
	char err[UJIT_ERRLEN] = "";
	int ret = ujit_compile(p, n, buf, CODE_MAX, &img, err);

	if (ret) {
		fprintf(stderr, "ebpf-jit: cannot compile: %s\n",
			err[0] ? err : strerror(-ret));
		return -1;
	}
	*len = img.len;
	return 0;
}

static int alloc(struct ctx *c, struct cm_code *co, size_t cap, size_t off, void *at)
{
	int err = cm_code_alloc(&c->cs, co, cap, off, at);

	if (err)
		fprintf(stderr, "ebpf-jit: cannot get code memory%s%s: %s%s\n",
			at ? " at " : "", at ? "the old address" : "", strerror(-err),
			err == -ENOMEM ? " (vm.max_map_count? try --map one)" : "");
	return err;
}

static int install(struct cm_code *co, const __u8 *buf, __u32 len)
{
	int err = cm_code_install(co, buf, len);

	if (err)
		fprintf(stderr, "ebpf-jit: cannot write code: %s\n", strerror(-err));
	return err;
}

/* compile @p and write it over @co */
static int load(struct cm_code *co, const struct bpf_insn *p, __u32 n, __u32 *offs)
{
	__u8 buf[CODE_MAX];
	__u32 len;

	if (jit_compile(p, n, buf, &len, offs))
		return -1;
	return install(co, buf, len);
}

static void expect(struct ctx *c, struct cm_code *co, const char *what,
		   __u64 got, __u64 want)
{
	printf("%s: rev %llu at 0x%lx len %zu", what, (unsigned long long)co->rev,
	       (unsigned long)co->x, co->len);
	if (co->w != co->x)
		printf(" (written at 0x%lx)", (unsigned long)co->w);
	printf(": r0 = %llu", (unsigned long long)got);
	if (got == want) {
		printf("\n");
		return;
	}
	printf(" MISMATCH, interpreter says %llu\n", (unsigned long long)want);
	c->failures++;
}

/* run @co and compare r0 with what the interpreter makes of @p */
static int run_check(struct ctx *c, struct cm_code *co, const struct bpf_insn *p,
		     __u32 n, const char *what)
{
	char err[UJIT_ERRLEN] = "";
	__u64 want, got;

	if (ujit_interp(p, n, c->o->args, &want, NULL, err)) {
		fprintf(stderr, "ebpf-jit: interpreter: %s\n", err);
		return -1;
	}
	got = cm_code_run(co, c->o->args);
	expect(c, co, what, got, want);
	return 0;
}

static int scen_compile_run(struct ctx *c)
{
	struct cm_code co;
	__u64 r0;

	if (alloc(c, &co, CODE_MAX, 0, NULL) ||
	    load(&co, c->o->insns, c->o->ninsns, NULL) ||
	    run_check(c, &co, c->o->insns, c->o->ninsns, c->o->prog_name))
		return -1;
	r0 = cm_code_run(&co, c->o->args);
	printf("result: r0 = %llu (0x%llx)\n", (unsigned long long)r0,
	       (unsigned long long)r0);
	return cm_code_free(&co);
}

/* write variant @k over @co, check it differs from @prev, run it */
static int rewrite_one(struct ctx *c, struct cm_code *co, __u32 k, __u8 *prev,
		       size_t *prev_len)
{
	struct bpf_insn p[32];
	__u32 n = ujit_prog_variant(k, p, 32);
	char what[32];

	if (load(co, p, n, NULL))
		return -1;
	if (*prev_len && (co->len == *prev_len || !memcmp(prev, co->x, co->len))) {
		printf("variant %u: same length or bytes as the last one\n", k);
		c->failures++;
	}
	memcpy(prev, co->x, co->len);
	*prev_len = co->len;
	snprintf(what, sizeof(what), "variant %u", k);
	return run_check(c, co, p, n, what);
}

static int scen_rewrite(struct ctx *c)
{
	__u8 prev[CODE_MAX];
	size_t prev_len = 0;
	struct cm_code co;
	__u32 k;

	if (alloc(c, &co, CODE_MAX, 0, NULL))
		return -1;
	for (k = 0; k <= c->o->count; k++)
		if (rewrite_one(c, &co, k, prev, &prev_len))
			return -1;
	printf("rewrite: %u revisions at 0x%lx\n", c->o->count + 1, (unsigned long)co.x);
	return cm_code_free(&co);
}

static void where_boundary(const struct cm_code *co, const __u32 *offs, __u32 n,
			   size_t off)
{
	__u32 i;

	for (i = 0; i < n && offs[i + 1] <= off; i++)
		;
	printf("span: page boundary 0x%lx at code offset %zu, %s insn %u (bytes %u..%u)\n",
	       (unsigned long)co->x + off, off, offs[i] == off ? "start of" : "inside",
	       i, offs[i], offs[i + 1] - 1);
}

static int scen_span(struct ctx *c)
{
	static const char *const names[] = { "mix", "call" };
	size_t off = c->o->offset, page = c->cs.page;
	__u32 offs[UJIT_MAX_INSNS + 1];
	struct cm_code co;
	int i;

	if (off < 1 || off >= page) {
		fprintf(stderr, "ebpf-jit: --offset must be 1..%zu\n", page - 1);
		return -1;
	}
	if (alloc(c, &co, CODE_MAX, page - off, NULL))
		return -1;
	for (i = 0; i < 2; i++) {
		const struct ujit_prog *p = ujit_prog_find(names[i]);

		if (load(&co, p->insns, p->n, offs))
			return -1;
		if (co.len <= off) {
			fprintf(stderr, "ebpf-jit: %s is %zu bytes, does not reach the next page\n",
				p->name, co.len);
			return -1;
		}
		where_boundary(&co, offs, p->n, off);
		if (run_check(c, &co, p->insns, p->n, p->name))
			return -1;
	}
	return cm_code_free(&co);
}

static int scen_free_reuse(struct ctx *c)
{
	struct bpf_insn p[32];
	struct cm_code co;
	__u8 *at = NULL;
	char what[48];
	__u32 k, n;

	for (k = 0; k <= c->o->count; k++) {
		if (alloc(c, &co, CODE_MAX, 0, at))
			return -1;
		n = ujit_prog_variant(k + 2, p, 32);
		snprintf(what, sizeof(what), "cycle %u (variant %u)", k, k + 2);
		if (load(&co, p, n, NULL) || run_check(c, &co, p, n, what))
			return -1;
		at = co.x;
		if (cm_code_free(&co))
			return -1;
		printf("  freed 0x%lx (%s)\n", (unsigned long)at,
		       c->cs.map == CM_MAP_EACH ? "munmap, then MAP_FIXED_NOREPLACE" :
		       "int3 fill, then reused in the arena");
	}
	return 0;
}

struct tshared {
	struct cm_code *co;
	pthread_barrier_t start, end;
	const struct opts *o;
	__u64 expect;
	int stop;
	unsigned long mismatches;
};

static void *worker(void *arg)
{
	struct tshared *t = arg;
	unsigned int r;
	__u64 got;

	for (;;) {
		pthread_barrier_wait(&t->start);
		if (t->stop)
			return NULL;
		for (r = 0; r < t->o->runs; r++) {
			got = cm_code_run(t->co, t->o->args);
			if (got != t->expect)
				__atomic_add_fetch(&t->mismatches, 1, __ATOMIC_RELAXED);
		}
		pthread_barrier_wait(&t->end);
	}
}

/* one phase: write variant k while the workers wait, then let them run it */
static int threads_phase(struct ctx *c, struct tshared *t, __u32 k)
{
	struct bpf_insn p[32];
	__u32 n = ujit_prog_variant(k, p, 32);
	unsigned long before = t->mismatches;
	char err[UJIT_ERRLEN] = "";

	if (ujit_interp(p, n, c->o->args, &t->expect, NULL, err) ||
	    load(t->co, p, n, NULL)) {
		fprintf(stderr, "ebpf-jit: variant %u: %s\n", k, err);
		return -1;
	}
	pthread_barrier_wait(&t->start);
	pthread_barrier_wait(&t->end);
	printf("phase %u: rev %llu at 0x%lx len %zu: %u threads x %u runs,",
	       k, (unsigned long long)t->co->rev, (unsigned long)t->co->x, t->co->len,
	       c->o->threads, c->o->runs);
	printf(" r0 = %llu, %lu mismatches\n", (unsigned long long)t->expect,
	       t->mismatches - before);
	return 0;
}

/*
 * --sync atomic: the static-key program; its 5-byte site lies in one
 * aligned 8-byte word, which the main thread replaces with a single
 * atomic store (jmp, nop, jmp, ...) while the threads keep running the
 * code. A run returns 1 (nop) or 2 (jmp), never anything else. A thread
 * logs revision R when it read R as current before its run and got R's
 * result; the main thread writes the next revision only after that.
 */
struct apatch {
	struct cm_code *co;
	const struct opts *o;
	__u64 base;		/* revision of expect[0] */
	__u64 *expect;		/* r0 of each revision */
	__u64 nexpect;
	int stop;
	unsigned long ones, twos, bad;
};

static void *atomic_worker(void *arg)
{
	struct apatch *t = arg;
	unsigned long ones = 0, twos = 0, bad = 0;
	__u64 rev, r0, i;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		rev = __atomic_load_n(&t->co->rev, __ATOMIC_ACQUIRE);
		r0 = cm_code_call(t->co, t->o->args);
		ones += r0 == 1;
		twos += r0 == 2;
		bad += r0 != 1 && r0 != 2;
		i = rev - t->base;
		if (i < t->nexpect && r0 == t->expect[i])
			cm_code_ran(t->co, rev);
	}
	__atomic_add_fetch(&t->ones, ones, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->twos, twos, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->bad, bad, __ATOMIC_RELAXED);
	return NULL;
}

/* wait up to 10 s for the threads to run the current revision */
static int wait_ran(struct cm_code *co)
{
	struct timespec ts = { 0, 100000 };
	int i;

	for (i = 0; i < 100000; i++) {
		if (!__atomic_load_n(&co->pending, __ATOMIC_ACQUIRE))
			return 0;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "ebpf-jit: revision %llu did not run within 10 s\n",
		(unsigned long long)co->rev);
	return -1;
}

static int atomic_patches(struct ctx *c, struct apatch *t, size_t site)
{
	static const __u8 jmp1[5] = { 0xe9, 0x01, 0x00, 0x00, 0x00 };
	size_t word = site & ~7UL;
	__u64 i, v;
	__u8 *b = (__u8 *)&v;

	for (i = 1; i < t->nexpect; i++) {
		if (wait_ran(t->co))
			return -1;
		memcpy(&v, t->co->x + word, 8);
		memcpy(b + site - word, i & 1 ? jmp1 : nop5, 5);
		t->expect[i] = i & 1 ? 2 : 1;
		if (cm_code_store8(t->co, word, v))
			return -1;
		printf("store %llu: word 0x%lx = %016llx: rev %llu\n",
		       (unsigned long long)i, (unsigned long)t->co->x + word,
		       (unsigned long long)__builtin_bswap64(v),
		       (unsigned long long)t->co->rev);
	}
	return wait_ran(t->co);
}

static int scen_threads_atomic(struct ctx *c, struct cm_code *co, pthread_t *tids)
{
	const struct ujit_prog *p = ujit_prog_find("static_key");
	struct apatch t = { .co = co, .o = c->o, .nexpect = 2 * c->o->count + 1 };
	__u32 offs[8], len, i;
	__u8 buf[CODE_MAX];
	int ret;

	if (c->cs.mode == CM_WX) {
		fprintf(stderr, "ebpf-jit: --sync atomic writes in place: not with --mode wx\n");
		return -1;
	}
	t.expect = calloc(t.nexpect, sizeof(*t.expect));
	if (!t.expect || jit_compile(p->insns, p->n, buf, &len, offs))
		return -1;
	memcpy(buf + offs[1], nop5, 5);
	if (install(co, buf, len))
		return -1;
	t.base = co->rev;
	t.expect[0] = 1;
	for (i = 0; i < c->o->threads; i++)
		if (pthread_create(&tids[i], NULL, atomic_worker, &t))
			exit(1);
	ret = atomic_patches(c, &t, offs[1]);
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < c->o->threads; i++)
		pthread_join(tids[i], NULL);
	printf("atomic: %u threads, %llu revisions, runs: %lu r0 = 1, %lu r0 = 2, %lu other\n",
	       c->o->threads, (unsigned long long)t.nexpect, t.ones, t.twos, t.bad);
	if (t.bad)
		c->failures++;
	free(t.expect);
	return ret;
}

static int scen_threads(struct ctx *c)
{
	unsigned int nt = c->o->threads, i;
	struct tshared t = { .o = c->o };
	struct cm_code co;
	pthread_t *tids;
	int ret = 0;
	__u32 k;

	if (alloc(c, &co, CODE_MAX, 0, NULL))
		return -1;
	t.co = &co;
	tids = calloc(nt, sizeof(*tids));
	if (!tids)
		return -1;
	if (c->o->sync_atomic) {
		ret = scen_threads_atomic(c, &co, tids);
		free(tids);
		return ret ? ret : cm_code_free(&co);
	}
	pthread_barrier_init(&t.start, NULL, nt + 1);
	pthread_barrier_init(&t.end, NULL, nt + 1);
	for (i = 0; i < nt; i++)
		if (pthread_create(&tids[i], NULL, worker, &t)) {
			fprintf(stderr, "ebpf-jit: cannot start thread %u\n", i);
			exit(1);
		}
	for (k = 0; !ret && k <= c->o->count; k++)
		ret = threads_phase(c, &t, k);
	t.stop = 1;
	pthread_barrier_wait(&t.start);
	for (i = 0; i < nt; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	if (t.mismatches)
		c->failures++;
	return ret ? ret : cm_code_free(&co);
}

static int scen_loop42(struct ctx *c)
{
	const struct ujit_prog *p = ujit_prog_find("loop42");
	__u32 offs[8], taken[8] = { 0 }, not_taken[8] = { 0 };
	struct ujit_stats st = { .taken = taken, .not_taken = not_taken };
	struct cm_code co;
	__u64 want;
	__u8 *jcc;

	if (alloc(c, &co, CODE_MAX, 0, NULL) || load(&co, p->insns, p->n, offs) ||
	    ujit_interp(p->insns, p->n, c->o->args, &want, &st, NULL))
		return -1;
	expect(c, &co, "loop42", cm_code_run(&co, c->o->args), 42);
	jcc = co.x + offs[3] - 6;
	printf("loop-exit branch: insn 2, jae rel32 at 0x%lx (%02x %02x): %u not taken, %u taken\n",
	       (unsigned long)jcc, jcc[0], jcc[1], not_taken[2], taken[2]);
	printf("back edge: insn 3, jmp rel32 at 0x%lx, taken 41 times\n",
	       (unsigned long)co.x + offs[3]);
	if (want != 42 || not_taken[2] != 41 || taken[2] != 1 ||
	    jcc[0] != 0x0f || jcc[1] != 0x83) {
		printf("loop42: not the expected 41 + 1 branch or encoding\n");
		c->failures++;
	}
	return cm_code_free(&co);
}

static int patch_run(struct ctx *c, struct cm_code *co, size_t site,
		     const __u8 *bytes, int on)
{
	if (cm_code_patch(co, site, bytes, 5)) {
		fprintf(stderr, "ebpf-jit: cannot patch the site\n");
		return -1;
	}
	printf("key %s: site 0x%lx = %02x %02x %02x %02x %02x\n", on ? "on " : "off",
	       (unsigned long)co->x + site, bytes[0], bytes[1], bytes[2], bytes[3],
	       bytes[4]);
	expect(c, co, on ? "  jmp taken" : "  nop", cm_code_run(co, c->o->args),
	       on ? 2 : 1);
	return 0;
}

static int scen_static_key(struct ctx *c)
{
	const struct ujit_prog *p = ujit_prog_find("static_key");
	__u8 buf[CODE_MAX], jmp[5];
	struct cm_code co;
	__u32 offs[8], len, k;
	size_t site;

	if (alloc(c, &co, CODE_MAX, 0, NULL) || jit_compile(p->insns, p->n, buf, &len, offs))
		return -1;
	site = offs[1];
	if (buf[site] != 0xe9 || offs[2] - offs[1] != 5) {
		fprintf(stderr, "ebpf-jit: the site is not a jmp rel32\n");
		return -1;
	}
	memcpy(jmp, buf + site, 5);
	memcpy(buf + site, nop5, 5);
	if (install(&co, buf, len))
		return -1;
	expect(c, &co, "key off (as compiled, nop)", cm_code_run(&co, c->o->args), 1);
	for (k = 0; k < c->o->count; k++)
		if (patch_run(c, &co, site, jmp, 1) || patch_run(c, &co, site, nop5, 0))
			return -1;
	return cm_code_free(&co);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* site i: r0 = (r1 + i) * 3 ^ i */
static int site_one(struct ctx *c, struct cm_code *co, __u32 i)
{
	const struct bpf_insn p[] = {
		UJ_ALU_X(MOV, 0, 1),
		UJ_ALU_K(ADD, 0, (__s32)i),
		UJ_ALU_K(MUL, 0, 3),
		UJ_ALU_K(XOR, 0, (__s32)i),
		UJ_EXIT(),
	};
	__u64 want = (c->o->args[0] + i) * 3 ^ i;
	unsigned int r;

	if (alloc(c, co, c->cs.page, 0, NULL) || load(co, p, 5, NULL))
		return -1;
	for (r = 0; r < c->o->runs; r++)
		if (cm_code_run(co, c->o->args) != want)
			c->failures++;
	return 0;
}

static int scen_sites(struct ctx *c)
{
	unsigned int n = c->o->nsites, i;
	struct cm_code *cos = calloc(n, sizeof(*cos));
	double t0, t;
	int ret = 0;

	if (!cos)
		return -1;
	t0 = now();
	for (i = 0; i < n && !ret; i++)
		ret = site_one(c, &cos[i], i);
	t = now() - t0;
	if (!ret)
		printf("sites: %u x %u runs, a page each (%s, map %s): %.3f s, %.2f us/site\n",
		       n, c->o->runs, cm_mode_names[c->cs.mode],
		       c->cs.map == CM_MAP_ONE ? "one" : "each", t, t * 1e6 / n);
	while (c->cs.map == CM_MAP_EACH && i--)
		cm_code_free(&cos[i]);
	free(cos);
	return ret;
}

static const struct scenario scenarios[] = {
	{ "compile-run", scen_compile_run, 1 },
	{ "rewrite", scen_rewrite, 1 },
	{ "span", scen_span, 2 },
	{ "free-reuse", scen_free_reuse, 1 },
	{ "threads", scen_threads, 1 },
	{ "loop42", scen_loop42, 1 },
	{ "static-key", scen_static_key, 1 },
	{ "sites", scen_sites, 0 },
};

const struct scenario *scen_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		if (!strcmp(scenarios[i].name, name))
			return &scenarios[i];
	return NULL;
}

void scen_list(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(scenarios); i++)
		printf("%s%s", i ? " " : "", scenarios[i].name);
	printf("\n");
}
