// SPDX-License-Identifier: GPL-2.0
/*
 * kscen - guest program of ptsynth's kernel static-key scenario
 * (README.rst, "Kernel scenario"), run under perf record --flowjit in
 * the flowjit guest while QEMU logs the kernel's execution.
 *
 * Pinned to CPU 0 it loads a socket filter with a subprogram, then
 *
 *   mark 1, BPF_PROG_TEST_RUN, mark 2,
 *   kernel.bpf_stats_enabled = 1 (bpf_stats_enabled_key: text pokes),
 *   mark 3, BPF_PROG_TEST_RUN, mark 4,
 *   kernel.bpf_stats_enabled = 0
 *
 * and prints, for the host: the perf clock conversion of a perf mmap
 * page (TSC -> perf time, as perf's intel_pt code reads it), the
 * program's JIT image and each mark's TSC. A mark is one rdtsc in
 * kscen_mark(); the binary is linked at a fixed address so that QEMU can
 * log that function: the host pairs the k-th logged execution of its
 * rdtsc with the k-th "mark" line.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <linux/perf_event.h>

#include "../../../selftests/bpf_prog.h"

__attribute__((noinline)) uint64_t kscen_mark(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static int mark_no;

static void mark(void)
{
	uint64_t tsc = kscen_mark();

	printf("mark %d %llu\n", ++mark_no, (unsigned long long)tsc);
}

static int test_run(int fd)
{
	unsigned char pkt[64] = { 0 };
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = fd;
	attr.test.data_in = (uint64_t)(unsigned long)pkt;
	attr.test.data_size_in = sizeof(pkt);
	attr.test.repeat = 1;
	if (sys_bpf(BPF_PROG_TEST_RUN, &attr))
		return -1;
	return attr.test.retval;
}

static int bpf_stats(const char *v)
{
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, v, 2) == 2;
	close(fd);
	return ok ? 0 : -1;
}

static int print_timeconv(void)
{
	struct perf_event_attr pa;
	struct perf_event_mmap_page *pg;
	int fd;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_SOFTWARE;
	pa.config = PERF_COUNT_SW_DUMMY;
	fd = syscall(__NR_perf_event_open, &pa, 0, -1, -1, 0);
	if (fd < 0)
		return -1;
	pg = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		return -1;
	printf("timeconv %u %u %llu %u\n", pg->time_shift, pg->time_mult,
	       (unsigned long long)pg->time_zero, pg->cap_user_time_zero);
	munmap(pg, getpagesize());
	close(fd);
	return 0;
}

int main(void)
{
	struct bpf_insn prog[] = BPF_PROG_WITH_SUBPROG(41);
	static struct bpf_jit_info ji;
	cpu_set_t set;
	unsigned int i;
	int fd, r1, r2;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("kscen: sched_setaffinity");
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d tid %d\n", getpid(), (int)syscall(__NR_gettid));
	if (print_timeconv()) {
		perror("kscen: perf mmap page");
		return 1;
	}
	fd = bpf_load_filter(prog, sizeof(prog) / sizeof(prog[0]), "kscen");
	if (fd < 0 || bpf_jit_info_get(fd, &ji)) {
		fprintf(stderr, "kscen: loading the program failed\n");
		return 1;
	}
	for (i = 0; i < ji.info.nr_jited_ksyms && i < BPF_MAX_FUNCS; i++)
		printf("func %u %#llx %u\n", i, (unsigned long long)ji.ksyms[i],
		       ji.func_lens[i]);
	if (bpf_stats("0\n"))
		perror("kscen: bpf_stats_enabled");
	mark();
	r1 = test_run(fd);
	mark();
	if (bpf_stats("1\n")) {
		perror("kscen: bpf_stats_enabled = 1");
		return 1;
	}
	mark();
	r2 = test_run(fd);
	mark();
	bpf_stats("0\n");
	printf("retval %d %d\n", r1, r2);
	return r1 == 42 && r2 == 42 ? 0 : 1;
}
