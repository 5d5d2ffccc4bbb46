// SPDX-License-Identifier: GPL-2.0
/* Indirect calls through function pointers and a switch jump table. */
static volatile int sink;

static int __attribute__((noinline)) add(int a, int b) { return a + b; }
static int __attribute__((noinline)) sub(int a, int b) { return a - b; }
static int __attribute__((noinline)) mul(int a, int b) { return a * b; }
static int __attribute__((noinline)) xor(int a, int b) { return a ^ b; }

static int (*const ops[])(int, int) = { add, sub, mul, xor };

static int __attribute__((noinline)) dispatch(int op, int v)
{
	switch (op) {	/* dense switch: compiled to an indirect jmp */
	case 0: return v + 11;
	case 1: return v * 3;
	case 2: return v - 7;
	case 3: return v << 2;
	case 4: return v >> 1;
	case 5: return ~v;
	case 6: return v ^ 0x55;
	default: return v;
	}
}

int main(void)
{
	int (*volatile fp)(int, int);
	int i, acc = 1;

	for (i = 0; i < 200; i++) {
		fp = ops[i % 4];
		acc = fp(acc, i) & 0xffff;
		acc = dispatch(i % 8, acc);
	}
	sink = acc;
	return 0;
}
