/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_jitmap: names of user JIT code from the runtime's own files.
 *
 * - perf maps, /tmp/perf-PID.map: text lines "START SIZE name" (hex,
 *   optional 0x), appended by the runtime as it emits code; no times, no
 *   bytes.
 * - jitdump, jit-PID.dump (Linux tools/perf/Documentation/
 *   jitdump-specification.txt): a binary header and records with times;
 *   JIT_CODE_LOAD carries the code bytes, JIT_CODE_MOVE moves code.
 *
 * flowjit's recorded bytes are the truth: a name whose range no longer
 * holds the code the flowjit revision being decoded holds is handed out
 * marked stale ("name [stale]").  The rules (README.rst, "Names of JIT
 * code"):
 *
 * - jitdump: the entry covering ip that is live at the decode time (the
 *   latest load or move at or before it, else the first after it) is
 *   stale if its code bytes differ from the executing revision's bytes
 *   where both have bytes.
 * - perf map: entry E is the (k+1)-th line written for code overlapping
 *   its range, k = gen(E) = the earlier lines whose ranges overlap E's.
 *   The executing revision R is the (c+1)-th content of E's range, c =
 *   the changes of the bytes in E's range among the flowjit revisions of
 *   R's address space up to R (by time; content that is all 0x00 or all
 *   0xcc is not code yet and its replacement no change).  A line can only
 *   describe code written before it: E is stale for R if c > k.  Of the
 *   lines covering ip the one with k == c is taken, else the first with
 *   k > c, else the last line, stale.
 *
 * Maps are immutable after loading, so decoder threads share them; each
 * thread caches the counts c it worked out.
 */
#ifndef PR_JITMAP_H
#define PR_JITMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pr_region;

/* One named range. */
struct pr_jitsym {
	uint64_t start, end;	/* [start, end) */
	uint64_t time;		/* jitdump: load or move, perf time */
	uint64_t t_end;		/* jitdump: moved away (else UINT64_MAX) */
	uint64_t order;		/* position in the file */
	uint64_t index;		/* jitdump: code_index */
	uint32_t pid;
	uint32_t gen;		/* perf map: earlier lines overlapping */
	const uint8_t *code;	/* jitdump: end - start bytes, else NULL */
	char *name;		/* "name" */
	char *stale;		/* "name [stale]" */
};

/* What a parse found and dropped. */
struct pr_jitmap_stats {
	uint64_t entries;	/* kept */
	uint64_t malformed;	/* lines or records that do not parse */
	uint64_t truncated;	/* records cut off by the end of the file */
	uint64_t huge;		/* over PR_JITMAP_MAX_SIZE: dropped */
	uint64_t dropped;	/* beyond PR_JITMAP_MAX_ENTRIES */
	uint64_t moves_unmatched; /* JIT_CODE_MOVE of unknown code */
	uint64_t other;		/* jitdump debug/unwind/close/unknown */
};

/* One perf map or jitdump of one process. */
struct pr_jitmap {
	int jitdump;
	uint32_t pid;
	char *path;
	/* sorted by start, then order; max_end[i]: largest end of [0, i] */
	struct pr_jitsym *sym;
	size_t nsym, cap;
	uint64_t *max_end;
	/* jitdump: the file's bytes (code points into it) */
	uint8_t *buf;
	size_t size;
	/* A number unique to this map, for the threads' caches. */
	uint64_t serial;
	struct pr_jitmap_stats st;
};

/* The most entries a map keeps, the largest range it takes, the longest
 * name (longer ones are cut) and the largest file read.
 */
#define PR_JITMAP_MAX_ENTRIES	(1u << 22)
#define PR_JITMAP_MAX_SIZE	(16u << 20)
#define PR_JITMAP_MAX_NAME	1024
#define PR_JITMAP_MAX_FILE	(1ull << 31)

/* Parse perf map text of @size bytes at @buf for @pid.
 * Returns the map (maybe without entries; see its stats), NULL if out of
 * memory.
 */
extern struct pr_jitmap *pr_jitmap_perfmap(const char *buf, size_t size,
					   uint32_t pid);

/* Parse a jitdump of @size bytes at @buf (copied).  @tsc_to_time, if
 * not NULL, converts the times of a dump with JITDUMP_FLAGS_ARCH_TIMESTAMP
 * (TSC) to perf time; @ctx is its first argument.  *@err (optional)
 * receives why the file is refused (bad magic, version, header).
 * Returns the map (maybe without entries), NULL if refused or out of
 * memory.
 */
extern struct pr_jitmap *pr_jitmap_jitdump(const uint8_t *buf, size_t size,
					   uint64_t (*tsc_to_time)(const void *,
								   uint64_t),
					   const void *ctx, const char **err);

extern void pr_jitmap_free(struct pr_jitmap *map);

/* Print a warning "ptreplay: PATH: N entries, dropped ..." to @out if
 * the parse of @map dropped anything.  Returns 1 if it warned, else 0.
 */
extern int pr_jitmap_warn(const struct pr_jitmap *map, FILE *out);

/* The jitdump entry of @map naming @ip at @time, or NULL. */
extern const struct pr_jitsym *pr_jitmap_dump_at(const struct pr_jitmap *map,
						 uint64_t ip, uint64_t time);

/* The changes of the bytes of [start, end) among the flowjit revision
 * views @views (@n of them, in any order) of @rev's address space up to
 * @rev (by time, then seq): the c of the perf map rule.
 */
extern uint32_t pr_jitmap_changes(const struct pr_region *views, size_t n,
				  const struct pr_region *rev, uint64_t start,
				  uint64_t end);

/* The perf map entry of @map naming @ip in flowjit view @rgn (NULL: no
 * bytes to check), among @views (@n); *@stale receives 1 if it is stale.
 * Returns the entry, or NULL.
 */
extern const struct pr_jitsym *pr_jitmap_map_at(const struct pr_jitmap *map,
						const struct pr_region *views,
						size_t n,
						const struct pr_region *rgn,
						uint64_t ip, int *stale);

/* Is the jitdump entry @s stale for code region @rgn (differing bytes)? */
extern int pr_jitmap_dump_stale(const struct pr_jitsym *s,
				const struct pr_region *rgn);

/* The names of a session: perf maps by pid and a jitdump. */
struct pr_jitnames {
	struct pr_jitmap **map;
	size_t nmap;
	/* files read, and ones that could not be read or were refused */
	uint64_t nread, nbad;
};

struct pr_store;

/* Read DIR/perf-PID.map for each of the @npids pids in @pids (if @dir
 * is neither NULL nor empty) and the jitdump @jitdump (if not NULL),
 * warning on @warn about files refused or entries dropped.
 * Returns 0, -1 if out of memory.
 */
extern int pr_jitnames_load(struct pr_jitnames *jn, const char *dir,
			    const char *jitdump, const uint32_t *pids,
			    size_t npids,
			    uint64_t (*tsc_to_time)(const void *, uint64_t),
			    const void *ctx, FILE *warn);

struct pr_replay;

/* pr_jitnames_load() for @rp (loaded), from its options perf_map_dir and
 * jitdump (none if no_files), for the pids of its tasks, user regions and
 * flowjit images; TSC times of a jitdump converted as the trace's.
 * Returns 0, -1 if out of memory.
 */
extern int pr_jitnames_replay(struct pr_replay *rp, FILE *warn);

extern void pr_jitnames_fini(struct pr_jitnames *jn);

/* The entry of the perf maps or jitdump of @jn naming user @ip of pid
 * @pid in region or flowjit view @rgn at decode time @time (the jitdump
 * first); *@stale receives 1 if its bytes say the name no longer fits.
 * Returns it, NULL if none names @ip.
 */
extern const struct pr_jitsym *pr_jitnames_find(const struct pr_jitnames *jn,
						const struct pr_store *store,
						const struct pr_region *rgn,
						uint32_t pid, uint64_t ip,
						uint64_t time, int *stale);

/* Does a jitdump of @jn name code (names then change with time)? */
extern int pr_jitnames_timed(const struct pr_jitnames *jn);

/* The name of user @ip of pid @pid in region or flowjit view @rgn at
 * decode time @time: "name+0xoff" (or "name+0xoff [stale]") into @buf,
 * the function's key (*@key1, *@key2) and range [*@flo, *@fhi).
 * Returns the function's name (stable: "name" or "name [stale]"), NULL
 * if no map names @ip (nothing is written then).
 */
extern const char *pr_jitnames_sym(const struct pr_jitnames *jn,
				   const struct pr_store *store,
				   const struct pr_region *rgn, uint32_t pid,
				   uint64_t ip, uint64_t time, char *buf,
				   size_t size, const void **key1,
				   uint64_t *key2, uint64_t *flo,
				   uint64_t *fhi);

#endif /* PR_JITMAP_H */
