// SPDX-License-Identifier: GPL-2.0
/*
 * pr_export: call stacks per thread from the decoder's calls and returns,
 * written as Chrome trace event JSON and as collapsed stacks (see
 * pr_export.h).
 */
#include "pr_export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* No node, no name. */
#define PR_XNONE	UINT32_MAX

/* A node of the call tree: a stack, its instructions. */
struct pr_xnode {
	uint32_t parent;	/* PR_XNONE: bottom */
	uint32_t name;		/* PR_XNONE: not known */
	uint64_t count;		/* instructions with this stack */
};

/* An open frame: its node, where it started, its order of opening. */
struct pr_xframe {
	uint32_t node;
	uint64_t n0;
	int64_t seq;
};

/* A closed frame: a slice from instruction @n0 to @n1 (virtual clock). */
struct pr_xslice {
	uint32_t name;
	int64_t seq;
	uint64_t n0, n1;
};

/* An instant event. */
struct pr_xmark {
	uint32_t what;
	uint64_t n;
};

/* A point of a thread's clock: perf time @t at virtual instruction @n. */
struct pr_xpoint {
	uint64_t n, t;
};

struct pr_xthread {
	int32_t tid;
	/* The virtual clock: instructions, plus one per suspension or
	 * error (so that what ends before and starts after a break in time
	 * are at different points).
	 */
	uint64_t n;
	struct pr_xframe *fr;
	size_t depth, capfr;
	uint64_t deep;		/* calls beyond the limit still open */
	uint32_t root;		/* the node at the bottom of this segment */
	uint64_t seg_n0;	/* where the segment started */
	size_t callers;		/* callers found by returns in it */
	int64_t seq, rseq;	/* frames opened; callers (negative) */
	int suspended;		/* another thread ran in the queue since */

	/* Clock points: those around events; the first and latest seen. */
	struct pr_xpoint *pt;
	size_t npt, cappt;
	struct pr_xpoint first, cur;
	int timed, need_next;
	uint64_t ntimes;	/* distinct times seen (counted up to 2) */

	struct pr_xslice *sl;
	size_t nsl, capsl;
	struct pr_xmark *mk;
	size_t nmk, capmk;

	uint64_t ncallers, nrestarts, ndeep;
};

struct pr_export {
	unsigned int what;
	/* Interned names; a hash of their indexes. */
	char **name;
	size_t nname, capname;
	uint32_t *nhash;
	size_t capnhash;
	/* The call tree; a hash of (parent, name) to index. */
	struct pr_xnode *node;
	size_t nnode, capnode;
	uint32_t *thash;
	size_t capthash;
	/* Threads; a hash of tid to index; the last one given. */
	struct pr_xthread *th;
	size_t nth, capth;
	uint32_t *hhash;
	size_t caphhash;
	size_t last;
	int closed, failed;
};

/* Grow the array *@p of *@cap elements of @size bytes to hold @n + 1.
 * Returns zero on success, -1 if out of memory.
 */
static int pr_export_grow(void *p, size_t *cap, size_t n, size_t size)
{
	void **pp = p;
	size_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 16;
	if (c > SIZE_MAX / size / 2)
		return -1;
	q = realloc(*pp, c * size);
	if (!q)
		return -1;
	*pp = q;
	*cap = c;
	return 0;
}

static uint64_t pr_export_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static uint64_t pr_export_strhash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; ++s)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The hash of index @i of table @t (0: a name, 1: a node, 2: a thread). */
static uint64_t pr_export_hash_of(const struct pr_export *x, int t, size_t i)
{
	if (t == 0)
		return pr_export_strhash(x->name[i]);
	if (t == 1)
		return pr_export_mix(((uint64_t)x->node[i].parent << 32) |
				     x->node[i].name);
	return pr_export_mix((uint32_t)x->th[i].tid);
}

/* Make room in hash @tab (of @cap slots, PR_XNONE free) for @n + 1
 * entries of table @t.  Returns zero on success, -1 if out of memory.
 */
static int pr_export_rehash(struct pr_export *x, uint32_t **tab, size_t *cap,
			    size_t n, int t)
{
	size_t c = *cap ? *cap : 64, i, j;
	uint32_t *h;

	if ((n + 1) * 2 <= *cap)
		return 0;
	while ((n + 1) * 2 > c)
		c *= 2;
	h = malloc(c * sizeof(*h));
	if (!h)
		return -1;
	memset(h, 0xff, c * sizeof(*h));
	for (i = 0; i < n; ++i) {
		j = pr_export_hash_of(x, t, i) & (c - 1);
		while (h[j] != PR_XNONE)
			j = (j + 1) & (c - 1);
		h[j] = (uint32_t)i;
	}
	free(*tab);
	*tab = h;
	*cap = c;
	return 0;
}

/* Returns the index of name @s, added if new, or PR_XNONE.  A path (a
 * file without symbols) is named by its file name, as --calls does.
 */
static uint32_t pr_export_intern(struct pr_export *x, const char *s)
{
	size_t j;
	char *copy;

	if (!s)
		s = "[unknown]";
	if (s[0] == '/' && strrchr(s, '/')[1])
		s = strrchr(s, '/') + 1;
	if (x->nname >= PR_XNONE - 1 ||
	    pr_export_rehash(x, &x->nhash, &x->capnhash, x->nname, 0) < 0)
		goto fail;
	j = pr_export_strhash(s) & (x->capnhash - 1);
	for (; x->nhash[j] != PR_XNONE; j = (j + 1) & (x->capnhash - 1))
		if (!strcmp(x->name[x->nhash[j]], s))
			return x->nhash[j];
	if (pr_export_grow(&x->name, &x->capname, x->nname,
			   sizeof(*x->name)) < 0)
		goto fail;
	copy = strdup(s);
	if (!copy)
		goto fail;
	x->name[x->nname] = copy;
	x->nhash[j] = (uint32_t)x->nname;
	return (uint32_t)x->nname++;
fail:
	x->failed = 1;
	return PR_XNONE;
}

/* Returns a new node, not in the hash (a segment's bottom), or PR_XNONE. */
static uint32_t pr_export_new_node(struct pr_export *x, uint32_t parent,
				   uint32_t name)
{
	if (x->nnode >= PR_XNONE - 1 ||
	    pr_export_grow(&x->node, &x->capnode, x->nnode,
			   sizeof(*x->node)) < 0) {
		x->failed = 1;
		return PR_XNONE;
	}
	x->node[x->nnode] = (struct pr_xnode){ parent, name, 0 };
	return (uint32_t)x->nnode++;
}

/* Returns the node of calling @name from node @parent, or PR_XNONE. */
static uint32_t pr_export_child(struct pr_export *x, uint32_t parent,
				uint32_t name)
{
	uint64_t h = pr_export_mix(((uint64_t)parent << 32) | name);
	uint32_t i;
	size_t j;

	if (pr_export_rehash(x, &x->thash, &x->capthash, x->nnode, 1) < 0) {
		x->failed = 1;
		return PR_XNONE;
	}
	j = h & (x->capthash - 1);
	for (; x->thash[j] != PR_XNONE; j = (j + 1) & (x->capthash - 1)) {
		i = x->thash[j];
		if (x->node[i].parent == parent && x->node[i].name == name)
			return i;
	}
	i = pr_export_new_node(x, parent, name);
	if (i != PR_XNONE)
		x->thash[j] = i;
	return i;
}

/* Start a new segment of @th at its clock: an unknown bottom frame. */
static void pr_export_segment(struct pr_export *x, struct pr_xthread *th)
{
	th->root = pr_export_new_node(x, PR_XNONE, PR_XNONE);
	th->seg_n0 = th->n;
	th->callers = 0;
}

/* Returns thread @tid's state, added if new, or NULL if out of memory. */
static struct pr_xthread *pr_export_thread(struct pr_export *x, int32_t tid)
{
	struct pr_xthread *th;
	size_t j;

	if (x->last < x->nth && x->th[x->last].tid == tid)
		return &x->th[x->last];
	if (pr_export_rehash(x, &x->hhash, &x->caphhash, x->nth, 2) < 0)
		goto fail;
	j = pr_export_mix((uint32_t)tid) & (x->caphhash - 1);
	for (; x->hhash[j] != PR_XNONE; j = (j + 1) & (x->caphhash - 1))
		if (x->th[x->hhash[j]].tid == tid) {
			x->last = x->hhash[j];
			return &x->th[x->last];
		}
	if (x->nth >= PR_XNONE - 1 ||
	    pr_export_grow(&x->th, &x->capth, x->nth, sizeof(*x->th)) < 0)
		goto fail;
	th = &x->th[x->nth];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->rseq = -1;
	pr_export_segment(x, th);
	x->hhash[j] = (uint32_t)x->nth;
	x->last = x->nth++;
	return th;
fail:
	x->failed = 1;
	return NULL;
}

/* Add clock point @p to @th. */
static void pr_export_point(struct pr_export *x, struct pr_xthread *th,
			    struct pr_xpoint p)
{
	struct pr_xpoint *last = th->npt ? &th->pt[th->npt - 1] : NULL;

	if (last && p.t < last->t)
		p.t = last->t;
	if (last && last->n == p.n && last->t == p.t)
		return;
	if (last && last->n == p.n) {
		/* no instruction between: the later time holds */
		last->t = p.t;
		return;
	}
	if (pr_export_grow(&th->pt, &th->cappt, th->npt, sizeof(*th->pt)) < 0) {
		x->failed = 1;
		return;
	}
	th->pt[th->npt++] = p;
}

/* @th's clock reads @time (0: none) now. */
static void pr_export_clock(struct pr_export *x, struct pr_xthread *th,
			    uint64_t time)
{
	if (!time)
		return;
	if (!th->timed) {
		th->timed = 1;
		th->ntimes = 1;
		th->first = th->cur = (struct pr_xpoint){ th->n, time };
		pr_export_point(x, th, th->cur);
		return;
	}
	if (time <= th->cur.t)
		return;		/* the same, or earlier: it does not go back */
	if (th->ntimes < 2)
		th->ntimes += 1;
	th->cur = (struct pr_xpoint){ th->n, time };
	if (th->need_next) {
		pr_export_point(x, th, th->cur);
		th->need_next = 0;
	}
}

/* An event of @th now: keep the clock points that place it. */
static void pr_export_mark(struct pr_export *x, struct pr_xthread *th)
{
	if (!th->timed)
		return;
	pr_export_point(x, th, th->cur);
	th->need_next = 1;
}

/* @th stops here, at the latest time seen (a break in its trace follows):
 * what ends now must not be placed after the break.
 */
static void pr_export_pin(struct pr_export *x, struct pr_xthread *th)
{
	if (!th->timed)
		return;
	pr_export_point(x, th, (struct pr_xpoint){ th->n, th->cur.t });
	th->need_next = 1;
}

static void pr_export_push(struct pr_export *x, struct pr_xthread *th,
			   uint32_t node, uint64_t n0, int64_t seq)
{
	if (node == PR_XNONE)
		return;
	if (pr_export_grow(&th->fr, &th->capfr, th->depth,
			   sizeof(*th->fr)) < 0) {
		x->failed = 1;
		return;
	}
	th->fr[th->depth++] = (struct pr_xframe){ node, n0, seq };
}

/* Close @th's top frame now. */
static void pr_export_pop(struct pr_export *x, struct pr_xthread *th)
{
	struct pr_xframe *f = &th->fr[--th->depth];

	if (!(x->what & PR_EXPORT_SLICES))
		return;
	if (pr_export_grow(&th->sl, &th->capsl, th->nsl, sizeof(*th->sl)) < 0) {
		x->failed = 1;
		return;
	}
	th->sl[th->nsl++] = (struct pr_xslice){
		.name = x->node[f->node].name, .seq = f->seq,
		.n0 = f->n0, .n1 = th->n,
	};
}

/* Close all of @th's frames now. */
static void pr_export_close_all(struct pr_export *x, struct pr_xthread *th)
{
	while (th->depth)
		pr_export_pop(x, th);
	th->deep = 0;
}

/* Name the unknown bottom frame of @th's segment @name and open it. */
static void pr_export_bottom(struct pr_export *x, struct pr_xthread *th,
			     const char *name)
{
	uint32_t id = pr_export_intern(x, name);

	if (th->depth || th->root == PR_XNONE || id == PR_XNONE)
		return;
	x->node[th->root].name = id;
	pr_export_push(x, th, th->root, th->seg_n0, th->seq++);
}

/* @th, in the queue after another thread ran there: its frames close
 * where it stopped and open again where it goes on, one virtual
 * instruction later.
 */
static void pr_export_resume(struct pr_export *x, struct pr_xthread *th)
{
	struct pr_xframe *save;
	size_t i, depth = th->depth;
	uint64_t deep = th->deep;

	th->suspended = 0;
	if (!depth) {
		th->n += 1;
		pr_export_segment(x, th);
		return;
	}
	save = malloc(depth * sizeof(*save));
	if (!save) {
		x->failed = 1;
		return;
	}
	memcpy(save, th->fr, depth * sizeof(*save));
	pr_export_close_all(x, th);
	th->n += 1;
	th->seg_n0 = th->n;
	for (i = 0; i < depth; ++i)
		pr_export_push(x, th, save[i].node, th->n, save[i].seq);
	th->deep = deep;
	free(save);
}

/* The thread @tid of an event at @time, ready for it; NULL if none. */
static struct pr_xthread *pr_export_at(struct pr_export *x, int32_t tid,
				       uint64_t time)
{
	struct pr_xthread *th;
	size_t prev;

	if (!x || x->closed)
		return NULL;
	prev = x->last;
	th = pr_export_thread(x, tid);
	if (!th)
		return NULL;
	if (prev < x->nth && &x->th[prev] != th && !x->th[prev].suspended) {
		/* another thread ran since: it stopped there */
		pr_export_pin(x, &x->th[prev]);
		x->th[prev].suspended = 1;
	}
	if (th->suspended) {
		pr_export_resume(x, th);
		th->need_next = 1;
	}
	pr_export_clock(x, th, time);
	return th;
}

void pr_export_insns(struct pr_export *x, int32_t tid, uint64_t time,
		     const char *fn, uint64_t n)
{
	struct pr_xthread *th = pr_export_at(x, tid, time);
	uint32_t top, id, leaf;

	if (!th)
		return;
	if (!th->depth && fn)
		pr_export_bottom(x, th, fn);
	top = th->depth ? th->fr[th->depth - 1].node : th->root;
	th->n += n;
	if (top == PR_XNONE)
		return;
	/*
	 * Code entered by a jump (a JIT's trace, a tail call) runs in the
	 * frame of the function that jumped: its instructions count in a
	 * leaf of their own name below that frame, as a sampled stack's
	 * leaf is the function of the sampled IP. Only the counts (the
	 * --folded stacks) have it; the timeline's slices are the calls.
	 */
	id = fn ? pr_export_intern(x, fn) : PR_XNONE;
	if (id != PR_XNONE && id != x->node[top].name) {
		leaf = pr_export_child(x, top, id);
		if (leaf != PR_XNONE)
			top = leaf;
	}
	x->node[top].count += n;
}

void pr_export_call(struct pr_export *x, int32_t tid, uint64_t time,
		    const char *from, const char *to)
{
	struct pr_xthread *th = pr_export_at(x, tid, time);
	uint32_t id;

	if (!th)
		return;
	pr_export_mark(x, th);
	if (!th->depth)
		pr_export_bottom(x, th, from);
	if (th->deep || th->depth >= PR_EXPORT_DEPTH_MAX || !th->depth) {
		th->deep += 1;
		th->ndeep += 1;
		return;
	}
	id = pr_export_intern(x, to);
	if (id == PR_XNONE)
		return;
	pr_export_push(x, th, pr_export_child(x, th->fr[th->depth - 1].node,
					      id), th->n, th->seq++);
}

/* @th returned from its bottom frame to @to: the caller of everything
 * since the segment started, unless there are too many already.
 */
static void pr_export_caller(struct pr_export *x, struct pr_xthread *th,
			     const char *to)
{
	uint32_t id = pr_export_intern(x, to), root;

	if (id == PR_XNONE)
		return;
	if (th->callers >= PR_EXPORT_DEPTH_MAX) {
		th->nrestarts += 1;
		pr_export_close_all(x, th);
		pr_export_segment(x, th);
		pr_export_bottom(x, th, to);
		return;
	}
	root = pr_export_new_node(x, PR_XNONE, id);
	if (root == PR_XNONE)
		return;
	pr_export_pop(x, th);
	x->node[th->root].parent = root;
	th->root = root;
	th->callers += 1;
	th->ncallers += 1;
	pr_export_push(x, th, root, th->seg_n0, th->rseq--);
}

void pr_export_ret(struct pr_export *x, int32_t tid, uint64_t time,
		   const char *from, const char *to)
{
	struct pr_xthread *th = pr_export_at(x, tid, time);

	if (!th)
		return;
	pr_export_mark(x, th);
	if (th->deep) {
		th->deep -= 1;
		return;
	}
	if (!th->depth)
		pr_export_bottom(x, th, from);
	if (th->depth >= 2)
		pr_export_pop(x, th);
	else if (th->depth == 1)
		pr_export_caller(x, th, to);
}

void pr_export_error(struct pr_export *x, int32_t tid, uint64_t time,
		     const char *what)
{
	struct pr_xthread *th = pr_export_at(x, tid, time);
	uint32_t id;

	if (!th)
		return;
	pr_export_pin(x, th);
	pr_export_close_all(x, th);
	if (x->what & PR_EXPORT_SLICES) {
		id = pr_export_intern(x, what);
		if (id != PR_XNONE &&
		    pr_export_grow(&th->mk, &th->capmk, th->nmk,
				   sizeof(*th->mk)) == 0)
			th->mk[th->nmk++] = (struct pr_xmark){ id, th->n };
		else
			x->failed = 1;
	}
	/* what comes after the break is later, also without a new time */
	th->n += 1;
	pr_export_segment(x, th);
	th->need_next = 1;
}

struct pr_export *pr_export_alloc(unsigned int what)
{
	struct pr_export *x = calloc(1, sizeof(*x));

	if (x)
		x->what = what;
	return x;
}

void pr_export_free(struct pr_export *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->nname; ++i)
		free(x->name[i]);
	for (i = 0; i < x->nth; ++i) {
		free(x->th[i].fr);
		free(x->th[i].pt);
		free(x->th[i].sl);
		free(x->th[i].mk);
	}
	free(x->name);
	free(x->nhash);
	free(x->node);
	free(x->thash);
	free(x->th);
	free(x->hhash);
	free(x);
}

/* The trace ended: close every open frame (once). */
static void pr_export_close(struct pr_export *x)
{
	size_t i;

	if (!x || x->closed)
		return;
	for (i = 0; i < x->nth; ++i) {
		pr_export_mark(x, &x->th[i]);
		pr_export_close_all(x, &x->th[i]);
	}
	x->closed = 1;
}

void pr_export_stats(struct pr_export *const *x, size_t n,
		     struct pr_export_stats *st)
{
	double dt = 0, dn = 0;
	size_t i, j;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < n; ++i) {
		if (!x[i])
			continue;
		pr_export_close(x[i]);
		st->failed |= x[i]->failed;
		for (j = 0; j < x[i]->nth; ++j) {
			const struct pr_xthread *th = &x[i]->th[j];

			st->threads += 1;
			st->slices += th->nsl;
			st->errors += th->nmk;
			st->callers += th->ncallers;
			st->restarts += th->nrestarts;
			st->deep += th->ndeep;
			if (th->n && !th->timed)
				st->by_insns = 1;
			if (th->ntimes >= 2 && th->cur.n > th->first.n) {
				dt += (double)(th->cur.t - th->first.t);
				dn += (double)(th->cur.n - th->first.n);
			}
		}
	}
	if (dn > 0)
		st->ns_per_insn = dt / dn;
	else
		st->by_insns = 1;
}

/* --- Chrome trace event JSON --- */

/* The length of the UTF-8 sequence at @s, or 0 if it is not one. */
static size_t pr_export_utf8(const unsigned char *s)
{
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < len; ++i) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* overlong, surrogate or beyond U+10FFFF */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return len;
}

void pr_export_json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len;

	fputc('"', out);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fprintf(out, "\\%c", *p++);
			continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
			continue;
		}
		len = pr_export_utf8(p);
		if (!len) {
			fputs("\\ufffd", out);
			p += 1;
			continue;
		}
		fwrite(p, 1, len, out);
		p += len;
	}
	fputc('"', out);
}

/* The latest time written, in ps: 104 days (hostile clocks go further). */
#define PR_EXPORT_PS_MAX	9000000000000000000ULL

/* @ns as ps, within [0, PR_EXPORT_PS_MAX]. */
static uint64_t pr_export_ps(double ns)
{
	double ps = ns * 1000;

	if (!(ps > 0))
		return 0;
	if (ps >= (double)PR_EXPORT_PS_MAX)
		return PR_EXPORT_PS_MAX;
	return (uint64_t)ps;
}

/* The time of virtual instruction @n of @th (timed) in ps after perf time
 * @t0 (ns), interpolated between the clock points around it; after the
 * last one at the thread's mean rate, or @rate ns per instruction if it
 * has none.
 */
static uint64_t pr_export_time(const struct pr_xthread *th, uint64_t n,
			       uint64_t t0, double rate)
{
	const struct pr_xpoint *a, *b;
	size_t lo = 0, hi = th->npt;
	double ns;

	if (!th->npt)
		return pr_export_ps((double)(th->first.t - t0));
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (th->pt[mid].n <= n)
			lo = mid;
		else
			hi = mid;
	}
	a = &th->pt[lo];
	ns = (double)(a->t - t0);
	if (n <= a->n)
		return pr_export_ps(ns);
	if (lo + 1 < th->npt) {
		b = &th->pt[lo + 1];
		ns += (double)(b->t - a->t) * (double)(n - a->n) /
		      (double)(b->n - a->n);
		return pr_export_ps(ns);
	}
	if (th->cur.n > th->first.n && th->cur.t > th->first.t)
		rate = (double)(th->cur.t - th->first.t) /
		       (double)(th->cur.n - th->first.n);
	return pr_export_ps(ns + rate * (double)(n - a->n));
}

/* A slice placed in time (ticks: ps, or instructions), for sorting. */
struct pr_xout {
	uint64_t t0, t1;
	int64_t seq;
	const char *name;
};

/* Outer frames first: by start, then longer first, then opened first. */
static int pr_export_out_cmp(const void *a, const void *b)
{
	const struct pr_xout *x = a, *y = b;

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->t1 != y->t1)
		return x->t1 > y->t1 ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/* Where a thread's events go, and in what time unit. */
struct pr_xctx {
	FILE *out;
	const struct pr_export_stats *st;
	uint64_t t0;		/* ns: time 0 of the file */
	uint32_t pid;
	int32_t tid;
	int sep;		/* an event was written: ',' before the next */
};

/* The time of virtual instruction @n of @th in ticks of @c. */
static uint64_t pr_export_ticks(const struct pr_xctx *c,
				const struct pr_xthread *th, uint64_t n)
{
	if (c->st->by_insns)
		return n;
	return pr_export_time(th, n, c->t0, c->st->ns_per_insn);
}

/* Write the start of an event of phase @ph at @ticks: "ts" in us (ticks
 * are instructions, or ps printed exactly).
 */
static void pr_export_event(struct pr_xctx *c, char ph, uint64_t ticks)
{
	fprintf(c->out, "%s\n{\"ph\":\"%c\",\"pid\":%" PRIu32 ",\"tid\":%"
		PRId32 ",\"ts\":", c->sep ? "," : "", ph, c->pid, c->tid);
	if (c->st->by_insns)
		fprintf(c->out, "%" PRIu64, ticks);
	else
		fprintf(c->out, "%" PRIu64 ".%06" PRIu64, ticks / 1000000,
			ticks % 1000000);
	c->sep = 1;
}

/* Write the slices of @th as "B"/"E" pairs, nested, in time order. */
static int pr_export_slices(struct pr_xctx *c, const struct pr_export *x,
			    const struct pr_xthread *th)
{
	struct pr_xout *o;
	size_t *stack, depth = 0, i;

	o = malloc((th->nsl ? th->nsl : 1) * sizeof(*o));
	stack = malloc((th->nsl ? th->nsl : 1) * sizeof(*stack));
	if (!o || !stack) {
		free(o);
		free(stack);
		return -1;
	}
	for (i = 0; i < th->nsl; ++i) {
		const struct pr_xslice *s = &th->sl[i];

		o[i].t0 = pr_export_ticks(c, th, s->n0);
		o[i].t1 = pr_export_ticks(c, th, s->n1);
		if (o[i].t1 < o[i].t0)
			o[i].t1 = o[i].t0;
		o[i].seq = s->seq;
		o[i].name = s->name != PR_XNONE ? x->name[s->name] :
			    "[unknown]";
	}
	qsort(o, th->nsl, sizeof(*o), pr_export_out_cmp);
	for (i = 0; i <= th->nsl; ++i) {
		/* close what does not hold the next one */
		while (depth && (i == th->nsl ||
				 o[i].t1 > o[stack[depth - 1]].t1)) {
			/* named too: speedscope matches an E to its B */
			--depth;
			pr_export_event(c, 'E', o[stack[depth]].t1);
			fputs(",\"name\":", c->out);
			pr_export_json_str(c->out, o[stack[depth]].name);
			fputc('}', c->out);
		}
		if (i == th->nsl)
			break;
		pr_export_event(c, 'B', o[i].t0);
		fputs(",\"name\":", c->out);
		pr_export_json_str(c->out, o[i].name);
		fputc('}', c->out);
		stack[depth++] = i;
	}
	free(o);
	free(stack);
	return 0;
}

/* Write @th's events: its slices, then where its trace broke. */
static int pr_export_thread_json(struct pr_xctx *c, const struct pr_export *x,
				 const struct pr_xthread *th)
{
	size_t i;

	if (pr_export_slices(c, x, th) < 0)
		return -1;
	for (i = 0; i < th->nmk; ++i) {
		pr_export_event(c, 'i', pr_export_ticks(c, th, th->mk[i].n));
		fputs(",\"s\":\"t\",\"name\":\"trace error\",\"args\":"
		      "{\"error\":", c->out);
		pr_export_json_str(c->out, x->name[th->mk[i].what]);
		fputs("}}", c->out);
	}
	return 0;
}

static int pr_export_cmp_tid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/* Write the name metadata of every thread of @x (each tid once). */
static int pr_export_names(FILE *out, struct pr_export *const *x, size_t n,
			   pr_export_task_fn task, void *ctx, int *sep)
{
	struct pr_export_task tk;
	int32_t *tids = NULL;
	size_t ntid = 0, cap = 0, i, j;

	for (i = 0; i < n; ++i)
		for (j = 0; x[i] && j < x[i]->nth; ++j) {
			if (pr_export_grow(&tids, &cap, ntid,
					   sizeof(*tids)) < 0) {
				free(tids);
				return -1;
			}
			tids[ntid++] = x[i]->th[j].tid < 0 ? 0 :
				       x[i]->th[j].tid;
		}
	if (ntid)
		qsort(tids, ntid, sizeof(*tids), pr_export_cmp_tid);
	for (i = 0; i < ntid; ++i) {
		if (i && tids[i] == tids[i - 1])
			continue;
		if (!task || task(ctx, tids[i], &tk) < 0)
			tk = (struct pr_export_task){ (uint32_t)tids[i],
						      NULL };
		if (!tids[i])
			tk = (struct pr_export_task){ 0, "[unknown thread]" };
		if (!tk.comm)
			continue;
		fprintf(out, "%s\n{\"ph\":\"M\",\"name\":\"thread_name\","
			"\"pid\":%" PRIu32 ",\"tid\":%" PRId32 ",\"args\":"
			"{\"name\":", *sep ? "," : "", tk.pid, tids[i]);
		pr_export_json_str(out, tk.comm);
		fputs("}}", out);
		if ((uint32_t)tids[i] == tk.pid) {
			fprintf(out, ",\n{\"ph\":\"M\",\"name\":"
				"\"process_name\",\"pid\":%" PRIu32 ",\"tid\":%"
				PRId32 ",\"args\":{\"name\":", tk.pid, tids[i]);
			pr_export_json_str(out, tk.comm);
			fputs("}}", out);
		}
		*sep = 1;
	}
	free(tids);
	return 0;
}

int pr_export_chrome(FILE *out, struct pr_export *const *x, size_t n,
		     pr_export_task_fn task, void *ctx, const char *input)
{
	struct pr_export_stats st;
	struct pr_export_task tk;
	struct pr_xctx c = { .out = out, .st = &st, .t0 = UINT64_MAX };
	size_t i, j;

	if (!out || (n && !x))
		return -1;
	pr_export_stats(x, n, &st);
	for (i = 0; i < n; ++i)
		for (j = 0; x[i] && j < x[i]->nth; ++j)
			if (x[i]->th[j].timed && x[i]->th[j].first.t < c.t0)
				c.t0 = x[i]->th[j].first.t;
	if (c.t0 == UINT64_MAX)
		c.t0 = 0;
	fputs("{\"traceEvents\":[", out);
	if (pr_export_names(out, x, n, task, ctx, &c.sep) < 0)
		return -1;
	for (i = 0; i < n; ++i)
		for (j = 0; x[i] && j < x[i]->nth; ++j) {
			const struct pr_xthread *th = &x[i]->th[j];

			c.tid = th->tid < 0 ? 0 : th->tid;
			if (!task || task(ctx, c.tid, &tk) < 0 || !c.tid)
				tk.pid = (uint32_t)c.tid;
			c.pid = tk.pid;
			if (pr_export_thread_json(&c, x[i], th) < 0)
				return -1;
		}
	fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{"
	      "\"tool\":\"ptreplay\",\"input\":", out);
	pr_export_json_str(out, input ? input : "");
	fprintf(out, ",\"clock\":\"%s\",\"time_zero_ns\":%" PRIu64 ","
		"\"ns_per_instruction\":%.3f,\"threads\":%" PRIu64 ","
		"\"slices\":%" PRIu64 ",\"trace_errors\":%" PRIu64 ","
		"\"callers_from_returns\":%" PRIu64 ",\"stack_restarts\":%"
		PRIu64 ",\"calls_beyond_depth_limit\":%" PRIu64 ","
		"\"complete\":%s}}\n",
		st.by_insns ? "instructions: not enough timing (a thread "
		"without time, or none with two); 1 us = 1 instruction" :
		"perf time since time_zero_ns, from TSC/MTC/CYC, "
		"interpolated by instruction count between timing packets",
		st.by_insns ? 0 : c.t0, st.ns_per_insn, st.threads, st.slices,
		st.errors, st.callers, st.restarts, st.deep,
		st.failed ? "false" : "true");
	return fflush(out) || ferror(out) ? -1 : 0;
}

/* --- collapsed stacks --- */

struct pr_xline {
	char *stack;
	uint64_t count;
};

static int pr_export_line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pr_xline *)a)->stack,
		      ((const struct pr_xline *)b)->stack);
}

/* Append name @s to @buf at *@len (of @cap) as a frame of a folded
 * stack: ';' and control characters become '_'.
 */
static void pr_export_fold_name(char *buf, size_t *len, size_t cap,
				const char *s)
{
	for (; *s && *len + 1 < cap; ++s)
		buf[(*len)++] = *s == ';' || (unsigned char)*s < 0x20 ||
				*s == 0x7f ? '_' : *s;
	buf[*len] = 0;
}

/* Returns the folded stack of node @i of @x (malloc'ed), or NULL. */
static char *pr_export_stack(const struct pr_export *x, uint32_t i)
{
	uint32_t path[2 * PR_EXPORT_DEPTH_MAX + 2];
	size_t np = 0, len = 0, cap = 0, k;
	char *buf;

	for (; i != PR_XNONE && np < sizeof(path) / sizeof(path[0]);
	     i = x->node[i].parent)
		if (x->node[i].name != PR_XNONE)
			path[np++] = x->node[i].name;
	for (k = 0; k < np; ++k)
		cap += strlen(x->name[path[k]]) + 1;
	cap += sizeof("[unknown]");
	buf = malloc(cap);
	if (!buf)
		return NULL;
	buf[0] = 0;
	if (!np)
		pr_export_fold_name(buf, &len, cap, "[unknown]");
	while (np--) {
		pr_export_fold_name(buf, &len, cap, x->name[path[np]]);
		if (np)
			buf[len++] = ';';
		buf[len] = 0;
	}
	return buf;
}

int pr_export_folded(FILE *out, struct pr_export *const *x, size_t n)
{
	struct pr_export_stats st;
	struct pr_xline *l = NULL;
	size_t nl = 0, cap = 0, i, j;
	int ret = -1;

	if (!out || (n && !x))
		return -1;
	pr_export_stats(x, n, &st);
	for (i = 0; i < n; ++i)
		for (j = 0; x[i] && j < x[i]->nnode; ++j) {
			if (!x[i]->node[j].count)
				continue;
			if (pr_export_grow(&l, &cap, nl, sizeof(*l)) < 0)
				goto out;
			l[nl].count = x[i]->node[j].count;
			l[nl].stack = pr_export_stack(x[i], (uint32_t)j);
			if (!l[nl].stack)
				goto out;
			nl += 1;
		}
	if (nl)
		qsort(l, nl, sizeof(*l), pr_export_line_cmp);
	for (i = 0; i < nl; i = j) {
		uint64_t count = 0;

		for (j = i; j < nl && !strcmp(l[j].stack, l[i].stack); ++j)
			count += l[j].count;
		fprintf(out, "%s %" PRIu64 "\n", l[i].stack, count);
	}
	ret = fflush(out) || ferror(out) ? -1 : 0;
out:
	for (i = 0; i < nl; ++i)
		free(l[i].stack);
	free(l);
	return ret;
}
