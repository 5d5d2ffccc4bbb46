// SPDX-License-Identifier: GPL-2.0
/*
 * perf and flowjit: perf's side of the image store of tools/lib/flowjit.
 *
 * The store, and what it answers, is the library's (libflowjit.h). perf
 * adds its events here so that what is dropped is said with pr_debug(),
 * and prints the counts in perf's words.
 */
#include <errno.h>

#include "store.h"
#include "util/debug.h"

int flowjit_store__add_chunk(struct flowjit_store *st, const struct flowjit_chunk *chunk,
			     u64 time, const struct flowjit_rev **added)
{
	const struct flowjit_record *rec = &chunk->rec;
	struct flowjit_store_stats was, now;
	int err;

	flowjit_store_stats(st, &was);
	err = flowjit_store_add_chunk(st, chunk, time, added);
	flowjit_store_stats(st, &now);
	if (now.bad_records != was.bad_records)
		pr_debug("flowjit: image of %llu bytes dropped\n", (unsigned long long)rec->len);
	if (now.csum_errors != was.csum_errors)
		pr_debug("flowjit: image of %#llx+%llu: CRC-32C mismatch, dropped\n",
			 (unsigned long long)rec->addr, (unsigned long long)rec->len);
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
	if (err) {
		if (err != -EOPNOTSUPP)
			pr_debug("flowjit: bad record dropped: %s\n", why);
		flowjit_store_add_refused(st, err);
		return 0;
	}
	return flowjit_store__add_chunk(st, &chunk, time, added);
}

bool flowjit_store__dropped(const struct flowjit_store *st)
{
	struct flowjit_store_stats s;

	flowjit_store_stats(st, &s);
	return s.bad_records || s.unknown_version || s.chunk_errors || s.csum_errors ||
	       s.pending || s.delta_no_base;
}

size_t flowjit_store__fprintf_stats(const struct flowjit_store *st,
				    const struct flowjit_store_reads *reads, FILE *fp)
{
	struct flowjit_store_stats s;
	size_t ret;

	flowjit_store_stats(st, &s);
	ret = fprintf(fp, "flowjit: %llu records: %llu images, %llu retires;",
		      (unsigned long long)s.records, (unsigned long long)s.images,
		      (unsigned long long)s.retires);
	ret += fprintf(fp, " dropped: %llu bad, %llu unknown version, %llu out of sequence,",
		       (unsigned long long)s.bad_records,
		       (unsigned long long)s.unknown_version,
		       (unsigned long long)s.chunk_errors);
	ret += fprintf(fp, " %llu bad CRC-32C, %llu unfinished;",
		       (unsigned long long)s.csum_errors, (unsigned long long)s.pending);
	ret += fprintf(fp, " %llu deltas (%llu without base, %llu bad result);",
		       (unsigned long long)(s.deltas + s.delta_no_base + s.delta_bad),
		       (unsigned long long)s.delta_no_base, (unsigned long long)s.delta_bad);
	ret += fprintf(fp, " %llu images of pinned pages;", (unsigned long long)s.pinned);
	ret += fprintf(fp, " %llu reads at their time, %llu from a later image\n",
		       (unsigned long long)reads->at_time, (unsigned long long)reads->late);
	return ret;
}
