// SPDX-License-Identifier: GPL-2.0
/*
 * Load an eBPF program with one subprogram and print, for every function,
 * what perf script --show-flowjit-bytes must show for it: the line
 *
 *	IMAGE <kind> id <id> sub <i> addr <addr> len <len> csum <crc32c>
 *
 * and its bytes, taken from bpf_prog_info's jited_ksyms, jited_func_lens
 * and jited_prog_insns while the program is loaded. Then hold it for
 * SECONDS (default 0), or until SIGTERM comes, and close it, and wait
 * until the program is gone: perf record reads the info of a program it
 * sees loaded through an fd of its own (bpf_event__sb_cb()), so the last
 * reference, and the unload with its retire records, may be perf's and
 * come a little later. -w loads the program only after a line (or the
 * end) comes from FIFO, so that a test can load it once perf record has
 * attached to this process and enabled its events, however long that
 * takes on a slow guest.
 *
 *	flowjit-bpf-load [-w FIFO] [SECONDS]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "libflowjit.h"

#define NR_FUNCS	8
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void print_bytes(const uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		printf("%s%02x%s", i % 16 ? "" : "    ", p[i],
		       i % 16 == 15 || i + 1 == len ? "\n" : " ");
}

/* wait up to 5 s until program @id is unloaded; 0 when it is */
static int wait_unloaded(uint32_t id)
{
	union bpf_attr ba;
	int i, fd;

	for (i = 0; i < 500; i++) {
		memset(&ba, 0, sizeof(ba));
		ba.prog_id = id;
		fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &ba);
		if (fd < 0)
			return errno == ENOENT ? 0 : -1;
		close(fd);
		usleep(10000);
	}
	fprintf(stderr, "program %u still loaded after 5 s\n", id);
	return -1;
}

/* wait for a line or the end of FIFO @path; 0 when one came */
static int wait_go(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		return -1;
	}
	while (read(fd, &c, 1) == 1 && c != '\n')
		;
	close(fd);
	return 0;
}

/* SIGTERM ends the hold: sleep() returns early, the program is closed */
static void on_term(int sig)
{
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

int main(int argc, char **argv)
{
	/* r0 = sub(41) + 1 via a bpf-to-bpf call: two JIT'd functions */
	struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 41),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 1, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	static uint8_t jited[65536];
	uint64_t ksyms[NR_FUNCS];
	uint32_t lens[NR_FUNCS], i, off = 0;
	struct bpf_prog_info info;
	struct sigaction sa;
	union bpf_attr ba;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	if (argc > 2 && !strcmp(argv[1], "-w")) {
		if (wait_go(argv[2]))
			return 1;
		argc -= 2;
		argv += 2;
	}
	memset(&ba, 0, sizeof(ba));
	ba.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	ba.insns = (uintptr_t)insns;
	ba.insn_cnt = ARRAY_SIZE(insns);
	ba.license = (uintptr_t)"GPL";
	snprintf(ba.prog_name, sizeof(ba.prog_name), "flowjit_e2e");
	fd = sys_bpf(BPF_PROG_LOAD, &ba);
	if (fd < 0) {
		perror("BPF_PROG_LOAD");
		return 1;
	}
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = NR_FUNCS;
	info.jited_ksyms = (uintptr_t)ksyms;
	info.nr_jited_func_lens = NR_FUNCS;
	info.jited_func_lens = (uintptr_t)lens;
	info.jited_prog_len = sizeof(jited);
	info.jited_prog_insns = (uintptr_t)jited;
	memset(&ba, 0, sizeof(ba));
	ba.info.bpf_fd = fd;
	ba.info.info_len = sizeof(info);
	ba.info.info = (uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &ba)) {
		perror("BPF_OBJ_GET_INFO_BY_FD");
		return 1;
	}
	if (!info.jited_prog_len || info.nr_jited_ksyms > NR_FUNCS ||
	    info.nr_jited_ksyms != info.nr_jited_func_lens) {
		fprintf(stderr, "program not JIT'd (bpf_jit_enable?) or too many functions\n");
		return 1;
	}
	for (i = 0; i < info.nr_jited_ksyms; i++) {
		printf("IMAGE %s id %u sub %u addr %#llx len %u csum %#010x\n",
		       i ? "bpf_subprog" : "bpf_prog", info.id, i,
		       (unsigned long long)ksyms[i], lens[i],
		       flowjit_csum(jited + off, lens[i]));
		print_bytes(jited + off, lens[i]);
		off += lens[i];
	}
	fflush(stdout);
	if (argc > 1)
		sleep(atoi(argv[1]));
	close(fd);
	return wait_unloaded(info.id) ? 1 : 0;
}
