// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-wide flowjit events (perf record -a) track every user address
 * space: processes running when the first such event is created are
 * armed from task work, and processes forked or exec'd later are tracked
 * from the start. Their snapshots reach the CPU-wide events of the CPU
 * that ran the code.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>

#include "harness.h"
#include "jit_trace.h"
#include "user_jit.h"

#define EBPF_JIT	"/samples/ebpf-jit"

/* the snapshot of @addr by @pid */
static struct fj_obj *find(struct fj_set *set, pid_t pid, uint64_t addr)
{
	int i;

	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (fj_user_image(o, pid) && o->rec.addr == addr)
			return o;
	}
	return NULL;
}

/* in a child: wait for @go, write and run code, report its page */
static void jit_child(int go, int back)
{
	uint8_t *m;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(1);
	emit_ret_imm(m + 16, 4242);
	if (mprotect(m, PAGE, PROT_READ | PROT_EXEC) ||
	    ((int (*)(void))(m + 16))() != 4242)
		_exit(1);
	if (write(back, &m, sizeof(m)) != sizeof(m))
		_exit(1);
	_exit(0);
}

/*
 * Fork a child that runs @child(go, back), wait until @ready(pid) says it
 * is set, open a CPU-wide event, let the child go and read back the
 * address of the code it ran; collect the event's records into @set.
 */
static void run_after_open(struct __test_metadata *_metadata,
			   void (*child)(int go, int back),
			   bool (*ready)(pid_t pid), struct sb *sb,
			   struct fj_set *set, pid_t *pid, uint8_t **m)
{
	int go[2], back[2], status, i;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(back));
	*pid = fork();
	ASSERT_LE(0, *pid);
	if (*pid == 0)
		child(go[0], back[1]);
	for (i = 0; i < 500 && ready && !ready(*pid); i++)
		usleep(10000);
	ASSERT_TRUE(!ready || ready(*pid));
	usleep(100000);		/* let it block in read() */
	ASSERT_EQ(0, open_cpu_wide(sb));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(sizeof(*m), read(back[0], m, sizeof(*m)));
	ASSERT_EQ(*pid, waitpid(*pid, &status, 0));
	ASSERT_EQ(0, status);
	fj_collect(sb, set);
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);
}

/* A process already running when the event is opened is armed. */
TEST(running_process_is_armed)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	uint8_t expect[PAGE] = { 0 };
	struct fj_obj *o;
	struct sb sb;
	uint8_t *m;
	pid_t pid;

	ASSERT_NE(NULL, set);
	run_after_open(_metadata, jit_child, NULL, &sb, set, &pid, &m);
	o = find(set, pid, (uintptr_t)m);
	ASSERT_NE(NULL, o) TH_LOG("no snapshot of the child's code");
	emit_ret_imm(expect + 16, 4242);
	EXPECT_TRUE(fj_complete(o));
	EXPECT_EQ(0, memcmp(o->bytes, expect, PAGE));
	EXPECT_EQ(0, fj_lost(&sb));
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

/*
 * A JIT started after the event, not inherited from anything: every
 * revision it ran was captured with its bytes.
 */
TEST(process_started_later_is_tracked)
{
	char *argv[5] = { EBPF_JIT, "--log", "/tmp/jit_cpuwide.log",
			 "rewrite", NULL };
	struct fj_set *set = calloc(1, sizeof(*set));
	struct jt_rev *revs = calloc(JT_MAX_REVS, sizeof(*revs));
	int status, n, missing;
	struct sb sb;
	pid_t pid;

	if (access(EBPF_JIT, X_OK))
		SKIP(return, "%s not installed", EBPF_JIT);
	ASSERT_NE(NULL, set);
	ASSERT_NE(NULL, revs);
	ASSERT_EQ(0, open_cpu_wide(&sb));
	unlink("/tmp/jit_cpuwide.log");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	status = jt_collect_until_exit(pid, &sb, set);
	ASSERT_EQ(0, status);
	n = jt_read_log("/tmp/jit_cpuwide.log", revs, JT_MAX_REVS);
	ASSERT_LT(0, n);
	missing = jt_missing(revs, n, set, pid, false);
	TH_LOG("%d revisions ran, %d records, %llu lost, %d not captured", n,
	       set->records, (unsigned long long)fj_lost(&sb), missing);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(0, fj_lost(&sb));
	jt_free(&sb, set, revs);
}

/* After the last CPU-wide event, code runs and is rewritten as usual. */
TEST(closing_the_event_untracks)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct sb sb;
	uint8_t *m;

	ASSERT_NE(NULL, set);
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, open_cpu_wide(&sb));
	emit_ret_imm(m, 7);
	ASSERT_EQ(0, mprotect(m, PAGE, PROT_READ | PROT_EXEC));
	ASSERT_EQ(7, ((int (*)(void))m)());
	fj_collect(&sb, set);
	EXPECT_NE(NULL, find(set, getpid(), (uintptr_t)m));
	sb_close(&sb);
	/* the page is armed again by the write, then found untracked */
	ASSERT_EQ(0, mprotect(m, PAGE, PROT_READ | PROT_WRITE));
	emit_ret_imm(m, 8);
	ASSERT_EQ(0, mprotect(m, PAGE, PROT_READ | PROT_EXEC));
	ASSERT_EQ(8, ((int (*)(void))m)());
	munmap(m, PAGE);
	fj_reset(set);
	free(set);
}

/*
 * A second CPU-wide event, opened while the first one is open (two perf
 * record -a sessions), is armed for too: code that was already
 * executable, and already reported to the first event, is reported to
 * it again when it next runs (review finding 16).
 */
TEST(second_event_gets_running_code)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	uint8_t expect[PAGE] = { 0 };
	struct sb first, second;
	struct fj_obj *o;
	uint8_t *m;

	ASSERT_NE(NULL, set);
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	emit_ret_imm(m + 32, 5151);
	ASSERT_EQ(0, mprotect(m, PAGE, PROT_READ | PROT_EXEC));
	ASSERT_EQ(0, open_cpu_wide(&first));
	ASSERT_EQ(5151, ((int (*)(void))(m + 32))());
	fj_collect(&first, set);
	ASSERT_NE(NULL, find(set, getpid(), (uintptr_t)m));
	fj_reset(set);
	/* its arming runs on the way back from perf_event_open() */
	ASSERT_EQ(0, open_cpu_wide(&second));
	ASSERT_EQ(5151, ((int (*)(void))(m + 32))());
	fj_collect(&second, set);
	o = find(set, getpid(), (uintptr_t)m);
	ASSERT_NE(NULL, o) TH_LOG("the second event never saw the code");
	emit_ret_imm(expect + 32, 5151);
	EXPECT_TRUE(fj_complete(o));
	EXPECT_EQ(0, memcmp(o->bytes, expect, PAGE));
	EXPECT_EQ(0, fj_lost(&second));
	sb_close(&second);
	sb_close(&first);
	munmap(m, PAGE);
	fj_reset(set);
	free(set);
}

struct thread_jit {
	int go, back;
	uint8_t *m;
};

/* the only live thread of its process: run the code again on @go */
static void *jit_thread(void *arg)
{
	struct thread_jit *t = arg;
	char c;

	if (read(t->go, &c, 1) != 1)
		_exit(1);
	if (((int (*)(void))(t->m + 16))() != 4343)
		_exit(1);
	if (write(t->back, &t->m, sizeof(t->m)) != sizeof(t->m))
		_exit(1);
	_exit(0);
}

/* in a child: run code, leave it to a thread, end the main thread */
static void leader_exit_child(int go, int back)
{
	static struct thread_jit t;
	pthread_t th;

	t.go = go;
	t.back = back;
	t.m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t.m == MAP_FAILED)
		_exit(1);
	emit_ret_imm(t.m + 16, 4343);
	if (mprotect(t.m, PAGE, PROT_READ | PROT_EXEC) ||
	    ((int (*)(void))(t.m + 16))() != 4343 ||
	    pthread_create(&th, NULL, jit_thread, &t))
		_exit(1);
	pthread_exit(NULL);
}

/* is @pid's main thread a zombie (exited, its process alive)? */
static bool leader_exited(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool z = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');
		z = p && p[1] == ' ' && p[2] == 'Z';
	}
	fclose(f);
	return z;
}

/*
 * A process whose main thread has exited (pthread_exit()) runs on in its
 * other threads: it is armed too (review finding 16).
 */
TEST(process_with_exited_main_thread_is_armed)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	struct sb sb;
	uint8_t *m;
	pid_t pid;

	ASSERT_NE(NULL, set);
	run_after_open(_metadata, leader_exit_child, leader_exited, &sb, set,
		       &pid, &m);
	EXPECT_NE(NULL, find(set, pid, (uintptr_t)m))
		TH_LOG("the process was never armed");
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

FLOWJIT_HARNESS_MAIN
