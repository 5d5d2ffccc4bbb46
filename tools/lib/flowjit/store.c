// SPDX-License-Identifier: GPL-2.0
/*
 * libflowjit: the versioned image store (libflowjit.h states what it
 * answers).
 *
 * Address spaces, and in each its revisions and its retire records, are
 * kept in AVL trees of intervals [start, end) ordered by start, each
 * node with the largest end of its subtree. A stabbing query for an
 * address visits only the nodes that cover it plus O(log n), so its cost
 * does not grow with the number of pages, images of other lengths or
 * retire records elsewhere, and an add is O(log n) however adds and
 * lookups interleave. Nothing is ever removed: an address reused by
 * other code is a new revision with a later (time, seq), and a retire
 * record only hides older revisions from lookups at or after its time.
 * So the answer for (asid, ip, time) does not depend on the order records
 * were added in. Lookups do not write to the store.
 *
 * Memory is linear in the records taken: an image is kept only once all
 * its bytes arrived (the reassembler bounds what is pending), a retire
 * record costs one node, and an image above FLOWJIT_STORE_MAX_LEN is
 * refused before anything is allocated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflowjit.h"

/* A node of an interval tree: [start, end), ordered by start. */
struct flowjit_node {
	struct flowjit_node	*left, *right;
	uint64_t		start, end;
	uint64_t		max_end;	/* the largest end of the subtree */
	int			height;
};

struct flowjit_store_rev {
	struct flowjit_node	node;
	struct flowjit_rev	rev;
};

/* [start, end) of an address space holds no runtime code from time on */
struct flowjit_store_retire {
	struct flowjit_node	node;
	uint64_t		time;
	uint64_t		seq;
};

/* A user JIT revision number seen, and its time. */
struct flowjit_seen {
	uint32_t		revision;
	uint64_t		time;
};

/* The records of one address space; node.start is the asid. */
struct flowjit_store_space {
	struct flowjit_node	node;
	struct flowjit_node	*revs;
	struct flowjit_node	*retires;
	/* user JIT revision numbers seen, ascending, no duplicates */
	struct flowjit_seen	*seen;
	size_t			nr_seen, max_seen;
};

/* Records of any address space were lost in [from, to]. */
struct flowjit_lost {
	uint64_t		from, to;
};

/*
 * At most this many lost windows are kept: beyond, the last one grows to
 * cover the new ones (everything after it is suspect, as it should be
 * with that many losses).
 */
#define FLOWJIT_LOST_MAX	1024

/* Which address space pid used from time on (until end, if not 0). */
struct flowjit_pid_asid {
	uint64_t		asid;
	uint64_t		time;
	uint64_t		end;
};

/* The address spaces of one pid, in the order they were first seen. */
struct flowjit_store_pid {
	struct flowjit_node	node;		/* node.start is the pid */
	struct flowjit_pid_asid	*asids;
	size_t			nr, max;
};

/* A delta whose base revision was not in the store when it came. */
struct flowjit_delta_wait {
	struct flowjit_record	rec;
	uint8_t			*bytes;		/* rec.chunk_len, ours */
	uint64_t		time;
};

struct flowjit_store {
	struct flowjit_reasm		ra;
	struct flowjit_node		*spaces;
	struct flowjit_node		*pids;
	uint64_t			seq;
	struct flowjit_store_stats	stats;
	/* fault images by (asid, tid, time, seq): what ties look for */
	const struct flowjit_rev	**faults;
	size_t				nr_faults, max_faults;
	struct flowjit_lost		*lost;
	size_t				nr_lost;
	/* deltas waiting for their base, oldest first */
	struct flowjit_delta_wait	*waits;
	size_t				nr_waits, max_waits;
	/* revisions of waiting deltas made since flowjit_store_settled() */
	const struct flowjit_rev	**settled;
	size_t				nr_settled, max_settled, next_settled;
};

#define flowjit_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Returns the height of @n's subtree, 0 for none. */
static int flowjit_node_height(const struct flowjit_node *n)
{
	return n ? n->height : 0;
}

/* Recompute @n's height and max_end from its children. */
static void flowjit_node_update(struct flowjit_node *n)
{
	int hl = flowjit_node_height(n->left), hr = flowjit_node_height(n->right);

	n->height = 1 + (hl > hr ? hl : hr);
	n->max_end = n->end;
	if (n->left && n->left->max_end > n->max_end)
		n->max_end = n->left->max_end;
	if (n->right && n->right->max_end > n->max_end)
		n->max_end = n->right->max_end;
}

/* Returns the new root of @n's subtree rotated right (left child up). */
static struct flowjit_node *flowjit_node_rotate_right(struct flowjit_node *n)
{
	struct flowjit_node *l = n->left;

	n->left = l->right;
	l->right = n;
	flowjit_node_update(n);
	flowjit_node_update(l);
	return l;
}

/* Returns the new root of @n's subtree rotated left (right child up). */
static struct flowjit_node *flowjit_node_rotate_left(struct flowjit_node *n)
{
	struct flowjit_node *r = n->right;

	n->right = r->left;
	r->left = n;
	flowjit_node_update(n);
	flowjit_node_update(r);
	return r;
}

/* Returns the root of @n's subtree balanced again after an insert below. */
static struct flowjit_node *flowjit_node_balance(struct flowjit_node *n)
{
	int diff = flowjit_node_height(n->left) - flowjit_node_height(n->right);

	flowjit_node_update(n);
	if (diff > 1) {
		if (flowjit_node_height(n->left->left) < flowjit_node_height(n->left->right))
			n->left = flowjit_node_rotate_left(n->left);
		return flowjit_node_rotate_right(n);
	}
	if (diff < -1) {
		if (flowjit_node_height(n->right->right) < flowjit_node_height(n->right->left))
			n->right = flowjit_node_rotate_right(n->right);
		return flowjit_node_rotate_left(n);
	}
	return n;
}

/*
 * Insert @n into the tree at @root (equal starts after those there).
 * Returns the new root. The depth is at most 1.44 log2(n): recursion is
 * fine.
 */
static struct flowjit_node *flowjit_node_insert(struct flowjit_node *root,
						struct flowjit_node *n)
{
	if (!root) {
		n->left = NULL;
		n->right = NULL;
		flowjit_node_update(n);
		return n;
	}
	if (n->start < root->start)
		root->left = flowjit_node_insert(root->left, n);
	else
		root->right = flowjit_node_insert(root->right, n);
	return flowjit_node_balance(root);
}

/* Returns the first node starting at @start (a key tree), or NULL. */
static struct flowjit_node *flowjit_node_find(struct flowjit_node *n, uint64_t start)
{
	while (n && n->start != start)
		n = start < n->start ? n->left : n->right;
	return n;
}

/*
 * Call @fn(@node, @arg) for every node of @n covering [@lo, @hi] (both
 * inclusive), in no particular order. Returns what the first call that
 * did not return 0 returned, or 0.
 */
static int flowjit_node_overlap(const struct flowjit_node *n, uint64_t lo, uint64_t hi,
				int (*fn)(const struct flowjit_node *node, void *arg),
				void *arg)
{
	int ret;

	while (n && n->max_end > lo) {
		ret = flowjit_node_overlap(n->left, lo, hi, fn, arg);
		if (ret)
			return ret;
		if (n->start > hi)
			return 0;	/* the right subtree starts later still */
		if (n->end > lo) {
			ret = fn(n, arg);
			if (ret)
				return ret;
		}
		n = n->right;
	}
	return 0;
}

/* Free every node of @n with @fn. */
static void flowjit_node_free(struct flowjit_node *n, void (*fn)(struct flowjit_node *node))
{
	while (n) {
		struct flowjit_node *right = n->right;

		flowjit_node_free(n->left, fn);
		fn(n);
		n = right;
	}
}

static void flowjit_store_rev_free(struct flowjit_node *n)
{
	struct flowjit_store_rev *r = flowjit_entry(n, struct flowjit_store_rev, node);

	free((void *)r->rev.bytes);
	free(r);
}

static void flowjit_store_retire_free(struct flowjit_node *n)
{
	free(flowjit_entry(n, struct flowjit_store_retire, node));
}

static void flowjit_store_space_free(struct flowjit_node *n)
{
	struct flowjit_store_space *sp = flowjit_entry(n, struct flowjit_store_space, node);

	free(sp->seen);
	flowjit_node_free(sp->revs, flowjit_store_rev_free);
	flowjit_node_free(sp->retires, flowjit_store_retire_free);
	free(sp);
}

static void flowjit_store_pid_free(struct flowjit_node *n)
{
	struct flowjit_store_pid *p = flowjit_entry(n, struct flowjit_store_pid, node);

	free(p->asids);
	free(p);
}

struct flowjit_store *flowjit_store_alloc(void)
{
	struct flowjit_store *st = calloc(1, sizeof(*st));

	if (st)
		flowjit_reasm_init(&st->ra);
	return st;
}

void flowjit_store_free(struct flowjit_store *st)
{
	if (!st)
		return;
	flowjit_reasm_fini(&st->ra);
	free(st->faults);
	free(st->lost);
	while (st->nr_waits)
		free(st->waits[--st->nr_waits].bytes);
	free(st->waits);
	free(st->settled);
	flowjit_node_free(st->spaces, flowjit_store_space_free);
	flowjit_node_free(st->pids, flowjit_store_pid_free);
	free(st);
}

/* Returns the address space @asid, NULL if it has no record. */
static const struct flowjit_store_space *
flowjit_store_space(const struct flowjit_store *st, uint64_t asid)
{
	const struct flowjit_node *n = flowjit_node_find(st->spaces, asid);

	return n ? flowjit_entry(n, struct flowjit_store_space, node) : NULL;
}

/* Returns the same, added if it is new; NULL if out of memory. */
static struct flowjit_store_space *
flowjit_store_new_space(struct flowjit_store *st, uint64_t asid)
{
	struct flowjit_node *n = flowjit_node_find(st->spaces, asid);
	struct flowjit_store_space *sp;

	if (n)
		return flowjit_entry(n, struct flowjit_store_space, node);
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	/* a key, not a range: an asid of ~0 must not wrap end to 0 */
	sp->node.start = asid;
	sp->node.end = asid;
	st->spaces = flowjit_node_insert(st->spaces, &sp->node);
	return sp;
}

/* Returns true if (@t1, @s1) comes after (@t2, @s2). */
static bool flowjit_later(uint64_t t1, uint64_t s1, uint64_t t2, uint64_t s2)
{
	return t1 > t2 || (t1 == t2 && s1 > s2);
}

/* Returns the pid @pid's entry, added if it is new; NULL if out of memory. */
static struct flowjit_store_pid *flowjit_store_new_pid(struct flowjit_store *st, uint32_t pid)
{
	struct flowjit_node *n = flowjit_node_find(st->pids, pid);
	struct flowjit_store_pid *p;

	if (n)
		return flowjit_entry(n, struct flowjit_store_pid, node);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->node.start = pid;
	p->node.end = pid;
	st->pids = flowjit_node_insert(st->pids, &p->node);
	return p;
}

/*
 * Note that @pid used @asid at @time: from an image, or with @end set,
 * from the retire record of the whole address space (exit, exec).
 * Returns 0, or -ENOMEM.
 */
static int flowjit_store_note_pid(struct flowjit_store *st, uint32_t pid, uint64_t asid,
				  uint64_t time, bool end)
{
	struct flowjit_store_pid *p;
	struct flowjit_pid_asid *a;
	size_t i;

	if (asid == FLOWJIT_ASID_KERNEL || !pid)
		return 0;
	if (end && !flowjit_node_find(st->pids, pid))
		return 0;	/* an address space without images */
	p = flowjit_store_new_pid(st, pid);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < p->nr; i++) {
		a = &p->asids[i];
		if (a->asid != asid)
			continue;
		if (end) {
			if (!a->end || time < a->end)
				a->end = time;
		} else if (time < a->time) {
			a->time = time;	/* records came out of time order */
		}
		return 0;
	}
	if (end)
		return 0;
	if (p->nr == p->max) {
		size_t max = p->max ? 2 * p->max : 4;

		a = realloc(p->asids, max * sizeof(*a));
		if (!a)
			return -ENOMEM;
		p->asids = a;
		p->max = max;
	}
	p->asids[p->nr++] = (struct flowjit_pid_asid){ .asid = asid, .time = time };
	return 0;
}

int flowjit_store_pid_asid(const struct flowjit_store *st, uint32_t pid, uint64_t time,
			   uint64_t *asid)
{
	const struct flowjit_pid_asid *best = NULL, *first = NULL;
	const struct flowjit_store_pid *p;
	const struct flowjit_node *n;
	size_t i;

	if (!st || !asid)
		return -EINVAL;
	n = flowjit_node_find(st->pids, pid);
	if (!n)
		return -ENOENT;
	p = flowjit_entry(n, struct flowjit_store_pid, node);
	for (i = 0; i < p->nr; i++) {
		const struct flowjit_pid_asid *a = &p->asids[i];

		/* not an address space that ended at or before @time */
		if (a->time <= time && (!a->end || a->end > time) &&
		    (!best || a->time >= best->time))
			best = a;
		if (a->time > time && (!first || a->time < first->time))
			first = a;
	}
	if (!best)
		best = first;
	if (!best)
		return -ENOENT;
	*asid = best->asid;
	return 0;
}

/* Returns 0 or -ENOMEM. */
static int flowjit_store_add_retire(struct flowjit_store *st,
				    const struct flowjit_record *rec, uint64_t time)
{
	struct flowjit_store_space *sp;
	struct flowjit_store_retire *r;

	st->stats.retires++;
	if (rec->len) {
		sp = flowjit_store_new_space(st, rec->asid);
		r = calloc(1, sizeof(*r));
		if (!sp || !r) {
			free(r);
			return -ENOMEM;
		}
		r->node.start = rec->addr;
		r->node.end = rec->addr + rec->len < rec->addr ? UINT64_MAX :
			      rec->addr + rec->len;
		r->time = time;
		r->seq = st->seq++;
		sp->retires = flowjit_node_insert(sp->retires, &r->node);
		st->stats.retire_ranges++;
	}
	/*
	 * The retire record of a whole address space: addr 0, len
	 * TASK_SIZE_MAX (at least x86-64's 0x7ffffffff000 of 4-level paging).
	 */
	if (!rec->addr && rec->len >= 0x7ffffffff000ULL)
		return flowjit_store_note_pid(st, rec->pid, rec->asid, time, true);
	return 0;
}

/* Returns true if @rev is a user JIT image an exec fault made. */
static bool flowjit_rev_is_fault(const struct flowjit_rev *rev)
{
	return rev->kind == FLOWJIT_KIND_USER_JIT && rev->asid != FLOWJIT_ASID_KERNEL &&
	       !(rev->flags & FLOWJIT_F_EXISTING);
}

/* Returns true if fault image @a comes before @b in the fault index. */
static bool flowjit_fault_before(const struct flowjit_rev *a, const struct flowjit_rev *b)
{
	if (a->asid != b->asid)
		return a->asid < b->asid;
	if (a->tid != b->tid)
		return a->tid < b->tid;
	return flowjit_later(b->time, b->seq, a->time, a->seq);
}

/*
 * Returns the index of the first fault image of @st at or after (@asid,
 * @tid, @time, @seq) in index order: binary search.
 */
static size_t flowjit_store_fault_pos(const struct flowjit_store *st, uint64_t asid,
				      uint32_t tid, uint64_t time, uint64_t seq)
{
	struct flowjit_rev key = { .asid = asid, .tid = tid, .time = time, .seq = seq };
	size_t lo = 0, hi = st->nr_faults;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (flowjit_fault_before(st->faults[mid], &key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Put fault image @rev in the index. Records come mostly in time order,
 * so the insert is mostly at the end. Returns 0 or -ENOMEM.
 */
static int flowjit_store_note_fault(struct flowjit_store *st, const struct flowjit_rev *rev)
{
	size_t pos;

	if (st->nr_faults == st->max_faults) {
		size_t max = st->max_faults ? 2 * st->max_faults : 64;
		const struct flowjit_rev **f = realloc(st->faults, max * sizeof(*f));

		if (!f)
			return -ENOMEM;
		st->faults = f;
		st->max_faults = max;
	}
	pos = flowjit_store_fault_pos(st, rev->asid, rev->tid, rev->time, rev->seq);
	memmove(st->faults + pos + 1, st->faults + pos,
		(st->nr_faults - pos) * sizeof(*st->faults));
	st->faults[pos] = rev;
	st->nr_faults++;
	st->stats.faults++;
	return 0;
}

/* Returns the index of the first revision number >= @revision in @sp's seen. */
static size_t flowjit_space_seen_pos(const struct flowjit_store_space *sp, uint32_t revision)
{
	size_t lo = 0, hi = sp->nr_seen;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->seen[mid].revision < revision)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Note @rev's revision number as seen in @sp. Returns 0 or -ENOMEM. */
static int flowjit_store_note_seen(struct flowjit_store_space *sp, const struct flowjit_rev *rev)
{
	size_t pos = flowjit_space_seen_pos(sp, rev->revision);

	if (pos < sp->nr_seen && sp->seen[pos].revision == rev->revision)
		return 0;	/* the same image again, e.g. from two events */
	if (sp->nr_seen == sp->max_seen) {
		size_t max = sp->max_seen ? 2 * sp->max_seen : 16;
		struct flowjit_seen *n = realloc(sp->seen, max * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sp->seen = n;
		sp->max_seen = max;
	}
	memmove(sp->seen + pos + 1, sp->seen + pos, (sp->nr_seen - pos) * sizeof(*sp->seen));
	sp->seen[pos] = (struct flowjit_seen){ .revision = rev->revision, .time = rev->time };
	sp->nr_seen++;
	return 0;
}

/* Make @img a revision of @time; takes its bytes. Returns 0 or -ENOMEM. */
static int flowjit_store_add_image(struct flowjit_store *st, struct flowjit_image *img,
				   uint64_t time, const struct flowjit_rev **added)
{
	const struct flowjit_record *rec = &img->rec;
	struct flowjit_store_space *sp;
	struct flowjit_store_rev *r;

	if (!rec->len || rec->addr + rec->len <= rec->addr)
		return 0;	/* nothing to decode, or wraps around */
	sp = flowjit_store_new_space(st, rec->asid);
	if (!sp)
		return -ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->rev = (struct flowjit_rev){
		.asid		= rec->asid,
		.start		= rec->addr,
		.end		= rec->addr + rec->len,
		.time		= time,
		.seq		= st->seq++,
		.id		= rec->id,
		.sub		= rec->sub,
		.revision	= rec->revision,
		.pid		= rec->pid,
		.tid		= rec->tid,
		.flags		= rec->flags,
		.kind		= rec->kind,
		.bytes		= img->bytes,
	};
	img->bytes = NULL;	/* the revision owns them now */
	r->node.start = r->rev.start;
	r->node.end = r->rev.end;
	sp->revs = flowjit_node_insert(sp->revs, &r->node);
	st->stats.revs++;
	st->stats.images++;
	if (rec->flags & FLOWJIT_F_PINNED)
		st->stats.pinned++;
	if (added)
		*added = &r->rev;
	if (flowjit_rev_is_fault(&r->rev) &&
	    (flowjit_store_note_fault(st, &r->rev) ||
	     flowjit_store_note_seen(sp, &r->rev)))
		return -ENOMEM;
	return flowjit_store_note_pid(st, rec->pid, rec->asid, time, false);
}

/* The revision a delta of @rec applies to, while looking for it. */
struct flowjit_base_query {
	const struct flowjit_record	*rec;
	const struct flowjit_rev	*found;
};

/* flowjit_node_overlap() callback: stop at the base revision. */
static int flowjit_store_is_base(const struct flowjit_node *n, void *arg)
{
	const struct flowjit_rev *rev = &flowjit_entry(n, struct flowjit_store_rev, node)->rev;
	struct flowjit_base_query *q = arg;

	if (rev->start != q->rec->addr || rev->end != q->rec->addr + q->rec->len ||
	    rev->revision != q->rec->base || rev->kind != q->rec->kind)
		return 0;
	q->found = rev;
	return 1;
}

/* Returns the revision delta @rec applies to, NULL if the store has none. */
static const struct flowjit_rev *flowjit_store_base(const struct flowjit_store *st,
						    const struct flowjit_record *rec)
{
	const struct flowjit_store_space *sp = flowjit_store_space(st, rec->asid);
	struct flowjit_base_query q = { .rec = rec };

	if (sp)
		flowjit_node_overlap(sp->revs, rec->addr, rec->addr + rec->len - 1,
				     flowjit_store_is_base, &q);
	return q.found;
}

/*
 * Make @img the revision delta @rec (pieces @pieces) makes of @base (of
 * zeros if @base is NULL: rec->base 0).
 * Returns 0, -EBADMSG if the result's CRC-32C is not rec->csum, -ENOMEM.
 */
static int flowjit_delta_apply(const struct flowjit_record *rec, const uint8_t *pieces,
			       const struct flowjit_rev *base, struct flowjit_image *img)
{
	struct flowjit_delta_piece piece;
	uint32_t at = 0;

	img->rec = *rec;
	img->bytes = malloc(rec->len);
	if (!img->bytes)
		return -ENOMEM;
	/* base 0: the pieces are what is not zero */
	if (base)
		memcpy(img->bytes, base->bytes, rec->len);
	else
		memset(img->bytes, 0, rec->len);
	/* flowjit_chunk_parse() checked the pieces */
	while (at < rec->chunk_len) {
		memcpy(&piece, pieces + at, sizeof(piece));
		at += sizeof(piece);
		memcpy(img->bytes + piece.off, pieces + at, piece.len);
		at += piece.len;
	}
	if (flowjit_csum(img->bytes, rec->len) != rec->csum) {
		free(img->bytes);
		img->bytes = NULL;
		return -EBADMSG;
	}
	return 0;
}

/*
 * Hide [addr, addr + len) of @rec from @time on: a delta without its base
 * or with a wrong result, so that nothing answers there rather than the
 * older bytes. Returns 0 or -ENOMEM.
 */
static int flowjit_store_hide(struct flowjit_store *st, const struct flowjit_record *rec,
			      uint64_t time)
{
	struct flowjit_store_space *sp = flowjit_store_new_space(st, rec->asid);
	struct flowjit_store_retire *r = calloc(1, sizeof(*r));
	struct flowjit_rev seen = {
		.asid = rec->asid, .revision = rec->revision, .time = time,
	};

	if (!sp || !r) {
		free(r);
		return -ENOMEM;
	}
	r->node.start = rec->addr;
	r->node.end = rec->addr + rec->len;
	r->time = time;
	r->seq = st->seq++;
	sp->retires = flowjit_node_insert(sp->retires, &r->node);
	/* its revision number is not missing: this page's bytes are */
	if (rec->kind == FLOWJIT_KIND_USER_JIT && !(rec->flags & FLOWJIT_F_EXISTING))
		return flowjit_store_note_seen(sp, &seen);
	return 0;
}

static int flowjit_store_add_delta(struct flowjit_store *st, const struct flowjit_record *rec,
				   const uint8_t *pieces, uint64_t time,
				   const struct flowjit_rev **added, bool settle);

/* Remember delta @rec until its base comes. Returns 0 or -ENOMEM. */
static int flowjit_store_wait(struct flowjit_store *st, const struct flowjit_record *rec,
			      const uint8_t *pieces, uint64_t time)
{
	struct flowjit_delta_wait *w;

	if (st->nr_waits == FLOWJIT_PENDING_MAX) {
		/* the oldest stays hidden for good */
		free(st->waits[0].bytes);
		memmove(st->waits, st->waits + 1, --st->nr_waits * sizeof(*st->waits));
		st->stats.delta_no_base++;
	}
	if (st->nr_waits == st->max_waits) {
		size_t max = st->max_waits ? 2 * st->max_waits : 8;

		w = realloc(st->waits, max * sizeof(*w));
		if (!w)
			return -ENOMEM;
		st->waits = w;
		st->max_waits = max;
	}
	w = &st->waits[st->nr_waits];
	w->bytes = malloc(rec->chunk_len);
	if (!w->bytes)
		return -ENOMEM;
	memcpy(w->bytes, pieces, rec->chunk_len);
	w->rec = *rec;
	w->time = time;
	st->nr_waits++;
	return 0;
}

/* Queue @rev for flowjit_store_settled(). Returns 0 or -ENOMEM. */
static int flowjit_store_note_settled(struct flowjit_store *st, const struct flowjit_rev *rev)
{
	if (st->nr_settled == st->max_settled) {
		size_t max = st->max_settled ? 2 * st->max_settled : 8;
		const struct flowjit_rev **n = realloc(st->settled, max * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->settled = n;
		st->max_settled = max;
	}
	st->settled[st->nr_settled++] = rev;
	return 0;
}

/* Apply the deltas waiting for @rev. Returns 0 or -ENOMEM. */
static int flowjit_store_wake(struct flowjit_store *st, const struct flowjit_rev *rev)
{
	const struct flowjit_rev *made;
	struct flowjit_delta_wait w;
	size_t i = 0;
	int err;

	while (i < st->nr_waits) {
		w = st->waits[i];
		if (w.rec.asid != rev->asid || w.rec.addr != rev->start ||
		    w.rec.addr + w.rec.len != rev->end || w.rec.base != rev->revision ||
		    w.rec.kind != rev->kind) {
			i++;
			continue;
		}
		memmove(st->waits + i, st->waits + i + 1,
			(--st->nr_waits - i) * sizeof(*st->waits));
		made = NULL;
		err = flowjit_store_add_delta(st, &w.rec, w.bytes, w.time, &made, true);
		free(w.bytes);
		if (err)
			return err;
		i = 0;	/* the waits moved */
	}
	return 0;
}

/*
 * Add delta @rec with @pieces at @time: a revision made of its base, or,
 * without the base yet, the range hidden from @time until the base comes.
 * With @settle, queue the revision for flowjit_store_settled().
 */
static int flowjit_store_add_delta(struct flowjit_store *st, const struct flowjit_record *rec,
				   const uint8_t *pieces, uint64_t time,
				   const struct flowjit_rev **added, bool settle)
{
	const struct flowjit_rev *base = NULL;
	struct flowjit_image img;
	int err;

	if (rec->base)
		base = flowjit_store_base(st, rec);
	if (rec->base && !base) {
		err = flowjit_store_hide(st, rec, time);
		return err ? err : flowjit_store_wait(st, rec, pieces, time);
	}
	err = flowjit_delta_apply(rec, pieces, base, &img);
	if (err == -EBADMSG) {
		st->stats.csum_errors++;
		st->stats.delta_bad++;
		return flowjit_store_hide(st, rec, time);
	}
	if (err)
		return err;
	img.rec.op = FLOWJIT_OP_IMAGE;
	img.rec.base = 0;
	img.rec.chunk_len = rec->len;
	/* the revision is newer than a hide of the same time: added later */
	err = flowjit_store_add_image(st, &img, time, added);
	free(img.bytes);
	if (!err && settle)
		err = flowjit_store_note_settled(st, *added);
	if (err)
		return err;
	st->stats.deltas++;
	return flowjit_store_wake(st, *added);
}

const struct flowjit_rev *flowjit_store_settled(struct flowjit_store *st)
{
	if (!st)
		return NULL;
	if (st->next_settled == st->nr_settled) {
		st->nr_settled = 0;
		st->next_settled = 0;
		return NULL;
	}
	return st->settled[st->next_settled++];
}

int flowjit_store_add_chunk(struct flowjit_store *st, const struct flowjit_chunk *chunk,
			    uint64_t time, const struct flowjit_rev **added)
{
	const struct flowjit_rev *made = NULL;
	const struct flowjit_record *rec;
	struct flowjit_counts was;
	struct flowjit_image img;
	int err;

	if (added)
		*added = NULL;
	if (!st || !chunk)
		return -EINVAL;
	rec = &chunk->rec;
	st->stats.records++;
	if (rec->op == FLOWJIT_OP_RETIRE)
		return flowjit_store_add_retire(st, rec, time);
	if (rec->op == FLOWJIT_OP_DELTA) {
		err = flowjit_store_add_delta(st, rec, chunk->bytes, time, &made, false);
		if (added)
			*added = made;
		return err;
	}
	if (rec->len > FLOWJIT_STORE_MAX_LEN) {
		st->stats.bad_records++;
		st->stats.too_large++;
		return 0;
	}
	was = st->ra.counts;
	/* the image is live from the chunk that finishes it on */
	err = flowjit_reasm_add(&st->ra, chunk, time, &img);
	if (st->ra.counts.overlap != was.overlap || st->ra.counts.incomplete != was.incomplete)
		st->stats.chunk_errors++;
	st->stats.overlaps += st->ra.counts.overlap - was.overlap;
	st->stats.incomplete += st->ra.counts.incomplete - was.incomplete;
	if (st->ra.counts.bad_csum != was.bad_csum)
		st->stats.csum_errors++;
	if (err <= 0)
		return err;
	err = flowjit_store_add_image(st, &img, time, &made);
	free(img.bytes);
	if (added)
		*added = made;
	return err ? err : flowjit_store_wake(st, made);
}

void flowjit_store_add_refused(struct flowjit_store *st, int err)
{
	if (!st)
		return;
	st->stats.records++;
	if (err == -EOPNOTSUPP)
		st->stats.unknown_version++;
	else
		st->stats.bad_records++;
}

int flowjit_store_add_record(struct flowjit_store *st, const void *body, size_t size,
			     uint64_t time, const struct flowjit_rev **added, const char **why)
{
	struct flowjit_chunk chunk;
	int err;

	if (added)
		*added = NULL;
	if (why)
		*why = NULL;
	if (!st || !body)
		return -EINVAL;
	err = flowjit_chunk_parse(&chunk, body, size, why);
	if (err) {
		flowjit_store_add_refused(st, err);
		return 0;
	}
	return flowjit_store_add_chunk(st, &chunk, time, added);
}

/* Add the revision numbers @n's spaces never saw to *@missing. */
static void flowjit_count_missing(const struct flowjit_node *n, uint64_t *missing)
{
	const struct flowjit_store_space *sp;
	size_t i;

	if (!n)
		return;
	sp = flowjit_entry(n, struct flowjit_store_space, node);
	for (i = 1; i < sp->nr_seen; i++)
		*missing += sp->seen[i].revision - sp->seen[i - 1].revision - 1;
	flowjit_count_missing(n->left, missing);
	flowjit_count_missing(n->right, missing);
}

void flowjit_store_stats(const struct flowjit_store *st, struct flowjit_store_stats *stats)
{
	if (!st || !stats)
		return;
	*stats = st->stats;
	stats->pending = st->ra.nr_pending;
	stats->lost_windows = st->nr_lost;
	stats->missing_revs = 0;
	flowjit_count_missing(st->spaces, &stats->missing_revs);
	stats->delta_no_base += st->nr_waits;
}

int flowjit_store_add_lost(struct flowjit_store *st, uint64_t from, uint64_t to)
{
	struct flowjit_lost *l;

	if (!st || from > to)
		return -EINVAL;
	if (st->nr_lost == FLOWJIT_LOST_MAX) {
		l = &st->lost[st->nr_lost - 1];
		if (from < l->from)
			l->from = from;
		if (to > l->to)
			l->to = to;
		return 0;
	}
	if (!st->lost) {
		st->lost = calloc(FLOWJIT_LOST_MAX, sizeof(*st->lost));
		if (!st->lost)
			return -ENOMEM;
	}
	st->lost[st->nr_lost++] = (struct flowjit_lost){ .from = from, .to = to };
	return 0;
}

/*
 * Returns true if a revision number of @sp after @rev's is missing with
 * neighbours that let it lie in (@rev's time, @time]: its seen
 * neighbours a < m < b have a's time < @time and b's time > @rev's time,
 * or there is no b (then only a lost window can say).
 */
static bool flowjit_space_gap_after(const struct flowjit_store_space *sp,
				    const struct flowjit_rev *rev, uint64_t time)
{
	size_t i = flowjit_space_seen_pos(sp, rev->revision);

	/* numbers are given in time order: look from @rev's on */
	for (; i + 1 < sp->nr_seen; i++) {
		const struct flowjit_seen *a = &sp->seen[i], *b = &sp->seen[i + 1];

		if (a->time >= time)
			break;
		if (b->revision - a->revision > 1 && b->time > rev->time)
			return true;
	}
	return false;
}

bool flowjit_store_suspect(const struct flowjit_store *st, const struct flowjit_rev *rev,
			   uint64_t time)
{
	const struct flowjit_store_space *sp;
	size_t i;

	if (!st || !rev)
		return false;
	for (i = 0; i < st->nr_lost; i++)
		if (st->lost[i].to > rev->time && st->lost[i].from < time)
			return true;
	if (rev->kind != FLOWJIT_KIND_USER_JIT)
		return false;
	if (rev->flags & FLOWJIT_F_PINNED)
		return true;
	sp = flowjit_store_space(st, rev->asid);
	return sp && flowjit_space_gap_after(sp, rev, time);
}

/* What flowjit_store_unordered() looks for: in [lo, hi), up to time. */
struct flowjit_store_uo {
	const struct flowjit_rev	*rev;
	uint64_t			lo, hi, time;
};

/* Returns 1 if the revision at @n is newer than @arg's, up to its time,
 * and its bytes differ from it in its range (stops the walk).
 */
static int flowjit_store_differs(const struct flowjit_node *n, void *arg)
{
	const struct flowjit_store_rev *r = flowjit_entry(n, struct flowjit_store_rev, node);
	const struct flowjit_store_uo *u = arg;
	uint64_t lo = u->lo > r->rev.start ? u->lo : r->rev.start;
	uint64_t hi = u->hi < r->rev.end ? u->hi : r->rev.end;

	if (lo >= hi || r->rev.time > u->time ||
	    !flowjit_later(r->rev.time, r->rev.seq, u->rev->time, u->rev->seq))
		return 0;
	return memcmp(r->rev.bytes + (lo - r->rev.start),
		      u->rev->bytes + (lo - u->rev->start), hi - lo) != 0;
}

bool flowjit_store_unordered(const struct flowjit_store *st, const struct flowjit_rev *rev,
			     uint64_t lo, uint64_t hi, uint64_t time)
{
	const struct flowjit_store_space *sp;
	struct flowjit_store_uo u = { .rev = rev, .time = time };

	if (!st || !rev || time <= rev->time)
		return false;
	u.lo = lo < rev->start ? rev->start : lo;
	u.hi = hi > rev->end ? rev->end : hi;
	sp = flowjit_store_space(st, rev->asid);
	if (!sp || u.lo >= u.hi)
		return false;
	/* every revision up to @time may have run, retired since or not */
	return flowjit_node_overlap(sp->revs, u.lo, u.hi - 1, flowjit_store_differs, &u);
}

const struct flowjit_rev *flowjit_store_next_fault(const struct flowjit_store *st,
						   uint64_t asid, uint32_t tid,
						   uint64_t time, uint64_t seq)
{
	size_t pos;

	if (!st || seq == UINT64_MAX)
		return NULL;
	/* the first after (time, seq) is the first at or after (time, seq + 1) */
	pos = flowjit_store_fault_pos(st, asid, tid, time, seq + 1);
	if (pos == st->nr_faults || st->faults[pos]->asid != asid ||
	    st->faults[pos]->tid != tid)
		return NULL;
	return st->faults[pos];
}

/* What the lookup callbacks are given: the question and the answer so far. */
struct flowjit_store_query {
	uint64_t			ip, time;
	bool				late;
	const struct flowjit_store_rev	*pick;
	uint64_t			lo, hi;		/* the answer is the same in */
};

/* Pick the revision at @n for @arg's query if it is a better answer. */
static int flowjit_store_pick_one(const struct flowjit_node *n, void *arg)
{
	const struct flowjit_store_rev *r = flowjit_entry(n, struct flowjit_store_rev, node);
	struct flowjit_store_query *q = arg;
	const struct flowjit_rev *p = q->pick ? &q->pick->rev : NULL;
	bool after = r->rev.time > q->time;

	if (after != q->late)
		return 0;
	if (!p || (q->late ? flowjit_later(p->time, p->seq, r->rev.time, r->rev.seq) :
			     flowjit_later(r->rev.time, r->rev.seq, p->time, p->seq)))
		q->pick = r;
	return 0;
}

/*
 * Returns the newest revision of @sp covering @ip at or before @time, or
 * with @late the first one after @time; NULL if there is none.
 */
static const struct flowjit_store_rev *
flowjit_store_pick(const struct flowjit_store_space *sp, uint64_t ip,
		   uint64_t time, bool late)
{
	struct flowjit_store_query q = { .ip = ip, .time = time, .late = late };

	flowjit_node_overlap(sp->revs, ip, ip, flowjit_store_pick_one, &q);
	return q.pick;
}

/* Returns 1 if the retire record at @n hides @arg's pick (stops the walk). */
static int flowjit_store_hides(const struct flowjit_node *n, void *arg)
{
	const struct flowjit_store_retire *t =
		flowjit_entry(n, struct flowjit_store_retire, node);
	const struct flowjit_store_query *q = arg;

	return t->time <= q->time &&
	       flowjit_later(t->time, t->seq, q->pick->rev.time, q->pick->rev.seq);
}

/* Returns the revision find() answers in @sp, or NULL. */
static const struct flowjit_store_rev *
flowjit_store_live(const struct flowjit_store_space *sp, uint64_t ip,
		   uint64_t time)
{
	struct flowjit_store_query q = { .ip = ip, .time = time };

	q.pick = flowjit_store_pick(sp, ip, time, false);
	if (q.pick && flowjit_node_overlap(sp->retires, ip, ip, flowjit_store_hides, &q))
		return NULL;
	return q.pick;
}

const struct flowjit_rev *flowjit_store_find(const struct flowjit_store *st, uint64_t asid,
					     uint64_t ip, uint64_t time)
{
	const struct flowjit_store_space *sp = st ? flowjit_store_space(st, asid) : NULL;
	const struct flowjit_store_rev *r = sp ? flowjit_store_live(sp, ip, time) : NULL;

	return r ? &r->rev : NULL;
}

const struct flowjit_rev *flowjit_store_find_late(const struct flowjit_store *st,
						  uint64_t asid, uint64_t ip, uint64_t time)
{
	const struct flowjit_store_space *sp = st ? flowjit_store_space(st, asid) : NULL;
	const struct flowjit_store_rev *r = sp ? flowjit_store_pick(sp, ip, time, true) : NULL;

	return r ? &r->rev : NULL;
}

/*
 * Returns the first start above @at among the nodes of @n (ordered by
 * start), or @end if none is below @end.
 */
static uint64_t flowjit_node_next_start(const struct flowjit_node *n, uint64_t at,
					uint64_t end)
{
	while (n) {
		if (n->start > at) {
			if (n->start < end)
				end = n->start;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return end;
}

/* Returns the last start at or below @at among the nodes of @n, or 0. */
static uint64_t flowjit_node_prev_start(const struct flowjit_node *n, uint64_t at)
{
	uint64_t start = 0;

	while (n) {
		if (n->start <= at) {
			start = n->start;
			n = n->right;
		} else {
			n = n->left;
		}
	}
	return start;
}

/* Narrow @arg's [lo, hi) to the retire record at @n's start and end. */
static int flowjit_store_cut_retire(const struct flowjit_node *n, void *arg)
{
	struct flowjit_store_query *q = arg;

	if (n->start > q->ip && n->start < q->hi)
		q->hi = n->start;
	if (n->end > q->ip && n->end < q->hi)
		q->hi = n->end;
	if (n->start <= q->ip && n->start > q->lo)
		q->lo = n->start;
	if (n->end <= q->ip && n->end > q->lo)
		q->lo = n->end;
	return 0;
}

/* Raise @arg's lo to the end of the revision at @n if it ends at or below ip. */
static int flowjit_store_cut_rev_end(const struct flowjit_node *n, void *arg)
{
	struct flowjit_store_query *q = arg;

	if (n->end <= q->ip && n->end > q->lo)
		q->lo = n->end;
	return 0;
}

/*
 * Narrow @q's [lo, hi), the range of the revision answered (or without
 * one, from the last revision start at or below ip on), to where the
 * answer for q->ip stays the same: up to where another revision starts,
 * down to where one not covering ip ends, and to where a retire record
 * begins or ends. The
 * other ends of revisions covering ip do not matter: an older one loses
 * to the answer on both sides; a newer one is not live at q->time, or is
 * hidden by a retire record that hides the older ones on both sides too
 * (the range stops at its ends). Without an answer, every revision
 * covering ip is either not live at q->time anywhere or hidden by retire
 * records whose ends stop the range. lo is only worked out with
 * @want_lo, at the cost of visiting the revisions of [lo, ip).
 */
static void flowjit_store_same(const struct flowjit_store_space *sp,
			       struct flowjit_store_query *q, bool want_lo)
{
	uint64_t from = want_lo ? q->lo : q->ip;

	q->hi = flowjit_node_next_start(sp->revs, q->ip, q->hi);
	if (want_lo && q->lo < q->ip)
		flowjit_node_overlap(sp->revs, q->lo, q->ip - 1, flowjit_store_cut_rev_end, q);
	flowjit_node_overlap(sp->retires, from, q->hi - 1, flowjit_store_cut_retire, q);
}

const struct flowjit_rev *flowjit_store_lookup(const struct flowjit_store *st, uint64_t asid,
					       uint64_t ip, uint64_t time, bool late,
					       uint64_t *lo, uint64_t *hi)
{
	const struct flowjit_store_space *sp = st ? flowjit_store_space(st, asid) : NULL;
	struct flowjit_store_query q = { .ip = ip, .time = time, .hi = UINT64_MAX };

	if (sp) {
		q.pick = flowjit_store_live(sp, ip, time);
		if (!q.pick && late)
			q.pick = flowjit_store_pick(sp, ip, time, true);
	}
	if (q.pick) {
		q.lo = q.pick->rev.start;
		q.hi = q.pick->rev.end;
	} else if (sp && lo) {
		/*
		 * Without an answer the range starts as the addresses from
		 * the last revision start at or below ip (no revision starts
		 * after it up to ip) to the end of the address space, hi
		 * UINT64_MAX standing for it: no revision covers the last
		 * address, so it has no answer either.
		 */
		q.lo = flowjit_node_prev_start(sp->revs, ip);
	}
	if (sp)
		flowjit_store_same(sp, &q, !!lo);
	if (lo)
		*lo = q.lo;
	if (hi)
		*hi = q.hi;
	return q.pick ? &q.pick->rev : NULL;
}

size_t flowjit_store_span(const struct flowjit_store *st, uint64_t asid, uint64_t ip,
			  uint64_t time, bool late, const uint8_t **bytes,
			  const struct flowjit_rev **rev, struct flowjit_store_reads *reads)
{
	const struct flowjit_rev *r;
	uint64_t hi;

	r = flowjit_store_lookup(st, asid, ip, time, late, NULL, &hi);
	if (rev)
		*rev = r;
	if (!r)
		return 0;
	if (reads && r->time <= time)
		reads->at_time++;
	else if (reads)
		reads->late++;
	*bytes = r->bytes + (ip - r->start);
	return hi - ip;
}

size_t flowjit_store_read(const struct flowjit_store *st, uint64_t asid, uint64_t ip,
			  uint64_t time, bool late, uint8_t *buf, size_t len,
			  struct flowjit_store_reads *reads)
{
	size_t n = 0;

	while (n < len) {
		const uint8_t *bytes;
		size_t cnt = flowjit_store_span(st, asid, ip + n, time, late, &bytes, NULL,
						reads);

		if (!cnt)
			break;
		if (cnt > len - n)
			cnt = len - n;
		memcpy(buf + n, bytes, cnt);
		n += cnt;
	}
	return n;
}
