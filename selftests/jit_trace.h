/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run a program under flowjit, as perf record -- CMD does (per-CPU
 * events on the child, inherited by its threads, opened before it
 * execs), and check the revision log of samples/ebpf-jit against the
 * snapshots: every revision that ran must have, for each page it
 * touches, a snapshot with exactly the bytes the JIT wrote there.
 */
#ifndef FLOWJIT_SELFTEST_JIT_TRACE_H
#define FLOWJIT_SELFTEST_JIT_TRACE_H

#include <stdio.h>
#include <sys/wait.h>

#include "flowjit_records.h"

#define JT_MAX_REVS	256
#define JT_PAGE		4096UL

struct jt_rev {
	unsigned int rev;
	uint64_t addr;
	unsigned int len;
	uint8_t bytes[JT_PAGE * 2];
};

/* Decode the @r->len bytes hex-encoded in @hex into @r. Returns 0, or -1. */
static inline int jt_unhex(struct jt_rev *r, const char *hex)
{
	unsigned int i;

	if (r->len > sizeof(r->bytes) || strlen(hex) != 2 * r->len)
		return -1;
	for (i = 0; i < r->len; i++)
		if (sscanf(hex + 2 * i, "%2hhx", &r->bytes[i]) != 1)
			return -1;
	return 0;
}

/*
 * Read @path into @revs, a line at a time with @parse, which returns 1
 * for a revision, 0 for a line to skip and -1 for a malformed one.
 * Returns revisions read, or -1.
 */
static inline int jt_read_revs(const char *path, struct jt_rev *revs,
			       int max,
			       int (*parse)(const char *line, struct jt_rev *r))
{
	static char line[3 * 2 * JT_PAGE];
	FILE *f = fopen(path, "r");
	int n = 0, ret = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		ret = parse(line, &revs[n]);
		if (ret < 0)
			break;
		n += ret;
	}
	fclose(f);
	return ret < 0 ? -1 : n;
}

/* Parse a line of an ebpf-jit --log file. */
static inline int jt_parse_log(const char *line, struct jt_rev *r)
{
	static char hex[2 * 2 * JT_PAGE + 1];
	unsigned long long addr;
	unsigned int crc;

	if (line[0] == '#')
		return 0;
	if (sscanf(line, "%u %llx %u %x %*s %8192s", &r->rev, &addr, &r->len,
		   &crc, hex) != 5 || jt_unhex(r, hex) ||
	    flowjit_csum(r->bytes, r->len) != crc)
		return -1;
	r->addr = addr;
	return 1;
}

/* Parse an ebpf-jit --log file. Returns revisions read, or -1. */
static inline int jt_read_log(const char *path, struct jt_rev *revs, int max)
{
	return jt_read_revs(path, revs, max, jt_parse_log);
}

/* Release what a jt_run() test used. */
static inline void jt_free(struct sb *sb, struct fj_set *set,
			   struct jt_rev *revs)
{
	sb_close(sb);
	fj_reset(set);
	free(set);
	free(revs);
}

/*
 * Collect @sb's records into @set until @pid exits. Returns its wait
 * status, or -ECHILD if it could not be waited for.
 */
static inline int jt_collect_until_exit(pid_t pid, struct sb *sb,
					struct fj_set *set)
{
	int status;
	pid_t ret;

	while ((ret = waitpid(pid, &status, WNOHANG)) == 0) {
		fj_collect(sb, set);
		usleep(5000);
	}
	fj_collect(sb, set);
	return ret == pid ? status : -ECHILD;
}

/*
 * Fork, open per-CPU inherited flowjit events on the child, let it exec
 * @argv, and collect the records until it exits. Returns its wait
 * status, or -errno if the events could not be opened.
 */
static inline int jt_run(char *const argv[], struct sb *sb,
			 struct fj_set *set, pid_t *child)
{
	struct perf_event_attr attr;
	int go[2], status, err;
	pid_t pid;

	if (pipe(go))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	sb_attr_init(&attr);
	attr.flowjit = 1;
	attr.exclude_kernel = 1;
	attr.inherit = 1;
	err = sb_open_pid(sb, &attr, pid);
	if (write(go[1], "g", 1) != 1 && !err)
		err = -EPIPE;
	close(go[1]);
	if (err) {
		waitpid(pid, &status, 0);
		return err;
	}
	*child = pid;
	return jt_collect_until_exit(pid, sb, set);
}

/* the snapshot of @page by @pid that holds @len bytes @b at @off */
static inline struct fj_obj *jt_find(struct fj_set *set, pid_t pid,
				     uint64_t page, unsigned int off,
				     const uint8_t *b, unsigned int len)
{
	int i;

	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (fj_user_image(o, pid) && o->rec.addr == page &&
		    fj_complete(o) && !memcmp(o->bytes + off, b, len))
			return o;
	}
	return NULL;
}

/* Revisions of @revs without a matching snapshot of every page. */
static inline int jt_missing(struct jt_rev *revs, int n, struct fj_set *set,
			     pid_t pid, bool verbose)
{
	int i, missing = 0;

	for (i = 0; i < n; i++) {
		struct jt_rev *r = &revs[i];
		uint64_t a = r->addr, end = r->addr + r->len;
		bool ok = true;

		while (a < end) {
			uint64_t page = a & ~(JT_PAGE - 1);
			uint64_t stop = end < page + JT_PAGE ? end : page + JT_PAGE;

			ok &= !!jt_find(set, pid, page, a - page,
					r->bytes + (a - r->addr), stop - a);
			a = stop;
		}
		if (!ok)
			missing++;
		if (verbose)
			printf("  rev %3u at 0x%llx len %3u: %s\n", r->rev,
			       (unsigned long long)r->addr, r->len,
			       ok ? "captured, same bytes" : "NOT CAPTURED");
	}
	return missing;
}

#endif /* FLOWJIT_SELFTEST_JIT_TRACE_H */
