// SPDX-License-Identifier: GPL-2.0
/*
 * A tiny JIT that names its code in a perf map, for ptreplay's names
 * test (run under ptsynth): two functions in a page of anonymous memory,
 * jit_one at +0x10 ("mov $1, %eax; ret") and jit_two at +0x40 ("mov $5,
 * %eax; ret"), named in DIR/perf-PID.map (DIR: argv[1], default /tmp),
 * each called once; then jit_one is rewritten in place to "mov $2, %eax;
 * ret" without a new map line and called again: its name is stale.
 *
 * prog_outer() has an always-inlined helper, for the DWARF test; the
 * PROG_LINE_* lines are what test-pr_sym expects (keep them in step).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int sink;

static inline __attribute__((always_inline)) int prog_step(int x)
{
	return x * 3 + sink;	/* PROG_LINE_STEP 24 */
}

__attribute__((noinline)) int prog_outer(int x);
__attribute__((noinline)) int prog_outer(int x)
{
	int i, r = 0;

	for (i = 0; i < x; i++)
		r += prog_step(i);	/* PROG_LINE_CALL 33 */
	return r;
}

/* A JIT_CODE_LOAD record of @n bytes at @code named @name, to @fd. */
static void jitdump_load(int fd, const char *name, const unsigned char *code,
			 uint64_t n, uint64_t index)
{
	struct {
		uint32_t id, total_size;
		uint64_t timestamp;
		uint32_t pid, tid;
		uint64_t vma, code_addr, code_size, code_index;
	} __attribute__((packed)) r = {
		.id = 0,
		.total_size = (uint32_t)(sizeof(r) + strlen(name) + 1 + n),
		.timestamp = __builtin_ia32_rdtsc(),
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)getpid(),
		.vma = (uintptr_t)code,
		.code_addr = (uintptr_t)code,
		.code_size = n,
		.code_index = index,
	};

	if (write(fd, &r, sizeof(r)) != sizeof(r) ||
	    write(fd, name, strlen(name) + 1) < 0 ||
	    write(fd, code, n) != (ssize_t)n)
		_exit(1);
}

/* The jitdump of jit_one at @p + 0x10 and jit_two at @p + 0x40: its fd. */
static int jitdump(const char *dir, const unsigned char *p)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} h = {
		.magic = 0x4A695444, .version = 1, .total_size = sizeof(h),
		.elf_mach = 62, .pid = (uint32_t)getpid(),
		.timestamp = __builtin_ia32_rdtsc(), .flags = 1,
	};
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, &h, sizeof(h)) != sizeof(h))
		return -1;
	jitdump_load(fd, "jit_one", p + 0x10, 6, 1);
	jitdump_load(fd, "jit_two", p + 0x40, 6, 2);
	return fd;
}

static int run(void *code)
{
	int (*volatile fn)(void) = (int (*)(void))code;

	return fn();
}

int main(int argc, char **argv)
{
	static const unsigned char code[] = { 0xb8, 1, 0, 0, 0, 0xc3 };
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	unsigned char *p;
	char path[4096];
	int fd;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p + 0x10, code, sizeof(code));
	memcpy(p + 0x40, code, sizeof(code));
	p[0x41] = 5;
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	dprintf(fd, "%lx 6 jit_one\n%lx 6 jit_two\n",
		(unsigned long)(p + 0x10), (unsigned long)(p + 0x40));
	close(fd);
	fd = jitdump(dir, p);
	if (fd < 0)
		return 1;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	sink += run(p + 0x10);
	sink += run(p + 0x40);
	if (mprotect(p, 4096, PROT_READ | PROT_WRITE))
		return 1;
	p[0x11] = 2;
	jitdump_load(fd, "jit_one_v2", p + 0x10, 6, 3);
	close(fd);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	sink += run(p + 0x10);
	sink += prog_outer(3);
	return 0;
}
