// SPDX-License-Identifier: GPL-2.0
/*
 * Check an ebpf-jit revision log: every line parses, its CRC-32C is the
 * one of its bytes, its length and pages agree with its address, and
 * revisions grow. Options add what a scenario promises:
 *   --count N     exactly N revisions
 *   --same-addr   all at one address
 *   --differ      each revision's bytes differ from the one before
 *   --pages N     each revision spans exactly N pages
 * Prints "# ..." diagnostics; exit status 0 if all holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codemem.h"

struct want {
	long count;
	int same_addr;
	int differ;
	long pages;
};

struct line {
	unsigned long long rev, addr;
	unsigned int len, crc;
	char pages[4096];
	char hex[16384];
	__u8 bytes[8192];
};

static int errors;

static void bad(const char *path, int ln, const char *msg)
{
	printf("# %s:%d: %s\n", path, ln, msg);
	errors++;
}

static int unhex(struct line *l)
{
	size_t n = strlen(l->hex), i;

	if (n != 2ULL * l->len || n / 2 > sizeof(l->bytes))
		return -1;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(l->hex + 2 * i, "%2x", &b) != 1)
			return -1;
		l->bytes[i] = b;
	}
	return 0;
}

static long page_list(const struct line *l, size_t page, char *out, size_t cap)
{
	unsigned long long p;
	size_t used = 0;
	long n = 0;

	out[0] = 0;
	for (p = l->addr & ~(unsigned long long)(page - 1); p < l->addr + l->len; p += page) {
		used += snprintf(out + used, cap - used, "%s0x%llx", n ? "," : "", p);
		n++;
		if (used >= cap)
			break;
	}
	return n;
}

/* check one revision line against itself and the one before it */
static void check_line(const char *path, int ln, struct line *l, struct line *prev,
		       size_t page, const struct want *w)
{
	char pages[4096];
	long np;

	if (unhex(l)) {
		bad(path, ln, "bytes are not 2 * len hex digits");
		return;
	}
	if (flowjit_csum(l->bytes, l->len) != l->crc)
		bad(path, ln, "crc32c does not match the bytes");
	np = page_list(l, page, pages, sizeof(pages));
	if (strcmp(pages, l->pages))
		bad(path, ln, "pages do not match addr and len");
	if (w->pages && np != w->pages)
		bad(path, ln, "not the expected number of pages");
	if (!prev)
		return;
	if (l->rev <= prev->rev)
		bad(path, ln, "revision numbers do not grow");
	if (w->same_addr && l->addr != prev->addr)
		bad(path, ln, "address differs from the revision before");
	if (w->differ && l->len == prev->len && !memcmp(l->bytes, prev->bytes, l->len))
		bad(path, ln, "same bytes as the revision before");
}

static int check(const char *path, const struct want *w)
{
	static struct line a, b;
	struct line *cur = &a, *prev = NULL;
	char buf[32768];
	size_t page = sysconf(_SC_PAGESIZE);
	long n = 0;
	int ln = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		bad(path, 0, "cannot open");
		return 1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *pg;

		ln++;
		if (ln == 1 && strcmp(buf, "# ebpf-jit revision log v1\n"))
			bad(path, ln, "no v1 header");
		pg = strstr(buf, " page ");
		if (buf[0] == '#' && pg)
			page = strtoul(pg + 6, NULL, 10);
		if (buf[0] == '#')
			continue;
		if (sscanf(buf, "%llu 0x%llx %u 0x%x %4095s %16383s", &cur->rev, &cur->addr,
			   &cur->len, &cur->crc, cur->pages, cur->hex) != 6) {
			bad(path, ln, "does not parse as rev addr len crc32c pages bytes");
			continue;
		}
		check_line(path, ln, cur, prev, page, w);
		prev = cur;
		cur = cur == &a ? &b : &a;
		n++;
	}
	fclose(f);
	if (w->count >= 0 && n != w->count)
		bad(path, ln, "not the expected number of revisions");
	printf("# %s: %ld revisions\n", path, n);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct want w = { .count = -1 };
	int i;

	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--count"))
			w.count = atol(argv[++i]);
		else if (!strcmp(argv[i], "--pages"))
			w.pages = atol(argv[++i]);
		else if (!strcmp(argv[i], "--same-addr"))
			w.same_addr = 1;
		else if (!strcmp(argv[i], "--differ"))
			w.differ = 1;
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "logcheck [--count N] [--same-addr] [--differ] [--pages N] LOG\n");
		return 2;
	}
	return check(argv[i], &w);
}
