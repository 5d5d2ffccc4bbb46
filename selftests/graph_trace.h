/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The function_graph tracer for the benches' "split" modes: where a
 * path's instructions go. Under QEMU's instruction counting (run-guest
 * -I) the tracer's durations are instruction counts. graph_setup()
 * traces this task's calls of the functions given; graph_mark() starts a
 * traced stretch with a marker line, graph_stop() ends it, graph_dump()
 * prints the trace as "T <pass> <line>" lines for the host's scripts.
 */
#ifndef GRAPH_TRACE_H
#define GRAPH_TRACE_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>

#define TRACEFS		"/sys/kernel/tracing"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* write @val to the tracefs file @name; @append adds to it. 0 or -errno */
static inline int tracefs_write(const char *name, const char *val, bool append)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), TRACEFS "/%s", name);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "graph_trace: %s: %s\n", path, strerror(-ret));
		return ret;
	}
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	if (ret)
		fprintf(stderr, "graph_trace: %s < \"%s\": %s\n", name, val,
			strerror(-ret));
	return ret;
}

/* mount tracefs if it is not there. 0 or -errno */
static inline int graph_mount(void)
{
	if (!access(TRACEFS "/trace", F_OK) ||
	    !mount("nodev", TRACEFS, "tracefs", 0, NULL))
		return 0;
	return -errno;
}

/*
 * Trace this task's calls of the @n functions @funcs with function_graph,
 * tracing off until graph_mark(). A function that cannot be traced (not
 * there, inlined) is said and skipped. Returns 0 or -errno.
 */
static inline int graph_setup(const char *const *funcs, int n)
{
	char pid[32];
	int i;

	if (tracefs_write("current_tracer", "nop", false) ||
	    tracefs_write("set_ftrace_filter", "", false))
		return -EIO;
	for (i = 0; i < n; i++)
		if (tracefs_write("set_ftrace_filter", funcs[i], true))
			printf("# graph_trace: cannot trace %s\n", funcs[i]);
	snprintf(pid, sizeof(pid), "%d", getpid());
	/* funcgraph-tail is the tracer's: set after it */
	if (tracefs_write("tracing_on", "0", false) ||
	    tracefs_write("set_ftrace_pid", pid, false) ||
	    tracefs_write("trace_clock", "local", false) ||
	    tracefs_write("current_tracer", "function_graph", false) ||
	    tracefs_write("trace_options", "funcgraph-tail", false) ||
	    tracefs_write("trace", "", false))
		return -EIO;
	return 0;
}

/* trace from here on, after a marker line "@what" */
static inline void graph_mark(const char *what)
{
	/* a marker needs the ring buffer on */
	tracefs_write("tracing_on", "1", false);
	tracefs_write("trace_marker", what, false);
}

static inline void graph_stop(void)
{
	tracefs_write("tracing_on", "0", false);
}

/* print the trace as "T @pass <line>" lines, then stop the tracer. 0 or 1 */
static inline int graph_dump(int pass)
{
	char buf[4096];
	ssize_t n;
	int fd;

	fd = open(TRACEFS "/trace", O_RDONLY);
	if (fd < 0)
		return 1;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		char *line = buf, *nl;

		buf[n] = 0;
		/* tracefs returns whole lines per read */
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (line[0] != '#')
				printf("T %d %s\n", pass, line);
			line = nl + 1;
		}
	}
	close(fd);
	tracefs_write("current_tracer", "nop", false);
	return 0;
}

#endif
