// SPDX-License-Identifier: GPL-2.0
/*
 * eBPF JIT images in PERF_RECORD_FLOWJIT: captured when the program is
 * loaded, byte for byte what bpf(2) reports, retired when it is freed,
 * and only for events that asked and may see them: the programs of other
 * users only with CAP_SYS_ADMIN, as bpf(2) gives them.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/capability.h>

#include "harness.h"
#include "bpf_prog.h"
#include "flowjit_records.h"

static const struct bpf_insn trivial[] = BPF_PROG_TRIVIAL;
static const struct bpf_insn with_subprog[] = BPF_PROG_WITH_SUBPROG(1);

static int load_prog(const struct bpf_insn *insns, int cnt)
{
	return bpf_load_filter(insns, cnt, "fj_image");
}

static int prog_id(int fd)
{
	struct bpf_jit_info *p = malloc(sizeof(*p));
	int id;

	if (!p || bpf_jit_info_get(fd, p))
		id = -1;
	else
		id = p->info.id;
	free(p);
	return id;
}

static int set_sysctl(const char *val)
{
	return sb_write_file("/proc/sys/kernel/flowjit", val);
}

static void fj_attr(struct perf_event_attr *attr)
{
	sb_attr_init(attr);
	attr->flowjit = 1;
}

/*
 * Every load in [first, first + n) has one complete image and one retire,
 * in that order, unless records were lost; returns the loads missing.
 */
static int count_missing(struct fj_set *set, const int *ids, int n,
			 int *disordered)
{
	int i, missing = 0;

	*disordered = 0;
	for (i = 0; i < n; i++) {
		struct fj_obj *img = fj_find(set, FLOWJIT_OP_IMAGE, ids[i], 0);
		struct fj_obj *ret = fj_find(set, FLOWJIT_OP_RETIRE, ids[i], 0);

		if (!img || !ret || !fj_complete(img))
			missing++;
		else if (img->last_time > ret->time)
			(*disordered)++;
	}
	return missing;
}

/* loads not seen are explained by lost records, the rest are in order */
static void expect_accounted(struct __test_metadata *_metadata,
			     const struct sb *sb, const struct fj_set *set,
			     int missing, int disordered)
{
	TH_LOG("%d records, %d missing loads, %llu lost records",
	       set->records, missing, (unsigned long long)fj_lost(sb));
	/* each missing load needs at least one lost record to explain it */
	EXPECT_LE(missing, fj_lost(sb));
	EXPECT_EQ(0, disordered);
	EXPECT_EQ(0, set->unordered);
}

FIXTURE(bpf_image) {
	struct sb sb;
	struct fj_set *set;
};

FIXTURE_SETUP(bpf_image)
{
	struct perf_event_attr attr;
	int err;

	self->set = calloc(1, sizeof(*self->set));
	ASSERT_NE(NULL, self->set);
	fj_attr(&attr);
	err = sb_open(&self->sb, &attr);
	if (err == -EACCES || err == -EPERM)
		SKIP(return, "CPU-wide flowjit events need privileges");
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(bpf_image)
{
	sb_close(&self->sb);
	fj_reset(self->set);
	free(self->set);
}

/* Each function's image is the slice of jited_prog_insns at its ksym. */
TEST_F(bpf_image, images_equal_jited_insns_with_subprogs)
{
	struct bpf_jit_info *p = malloc(sizeof(*p));
	uint32_t i, off = 0;
	int fd;

	ASSERT_NE(NULL, p);
	fd = load_prog(with_subprog, 6);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_jit_info_get(fd, p));
	ASSERT_EQ(2, p->info.nr_jited_ksyms);
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(0, self->set->bad_version);

	for (i = 0; i < p->info.nr_jited_ksyms; i++) {
		struct fj_obj *o = fj_find(self->set, FLOWJIT_OP_IMAGE,
					   p->info.id, i);

		ASSERT_NE(NULL, o) TH_LOG("no image of function %u", i);
		EXPECT_TRUE(fj_complete(o));
		EXPECT_EQ(i ? FLOWJIT_KIND_BPF_SUBPROG : FLOWJIT_KIND_BPF_PROG,
			  o->rec.kind);
		EXPECT_EQ(p->ksyms[i], o->rec.addr);
		EXPECT_EQ(p->func_lens[i], o->rec.len);
		EXPECT_EQ(1, o->rec.revision);
		EXPECT_EQ(getpid(), o->rec.pid);
		EXPECT_EQ(0, memcmp(o->bytes, p->insns + off, o->rec.len));
		off += p->func_lens[i];
	}
	EXPECT_EQ(p->info.jited_prog_len, off);
	close(fd);
	free(p);
}

/* A program closed before user space could query it is still captured. */
TEST_F(bpf_image, program_closed_at_once_is_captured)
{
	struct bpf_jit_info *p = malloc(sizeof(*p));
	struct fj_obj *o, *r;
	int ref, fd, id;

	ASSERT_NE(NULL, p);
	ref = load_prog(trivial, 2);	/* same code, kept open for reference */
	ASSERT_LE(0, ref);
	ASSERT_EQ(0, bpf_jit_info_get(ref, p));
	fd = load_prog(trivial, 2);
	ASSERT_LE(0, fd);
	id = p->info.id + 1;		/* ids are allocated in order */
	close(fd);
	fj_collect(&self->sb, self->set);

	o = fj_find(self->set, FLOWJIT_OP_IMAGE, id, 0);
	r = fj_find(self->set, FLOWJIT_OP_RETIRE, id, 0);
	ASSERT_NE(NULL, o);
	ASSERT_NE(NULL, r);
	EXPECT_TRUE(fj_complete(o));
	ASSERT_EQ(p->info.jited_prog_len, o->rec.len);
	EXPECT_EQ(0, memcmp(o->bytes, p->insns, o->rec.len));
	EXPECT_EQ(o->rec.addr, r->rec.addr);
	EXPECT_LE(o->time, r->time);
	close(ref);
	free(p);
}

/*
 * 1000 load/unload cycles: every one accounted for, in time order. The
 * harness's 30 s are not enough for 1000 verifier and JIT runs in the
 * sanitizer kernel under TCG when the host is busy.
 */
TEST_F_TIMEOUT(bpf_image, thousand_cycles_all_accounted_in_order, 300)
{
	int *ids = calloc(1000, sizeof(int));
	int i, fd, missing, disordered;

	ASSERT_NE(NULL, ids);
	for (i = 0; i < 1000; i++) {
		fd = load_prog(trivial, 2);
		ASSERT_LE(0, fd);
		ids[i] = prog_id(fd);
		close(fd);
		if (i % 50 == 49)
			fj_collect(&self->sb, self->set);
	}
	fj_collect(&self->sb, self->set);
	missing = count_missing(self->set, ids, 1000, &disordered);
	expect_accounted(_metadata, &self->sb, self->set, missing, disordered);
	free(ids);
}

struct loader {
	pthread_t thread;
	int ids[200];
	int err;
};

static void *load_loop(void *arg)
{
	struct loader *l = arg;
	int i, fd;

	for (i = 0; i < 200; i++) {
		fd = load_prog(trivial, 2);
		if (fd < 0) {
			l->err = fd;
			return NULL;
		}
		l->ids[i] = prog_id(fd);
		close(fd);
	}
	return NULL;
}

/* Two threads loading at once: every load and retire accounted for. */
TEST_F_TIMEOUT(bpf_image, two_threads_loading_concurrently, 300)
{
	struct loader l[2] = { 0 };
	int i, missing = 0, disordered, d;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&l[i].thread, NULL, load_loop, &l[i]));
	for (i = 0; i < 2; i++) {
		pthread_join(l[i].thread, NULL);
		ASSERT_EQ(0, l[i].err);
	}
	fj_collect(&self->sb, self->set);
	disordered = 0;
	for (i = 0; i < 2; i++) {
		missing += count_missing(self->set, l[i].ids, 200, &d);
		disordered += d;
	}
	expect_accounted(_metadata, &self->sb, self->set, missing, disordered);
}

/* kernel.flowjit = 0: open events get nothing and new ones are refused */
TEST_F(bpf_image, sysctl_off_stops_records_and_refuses_events)
{
	struct perf_event_attr attr;
	int fd, n;

	if (access("/proc/sys/kernel/flowjit", W_OK))
		SKIP(return, "kernel.flowjit not writable");
	ASSERT_EQ(0, set_sysctl("0"));
	fd = load_prog(trivial, 2);
	ASSERT_LE(0, fd);
	close(fd);
	fj_attr(&attr);
	n = sb_perf_event_open(&attr, 0, -1);
	EXPECT_EQ(-1, n);
	EXPECT_EQ(EACCES, errno);
	if (n >= 0)
		close(n);
	ASSERT_EQ(0, set_sysctl("1"));
	fj_collect(&self->sb, self->set);
	EXPECT_EQ(0, self->set->records);
}

/* Without attr.flowjit an event gets no flowjit records. */
TEST(no_records_without_the_bit)
{
	struct perf_event_attr attr;
	struct fj_set *set = calloc(1, sizeof(*set));
	struct sb sb;
	int fd, err;

	ASSERT_NE(NULL, set);
	sb_attr_init(&attr);
	attr.ksymbol = 1;
	err = sb_open(&sb, &attr);
	if (err == -EACCES || err == -EPERM)
		SKIP(return, "CPU-wide events need privileges");
	ASSERT_EQ(0, err);
	fd = load_prog(trivial, 2);
	ASSERT_LE(0, fd);
	close(fd);
	fj_collect(&sb, set);
	EXPECT_EQ(0, set->records);
	sb_close(&sb);
	free(set);
}

/* Images are versioned by time: an attr without it is invalid. */
TEST(attr_without_time_or_with_nothing_to_record_is_einval)
{
	struct perf_event_attr attr;

	fj_attr(&attr);
	attr.sample_id_all = 0;
	EXPECT_EQ(-1, sb_perf_event_open(&attr, 0, -1));
	EXPECT_EQ(EINVAL, errno);

	fj_attr(&attr);
	attr.sample_type &= ~PERF_SAMPLE_TIME;
	EXPECT_EQ(-1, sb_perf_event_open(&attr, 0, -1));
	EXPECT_EQ(EINVAL, errno);

	fj_attr(&attr);
	attr.exclude_kernel = 1;
	attr.exclude_user = 1;
	EXPECT_EQ(-1, sb_perf_event_open(&attr, 0, -1));
	EXPECT_EQ(EINVAL, errno);
}

/* An unprivileged caller is refused kernel images, and gets no bytes. */
static int open_kernel_images(void)
{
	struct perf_event_attr attr;

	fj_attr(&attr);
	if (sb_perf_event_open(&attr, 0, -1) >= 0)	/* this task */
		return 11;
	if (errno != EACCES && errno != EPERM)
		return 12;
	if (sb_perf_event_open(&attr, -1, 0) >= 0)	/* CPU-wide */
		return 13;
	return errno == EACCES || errno == EPERM ? 0 : 14;
}

TEST(unprivileged_caller_is_refused_kernel_images)
{
	int step;

	if (getuid() != 0)
		SKIP(return, "needs root to drop privileges");
	step = sb_run_as_nobody(open_kernel_images);
	EXPECT_EQ(0, step) TH_LOG("child step %d failed", step);
}

/*
 * Review finding 11: CAP_PERFMON (with CAP_SYSLOG for kernel addresses)
 * but not CAP_SYS_ADMIN. bpf(2) gives such a user the JIT image of its
 * own programs (CAP_BPF, a file of the program) but not a file of
 * another user's program (BPF_PROG_GET_FD_BY_ID needs CAP_SYS_ADMIN), so
 * a CPU-wide flowjit event of it must carry the image of a program it
 * loads and none of one root loads meanwhile; root's event gets both.
 */
static int drop_to_perfmon(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { 0 };
	int caps[] = { CAP_PERFMON, CAP_SYSLOG, CAP_BPF }, i;

	if (prctl(PR_SET_KEEPCAPS, 1) || setgid(65534) || setuid(65534))
		return -1;
	for (i = 0; i < 3; i++) {
		data[caps[i] / 32].effective |= 1u << (caps[i] % 32);
		data[caps[i] / 32].permitted |= 1u << (caps[i] % 32);
	}
	return syscall(__NR_capset, &hdr, data);
}

static const char * const perfmon_steps[] = {
	"dropping to CAP_PERFMON failed",
	"CAP_PERFMON could not open CPU-wide flowjit events",
	"loading its own program failed",
	"sync failed",
	"no image of its own program",
	"it got the image of root's program",
};

TEST(perfmon_without_sys_admin_gets_only_its_own_bpf_images)
{
	struct fj_set *set = calloc(1, sizeof(*set));
	int go[2], done[2], status, root_fd, root_id, err, paranoid;
	struct perf_event_attr attr;
	struct sb sb;
	pid_t pid;

	ASSERT_NE(NULL, set);
	if (getuid() != 0)
		SKIP(return, "needs root to set up the capabilities");
	/* Debian's 3 wants CAP_SYS_ADMIN: CAP_PERFMON is upstream's level */
	paranoid = sb_paranoid_at_most(2);
	fj_attr(&attr);
	err = sb_open(&sb, &attr);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct fj_set *cset = calloc(1, sizeof(*cset));
		int own_fd, own_id, id;
		struct sb csb;
		char c = 0;

		if (!cset || drop_to_perfmon())
			_exit(10);
		if (sb_open(&csb, &attr))
			_exit(11);
		own_fd = load_prog(trivial, 2);
		if (own_fd < 0)
			_exit(12);
		own_id = prog_id(own_fd);
		if (write(done[1], &c, 1) != 1 ||
		    read(go[0], &id, sizeof(id)) != sizeof(id))
			_exit(13);
		fj_collect(&csb, cset);
		if (!fj_find(cset, FLOWJIT_OP_IMAGE, own_id, 0))
			_exit(14);	/* its own program: wanted */
		if (fj_find(cset, FLOWJIT_OP_IMAGE, id, 0))
			_exit(15);	/* root's: must not be there */
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	{
		char c;

		ASSERT_EQ(1, read(done[0], &c, 1));
	}
	root_fd = load_prog(trivial, 2);
	ASSERT_LE(0, root_fd);
	root_id = prog_id(root_fd);
	ASSERT_EQ(sizeof(root_id), write(go[1], &root_id, sizeof(root_id)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	sb_paranoid_restore(paranoid);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child: %s", WEXITSTATUS(status) >= 10 &&
		       WEXITSTATUS(status) <= 15 ?
		       perfmon_steps[WEXITSTATUS(status) - 10] : "?");
	/* root's event: both */
	fj_collect(&sb, set);
	EXPECT_NE(NULL, fj_find(set, FLOWJIT_OP_IMAGE, root_id, 0));
	close(root_fd);
	sb_close(&sb);
	fj_reset(set);
	free(set);
}

FLOWJIT_HARNESS_MAIN
