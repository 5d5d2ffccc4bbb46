// SPDX-License-Identifier: GPL-2.0
/*
 * perf and flowjit: the image store of a trace decoder.
 *
 * Each address space has two interval trees (augmented rbtrees ordered
 * by start, linux/interval_tree_generic.h): its revisions and its retire
 * records. A lookup visits only the records that cover the address, so
 * its cost does not grow with the number of pages, images of other
 * lengths or retire records elsewhere. Nothing is ever overwritten: an
 * address reused by other code is a new revision with a later time, and
 * a retire record only hides older revisions from lookups at or after
 * its time. So the answer for (asid, ip, time) does not depend on the
 * order records were added in, nor on how far the decoder is behind or
 * ahead of the side-band.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/interval_tree_generic.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "store.h"
#include "util/debug.h"

#define FJ_START(n)	((n)->start)
#define FJ_LAST(n)	((n)->end - 1)

INTERVAL_TREE_DEFINE(struct flowjit_rev, rb, u64, subtree_last, FJ_START, FJ_LAST,
		     static inline, flowjit_rev_it)
INTERVAL_TREE_DEFINE(struct flowjit_retire, rb, u64, subtree_last, FJ_START, FJ_LAST,
		     static inline, flowjit_retire_it)

struct flowjit_store *flowjit_store__new(void)
{
	struct flowjit_store *st = zalloc(sizeof(*st));

	if (st)
		flowjit_reasm_init(&st->ra);
	return st;
}

void flowjit_store__delete(struct flowjit_store *st)
{
	struct flowjit_retire *t, *tn;
	struct flowjit_rev *r, *rn;
	size_t i;

	if (!st)
		return;
	flowjit_reasm_fini(&st->ra);
	for (i = 0; i < st->nr_spaces; i++) {
		struct flowjit_space *sp = &st->spaces[i];

		rbtree_postorder_for_each_entry_safe(r, rn, &sp->revs.rb_root, rb) {
			free(r->bytes);
			free(r);
		}
		rbtree_postorder_for_each_entry_safe(t, tn, &sp->retires.rb_root, rb)
			free(t);
	}
	free(st->spaces);
	free(st->pids);
	free(st);
}

/* grow *@arr of @size byte elements to hold one more */
static int flowjit_store__grow(void **arr, size_t *max, size_t nr, size_t size)
{
	size_t n = *max ? *max * 2 : 16;
	void *p;

	if (nr < *max)
		return 0;
	p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*max = n;
	return 0;
}

/* the address space @asid, NULL if it has no record */
static struct flowjit_space *flowjit_store__space(struct flowjit_store *st, u64 asid)
{
	size_t lo = 0, hi = st->nr_spaces;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->spaces[mid].asid == asid)
			return &st->spaces[mid];
		if (st->spaces[mid].asid < asid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* the same, added if it is new (the trees do not point at their roots) */
static struct flowjit_space *flowjit_store__new_space(struct flowjit_store *st, u64 asid)
{
	struct flowjit_space *sp = flowjit_store__space(st, asid);
	size_t at;

	if (sp)
		return sp;
	if (flowjit_store__grow((void **)&st->spaces, &st->max_spaces, st->nr_spaces,
				sizeof(*st->spaces)))
		return NULL;
	for (at = st->nr_spaces; at && st->spaces[at - 1].asid > asid; at--)
		;
	memmove(st->spaces + at + 1, st->spaces + at,
		(st->nr_spaces - at) * sizeof(*st->spaces));
	st->spaces[at] = (struct flowjit_space){
		.asid		= asid,
		.revs		= RB_ROOT_CACHED,
		.retires	= RB_ROOT_CACHED,
	};
	st->nr_spaces++;
	return &st->spaces[at];
}

static bool flowjit__later(u64 t1, u64 s1, u64 t2, u64 s2)
{
	return t1 > t2 || (t1 == t2 && s1 > s2);
}

/*
 * Note that @pid used @asid at @time: from an image, or with @end set,
 * from the retire record of the whole address space (exit, exec).
 */
static int flowjit_store__note_pid(struct flowjit_store *st, u32 pid, u64 asid, u64 time,
				   bool end)
{
	struct flowjit_pid_asid *p;
	size_t i;

	if (asid == FLOWJIT_ASID_KERNEL || !pid)
		return 0;
	for (i = 0; i < st->nr_pids; i++) {
		p = &st->pids[i];
		if (p->pid != pid || p->asid != asid)
			continue;
		if (end) {
			if (!p->end || time < p->end)
				p->end = time;
		} else if (time < p->time) {
			p->time = time;	/* records came out of time order */
		}
		return 0;
	}
	if (end)
		return 0;	/* an address space without images */
	if (flowjit_store__grow((void **)&st->pids, &st->max_pids, st->nr_pids,
				sizeof(*st->pids)))
		return -ENOMEM;
	st->pids[st->nr_pids++] = (struct flowjit_pid_asid){
		.pid = pid, .asid = asid, .time = time,
	};
	return 0;
}

bool flowjit_store__pid_asid(struct flowjit_store *st, u32 pid, u64 time, u64 *asid)
{
	const struct flowjit_pid_asid *best = NULL, *first = NULL;
	size_t i;

	for (i = 0; i < st->nr_pids; i++) {
		const struct flowjit_pid_asid *p = &st->pids[i];

		if (p->pid != pid)
			continue;
		/* not an address space that ended at or before @time */
		if (p->time <= time && (!p->end || p->end > time) &&
		    (!best || p->time >= best->time))
			best = p;
		if (p->time > time && (!first || p->time < first->time))
			first = p;
	}
	if (!best)
		best = first;
	if (!best)
		return false;
	*asid = best->asid;
	return true;
}

static int flowjit_store__add_retire(struct flowjit_store *st,
				     const struct flowjit_record *rec, u64 time)
{
	struct flowjit_space *sp;
	struct flowjit_retire *r;

	st->stats.retires++;
	if (rec->len) {
		sp = flowjit_store__new_space(st, rec->asid);
		r = zalloc(sizeof(*r));
		if (!sp || !r) {
			free(r);
			return -ENOMEM;
		}
		r->start = rec->addr;
		r->end = rec->addr + rec->len < rec->addr ? (u64)-1 : rec->addr + rec->len;
		r->time = time;
		r->seq = st->seq++;
		flowjit_retire_it_insert(r, &sp->retires);
		st->nr_retires++;
	}
	/*
	 * The retire record of a whole address space: addr 0, len
	 * TASK_SIZE_MAX (at least x86-64's 0x7ffffffff000 of 4-level paging).
	 */
	if (!rec->addr && rec->len >= 0x7ffffffff000ULL)
		return flowjit_store__note_pid(st, rec->pid, rec->asid, time, true);
	return 0;
}

static int flowjit_store__add_image(struct flowjit_store *st, struct flowjit_image *img,
				    u64 time, const struct flowjit_rev **added)
{
	const struct flowjit_record *rec = &img->rec;
	struct flowjit_space *sp;
	struct flowjit_rev *rev;

	if (!rec->len || rec->addr + rec->len <= rec->addr)
		return 0;	/* nothing to decode, or wraps around */
	sp = flowjit_store__new_space(st, rec->asid);
	if (!sp)
		return -ENOMEM;
	rev = zalloc(sizeof(*rev));
	if (!rev)
		return -ENOMEM;
	*rev = (struct flowjit_rev){
		.asid		= rec->asid,
		.start		= rec->addr,
		.end		= rec->addr + rec->len,
		.time		= time,
		.seq		= st->seq++,
		.id		= rec->id,
		.sub		= rec->sub,
		.revision	= rec->revision,
		.pid		= rec->pid,
		.kind		= rec->kind,
		.bytes		= img->bytes,
	};
	img->bytes = NULL;	/* the revision owns them now */
	flowjit_rev_it_insert(rev, &sp->revs);
	st->nr_revs++;
	st->stats.images++;
	if (added)
		*added = rev;
	return flowjit_store__note_pid(st, rec->pid, rec->asid, time, false);
}

int flowjit_store__add_chunk(struct flowjit_store *st, const struct flowjit_chunk *chunk,
			     u64 time, const struct flowjit_rev **added)
{
	const struct flowjit_record *rec = &chunk->rec;
	struct flowjit_counts was = st->ra.counts;
	struct flowjit_image img;
	int err;

	if (added)
		*added = NULL;
	st->stats.records++;
	if (rec->op == FLOWJIT_OP_RETIRE)
		return flowjit_store__add_retire(st, rec, time);

	if (rec->len > FLOWJIT_STORE_MAX_LEN) {
		pr_debug("flowjit: image of %llu bytes dropped\n", (unsigned long long)rec->len);
		st->stats.bad_records++;
		return 0;
	}
	/* the image is live from the chunk that finishes it on */
	err = flowjit_reasm_add(&st->ra, chunk, time, &img);
	if (st->ra.counts.overlap != was.overlap ||
	    st->ra.counts.incomplete != was.incomplete)
		st->stats.chunk_errors++;
	if (st->ra.counts.bad_csum != was.bad_csum) {
		pr_debug("flowjit: image of %#llx+%llu: CRC-32C mismatch, dropped\n",
			 (unsigned long long)rec->addr, (unsigned long long)rec->len);
		st->stats.csum_errors++;
	}
	if (err <= 0)
		return err;
	err = flowjit_store__add_image(st, &img, time, added);
	free(img.bytes);
	return err;
}

int flowjit_store__add_event(struct flowjit_store *st, const union perf_event *event,
			     u64 time, const struct flowjit_rev **added)
{
	struct flowjit_chunk chunk;
	const char *why = NULL;
	int err;

	if (added)
		*added = NULL;
	err = flowjit__parse(event, &chunk, &why);
	if (err == -EOPNOTSUPP) {
		st->stats.records++;
		st->stats.unknown_version++;
		return 0;
	}
	if (err) {
		pr_debug("flowjit: bad record dropped: %s\n", why);
		st->stats.records++;
		st->stats.bad_records++;
		return 0;
	}
	return flowjit_store__add_chunk(st, &chunk, time, added);
}

/* was @ip of @sp retired after (time, seq) and at or before @at? */
static bool flowjit_store__retired(struct flowjit_space *sp, u64 ip, u64 time, u64 seq,
				   u64 at)
{
	struct flowjit_retire *r;

	for (r = flowjit_retire_it_iter_first(&sp->retires, ip, ip); r;
	     r = flowjit_retire_it_iter_next(r, ip, ip)) {
		if (r->time <= at && flowjit__later(r->time, r->seq, time, seq))
			return true;
	}
	return false;
}

/*
 * The newest revision of @sp covering @ip at or before @time, or with
 * @late the first one after @time.
 */
static struct flowjit_rev *flowjit_store__pick(struct flowjit_space *sp, u64 ip, u64 time,
					       bool late)
{
	struct flowjit_rev *r, *pick = NULL;

	for (r = flowjit_rev_it_iter_first(&sp->revs, ip, ip); r;
	     r = flowjit_rev_it_iter_next(r, ip, ip)) {
		bool after = r->time > time;

		if (after != late)
			continue;
		if (!pick || (late ? flowjit__later(pick->time, pick->seq, r->time, r->seq) :
				     flowjit__later(r->time, r->seq, pick->time, pick->seq)))
			pick = r;
	}
	return pick;
}

const struct flowjit_rev *flowjit_store__find(struct flowjit_store *st, u64 asid,
					      u64 ip, u64 time)
{
	struct flowjit_space *sp = flowjit_store__space(st, asid);
	struct flowjit_rev *best = sp ? flowjit_store__pick(sp, ip, time, false) : NULL;

	if (best && flowjit_store__retired(sp, ip, best->time, best->seq, time))
		return NULL;
	return best;
}

const struct flowjit_rev *flowjit_store__find_late(struct flowjit_store *st, u64 asid,
						   u64 ip, u64 time)
{
	struct flowjit_space *sp = flowjit_store__space(st, asid);

	return sp ? flowjit_store__pick(sp, ip, time, true) : NULL;
}

/*
 * How far from @at the answer of a lookup stays the same, at most @end:
 * up to where another revision starts or a retire record begins or ends.
 */
static u64 flowjit_store__same_until(struct flowjit_space *sp, u64 at, u64 end)
{
	struct rb_node *node = sp->revs.rb_root.rb_node;
	struct flowjit_retire *t;

	/* the first revision starting after @at: the tree is ordered by start */
	while (node) {
		struct flowjit_rev *r = rb_entry(node, struct flowjit_rev, rb);

		if (r->start > at) {
			if (r->start < end)
				end = r->start;
			node = node->rb_left;
		} else {
			node = node->rb_right;
		}
	}
	for (t = flowjit_retire_it_iter_first(&sp->retires, at, end - 1); t;
	     t = flowjit_retire_it_iter_next(t, at, end - 1)) {
		if (t->start > at && t->start < end)
			end = t->start;
		if (t->end > at && t->end < end)
			end = t->end;
	}
	return end - at;
}

size_t flowjit_store__span(struct flowjit_store *st, u64 asid, u64 ip, u64 time, bool late,
			   const u8 **bytes, const struct flowjit_rev **rev)
{
	const struct flowjit_rev *r = flowjit_store__find(st, asid, ip, time);

	if (r) {
		st->stats.lookups++;
	} else if (late) {
		r = flowjit_store__find_late(st, asid, ip, time);
		if (r)
			st->stats.late_lookups++;
	}
	if (rev)
		*rev = r;
	if (!r)
		return 0;
	*bytes = r->bytes + (ip - r->start);
	return flowjit_store__same_until(flowjit_store__space(st, asid), ip, r->end);
}

size_t flowjit_store__read(struct flowjit_store *st, u64 asid, u64 ip, u64 time,
			   bool late, u8 *buf, size_t len)
{
	size_t n = 0;

	while (n < len) {
		const u8 *bytes;
		size_t cnt = flowjit_store__span(st, asid, ip + n, time, late, &bytes, NULL);

		if (!cnt)
			break;
		cnt = min(cnt, len - n);
		memcpy(buf + n, bytes, cnt);
		n += cnt;
	}
	return n;
}

size_t flowjit_store__fprintf_stats(const struct flowjit_store *st, FILE *fp)
{
	const struct flowjit_store_stats *s = &st->stats;
	size_t ret;

	ret = fprintf(fp, "flowjit: %llu records: %llu images, %llu retires;",
		      (unsigned long long)s->records, (unsigned long long)s->images,
		      (unsigned long long)s->retires);
	ret += fprintf(fp, " dropped: %llu bad, %llu unknown version, %llu out of sequence,",
		       (unsigned long long)s->bad_records,
		       (unsigned long long)s->unknown_version,
		       (unsigned long long)s->chunk_errors);
	ret += fprintf(fp, " %llu bad CRC-32C, %zu unfinished;",
		       (unsigned long long)s->csum_errors, st->ra.nr_pending);
	ret += fprintf(fp, " %llu reads at their time, %llu from a later image\n",
		       (unsigned long long)s->lookups, (unsigned long long)s->late_lookups);
	return ret;
}
