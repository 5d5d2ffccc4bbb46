// SPDX-License-Identifier: GPL-2.0
/*
 * ebpf-jit: compile eBPF-like bytecode to x86-64 in memory, run it, and
 * log exactly which bytes ran where (see README.rst).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scen.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: ebpf-jit [options] SCENARIO [N]\n"
		"scenarios: compile-run rewrite span free-reuse threads loop42 static-key\n"
		"           sites N\n"
		"  --mode wx|rwx|mmap-exec|memfd-dual  code memory (default wx)\n"
		"  --map one|each      one mapping for all code or one per object\n"
		"                      (wx, memfd-dual; rwx is one, mmap-exec each)\n"
		"  --log FILE          write the revision log to FILE\n"
		"  --count K           rewrites, reuses, patches, phases (default 4)\n"
		"  --threads N         threads scenario: executing threads (default 2)\n"
		"  --sync barrier|atomic  threads: rewrite between barriers (default),\n"
		"                      or patch a jmp/nop5 site with one atomic store\n"
		"                      while the threads run (not with --mode wx)\n"
		"  --runs R            runs per site (default 1), per thread and phase\n"
		"                      (default 10000)\n"
		"  --offset B          span: code starts B bytes before a page end (24)\n"
		"  --args A,B,...      r1..r5 (default 1,2,3,4,5)\n"
		"  --prog NAME         compile-run: a built-in program (default sum)\n"
		"  --hex HEX           compile-run: bytecode, 8 bytes an insn, in hex\n"
		"  --file FILE         compile-run: bytecode, raw struct bpf_insn array\n"
		"  --summary M         revisions shown on stdout (default 16)\n"
		"  --list              list the built-in programs and scenarios\n");
}

static int die(const char *msg, const char *arg)
{
	fprintf(stderr, "ebpf-jit: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static unsigned long num(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end || v > 0xffffffffULL)
		die(what, s);
	return v;
}

static void parse_args(struct opts *o, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int i = 0;

	memset(o->args, 0, sizeof(o->args));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;

		if (i == UJIT_NARGS)
			die("more than 5 --args", s);
		errno = 0;
		o->args[i++] = strtoull(tok, &end, 0);
		if (errno || *end)
			die("bad --args value", tok);
	}
	free(copy);
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static void set_bytecode(struct opts *o, const __u8 *b, size_t len, const char *from)
{
	struct bpf_insn *p;

	if (!len || len % sizeof(*p) || len / sizeof(*p) > UJIT_MAX_INSNS)
		die("bytecode must be 1..4096 insns of 8 bytes", from);
	p = malloc(len);
	if (!p)
		die("out of memory", NULL);
	memcpy(p, b, len);
	free(o->owned);
	o->owned = p;
	o->insns = p;
	o->ninsns = len / sizeof(*p);
	o->prog_name = from;
}

static void parse_hex(struct opts *o, const char *s)
{
	size_t n = 0, cap = strlen(s) / 2 + 1;
	__u8 *b = malloc(cap);
	int hi = -1, v;

	if (!b)
		die("out of memory", NULL);
	for (; *s; s++) {
		if (*s == ' ' || *s == '\n' || *s == '\t' || *s == ':')
			continue;
		v = hexval(*s);
		if (v < 0)
			die("--hex: not a hex digit", s);
		if (hi < 0) {
			hi = v;
		} else {
			b[n++] = hi << 4 | v;
			hi = -1;
		}
	}
	if (hi >= 0)
		die("--hex: odd number of digits", NULL);
	set_bytecode(o, b, n, "hex");
	free(b);
}

static void read_file(struct opts *o, const char *path)
{
	static __u8 b[UJIT_MAX_INSNS * 8 + 1];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		die(strerror(errno), path);
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	set_bytecode(o, b, n, path);
}

static void parse_mode(struct opts *o, const char *s)
{
	int m;

	for (m = CM_WX; m <= CM_MEMFD_DUAL; m++)
		if (!strcmp(s, cm_mode_names[m])) {
			o->mode = m;
			return;
		}
	die("unknown --mode (wx, rwx, mmap-exec, memfd-dual)", s);
}

static void set_prog(struct opts *o, const char *name)
{
	const struct ujit_prog *p = ujit_prog_find(name);

	if (!p)
		die("unknown program (see --list)", name);
	o->insns = p->insns;
	o->ninsns = p->n;
	o->prog_name = p->name;
}

static void list(void)
{
	__u32 i;

	for (i = 0; i < ujit_nprogs; i++)
		printf("%-12s %2u insns  %s\n", ujit_progs[i].name, ujit_progs[i].n,
		       ujit_progs[i].what);
	printf("scenarios: ");
	scen_list();
	exit(0);
}

static const struct option longopts[] = {
	{ "mode", 1, NULL, 'm' }, { "map", 1, NULL, 'M' }, { "log", 1, NULL, 'l' },
	{ "count", 1, NULL, 'c' }, { "threads", 1, NULL, 't' },
	{ "runs", 1, NULL, 'r' }, { "offset", 1, NULL, 'o' },
	{ "args", 1, NULL, 'a' }, { "prog", 1, NULL, 'p' }, { "hex", 1, NULL, 'x' },
	{ "file", 1, NULL, 'f' }, { "summary", 1, NULL, 's' },
	{ "sync", 1, NULL, 'S' }, { "list", 0, NULL, 'L' }, { "help", 0, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_map(struct opts *o, const char *arg)
{
	if (strcmp(arg, "one") && strcmp(arg, "each"))
		die("--map is one or each", arg);
	o->map = strcmp(arg, "one") ? CM_MAP_EACH : CM_MAP_ONE;
	o->map_set = 1;
}

/* the options that take a number */
static int parse_num_opt(struct opts *o, int ch, const char *arg)
{
	unsigned int *p;

	switch (ch) {
	case 'c':
		p = &o->count;
		break;
	case 't':
		p = &o->threads;
		break;
	case 'r':
		p = &o->runs;
		break;
	case 'o':
		p = &o->offset;
		break;
	case 's':
		o->summary = num(arg, "bad --summary");
		return 1;
	default:
		return 0;
	}
	*p = num(arg, "bad number");
	return 1;
}

static void parse_opt(struct opts *o, int ch, const char *arg)
{
	if (parse_num_opt(o, ch, arg))
		return;
	switch (ch) {
	case 'm':
		parse_mode(o, arg);
		break;
	case 'M':
		parse_map(o, arg);
		break;
	case 'l':
		o->log = arg;
		break;
	case 'a':
		parse_args(o, arg);
		break;
	case 'p':
		set_prog(o, arg);
		break;
	case 'x':
		parse_hex(o, arg);
		break;
	case 'f':
		read_file(o, arg);
		break;
	case 'S':
		if (strcmp(arg, "barrier") && strcmp(arg, "atomic"))
			die("--sync is barrier or atomic", arg);
		o->sync_atomic = !strcmp(arg, "atomic");
		break;
	case 'L':
		list();
		break;
	case 'h':
		help(stdout);
		exit(0);
	default:
		help(stderr);
		exit(2);
	}
}

/* rwx is one mapping, mmap-exec a mapping per object; else --map */
static enum cm_map pick_map(const struct opts *o, const struct scenario *s)
{
	if (o->mode == CM_RWX || o->mode == CM_MMAP_EXEC) {
		enum cm_map m = o->mode == CM_RWX ? CM_MAP_ONE : CM_MAP_EACH;

		if (o->map_set && o->map != m)
			die("--map does not apply to this --mode", cm_mode_names[o->mode]);
		return m;
	}
	if (o->map_set)
		return o->map;
	return strcmp(s->name, "free-reuse") ? CM_MAP_ONE : CM_MAP_EACH;
}

static int finish(struct ctx *c, const char *scen)
{
	char header[160];
	int err;

	revlog_summary(&c->log, c->cs.page, c->o->summary);
	if (c->log.nomem)
		die("out of memory for the revision log", NULL);
	snprintf(header, sizeof(header), "scenario %s mode %s map %s page %zu", scen,
		 cm_mode_names[c->cs.mode], c->cs.map == CM_MAP_ONE ? "one" : "each",
		 c->cs.page);
	if (c->o->log) {
		err = revlog_write(&c->log, c->o->log, header, c->cs.page);
		if (err)
			die(strerror(-err), c->o->log);
	}
	return c->failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .count = 4, .threads = 2, .offset = 24, .summary = 16,
			  .args = { 1, 2, 3, 4, 5 } };
	const struct scenario *s;
	struct ctx c = { .o = &o };
	int ch, ret;

	set_prog(&o, "sum");
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
		parse_opt(&o, ch, optarg);
	if (optind >= argc)
		die("no scenario (see --help)", NULL);
	s = scen_find(argv[optind]);
	if (!s)
		die("unknown scenario (see --help)", argv[optind]);
	if (!strcmp(s->name, "sites")) {
		if (optind + 1 >= argc)
			die("sites needs N", NULL);
		o.nsites = num(argv[optind + 1], "bad number of sites");
		if (!o.nsites)
			die("sites needs N >= 1", NULL);
		optind++;
	}
	if (optind + 1 < argc)
		die("extra argument", argv[optind + 1]);
	if (!o.runs)
		o.runs = strcmp(s->name, "threads") ? 1 : 10000;
	if (!o.threads)
		die("--threads must be at least 1", NULL);
	revlog_init(&c.log);
	ret = cm_space_init(&c.cs, o.mode, pick_map(&o, s),
			    s->arena_pages ? s->arena_pages : o.nsites, &c.log);
	if (ret)
		die("cannot map code memory", strerror(-ret));
	printf("ebpf-jit: %s, mode %s, map %s\n", s->name, cm_mode_names[o.mode],
	       c.cs.map == CM_MAP_ONE ? "one" : "each");
	if (s->run(&c)) {
		fprintf(stderr, "ebpf-jit: %s failed\n", s->name);
		return 1;
	}
	ret = finish(&c, s->name);
	cm_space_fini(&c.cs);
	revlog_free(&c.log);
	free(o.owned);
	if (ret)
		printf("ebpf-jit: %u mismatches\n", c.failures);
	return ret;
}
