// SPDX-License-Identifier: GPL-2.0
/*
 * pr_replay: loading a perf.data into queues, tasks and the code store.
 */
#include "pr_replay.h"
#include "pr_sym.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#define MISC_CPUMODE_MASK	0x7
#define MISC_KERNEL		1
#define MISC_COMM_EXEC		(1 << 13)
#define MISC_MMAP_DATA		(1 << 13)
#define MISC_MMAP_BUILD_ID	(1 << 14)
#define MISC_SWITCH_OUT		(1 << 13)

static int pr_replay_fail(struct pr_replay *rp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rp->error, sizeof(rp->error), fmt, ap);
	va_end(ap);
	return -1;
}

void pr_replay_init(struct pr_replay *rp, const struct pr_replay_opts *opts)
{
	if (!rp)
		return;
	memset(rp, 0, sizeof(*rp));
	if (opts)
		rp->opts = *opts;
	pr_store_init(&rp->store);
	rp->store.no_files = rp->opts.no_files;
	rp->store.symbols = !!(rp->opts.outputs & (PR_OUT_CALLS |
						  PR_OUT_PROFILE |
						  PR_OUT_EXPORT));
}

void pr_replay_fini(struct pr_replay *rp)
{
	size_t i;

	if (!rp)
		return;
	for (i = 0; i < rp->nq; ++i)
		free(rp->q[i].seg);
	free(rp->q);
	free(rp->task);
	for (i = 0; i < rp->ncpu; ++i)
		free(rp->cpu[i].sw);
	free(rp->cpu);
	pr_store_fini(&rp->store);
	pr_jitnames_fini(&rp->names);
	pr_perf_fini(&rp->perf);
	memset(rp, 0, sizeof(*rp));
}

/* The most sideband steps (region and task visits) a load may take. */
#define PR_LOAD_WORK_MAX	2000000000ULL

static size_t pr_task_slot(const struct pr_task *task, size_t cap,
			   uint32_t tid)
{
	size_t i = (tid * 0x9e3779b1u) & (cap - 1);

	while (task[i].tid && task[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return i;
}

static void pr_replay_set_task(struct pr_replay *rp, uint32_t tid,
			       uint32_t pid)
{
	size_t i;

	if (tid == UINT32_MAX || !tid)
		return;
	if ((rp->ntask + 1) * 2 > rp->captask) {
		size_t cap = rp->captask ? 2 * rp->captask : 64;
		struct pr_task *t = calloc(cap, sizeof(*t));

		if (!t)
			return;
		for (i = 0; i < rp->captask; ++i)
			if (rp->task[i].tid)
				t[pr_task_slot(t, cap, rp->task[i].tid)] =
					rp->task[i];
		free(rp->task);
		rp->task = t;
		rp->captask = cap;
	}
	i = pr_task_slot(rp->task, rp->captask, tid);
	if (!rp->task[i].tid)
		rp->ntask += 1;
	rp->task[i].tid = tid;
	rp->task[i].pid = pid;
}

/* Name thread @tid @comm (up to @len bytes, NUL-terminated or not):
 * control characters become '?'.
 */
static void pr_replay_set_comm(struct pr_replay *rp, uint32_t tid,
			       const uint8_t *comm, size_t len)
{
	struct pr_task *t;
	size_t i;

	if (!rp->captask || !tid)
		return;
	t = &rp->task[pr_task_slot(rp->task, rp->captask, tid)];
	if (t->tid != tid)
		return;
	for (i = 0; i < len && i + 1 < sizeof(t->comm) && comm[i]; ++i)
		t->comm[i] = comm[i] < 0x20 || comm[i] == 0x7f ? '?' :
			     (char)comm[i];
	t->comm[i] = 0;
}

const char *pr_replay_comm(const struct pr_replay *rp, uint32_t tid)
{
	const struct pr_task *t;

	if (!rp || !rp->captask || !tid)
		return NULL;
	t = &rp->task[pr_task_slot(rp->task, rp->captask, tid)];
	return t->tid == tid && t->comm[0] ? t->comm : NULL;
}

uint32_t pr_replay_pid(const struct pr_replay *rp, uint32_t tid)
{
	size_t i;

	if (!rp || !rp->captask || !tid)
		return tid;
	i = pr_task_slot(rp->task, rp->captask, tid);
	return rp->task[i].tid ? rp->task[i].pid : tid;
}

static struct pr_cpu_sched *pr_replay_cpu(struct pr_replay *rp, uint32_t cpu)
{
	struct pr_cpu_sched *c;
	size_t i;

	rp->work += rp->ncpu;
	for (i = 0; i < rp->ncpu; ++i)
		if (rp->cpu[i].cpu == cpu)
			return &rp->cpu[i];
	if (rp->ncpu >= 4096)
		return NULL;
	c = realloc(rp->cpu, (rp->ncpu + 1) * sizeof(*c));
	if (!c)
		return NULL;
	rp->cpu = c;
	c = &rp->cpu[rp->ncpu++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	return c;
}

int pr_replay_on_cpu(const struct pr_replay *rp, uint32_t cpu, uint64_t time,
		     uint32_t *pid, uint32_t *tid)
{
	const struct pr_cpu_sched *c = NULL;
	size_t i, lo, hi;

	for (i = 0; rp && i < rp->ncpu; ++i)
		if (rp->cpu[i].cpu == cpu) {
			c = &rp->cpu[i];
			break;
		}
	if (!c || !c->nsw)
		return -1;
	/* the last switch at or before @time */
	lo = 0;
	hi = c->nsw;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->sw[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		/* before the first switch: the task switched out by it */
		if (!c->sw[0].out)
			return -1;
		lo = 1;
	} else if (c->sw[lo - 1].out) {
		return -1;
	}
	*pid = c->sw[lo - 1].pid;
	*tid = c->sw[lo - 1].tid;
	return 0;
}

static int pr_sw_cmp(const void *a, const void *b)
{
	const struct pr_switch *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* out before in at the same time */
	return y->out - x->out;
}

static struct pr_queue *pr_replay_queue(struct pr_replay *rp, uint32_t idx)
{
	struct pr_queue *q;
	size_t i;

	rp->work += rp->nq;
	for (i = 0; i < rp->nq; ++i)
		if (rp->q[i].idx == idx)
			return &rp->q[i];
	if (rp->nq >= 4096)
		return NULL;
	q = realloc(rp->q, (rp->nq + 1) * sizeof(*q));
	if (!q)
		return NULL;
	rp->q = q;
	q = &rp->q[rp->nq++];
	memset(q, 0, sizeof(*q));
	q->idx = idx;
	return q;
}

static int pr_replay_auxtrace(struct pr_replay *rp,
			      const struct pr_perf_rec *rec)
{
	struct pr_queue *q;
	uint32_t idx = pr_get32(rec->body + 24);

	q = pr_replay_queue(rp, idx);
	if (!q)
		return pr_replay_fail(rp, "too many AUX queues");
	q->tid = (int32_t)pr_get32(rec->body + 28);
	q->cpu = (int32_t)pr_get32(rec->body + 32);
	if (!rec->aux_size)
		return 0;
	if (q->size + rec->aux_size < q->size)
		return pr_replay_fail(rp, "AUX queue too large");
	if (q->nseg == q->capseg) {
		size_t cap = q->capseg ? 2 * q->capseg : 4;
		struct pr_seg *seg = realloc(q->seg, cap * sizeof(*seg));

		if (!seg)
			return pr_replay_fail(rp, "out of memory");
		q->seg = seg;
		q->capseg = cap;
	}
	q->seg[q->nseg].p = rec->aux;
	q->seg[q->nseg].n = rec->aux_size;
	q->nseg += 1;
	q->size += rec->aux_size;
	q->nbuffers += 1;
	return 0;
}

/* Copy @str (not NUL-terminated within @max bytes perhaps) to @out. */
static void pr_copy_name(char *out, size_t size, const uint8_t *str,
			 size_t max)
{
	size_t n = strnlen((const char *)str, max);

	if (n >= size)
		n = size - 1;
	memcpy(out, str, n);
	out[n] = 0;
}

/* Add this machine's vdso for @space at @time (perf does the same: the
 * vdso of the decoding machine stands for the recording one's).
 */
static void pr_replay_vdso(struct pr_replay *rp, uint32_t space,
			   uint64_t start, uint64_t len, uint64_t time)
{
	const uint8_t *self = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	struct pr_region rgn;
	uint8_t *copy;
	FILE *maps;
	char line[256];
	uint64_t lo = 0, hi = 0;

	if (!self || rp->opts.no_vdso || rp->opts.no_files)
		return;
	maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]")) {
			if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) != 2)
				lo = hi = 0;
			break;
		}
	fclose(maps);
	if (hi <= lo || lo != (uint64_t)(uintptr_t)self)
		return;
	if (len > hi - lo)
		len = hi - lo;
	copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, self, len);
	memset(&rgn, 0, sizeof(rgn));
	rgn.space = space;
	rgn.kind = PR_RGN_VDSO;
	rgn.start = start;
	rgn.end = start + len;
	rgn.t_start = time;
	rgn.bytes = copy;
	rgn.nbytes = len;
	rgn.owned = 1;
	/* the symbols are parsed once per region; vdsos are few */
	rgn.elf = NULL;
	if (!pr_store_add(&rp->store, &rgn, "[vdso]"))
		free(copy);
}

static void pr_replay_name_region(struct pr_replay *rp, uint32_t space,
				  uint64_t start, uint64_t len, uint64_t time,
				  const char *name)
{
	struct pr_region rgn;

	memset(&rgn, 0, sizeof(rgn));
	rgn.space = space;
	rgn.kind = PR_RGN_NAME;
	rgn.start = start;
	rgn.end = start + len;
	rgn.t_start = time;
	if (rgn.end > rgn.start)
		pr_store_add(&rp->store, &rgn, name);
}

static int pr_replay_mmap(struct pr_replay *rp, const struct pr_perf_rec *rec)
{
	const uint8_t *b = rec->body;
	uint32_t pid, prot = 0x4 /* PROT_EXEC */;
	uint64_t start, len, pgoff;
	const uint8_t *name, *bid = NULL;
	size_t fixed, bidsize = 0;
	char path[4096];
	uint32_t space;

	fixed = rec->type == PR_REC_MMAP2 ? 64 : 32;
	if (rec->body_size < fixed + 1)
		return pr_replay_fail(rp, "MMAP record at offset %" PRIu64
				      " is too small", rec->offset);
	pid = pr_get32(b);
	start = pr_get64(b + 8);
	len = pr_get64(b + 16);
	pgoff = pr_get64(b + 24);
	if (rec->type == PR_REC_MMAP2) {
		prot = pr_get32(b + 56);
		if (rec->misc & MISC_MMAP_BUILD_ID) {
			bidsize = b[32];
			if (bidsize > 20)
				bidsize = 20;
			bid = b + 36;
		}
	} else if (rec->misc & MISC_MMAP_DATA) {
		return 0;
	}
	name = b + fixed;
	pr_copy_name(path, sizeof(path), name, rec->body_size - fixed);
	if (!(prot & 0x4) || !len || start + len < start)
		return 0;

	rp->cnt.mmaps += 1;
	space = (rec->misc & MISC_CPUMODE_MASK) == MISC_KERNEL ? 0 : pid;
	if (space == UINT32_MAX)
		space = 0;

	if (!strcmp(path, "[vdso]")) {
		pr_replay_vdso(rp, space, start, len, rec->sid.time);
		return 0;
	}
	if (path[0] == '/' && strncmp(path, "//anon", 6) &&
	    strncmp(path, "/memfd:", 7) &&
	    pr_store_add_file(&rp->store, space, start, len, pgoff, path,
			      rec->sid.time, bid, bidsize))
		return 0;
	if (path[0] == '/' && strncmp(path, "//anon", 6))
		rp->cnt.mmaps_unreadable += 1;
	if (!strncmp(path, "//anon", 6) || !path[0]) {
		char jit[64];

		snprintf(jit, sizeof(jit), "jit:%u:0x%" PRIx64, space, start);
		pr_replay_name_region(rp, space, start, len, rec->sid.time,
				      jit);
	} else {
		pr_replay_name_region(rp, space, start, len, rec->sid.time,
				      path);
	}
	return 0;
}

/* A new process @pid forked from @ppid at @time gets a copy of the
 * parent's address space: of its regions (files, vdso, names).  Not of
 * its flowjit images: those are the parent's asid's, and the kernel
 * snapshots a traced child's code again under the child's own asid at its
 * first exec fault in it, before any of it runs there.
 */
static void pr_replay_fork_space(struct pr_replay *rp, uint32_t pid,
				 uint32_t ppid, uint64_t time)
{
	size_t i, n = rp->store.nrgn;

	rp->work += n;
	for (i = 0; i < n; ++i) {
		struct pr_region copy = rp->store.rgn[i];

		if (copy.space != ppid || copy.t_start > time ||
		    copy.t_end <= time)
			continue;
		copy.space = pid;
		copy.t_start = time;
		copy.owned = 0;
		pr_store_add(&rp->store, &copy, rp->store.rgn[i].name);
	}
}

static int pr_replay_flowjit(struct pr_replay *rp,
			     const struct pr_perf_rec *rec)
{
	rp->cnt.fj_records += 1;
	if (rp->opts.no_flowjit) {
		rp->cnt.fj_ignored += 1;
		return 0;
	}
	/* user images are by asid: the library's store, in rp->store */
	if (pr_store_add_flowjit(&rp->store, rec->body, rec->body_size,
				 rec->sid.time, rec->sid.has_time) < 0)
		return pr_replay_fail(rp, "out of memory");
	return 0;
}

static void pr_replay_ksymbol(struct pr_replay *rp,
			      const struct pr_perf_rec *rec)
{
	uint64_t addr, time = rec->sid.time;
	uint32_t len;
	uint16_t flags;
	char name[256];

	if (rec->body_size < 17)
		return;
	rp->cnt.ksymbols += 1;
	addr = pr_get64(rec->body);
	len = pr_get32(rec->body + 8);
	flags = pr_get16(rec->body + 14);
	pr_copy_name(name, sizeof(name), rec->body + 16, rec->body_size - 16);
	if (flags & 1) {	/* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
		pr_store_retire(&rp->store, 0, addr, addr + len, time,
				PR_RGN_NAME, 1);
		return;
	}
	pr_replay_name_region(rp, 0, addr, len, time, name);
	/* name the flowjit image loaded there just before */
	pr_store_name_flowjit(&rp->store, addr, time, name);
}

/* The PT_LOAD segments of the kernel ELF @path as kernel (space 0) code
 * from time 0: text as built; alternatives, paravirt and jump label
 * patching done at boot are not in it (TEXT_POKE records and flowjit
 * images cover what changes while recording).
 * Returns 0 or -1 with rp->error set.
 */
static int pr_replay_vmlinux(struct pr_replay *rp, const char *path)
{
	struct pr_elf *elf = pr_elf_open(path);
	size_t i, added = 0;

	if (!elf)
		return pr_replay_fail(rp, "%s: not a readable ELF file", path);
	for (i = 0; i < elf->nload; i++) {
		const struct pr_elf_load *l = &elf->load[i];

		if (l->vaddr < (1ULL << 63) || !l->filesz)
			continue;
		if (pr_store_add_file(&rp->store, 0, l->vaddr, l->filesz,
				      l->offset, path, 0, NULL, 0))
			added++;
	}
	pr_elf_free(elf);
	if (!added)
		return pr_replay_fail(rp, "%s: no kernel segments", path);
	return 0;
}

static void pr_replay_text_poke(struct pr_replay *rp,
				const struct pr_perf_rec *rec)
{
	struct pr_region rgn;
	uint16_t old_len, new_len;
	uint8_t *copy;

	if (rec->body_size < 12)
		return;
	rp->cnt.text_pokes += 1;
	old_len = pr_get16(rec->body + 8);
	new_len = pr_get16(rec->body + 10);
	if (!new_len || (size_t)12 + old_len + new_len > rec->body_size)
		return;
	copy = malloc(new_len);
	if (!copy)
		return;
	memcpy(copy, rec->body + 12 + old_len, new_len);
	memset(&rgn, 0, sizeof(rgn));
	rgn.space = 0;
	rgn.kind = PR_RGN_POKE;
	rgn.start = pr_get64(rec->body);
	rgn.end = rgn.start + new_len;
	rgn.t_start = rec->sid.time;
	rgn.bytes = copy;
	rgn.nbytes = new_len;
	rgn.owned = 1;
	if (rgn.end < rgn.start || !pr_store_add(&rp->store, &rgn, "[text_poke]"))
		free(copy);
}

static int pr_replay_record(struct pr_replay *rp,
			    const struct pr_perf_rec *rec)
{
	const uint8_t *b = rec->body;
	uint64_t time = rec->sid.time;

	rp->cnt.records += 1;
	if (rec->type < 72)
		rp->cnt.by_type[rec->type] += 1;
	if (rec->sid.has_time && rec->type != PR_REC_LOST &&
	    rec->type != PR_REC_AUXTRACE && rec->type != PR_REC_AUXTRACE_INFO) {
		struct pr_cpu_sched *c = pr_replay_cpu(rp, rec->sid.cpu);

		if (!c)
			return pr_replay_fail(rp, "too many CPUs");
		if (time > c->last_time)
			c->last_time = time;
	}

	switch (rec->type) {
	case PR_REC_AUXTRACE_INFO:
		if (pr_perf_pt_info(&rp->info, rec) < 0)
			return pr_replay_fail(rp, "AUXTRACE_INFO at offset %"
					      PRIu64 " is not a valid Intel PT "
					      "one", rec->offset);
		return 0;

	case PR_REC_AUXTRACE:
		return pr_replay_auxtrace(rp, rec);

	case PR_REC_MMAP:
	case PR_REC_MMAP2:
		return pr_replay_mmap(rp, rec);

	case PR_REC_COMM:
		if (rec->body_size < 8)
			break;
		pr_replay_set_task(rp, pr_get32(b + 4), pr_get32(b));
		pr_replay_set_comm(rp, pr_get32(b + 4), b + 8,
				   rec->body_size - 8);
		if (rec->misc & MISC_COMM_EXEC) {
			/* a new address space: the old mappings end */
			rp->cnt.execs += 1;
			pr_store_retire(&rp->store, pr_get32(b), 0, UINT64_MAX,
					time, 0, 0);
		}
		return 0;

	case PR_REC_FORK:
		if (rec->body_size < 16)
			break;
		rp->cnt.forks += 1;
		pr_replay_set_task(rp, pr_get32(b + 8), pr_get32(b));
		{
			/* a child is named as its parent until its COMM */
			const char *pc = pr_replay_comm(rp, pr_get32(b + 12));

			if (pc && !pr_replay_comm(rp, pr_get32(b + 8)))
				pr_replay_set_comm(rp, pr_get32(b + 8),
						   (const uint8_t *)pc,
						   strlen(pc));
		}
		if (pr_get32(b) != pr_get32(b + 4))
			pr_replay_fork_space(rp, pr_get32(b), pr_get32(b + 4),
					     rec->body_size >= 24 ?
					     pr_get64(b + 16) : time);
		return 0;

	case PR_REC_EXIT:
		return 0;

	case PR_REC_ITRACE_START:
		if (rec->body_size < 8)
			break;
		pr_replay_set_task(rp, pr_get32(b + 4), pr_get32(b));
		return 0;

	case PR_REC_SWITCH:
	case PR_REC_SWITCH_CPU_WIDE: {
		struct pr_cpu_sched *c;

		if (!rec->sid.has_time)
			return 0;
		c = pr_replay_cpu(rp, rec->sid.cpu);
		if (!c)
			return pr_replay_fail(rp, "too many CPUs");
		if (c->nsw == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 64;
			struct pr_switch *sw = realloc(c->sw, cap * sizeof(*sw));

			if (!sw)
				return pr_replay_fail(rp, "out of memory");
			c->sw = sw;
			c->cap = cap;
		}
		c->sw[c->nsw].time = time;
		c->sw[c->nsw].pid = rec->sid.pid;
		c->sw[c->nsw].tid = rec->sid.tid;
		c->sw[c->nsw].out = !!(rec->misc & MISC_SWITCH_OUT);
		c->nsw += 1;
		pr_replay_set_task(rp, rec->sid.tid, rec->sid.pid);
		return 0;
	}

	case PR_REC_LOST: {
		struct pr_cpu_sched *c;
		uint64_t from = 0, to = UINT64_MAX;

		if (rec->body_size < 16)
			break;
		rp->cnt.lost_events += 1;
		rp->cnt.lost += pr_get64(b + 8);
		/*
		 * The lost records were written to this CPU's ring buffer
		 * after its last record that arrived and before this one:
		 * flowjit images of then may be missing. Without a time,
		 * the whole trace.
		 */
		if (rec->sid.has_time) {
			c = pr_replay_cpu(rp, rec->sid.cpu);
			if (!c)
				return pr_replay_fail(rp, "too many CPUs");
			from = c->last_time;
			to = time > from ? time : from;
		}
		if (!rp->opts.no_flowjit &&
		    pr_store_flowjit_lost(&rp->store, from, to) < 0)
			return pr_replay_fail(rp, "out of memory");
		return 0;
	}

	case PR_REC_LOST_SAMPLES:
		if (rec->body_size >= 8)
			rp->cnt.lost_samples += pr_get64(b);
		return 0;

	case PR_REC_AUX:
		if (rec->body_size < 24)
			break;
		if (pr_get64(b + 16) & 1)
			rp->cnt.aux_truncated += 1;
		if (pr_get64(b + 16) & 4)
			rp->cnt.aux_partial += 1;
		if (pr_get64(b + 16) & 8)
			rp->cnt.aux_collision += 1;
		return 0;

	case PR_REC_KSYMBOL:
		pr_replay_ksymbol(rp, rec);
		return 0;

	case PR_REC_BPF_EVENT:
		if (rec->body_size >= 8) {
			if (pr_get16(b) == 1)
				rp->cnt.bpf_loads += 1;
			else if (pr_get16(b) == 2)
				rp->cnt.bpf_unloads += 1;
		}
		return 0;

	case PR_REC_TEXT_POKE:
		if (!rp->opts.no_text_poke)
			pr_replay_text_poke(rp, rec);
		return 0;

	case PR_REC_FLOWJIT:
		return pr_replay_flowjit(rp, rec);

	default:
		return 0;
	}
	return pr_replay_fail(rp, "record of type %u at offset %" PRIu64
			      " is too small", rec->type, rec->offset);
}

/* Records read: give back the pages of the mapped perf.data below @off
 * (every 8 MiB; from *@released on).  Reading a record maps the pages
 * around it too (the kernel's fault-around), much of the AUX data between
 * records; pr_decode reads that later, piece by piece.
 */
static void pr_replay_release(struct pr_replay *rp, uint64_t off,
			      uint64_t *released)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!rp->perf.pd.mapped || off > rp->perf.pd.size ||
	    off - *released < (8u << 20))
		return;
	off &= ~(page - 1);
	(void)madvise((void *)(rp->perf.pd.buf + *released), off - *released,
		      MADV_DONTNEED);
	*released = off;
}

int pr_replay_load(struct pr_replay *rp, const uint8_t *buf, size_t size)
{
	struct pr_perf_rec rec;
	uint64_t released = 0;
	size_t i;
	int status;

	if (!rp)
		return -1;
	if (buf)
		status = pr_perf_init_mem(&rp->perf, buf, size);
	else
		status = pr_perf_open(&rp->perf, rp->opts.input);
	if (status < 0)
		return pr_replay_fail(rp, "%s", rp->perf.error);
	if (rp->opts.vmlinux && pr_replay_vmlinux(rp, rp->opts.vmlinux) < 0)
		return -1;

	while ((status = pr_perf_next(&rp->perf, &rec)) > 0) {
		pr_replay_release(rp, rec.offset, &released);
		if (pr_replay_record(rp, &rec) < 0)
			return -1;
		if (rp->work + rp->store.work > PR_LOAD_WORK_MAX)
			return pr_replay_fail(rp, "the sideband is too complex "
					      "(more than %llu processing "
					      "steps at offset %" PRIu64 "): "
					      "hostile input?",
					      PR_LOAD_WORK_MAX, rec.offset);
		if (rp->store.dropped)
			return pr_replay_fail(rp, "more than %u code regions "
					      "(at offset %" PRIu64 "): not "
					      "supported",
					      PR_STORE_MAX_REGIONS,
					      rec.offset);
	}
	if (status < 0)
		return pr_replay_fail(rp, "%s", rp->perf.error);
	pr_replay_release(rp, rp->perf.pd.size, &released);

	pr_store_freeze(&rp->store);
	for (i = 0; i < rp->ncpu; ++i)
		if (rp->cpu[i].nsw)
			qsort(rp->cpu[i].sw, rp->cpu[i].nsw,
			      sizeof(*rp->cpu[i].sw), pr_sw_cmp);

	if (!rp->info.valid)
		return pr_replay_fail(rp, "no Intel PT AUXTRACE_INFO: not an "
				      "intel_pt recording");
	/* the intel_pt event's config: which timing packets it asked for */
	for (i = 0; i < rp->perf.pd.nattr; ++i)
		if (rp->perf.pd.attr[i].type == rp->info.pmu_type) {
			rp->pt_config = rp->perf.pd.attr[i].config;
			break;
		}
	if (!rp->nq)
		return pr_replay_fail(rp, "no AUX trace data (AUXTRACE "
				      "records) in the file");
	if (pr_jitnames_replay(rp, stderr) < 0)
		return pr_replay_fail(rp, "out of memory reading JIT names");
	return 0;
}
