// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_jitmap: perf map and jitdump parsers, the stale rules
 * and the names handed to the printers.
 */
#include "pr_jitmap.h"
#include "pr_store.h"
#include "pr_test.h"

#include <stdarg.h>
#include <sys/stat.h>

static const char *pmap(const struct pr_jitmap *m, uint64_t ip)
{
	int stale;
	const struct pr_jitsym *s = pr_jitmap_map_at(m, NULL, 0, NULL, ip,
						     &stale);

	return s ? s->name : NULL;
}

static struct prt_result perfmap_wellformed(void)
{
	static const char text[] = "1000 20 foo\n"
				   "0x2000 0x10 bar: baz (with spaces)\r\n"
				   "\n"
				   "7f00000000 8 LuaJIT::trace#3\n";
	struct pr_jitmap *m = pr_jitmap_perfmap(text, sizeof(text) - 1, 42);

	prt_ptr(m);
	prt_int_eq(m->nsym, 3);
	prt_int_eq(m->st.malformed, 0);
	prt_int_eq(m->st.truncated, 0);
	prt_str_eq(pmap(m, 0x1000), "foo");
	prt_str_eq(pmap(m, 0x101f), "foo");
	prt_null(pmap(m, 0x1020));
	prt_null(pmap(m, 0xfff));
	prt_str_eq(pmap(m, 0x2008), "bar: baz (with spaces)");
	prt_str_eq(pmap(m, 0x7f00000007), "LuaJIT::trace#3");
	prt_int_eq(m->sym[0].pid, 42);
	prt_int_eq(pr_jitmap_warn(m, NULL), 0);
	pr_jitmap_free(m);
	return prt_passed();
}

static struct prt_result perfmap_malformed(void)
{
	static const char text[] = "zzz 10 a\n"	/* bad start */
				   "1000\n"		/* no size */
				   "1000 10\n"		/* no name */
				   "1000 0 empty\n"	/* empty range */
				   "1000 10 ok\n"
				   "1000 1g x\n"	/* bad size */
				   "11111111111111111 10 big\n" /* > 64 bits */
				   "2000 10 nul\0here\n"
				   "3000 10 tail";	/* no newline */
	struct pr_jitmap *m = pr_jitmap_perfmap(text, sizeof(text) - 1, 1);
	char out[512] = "";
	FILE *f = fmemopen(out, sizeof(out), "w");

	prt_ptr(m);
	prt_int_eq(m->nsym, 1);
	prt_int_eq(m->st.malformed, 7);
	prt_int_eq(m->st.truncated, 1);
	prt_str_eq(pmap(m, 0x1000), "ok");
	prt_null(pmap(m, 0x3000));
	prt_int_eq(pr_jitmap_warn(m, f), 1);
	fclose(f);
	prt_check(strstr(out, "1 entries kept; dropped 7 malformed, "
			 "1 truncated") != NULL);
	pr_jitmap_free(m);
	prt_ptr(m = pr_jitmap_perfmap(NULL, 0, 1));
	prt_int_eq(m->nsym, 0);
	prt_null(pmap(m, 0));
	pr_jitmap_free(m);
	pr_jitmap_free(NULL);
	return prt_passed();
}

static struct prt_result perfmap_huge(void)
{
	size_t n = 200000, i, len = 0, cap = n * 32 + 4096;
	char *text = malloc(cap), *longname = malloc(5000);
	struct pr_jitmap *m;

	prt_ptr(text);
	prt_ptr(longname);
	memset(longname, 'x', 4999);
	longname[4999] = 0;
	/* a range larger than any function, one that wraps, a long name */
	len += (size_t)snprintf(text + len, cap - len, "1000 40000000 big\n");
	len += (size_t)snprintf(text + len, cap - len,
				"fffffffffffffff0 20 wraps\n");
	for (i = 0; i < n; ++i)
		len += (size_t)snprintf(text + len, cap - len, "%zx 10 f%zu\n",
					0x100000 + i * 0x10, i);
	m = pr_jitmap_perfmap(text, len, 1);
	free(text);
	prt_ptr(m);
	prt_int_eq(m->nsym, n);
	prt_int_eq(m->st.huge, 2);
	prt_str_eq(pmap(m, 0x100000 + 12345 * 0x10 + 3), "f12345");
	prt_int_eq(m->sym[n - 1].gen, 0);
	pr_jitmap_free(m);

	text = malloc(5100);
	prt_ptr(text);
	len = (size_t)snprintf(text, 5100, "1000 10 %s\n", longname);
	m = pr_jitmap_perfmap(text, len, 1);
	prt_ptr(m);
	prt_int_eq(strlen(m->sym[0].name), PR_JITMAP_MAX_NAME);
	pr_jitmap_free(m);
	free(text);
	free(longname);
	return prt_passed();
}

static struct prt_result perfmap_overlapping(void)
{
	static const char text[] = "1000 100 a\n"
				   "5000 10 other\n"
				   "1000 100 b\n"	/* the same range */
				   "1080 100 c\n"	/* overlaps both */
				   "1000 10 d\n";	/* inside a and b */
	struct pr_jitmap *m = pr_jitmap_perfmap(text, sizeof(text) - 1, 1);
	size_t i;

	prt_ptr(m);
	prt_int_eq(m->nsym, 5);
	for (i = 0; i < m->nsym; ++i) {
		const struct pr_jitsym *s = &m->sym[i];
		int want = !strcmp(s->name, "a") ? 0 :
			   !strcmp(s->name, "other") ? 0 :
			   !strcmp(s->name, "b") ? 1 :
			   !strcmp(s->name, "c") ? 2 : 2;

		prt_int_eq(s->gen, want);
	}
	/* without flowjit bytes to check the last line covering ip wins */
	prt_str_eq(pmap(m, 0x1004), "d");
	prt_str_eq(pmap(m, 0x1090), "c");
	prt_str_eq(pmap(m, 0x1040), "b");
	pr_jitmap_free(m);
	return prt_passed();
}

/* A jitdump being built. */
struct jd {
	uint8_t buf[8192];
	size_t len;
};

static void jd_put(struct jd *j, const void *p, size_t n)
{
	memcpy(j->buf + j->len, p, n);
	j->len += n;
}

static void jd_u32(struct jd *j, uint32_t v) { jd_put(j, &v, 4); }
static void jd_u64(struct jd *j, uint64_t v) { jd_put(j, &v, 8); }

static void jd_header(struct jd *j, uint32_t pid, uint64_t flags)
{
	j->len = 0;
	jd_u32(j, 0x4A695444);
	jd_u32(j, 1);
	jd_u32(j, 40);
	jd_u32(j, 62);
	jd_u32(j, 0);
	jd_u32(j, pid);
	jd_u64(j, 0);
	jd_u64(j, flags);
}

static void jd_load(struct jd *j, uint64_t t, uint64_t addr, const char *name,
		    const uint8_t *code, size_t n, uint64_t index)
{
	size_t nl = strlen(name) + 1;

	jd_u32(j, 0);
	jd_u32(j, (uint32_t)(16 + 40 + nl + n));
	jd_u64(j, t);
	jd_u32(j, 7);
	jd_u32(j, 7);
	jd_u64(j, addr);
	jd_u64(j, addr);
	jd_u64(j, n);
	jd_u64(j, index);
	jd_put(j, name, nl);
	jd_put(j, code, n);
}

static void jd_move(struct jd *j, uint64_t t, uint64_t from, uint64_t to,
		    uint64_t n, uint64_t index)
{
	jd_u32(j, 1);
	jd_u32(j, 16 + 48);
	jd_u64(j, t);
	jd_u32(j, 7);
	jd_u32(j, 7);
	jd_u64(j, to);
	jd_u64(j, from);
	jd_u64(j, to);
	jd_u64(j, n);
	jd_u64(j, index);
}

static void jd_other(struct jd *j, uint32_t id, uint32_t body)
{
	uint32_t i;

	jd_u32(j, id);
	jd_u32(j, 16 + body);
	jd_u64(j, 0);
	for (i = 0; i < body; ++i)
		jd_put(j, "", 1);
}

static const uint8_t code_a[] = { 0xb8, 1, 0, 0, 0, 0xc3 };
static const uint8_t code_b[] = { 0xb8, 2, 0, 0, 0, 0xc3 };

/* f at 0x1000 from 100, g over it from 300, f moved to 0x3000 at 500 */
static void jd_scenario(struct jd *j)
{
	jd_header(j, 7, 0);
	jd_other(j, 2, 24);		/* debug info: skipped */
	jd_load(j, 100, 0x1000, "f", code_a, sizeof(code_a), 1);
	jd_load(j, 300, 0x1000, "g", code_b, sizeof(code_b), 2);
	jd_move(j, 500, 0x1000, 0x3000, sizeof(code_b), 2);
	jd_other(j, 3, 0);		/* close */
}

static const char *jdname(const struct pr_jitmap *m, uint64_t ip,
			  uint64_t t)
{
	const struct pr_jitsym *s = pr_jitmap_dump_at(m, ip, t);

	return s ? s->name : NULL;
}

static struct prt_result jitdump_wellformed(void)
{
	struct jd j;
	struct pr_jitmap *m;
	const char *err = "x";

	jd_scenario(&j);
	m = pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, &err);
	prt_ptr(m);
	prt_null(err);
	prt_int_eq(m->pid, 7);
	prt_int_eq(m->nsym, 3);
	prt_int_eq(m->st.other, 2);
	prt_int_eq(m->st.malformed + m->st.truncated, 0);
	/* the load live at the time; before the first, the first */
	prt_str_eq(jdname(m, 0x1001, 50), "f");
	prt_str_eq(jdname(m, 0x1001, 100), "f");
	prt_str_eq(jdname(m, 0x1001, 299), "f");
	prt_str_eq(jdname(m, 0x1001, 300), "g");
	prt_str_eq(jdname(m, 0x3001, 600), "g");
	prt_str_eq(jdname(m, 0x3001, 400), "g");	/* first after */
	/* moved away at 500: f's load stays for what ran at 0x1000 */
	prt_str_eq(jdname(m, 0x1001, 600), "f");
	prt_null(jdname(m, 0x1006, 300));
	prt_int_eq(pr_jitmap_dump_at(m, 0x3000, 600)->code[1], 2);
	pr_jitmap_free(m);
	return prt_passed();
}

static uint64_t tsc_times_two(const void *ctx, uint64_t tsc)
{
	(void)ctx;
	return tsc * 2;
}

static struct prt_result jitdump_arch_timestamp(void)
{
	struct jd j;
	struct pr_jitmap *m;

	jd_header(&j, 7, 1);
	jd_load(&j, 100, 0x1000, "f", code_a, sizeof(code_a), 1);
	m = pr_jitmap_jitdump(j.buf, j.len, tsc_times_two, NULL, NULL);
	prt_ptr(m);
	prt_uint_eq(m->sym[0].time, 200);
	pr_jitmap_free(m);
	/* without the flag, times are taken as they are */
	jd_header(&j, 7, 0);
	jd_load(&j, 100, 0x1000, "f", code_a, sizeof(code_a), 1);
	m = pr_jitmap_jitdump(j.buf, j.len, tsc_times_two, NULL, NULL);
	prt_ptr(m);
	prt_uint_eq(m->sym[0].time, 100);
	pr_jitmap_free(m);
	return prt_passed();
}

static struct prt_result jitdump_refused(void)
{
	struct jd j;
	const char *err = NULL;
	uint32_t v;

	prt_null(pr_jitmap_jitdump(NULL, 0, NULL, NULL, &err));
	prt_ptr(err);
	jd_scenario(&j);
	prt_null(pr_jitmap_jitdump(j.buf, 39, NULL, NULL, &err));
	prt_str_eq(err, "shorter than a jitdump header");
	v = 0x4454694A;
	memcpy(j.buf, &v, 4);
	prt_null(pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, &err));
	prt_check(strstr(err, "byte order") != NULL);
	v = 0x12345678;
	memcpy(j.buf, &v, 4);
	prt_null(pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, &err));
	prt_str_eq(err, "not a jitdump (bad magic)");
	jd_scenario(&j);
	v = 2;
	memcpy(j.buf + 4, &v, 4);
	prt_null(pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, &err));
	prt_str_eq(err, "jitdump version is not 1");
	jd_scenario(&j);
	v = 100000;
	memcpy(j.buf + 8, &v, 4);
	prt_null(pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, &err));
	prt_str_eq(err, "bad jitdump header size");
	return prt_passed();
}

static struct prt_result jitdump_corrupted_records(void)
{
	struct jd j;
	struct pr_jitmap *m;
	uint32_t v;
	char out[512] = "";
	FILE *f;

	/* a load without a NUL in its name, one whose code is cut */
	jd_header(&j, 7, 0);
	jd_u32(&j, 0);
	jd_u32(&j, 16 + 40 + 4);
	jd_u64(&j, 1);
	jd_put(&j, (uint8_t [44]){ 0 }, 40);
	jd_put(&j, "abcd", 4);
	jd_load(&j, 100, 0x1000, "f", code_a, sizeof(code_a), 1);
	v = 16 + 40 + 2 + 3;		/* code_size 6 > 3 bytes left */
	memcpy(j.buf + j.len - (16 + 40 + 2 + 6) + 4, &v, 4);
	j.len -= 3;
	jd_move(&j, 200, 0x9000, 0xa000, 6, 99);	/* nothing there */
	jd_load(&j, 300, 0x2000, "g", code_b, sizeof(code_b), 2);
	/* a record too short to step over: the rest is unreadable */
	jd_u32(&j, 0);
	jd_u32(&j, 8);
	jd_u64(&j, 0);
	jd_load(&j, 400, 0x4000, "h", code_b, sizeof(code_b), 3);
	m = pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, NULL);
	prt_ptr(m);
	prt_int_eq(m->nsym, 1);
	prt_str_eq(jdname(m, 0x2000, 300), "g");
	prt_int_eq(m->st.malformed, 3);
	prt_int_eq(m->st.moves_unmatched, 1);
	f = fmemopen(out, sizeof(out), "w");
	prt_int_eq(pr_jitmap_warn(m, f), 1);
	fclose(f);
	prt_check(strstr(out, "1 entries kept; dropped 3 malformed") != NULL);
	prt_check(strstr(out, "1 moves of unknown code") != NULL);
	pr_jitmap_free(m);

	/* a record running past the end of the file */
	jd_scenario(&j);
	v = 10000;
	memcpy(j.buf + 40 + 16 + 24 + 4, &v, 4);	/* f's load */
	m = pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, NULL);
	prt_ptr(m);
	prt_int_eq(m->nsym, 0);
	prt_int_eq(m->st.truncated, 1);
	pr_jitmap_free(m);
	return prt_passed();
}

/* Every truncation and 3000 corruptions of a good dump: no crash, never
 * more entries than the whole file has.
 */
static struct prt_result jitdump_every_truncation_and_corruption(void)
{
	struct jd j, c;
	struct pr_jitmap *m;
	size_t n, i;
	unsigned int seed = 1;

	jd_scenario(&j);
	for (n = 0; n <= j.len; ++n) {
		m = pr_jitmap_jitdump(j.buf, n, NULL, NULL, NULL);
		if (m) {
			prt_check(m->nsym <= 3);
			pr_jitmap_free(m);
		}
	}
	for (i = 0; i < 3000; ++i) {
		size_t k;

		c = j;
		for (k = 0; k < 1 + i % 4; ++k)
			c.buf[40 + rand_r(&seed) % (c.len - 40)] =
				(uint8_t)rand_r(&seed);
		m = pr_jitmap_jitdump(c.buf, c.len, NULL, NULL, NULL);
		if (m) {
			prt_check(m->nsym <= 3);
			(void)pr_jitmap_dump_at(m, 0x1000, 300);
			pr_jitmap_free(m);
		}
		m = pr_jitmap_perfmap((const char *)c.buf, c.len, 1);
		prt_ptr(m);
		pr_jitmap_free(m);
	}
	return prt_passed();
}

/* Fake flowjit revisions (views) of one address space. */
struct views {
	struct flowjit_rev rev[8];
	struct pr_region v[8];
	uint8_t bytes[8][64];
	size_t n;
};

/* Add a revision of [start, start + 64) at @time filled with @fill and
 * @code at @off.
 */
static struct pr_region *views_add(struct views *vs, uint64_t asid,
				   uint64_t start, uint64_t time,
				   uint8_t fill, const uint8_t *code,
				   size_t n, size_t off)
{
	size_t i = vs->n++;

	memset(vs->bytes[i], fill, 64);
	if (code)
		memcpy(vs->bytes[i] + off, code, n);
	memset(&vs->rev[i], 0, sizeof(vs->rev[i]));
	vs->rev[i].asid = asid;
	vs->rev[i].start = start;
	vs->rev[i].end = start + 64;
	vs->rev[i].time = time;
	vs->rev[i].seq = i;
	vs->rev[i].bytes = vs->bytes[i];
	memset(&vs->v[i], 0, sizeof(vs->v[i]));
	vs->v[i].kind = PR_RGN_FLOWJIT;
	vs->v[i].space = 7;
	vs->v[i].start = start;
	vs->v[i].end = start + 64;
	vs->v[i].bytes = vs->bytes[i];
	vs->v[i].nbytes = 64;
	vs->v[i].rev = &vs->rev[i];
	vs->v[i].t_start = time;
	vs->v[i].t_end = UINT64_MAX;
	return &vs->v[i];
}

/* The perf map rule: a line cannot describe code rewritten after it. */
static struct prt_result stale_perfmap(void)
{
	static const char one[] = "1010 6 f\n";
	static const char two[] = "1010 6 f\n1010 6 f2\n";
	struct pr_jitmap *m1 = pr_jitmap_perfmap(one, sizeof(one) - 1, 7);
	struct pr_jitmap *m2 = pr_jitmap_perfmap(two, sizeof(two) - 1, 7);
	struct pr_region *r0, *r1, *r2, *r3, *other;
	struct views vs = { .n = 0 };
	const struct pr_jitsym *s;
	int stale;

	prt_ptr(m1);
	prt_ptr(m2);
	/* the page before the JIT wrote f (zeros), f, f again (another
	 * function on the page changed), f rewritten in place; and another
	 * address space's page with other bytes
	 */
	r0 = views_add(&vs, 1, 0x1000, 10, 0, NULL, 0, 0);
	r1 = views_add(&vs, 1, 0x1000, 20, 0, code_a, 6, 0x10);
	r2 = views_add(&vs, 1, 0x1000, 30, 0, code_a, 6, 0x10);
	vs.bytes[2][0x30] = 0x90;
	r3 = views_add(&vs, 1, 0x1000, 40, 0, code_b, 6, 0x10);
	other = views_add(&vs, 2, 0x1000, 35, 0xcc, code_b, 6, 0x10);

	prt_int_eq(pr_jitmap_changes(vs.v, vs.n, r0, 0x1010, 0x1016), 0);
	prt_int_eq(pr_jitmap_changes(vs.v, vs.n, r1, 0x1010, 0x1016), 0);
	prt_int_eq(pr_jitmap_changes(vs.v, vs.n, r2, 0x1010, 0x1016), 0);
	prt_int_eq(pr_jitmap_changes(vs.v, vs.n, r3, 0x1010, 0x1016), 1);
	prt_int_eq(pr_jitmap_changes(vs.v, vs.n, other, 0x1010, 0x1016), 0);

	s = pr_jitmap_map_at(m1, vs.v, vs.n, r1, 0x1012, &stale);
	prt_ptr(s);
	prt_str_eq(s->name, "f");
	prt_int_eq(stale, 0);
	s = pr_jitmap_map_at(m1, vs.v, vs.n, r2, 0x1012, &stale);
	prt_int_eq(stale, 0);
	s = pr_jitmap_map_at(m1, vs.v, vs.n, r3, 0x1012, &stale);
	prt_str_eq(s->name, "f");
	prt_int_eq(stale, 1);
	prt_str_eq(s->stale, "f [stale]");
	/* a second line for the range names the rewritten code */
	s = pr_jitmap_map_at(m2, vs.v, vs.n, r3, 0x1012, &stale);
	prt_str_eq(s->name, "f2");
	prt_int_eq(stale, 0);
	s = pr_jitmap_map_at(m2, vs.v, vs.n, r1, 0x1012, &stale);
	prt_str_eq(s->name, "f");
	prt_int_eq(stale, 0);
	pr_jitmap_free(m1);
	pr_jitmap_free(m2);
	return prt_passed();
}

/* The jitdump rule: its bytes against the executing revision's. */
static struct prt_result stale_jitdump(void)
{
	struct views vs = { .n = 0 };
	struct pr_region *r1, *r2, name = { .kind = PR_RGN_NAME };
	struct pr_jitmap *m;
	struct jd j;

	jd_header(&j, 7, 0);
	jd_load(&j, 15, 0x1010, "f", code_a, sizeof(code_a), 1);
	m = pr_jitmap_jitdump(j.buf, j.len, NULL, NULL, NULL);
	prt_ptr(m);
	r1 = views_add(&vs, 1, 0x1000, 20, 0, code_a, 6, 0x10);
	r2 = views_add(&vs, 1, 0x1000, 40, 0, code_b, 6, 0x10);
	prt_int_eq(pr_jitmap_dump_stale(&m->sym[0], r1), 0);
	prt_int_eq(pr_jitmap_dump_stale(&m->sym[0], r2), 1);
	/* no bytes to compare: not stale */
	prt_int_eq(pr_jitmap_dump_stale(&m->sym[0], &name), 0);
	prt_int_eq(pr_jitmap_dump_stale(NULL, r1), 0);
	pr_jitmap_free(m);
	return prt_passed();
}

/* pr_jitnames_load() from a directory and a file, pr_jitnames_sym(). */
static struct prt_result names_from_files(void)
{
	char dir[] = "/tmp/test-pr_jitmap-XXXXXX", path[256], buf[160];
	uint32_t pids[] = { 7, 8 };
	struct pr_jitnames jn = { .map = NULL };
	struct pr_store store;
	struct views vs = { .n = 0 };
	struct pr_region *r1, *r3;
	const void *k1;
	uint64_t k2, lo, hi;
	const char *name;
	struct jd j;
	FILE *f;

	prt_ptr(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-7.map", dir);
	f = fopen(path, "w");
	prt_ptr(f);
	fprintf(f, "1010 6 f\nbogus line\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/jit-8.dump", dir);
	jd_header(&j, 8, 0);
	jd_load(&j, 15, 0x1010, "g", code_a, sizeof(code_a), 1);
	f = fopen(path, "w");
	prt_ptr(f);
	fwrite(j.buf, 1, j.len, f);
	fclose(f);

	f = fopen("/dev/null", "w");
	prt_int_eq(pr_jitnames_load(&jn, dir, path, pids, 2, NULL, NULL, f),
		   0);
	fclose(f);
	prt_int_eq(jn.nmap, 2);
	prt_int_eq(jn.nread, 2);
	prt_int_eq(jn.map[0]->st.malformed, 1);

	memset(&store, 0, sizeof(store));
	r1 = views_add(&vs, 1, 0x1000, 20, 0, code_a, 6, 0x10);
	views_add(&vs, 1, 0x1000, 30, 0, code_a, 6, 0x10);
	r3 = views_add(&vs, 1, 0x1000, 40, 0, code_b, 6, 0x10);
	store.fjv = vs.v;
	store.nfjv = vs.n;
	name = pr_jitnames_sym(&jn, &store, r1, 7, 0x1012, 25, buf,
			       sizeof(buf), &k1, &k2, &lo, &hi);
	prt_str_eq(name, "f");
	prt_str_eq(buf, "f+0x2");
	prt_uint_eq(lo, 0x1010);
	prt_uint_eq(hi, 0x1016);
	name = pr_jitnames_sym(&jn, &store, r3, 7, 0x1012, 45, buf,
			       sizeof(buf), &k1, &k2, &lo, &hi);
	prt_str_eq(name, "f [stale]");
	prt_str_eq(buf, "f+0x2 [stale]");
	/* pid 8 by its jitdump */
	name = pr_jitnames_sym(&jn, &store, r1, 8, 0x1011, 25, buf,
			       sizeof(buf), &k1, &k2, &lo, &hi);
	prt_str_eq(name, "g");
	name = pr_jitnames_sym(&jn, &store, r3, 8, 0x1011, 45, buf,
			       sizeof(buf), &k1, &k2, &lo, &hi);
	prt_str_eq(name, "g [stale]");
	/* nothing names it: NULL, the caller keeps jit:<pid>:<page> */
	prt_null(pr_jitnames_sym(&jn, &store, r1, 7, 0x1000, 25, buf,
				 sizeof(buf), &k1, &k2, &lo, &hi));
	prt_null(pr_jitnames_sym(&jn, &store, r1, 9, 0x1012, 25, buf,
				 sizeof(buf), &k1, &k2, &lo, &hi));
	pr_jitnames_fini(&jn);

	/* a missing map is no error, an unreadable jitdump is counted */
	snprintf(path, sizeof(path), "%s/none.dump", dir);
	prt_int_eq(pr_jitnames_load(&jn, "/nonexistent", path, pids, 2, NULL,
				    NULL, NULL), 0);
	prt_int_eq(jn.nmap, 0);
	prt_int_eq(jn.nbad, 1);
	pr_jitnames_fini(&jn);
	pr_jitnames_fini(NULL);

	snprintf(path, sizeof(path), "%s/perf-7.map", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/jit-8.dump", dir);
	unlink(path);
	rmdir(dir);
	return prt_passed();
}

int main(void)
{
	struct prt_suite s = { 0, 0 };

	prt_run(s, "pr_jitmap: a perf map's lines name their ranges (hex, "
		"0x, spaces in names, CRLF)", perfmap_wellformed);
	prt_run(s, "pr_jitmap: malformed perf map lines are counted and "
		"dropped, a last line without newline is truncated",
		perfmap_malformed);
	prt_run(s, "pr_jitmap: a huge perf map (200000 lines) parses; "
		"oversized and wrapping ranges are dropped, long names cut",
		perfmap_huge);
	prt_run(s, "pr_jitmap: overlapping perf map lines count the earlier "
		"lines overlapping them", perfmap_overlapping);
	prt_run(s, "pr_jitmap: jitdump loads and moves name code by time",
		jitdump_wellformed);
	prt_run(s, "pr_jitmap: jitdump TSC times are converted only with "
		"JITDUMP_FLAGS_ARCH_TIMESTAMP", jitdump_arch_timestamp);
	prt_run(s, "pr_jitmap: bad jitdump headers are refused with a reason",
		jitdump_refused);
	prt_run(s, "pr_jitmap: corrupted and truncated jitdump records are "
		"counted, unmatched moves too", jitdump_corrupted_records);
	prt_run(s, "pr_jitmap: every truncation and 3000 corruptions of a "
		"jitdump parse without a crash",
		jitdump_every_truncation_and_corruption);
	prt_run(s, "pr_jitmap: a perf map line is stale for code rewritten "
		"after it, not for its own or an unchanged page's",
		stale_perfmap);
	prt_run(s, "pr_jitmap: a jitdump load is stale where its bytes differ "
		"from the executing revision's", stale_jitdump);
	prt_run(s, "pr_jitmap: names come from DIR/perf-PID.map and a jitdump "
		"by pid, marked [stale]", names_from_files);
	return prt_exit(&s);
}
