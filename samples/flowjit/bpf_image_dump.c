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
#include <linux/bpf.h>

#include "flowjit_records.h"

static const char *const kinds[] = {
	[FLOWJIT_KIND_BPF_PROG] = "bpf_prog",
	[FLOWJIT_KIND_BPF_SUBPROG] = "bpf_subprog",
	[FLOWJIT_KIND_BPF_TRAMPOLINE] = "bpf_trampoline",
	[FLOWJIT_KIND_BPF_DISPATCHER] = "bpf_dispatcher",
	[FLOWJIT_KIND_TEXT_POKE] = "text_poke",
	[FLOWJIT_KIND_MODULE_TEXT] = "module_text",
	[FLOWJIT_KIND_USER_JIT] = "user_jit",
};

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void hexdump(const __u8 *p, __u64 len)
{
	__u64 i;

	for (i = 0; i < len; i++)
		printf("%s%02x%s", i % 16 ? "" : "    ", p[i],
		       i % 16 == 15 || i + 1 == len ? "\n" : " ");
}

int main(void)
{
	struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 41),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static __u8 jited[65536];
	static struct fj_set set;
	__u64 ksyms[8];
	__u32 lens[8];
	struct perf_event_attr attr;
	struct bpf_prog_info info;
	union bpf_attr ba;
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

	memset(&ba, 0, sizeof(ba));
	ba.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	ba.insns = (__u64)(unsigned long)insns;
	ba.insn_cnt = 6;
	ba.license = (__u64)(unsigned long)"GPL";
	strcpy(ba.prog_name, "flowjit_demo");
	fd = sys_bpf(BPF_PROG_LOAD, &ba);
	if (fd < 0) {
		perror("BPF_PROG_LOAD");
		return 1;
	}
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 8;
	info.jited_ksyms = (__u64)(unsigned long)ksyms;
	info.nr_jited_func_lens = 8;
	info.jited_func_lens = (__u64)(unsigned long)lens;
	info.jited_prog_len = sizeof(jited);
	info.jited_prog_insns = (__u64)(unsigned long)jited;
	memset(&ba, 0, sizeof(ba));
	ba.info.bpf_fd = fd;
	ba.info.info_len = sizeof(info);
	ba.info.info = (__u64)(unsigned long)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &ba)) {
		perror("BPF_OBJ_GET_INFO_BY_FD");
		return 1;
	}
	close(fd);	/* gone: only flowjit still has its bytes */

	fj_collect(&sb, &set);
	printf("loaded and closed bpf prog id %u (%u functions, %u bytes of x86-64)\n",
	       info.id, info.nr_jited_ksyms, info.jited_prog_len);
	printf("%d flowjit records, %llu lost\n", set.records,
	       (unsigned long long)fj_lost(&sb));
	for (i = 0; i < set.nr; i++) {
		struct fj_obj *o = &set.obj[i];
		const char *kind = o->rec.kind < FLOWJIT_KIND_MAX &&
				   kinds[o->rec.kind] ? kinds[o->rec.kind] : "?";

		if (o->rec.id != info.id)
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
		       o->rec.addr == ksyms[o->rec.sub] &&
		       !memcmp(o->bytes, jited + off, o->rec.len) ? "yes" : "NO");
		hexdump(o->bytes, o->rec.len);
		off += o->rec.len;
	}
	sb_close(&sb);
	return 0;
}
