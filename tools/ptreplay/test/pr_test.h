/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_test: a tiny ptunit-style unit test harness.
 *
 * A test is a function returning struct prt_result; checks return early
 * with a failure that names the file, line and the failed expression.
 * Fixture tests get a fixture struct with init and fini functions.
 *
 * Each test prints one unnumbered TAP line, "ok - <what>" or
 * "not ok - <what>" followed by "# <why>"; test/run-tests.sh numbers the
 * lines of all test programs.
 */
#ifndef PR_TEST_H
#define PR_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The result of one test. */
struct prt_result {
	/* Non-zero if the test failed. */
	int failed;

	/* Where and why it failed. */
	const char *file;
	int line;
	char why[256];
};

/* A test suite: counts of run and failed tests. */
struct prt_suite {
	int nrun;
	int nfailed;
};

static inline struct prt_result prt_passed(void)
{
	struct prt_result result;

	memset(&result, 0, sizeof(result));
	return result;
}

static inline struct prt_result prt_failed(const char *file, int line,
					   const char *why)
{
	struct prt_result result;

	memset(&result, 0, sizeof(result));
	result.failed = 1;
	result.file = file;
	result.line = line;
	snprintf(result.why, sizeof(result.why), "%s", why);
	return result;
}

/* Report @result of the test described by @what. */
static inline void prt_report(struct prt_suite *suite,
			      struct prt_result result, const char *what)
{
	suite->nrun += 1;
	if (!result.failed) {
		printf("ok - %s\n", what);
		return;
	}

	suite->nfailed += 1;
	printf("not ok - %s\n# %s:%d: %s\n", what, result.file, result.line,
	       result.why);
}

/* The exit status for @suite. */
static inline int prt_exit(const struct prt_suite *suite)
{
	fflush(stdout);
	return suite->nfailed ? 1 : 0;
}

#define prt_fail(...)							\
	do {								\
		char why_[256];						\
		snprintf(why_, sizeof(why_), __VA_ARGS__);		\
		return prt_failed(__FILE__, __LINE__, why_);		\
	} while (0)

#define prt_check(cond)							\
	do {								\
		if (!(cond))						\
			prt_fail("failed: %s", #cond);			\
	} while (0)

#define prt_int_eq(actual, expected)					\
	do {								\
		long long a_ = (long long) (actual);			\
		long long e_ = (long long) (expected);			\
		if (a_ != e_)						\
			prt_fail("%s is %lld, expected %lld (%s)",	\
				 #actual, a_, e_, #expected);		\
	} while (0)

#define prt_uint_eq(actual, expected)					\
	do {								\
		uint64_t a_ = (uint64_t) (actual);			\
		uint64_t e_ = (uint64_t) (expected);			\
		if (a_ != e_)						\
			prt_fail("%s is 0x%" PRIx64 ", expected 0x%"	\
				 PRIx64 " (%s)", #actual, a_, e_,	\
				 #expected);				\
	} while (0)

#define prt_str_eq(actual, expected)					\
	do {								\
		const char *a_ = (actual);				\
		const char *e_ = (expected);				\
		if (!a_ || strcmp(a_, e_) != 0)				\
			prt_fail("%s is \"%s\", expected \"%s\"",	\
				 #actual, a_ ? a_ : "(null)", e_);	\
	} while (0)

#define prt_null(ptr)	prt_check((ptr) == NULL)
#define prt_ptr(ptr)	prt_check((ptr) != NULL)

/* Run a test function with arguments. */
#define prt_run(suite, what, fn, ...)					\
	prt_report(&(suite), fn(__VA_ARGS__), what)

/* Run a fixture test: @fx is a struct with init and fini functions taking
 * a pointer to it; fini runs even if the test fails.
 */
#define prt_run_fx(suite, what, fn, fx, ...)				\
	do {								\
		struct prt_result r_ = (fx).init(&(fx));		\
		if (!r_.failed)						\
			r_ = fn(&(fx), ##__VA_ARGS__);			\
		if ((fx).fini) {					\
			struct prt_result f_ = (fx).fini(&(fx));	\
			if (!r_.failed)					\
				r_ = f_;				\
		}							\
		prt_report(&(suite), r_, what);				\
	} while (0)

/* Write @size bytes at @data to a new temporary file; its name goes to
 * @path (at least 32 bytes).
 *
 * Returns zero on success, -1 otherwise.
 */
static inline int prt_tmpfile(char *path, const void *data, size_t size)
{
	ssize_t written;
	int fd;

	strcpy(path, "/tmp/ptreplay-test-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;

	written = size ? write(fd, data, size) : 0;
	close(fd);

	return written == (ssize_t) size ? 0 : -1;
}

/* The output and error streams of the code under test, in memory. */
struct prt_capture {
	FILE *out, *err;
	char *out_text, *err_text;
	size_t out_size, err_size;
};

/* Open @cap's streams.
 *
 * Returns zero on success, -1 otherwise.
 */
static inline int prt_capture_open(struct prt_capture *cap)
{
	cap->out_text = NULL;
	cap->err_text = NULL;
	cap->out = open_memstream(&cap->out_text, &cap->out_size);
	cap->err = open_memstream(&cap->err_text, &cap->err_size);

	return cap->out && cap->err ? 0 : -1;
}

/* Close @cap's streams and free what they captured. */
static inline void prt_capture_close(struct prt_capture *cap)
{
	if (cap->out)
		fclose(cap->out);
	if (cap->err)
		fclose(cap->err);
	free(cap->out_text);
	free(cap->err_text);
}

#endif /* PR_TEST_H */
