// SPDX-License-Identifier: GPL-2.0
/*
 * kgt.c - kernel ground truth from QEMU 7.2's own execution log
 *
 * Input: a log of "qemu-system-x86_64 -d in_asm,exec,nochain -dfilter
 * RANGES -D LOG" (no -singlestep: a translation block's instructions are
 * listed, with their bytes as they were in guest memory, when QEMU
 * translates it; "Trace" lines tell which block ran, on which vCPU, in
 * what order), and the output of the guest program (tools/ptsynth/kernel/
 * kscen.c): its pid/tid, the TSC -> perf time conversion of its perf mmap
 * page and the TSC value of each mark.
 *
 * Output: a ground-truth file (gt.h) with one GT_INSN per instruction
 * executed inside the trace filter ranges between the first and the last
 * mark, and a GT_KEXIT record after each instruction that left them, with
 * the address it went to.  See README.rst, "Kernel scenario", for what is
 * derived (instruction times, exit targets) and what is not modelled.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "kgt.h"

#define TB_HASH		(1u << 16)
#define MAX_TB_INSNS	512
#define MAX_MARKS	64
#define KSTACK_MAX	256

struct kinsn {
	uint64_t ip;
	uint8_t len;
	uint8_t bytes[GT_MAX_INSN];
};

/* One translation of a block, as logged by in_asm. */
struct ktb {
	uint64_t pc;
	int n;
	struct kinsn *insn;
	struct ktb *next;	/* hash chain: newest translation first */
};

struct kexec {
	struct ktb *tb;
	uint64_t host;
	int cpu;
	int cpl;
	bool cancelled;
	bool irq;		/* cancelled, then an interrupt at its pc */
};

/* One executed instruction of the marks' CPU. */
struct kstep {
	const struct kinsn *in;
	uint64_t tsc;
	int cpl;
	bool irq_before;	/* an interrupt was taken just before it */
};

struct kgt {
	const struct kgt_opts *o;
	struct ktb *hash[TB_HASH];
	struct kexec *ex;
	size_t nr_ex, cap_ex;
	struct kstep *st;
	size_t nr_st, cap_st;
	/* marks file */
	int pid, tid;
	struct gt_timeconv tc;
	bool have_tc;
	uint64_t mark_tsc[MAX_MARKS];
	int nr_marks;
	/* counters */
	uint64_t lines, tbs, cancelled, unmatched_stop, other_cpu_in_filter;
	uint64_t in_filter, exits, errors, rep_folded, stopped_in_filter;
	uint64_t irqs, exc_in_filter;
};

static unsigned int tb_hash(uint64_t pc)
{
	return (unsigned int)((pc * 0x9e3779b97f4a7c15ULL) >> 48) & (TB_HASH - 1);
}

static struct ktb *tb_find(struct kgt *k, uint64_t pc)
{
	struct ktb *tb;

	for (tb = k->hash[tb_hash(pc)]; tb; tb = tb->next)
		if (tb->pc == pc)
			return tb;
	return NULL;
}

static bool in_filter(const struct kgt_opts *o, uint64_t ip)
{
	int i;

	for (i = 0; i < o->nr_filter; i++)
		if (ip >= o->filter[i].start && ip < o->filter[i].end)
			return true;
	return false;
}

int kgt_parse_ranges(const char *s, struct kgt_range *r, int max)
{
	int n = 0;

	while (*s) {
		char *end;

		if (n == max)
			return -1;
		r[n].start = strtoull(s, &end, 0);
		if (end == s || (end[0] != '.' || end[1] != '.'))
			return -1;
		s = end + 2;
		r[n].end = strtoull(s, &end, 0);
		if (end == s || r[n].end <= r[n].start)
			return -1;
		n++;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * "0x<addr>:  xx xx ...  mnemonic operands": the first 8 bytes are on
 * the instruction's line, further bytes on lines of their own at
 * addr + 8, addr + 16 (QEMU's disas/capstone.c).  Returns the number of
 * bytes, *@more is set when nothing follows them (a continuation line).
 */
static int parse_bytes(const char *p, uint8_t *b, int max, bool *only)
{
	int n = 0;

	while (*p == ' ')
		p++;
	while (n < max && hexval(p[0]) >= 0 && hexval(p[1]) >= 0 &&
	       (p[2] == ' ' || p[2] == '\n' || !p[2])) {
		b[n++] = hexval(p[0]) << 4 | hexval(p[1]);
		p += p[2] ? 3 : 2;
	}
	while (*p == ' ' || *p == '\n')
		p++;
	*only = !*p;
	return n;
}

static int add_exec(struct kgt *k, struct ktb *tb, uint64_t host, int cpu,
		    int cpl)
{
	struct kexec *e;

	if (k->nr_ex == k->cap_ex) {
		size_t cap = k->cap_ex ? k->cap_ex * 2 : 4096;

		e = realloc(k->ex, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		k->ex = e;
		k->cap_ex = cap;
	}
	e = &k->ex[k->nr_ex++];
	e->tb = tb;
	e->host = host;
	e->cpu = cpu;
	e->cpl = cpl;
	e->cancelled = false;
	return 0;
}

static int read_log(struct kgt *k)
{
	char line[512];
	struct kinsn cur[MAX_TB_INSNS];
	int ncur = 0;
	struct kexec *last_cancel = NULL;
	bool in_block = false;
	FILE *f = fopen(k->o->log, "r");

	if (!f) {
		fprintf(stderr, "ptsynth kgt: %s: %s\n", k->o->log, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, pc;
		unsigned int flags, cflags;
		int cpu;

		k->lines++;
		if (in_block && !strncmp(line, "0x", 2)) {
			char *colon;
			struct kinsn *in;
			bool only;
			uint8_t bytes[16];
			int n;

			a = strtoull(line, &colon, 16);
			if (*colon != ':')
				continue;
			n = parse_bytes(colon + 1, bytes, 8, &only);
			in = ncur ? &cur[ncur - 1] : NULL;
			if (only && in && a == in->ip + in->len &&
			    in->len % 8 == 0 && in->len + n <= GT_MAX_INSN) {
				/* continuation of a long instruction */
				memcpy(in->bytes + in->len, bytes, n);
				in->len += n;
				continue;
			}
			if (!n || ncur == MAX_TB_INSNS) {
				fprintf(stderr, "ptsynth kgt: %s:%llu: cannot read instruction line\n",
					k->o->log, (unsigned long long)k->lines);
				fclose(f);
				return -EINVAL;
			}
			in = &cur[ncur++];
			memset(in, 0, sizeof(*in));
			in->ip = a;
			in->len = n;
			memcpy(in->bytes, bytes, n);
			continue;
		}
		if (in_block) {
			/* a block ends at its first other line */
			struct ktb *tb = calloc(1, sizeof(*tb));
			unsigned int h;

			if (tb)
				tb->insn = malloc(ncur * sizeof(*cur));
			if (!tb || !tb->insn) {
				fclose(f);
				return -ENOMEM;
			}
			tb->pc = ncur ? cur[0].ip : 0;
			tb->n = ncur;
			memcpy(tb->insn, cur, ncur * sizeof(*cur));
			h = tb_hash(tb->pc);
			tb->next = k->hash[h];
			k->hash[h] = tb;
			k->tbs++;
			in_block = false;
		}
		if (!strncmp(line, "IN:", 3)) {
			in_block = true;
			ncur = 0;
		} else if (sscanf(line, "Trace %d: %llx [%llx/%llx/%x/%x]", &cpu,
				  &a, &b, &pc, &flags, &cflags) == 6) {
			struct ktb *tb = tb_find(k, pc);

			if (!tb) {
				fprintf(stderr, "ptsynth kgt: %s:%llu: block at %#llx ran but was never listed (in_asm missing?)\n",
					k->o->log, (unsigned long long)k->lines, pc);
				fclose(f);
				return -EINVAL;
			}
			if (add_exec(k, tb, a, cpu, flags & 3)) {
				fclose(f);
				return -ENOMEM;
			}
		} else if (sscanf(line, "Stopped execution of TB chain before %llx [%llx]",
				  &a, &pc) == 2) {
			/* that block did not start executing (QEMU's words) */
			size_t i, lo = k->nr_ex > 16 ? k->nr_ex - 16 : 0;
			bool found = false;

			for (i = k->nr_ex; i > lo; i--) {
				struct kexec *e = &k->ex[i - 1];

				if (e->host == a && e->tb->pc == pc && !e->cancelled) {
					e->cancelled = true;
					k->cancelled++;
					found = true;
					last_cancel = e;
					break;
				}
			}
			if (!found)
				k->unmatched_stop++;
		} else if (strstr(line, ": v=") && strstr(line, " IP=")) {
			/*
			 * -d int: " N: v=VEC e=ERR i=SOFT cpl=CPL IP=CS:EIP"
			 * A hardware interrupt (i=0, vector >= 32) at the pc
			 * of the block run QEMU just stopped before: the
			 * interrupt was taken there.
			 */
			unsigned int vec, ecode, soft, cpl, cs;
			unsigned long long ip;
			const char *v = strstr(line, ": v=");

			if (sscanf(v, ": v=%x e=%x i=%u cpl=%u IP=%x:%llx", &vec,
				   &ecode, &soft, &cpl, &cs, &ip) != 6)
				continue;
			if (vec < 32 && in_filter(k->o, ip))
				k->exc_in_filter++;
			if (last_cancel && !soft && vec >= 32 && cpl == 0 &&
			    ip == last_cancel->tb->pc)
				last_cancel->irq = true;
			last_cancel = NULL;
		}
	}
	fclose(f);
	return 0;
}

static int read_marks(struct kgt *k)
{
	char line[256];
	FILE *f = fopen(k->o->marks, "r");

	if (!f) {
		fprintf(stderr, "ptsynth kgt: %s: %s\n", k->o->marks, strerror(errno));
		return -errno;
	}
	k->pid = k->tid = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int shift, mult, cap;
		unsigned long long zero, tsc;
		int n;

		if (sscanf(line, "pid %d tid %d", &k->pid, &k->tid) == 2)
			continue;
		if (sscanf(line, "timeconv %u %u %llu %u", &shift, &mult, &zero,
			   &cap) == 4) {
			k->tc.time_shift = shift;
			k->tc.time_mult = mult;
			k->tc.time_zero = zero;
			k->tc.cap_user_time_zero = cap;
			k->have_tc = true;
			continue;
		}
		if (sscanf(line, "mark %d %llu", &n, &tsc) == 2) {
			if (n != k->nr_marks + 1 || n > MAX_MARKS ||
			    (k->nr_marks && tsc <= k->mark_tsc[k->nr_marks - 1])) {
				fprintf(stderr, "ptsynth kgt: %s: bad mark line: %s",
					k->o->marks, line);
				fclose(f);
				return -EINVAL;
			}
			k->mark_tsc[k->nr_marks++] = tsc;
		}
	}
	fclose(f);
	if (k->pid < 0 || !k->have_tc || k->nr_marks < 2) {
		fprintf(stderr, "ptsynth kgt: %s: needs pid/tid, timeconv and two marks or more\n",
			k->o->marks);
		return -EINVAL;
	}
	if (!k->tc.cap_user_time_zero)
		fprintf(stderr, "ptsynth kgt: warning: the guest's perf page has no time_zero (TSC is not perf's clock)\n");
	return 0;
}

static bool is_rdtsc(const struct kinsn *in)
{
	return in->len == 2 && in->bytes[0] == 0x0f && in->bytes[1] == 0x31;
}

static int add_step(struct kgt *k, const struct kinsn *in, int cpl)
{
	struct kstep *s;

	if (k->nr_st == k->cap_st) {
		size_t cap = k->cap_st ? k->cap_st * 2 : 65536;

		s = realloc(k->st, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		k->st = s;
		k->cap_st = cap;
	}
	s = &k->st[k->nr_st++];
	s->in = in;
	s->cpl = cpl;
	s->tsc = 0;
	s->irq_before = false;
	return 0;
}

/*
 * The instruction sequence of the marks' CPU from the first mark's rdtsc
 * to the last one's, and each instruction's TSC: a mark's rdtsc has the
 * value the program printed; instructions between two marks get TSCs
 * interpolated linearly by their position in the logged sequence.
 */
static int build_steps(struct kgt *k)
{
	size_t i, mark_idx[MAX_MARKS];
	int j, m = 0, cpu = -1;
	bool irq_next = false;

	for (i = 0; i < k->nr_ex; i++) {
		const struct kexec *e = &k->ex[i];

		if (m == k->nr_marks)
			break;
		if (e->cancelled) {
			/*
			 * QEMU left the loop before this block (an interrupt
			 * or another exit request): inside the filter the
			 * hardware would have sent FUP + TIP.PGD if it was an
			 * interrupt; not modelled, counted.
			 */
			if (m && e->cpu == cpu && in_filter(k->o, e->tb->pc)) {
				k->stopped_in_filter++;
				if (e->irq) {
					irq_next = true;
					k->irqs++;
				}
			}
			continue;
		}
		if (cpu >= 0 && e->cpu != cpu) {
			for (j = 0; j < e->tb->n; j++)
				if (in_filter(k->o, e->tb->insn[j].ip))
					k->other_cpu_in_filter++;
			continue;
		}
		for (j = 0; j < e->tb->n && m < k->nr_marks; j++) {
			const struct kinsn *in = &e->tb->insn[j];
			bool mark = e->cpl == 3 && is_rdtsc(in);

			if (!m && !mark)
				continue;
			if (mark) {
				if (cpu < 0)
					cpu = e->cpu;
				mark_idx[m++] = k->nr_st;
			}
			if (add_step(k, in, e->cpl))
				return -ENOMEM;
			k->st[k->nr_st - 1].irq_before = irq_next;
			irq_next = false;
		}
	}
	if (m != k->nr_marks) {
		fprintf(stderr, "ptsynth kgt: the log has %d marks (rdtsc in user space), the program printed %d\n",
			m, k->nr_marks);
		return -EINVAL;
	}
	for (j = 0; j + 1 < m; j++) {
		size_t a = mark_idx[j], b = mark_idx[j + 1];
		uint64_t ta = k->mark_tsc[j], tb = k->mark_tsc[j + 1];

		for (i = a; i <= b; i++)
			k->st[i].tsc = ta + (uint64_t)((unsigned __int128)(tb - ta) *
						       (i - a) / (b - a));
	}
	return 0;
}

static int kerr(struct kgt *k, const struct kstep *x, const struct kstep *y,
		const char *what)
{
	k->errors++;
	if (k->errors <= 10)
		fprintf(stderr, "ptsynth kgt: at %#llx (next logged %#llx): %s\n",
			(unsigned long long)x->in->ip,
			(unsigned long long)y->in->ip, what);
	return 0;
}

/*
 * Where in-filter instruction @x went when the next logged instruction is
 * @y: 0 = on inside the filter (no exit), 1 = exit to *@target.
 */
static int transition(struct kgt *k, const struct kstep *x,
		      const struct kstep *y, const struct insn_info *ci,
		      uint64_t *stack, int *sp, uint64_t *target)
{
	const struct kgt_opts *o = k->o;
	uint64_t fall = x->in->ip + ci->len, yip = y->in->ip;
	bool yin = in_filter(o, yip);

	switch (ci->cls) {
	case IC_OTHER:
		if (yin && yip == fall)
			return 0;
		return kerr(k, x, y, "a non-branch not followed by the next instruction");
	case IC_JCC:
		if (yin && (yip == fall || yip == ci->target))
			return 0;
		if (yip == ci->target || (yip != fall && !in_filter(o, ci->target))) {
			*target = ci->target;
			return 1;
		}
		if (!in_filter(o, fall)) {
			*target = fall;
			return 1;
		}
		return kerr(k, x, y, "a conditional branch to neither target");
	case IC_JMP:
	case IC_CALL:
		if (yin && yip == ci->target) {
			if (ci->cls == IC_CALL && *sp < KSTACK_MAX)
				stack[(*sp)++] = fall;
			return 0;
		}
		if (!in_filter(o, ci->target)) {
			*target = ci->target;
			return 1;
		}
		return kerr(k, x, y, "a direct branch not followed by its target");
	case IC_CALL_IND:
	case IC_JMP_IND:
		if (yin) {
			if (ci->cls == IC_CALL_IND && *sp < KSTACK_MAX)
				stack[(*sp)++] = fall;
			return 0;
		}
		*target = yip;
		return 1;
	case IC_RET:
		if (*sp && stack[*sp - 1] == yip) {
			(*sp)--;
			if (yin)
				return 0;
			*target = yip;
			return 1;
		}
		if (!yin) {
			*sp = 0;
			*target = yip;
			return 1;
		}
		return kerr(k, x, y, "a return to an address no logged call pushed (log the caller's range too)");
	default:
		return kerr(k, x, y, "a far transfer inside the filter (not modelled)");
	}
}

static int write_gt(struct kgt *k)
{
	struct gt_file_header hdr;
	struct gt_writer w;
	uint64_t stack[KSTACK_MAX];
	int sp = 0, err = 0;
	size_t i;

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, GT_MAGIC, 8);
	hdr.version = GT_VERSION;
	hdr.pid = k->pid;
	hdr.tc = k->tc;
	hdr.start_tsc = k->mark_tsc[0];
	if (gt_writer_open(&w, k->o->out, &hdr))
		return -EIO;
	for (i = 0; i < k->nr_st && !err; i++) {
		const struct kstep *x = &k->st[i], *y;
		struct insn_info ci;
		struct gt_insn gi;
		struct gt_kexit ke;
		uint64_t target;
		size_t n;
		bool irq;

		if (x->cpl != 0 || !in_filter(k->o, x->in->ip))
			continue;
		if (classify(x->in->bytes, x->in->len, x->in->ip, &ci) ||
		    ci.len != x->in->len) {
			fprintf(stderr, "ptsynth kgt: cannot classify the instruction at %#llx\n",
				(unsigned long long)x->in->ip);
			return -EINVAL;
		}
		/* a rep string instruction: QEMU runs each iteration as a block */
		irq = x->irq_before;
		n = i + 1;
		while (ci.rep_string && n < k->nr_st && k->st[n].in->ip == x->in->ip) {
			/* interrupted between iterations: as if before it */
			irq |= k->st[n].irq_before;
			n++;
			k->rep_folded++;
		}
		if (irq) {
			struct gt_kirq kq;

			memset(&kq, 0, sizeof(kq));
			kq.h.type = GT_KIRQ;
			kq.h.size = sizeof(kq);
			kq.h.pid = k->pid;
			kq.h.tid = k->tid;
			kq.h.tsc = x->tsc;
			kq.ip = x->in->ip;
			err = gt_write(&w, &kq.h, NULL, 0);
			if (err)
				break;
		}
		if (n >= k->nr_st) {
			fprintf(stderr, "ptsynth kgt: the last mark is inside the filter\n");
			return -EINVAL;
		}
		y = &k->st[n];
		memset(&gi, 0, sizeof(gi));
		gi.h.type = GT_INSN;
		gi.h.flags = GT_INSN_KERNEL;
		gi.h.size = sizeof(gi);
		gi.h.pid = k->pid;
		gi.h.tid = k->tid;
		gi.h.tsc = x->tsc;
		gi.ip = x->in->ip;
		gi.len = x->in->len;
		memcpy(gi.bytes, x->in->bytes, x->in->len);
		err = gt_write(&w, &gi.h, NULL, 0);
		k->in_filter++;
		if (!err && transition(k, x, y, &ci, stack, &sp, &target) == 1) {
			memset(&ke, 0, sizeof(ke));
			ke.h.type = GT_KEXIT;
			ke.h.size = sizeof(ke);
			ke.h.pid = k->pid;
			ke.h.tid = k->tid;
			ke.h.tsc = y->tsc;
			ke.target = target;
			err = gt_write(&w, &ke.h, NULL, 0);
			k->exits++;
		}
		i = n - 1;
	}
	if (gt_writer_close(&w) && !err)
		err = -EIO;
	return err;
}

int kgt_run(const struct kgt_opts *o)
{
	struct kgt *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	k->o = o;
	err = classify_init() ? -EINVAL : 0;
	if (!err)
		err = read_marks(k);
	if (!err)
		err = read_log(k);
	if (!err)
		err = build_steps(k);
	if (!err)
		err = write_gt(k);
	fprintf(stderr, "ptsynth kgt: %llu log lines, %llu blocks translated, %zu block runs (%llu not started, %llu of them in the filter between the marks), %zu steps in the window, %llu in the filter, %llu filter exits, %llu rep iterations folded, %llu in-filter steps of other CPUs, %llu interrupts in the filter, %llu exceptions in the filter, %llu errors\n",
		(unsigned long long)k->lines, (unsigned long long)k->tbs,
		k->nr_ex, (unsigned long long)k->cancelled,
		(unsigned long long)k->stopped_in_filter, k->nr_st,
		(unsigned long long)k->in_filter, (unsigned long long)k->exits,
		(unsigned long long)k->rep_folded,
		(unsigned long long)k->other_cpu_in_filter,
		(unsigned long long)k->irqs, (unsigned long long)k->exc_in_filter,
		(unsigned long long)k->errors);
	if (!err && k->errors)
		err = -EINVAL;
	/* blocks and steps are freed with the process: a one-shot tool */
	free(k->ex);
	free(k->st);
	free(k);
	return err;
}
