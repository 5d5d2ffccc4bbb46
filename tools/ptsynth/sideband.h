/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sideband.h - the sideband of a real perf record --flowjit of the run
 * (sideband.c)
 *
 * ps_sb_load() returns 0, or a negative errno (-EINVAL: not a perf.data
 * file it can read) after freeing what it had loaded; ps_sb_free() frees
 * a loaded sideband.
 */
#ifndef PTSYNTH_SIDEBAND_H
#define PTSYNTH_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ps_sb_rec {
	uint64_t time;
	int pid, tid, cpu;
	uint8_t *data;		/* header + body, no sample_id trailer */
	size_t body_len;
};

struct ps_sb_fault {
	int tid;
	uint64_t time;		/* perf time */
};

struct ps_sb_page;

struct ps_sb {
	struct ps_sb_rec *recs;
	size_t nr, cap;
	struct ps_sb_fault *faults;	/* sorted by time */
	size_t nr_faults;
	uint64_t nr_flowjit, nr_images, nr_stripped, nr_skipped;
	uint64_t nr_bad;	/* malformed: dropped */
	uint64_t nr_synth;	/* kept: perf record's own (time 0) */
	uint64_t nr_renamed;
	uint64_t nr_lost_made;	/* fault images replaced by a LOST record */
	/* --delta: the pages' last images; images made deltas, their bytes */
	struct ps_sb_page *pages;
	size_t nr_pages;
	uint64_t nr_deltas, delta_bytes;
	/* the first exec fault image a later delta is against (0: none) */
	uint64_t first_base_image;
};

/*
 * @lose_image N > 0 replaces the N-th exec fault image (from 1) by a
 * PERF_RECORD_LOST of one record at its time, as a full ring buffer
 * would: the fault still happened, its image is gone.
 *
 * @delta makes each user JIT page image of one chunk a FLOWJIT_OP_DELTA
 * record against the page's previous image in the file (16-byte blocks,
 * as a kernel writing deltas would), when that image's revision is older
 * and the pieces fit a chunk. An image @lose_image loses is still the
 * next one's base: the kernel wrote it, the file lost it.
 */
int ps_sb_load(struct ps_sb *sb, const char *path, const char *root,
	       bool strip_flowjit, unsigned long lose_image, bool delta);
void ps_sb_free(struct ps_sb *sb);

#endif
