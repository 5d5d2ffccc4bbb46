// SPDX-License-Identifier: GPL-2.0
/*
 * pr_jitmap: names of user JIT code from perf maps and jitdump files
 * (see pr_jitmap.h for the rules).
 */
#include "pr_jitmap.h"
#include "pr_replay.h"
#include "pr_store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* jitdump (tools/perf/Documentation/jitdump-specification.txt) */
#define JD_MAGIC		0x4A695444u	/* "JiTD" as a native u32 */
#define JD_MAGIC_SWAPPED	0x4454694Au
#define JD_HEADER_SIZE		40
#define JD_REC_SIZE		16	/* id, total_size, timestamp */
#define JD_LOAD_SIZE		40		/* pid .. code_index */
#define JD_MOVE_SIZE		48		/* pid .. code_index */
#define JD_FLAGS_ARCH_TIMESTAMP	1ull
enum { JD_CODE_LOAD, JD_CODE_MOVE, JD_CODE_DEBUG_INFO, JD_CODE_CLOSE,
       JD_CODE_UNWINDING_INFO };

static atomic_uint_fast64_t pr_jitmap_serials;

static struct pr_jitmap *pr_jitmap_alloc(uint32_t pid, int jitdump)
{
	struct pr_jitmap *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->pid = pid;
	map->jitdump = jitdump;
	map->serial = atomic_fetch_add(&pr_jitmap_serials, 1) + 1;
	return map;
}

void pr_jitmap_free(struct pr_jitmap *map)
{
	size_t i;

	if (!map)
		return;
	for (i = 0; i < map->nsym; ++i) {
		free(map->sym[i].name);
		free(map->sym[i].stale);
	}
	free(map->sym);
	free(map->max_end);
	free(map->buf);
	free(map->path);
	free(map);
}

/* Add [start, start + size) named by the @len bytes at @name.
 * Returns the entry, NULL if dropped (counted) or out of memory (-1 in
 * *@oom).
 */
static struct pr_jitsym *pr_jitmap_add(struct pr_jitmap *map, uint64_t start,
				       uint64_t size, const char *name,
				       size_t len, int *oom)
{
	struct pr_jitsym *s;

	if (!size || size > PR_JITMAP_MAX_SIZE || start + size < start) {
		map->st.huge += size != 0;
		map->st.malformed += size == 0;
		return NULL;
	}
	if (map->nsym >= PR_JITMAP_MAX_ENTRIES) {
		map->st.dropped += 1;
		return NULL;
	}
	if (map->nsym == map->cap) {
		size_t cap = map->cap ? 2 * map->cap : 64;

		s = realloc(map->sym, cap * sizeof(*s));
		if (!s)
			goto out_oom;
		map->sym = s;
		map->cap = cap;
	}
	if (len > PR_JITMAP_MAX_NAME)
		len = PR_JITMAP_MAX_NAME;
	s = &map->sym[map->nsym];
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->end = start + size;
	s->t_end = UINT64_MAX;
	s->order = map->nsym;
	s->pid = map->pid;
	s->name = malloc(len + 1);
	s->stale = malloc(len + sizeof(" [stale]"));
	if (!s->name || !s->stale) {
		free(s->name);
		free(s->stale);
		goto out_oom;
	}
	memcpy(s->name, name, len);
	s->name[len] = 0;
	memcpy(s->stale, name, len);
	memcpy(s->stale + len, " [stale]", sizeof(" [stale]"));
	map->nsym += 1;
	map->st.entries += 1;
	return s;

out_oom:
	*oom = 1;
	return NULL;
}

static int pr_jitmap_sym_cmp(const void *a, const void *b)
{
	const struct pr_jitsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The number of entries a perf map compares ranges for at most. */
#define PR_JITMAP_MAX_WORK	200000000ull

/* Sort the entries and build max_end; for a perf map count for each
 * entry the earlier entries overlapping it (gen).  Returns 0, -1 if out
 * of memory.
 */
static int pr_jitmap_finish(struct pr_jitmap *map)
{
	uint64_t work = 0, m = 0;
	size_t i, j;

	if (!map->nsym)
		return 0;
	qsort(map->sym, map->nsym, sizeof(*map->sym), pr_jitmap_sym_cmp);
	map->max_end = malloc(map->nsym * sizeof(*map->max_end));
	if (!map->max_end)
		return -1;
	for (i = 0; i < map->nsym; ++i) {
		m = map->sym[i].end > m ? map->sym[i].end : m;
		map->max_end[i] = m;
	}
	if (map->jitdump)
		return 0;
	for (i = 0; i < map->nsym && work < PR_JITMAP_MAX_WORK; ++i) {
		struct pr_jitsym *e = &map->sym[i];

		/* entries starting before e->end that may reach e->start */
		for (j = i + 1; j < map->nsym && map->sym[j].start < e->end;
		     ++j, ++work)
			if (map->sym[j].order < e->order)
				e->gen += 1;
		for (j = i; j-- > 0 && map->max_end[j] > e->start; ++work)
			if (map->sym[j].end > e->start &&
			    map->sym[j].order < e->order)
				e->gen += 1;
	}
	return 0;
}

/* Parse one hex number at *@p (before @end), "0x" allowed; advances *@p.
 * Returns 0, -1 if there is none or it overflows.
 */
static int pr_jitmap_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int n = 0;

	*v = 0;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; ++s, ++n) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (*v >> 60)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	*p = s;
	return n ? 0 : -1;
}

/* Parse one perf map line [p, end).  Returns 0, -1 if out of memory. */
static int pr_jitmap_line(struct pr_jitmap *map, const char *p,
			  const char *end)
{
	uint64_t start, size;
	int oom = 0;

	if (end > p && end[-1] == '\r')
		end -= 1;
	if (p == end)
		return 0;
	if (pr_jitmap_hex(&p, end, &start) < 0 || p == end || *p != ' ')
		goto out_malformed;
	while (p < end && *p == ' ')
		p++;
	if (pr_jitmap_hex(&p, end, &size) < 0 || p == end || *p != ' ')
		goto out_malformed;
	while (p < end && *p == ' ')
		p++;
	if (p == end || memchr(p, 0, (size_t)(end - p)))
		goto out_malformed;
	pr_jitmap_add(map, start, size, p, (size_t)(end - p), &oom);
	return oom ? -1 : 0;

out_malformed:
	map->st.malformed += 1;
	return 0;
}

struct pr_jitmap *pr_jitmap_perfmap(const char *buf, size_t size,
				    uint32_t pid)
{
	struct pr_jitmap *map = pr_jitmap_alloc(pid, 0);
	const char *p = buf, *end = buf ? buf + size : NULL;

	if (!map)
		return NULL;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl) {
			/* the runtime may be writing it: not a whole line */
			map->st.truncated += 1;
			break;
		}
		if (pr_jitmap_line(map, p, nl) < 0)
			goto out_free;
		p = nl + 1;
	}
	if (pr_jitmap_finish(map) < 0)
		goto out_free;
	return map;

out_free:
	pr_jitmap_free(map);
	return NULL;
}

static uint32_t pr_jitmap_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t pr_jitmap_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A JIT_CODE_LOAD record body @b of @n bytes at time @t.
 * Returns 0, -1 if out of memory.
 */
static int pr_jitmap_load(struct pr_jitmap *map, const uint8_t *b, size_t n,
		      uint64_t t)
{
	const uint8_t *name = b + JD_LOAD_SIZE, *nul;
	uint64_t addr, size;
	struct pr_jitsym *s;
	int oom = 0;

	if (n < JD_LOAD_SIZE + 1)
		goto out_malformed;
	addr = pr_jitmap_u64(b + 16);
	size = pr_jitmap_u64(b + 24);
	nul = memchr(name, 0, n - JD_LOAD_SIZE);
	if (!nul || size > n - (size_t)(nul + 1 - b))
		goto out_malformed;
	s = pr_jitmap_add(map, addr, size, (const char *)name,
			  (size_t)(nul - name), &oom);
	if (!s)
		return oom ? -1 : 0;
	s->pid = pr_jitmap_u32(b);
	s->time = t;
	s->index = pr_jitmap_u64(b + 32);
	s->code = nul + 1;
	return 0;

out_malformed:
	map->st.malformed += 1;
	return 0;
}

/* A JIT_CODE_MOVE record: the code loaded with its code_index (the latest
 * such load, at its old address) is at the new address from @t on.
 * Returns 0, -1 if out of memory.
 */
static int pr_jitmap_move(struct pr_jitmap *map, const uint8_t *b, size_t n,
		      uint64_t t)
{
	uint64_t from, to, size, index;
	struct pr_jitsym *s, *old = NULL;
	int oom = 0;
	size_t i;

	if (n < JD_MOVE_SIZE) {
		map->st.malformed += 1;
		return 0;
	}
	from = pr_jitmap_u64(b + 16);
	to = pr_jitmap_u64(b + 24);
	size = pr_jitmap_u64(b + 32);
	index = pr_jitmap_u64(b + 40);
	for (i = map->nsym; i-- > 0;)
		if (map->sym[i].index == index && map->sym[i].start == from &&
		    map->sym[i].end - map->sym[i].start == size) {
			old = &map->sym[i];
			break;
		}
	if (!old) {
		map->st.moves_unmatched += 1;
		return 0;
	}
	old->t_end = t;
	s = pr_jitmap_add(map, to, size, old->name, strlen(old->name), &oom);
	if (!s)
		return oom ? -1 : 0;
	old = &map->sym[i];	/* pr_jitmap_add() may move sym */
	s->pid = pr_jitmap_u32(b);
	s->time = t;
	s->index = index;
	s->code = old->code;
	return 0;
}

struct pr_jitmap *pr_jitmap_jitdump(const uint8_t *buf, size_t size,
				    uint64_t (*tsc_to_time)(const void *,
							    uint64_t),
				    const void *ctx, const char **err)
{
	const char *why = NULL;
	struct pr_jitmap *map;
	uint64_t flags, off;
	uint32_t hsize;

	if (!buf || size < JD_HEADER_SIZE) {
		why = "shorter than a jitdump header";
	} else if (pr_jitmap_u32(buf) == JD_MAGIC_SWAPPED) {
		why = "a jitdump of the other byte order (not supported)";
	} else if (pr_jitmap_u32(buf) != JD_MAGIC) {
		why = "not a jitdump (bad magic)";
	} else if (pr_jitmap_u32(buf + 4) != 1) {
		why = "jitdump version is not 1";
	} else {
		hsize = pr_jitmap_u32(buf + 8);
		if (hsize < JD_HEADER_SIZE || hsize > size)
			why = "bad jitdump header size";
	}
	if (err)
		*err = why;
	if (why)
		return NULL;
	map = pr_jitmap_alloc(pr_jitmap_u32(buf + 20), 1);
	if (!map)
		return NULL;
	map->buf = malloc(size);
	if (!map->buf)
		goto out_free;
	memcpy(map->buf, buf, size);
	map->size = size;
	flags = pr_jitmap_u64(buf + 32);
	off = hsize;
	while (off < size) {
		const uint8_t *r = map->buf + off;
		uint32_t id, rsize;
		uint64_t t;
		int status = 0;

		if (size - off < JD_REC_SIZE) {
			map->st.truncated += 1;
			break;
		}
		id = pr_jitmap_u32(r);
		rsize = pr_jitmap_u32(r + 4);
		t = pr_jitmap_u64(r + 8);
		if (rsize < JD_REC_SIZE) {
			/* no way to the next record */
			map->st.malformed += 1;
			break;
		}
		if (rsize > size - off) {
			map->st.truncated += 1;
			break;
		}
		if ((flags & JD_FLAGS_ARCH_TIMESTAMP) && tsc_to_time)
			t = tsc_to_time(ctx, t);
		if (id == JD_CODE_LOAD)
			status = pr_jitmap_load(map, r + JD_REC_SIZE,
					    rsize - JD_REC_SIZE, t);
		else if (id == JD_CODE_MOVE)
			status = pr_jitmap_move(map, r + JD_REC_SIZE,
					    rsize - JD_REC_SIZE, t);
		else
			map->st.other += 1;
		if (status < 0)
			goto out_free;
		off += rsize;
	}
	if (pr_jitmap_finish(map) < 0)
		goto out_free;
	return map;

out_free:
	pr_jitmap_free(map);
	return NULL;
}

int pr_jitmap_warn(const struct pr_jitmap *map, FILE *out)
{
	const struct pr_jitmap_stats *s;

	if (!map || !out)
		return 0;
	s = &map->st;
	if (!s->malformed && !s->truncated && !s->huge && !s->dropped &&
	    !s->moves_unmatched)
		return 0;
	fprintf(out, "ptreplay: %s: %" PRIu64 " entries kept; dropped %"
		PRIu64 " malformed, %" PRIu64 " truncated, %" PRIu64
		" larger than %u bytes, %" PRIu64 " beyond %u entries",
		map->path ? map->path : (map->jitdump ? "jitdump" :
					 "perf map"),
		s->entries, s->malformed, s->truncated, s->huge,
		PR_JITMAP_MAX_SIZE, s->dropped, PR_JITMAP_MAX_ENTRIES);
	if (map->jitdump)
		fprintf(out, ", %" PRIu64 " moves of unknown code",
			s->moves_unmatched);
	fputc('\n', out);
	return 1;
}

/* Call @fn for each entry of @map covering @ip, last started first,
 * until it returns non-zero.  Returns that value, or 0.
 */
static int pr_jitmap_each(const struct pr_jitmap *map, uint64_t ip,
			  int (*fn)(const struct pr_jitsym *, void *),
			  void *arg)
{
	size_t lo = 0, hi = map->nsym;
	int ret;

	/* the first entry starting after ip */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->sym[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && map->max_end[lo] > ip)
		if (map->sym[lo].end > ip) {
			ret = fn(&map->sym[lo], arg);
			if (ret)
				return ret;
		}
	return 0;
}

struct pr_jitmap_dpick {
	uint64_t time;
	const struct pr_jitsym *at, *after;
};

static int pr_jitmap_dpick_one(const struct pr_jitsym *s, void *arg)
{
	struct pr_jitmap_dpick *pk = arg;

	if (s->time <= pk->time && s->t_end > pk->time) {
		if (!pk->at || s->time > pk->at->time ||
		    (s->time == pk->at->time && s->order > pk->at->order))
			pk->at = s;
	} else if (s->time > pk->time) {
		if (!pk->after || s->time < pk->after->time ||
		    (s->time == pk->after->time &&
		     s->order > pk->after->order))
			pk->after = s;
	}
	return 0;
}

const struct pr_jitsym *pr_jitmap_dump_at(const struct pr_jitmap *map,
					  uint64_t ip, uint64_t time)
{
	struct pr_jitmap_dpick pk = { .time = time };

	if (!map || !map->nsym)
		return NULL;
	pr_jitmap_each(map, ip, pr_jitmap_dpick_one, &pk);
	return pk.at ? pk.at : pk.after;
}

int pr_jitmap_dump_stale(const struct pr_jitsym *s,
			 const struct pr_region *rgn)
{
	uint64_t lo, hi;

	if (!s || !s->code || !rgn || !rgn->bytes)
		return 0;
	lo = s->start > rgn->start ? s->start : rgn->start;
	hi = s->end < rgn->start + rgn->nbytes ? s->end :
	     rgn->start + rgn->nbytes;
	if (lo >= hi)
		return 0;
	return memcmp(s->code + (lo - s->start), rgn->bytes +
		      (lo - rgn->start), (size_t)(hi - lo)) != 0;
}

/* Is [p, p + n) all 0x00 or all 0xcc: memory a JIT has not filled yet? */
static int pr_jitmap_blank(const uint8_t *p, size_t n)
{
	size_t i;

	if (!n || (p[0] != 0 && p[0] != 0xcc))
		return 0;
	for (i = 1; i < n; ++i)
		if (p[i] != p[0])
			return 0;
	return 1;
}

/* Does view @v come before @w: by time, then seq? */
static int pr_jitmap_before(const struct pr_region *v,
			    const struct pr_region *w)
{
	if (v->rev->time != w->rev->time)
		return v->rev->time < w->rev->time;
	return v->rev->seq < w->rev->seq;
}

static int pr_jitmap_view_cmp(const void *a, const void *b)
{
	const struct pr_region *v = *(const struct pr_region *const *)a;
	const struct pr_region *w = *(const struct pr_region *const *)b;

	if (v == w)
		return 0;
	return pr_jitmap_before(v, w) ? -1 : 1;
}

uint32_t pr_jitmap_changes(const struct pr_region *views, size_t n,
			   const struct pr_region *rev, uint64_t start,
			   uint64_t end)
{
	const struct pr_region **in;
	size_t i, j, nin = 0;
	uint32_t c = 0;

	if (!views || !rev || !rev->rev || start >= end)
		return 0;
	in = malloc((n ? n : 1) * sizeof(*in));
	if (!in)
		return 0;
	for (i = 0; i < n; ++i) {
		const struct pr_region *v = &views[i];

		if (!v->rev || !v->bytes || v->rev->asid != rev->rev->asid ||
		    v->start >= end || v->start + v->nbytes <= start)
			continue;
		if (v != rev && !pr_jitmap_before(v, rev))
			continue;
		in[nin++] = v;
	}
	qsort(in, nin, sizeof(*in), pr_jitmap_view_cmp);
	/* each view against the latest earlier one sharing bytes of E */
	for (j = 1; j < nin; ++j) {
		const struct pr_region *w = in[j];

		for (i = j; i-- > 0;) {
			const struct pr_region *v = in[i];
			uint64_t lo = start, hi = end;

			lo = v->start > lo ? v->start : lo;
			lo = w->start > lo ? w->start : lo;
			hi = v->start + v->nbytes < hi ? v->start + v->nbytes :
			     hi;
			hi = w->start + w->nbytes < hi ? w->start + w->nbytes :
			     hi;
			if (lo >= hi)
				continue;
			if (!pr_jitmap_blank(v->bytes + (lo - v->start),
					     (size_t)(hi - lo)) &&
			    memcmp(v->bytes + (lo - v->start),
				   w->bytes + (lo - w->start),
				   (size_t)(hi - lo)))
				c += 1;
			break;
		}
	}
	free(in);
	return c;
}

/* The counts of changes a thread worked out: (map, entry, view) -> c. */
#define PR_JITMAP_CACHE	256
struct pr_jitmap_cached {
	uint64_t serial;
	const struct pr_jitsym *sym;
	const struct pr_region *rev;
	uint32_t c;
};
static __thread struct pr_jitmap_cached pr_jitmap_cache[PR_JITMAP_CACHE];

/* The c of entry @s of @map for view @rgn (see pr_jitmap_changes()). */
static uint32_t pr_jitmap_c(const struct pr_jitmap *map,
			    const struct pr_jitsym *s,
			    const struct pr_region *views, size_t n,
			    const struct pr_region *rgn)
{
	uintptr_t h = ((uintptr_t)s ^ (uintptr_t)rgn * 31) >> 4;
	struct pr_jitmap_cached *e = &pr_jitmap_cache[h % PR_JITMAP_CACHE];

	if (e->serial == map->serial && e->sym == s && e->rev == rgn)
		return e->c;
	e->serial = map->serial;
	e->sym = s;
	e->rev = rgn;
	e->c = pr_jitmap_changes(views, n, rgn, s->start, s->end);
	return e->c;
}

struct pr_jitmap_mpick {
	const struct pr_jitmap *map;
	const struct pr_region *views, *rgn;
	size_t n;
	const struct pr_jitsym *exact, *later, *last;
};

static int pr_jitmap_mpick_one(const struct pr_jitsym *s, void *arg)
{
	struct pr_jitmap_mpick *pk = arg;
	uint32_t c;

	if (!pk->last || s->order > pk->last->order)
		pk->last = s;
	if (!pk->rgn || !pk->rgn->rev) {
		/* no flowjit bytes to check: the last line, trusted */
		pk->exact = pk->last;
		return 0;
	}
	c = pr_jitmap_c(pk->map, s, pk->views, pk->n, pk->rgn);
	if (s->gen == c) {
		if (!pk->exact || s->order > pk->exact->order)
			pk->exact = s;
	} else if (s->gen > c) {
		if (!pk->later || s->order < pk->later->order)
			pk->later = s;
	}
	return 0;
}

const struct pr_jitsym *pr_jitmap_map_at(const struct pr_jitmap *map,
					 const struct pr_region *views,
					 size_t n, const struct pr_region *rgn,
					 uint64_t ip, int *stale)
{
	struct pr_jitmap_mpick pk = {
		.map = map, .views = views, .n = n, .rgn = rgn,
	};

	*stale = 0;
	if (!map || !map->nsym)
		return NULL;
	pr_jitmap_each(map, ip, pr_jitmap_mpick_one, &pk);
	if (pk.exact)
		return pk.exact;
	if (pk.later)
		return pk.later;
	*stale = pk.last != NULL;
	return pk.last;
}

/* Read the whole file @path (at most PR_JITMAP_MAX_FILE bytes).
 * Returns its bytes (malloc'd, NUL-terminated) and size in *@size, NULL
 * with errno set if it cannot be read.
 */
static uint8_t *pr_jitmap_read(const char *path, size_t *size)
{
	size_t len = 0, cap = 1 << 16;
	uint8_t *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || !buf)
		goto out_fail;
	for (;;) {
		if (len == cap) {
			uint8_t *nb;

			if (cap >= PR_JITMAP_MAX_FILE) {
				errno = EFBIG;
				goto out_fail;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				goto out_fail;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out_fail;
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	*size = len;
	return buf;

out_fail:
	if (fd >= 0) {
		int e = errno;

		close(fd);
		errno = e;
	}
	free(buf);
	return NULL;
}

/* Keep @map (taking it over) with path @path.  Returns 0, -1 if out of
 * memory.
 */
static int pr_jitnames_add(struct pr_jitnames *jn, struct pr_jitmap *map,
			   const char *path, FILE *warn)
{
	struct pr_jitmap **m;

	map->path = strdup(path);
	m = map->path ? realloc(jn->map, (jn->nmap + 1) * sizeof(*m)) : NULL;
	if (!m) {
		pr_jitmap_free(map);
		return -1;
	}
	jn->map = m;
	jn->map[jn->nmap++] = map;
	jn->nread += 1;
	pr_jitmap_warn(map, warn);
	return 0;
}

int pr_jitnames_load(struct pr_jitnames *jn, const char *dir,
		     const char *jitdump, const uint32_t *pids, size_t npids,
		     uint64_t (*tsc_to_time)(const void *, uint64_t),
		     const void *ctx, FILE *warn)
{
	struct pr_jitmap *map;
	const char *why;
	uint8_t *buf;
	size_t i, size;
	char path[4096];

	if (!jn)
		return -1;
	for (i = 0; dir && *dir && i < npids; ++i) {
		snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pids[i]);
		buf = pr_jitmap_read(path, &size);
		if (!buf) {
			if (errno != ENOENT) {
				jn->nbad += 1;
				if (warn)
					fprintf(warn, "ptreplay: %s: %s\n",
						path, strerror(errno));
			}
			continue;
		}
		map = pr_jitmap_perfmap((const char *)buf, size, pids[i]);
		free(buf);
		if (!map || pr_jitnames_add(jn, map, path, warn) < 0)
			return -1;
	}
	if (!jitdump)
		return 0;
	buf = pr_jitmap_read(jitdump, &size);
	if (!buf) {
		jn->nbad += 1;
		if (warn)
			fprintf(warn, "ptreplay: %s: %s\n", jitdump,
				strerror(errno));
		return 0;
	}
	map = pr_jitmap_jitdump(buf, size, tsc_to_time, ctx, &why);
	free(buf);
	if (!map && why) {
		jn->nbad += 1;
		if (warn)
			fprintf(warn, "ptreplay: %s: %s: not used\n", jitdump,
				why);
		return 0;
	}
	if (!map || pr_jitnames_add(jn, map, jitdump, warn) < 0)
		return -1;
	return 0;
}

static int pr_jitnames_pid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Add @pid to the @n pids at @p (capacity *@cap).  Returns 0, -1 if out
 * of memory.
 */
static int pr_jitnames_pid(uint32_t **p, size_t *n, size_t *cap,
			   uint32_t pid)
{
	if (!pid || pid == UINT32_MAX)
		return 0;
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		uint32_t *np = realloc(*p, c * sizeof(*np));

		if (!np)
			return -1;
		*p = np;
		*cap = c;
	}
	(*p)[(*n)++] = pid;
	return 0;
}

static uint64_t pr_jitnames_tsc(const void *ctx, uint64_t tsc)
{
	return pr_tsc_to_perf(ctx, tsc);
}

int pr_jitnames_replay(struct pr_replay *rp, FILE *warn)
{
	const struct pr_replay_opts *o;
	uint32_t *pids = NULL;
	size_t n = 0, cap = 0, i, k;
	int status = -1;

	if (!rp)
		return -1;
	o = &rp->opts;
	if (o->no_files || (!o->jitdump && (!o->perf_map_dir ||
					    !*o->perf_map_dir)))
		return 0;
	for (i = 0; i < rp->captask; ++i)
		if (rp->task[i].tid &&
		    pr_jitnames_pid(&pids, &n, &cap, rp->task[i].pid) < 0)
			goto out;
	for (i = 0; i < rp->store.nrgn; ++i)
		if (rp->store.rgn[i].space &&
		    pr_jitnames_pid(&pids, &n, &cap,
				    rp->store.rgn[i].space) < 0)
			goto out;
	for (i = 0; i < rp->store.nfjv; ++i)
		if (rp->store.fjv[i].space &&
		    pr_jitnames_pid(&pids, &n, &cap,
				    rp->store.fjv[i].space) < 0)
			goto out;
	if (n)
		qsort(pids, n, sizeof(*pids), pr_jitnames_pid_cmp);
	for (i = k = 0; i < n; ++i)
		if (!k || pids[k - 1] != pids[i])
			pids[k++] = pids[i];
	status = pr_jitnames_load(&rp->names, o->perf_map_dir, o->jitdump,
				  pids, k, pr_jitnames_tsc, &rp->info, warn);
out:
	free(pids);
	return status;
}

void pr_jitnames_fini(struct pr_jitnames *jn)
{
	size_t i;

	if (!jn)
		return;
	for (i = 0; i < jn->nmap; ++i)
		pr_jitmap_free(jn->map[i]);
	free(jn->map);
	memset(jn, 0, sizeof(*jn));
}

const struct pr_jitsym *pr_jitnames_find(const struct pr_jitnames *jn,
					 const struct pr_store *store,
					 const struct pr_region *rgn,
					 uint32_t pid, uint64_t ip,
					 uint64_t time, int *stale)
{
	const struct pr_jitsym *s = NULL;
	size_t i;

	*stale = 0;
	if (!jn || !jn->nmap || !rgn || (rgn->kind != PR_RGN_FLOWJIT &&
					 rgn->kind != PR_RGN_NAME))
		return NULL;
	if (rgn->rev && rgn->rev->asid == FLOWJIT_ASID_KERNEL)
		return NULL;
	/* jitdump first: it has times and bytes */
	for (i = 0; !s && i < jn->nmap; ++i)
		if (jn->map[i]->jitdump && jn->map[i]->pid == pid) {
			s = pr_jitmap_dump_at(jn->map[i], ip, time);
			*stale = pr_jitmap_dump_stale(s, rgn);
		}
	for (i = 0; !s && i < jn->nmap; ++i)
		if (!jn->map[i]->jitdump && jn->map[i]->pid == pid)
			s = pr_jitmap_map_at(jn->map[i], store->fjv,
					     store->nfjv, rgn, ip, stale);
	if (!s)
		*stale = 0;
	return s;
}

int pr_jitnames_timed(const struct pr_jitnames *jn)
{
	size_t i;

	for (i = 0; jn && i < jn->nmap; ++i)
		if (jn->map[i]->jitdump && jn->map[i]->nsym)
			return 1;
	return 0;
}

const char *pr_jitnames_sym(const struct pr_jitnames *jn,
			    const struct pr_store *store,
			    const struct pr_region *rgn, uint32_t pid,
			    uint64_t ip, uint64_t time, char *buf,
			    size_t size, const void **key1, uint64_t *key2,
			    uint64_t *flo, uint64_t *fhi)
{
	const struct pr_jitsym *s;
	int stale;

	s = pr_jitnames_find(jn, store, rgn, pid, ip, time, &stale);
	if (!s)
		return NULL;
	snprintf(buf, size, "%s+0x%" PRIx64 "%s", s->name, ip - s->start,
		 stale ? " [stale]" : "");
	*key1 = s;
	*key2 = (uint64_t)stale;
	/* the range where this answer holds: the entry within the region */
	*flo = s->start > rgn->start ? s->start : rgn->start;
	*fhi = s->end < rgn->end ? s->end : rgn->end;
	return stale ? s->stale : s->name;
}
