// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_export: call stacks from calls and returns, written
 * as Chrome trace event JSON and collapsed stacks; JSON escaping, nesting,
 * unbalanced input, errors, limits and time.
 */
#include "pr_export.h"
#include "pr_test.h"

/* An exporter and the text its writers gave. */
struct xfx {
	struct pr_export *x;
	char *json, *folded;
	struct prt_result (*init)(struct xfx *);
	struct prt_result (*fini)(struct xfx *);
};

static struct prt_result xfx_init(struct xfx *f)
{
	f->x = pr_export_alloc(PR_EXPORT_SLICES | PR_EXPORT_STACKS);
	f->json = NULL;
	f->folded = NULL;
	prt_ptr(f->x);
	return prt_passed();
}

static struct prt_result xfx_fini(struct xfx *f)
{
	pr_export_free(f->x);
	free(f->json);
	free(f->folded);
	return prt_passed();
}

static int xfx_task(void *ctx, int32_t tid, struct pr_export_task *task)
{
	(void)ctx;
	task->pid = 7;
	task->comm = tid == 8 ? "worker" : "main";
	return 0;
}

/* Write both outputs of @f into @f->json and @f->folded. */
static int xfx_write(struct xfx *f)
{
	size_t len;
	FILE *out;
	int ret;

	out = open_memstream(&f->json, &len);
	ret = pr_export_chrome(out, &f->x, 1, xfx_task, NULL, "in.data");
	fclose(out);
	out = open_memstream(&f->folded, &len);
	ret |= pr_export_folded(out, &f->x, 1);
	fclose(out);
	return ret;
}

/* The "B"/"E"/"i" events of thread @tid in @json as "B name ts|E name
 * ts|..." (ts as printed) in *@ev (static).
 */
static const char *xfx_events(const char *json, int tid)
{
	static char ev[4096];
	char want[32], ph, name[64], ts[32];
	const char *p = json;
	size_t len = 0;

	ev[0] = 0;
	snprintf(want, sizeof(want), "\"tid\":%d,\"ts\":", tid);
	while ((p = strstr(p, "\n{\"ph\":\""))) {
		p += 8;
		ph = *p;
		if (ph == 'M')
			continue;
		/* this event's thread */
		if (!strstr(p, want) || strstr(p, want) > strchr(p, '}'))
			continue;
		if (sscanf(strstr(p, want) + strlen(want), "%31[0-9.]",
			   ts) != 1)
			continue;
		if (ph == 'i')
			snprintf(name, sizeof(name), "!");
		else if (sscanf(strstr(p, "\"name\":\"") + 8, "%63[^\"]",
				name) != 1)
			continue;
		len += (size_t)snprintf(ev + len, sizeof(ev) - len,
					"%s%c %s %s", len ? "|" : "", ph, name,
					ts);
	}
	return ev;
}

static struct prt_result json_escape(void)
{
	/* quote, backslash, controls, DEL, UTF-8 of 2 and 4 bytes; then
	 * bytes that are not UTF-8: stray, truncated, overlong, surrogate
	 */
	static const char in[] = "a\"b\\c\n\t\x01\x7f"
				 "\xc3\xa9 \xf0\x9f\x98\x80"
				 "|\xff|\xc3|\xc0\xaf|\xed\xa0\x80|";
	static const char want[] = "\"a\\\"b\\\\c\\u000a\\u0009\\u0001\\u007f"
				   "\xc3\xa9 \xf0\x9f\x98\x80|\\ufffd|\\ufffd|"
				   "\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\"";
	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);

	prt_ptr(out);
	pr_export_json_str(out, in);
	pr_export_json_str(out, NULL);
	fclose(out);
	prt_check(len == strlen(want) + 2);
	prt_check(!strncmp(text, want, strlen(want)));
	prt_str_eq(text + strlen(want), "\"\"");
	free(text);
	return prt_passed();
}

/* Thread 7: main, which calls a, which calls b; each runs 2
 * instructions; b and a return; main runs 1 more (no timing).
 */
static struct prt_result nesting(struct xfx *f)
{
	struct pr_export *x = f->x;

	pr_export_insns(x, 7, 0, "main", 2);
	pr_export_call(x, 7, 0, "main", "a");
	pr_export_insns(x, 7, 0, "a", 2);
	pr_export_call(x, 7, 0, "a", "b");
	pr_export_insns(x, 7, 0, "b", 2);
	pr_export_ret(x, 7, 0, "b", "a");
	pr_export_insns(x, 7, 0, "a", 2);
	pr_export_ret(x, 7, 0, "a", "main");
	pr_export_insns(x, 7, 0, "main", 1);
	prt_int_eq(xfx_write(f), 0);
	/* main [0, 9) closed at the end, a [2, 8), b [4, 6) */
	prt_str_eq(xfx_events(f->json, 7), "B main 0|B a 2|B b 4|E b 6|E a 8|"
		   "E main 9");
	prt_check(strstr(f->json, "{\"ph\":\"B\",\"pid\":7,\"tid\":7,"
			 "\"ts\":0,\"name\":\"main\"},\n"));
	prt_check(strstr(f->json, "{\"ph\":\"M\",\"name\":\"thread_name\","
			 "\"pid\":7,\"tid\":7,\"args\":{\"name\":\"main\"}}"));
	prt_check(strstr(f->json, "\"clock\":\"instructions"));
	prt_check(strstr(f->json, "\"input\":\"in.data\""));
	prt_str_eq(f->folded, "main 3\nmain;a 4\nmain;a;b 2\n");
	return prt_passed();
}

/* Returns above the first frame: the function returned to is the
 * caller of everything since the start; open calls close at the end.
 */
static struct prt_result unbalanced(struct xfx *f)
{
	struct pr_export *x = f->x;
	struct pr_export_stats st;

	pr_export_insns(x, 7, 0, "f", 3);
	pr_export_ret(x, 7, 0, "f", "g");
	pr_export_insns(x, 7, 0, "g", 2);
	pr_export_ret(x, 7, 0, "g", "h");
	pr_export_insns(x, 7, 0, "h", 1);
	pr_export_call(x, 7, 0, "h", "open1");
	pr_export_call(x, 7, 0, "open1", "open2");
	pr_export_insns(x, 7, 0, "open2", 4);
	prt_int_eq(xfx_write(f), 0);
	pr_export_stats(&x, 1, &st);
	prt_uint_eq(st.callers, 2);
	prt_uint_eq(st.slices, 5);
	/* h [0, 10) holds g [0, 5) holds f [0, 3); open1, open2 [6, 10) */
	prt_str_eq(xfx_events(f->json, 7), "B h 0|B g 0|B f 0|E f 3|E g 5|"
		   "B open1 6|B open2 6|E open2 10|E open1 10|E h 10");
	prt_check(strstr(f->json, "\"callers_from_returns\":2"));
	prt_str_eq(f->folded, "h 1\nh;g 2\nh;g;f 3\nh;open1;open2 4\n");
	return prt_passed();
}

/* An error closes the stack and is an instant event; a return before
 * any instruction names the bottom frame itself.
 */
static struct prt_result error_closes(struct xfx *f)
{
	struct pr_export *x = f->x;

	pr_export_call(x, 7, 0, "main", "a");
	pr_export_insns(x, 7, 0, "a", 2);
	pr_export_error(x, 7, 0, "overflow \"1\"");
	pr_export_ret(x, 7, 0, "b", "c");
	pr_export_insns(x, 7, 0, "c", 1);
	prt_int_eq(xfx_write(f), 0);
	/* main [0, 2), a [0, 2); the error at 2; after it (at 3) b
	 * returns to c: c [3, 4) holds b [3, 3)
	 */
	prt_str_eq(xfx_events(f->json, 7), "B main 0|B a 0|E a 2|E main 2|"
		   "B c 3|B b 3|E b 3|E c 4|i ! 2");
	prt_check(strstr(f->json, "{\"ph\":\"i\",\"pid\":7,\"tid\":7,"
			 "\"ts\":2,\"s\":\"t\",\"name\":\"trace error\","
			 "\"args\":{\"error\":\"overflow \\\"1\\\"\"}}"));
	prt_check(strstr(f->json, "\"trace_errors\":1"));
	prt_str_eq(f->folded, "c 1\nmain;a 2\n");
	return prt_passed();
}

/* Calls deeper than the limit are counted; their returns unwind them
 * first.  Too many callers found by returns restart the stack.
 */
static struct prt_result limits(struct xfx *f)
{
	struct pr_export *x = f->x;
	struct pr_export_stats st;
	int i;

	pr_export_insns(x, 7, 0, "r", 1);
	for (i = 0; i < PR_EXPORT_DEPTH_MAX + 10; ++i)
		pr_export_call(x, 7, 0, "r", "r");
	pr_export_insns(x, 7, 0, "r", 1);
	for (i = 0; i < PR_EXPORT_DEPTH_MAX + 10; ++i)
		pr_export_ret(x, 7, 0, "r", "r");
	for (i = 0; i < PR_EXPORT_DEPTH_MAX + 5; ++i)
		pr_export_ret(x, 7, 0, "up", "up");
	pr_export_stats(&x, 1, &st);
	prt_uint_eq(st.deep, 11);
	prt_uint_eq(st.callers, PR_EXPORT_DEPTH_MAX + 4);
	prt_uint_eq(st.restarts, 1);
	prt_int_eq(xfx_write(f), 0);
	prt_check(strstr(f->folded, "r 1\n"));
	return prt_passed();
}

/* Per-CPU queues: another thread between two runs of a thread splits its
 * open frames; names come from the task callback.
 */
static struct prt_result threads(struct xfx *f)
{
	struct pr_export *x = f->x;

	pr_export_insns(x, 7, 0, "main", 1);
	pr_export_call(x, 7, 0, "main", "a");
	pr_export_insns(x, 7, 0, "a", 2);
	pr_export_insns(x, 8, 0, "w", 5);
	pr_export_insns(x, 7, 0, "a", 2);
	pr_export_ret(x, 7, 0, "a", "main");
	prt_int_eq(xfx_write(f), 0);
	/* tid 7: main [0, 3) and a [1, 3), again from 4: main [4, 6),
	 * a [4, 6) (ends at 6: where a returned, the end)
	 */
	prt_str_eq(xfx_events(f->json, 7), "B main 0|B a 1|E a 3|E main 3|"
		   "B main 4|B a 4|E a 6|E main 6");
	prt_str_eq(xfx_events(f->json, 8), "B w 0|E w 5");
	prt_check(strstr(f->json, "\"tid\":8,\"args\":{\"name\":\"worker\"}"));
	prt_str_eq(f->folded, "main 1\nmain;a 4\nw 5\n");
	return prt_passed();
}

/* Time: events between two timing packets are placed by instruction
 * count; ';' in a name does not split a folded stack.
 */
static struct prt_result timed(struct xfx *f)
{
	struct pr_export *x = f->x;

	pr_export_insns(x, 7, 1000000, "main", 10);
	pr_export_call(x, 7, 1000000, "main", "a;b");
	pr_export_insns(x, 7, 1000000, "a;b", 10);
	pr_export_insns(x, 7, 2000000, "a;b", 5);
	pr_export_ret(x, 7, 2000000, "a;b", "main");
	pr_export_insns(x, 7, 2000000, "main", 5);
	prt_int_eq(xfx_write(f), 0);
	/* times change at 0 (1 ms) and 20 (2 ms): the call at 10 is at
	 * 1.5 ms; after 20 the thread's mean rate (50 us per instruction)
	 */
	prt_str_eq(xfx_events(f->json, 7), "B main 0.000000|B a;b 500.000000|"
		   "E a;b 1250.000000|E main 1500.000000");
	prt_check(strstr(f->json, "\"clock\":\"perf time"));
	prt_check(strstr(f->json, "\"time_zero_ns\":1000000,"));
	prt_str_eq(f->folded, "main 15\nmain;a_b 15\n");
	return prt_passed();
}

/* Hostile clocks: times that would overflow ps stay at the latest time
 * written; times going back do not move a thread back.
 */
static struct prt_result hostile_clock(struct xfx *f)
{
	struct pr_export *x = f->x;

	pr_export_insns(x, 7, 1, "main", 1);
	pr_export_call(x, 7, 1, "main", "a");
	pr_export_insns(x, 7, UINT64_MAX - 1, "a", 1);
	pr_export_call(x, 7, 5, "a", "b");
	pr_export_insns(x, 7, 5, "b", 1000000);
	pr_export_ret(x, 7, UINT64_MAX, "b", "a");
	pr_export_ret(x, 7, UINT64_MAX, "a", "main");
	prt_int_eq(xfx_write(f), 0);
	/* a starts where the time jumped: at the limit */
	prt_str_eq(xfx_events(f->json, 7), "B main 0.000000|"
		   "B a 9000000000000.000000|B b 9000000000000.000000|"
		   "E b 9000000000000.000000|E a 9000000000000.000000|"
		   "E main 9000000000000.000000");
	return prt_passed();
}

/* NULL exporters and an empty one: no crash, valid empty output. */
static struct prt_result null_and_empty(struct xfx *f)
{
	struct pr_export *none = NULL;

	pr_export_insns(NULL, 1, 0, "f", 1);
	pr_export_call(NULL, 1, 0, "f", "g");
	pr_export_ret(NULL, 1, 0, "g", "f");
	pr_export_error(NULL, 1, 0, "e");
	pr_export_free(NULL);
	prt_int_eq(pr_export_chrome(NULL, &f->x, 1, NULL, NULL, NULL), -1);
	prt_int_eq(pr_export_folded(NULL, &f->x, 1), -1);
	prt_int_eq(xfx_write(f), 0);
	prt_check(!strncmp(f->json, "{\"traceEvents\":[\n],", 19));
	prt_str_eq(f->folded, "");
	free(f->folded);
	f->folded = NULL;
	{
		size_t len;
		FILE *out = open_memstream(&f->folded, &len);

		prt_int_eq(pr_export_folded(out, &none, 1), 0);
		fclose(out);
	}
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };
	struct xfx f = { .init = xfx_init, .fini = xfx_fini };

	prt_run(suite, "pr_export: JSON strings escape quotes, backslashes "
		"and control characters; bytes that are not UTF-8 become "
		"U+FFFD", json_escape);
	prt_run_fx(suite, "pr_export: calls and returns give nested slices, "
		   "outer first, and collapsed stacks with instruction counts",
		   nesting, f);
	prt_run_fx(suite, "pr_export: a return from the bottom frame makes "
		   "the caller hold everything since the start; open calls "
		   "close at the end", unbalanced, f);
	prt_run_fx(suite, "pr_export: an error closes the stack and is an "
		   "instant event; decoding goes on in a new stack",
		   error_closes, f);
	prt_run_fx(suite, "pr_export: calls beyond the depth limit and too "
		   "many callers are counted, not kept", limits, f);
	prt_run_fx(suite, "pr_export: another thread running in the queue "
		   "splits a thread's open frames; threads are named",
		   threads, f);
	prt_run_fx(suite, "pr_export: times between timing packets are "
		   "placed by instruction count; ';' does not split a folded "
		   "stack", timed, f);
	prt_run_fx(suite, "pr_export: clocks beyond 104 days or going back "
		   "give ordered times, no overflow", hostile_clock, f);
	prt_run_fx(suite, "pr_export: NULL and empty exporters write valid "
		   "empty outputs", null_and_empty, f);
	return prt_exit(&suite);
}
