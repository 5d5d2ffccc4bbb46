// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of user JIT tracking, measured side by side in one guest.
 * Prints "BENCH" lines:
 *
 *   exec_fault_ratio    a tracked exec fault (W^X: the JIT wrote the page,
 *                       mprotect()ed it PROT_READ|PROT_EXEC, then calls
 *                       it; the fault snapshots the page into the ring
 *                       buffer and makes it executable) vs a plain minor
 *                       fault on an already-allocated anonymous page (a
 *                       write to a present, read-only, exclusively owned
 *                       page: do_wp_page() reuses it, no allocation, no
 *                       copy; made so by fork() and the child's exit).
 *                       Both loops touch one byte or call one "ret" per
 *                       page, 4 KiB apart; the rounds alternate and the
 *                       ratio is the median of per-round ratios.
 *   exec_fault_rwx_ratio the same with an RWX mapping (no mprotect(); the
 *                       fault also write-protects the page and flushes
 *                       its TLB entry).
 *   first_call_untracked_ns  not a ratio: the exec fault loop in a child
 *                       nothing tracks (no fault at all). Under TCG the
 *                       first call into a page translates its code, a
 *                       cost the tracked exec fault pays too.
 *   jit_workload_ratio  samples/ebpf-jit "sites N" (N compile+run sites,
 *                       a page each) traced as perf record -- CMD traces
 *                       it, with a consumer draining the ring buffers,
 *                       flowjit on vs the same events without flowjit.
 *                       A run that lost records fails the benchmark.
 *
 *   luajit_ratio        Debian's LuaJIT running luajit_hot.lua (a hot loop,
 *                       5 passes of N iterations) the same way, on vs off.
 *
 *   split PAGES         not a benchmark: where a tracked exec fault's time
 *                       goes. With QEMU's instruction counting (run-guest
 *                       -I) guest time counts instructions, and the
 *                       function_graph tracer's durations are instruction
 *                       counts. Three loops (tracked W^X and RWX exec
 *                       faults, plain minor faults) run untraced, then
 *                       traced with handle_mm_fault() alone, then with
 *                       the functions of the snapshot path as well; the
 *                       trace is printed ("T <pass> <line>") for
 *                       scripts/bench-fault-split to add up.
 *
 *   bytes_over_changed_sample, bytes_over_changed_luajit  not a cost:
 *                       code bytes recorded per revision of a user JIT
 *                       page (a whole image's page, a delta record's
 *                       pieces) minus the bytes that changed since the
 *                       page's last revision (the first: since zeros),
 *                       over samples/ebpf-jit's rewrite scenario (--count
 *                       K) and over LuaJIT's hot loop (N iterations),
 *                       recorded with attr.flowjit_delta as perf record
 *                       --flowjit does; beside them the header bytes a
 *                       revision (the record's and the pieces'), and the
 *                       bytes a delta cut in blocks of 8..256 bytes would
 *                       carry.
 *
 *   user_jit_bench [fault ROUNDS PAGES] [workload ROUNDS SITES]
 *                  [luajit ROUNDS N] [split PAGES] [delta K N]
 */
#include <fcntl.h>
#include <stddef.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <sys/resource.h>

#define SB_DATA_PAGES	8192	/* 32 MiB per CPU: room for stalls */
#include "flowjit_records.h"
#include "graph_trace.h"

#define MAX_ROUNDS	32
#define PAGE		4096UL
#define EBPF_JIT	"/samples/ebpf-jit"
#define LUAJIT		"/usr/bin/luajit"
#define LUAJIT_HOT	"/selftests/flowjit/luajit_hot.lua"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *in, int n)
{
	double v[MAX_ROUNDS];

	memcpy(v, in, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* block sizes a delta record could be cut in, for delta_note() */
static const unsigned int delta_blocks[] = { 8, 16, 32, 64, 128, 256 };
#define NBLOCKS	ARRAY_SIZE(delta_blocks)

/*
 * What a revision of a user JIT page changed since the page's last one
 * (the first: since zero-filled memory), over a run's snapshots.
 */
struct delta_stats {
	struct delta_page {
		uint64_t asid, addr;
		uint32_t rev;		/* of @bytes */
		uint8_t bytes[PAGE];
	} *pages;
	size_t npages;
	unsigned long revs, deltas, no_base;
	uint64_t code, changed, headers;
	uint64_t in_blocks[NBLOCKS];	/* bytes in changed blocks */
	/* the records, put in time order once the run is over */
	struct delta_rec {
		uint64_t time, headers;
		struct flowjit_record rec;
		uint8_t *bytes;
	} *recs;
	size_t nrecs;
};

struct count {
	unsigned long images, retires, other;
	struct delta_stats *ds;		/* or NULL */
};

/* the page at (@asid, @addr), made (zero-filled) if new; NULL: no memory */
static struct delta_page *delta_page(struct delta_stats *ds, uint64_t asid,
				     uint64_t addr)
{
	struct delta_page *grown;
	size_t j;

	for (j = 0; j < ds->npages; j++)
		if (ds->pages[j].asid == asid && ds->pages[j].addr == addr)
			return &ds->pages[j];
	grown = realloc(ds->pages, (ds->npages + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	ds->pages = grown;
	grown += ds->npages++;
	memset(grown, 0, sizeof(*grown));
	grown->asid = asid;
	grown->addr = addr;
	return grown;
}

/*
 * @bytes are revision @rev of the page at (@asid, @addr), recorded in
 * @code bytes of code and @headers bytes of headers
 */
static void delta_note(struct delta_stats *ds, uint64_t asid, uint64_t addr,
		       uint32_t rev, const uint8_t *bytes, uint64_t code,
		       uint64_t headers)
{
	struct delta_page *pg = delta_page(ds, asid, addr);
	unsigned int g, i, k;

	if (!pg)
		return;
	ds->revs++;
	ds->code += code;
	ds->headers += headers;
	for (i = 0; i < PAGE; i++)
		ds->changed += bytes[i] != pg->bytes[i];
	for (k = 0; k < NBLOCKS; k++) {
		g = delta_blocks[k];
		for (i = 0; i < PAGE; i += g)
			if (memcmp(bytes + i, pg->bytes + i, g))
				ds->in_blocks[k] += g;
	}
	memcpy(pg->bytes, bytes, PAGE);
	pg->rev = rev;
}

/* a delta record @r: its revision from its base, the page's last one */
static void delta_apply(struct delta_stats *ds, const struct delta_rec *r)
{
	struct delta_page *pg = delta_page(ds, r->rec.asid, r->rec.addr);
	uint8_t bytes[PAGE];
	uint64_t code = 0;

	if (!pg || (r->rec.base && pg->rev != r->rec.base)) {
		ds->no_base++;
		return;
	}
	/* base 0: over zeros */
	if (r->rec.base)
		memcpy(bytes, pg->bytes, PAGE);
	else
		memset(bytes, 0, PAGE);
	if (!fj_apply_pieces(bytes, &r->rec, r->bytes, &code)) {
		ds->no_base++;
		return;
	}
	ds->deltas++;
	/* the pieces' headers are what the code bytes leave */
	delta_note(ds, r->rec.asid, r->rec.addr, r->rec.revision, bytes, code,
		   r->headers + r->rec.chunk_len - code);
}

static int delta_rec_cmp(const void *a, const void *b)
{
	const struct delta_rec *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/* the revisions recorded, in time order (per-CPU rings are drained apart) */
static void delta_replay(struct delta_stats *ds)
{
	size_t i;

	qsort(ds->recs, ds->nrecs, sizeof(*ds->recs), delta_rec_cmp);
	for (i = 0; i < ds->nrecs; i++) {
		struct delta_rec *r = &ds->recs[i];

		if (r->rec.op == FLOWJIT_OP_DELTA)
			delta_apply(ds, r);
		else
			delta_note(ds, r->rec.asid, r->rec.addr,
				   r->rec.revision, r->bytes, PAGE, r->headers);
		free(r->bytes);
	}
	free(ds->recs);
	ds->recs = NULL;
	ds->nrecs = 0;
}

/* keep a user JIT page's whole image or delta record for delta_replay() */
static void delta_keep(struct delta_stats *ds, const struct flowjit_chunk *ch,
		       uint64_t time, uint64_t headers)
{
	struct delta_rec *grown, *r;

	if (ch->rec.len != PAGE ||
	    (ch->rec.op == FLOWJIT_OP_IMAGE && ch->rec.chunk_len != PAGE) ||
	    (ch->rec.op != FLOWJIT_OP_IMAGE && ch->rec.op != FLOWJIT_OP_DELTA))
		return;
	grown = realloc(ds->recs, (ds->nrecs + 1) * sizeof(*grown));
	if (!grown)
		return;
	ds->recs = grown;
	r = &ds->recs[ds->nrecs];
	r->bytes = malloc(ch->rec.chunk_len ? ch->rec.chunk_len : 1);
	if (!r->bytes)
		return;
	memcpy(r->bytes, ch->bytes, ch->rec.chunk_len);
	r->rec = ch->rec;
	r->time = time;
	r->headers = headers;
	ds->nrecs++;
}

static void count_rec(const struct perf_event_header *hdr,
		      const struct flowjit_sample_id *id, void *arg)
{
	struct count *c = arg;
	struct flowjit_chunk ch;

	if (hdr->type != PERF_RECORD_FLOWJIT) {
		c->other++;
		return;
	}
	if (flowjit_chunk_parse(&ch, hdr + 1, hdr->size - sizeof(*hdr), NULL) ||
	    ch.rec.kind != FLOWJIT_KIND_USER_JIT)
		return;
	if (ch.rec.op == FLOWJIT_OP_RETIRE)
		c->retires++;
	else if (ch.rec.chunk_off == 0)
		c->images++;
	if (c->ds)
		delta_keep(c->ds, &ch, id->time, hdr->size - ch.rec.chunk_len);
}

static uint64_t lost(struct sb *sb)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < sb->nr; i++)
		n += sb->ring[i].lost;
	return n;
}

/* the physical frame of @p, 0 if unknown */
static uint64_t pfn_of(int pagemap, const void *p)
{
	uint64_t e;

	if (pread(pagemap, &e, sizeof(e), (uintptr_t)p / PAGE * 8) != 8)
		return 0;
	return (e & (1ULL << 63)) ? e & ((1ULL << 55) - 1) : 0;
}

/* split mode: the loop being traced, NULL when not tracing */
static const char *split_phase;

/* start (@on) or stop tracing the timed loop of split_phase */
static void split_trace(bool on)
{
	if (!split_phase)
		return;
	if (on)
		graph_mark(split_phase);
	else
		graph_stop();
}

/*
 * Plain minor faults: @pages anonymous pages, written (allocated), then
 * write-protected by a fork() whose child exits at once; time one write
 * per page. Returns ns per page; *moved counts pages that were copied
 * instead of reused (so the fault was not the one we mean).
 */
static double plain_faults(int pages, long *faults, int *moved)
{
	char *m = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	uint64_t *pfn = calloc(pages, sizeof(*pfn));
	double t0, t;
	long f0;
	int i, status;
	pid_t pid;

	if (m == MAP_FAILED || !pfn) {
		perror("mmap");
		exit(1);
	}
	for (i = 0; i < pages; i++)
		m[i * PAGE] = 1;
	for (i = 0; i < pages; i++)
		pfn[i] = pagemap < 0 ? 0 : pfn_of(pagemap, m + i * PAGE);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	f0 = minflt();
	split_trace(true);
	t0 = now_ns();
	for (i = 0; i < pages; i++)
		m[i * PAGE] = 2;
	t = now_ns() - t0;
	split_trace(false);
	*faults = minflt() - f0;
	*moved = 0;
	for (i = 0; i < pages; i++)
		if (pfn[i] && pfn_of(pagemap, m + i * PAGE) != pfn[i])
			(*moved)++;
	if (pagemap >= 0)
		close(pagemap);
	free(pfn);
	munmap(m, pages * PAGE);
	return t / pages;
}

/*
 * Tracked exec faults: @pages anonymous pages of an executable mapping,
 * a "ret" written to each, then (unless @rwx) made read-only and
 * executable; time one call per page. Returns ns per page.
 */
static double exec_faults(int pages, bool rwx, long *faults)
{
	int prot = PROT_READ | PROT_WRITE | (rwx ? PROT_EXEC : 0);
	char *m = mmap(NULL, pages * PAGE, prot,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0, t;
	long f0;
	int i;

	if (m == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	for (i = 0; i < pages; i++)
		m[i * PAGE] = 0xc3;	/* ret */
	if (!rwx && mprotect(m, pages * PAGE, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		exit(1);
	}
	f0 = minflt();
	split_trace(true);
	t0 = now_ns();
	for (i = 0; i < pages; i++)
		((void (*)(void))(m + i * PAGE))();
	t = now_ns() - t0;
	split_trace(false);
	*faults = minflt() - f0;
	munmap(m, pages * PAGE);
	return t / pages;
}

/*
 * exec_faults() in a child without events: not tracked, so its first
 * calls do not fault. Returns ns per page; *faults is the child's count.
 */
static double untracked_calls(int pages, long *faults)
{
	double r[2] = { -1, 0 };
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		long f;

		r[0] = exec_faults(pages, false, &f);
		r[1] = f;
		_exit(write(p[1], r, sizeof(r)) != sizeof(r));
	}
	close(p[1]);
	if (read(p[0], r, sizeof(r)) != sizeof(r))
		r[0] = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	*faults = r[1];
	return r[0];
}

/* a flowjit event on this task's user code into @sb. 0, or 1 (said) */
static int open_self(struct sb *sb)
{
	struct perf_event_attr attr;

	sb_attr_init(&attr);
	attr.flowjit = 1;
	attr.flowjit_delta = 1;		/* as perf record --flowjit */
	attr.exclude_kernel = 1;
	attr.wakeup_watermark = SB_DATA_PAGES * PAGE / 2;
	if (sb_open_task(sb, &attr, 0)) {
		perror("perf_event_open(flowjit, self)");
		return 1;
	}
	return 0;
}

static int bench_faults(int rounds, int pages)
{
	double plain[MAX_ROUNDS], wx[MAX_ROUNDS], rwx[MAX_ROUNDS];
	double rwx_r[MAX_ROUNDS], wx_r[MAX_ROUNDS], untracked[MAX_ROUNDS];
	long fp = 0, fw = 0, fr = 0, fu = 0, f;
	struct count c = { 0 };
	int r, moved = 0, mv;
	struct sb sb;

	if (open_self(&sb))
		return 1;
	/* arming runs as task work on the way back to user space: done */
	exec_faults(pages / 4 + 1, false, &f);	/* warm up */
	plain_faults(pages / 4 + 1, &f, &mv);
	sb_drain(&sb, count_rec, &c);
	memset(&c, 0, sizeof(c));
	for (r = 0; r < rounds; r++) {
		plain[r] = plain_faults(pages, &f, &mv);
		fp += f;
		moved += mv;
		wx[r] = exec_faults(pages, false, &f);
		fw += f;
		sb_drain(&sb, count_rec, &c);	/* not timed */
		rwx[r] = exec_faults(pages, true, &f);
		fr += f;
		sb_drain(&sb, count_rec, &c);
		untracked[r] = untracked_calls(pages, &f);
		if (untracked[r] < 0) {
			perror("untracked child");
			return 1;
		}
		fu += f;
		wx_r[r] = wx[r] / plain[r];
		rwx_r[r] = rwx[r] / plain[r];
	}
	sb_close(&sb);
	printf("# %d rounds of %d pages: faults/page plain %.2f wx %.2f rwx %.2f;",
	       rounds, pages, (double)fp / rounds / pages,
	       (double)fw / rounds / pages, (double)fr / rounds / pages);
	printf(" %d plain pages copied; %lu snapshots for %d exec faults,",
	       moved, c.images, 2 * rounds * pages);
	printf(" %llu lost; untracked first calls: %.2f faults/page\n",
	       (unsigned long long)lost(&sb), (double)fu / rounds / pages);
	if (c.images != 2UL * rounds * pages || lost(&sb) || moved) {
		fprintf(stderr, "user_jit_bench: the faults measured are not the ones meant\n");
		return 1;
	}
	printf("BENCH minor_fault_ns %.0f ns\n", median(plain, rounds));
	printf("BENCH first_call_untracked_ns %.0f ns\n",
	       median(untracked, rounds));
	printf("BENCH exec_fault_ns %.0f ns\n", median(wx, rounds));
	printf("BENCH exec_fault_rwx_ns %.0f ns\n", median(rwx, rounds));
	printf("BENCH exec_fault_ratio %.3f ratio\n", median(wx_r, rounds));
	printf("BENCH exec_fault_rwx_ratio %.3f ratio\n", median(rwx_r, rounds));
	return 0;
}

/* the snapshot path of a tracked exec fault, callee after caller */
static const char *const split_funcs[] = {
	"handle_mm_fault", "flowjit_handle_exec_fault", "flowjit_csum",
	"flowjit_emit", "perf_output_begin", "perf_output_copy",
	"perf_output_end", "flush_tlb_mm_range", "flowjit_delta_pieces",
	"flowjit_csum_sparse",
};

/*
 * Trace this task's faults with function_graph, filtered to the first
 * @nfuncs of split_funcs (0: no tracing), through the three loops; print
 * ns per page of each and, if traced, the trace. Returns 0 or 1.
 */
static int split_pass(int pass, int nfuncs, int pages)
{
	static const char *const phase[] = { "exec", "rwx", "plain" };
	long f;
	int i, mv;
	double t;

	if (nfuncs && graph_setup(split_funcs, nfuncs))
		return 1;
	for (i = 0; i < 3; i++) {
		split_phase = nfuncs ? phase[i] : NULL;
		if (i == 2)
			t = plain_faults(pages, &f, &mv);
		else
			t = exec_faults(pages, i == 1, &f);
		split_phase = NULL;
		printf("# split pass %d %s: %d pages, %ld faults, %.0f ns/page\n",
		       pass, phase[i], pages, f, t);
	}
	return nfuncs ? graph_dump(pass) : 0;
}

static int bench_split(int pages)
{
	struct count c = { 0 };
	struct sb sb;
	long f;
	int mv, ret;

	if (graph_mount()) {
		perror("mount tracefs");
		return 1;
	}
	if (open_self(&sb))
		return 1;
	exec_faults(pages, false, &f);	/* warm up */
	plain_faults(pages, &f, &mv);
	ret = split_pass(0, 0, pages) ||
	      split_pass(1, 1, pages) ||
	      split_pass(2, ARRAY_SIZE(split_funcs), pages);
	sb_drain(&sb, count_rec, &c);
	printf("# split: %lu snapshots, %llu lost\n", c.images,
	       (unsigned long long)lost(&sb));
	sb_close(&sb);
	return ret;
}

/* rusage of the last workload() child, and of its consumer */
static struct rusage child_ru, self_ru;

/*
 * One run of @argv under per-CPU inherited events opened on it before it
 * execs, drained as it runs. Returns ns, or -1.
 */
static double workload(char *const argv[], bool flowjit, struct count *c,
		       uint64_t *nlost)
{
	struct rusage r0;
	struct pollfd pfd[SB_MAX_CPUS];
	struct perf_event_attr attr;
	int go[2], status, i;
	double t0, t;
	struct sb sb;
	pid_t pid;

	if (pipe(go))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char ch;

		close(go[1]);
		if (read(go[0], &ch, 1) != 1)
			_exit(126);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	sb_attr_init(&attr);
	attr.flowjit = flowjit;
	attr.flowjit_delta = flowjit;	/* as perf record --flowjit */
	attr.exclude_kernel = 1;
	attr.inherit = 1;
	attr.wakeup_watermark = SB_DATA_PAGES * PAGE / 16;
	if (sb_open_pid(&sb, &attr, pid)) {
		perror("perf_event_open");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	for (i = 0; i < sb.nr; i++) {
		pfd[i].fd = sb.ring[i].fd;
		pfd[i].events = POLLIN;
	}
	memset(c, 0, offsetof(struct count, ds));
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_ns();
	if (write(go[1], "g", 1) != 1)
		return -1;
	close(go[1]);
	while (wait4(pid, &status, WNOHANG, &child_ru) == 0) {
		poll(pfd, sb.nr, 2);
		sb_drain(&sb, count_rec, c);
	}
	t = now_ns() - t0;
	getrusage(RUSAGE_SELF, &self_ru);
	self_ru.ru_utime.tv_sec -= r0.ru_utime.tv_sec;
	self_ru.ru_utime.tv_usec -= r0.ru_utime.tv_usec;
	self_ru.ru_stime.tv_sec -= r0.ru_stime.tv_sec;
	self_ru.ru_stime.tv_usec -= r0.ru_stime.tv_usec;
	sb_drain(&sb, count_rec, c);
	*nlost = lost(&sb);
	sb_close(&sb);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "user_jit_bench: %s failed (status %#x)\n",
			argv[0], status);
		return -1;
	}
	return t;
}

static double tv_s(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

/*
 * @argv on vs off, @rounds times; BENCH @name_off_s, @name_on_s and
 * @name_ratio. Fails if a record was lost or a run wrote fewer than
 * @min_snapshots snapshots.
 */
static int bench_on_off(const char *name, char *const argv[], int rounds,
			unsigned long min_snapshots)
{
	double on[MAX_ROUNDS], off[MAX_ROUNDS], ratio[MAX_ROUNDS];
	unsigned long min_images = ~0UL, max_images = 0;
	long flt_on = 0, flt_off = 0;
	struct count c = { 0 };
	uint64_t nlost;
	int r;

	/* the first run of a boot is slower (seen with LuaJIT): not timed */
	if (workload(argv, false, &c, &nlost) < 0)
		return 1;
	for (r = 0; r < rounds; r++) {
		/* alternate which goes first */
		bool first = r & 1;
		int k;

		for (k = 0; k < 2; k++) {
			bool fj = k ? !first : first;
			double t = workload(argv, fj, &c, &nlost);

			if (t < 0)
				return 1;
			if (nlost) {
				fprintf(stderr, "user_jit_bench: %llu records lost (flowjit %d)\n",
					(unsigned long long)nlost, fj);
				return 1;
			}
			printf("# %s flowjit %s: %.3f s;", name,
			       fj ? "on" : "off", t / 1e9);
			printf(" child user %.2f s sys %.2f s, %ld faults;",
			       tv_s(&child_ru.ru_utime),
			       tv_s(&child_ru.ru_stime), child_ru.ru_minflt);
			printf(" consumer user %.2f s sys %.2f s; %lu snapshots\n",
			       tv_s(&self_ru.ru_utime),
			       tv_s(&self_ru.ru_stime), c.images);
			if (fj)
				flt_on += child_ru.ru_minflt;
			else
				flt_off += child_ru.ru_minflt;
			if (fj) {
				on[r] = t;
				if (c.images < min_images)
					min_images = c.images;
				if (c.images > max_images)
					max_images = c.images;
			} else {
				off[r] = t;
			}
		}
		ratio[r] = on[r] / off[r];
		printf("# round %d: off %.3f s, on %.3f s\n", r,
		       off[r] / 1e9, on[r] / 1e9);
	}
	printf("# %s: %d rounds: %lu..%lu snapshots a run with flowjit, 0 lost;"
	       " minor faults a run %.1f with, %.1f without\n", name, rounds,
	       min_images, max_images, (double)flt_on / rounds,
	       (double)flt_off / rounds);
	if (min_images < min_snapshots) {
		fprintf(stderr, "user_jit_bench: %s: fewer snapshots than %lu\n",
			name, min_snapshots);
		return 1;
	}
	printf("BENCH %s_off_s %.3f s\n", name, median(off, rounds) / 1e9);
	printf("BENCH %s_on_s %.3f s\n", name, median(on, rounds) / 1e9);
	printf("BENCH %s_ratio %.3f ratio\n", name, median(ratio, rounds));
	return 0;
}

static int bench_workload(int rounds, int sites)
{
	char n[16];
	char *argv[4] = { EBPF_JIT, "sites", n, NULL };

	if (access(EBPF_JIT, X_OK)) {
		printf("# %s not installed: no jit_workload_ratio\n", EBPF_JIT);
		return 1;
	}
	snprintf(n, sizeof(n), "%d", sites);
	return bench_on_off("jit_workload", argv, rounds, sites);
}

/*
 * Record @argv with flowjit and print what its user JIT revisions
 * changed: BENCH bytes_over_changed_@name, the code bytes recorded per
 * revision minus the bytes that changed (record headers not counted;
 * their bytes per record are printed beside), and the bytes a delta cut
 * in blocks of each size would carry.
 */
static int delta_run(const char *name, char *const argv[])
{
	struct delta_stats ds = { 0 };
	struct count c = { .ds = &ds };
	uint64_t nlost;
	unsigned int k;
	double n;

	if (workload(argv, true, &c, &nlost) >= 0)
		delta_replay(&ds);
	if (nlost || !ds.revs || ds.no_base) {
		fprintf(stderr, "user_jit_bench: %s: %llu lost, %lu revisions, ",
			name, (unsigned long long)nlost, ds.revs);
		fprintf(stderr, "%lu deltas without their base\n", ds.no_base);
		free(ds.pages);
		return 1;
	}
	n = ds.revs;
	printf("# delta %s: %lu revisions of %zu pages (%lu as delta records): %llu code bytes,",
	       name, ds.revs, ds.npages, ds.deltas,
	       (unsigned long long)ds.code);
	printf(" %llu changed (%.1f a revision), %.1f header bytes a revision\n",
	       (unsigned long long)ds.changed, ds.changed / n, ds.headers / n);
	printf("# delta %s: bytes a revision in changed blocks of", name);
	for (k = 0; k < NBLOCKS; k++)
		printf(" %u: %.1f", delta_blocks[k], ds.in_blocks[k] / n);
	printf("\n");
	printf("BENCH bytes_over_changed_%s %.1f bytes\n", name,
	       (ds.code - ds.changed) / n);
	free(ds.pages);
	return 0;
}

/* the sample JIT's rewrite scenario and LuaJIT's hot loop */
static int bench_delta(int count, int n)
{
	char k[16], num[16];
	char *sample[5] = { EBPF_JIT, "--count", k, "rewrite", NULL };
	char *luajit[6] = { LUAJIT, LUAJIT_HOT, "-", "5", num, NULL };
	int ret = 0;

	snprintf(k, sizeof(k), "%d", count);
	snprintf(num, sizeof(num), "%d", n);
	if (access(EBPF_JIT, X_OK))
		printf("# %s not installed: no bytes_over_changed_sample\n",
		       EBPF_JIT);
	else
		ret |= delta_run("sample", sample);
	if (access(LUAJIT, X_OK))
		printf("# %s not installed: no bytes_over_changed_luajit\n",
		       LUAJIT);
	else
		ret |= delta_run("luajit", luajit);
	return ret;
}

/* LuaJIT's hot loop (luajit_hot.lua), @n iterations, 5 passes */
static int bench_luajit(int rounds, int n)
{
	char num[16];
	char *argv[6] = { LUAJIT, LUAJIT_HOT, "-", "5", num, NULL };

	if (access(LUAJIT, X_OK) || access(LUAJIT_HOT, R_OK)) {
		printf("# %s not installed: no luajit_ratio\n", LUAJIT);
		return 1;
	}
	snprintf(num, sizeof(num), "%d", n);
	return bench_on_off("luajit", argv, rounds, 1);
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		int rounds = i + 1 < argc ? atoi(argv[i + 1]) : 0;
		int n = i + 2 < argc ? atoi(argv[i + 2]) : 0;

		if (!strcmp(argv[i], "split") && rounds > 0) {
			ret |= bench_split(rounds);
			i++;
			continue;
		}

		if (rounds < 1 || n < 1 ||
		    (rounds > MAX_ROUNDS && strcmp(argv[i], "delta"))) {
			fprintf(stderr, "usage: %s [fault ROUNDS PAGES] ",
				argv[0]);
			fprintf(stderr, "[workload ROUNDS SITES] [luajit ROUNDS N] ");
			fprintf(stderr, "[split PAGES] [delta K N]\n");
			return 2;
		}
		if (!strcmp(argv[i], "fault"))
			ret |= bench_faults(rounds, n);
		else if (!strcmp(argv[i], "workload"))
			ret |= bench_workload(rounds, n);
		else if (!strcmp(argv[i], "luajit"))
			ret |= bench_luajit(rounds, n);
		else if (!strcmp(argv[i], "delta"))
			ret |= bench_delta(rounds, n);
		else
			return 2;
		i += 2;
	}
	if (argc == 1)
		ret = bench_faults(9, 256) | bench_luajit(5, 2000000) |
		      bench_workload(3, 60000) | bench_delta(64, 2000000);
	return ret;
}
