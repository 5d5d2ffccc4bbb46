/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading small eBPF programs and reading back their JIT images through
 * bpf(2), for the flowjit selftests and samples.
 */
#ifndef FLOWJIT_SELFTEST_BPF_PROG_H
#define FLOWJIT_SELFTEST_BPF_PROG_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#define BPF_MAX_FUNCS	8

#define BPF_INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

/* r0 = 0; exit */
#define BPF_PROG_TRIVIAL { \
	BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0), \
	BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0), \
}

/* main: r1 = @arg; call sub; exit -- sub: r0 = r1 + 1; exit */
#define BPF_PROG_WITH_SUBPROG(arg) { \
	BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, (arg)), \
	BPF_INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1), \
	BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0), \
	BPF_INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 0, 0), \
	BPF_INSN(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1), \
	BPF_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0), \
}

/* what bpf(2) says of a program's JIT image */
struct bpf_jit_info {
	struct bpf_prog_info info;
	uint64_t ksyms[BPF_MAX_FUNCS];
	uint32_t func_lens[BPF_MAX_FUNCS];
	uint8_t insns[65536];
};

static inline int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* Load @cnt @insns as a socket filter. Returns the prog fd or -errno. */
static inline int bpf_load_filter(const struct bpf_insn *insns, int cnt,
				  const char *name)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uint64_t)(unsigned long)insns;
	attr.insn_cnt = cnt;
	attr.license = (uint64_t)(unsigned long)"GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "%s", name);
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : fd;
}

/* The JIT image of prog @fd: functions, addresses, bytes. 0 or -errno. */
static inline int bpf_jit_info_get(int fd, struct bpf_jit_info *p)
{
	union bpf_attr attr;

	memset(&p->info, 0, sizeof(p->info));
	p->info.nr_jited_ksyms = BPF_MAX_FUNCS;
	p->info.jited_ksyms = (uint64_t)(unsigned long)p->ksyms;
	p->info.nr_jited_func_lens = BPF_MAX_FUNCS;
	p->info.jited_func_lens = (uint64_t)(unsigned long)p->func_lens;
	p->info.jited_prog_len = sizeof(p->insns);
	p->info.jited_prog_insns = (uint64_t)(unsigned long)p->insns;
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(p->info);
	attr.info.info = (uint64_t)(unsigned long)&p->info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) ? -errno : 0;
}

#endif /* FLOWJIT_SELFTEST_BPF_PROG_H */
