// SPDX-License-Identifier: GPL-2.0
/*
 * Tracking never weakens the protection a process asked for. JITs keep
 * their code W^X: written through a PROT_READ|PROT_WRITE mapping, then
 * mprotect()ed PROT_READ|PROT_EXEC, after which a write must get
 * SIGSEGV. The page's PTE is still dirty from the writes: arming it (an
 * event opened on the process, a CPU-wide event opened anywhere) or
 * moving it (mremap()) must not make it writable again, as the
 * kernel's mprotect() only does for VMAs that allow writing.
 *
 * The code is "mov eax, imm32; ret" (b8 imm32 c3): a call's return value
 * says which bytes ran.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "user_jit.h"

static void poke(void *p)
{
	__atomic_store_n((uint8_t *)p + 6, 0xcc, __ATOMIC_RELAXED);
}

/* write a byte at @p: 0 if it was written, else the signal it raised */
static int try_write(uint8_t *p)
{
	return faults(poke, p);
}

FIXTURE(wx) {
	struct sb sb;
	uint8_t *code;
	int fd;
};

/* the memory JIT code is written into */
FIXTURE_VARIANT(wx) {
	bool memfd;		/* MAP_SHARED of a memfd, else private anon */
};

FIXTURE_VARIANT_ADD(wx, anon) {
	.memfd = false,
};

FIXTURE_VARIANT_ADD(wx, memfd) {
	.memfd = true,
};

/* a fresh RW page in @self->code with code written in it: PTE dirty */
FIXTURE_SETUP(wx)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;

	self->fd = -1;
	if (variant->memfd) {
		self->fd = memfd_create("fj-wx", MFD_CLOEXEC);
		ASSERT_LE(0, self->fd);
		ASSERT_EQ(0, ftruncate(self->fd, PAGE));
		flags = MAP_SHARED;
	}
	self->code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, flags,
			  self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->code);
	emit_ret_imm(self->code, 41);
}

FIXTURE_TEARDOWN(wx)
{
	munmap(self->code, PAGE);
	if (self->fd >= 0)
		close(self->fd);
	sb_close(&self->sb);
}

/* An event opened on the process arms its RX code: still read-only. */
TEST_F(wx, arming_keeps_rx_code_read_only)
{
	ASSERT_EQ(0, mprotect(self->code, PAGE, PROT_READ | PROT_EXEC));
	ASSERT_EQ(SIGSEGV, try_write(self->code));
	ASSERT_EQ(0, open_self(&self->sb));
	/* armed from task work on the way out of perf_event_open() */
	EXPECT_EQ(SIGSEGV, try_write(self->code))
		TH_LOG("arming made PROT_READ|PROT_EXEC code writable");
	ASSERT_EQ(41, call(self->code));
	EXPECT_EQ(SIGSEGV, try_write(self->code));
}

/* RX code moved by mremap() in a tracked process: still read-only. */
TEST_F(wx, mremap_keeps_rx_code_read_only)
{
	uint8_t *dest, *moved;

	ASSERT_EQ(0, open_self(&self->sb));
	ASSERT_EQ(0, mprotect(self->code, PAGE, PROT_READ | PROT_EXEC));
	ASSERT_EQ(SIGSEGV, try_write(self->code));
	dest = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dest);
	moved = mremap(self->code, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
		       dest);
	ASSERT_EQ(dest, moved);
	self->code = moved;
	EXPECT_EQ(SIGSEGV, try_write(self->code))
		TH_LOG("mremap() made PROT_READ|PROT_EXEC code writable");
	ASSERT_EQ(41, call(self->code));
	EXPECT_EQ(SIGSEGV, try_write(self->code));
}

/*
 * In another process, blocked in read() when a CPU-wide event opens:
 * armed from task work, its RX code must stay read-only.
 */
TEST_F(wx, cpu_wide_event_keeps_rx_code_read_only)
{
	int go[2], back[2], status;
	pid_t pid;
	char c;

	if (getuid() != 0)
		SKIP(return, "a CPU-wide event needs root");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(back));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* the child's own write: its PTE dirty (and no more COW) */
		emit_ret_imm(self->code, 41);
		if (mprotect(self->code, PAGE, PROT_READ | PROT_EXEC) ||
		    try_write(self->code) != SIGSEGV ||
		    write(back[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		if (try_write(self->code) != SIGSEGV)
			_exit(2);
		_exit(call(self->code) == 41 ? 0 : 3);
	}
	ASSERT_EQ(1, read(back[0], &c, 1));
	ASSERT_EQ(0, open_cpu_wide(&self->sb));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("%s", WEXITSTATUS(status) == 2 ?
		       "arming made the child's RX code writable" :
		       "the child failed before or after its write");
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);
}

FLOWJIT_HARNESS_MAIN
