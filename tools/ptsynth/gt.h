/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gt.h - ptsynth ground-truth file format
 *
 * A ground-truth file (".gt") is a header followed by a sequence of
 * variable-sized records.  All values are little endian (host order on
 * x86-64).  See README.rst, section "Ground-truth file format".
 */
#ifndef PTSYNTH_GT_H
#define PTSYNTH_GT_H

#include <stdint.h>
#include <stdio.h>

#define GT_MAGIC	"PTSYNGT1"
#define GT_VERSION	1
#define GT_MAX_INSN	15
#define GT_MAX_NAME	4096

/* tc was calibrated against the perf clock, not read from the kernel */
#define GT_FLAG_TC_CALIBRATED	1
/* start-at mode: the instructions start at a signal, mid-run */
#define GT_FLAG_START_SIGNAL	2

/* TSC -> perf time conversion as found in a perf_event_mmap_page. */
struct gt_timeconv {
	uint16_t time_shift;
	uint16_t cap_user_time_zero;
	uint32_t time_mult;
	uint64_t time_zero;
};

struct gt_file_header {
	char magic[8];
	uint32_t version;
	uint32_t pid;			/* process id of the traced program */
	struct gt_timeconv tc;
	uint64_t start_tsc;
	uint64_t flags;			/* GT_FLAG_* */
	uint64_t reserved[3];
};

enum gt_rec_type {
	GT_INSN = 1,	/* one executed user instruction */
	GT_MMAP,	/* an executable mapping appeared */
	GT_CODE,	/* snapshot of code bytes (anon/vdso/JIT memory) */
	GT_SYSCALL,	/* the preceding INSN of this tid entered syscall nr */
	GT_SIGNAL,	/* signal delivered; resume_ip = IP when interrupted */
	GT_COMM,	/* thread got a command name (exec) */
	GT_FORK,	/* new thread/process */
	GT_EXIT,	/* thread exited */
	GT_MAX,
};

/* Common record header; size is the total record size, 8-byte aligned. */
struct gt_rec {
	uint16_t type;
	uint16_t flags;
	uint32_t size;
	uint32_t pid;
	uint32_t tid;
	uint64_t tsc;
};

struct gt_insn {
	struct gt_rec h;
	uint64_t ip;
	uint8_t len;
	uint8_t bytes[GT_MAX_INSN];
};

struct gt_mmap {
	struct gt_rec h;
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	uint32_t prot;		/* PROT_* */
	uint32_t maj, min;
	uint32_t pad;
	uint64_t ino;
	char name[];		/* NUL terminated, padded */
};

struct gt_code {
	struct gt_rec h;
	uint64_t addr;
	uint64_t len;
	uint8_t data[];		/* padded to 8 bytes */
};

struct gt_syscall {
	struct gt_rec h;
	uint64_t nr;
	uint64_t ip;		/* address of the syscall instruction */
};

struct gt_signal {
	struct gt_rec h;
	uint32_t signo;
	uint32_t pad;
	uint64_t resume_ip;	/* IP that was about to execute */
};

struct gt_comm {
	struct gt_rec h;
	uint32_t exec;		/* 1 if the comm change was due to exec */
	uint32_t pad;
	char comm[16];
};

struct gt_fork {
	struct gt_rec h;
	uint32_t ppid, ptid;
};

struct gt_exit {
	struct gt_rec h;
	int32_t status;
	uint32_t pad;
};

/* Writer */
struct gt_writer {
	FILE *f;
	uint64_t nr_recs;
};

int gt_writer_open(struct gt_writer *w, const char *path,
		   const struct gt_file_header *hdr);
int gt_write(struct gt_writer *w, struct gt_rec *rec, const void *tail,
	     size_t tail_len);
int gt_writer_close(struct gt_writer *w);

/* Reader: the whole file is loaded into memory. */
struct gt_trace {
	struct gt_file_header hdr;
	uint8_t *buf;
	size_t size;
	struct gt_rec **recs;
	size_t nr_recs;
};

int gt_load(struct gt_trace *t, const char *path);
void gt_free(struct gt_trace *t);
const char *gt_type_name(unsigned int type);

#endif
