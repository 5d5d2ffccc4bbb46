/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf and flowjit: the image store of a trace decoder. Runtime code
 * images (PERF_RECORD_FLOWJIT) kept by (address space, address range,
 * time), so that a decoder reads the bytes that were live at (asid, ip)
 * when the traced instruction ran. See tools/perf/flowjit/flowjit.rst.
 */
#ifndef __PERF_FLOWJIT_STORE_H
#define __PERF_FLOWJIT_STORE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/rbtree.h>
#include <linux/types.h>
#include "flowjit.h"

union perf_event;

/* one revision: the bytes of [start, end) in asid from time on */
struct flowjit_rev {
	struct rb_node	rb;		/* in its address space's revs */
	u64		subtree_last;
	u64		asid;
	u64		start;
	u64		end;
	u64		time;		/* perf time of the image record */
	u64		seq;		/* order among records of equal time */
	u64		id;
	u32		sub;
	u32		revision;
	u32		pid;
	u8		kind;
	u8		*bytes;
};

/* [start, end) of asid holds no runtime code from time on */
struct flowjit_retire {
	struct rb_node	rb;		/* in its address space's retires */
	u64		subtree_last;
	u64		start;
	u64		end;
	u64		time;
	u64		seq;
};

/* the records of one address space: interval trees by [start, end) */
struct flowjit_space {
	u64			asid;
	struct rb_root_cached	revs;
	struct rb_root_cached	retires;
};

/* which address space pid used from time on (until end, if not 0) */
struct flowjit_pid_asid {
	u32		pid;
	u64		asid;
	u64		time;
	u64		end;
};

struct flowjit_store_stats {
	u64		records;	/* flowjit records seen */
	u64		images;		/* finished images with a good CRC */
	u64		retires;
	u64		bad_records;	/* refused by flowjit__parse() */
	u64		unknown_version;
	u64		chunk_errors;	/* repeats; images missing chunks */
	u64		csum_errors;	/* reassembled, CRC-32C wrong: dropped */
	u64		lookups;	/* bytes served at the time asked */
	u64		late_lookups;	/* served from an image newer than asked */
};

struct flowjit_store {
	struct flowjit_reasm		ra;
	struct flowjit_space		*spaces;	/* sorted by asid */
	size_t				nr_spaces, max_spaces;
	size_t				nr_revs, nr_retires;
	struct flowjit_pid_asid		*pids;
	size_t				nr_pids, max_pids;
	u64				seq;
	struct flowjit_store_stats	stats;
};

/* larger images are refused as bad records, not allocated */
#define FLOWJIT_STORE_MAX_LEN	(64ULL << 20)

struct flowjit_store *flowjit_store__new(void);
void flowjit_store__delete(struct flowjit_store *st);

/*
 * Add one PERF_RECORD_FLOWJIT record of perf time @time. Images become
 * revisions of the time of the chunk that finishes them, once all their
 * bytes arrived with a good CRC-32C (flowjit_reasm_add()); bad and
 * repeated records are counted and dropped, images missing chunks stay
 * unfinished. Records may come in any order of time (the store orders
 * them), and so may the chunks of an image. If @added is not NULL it is
 * set to the revision the record finished, or NULL. Returns 0, or
 * -ENOMEM.
 */
int flowjit_store__add_event(struct flowjit_store *st, const union perf_event *event,
			     u64 time, const struct flowjit_rev **added);

/* the same for a checked chunk (flowjit__parse()) */
int flowjit_store__add_chunk(struct flowjit_store *st, const struct flowjit_chunk *chunk,
			     u64 time, const struct flowjit_rev **added);

/*
 * The address space of process @pid at @time: the asid of its newest
 * user image at or before @time whose address space had not ended
 * (exit, exec) by @time, else of its first image after @time. Returns
 * false if no image named @pid.
 */
bool flowjit_store__pid_asid(struct flowjit_store *st, u32 pid, u64 time, u64 *asid);

/*
 * The revision live at @time that covers @ip in @asid: the newest with
 * its time <= @time, unless a retire record covering @ip came after it.
 * NULL if there is none.
 */
const struct flowjit_rev *flowjit_store__find(struct flowjit_store *st, u64 asid,
					      u64 ip, u64 time);

/*
 * For a decoder whose clock lags (the last timing packet is older than
 * the instruction): the first revision covering @ip created after @time.
 */
const struct flowjit_rev *flowjit_store__find_late(struct flowjit_store *st, u64 asid,
						   u64 ip, u64 time);

/*
 * The bytes at @ip of @asid as live at @time (with @late, or else from
 * the first later image) that one lookup answers: sets *@bytes to them
 * in the store and returns how many there are, 0 if no image covers
 * @ip. They stay valid until the store is deleted. If @rev is not NULL
 * it is set to the revision they belong to, or NULL.
 */
size_t flowjit_store__span(struct flowjit_store *st, u64 asid, u64 ip, u64 time, bool late,
			   const u8 **bytes, const struct flowjit_rev **rev);

/*
 * Read up to @len bytes at @ip of @asid as live at @time, across
 * adjacent revisions; with @late, parts with no live revision are read
 * from the first later one (flowjit_store__find_late()). Returns the
 * number of contiguous bytes read from @ip (0: no image covers @ip).
 */
size_t flowjit_store__read(struct flowjit_store *st, u64 asid, u64 ip, u64 time,
			   bool late, u8 *buf, size_t len);

/* one line: images, retires and every kind of record dropped */
size_t flowjit_store__fprintf_stats(const struct flowjit_store *st, FILE *fp);

#endif /* __PERF_FLOWJIT_STORE_H */
