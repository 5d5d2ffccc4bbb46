// SPDX-License-Identifier: GPL-2.0
/*
 * Trace a user-space JIT the way perf record --flowjit -- CMD does and
 * show that every code revision it ran was captured by the kernel, with
 * the bytes it wrote, without any help from the JIT.
 *
 *   jit_trace EBPF_JIT_BINARY [ebpf-jit options and scenario]
 *   jit_trace		(/samples/ebpf-jit --mode wx rewrite, for make demo)
 *
 * As perf does: fork, open a flowjit event on the child on every CPU
 * (inherited by its threads, user code only) before it execs, and read
 * the rings until it exits (tools/lib/flowjit: flowjit_ring). The
 * snapshots of its pages come out of flowjit_reasm whole, their CRC-32C
 * checked. samples/ebpf-jit --log says which revisions ran, and their
 * bytes; each must be in a snapshot of every page it touches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "libflowjit.h"
#include "flowjit_ring.h"

#define MAX_CPUS	64
#define DATA_PAGES	64	/* ring buffer pages per CPU */
#define SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
#define PAGE		4096UL
#define MAX_REVS	256
#define LOG		"/tmp/jit_trace.log"

/* a revision that ran, from the JIT's log */
struct rev {
	unsigned int rev, len;
	unsigned long long addr;
	unsigned char bytes[2 * PAGE];
};

static struct rev revs[MAX_REVS];
static struct flowjit_reasm ra;
static struct flowjit_image *images;	/* snapshots of the child's pages */
static int nr_images;
static pid_t child;

/* Called by flowjit_ring_drain() for each record of a ring. */
static void note(const struct perf_event_header *hdr, void *arg)
{
	struct flowjit_sample_id id;
	struct flowjit_image img, *p;
	struct flowjit_chunk c;

	(void)arg;
	if (hdr->type != FLOWJIT_PERF_RECORD_TYPE)
		return;
	if (flowjit_reasm_parse(&ra, &c, hdr + 1, hdr->size - sizeof(*hdr), NULL) ||
	    c.rec.op != FLOWJIT_OP_IMAGE || c.rec.kind != FLOWJIT_KIND_USER_JIT ||
	    c.rec.pid != (__u32)child)
		return;
	flowjit_sample_id_parse(hdr, SAMPLE_TYPE, &id);
	if (flowjit_reasm_add(&ra, &c, id.time, &img) != 1)
		return;
	p = realloc(images, (nr_images + 1) * sizeof(*images));
	if (!p) {
		free(img.bytes);
		return;
	}
	images = p;
	images[nr_images++] = img;
}

/*
 * Fork @argv; open per-CPU flowjit events on the child, inherited by its
 * threads, before it execs; read them until it exits. Returns its wait
 * status, or -errno if the events could not be opened.
 */
static int trace(char *const argv[], __u64 *lost)
{
	static struct flowjit_ring ring[MAX_CPUS];
	int cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct perf_event_attr attr;
	int go[2], status, i, n = 0, err = 0;
	char c = 'g';
	pid_t ret;

	if (cpus > MAX_CPUS)
		cpus = MAX_CPUS;
	if (pipe(go))
		return -errno;
	child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = SAMPLE_TYPE;	/* TIME is required */
	attr.sample_id_all = 1;
	attr.flowjit = 1;
	attr.exclude_kernel = 1;	/* the JIT's code, not the kernel's */
	attr.inherit = 1;		/* and its threads' */
	for (n = 0; n < cpus && !err; n++) {
		int fd = flowjit_perf_event_open(&attr, child, n);

		err = fd < 0 ? -errno : flowjit_ring_map(&ring[n], fd, DATA_PAGES);
		if (err && fd >= 0)
			close(fd);
	}
	if (err)
		n--;
	if (write(go[1], &c, 1) != 1 && !err)
		err = -EPIPE;
	close(go[1]);

	while (!err && (ret = waitpid(child, &status, WNOHANG)) == 0) {
		for (i = 0; i < n; i++)
			flowjit_ring_drain(&ring[i], note, NULL);
		usleep(5000);
	}
	if (err)
		waitpid(child, &status, 0);
	else if (ret != child)
		err = -ECHILD;
	for (i = 0; i < n; i++) {
		flowjit_ring_drain(&ring[i], note, NULL);
		*lost += ring[i].lost;
		flowjit_ring_close(&ring[i]);
	}
	return err ? err : status;
}

/*
 * Read the revision log of samples/ebpf-jit: lines of
 * "rev addr len crc32c pages hexbytes". Returns revisions read, or -1.
 */
static int read_log(const char *path)
{
	static char line[6 * PAGE], hex[4 * PAGE + 1];
	FILE *f = fopen(path, "r");
	unsigned int crc, i;
	int n = 0, bad = 0;

	if (!f)
		return -1;
	while (n < MAX_REVS && !bad && fgets(line, sizeof(line), f)) {
		struct rev *r = &revs[n];

		if (line[0] == '#')
			continue;
		bad = sscanf(line, "%u %llx %u %x %*s %8192s", &r->rev, &r->addr,
			     &r->len, &crc, hex) != 5 ||
		      r->len > sizeof(r->bytes) || strlen(hex) != 2 * r->len;
		for (i = 0; !bad && i < r->len; i++)
			bad = sscanf(hex + 2 * i, "%2hhx", &r->bytes[i]) != 1;
		bad = bad || flowjit_csum(r->bytes, r->len) != crc;
		n += !bad;
	}
	fclose(f);
	return bad ? -1 : n;
}

/* Is there a snapshot of @page holding the @len bytes @b at @off? */
static int captured(unsigned long long page, unsigned long long off,
		    const unsigned char *b, unsigned long long len)
{
	int i;

	for (i = 0; i < nr_images; i++)
		if (images[i].rec.addr == page && off + len <= images[i].rec.len &&
		    !memcmp(images[i].bytes + off, b, len))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static char * const demo[] = { "jit_trace", "/samples/ebpf-jit",
				       "--mode", "wx", "--count", "3",
				       "rewrite", NULL };
	int i, status, n, missing = 0;
	char *args[32];
	__u64 lost = 0;

	if (argc == 1) {
		argv = (char **)demo;
		argc = 7;
	}
	if (argc < 3 || argc > 28) {
		fprintf(stderr, "usage: %s EBPF_JIT [OPTIONS] SCENARIO\n",
			argv[0]);
		return 2;
	}
	args[0] = argv[1];
	args[1] = "--log";
	args[2] = LOG;
	for (i = 2; i < argc; i++)
		args[i + 1] = argv[i];
	args[argc + 1] = NULL;
	unlink(LOG);

	flowjit_reasm_init(&ra);
	status = trace(args, &lost);
	if (status < 0) {
		fprintf(stderr, "perf_event_open(flowjit): %s\n",
			strerror(-status));
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s failed (status %#x)\n", args[0], status);
		return 1;
	}
	n = read_log(LOG);
	if (n <= 0) {
		fprintf(stderr, "no usable revision log\n");
		return 1;
	}
	printf("the JIT (pid %d) ran %d code revisions;", child, n);
	printf(" the kernel wrote %llu flowjit records (%llu lost):\n",
	       (unsigned long long)ra.counts.records, (unsigned long long)lost);
	for (i = 0; i < n; i++) {
		struct rev *r = &revs[i];
		unsigned long long a = r->addr, end = r->addr + r->len;
		int ok = 1;

		/* each page the revision touches */
		while (a < end) {
			unsigned long long page = a & ~(PAGE - 1);
			unsigned long long stop = end < page + PAGE ? end : page + PAGE;

			ok &= captured(page, a - page, r->bytes + (a - r->addr),
				       stop - a);
			a = stop;
		}
		missing += !ok;
		printf("  rev %3u at 0x%llx len %3u: %s\n", r->rev, r->addr,
		       r->len, ok ? "captured, same bytes" : "NOT CAPTURED");
	}
	printf("%d of %d revisions captured before they ran, byte for byte\n",
	       n - missing, n);
	flowjit_reasm_fini(&ra);
	for (i = 0; i < nr_images; i++)
		free(images[i].bytes);
	free(images);
	return missing ? 1 : 0;
}
