/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Code memory managed the ways real JITs manage it, and the log of the
 * code revisions that ran.
 */
#ifndef CODEMEM_H
#define CODEMEM_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* CRC-32C of the revision log: flowjit_csum(), tools/lib/flowjit */
#include "libflowjit.h"

enum cm_mode {
	CM_WX,		/* RW to write, RX to run: mprotect around each write */
	CM_RWX,		/* one RWX mapping, written in place */
	CM_MMAP_EXEC,	/* a new RWX mapping per code object */
	CM_MEMFD_DUAL,	/* memfd mapped RW at one address, RX at another */
};

enum cm_map {
	CM_MAP_ONE,	/* one mapping (arena) for all code objects */
	CM_MAP_EACH,	/* a mapping per code object */
};

struct cm_area {
	__u8 *x;	/* where code runs */
	__u8 *w;	/* where it is written: x except with memfd-dual */
	size_t size;
};

struct revlog_ent {
	__u64 rev;
	__u64 addr;
	__u32 len;
	__u8 *bytes;
};

/* the revisions that ran: kept in memory, written out at the end */
struct revlog {
	pthread_mutex_t lock;
	struct revlog_ent *v;
	size_t n, cap;
	__u64 last_rev;		/* revisions written, run or not */
	int nomem;
};

struct cm_space {
	enum cm_mode mode;
	enum cm_map map;
	size_t page;
	struct cm_area arena;	/* CM_MAP_ONE */
	size_t next;		/* arena: first unused byte */
	struct revlog *log;
};

struct cm_code {
	struct cm_space *cs;
	struct cm_area own;	/* CM_MAP_EACH */
	__u8 *x, *w;
	size_t cap;		/* bytes available from x */
	size_t len;		/* bytes of the current revision */
	__u64 rev;		/* current revision */
	__u64 pending;		/* the revision written and not run since, or 0 */
};

extern const char *const cm_mode_names[];

int cm_space_init(struct cm_space *cs, enum cm_mode mode, enum cm_map map,
		  size_t arena_pages, struct revlog *log);
void cm_space_fini(struct cm_space *cs);
int cm_code_alloc(struct cm_space *cs, struct cm_code *co, size_t cap,
		  size_t page_off, void *at);
int cm_code_free(struct cm_code *co);
int cm_code_install(struct cm_code *co, const __u8 *code, size_t len);
int cm_code_patch(struct cm_code *co, size_t off, const __u8 *bytes, size_t n);
int cm_code_store8(struct cm_code *co, size_t off, __u64 v);
void cm_code_ran(struct cm_code *co, __u64 rev);
__u64 cm_code_run(struct cm_code *co, const __u64 *args);
__u64 cm_code_call(struct cm_code *co, const __u64 *args);

void revlog_init(struct revlog *log);
void revlog_free(struct revlog *log);
void revlog_add(struct revlog *log, __u64 rev, const __u8 *x, size_t len);
void revlog_write_line(FILE *f, const struct revlog_ent *e, size_t page);
int revlog_write(struct revlog *log, const char *path, const char *header,
		 size_t page);
void revlog_summary(struct revlog *log, size_t page, size_t max);

#endif /* CODEMEM_H */
