// SPDX-License-Identifier: GPL-2.0
/* libc calls through the PLT (lazy binding), with a callback (qsort). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	int v[16], i;
	char s[64];

	for (i = 0; i < 16; i++)
		v[i] = (i * 7919) % 31;
	qsort(v, 16, sizeof(v[0]), cmp);
	snprintf(s, sizeof(s), "%d %d %zu", v[0], v[15], strlen("ptsynth"));
	puts(s);
	return strcmp(s, "") ? 0 : 1;
}
