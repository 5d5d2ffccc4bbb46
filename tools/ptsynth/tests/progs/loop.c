// SPDX-License-Identifier: GPL-2.0
/* Conditional branches in loops: TNT bits, taken and not taken. */
static volatile int sink;

static int __attribute__((noinline)) collatz(unsigned int n)
{
	int steps = 0;

	while (n != 1) {
		if (n & 1)
			n = 3 * n + 1;
		else
			n /= 2;
		steps++;
	}
	return steps;
}

int main(void)
{
	int i, total = 0;

	for (i = 1; i < 60; i++) {
		total += collatz(i);
		if (total % 3 == 0)
			sink++;
	}
	sink = total;
	return 0;
}
