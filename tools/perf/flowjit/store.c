// SPDX-License-Identifier: GPL-2.0
/*
 * perf and flowjit: the image store of a trace decoder.
 *
 * Revisions are kept in one array sorted by (asid, start); a lookup
 * bisects to the last revision starting at or below the address and
 * walks back while a revision of the longest length seen could still
 * cover it. Nothing is ever overwritten: an address reused by other code
 * is a new revision with a later time, and a retire record only hides
 * older revisions from lookups at or after its time. So the answer for
 * (asid, ip, time) does not depend on the order records were added in,
 * nor on how far the decoder is behind or ahead of the side-band.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "store.h"
#include "util/debug.h"

struct flowjit_store *flowjit_store__new(void)
{
	struct flowjit_store *st = zalloc(sizeof(*st));

	if (st)
		flowjit_reasm__init(&st->ra);
	return st;
}

void flowjit_store__delete(struct flowjit_store *st)
{
	size_t i;

	if (!st)
		return;
	flowjit_reasm__exit(&st->ra);
	for (i = 0; i < st->nr_revs; i++) {
		free(st->revs[i]->bytes);
		free(st->revs[i]);
	}
	free(st->revs);
	free(st->retires);
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

/* index of the first revision after (asid, addr) */
static size_t flowjit_store__upper(const struct flowjit_store *st, u64 asid, u64 addr)
{
	size_t lo = 0, hi = st->nr_revs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct flowjit_rev *r = st->revs[mid];

		if (r->asid < asid || (r->asid == asid && r->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
	if (flowjit_store__grow((void **)&st->retires, &st->max_retires, st->nr_retires,
				sizeof(*st->retires)))
		return -ENOMEM;
	st->retires[st->nr_retires++] = (struct flowjit_retire){
		.asid	= rec->asid,
		.start	= rec->addr,
		.end	= rec->addr + rec->len < rec->addr ? (u64)-1 : rec->addr + rec->len,
		.time	= time,
		.seq	= st->seq++,
	};
	st->stats.retires++;
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
	struct flowjit_rev *rev;
	size_t at;

	if (!rec->len || rec->addr + rec->len < rec->addr)
		return 0;	/* nothing to decode, or wraps around */
	if (flowjit_store__grow((void **)&st->revs, &st->max_revs, st->nr_revs,
				sizeof(*st->revs)))
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
	at = flowjit_store__upper(st, rev->asid, rev->start);
	memmove(st->revs + at + 1, st->revs + at, (st->nr_revs - at) * sizeof(*st->revs));
	st->revs[at] = rev;
	st->nr_revs++;
	if (rec->len > st->max_len)
		st->max_len = rec->len;
	st->stats.images++;
	if (added)
		*added = rev;
	return flowjit_store__note_pid(st, rec->pid, rec->asid, time, false);
}

int flowjit_store__add_chunk(struct flowjit_store *st, const struct flowjit_chunk *chunk,
			     u64 time, const struct flowjit_rev **added)
{
	struct flowjit_image *img = NULL;
	int err;

	if (added)
		*added = NULL;
	st->stats.records++;
	if (chunk->rec->op == FLOWJIT_OP_RETIRE)
		return flowjit_store__add_retire(st, chunk->rec, time);

	if (chunk->rec->len > FLOWJIT_STORE_MAX_LEN) {
		pr_debug("flowjit: image of %llu bytes dropped\n",
			 (unsigned long long)chunk->rec->len);
		st->stats.bad_records++;
		return 0;
	}
	err = flowjit_reasm__add(&st->ra, chunk, &img);
	if (err == -EBADMSG) {
		st->stats.chunk_errors++;
		return 0;
	}
	if (err <= 0)
		return err;
	if (!img->csum_ok) {
		pr_debug("flowjit: image of %#llx+%llu: CRC-32C mismatch, dropped\n",
			 (unsigned long long)img->rec.addr, (unsigned long long)img->rec.len);
		st->stats.csum_errors++;
		err = 0;
	} else {
		err = flowjit_store__add_image(st, img, time, added);
	}
	flowjit_image__delete(img);
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

/* was @ip of @asid retired after (time, seq) and at or before @at? */
static bool flowjit_store__retired(const struct flowjit_store *st, u64 asid, u64 ip,
				   u64 time, u64 seq, u64 at)
{
	size_t i;

	for (i = 0; i < st->nr_retires; i++) {
		const struct flowjit_retire *r = &st->retires[i];

		if (r->asid == asid && r->start <= ip && ip < r->end && r->time <= at &&
		    flowjit__later(r->time, r->seq, time, seq))
			return true;
	}
	return false;
}

const struct flowjit_rev *flowjit_store__find(struct flowjit_store *st, u64 asid,
					      u64 ip, u64 time)
{
	const struct flowjit_rev *best = NULL;
	size_t i = flowjit_store__upper(st, asid, ip);

	while (i--) {
		const struct flowjit_rev *r = st->revs[i];

		if (r->asid != asid || r->start + st->max_len <= ip)
			break;
		if (ip >= r->end || r->time > time)
			continue;
		if (!best || flowjit__later(r->time, r->seq, best->time, best->seq))
			best = r;
	}
	if (best && flowjit_store__retired(st, asid, ip, best->time, best->seq, time))
		return NULL;
	return best;
}

const struct flowjit_rev *flowjit_store__find_late(struct flowjit_store *st, u64 asid,
						   u64 ip, u64 time)
{
	const struct flowjit_rev *first = NULL;
	size_t i = flowjit_store__upper(st, asid, ip);

	while (i--) {
		const struct flowjit_rev *r = st->revs[i];

		if (r->asid != asid || r->start + st->max_len <= ip)
			break;
		if (ip >= r->end || r->time <= time)
			continue;
		if (!first || flowjit__later(first->time, first->seq, r->time, r->seq))
			first = r;
	}
	return first;
}

/*
 * How far from @at the answer of a lookup stays the same, at most @end:
 * up to where another revision starts or a retire record begins or ends.
 */
static u64 flowjit_store__same_until(const struct flowjit_store *st, u64 asid, u64 at,
				     u64 end)
{
	size_t i = flowjit_store__upper(st, asid, at);

	if (i < st->nr_revs && st->revs[i]->asid == asid && st->revs[i]->start < end)
		end = st->revs[i]->start;
	for (i = 0; i < st->nr_retires; i++) {
		const struct flowjit_retire *r = &st->retires[i];

		if (r->asid != asid)
			continue;
		if (r->start > at && r->start < end)
			end = r->start;
		if (r->end > at && r->end < end)
			end = r->end;
	}
	return end - at;
}

size_t flowjit_store__read(struct flowjit_store *st, u64 asid, u64 ip, u64 time,
			   bool late, u8 *buf, size_t len)
{
	size_t n = 0;

	while (n < len) {
		u64 at = ip + n;
		const struct flowjit_rev *r = flowjit_store__find(st, asid, at, time);
		size_t cnt;

		if (r) {
			st->stats.lookups++;
		} else if (late) {
			r = flowjit_store__find_late(st, asid, at, time);
			if (r)
				st->stats.late_lookups++;
		}
		if (!r)
			break;
		cnt = min_t(u64, len - n, flowjit_store__same_until(st, asid, at, r->end));
		memcpy(buf + n, r->bytes + (at - r->start), cnt);
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
	ret += fprintf(fp, " %llu bad CRC-32C, %u unfinished;",
		       (unsigned long long)s->csum_errors, st->ra.nr_pending);
	ret += fprintf(fp, " %llu reads at their time, %llu from a later image\n",
		       (unsigned long long)s->lookups, (unsigned long long)s->late_lookups);
	return ret;
}
