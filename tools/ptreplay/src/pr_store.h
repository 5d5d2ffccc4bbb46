/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_store: the code store versioned by (address space, range, time).
 *
 * It keeps code in two places and answers from both:
 *
 * - its regions: from time t_start until t_end, [start, end) of address
 *   space @space holds these bytes. They come from MMAP/MMAP2 (ELF files
 *   by path), the vdso and TEXT_POKE; KSYMBOL and anonymous mappings add
 *   name-only regions. User address spaces are numbered by pid (an exec
 *   ends them, a fork copies them), the kernel is 0.
 *
 * - flowjit images: the library's image store (struct flowjit_store,
 *   tools/lib/flowjit/libflowjit.h, "The image store"), whose rules are
 *   the only ones for them: an image is live from the time of the chunk
 *   that completes it, a retire record hides the addresses it covers
 *   (not the rest of an image), and user images are kept by asid, the
 *   address space of pid at a time being flowjit_store_pid_asid()'s
 *   answer. An exec or a fork gives a new asid; a fork copies no image:
 *   the kernel images a traced child's code again under the child's asid
 *   at its first exec fault there. Each revision has a view, a struct
 *   pr_region of kind PR_RGN_FLOWJIT naming it (@rev; its t_start is the
 *   revision's time, its t_end UINT64_MAX).
 *
 * The bytes for (space, ip) at trace time t come from whichever of the
 * two answers started last: of the regions covering ip live at t
 * (t_start <= t < t_end) the one that started last, and the flowjit
 * revision live at t; later added ones win ties. If neither has code
 * live at t, the region or revision that becomes live first after t is
 * used: a decoder's time is the last timing packet, a lower bound of the
 * real time, so code that appeared after it may already run (see
 * README.rst).
 *
 * The store is filled from the sideband, frozen, then read concurrently by
 * decoder threads (lookups do not modify it).
 */
#ifndef PR_STORE_H
#define PR_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "libflowjit.h"

struct pr_elf;

enum pr_region_kind {
	PR_RGN_FILE	= 1,	/* an ELF (or other) file mapped by MMAP2 */
	PR_RGN_VDSO,		/* [vdso]: this machine's copy */
	PR_RGN_FLOWJIT,		/* a flowjit image's view: not in rgn[] */
	PR_RGN_POKE,		/* TEXT_POKE new bytes */
	PR_RGN_NAME,		/* a name only (KSYMBOL), no bytes */
};

struct pr_region {
	uint32_t space;
	uint32_t kind;
	uint64_t start, end;
	uint64_t t_start, t_end;
	/* Bytes for [start, start + nbytes); not owned unless @owned. */
	const uint8_t *bytes;
	uint64_t nbytes;
	int owned;
	/* Name (owned): file path, BPF prog name, jit:<pid>:<addr>. */
	char *name;
	/* For file regions: the ELF (shared, owned by the store). */
	struct pr_elf *elf;
	uint64_t pgoff;
	/* For a flowjit image's view: its revision in the library's store. */
	const struct flowjit_rev *rev;
	/* Order of adding, of regions and views alike. */
	uint64_t seq;
};

/* A mapped file, shared by its regions. */
struct pr_store_file {
	char *path;
	const uint8_t *map;
	size_t size;
	struct pr_elf *elf;
	int failed;
};

/* The most regions and flowjit images a store takes (hostile input must
 * not exhaust memory).
 */
#define PR_STORE_MAX_REGIONS	(1u << 20)

/* Regions visited by lookups of this thread (a decoder's work budget). */
extern __thread uint64_t pr_store_work;

struct pr_store {
	struct pr_region *rgn;
	size_t nrgn, cap;
	/* After freezing: the largest end among rgn[first of space .. i]. */
	uint64_t *max_end;
	/* Steps of pr_store_retire() and of flowjit retire records. */
	uint64_t work;
	/* Regions or images refused: PR_STORE_MAX_REGIONS reached. */
	uint64_t dropped;
	/* The seq of the next region or view. */
	uint64_t seq;

	/* flowjit images (NULL until the first record) and their views,
	 * in the order of their revisions' seq.
	 */
	struct flowjit_store *fj;
	struct pr_region *fjv;
	size_t nfjv, capfjv;
	/* Index of the first region of each space after freezing. */
	int frozen;

	struct pr_store_file *files;
	size_t nfiles, capfiles;

	/* Do not open files named in the trace (fuzzing). */
	int no_files;

	/* Read ELF symbols of mapped files (else only for build-id checks). */
	int symbols;

	/* The times at which some answer may change (region starts and
	 * ends, flowjit record times): sorted and unique after freezing.
	 */
	uint64_t *times;
	size_t ntimes, captimes;

	/* Counters for the health report. */
	uint64_t files_missing;
	uint64_t buildid_mismatch;
	/* flowjit retire records that hid code live at their time, or none. */
	uint64_t fj_retired, fj_retire_unmatched;
};

extern void pr_store_init(struct pr_store *store);
extern void pr_store_fini(struct pr_store *store);

/* Add a copy of @rgn (its name is copied; its bytes are taken over if
 * @rgn->owned).  Returns the new region or NULL if out of memory or the
 * region is empty or the store is frozen.
 */
extern struct pr_region *pr_store_add(struct pr_store *store,
				      const struct pr_region *rgn,
				      const char *name);

/* Map [start, start + len) of @path at @pgoff into @space from @time;
 * @build_id (of @build_id_size bytes, may be 0) is checked if given.
 *
 * Returns the region, or NULL if the file cannot be read (counted).
 */
extern struct pr_region *pr_store_add_file(struct pr_store *store,
					   uint32_t space, uint64_t start,
					   uint64_t len, uint64_t pgoff,
					   const char *path, uint64_t time,
					   const uint8_t *build_id,
					   size_t build_id_size);

/* Add the flowjit record body @body of @size bytes, of time @time (none
 * unless @has_time: such a record cannot be placed and is counted as
 * malformed), to the flowjit images.  A retire record is counted in
 * fj_retired if it hides code live at its time, else fj_retire_unmatched.
 *
 * Returns 0 (also for a record counted and dropped), -1 if out of memory.
 */
extern int pr_store_add_flowjit(struct pr_store *store, const void *body,
				size_t size, uint64_t time, int has_time);

/* Records were lost between perf times @from and @to (a PERF_RECORD_LOST):
 * flowjit images of then may be missing (flowjit_store_add_lost()).
 *
 * Returns 0, -1 if out of memory.
 */
extern int pr_store_flowjit_lost(struct pr_store *store, uint64_t from,
				 uint64_t to);

/* Name the kernel flowjit image live at @time that starts at @addr (a
 * KSYMBOL of its program) @name.
 */
extern void pr_store_name_flowjit(struct pr_store *store, uint64_t addr,
				  uint64_t time, const char *name);

/* Fill @stats with the flowjit images' counts (zero without records). */
extern void pr_store_flowjit_stats(const struct pr_store *store,
				   struct flowjit_store_stats *stats);

/* End regions of @space overlapping [start, end) of @kind (0: any) that
 * are live at @time: their t_end becomes @time.  If @exact, only regions
 * starting at @start.  Returns the number of regions retired.  flowjit
 * images are not regions: their retire records are the library's.
 */
extern size_t pr_store_retire(struct pr_store *store, uint32_t space,
			      uint64_t start, uint64_t end, uint64_t time,
			      uint32_t kind, int exact);

/* Sort the regions for lookups; no more regions may be added. */
extern void pr_store_freeze(struct pr_store *store);

/* The epoch of @time: lookups at two times of the same epoch give the
 * same answers (no region, image or retire record starts or ends
 * between them).  Epochs are numbered in time order: 2 * i + 1 is the
 * i-th change time itself, 2 * i the times between it and the one before.
 */
extern uint64_t pr_store_epoch(const struct pr_store *store, uint64_t time);

/* The region (or flowjit view) with bytes for @ip in @space at @time, or
 * NULL.  *@lo and *@hi (optional) receive the address range around @ip
 * for which the answer at @time is the same.
 */
extern const struct pr_region *pr_store_lookup(const struct pr_store *store,
					       uint32_t space, uint64_t ip,
					       uint64_t time, uint64_t *lo,
					       uint64_t *hi);

/* The region naming @ip (any kind, also PR_RGN_NAME) at @time, or NULL. */
extern const struct pr_region *pr_store_name(const struct pr_store *store,
					     uint32_t space, uint64_t ip,
					     uint64_t time);

/* Read up to @size bytes at @ip, assembled from the regions live at @time.
 * Returns the number of bytes read (zero if @ip is not mapped).
 */
extern size_t pr_store_read(const struct pr_store *store, uint32_t space,
			    uint64_t ip, uint64_t time, uint8_t *buf,
			    size_t size);

#endif /* PR_STORE_H */
