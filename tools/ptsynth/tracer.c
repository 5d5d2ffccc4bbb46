// SPDX-License-Identifier: GPL-2.0
/*
 * tracer.c - single-step a program with ptrace and log ground truth
 *
 * Every user-space instruction executed by every thread of the traced
 * program is logged as a GT_INSN record (tid, TSC read by the tracer when
 * the thread stopped in front of the instruction, IP, code bytes read from
 * /proc/PID/mem at that moment).  Executable mappings are logged when they
 * appear, with a byte snapshot for anonymous/vdso memory.
 *
 * Start-at mode (--start-on-signal): the program runs freely
 * (PTRACE_CONT) until the first delivery of a chosen signal, which the
 * tracer swallows; single-stepping starts with the instruction the
 * signal would have interrupted, as if tracing had been enabled then
 * (perf record -p).  --stop-on-signal ends it the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "classify.h"
#include "gt.h"
#include "perfdata.h"
#include "tracer.h"

#define MAX_THREADS	256
#define MAX_MAPS	1024

struct thread {
	pid_t tid;
	bool live;
	bool started;		/* first instruction seen */
	bool running;		/* start-at mode: initial stop consumed */
	bool prev_rep;		/* last logged insn was a REP string insn */
	uint64_t prev_ip;
	bool has_cand;		/* stopped in front of cand, not yet executed */
	bool cand_rep;
	bool cand_undecoded;
	bool skip_trap;		/* next SIGTRAP is not a completed step */
	long cand_sysnr;
	struct gt_insn cand;
	long pending_syscall;	/* syscall nr stepped over, or -1 */
};

/* start-at mode: what the tracer does with the program */
enum ps_trace_phase {
	PHASE_WAIT,		/* running freely up to the start signal */
	PHASE_STEP,		/* single-stepping, logging */
	PHASE_DONE,		/* stop signal seen: running freely, no log */
};

struct known_map {
	uint64_t start, end, pgoff, ino;
	char name[256];
};

struct ps_tracer {
	struct gt_writer w;
	pid_t pid;
	int memfd;
	struct thread threads[MAX_THREADS];
	int nr_threads;
	int nr_live;
	struct known_map maps[MAX_MAPS];
	int nr_maps;
	uint64_t nr_insns;
	uint64_t nr_undecoded;
	uint64_t max_insns;
	int start_sig, stop_sig;
	enum ps_trace_phase phase;
	int exit_status;
};

/*
 * A signal for --start-on-signal/--stop-on-signal: a number or a name
 * (USR1, SIGUSR1, usr1).  Signals the tracer needs for itself or never
 * sees delivered (TRAP, STOP, KILL) are refused: -1.
 */
int ps_trace_parse_signal(const char *s)
{
	char *end;
	long n;
	int i;

	if (!s || !*s)
		return -1;
	n = strtol(s, &end, 10);
	if (*end) {
		if (!strncasecmp(s, "SIG", 3))
			s += 3;
		for (n = -1, i = 1; i < SIGRTMIN && n < 0; i++) {
			const char *name = sigabbrev_np(i);

			if (name && !strcasecmp(name, s))
				n = i;
		}
	}
	if (n <= 0 || n >= NSIG || n == SIGTRAP || n == SIGSTOP ||
	    n == SIGKILL)
		return -1;
	return n;
}

static inline uint64_t ps_trace_tsc_now(void)
{
	return __rdtsc();
}

static int ps_trace_open_dummy(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->exclude_kernel = 1;
	attr->comm = 1;
	attr->sample_id_all = 1;
	attr->sample_type = PERF_SAMPLE_TIME;
	return syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
}

/* Perf time of the COMM records in the ring buffer, in order. */
static int ps_trace_comm_times(struct perf_event_mmap_page *pc, long page,
			       uint64_t *times, int max)
{
	uint8_t *data = (uint8_t *)pc + page;
	uint64_t head = pc->data_head, off = 0;
	int n = 0;

	__sync_synchronize();
	while (off < head && n < max) {
		struct perf_event_header *h = (void *)(data + (off % page));

		if (!h->size)
			break;
		if (h->type == PERF_RECORD_COMM)
			times[n++] = *(uint64_t *)((uint8_t *)h + h->size - 8);
		off += h->size;
	}
	return n;
}

/*
 * The kernel offers no TSC conversion in its perf mmap page when
 * sched_clock is not the native TSC one (e.g. kvm-clock in a VM).  Then
 * calibrate against the perf clock itself: bracket two COMM records (from
 * prctl(PR_SET_NAME)) 50 ms apart with rdtsc and fit time = a * tsc + b,
 * expressed as time_mult/time_shift/time_zero.
 */
static int ps_trace_calibrate_time_conv(struct gt_timeconv *tc)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pc;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t tsc[2], t[2];
	char name[16] = { 0 };
	double ns_per_tsc;
	int fd, i;

	fd = ps_trace_open_dummy(&attr);
	if (fd < 0)
		return -1;
	pc = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED) {
		close(fd);
		return -1;
	}
	prctl(PR_GET_NAME, name);
	for (i = 0; i < 2; i++) {
		uint64_t a = ps_trace_tsc_now(), b;

		prctl(PR_SET_NAME, i ? "ptsynth-cal1" : "ptsynth-cal0");
		b = ps_trace_tsc_now();
		tsc[i] = a + (b - a) / 2;
		if (!i)
			usleep(50000);
	}
	prctl(PR_SET_NAME, name);
	i = ps_trace_comm_times(pc, page, t, 2);
	munmap(pc, 2 * page);
	close(fd);
	if (i != 2 || t[1] <= t[0] || tsc[1] <= tsc[0])
		return -1;
	ns_per_tsc = (double)(t[1] - t[0]) / (double)(tsc[1] - tsc[0]);
	tc->time_shift = 31;
	tc->time_mult = (uint32_t)(ns_per_tsc * (double)(1ULL << 31) + 0.5);
	tc->cap_user_time_zero = 1;
	tc->time_zero = 0;
	tc->time_zero = t[0] - ps_perf_tsc_to_time(tsc[0], tc);
	return 0;
}

static int ps_trace_read_time_conv(struct gt_timeconv *tc, bool *calibrated)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pc;
	long page = sysconf(_SC_PAGESIZE);
	int fd;

	memset(tc, 0, sizeof(*tc));
	*calibrated = false;
	fd = ps_trace_open_dummy(&attr);
	if (fd < 0) {
		perror("ptsynth: perf_event_open (for TSC conversion)");
		return -1;
	}
	pc = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED) {
		perror("ptsynth: mmap perf page");
		close(fd);
		return -1;
	}
	tc->time_shift = pc->time_shift;
	tc->time_mult = pc->time_mult;
	tc->time_zero = pc->time_zero;
	tc->cap_user_time_zero = pc->cap_user_time_zero;
	munmap(pc, page);
	close(fd);
	if (tc->cap_user_time_zero)
		return 0;
	*calibrated = true;
	if (ps_trace_calibrate_time_conv(tc)) {
		fprintf(stderr, "ptsynth: no TSC conversion in the perf mmap page and calibration failed\n");
		return -1;
	}
	return 0;
}

static struct thread *ps_trace_find_thread(struct ps_tracer *t, pid_t tid,
					    bool create)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	if (!create || t->nr_threads == MAX_THREADS)
		return NULL;
	memset(&t->threads[i], 0, sizeof(t->threads[i]));
	t->threads[i].tid = tid;
	t->threads[i].live = true;
	t->threads[i].running = tid == t->pid;
	t->threads[i].pending_syscall = -1;
	t->nr_threads++;
	t->nr_live++;
	return &t->threads[i];
}

static void ps_trace_rec_init(struct gt_rec *h, unsigned int type, size_t size,
			      struct ps_tracer *t, pid_t tid)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->pid = t->pid;
	h->tid = tid;
	h->tsc = ps_trace_tsc_now();
}

static ssize_t ps_trace_read_mem(struct ps_tracer *t, uint64_t addr, void *buf,
				 size_t len)
{
	ssize_t n = pread(t->memfd, buf, len, addr);
	size_t in_page;

	if (n >= 0 || len <= 1)
		return n;
	/* the tail may be on an unmapped page: retry up to the page end */
	in_page = 4096 - (addr & 4095);
	if (in_page >= len)
		return n;
	return pread(t->memfd, buf, in_page, addr);
}

static void ps_trace_snapshot_code(struct ps_tracer *t,
				   const struct known_map *m)
{
	struct gt_code c;
	size_t len = m->end - m->start;
	uint8_t *buf = calloc(1, len);

	if (!buf)
		return;
	if (ps_trace_read_mem(t, m->start, buf, len) != (ssize_t)len)
		fprintf(stderr, "ptsynth: warning: cannot snapshot %s at %#lx\n",
			m->name, (unsigned long)m->start);
	ps_trace_rec_init(&c.h, GT_CODE, sizeof(c), t, t->pid);
	c.addr = m->start;
	c.len = len;
	gt_write(&t->w, &c.h, buf, len);
	free(buf);
}

static bool ps_trace_map_known(struct ps_tracer *t, const struct known_map *m)
{
	int i;

	for (i = 0; i < t->nr_maps; i++) {
		const struct known_map *k = &t->maps[i];

		if (k->start == m->start && k->end == m->end &&
		    k->pgoff == m->pgoff && k->ino == m->ino &&
		    !strcmp(k->name, m->name))
			return true;
	}
	return false;
}

static void ps_trace_log_map(struct ps_tracer *t, struct known_map *m,
			     unsigned int maj, unsigned int min,
			     const char *perms)
{
	struct gt_mmap r;

	ps_trace_rec_init(&r.h, GT_MMAP, sizeof(r), t, t->pid);
	r.start = m->start;
	r.len = m->end - m->start;
	r.pgoff = m->pgoff;
	r.prot = (perms[0] == 'r' ? PROT_READ : 0) |
		 (perms[1] == 'w' ? PROT_WRITE : 0) |
		 (perms[2] == 'x' ? PROT_EXEC : 0);
	r.maj = maj;
	r.min = min;
	r.pad = 0;
	r.ino = m->ino;
	gt_write(&t->w, &r.h, m->name, strlen(m->name) + 1);
	if (!m->ino)
		ps_trace_snapshot_code(t, m);
}

/* Log every executable mapping not seen before. */
static void ps_trace_scan_maps(struct ps_tracer *t)
{
	char path[64], line[512], perms[8];
	struct known_map m;
	unsigned int maj, min;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		memset(&m, 0, sizeof(m));
		n = sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %255s",
			   (unsigned long *)&m.start, (unsigned long *)&m.end,
			   perms, (unsigned long *)&m.pgoff, &maj, &min,
			   (unsigned long *)&m.ino, m.name);
		if (n < 7 || perms[2] != 'x')
			continue;
		/* [vsyscall] is kernel memory, not readable user code */
		if (m.start >= 0x800000000000ULL)
			continue;
		if (n == 7)
			strcpy(m.name, "//anon");
		if (ps_trace_map_known(t, &m) || t->nr_maps == MAX_MAPS)
			continue;
		t->maps[t->nr_maps++] = m;
		ps_trace_log_map(t, &m, maj, min, perms);
	}
	fclose(f);
}

static bool ps_trace_syscall_changes_maps(long nr)
{
	return nr == SYS_mmap || nr == SYS_mprotect || nr == SYS_munmap ||
	       nr == SYS_mremap || nr == SYS_execve || nr == SYS_pkey_mprotect;
}

static void ps_trace_log_comm(struct ps_tracer *t, pid_t tid, bool exec)
{
	struct gt_comm c;
	char path[64];
	FILE *f;

	ps_trace_rec_init(&c.h, GT_COMM, sizeof(c), t, tid);
	c.exec = exec;
	c.pad = 0;
	memset(c.comm, 0, sizeof(c.comm));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", t->pid, tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(c.comm, sizeof(c.comm), f))
			c.comm[strcspn(c.comm, "\n")] = 0;
		fclose(f);
	}
	gt_write(&t->w, &c.h, NULL, 0);
}

/* Remember the instruction @th is stopped in front of. */
static void ps_trace_new_candidate(struct ps_tracer *t, struct thread *th)
{
	struct user_regs_struct regs;
	struct insn_info info;
	struct gt_insn *r = &th->cand;
	ssize_t n;

	th->has_cand = false;
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs))
		return;
	if (th->prev_rep && regs.rip == th->prev_ip)
		return;		/* next iteration of a REP string insn */
	th->prev_rep = false;
	ps_trace_rec_init(&r->h, GT_INSN, sizeof(*r), t, th->tid);
	r->ip = regs.rip;
	memset(r->bytes, 0, sizeof(r->bytes));
	n = ps_trace_read_mem(t, r->ip, r->bytes, sizeof(r->bytes));
	if (n <= 0 || classify(r->bytes, n, r->ip, &info)) {
		/* length from the next stop, see ps_trace_commit_candidate() */
		memset(&info, 0, sizeof(info));
		th->cand_undecoded = true;
	} else {
		th->cand_undecoded = false;
		memset(r->bytes + info.len, 0, sizeof(r->bytes) - info.len);
	}
	r->len = info.len;
	th->cand_rep = info.rep_string;
	th->cand_sysnr = info.is_syscall ? (long)regs.rax : -1;
	th->has_cand = true;
}

/*
 * The candidate instruction of @th has executed: log it.  @next_ip is
 * where the thread went (0 if unknown).
 */
static void ps_trace_commit_candidate(struct ps_tracer *t, struct thread *th,
				      uint64_t next_ip)
{
	struct gt_syscall s;
	struct insn_info info;
	uint64_t len = next_ip - th->cand.ip;

	if (!th->has_cand)
		return;
	th->has_cand = false;
	if (th->cand_undecoded) {
		if (next_ip && len <= GT_MAX_INSN &&
		    !classify_fallback(th->cand.bytes, GT_MAX_INSN, len, &info)) {
			th->cand.len = len;
			memset(th->cand.bytes + len, 0, GT_MAX_INSN - len);
		} else {
			t->nr_undecoded++;
			fprintf(stderr, "ptsynth: warning: cannot decode insn at %#lx\n",
				(unsigned long)th->cand.ip);
		}
	}
	gt_write(&t->w, &th->cand.h, NULL, 0);
	t->nr_insns++;
	th->prev_rep = th->cand_rep;
	th->prev_ip = th->cand.ip;
	if (th->cand_sysnr < 0)
		return;
	ps_trace_rec_init(&s.h, GT_SYSCALL, sizeof(s), t, th->tid);
	s.nr = th->cand_sysnr;
	s.ip = th->cand.ip;
	gt_write(&t->w, &s.h, NULL, 0);
	th->pending_syscall = th->cand_sysnr;
}

/* A step completed: log what executed, then what comes next. */
static void ps_trace_step_done(struct ps_tracer *t, struct thread *th)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs))
		regs.rip = 0;
	if (th->skip_trap)
		th->skip_trap = false;
	else
		ps_trace_commit_candidate(t, th, regs.rip);
	if (th->pending_syscall >= 0 &&
	    ps_trace_syscall_changes_maps(th->pending_syscall))
		ps_trace_scan_maps(t);
	th->pending_syscall = -1;
	ps_trace_new_candidate(t, th);
}

/* Is @sig caught by a handler in the traced process? */
static bool ps_trace_sig_caught(struct ps_tracer *t, pid_t tid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", t->pid, tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return mask & (1ULL << (sig - 1));
}

static void ps_trace_log_signal(struct ps_tracer *t, struct thread *th, int sig)
{
	struct user_regs_struct regs;
	struct gt_signal s;

	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs))
		return;
	ps_trace_rec_init(&s.h, GT_SIGNAL, sizeof(s), t, th->tid);
	s.signo = sig;
	s.pad = 0;
	s.resume_ip = regs.rip;
	gt_write(&t->w, &s.h, NULL, 0);
	th->prev_rep = false;
}

static void ps_trace_thread_gone(struct ps_tracer *t, struct thread *th)
{
	if (th->live) {
		th->live = false;
		t->nr_live--;
	}
}

static void ps_trace_log_exit(struct ps_tracer *t, struct thread *th,
			      int status)
{
	struct gt_exit e;

	ps_trace_rec_init(&e.h, GT_EXIT, sizeof(e), t, th->tid);
	e.status = status;
	e.pad = 0;
	gt_write(&t->w, &e.h, NULL, 0);
	ps_trace_thread_gone(t, th);
}

static void ps_trace_log_fork(struct ps_tracer *t, pid_t parent, pid_t child)
{
	struct gt_fork f;

	ps_trace_rec_init(&f.h, GT_FORK, sizeof(f), t, child);
	f.ppid = t->pid;
	f.ptid = parent;
	gt_write(&t->w, &f.h, NULL, 0);
}

static int ps_trace_reopen_mem(struct ps_tracer *t)
{
	char path[64];

	if (t->memfd >= 0)
		close(t->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", t->pid);
	t->memfd = open(path, O_RDONLY);
	if (t->memfd < 0) {
		perror("ptsynth: open /proc/PID/mem");
		return -1;
	}
	return 0;
}

/* Thread is about to exit: was its candidate executed (exit syscall)? */
static void ps_trace_exit_stop(struct ps_tracer *t, struct thread *th)
{
	struct user_regs_struct regs;

	if (!th->has_cand || ptrace(PTRACE_GETREGS, th->tid, 0, &regs))
		return;
	if (regs.rip != th->cand.ip)
		ps_trace_commit_candidate(t, th, 0);
	th->has_cand = false;
}

/*
 * Start-at mode, an event while the program runs freely (before the start
 * signal or after the stop signal): keep the thread list, and before the
 * start the comm and maps of an exec'd program, current.
 */
static int ps_trace_handle_event_free(struct ps_tracer *t, struct thread *th,
				      int status)
{
	unsigned long msg = 0;

	switch (status >> 16) {
	case PTRACE_EVENT_CLONE:
		ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
		if (!ps_trace_find_thread(t, msg, true)) {
			fprintf(stderr, "ptsynth: too many threads\n");
			return -1;
		}
		break;
	case PTRACE_EVENT_EXEC:
		if (t->phase != PHASE_WAIT)
			break;
		if (ps_trace_reopen_mem(t))
			return -1;
		t->nr_maps = 0;		/* a new address space */
		ps_trace_log_comm(t, th->tid, true);
		ps_trace_scan_maps(t);
		break;
	default:
		break;
	}
	return 0;
}

static int ps_trace_handle_event(struct ps_tracer *t, struct thread *th,
				 int status)
{
	unsigned long msg = 0;
	int event = status >> 16;

	if (t->phase != PHASE_STEP)
		return ps_trace_handle_event_free(t, th, status);
	switch (event) {
	case PTRACE_EVENT_CLONE:
		ps_trace_commit_candidate(t, th, 0);
		ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
		if (!ps_trace_find_thread(t, msg, true)) {
			fprintf(stderr, "ptsynth: too many threads\n");
			return -1;
		}
		ps_trace_log_fork(t, th->tid, msg);
		ps_trace_log_comm(t, msg, false);
		break;
	case PTRACE_EVENT_EXEC:
		/* /proc/PID/mem is bound to the mm it was opened on */
		if (ps_trace_reopen_mem(t))
			return -1;
		if (th->started) {
			fprintf(stderr, "ptsynth: warning: exec of a new program is not modelled\n");
			ps_trace_commit_candidate(t, th, 0);
		}
		th->started = true;
		ps_trace_log_comm(t, th->tid, true);
		ps_trace_scan_maps(t);
		/*
		 * execve returns to user mode with the step flag set: the
		 * first SIGTRAP comes before the first instruction runs.
		 */
		th->has_cand = false;
		th->skip_trap = true;
		break;
	case PTRACE_EVENT_EXIT:
		ps_trace_exit_stop(t, th);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * The start signal is being delivered to @th: swallow it and single-step
 * from the instruction it would have interrupted.  The maps of that
 * moment (JIT code included, with a snapshot) are logged first.
 */
static int ps_trace_start_stepping(struct ps_tracer *t, struct thread *th)
{
	if (t->nr_live > 1) {
		fprintf(stderr, "ptsynth: --start-on-signal: %d threads run at the start signal; only a single-threaded program can be joined mid-run\n",
			t->nr_live);
		return -1;
	}
	if (t->memfd < 0 && ps_trace_reopen_mem(t))
		return -1;
	t->phase = PHASE_STEP;
	ps_trace_scan_maps(t);
	th->started = true;
	th->prev_rep = false;
	ps_trace_new_candidate(t, th);
	fprintf(stderr, "ptsynth: start signal %d in thread %d: single-stepping from %#lx\n",
		t->start_sig, th->tid,
		th->has_cand ? (unsigned long)th->cand.ip : 0UL);
	return 0;
}

/* The stop signal: the instruction @th stopped in front of is not logged. */
static void ps_trace_stop_stepping(struct ps_tracer *t, struct thread *th)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		t->threads[i].has_cand = false;
	t->phase = PHASE_DONE;
	fprintf(stderr, "ptsynth: stop signal %d in thread %d: %llu instructions logged, running on\n",
		t->stop_sig, th->tid, (unsigned long long)t->nr_insns);
}

/* Start-at mode, a stop while the program runs freely. */
static int ps_trace_handle_stop_free(struct ps_tracer *t, struct thread *th,
				     int status)
{
	int sig = WSTOPSIG(status);
	siginfo_t si;

	if (status >> 16)
		return ps_trace_handle_event(t, th, status) ? -1 : 0;
	if (sig == SIGSTOP && !th->running) {
		th->running = true;	/* a new thread's first stop */
		return 0;
	}
	if (t->phase == PHASE_WAIT && sig == t->start_sig)
		return ps_trace_start_stepping(t, th);
	/* traps of the steps still pending when stepping stopped */
	if (t->phase == PHASE_DONE && sig == SIGTRAP &&
	    !ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) && si.si_code > 0)
		return 0;
	return sig;
}

/* Handle one stop of @tid; returns the signal to inject when resuming. */
static int ps_trace_handle_stop(struct ps_tracer *t, struct thread *th,
				int status)
{
	int sig = WSTOPSIG(status);
	siginfo_t si;

	if (t->phase != PHASE_STEP)
		return ps_trace_handle_stop_free(t, th, status);
	if (status >> 16)
		return ps_trace_handle_event(t, th, status) ? -1 : 0;
	if (sig == SIGSTOP && !th->started) {
		/* new thread: stopped in front of its first instruction */
		th->started = true;
		ps_trace_new_candidate(t, th);
		return 0;
	}
	if (sig == SIGTRAP &&
	    (ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) || si.si_code > 0)) {
		if (th->started)
			ps_trace_step_done(t, th);
		return 0;
	}
	if (t->stop_sig && sig == t->stop_sig) {
		ps_trace_stop_stepping(t, th);
		return 0;
	}
	if (ps_trace_sig_caught(t, th->tid, sig)) {
		/* the candidate is preempted by the handler */
		th->has_cand = false;
		ps_trace_log_signal(t, th, sig);
	}
	return sig;
}

static void ps_trace_run_child(char **argv)
{
	if (ptrace(PTRACE_TRACEME, 0, 0, 0)) {
		perror("ptsynth: PTRACE_TRACEME");
		_exit(127);
	}
	raise(SIGSTOP);
	execvp(argv[0], argv);
	fprintf(stderr, "ptsynth: cannot execute %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

static int ps_trace_loop(struct ps_tracer *t)
{
	struct thread *th;
	int status, sig;
	pid_t tid;

	while (t->nr_live > 0) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/*
		 * A stopped tracee may still be on its runqueue: woken by
		 * its stop notice, we may have preempted it before its
		 * schedule() (6.12 with lockdep preempts it in
		 * sched_submit_work()), and our next ptrace() request would
		 * then wait_task_inactive() for a whole tick. Let it get
		 * off the CPU first: one syscall, where a tick at HZ=250
		 * is 4 ms a step.
		 */
		if (WIFSTOPPED(status))
			sched_yield();
		th = ps_trace_find_thread(t, tid, true);
		if (!th)
			return -1;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			int code = WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);

			if (tid == t->pid)
				t->exit_status = code;
			if (t->phase != PHASE_STEP) {
				ps_trace_thread_gone(t, th);
				continue;
			}
			ps_trace_commit_candidate(t, th, 0);
			ps_trace_log_exit(t, th, code);
			continue;
		}
		sig = ps_trace_handle_stop(t, th, status);
		if (sig < 0)
			return -1;
		if (t->max_insns && t->nr_insns >= t->max_insns) {
			fprintf(stderr, "ptsynth: instruction limit reached, killing\n");
			kill(t->pid, SIGKILL);
			continue;
		}
		ptrace(t->phase == PHASE_STEP ? PTRACE_SINGLESTEP : PTRACE_CONT,
		       tid, 0, sig);
	}
	if (t->phase == PHASE_WAIT) {
		fprintf(stderr, "ptsynth: the program ended without the start signal %d: nothing logged\n",
			t->start_sig);
		return -1;
	}
	return 0;
}

int ps_trace_program(const char *gt_path, char **argv,
		     const struct ps_trace_opts *o, int *exit_status)
{
	struct gt_file_header hdr;
	struct ps_tracer *t;
	bool calibrated;
	cpu_set_t cpus;
	int status, err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -1;
	t->max_insns = o->max_insns;
	t->start_sig = o->start_sig;
	t->stop_sig = o->stop_sig;
	t->phase = o->start_sig ? PHASE_WAIT : PHASE_STEP;
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, GT_MAGIC, 8);
	hdr.version = GT_VERSION;
	if (ps_trace_read_time_conv(&hdr.tc, &calibrated))
		goto fail;
	hdr.flags = calibrated ? GT_FLAG_TC_CALIBRATED : 0;
	if (o->start_sig)
		hdr.flags |= GT_FLAG_START_SIGNAL;
	if (classify_init())
		goto fail;
	/*
	 * Tracer and tracee ping-pong at every instruction: keep them on one
	 * CPU, cross-CPU wake-ups make single-stepping several times slower.
	 */
	CPU_ZERO(&cpus);
	if (!sched_getaffinity(0, sizeof(cpus), &cpus)) {
		int cpu = 0;

		while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &cpus))
			cpu++;
		CPU_ZERO(&cpus);
		CPU_SET(cpu, &cpus);
		sched_setaffinity(0, sizeof(cpus), &cpus);
	}
	t->pid = fork();
	if (t->pid < 0)
		goto fail;
	if (!t->pid)
		ps_trace_run_child(argv);
	if (waitpid(t->pid, &status, 0) != t->pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "ptsynth: child did not stop\n");
		goto fail;
	}
	ptrace(PTRACE_SETOPTIONS, t->pid, 0,
	       PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
	       PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL);
	t->memfd = -1;
	hdr.pid = t->pid;
	hdr.start_tsc = ps_trace_tsc_now();
	err = gt_writer_open(&t->w, gt_path, &hdr);
	if (err) {
		fprintf(stderr, "ptsynth: cannot write %s: %s\n", gt_path,
			strerror(-err));
		goto fail;
	}
	ps_trace_find_thread(t, t->pid, true);
	/*
	 * Run up to the exec stop, then single-step everything (or, in
	 * start-at mode, run up to the start signal).
	 */
	ptrace(PTRACE_CONT, t->pid, 0, 0);
	err = ps_trace_loop(t);
	if (t->memfd >= 0)
		close(t->memfd);
	if (gt_writer_close(&t->w) || err)
		goto fail;
	*exit_status = t->exit_status;
	fprintf(stderr, "ptsynth: %llu instructions in %d thread(s) logged to %s\n",
		(unsigned long long)t->nr_insns, t->nr_threads, gt_path);
	free(t);
	return 0;
fail:
	if (t->pid > 0)
		kill(t->pid, SIGKILL);
	free(t);
	return -1;
}
