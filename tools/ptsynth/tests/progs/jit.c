// SPDX-License-Identifier: GPL-2.0
/*
 * A JIT in two pages of anonymous memory: page 0 holds "mov $1, %eax;
 * ret", page 1 "mov $5, %eax; ret".  Page 0 runs, is rewritten in place
 * to "mov $2, %eax; ret" (mprotect RW, write, mprotect RX), page 1 runs,
 * page 0 runs again.  The rewrite changes an immediate only, so both
 * revisions have the same instruction boundaries and flow: a decoder
 * that only has the first revision's bytes still follows the flow, and
 * the ground truth's bytes show which revision ran.
 */
#include <string.h>
#include <sys/mman.h>

static volatile int sink;

static int run(void *code)
{
	int (*volatile fn)(void) = (int (*)(void))code;

	return fn();
}

int main(void)
{
	static const unsigned char code[] = { 0xb8, 1, 0, 0, 0, 0xc3 };
	unsigned char *p;
	int i;

	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	memcpy(p + 4096, code, sizeof(code));
	p[4096 + 1] = 5;
	if (mprotect(p, 8192, PROT_READ | PROT_EXEC))
		return 1;
	for (i = 0; i < 3; i++)
		sink += run(p);
	if (mprotect(p, 4096, PROT_READ | PROT_WRITE))
		return 1;
	p[1] = 2;
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	sink += run(p + 4096);
	for (i = 0; i < 3; i++)
		sink += run(p);
	return sink == 3 + 5 + 6 ? 0 : 2;
}
