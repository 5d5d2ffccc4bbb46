// SPDX-License-Identifier: GPL-2.0
/*
 * Load an eBPF program with a subprogram, close it at once, and print
 * the flowjit records the kernel wrote for it: the JIT image of each
 * function, checked against what bpf(2) reported while the program was
 * loaded, and the retire records.
 *
 * The path of any consumer of flowjit records without perf: open a
 * perf event with attr.flowjit on every CPU, map its ring buffer, read
 * the records (tools/lib/flowjit: flowjit_ring), check each and put the
 * chunks of an image together (flowjit_reasm: an image comes out whole,
 * its CRC-32C checked, or is counted as dropped).
 *
 * Needs CAP_PERFMON (or perf_event_paranoid <= 1) and CAP_BPF.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#include "libflowjit.h"
#include "flowjit_ring.h"

#define MAX_CPUS	64
#define DATA_PAGES	64	/* ring buffer pages per CPU */
#define MAX_FUNCS	8
#define SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define INSN(c, d, s, o, i) \
	{ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) }

/* main: r1 = 41; call sub; exit -- sub: r0 = r1 + 1; exit */
static const struct bpf_insn prog[] = {
	INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 41),
	INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1),
	INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 0, 0),
	INSN(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1),
	INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
};

/* what bpf(2) says of the program's JIT image */
static struct bpf_prog_info info;
static __u64 ksyms[MAX_FUNCS];
static __u32 func_lens[MAX_FUNCS];
static __u8 insns[65536];

static struct flowjit_reasm ra;
static int retires;

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Load the program, read back its JIT image, close it. 0 or -errno. */
static int load_and_close(void)
{
	union bpf_attr attr;
	int fd, err = 0;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (__u64)(unsigned long)prog;
	attr.insn_cnt = ARRAY_SIZE(prog);
	attr.license = (__u64)(unsigned long)"GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "flowjit_demo");
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		fprintf(stderr, "BPF_PROG_LOAD: %s\n", strerror(errno));
		return -errno;
	}
	info.nr_jited_ksyms = MAX_FUNCS;
	info.jited_ksyms = (__u64)(unsigned long)ksyms;
	info.nr_jited_func_lens = MAX_FUNCS;
	info.jited_func_lens = (__u64)(unsigned long)func_lens;
	info.jited_prog_len = sizeof(insns);
	info.jited_prog_insns = (__u64)(unsigned long)insns;
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (__u64)(unsigned long)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		err = -errno;
		fprintf(stderr, "BPF_OBJ_GET_INFO_BY_FD: %s\n", strerror(errno));
	}
	close(fd);	/* gone: only flowjit still has its bytes */
	return err;
}

static void hexdump(const __u8 *p, __u64 len)
{
	__u64 i;

	for (i = 0; i < len; i++)
		printf("%s%02x%s", i % 16 ? "" : "    ", p[i],
		       i % 16 == 15 || i + 1 == len ? "\n" : " ");
}

static void print_rec(const struct flowjit_record *rec, __u64 time)
{
	printf("\n%-6s %s id %llu sub %u at 0x%llx len %llu rev %u pid %u time %llu\n",
	       flowjit_op_name(rec->op), flowjit_kind_name(rec->kind),
	       (unsigned long long)rec->id, rec->sub,
	       (unsigned long long)rec->addr, (unsigned long long)rec->len,
	       rec->revision, rec->pid, (unsigned long long)time);
}

/* An image of our program, whole and with its CRC-32C checked. */
static void print_image(const struct flowjit_image *img, __u64 time)
{
	const struct flowjit_record *rec = &img->rec;
	__u32 off = 0, i;
	int same;

	for (i = 0; i < rec->sub && i < MAX_FUNCS; i++)
		off += func_lens[i];
	same = rec->sub < info.nr_jited_ksyms && rec->sub < MAX_FUNCS &&
	       rec->addr == ksyms[rec->sub] && rec->len == func_lens[rec->sub] &&
	       off + rec->len <= info.jited_prog_len &&
	       !memcmp(img->bytes, insns + off, rec->len);
	print_rec(rec, time);
	printf("  crc32c %08x ok; bytes and address as bpf(2) said: %s\n",
	       rec->csum, same ? "yes" : "NO");
	hexdump(img->bytes, rec->len);
}

/* Called by flowjit_ring_drain() for each record of a ring. */
static void note(const struct perf_event_header *hdr, void *arg)
{
	struct flowjit_sample_id id;
	struct flowjit_image img;
	struct flowjit_chunk c;

	(void)arg;
	if (hdr->type != FLOWJIT_PERF_RECORD_TYPE)
		return;		/* sideband of the dummy event: nothing */
	if (flowjit_reasm_parse(&ra, &c, hdr + 1, hdr->size - sizeof(*hdr), NULL))
		return;		/* malformed or unknown version: counted */
	flowjit_sample_id_parse(hdr, SAMPLE_TYPE, &id);
	if (c.rec.id != info.id || (c.rec.kind != FLOWJIT_KIND_BPF_PROG &&
				    c.rec.kind != FLOWJIT_KIND_BPF_SUBPROG))
		return;		/* another program's */
	if (c.rec.op == FLOWJIT_OP_RETIRE) {
		print_rec(&c.rec, id.time);
		retires++;
	} else if (flowjit_reasm_add(&ra, &c, id.time, &img) == 1) {
		print_image(&img, img.time);
		free(img.bytes);
	}
}

int main(void)
{
	static struct flowjit_ring ring[MAX_CPUS];
	int cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct perf_event_attr attr;
	__u64 lost = 0;
	int i, n, tries;

	/* a dummy event that records nothing but flowjit records */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = SAMPLE_TYPE;	/* TIME is required */
	attr.sample_id_all = 1;
	attr.flowjit = 1;
	if (cpus > MAX_CPUS)
		cpus = MAX_CPUS;
	for (i = 0; i < cpus; i++) {
		/* all tasks on CPU i: kernel images are system-wide */
		int fd = flowjit_perf_event_open(&attr, -1, i);
		int err = fd < 0 ? -errno : flowjit_ring_map(&ring[i], fd, DATA_PAGES);

		if (err) {
			fprintf(stderr, "perf_event_open(flowjit) on cpu %d: %s\n",
				i, strerror(-err));
			return 1;
		}
	}
	flowjit_reasm_init(&ra);

	if (load_and_close())
		return 1;
	printf("loaded and closed bpf prog id %u (%u functions, %u bytes of x86-64)\n",
	       info.id, info.nr_jited_ksyms, info.jited_prog_len);

	/* the images are written at load; the retire records once it is freed */
	for (tries = 0; tries < 100 && retires < (int)info.nr_jited_ksyms; tries++) {
		for (i = 0; i < cpus; i++)
			flowjit_ring_drain(&ring[i], note, NULL);
		if (retires < (int)info.nr_jited_ksyms)
			usleep(10000);
	}
	flowjit_reasm_flush(&ra);
	for (i = 0; i < cpus; i++) {
		lost += ring[i].lost;
		flowjit_ring_close(&ring[i]);
	}
	n = ra.counts.records;
	printf("\n%d flowjit records, %llu lost; images: %llu complete,",
	       n, (unsigned long long)lost,
	       (unsigned long long)ra.counts.complete);
	printf(" %llu bad crc32c, %llu incomplete\n",
	       (unsigned long long)ra.counts.bad_csum,
	       (unsigned long long)(ra.counts.incomplete + ra.counts.overlap));
	flowjit_reasm_fini(&ra);
	return 0;
}
