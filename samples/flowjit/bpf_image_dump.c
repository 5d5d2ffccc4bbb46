// SPDX-License-Identifier: GPL-2.0
/*
 * Load an eBPF program with a subprogram, close it at once, and print
 * the flowjit records the kernel wrote for it: the JIT image of each
 * function, checked against its CRC-32C and against what bpf(2)
 * reported while the program was loaded, and the retire records.
 *
 * Needs CAP_PERFMON (or perf_event_paranoid <= 1) and CAP_BPF.
 */
#include <stdio.h>

#include "bpf_prog.h"
#include "flowjit_records.h"

static void hexdump(const __u8 *p, __u64 len)
{
	__u64 i;

	for (i = 0; i < len; i++)
		printf("%s%02x%s", i % 16 ? "" : "    ", p[i],
		       i % 16 == 15 || i + 1 == len ? "\n" : " ");
}

int main(void)
{
	static const struct bpf_insn insns[] = BPF_PROG_WITH_SUBPROG(41);
	static struct bpf_jit_info jit;
	static struct fj_set set;
	struct perf_event_attr attr;
	struct sb sb;
	__u32 off = 0;
	int fd, i, err;

	sb_attr_init(&attr);
	attr.flowjit = 1;
	err = sb_open(&sb, &attr);
	if (err) {
		fprintf(stderr, "perf_event_open(flowjit): %s\n", strerror(-err));
		return 1;
	}

	fd = bpf_load_filter(insns, 6, "flowjit_demo");
	if (fd < 0) {
		fprintf(stderr, "BPF_PROG_LOAD: %s\n", strerror(-fd));
		return 1;
	}
	err = bpf_jit_info_get(fd, &jit);
	if (err) {
		fprintf(stderr, "BPF_OBJ_GET_INFO_BY_FD: %s\n", strerror(-err));
		return 1;
	}
	close(fd);	/* gone: only flowjit still has its bytes */

	fj_collect(&sb, &set);
	printf("loaded and closed bpf prog id %u (%u functions, %u bytes of x86-64)\n",
	       jit.info.id, jit.info.nr_jited_ksyms, jit.info.jited_prog_len);
	printf("%d flowjit records, %llu lost\n", set.records,
	       (unsigned long long)fj_lost(&sb));
	for (i = 0; i < set.nr; i++) {
		struct fj_obj *o = &set.obj[i];
		const char *kind = flowjit_kind_name(o->rec.kind);

		if (o->rec.id != jit.info.id)
			continue;
		printf("\n%s %s id %llu sub %u at 0x%llx len %llu",
		       o->rec.op == FLOWJIT_OP_IMAGE ? "IMAGE " : "RETIRE",
		       kind, (unsigned long long)o->rec.id, o->rec.sub,
		       (unsigned long long)o->rec.addr,
		       (unsigned long long)o->rec.len);
		printf(" rev %u pid %u time %llu, %d chunk(s)\n",
		       o->rec.revision, o->rec.pid,
		       (unsigned long long)o->time, o->chunks);
		if (o->rec.op != FLOWJIT_OP_IMAGE)
			continue;
		printf("  crc32c %08x: %s; bytes and address as bpf(2) said: %s\n",
		       o->rec.csum, fj_complete(o) ? "ok" : "BAD",
		       o->rec.addr == jit.ksyms[o->rec.sub] &&
		       !memcmp(o->bytes, jit.insns + off, o->rec.len) ? "yes" : "NO");
		hexdump(o->bytes, o->rec.len);
		off += o->rec.len;
	}
	sb_close(&sb);
	return 0;
}
