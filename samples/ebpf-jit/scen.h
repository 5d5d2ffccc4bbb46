/* SPDX-License-Identifier: GPL-2.0 */
/* ebpf-jit scenarios: what the command line asks for, and the state they share */
#ifndef SCEN_H
#define SCEN_H

#include "codemem.h"
#include "ujit.h"

#define CODE_MAX	4096	/* bytes of machine code a program may take */

struct opts {
	enum cm_mode mode;
	enum cm_map map;
	int map_set;
	int sync_atomic;	/* threads: patch under running threads */
	const char *log;
	unsigned int count;	/* rewrites, reuses, patches, phases */
	unsigned int threads;
	unsigned int runs;	/* per site, or per thread and phase */
	unsigned int nsites;
	unsigned int offset;	/* span: bytes before the page boundary */
	size_t summary;		/* revisions shown on stdout */
	__u64 args[UJIT_NARGS];
	const struct bpf_insn *insns;	/* compile-run */
	__u32 ninsns;
	const char *prog_name;
	void *owned;		/* insns from --hex or --file, to free */
};

struct ctx {
	const struct opts *o;
	struct cm_space cs;
	struct revlog log;
	unsigned int failures;
};

struct scenario {
	const char *name;
	int (*run)(struct ctx *c);
	size_t arena_pages;	/* for CM_MAP_ONE; 0: count + 2 */
};

const struct scenario *scen_find(const char *name);
void scen_list(void);

#endif /* SCEN_H */
