// SPDX-License-Identifier: GPL-2.0
/* Deep recursion: many nested calls and returns (call stack > 64). */
static volatile int sink;

static int __attribute__((noinline)) fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

static int __attribute__((noinline)) depth(int n)
{
	if (!n)
		return 0;
	return 1 + depth(n - 1) + (n & 1);
}

int main(void)
{
	sink = fib(14);
	sink += depth(100);
	return 0;
}
