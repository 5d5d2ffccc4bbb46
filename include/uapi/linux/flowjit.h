/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * flowjit: runtime code images in the perf sideband.
 *
 * A perf event with attr.flowjit set receives PERF_RECORD_FLOWJIT records
 * when code is created, rewritten or freed at run time: eBPF JIT images,
 * patched kernel text, user-space JIT pages. A decoder of branch traces
 * (Intel PT, BTS) keeps the images by (address space, address, time) and
 * reads the code that was live when a trace packet was generated.
 *
 * Record layout (struct perf_event_header.type == PERF_RECORD_FLOWJIT):
 *
 *	struct {
 *		struct perf_event_header	header;
 *		struct flowjit_record		rec;
 *		u8				bytes[rec.chunk_len];
 *		u8				pad[];	  to 8 bytes
 *		struct sample_id		sample_id;
 *	};
 *
 * The time, CPU and current pid/tid of the moment of capture come from
 * sample_id (attr.sample_id_all and PERF_SAMPLE_TIME are required).
 *
 * An image larger than FLOWJIT_CHUNK_MAX bytes is split into several
 * records with the same kind, asid, addr, len, revision and csum, and
 * increasing chunk_off; they are written back to back into each ring
 * buffer. A reader reassembles [0, len) and checks csum, the CRC-32C
 * (Castagnoli; initial value and final xor ~0, as iSCSI and ext4) of all
 * len bytes. A missing chunk means records were lost (PERF_RECORD_LOST).
 *
 * A FLOWJIT_OP_DELTA record is one record (chunk_off 0) whose bytes are
 * the parts of the object that changed since revision base: pieces
 *
 *	struct flowjit_delta_piece	piece;
 *	u8				bytes[piece.len];
 *
 * back to back (no padding; off increasing, pieces not overlapping),
 * filling chunk_len. Every other byte is base's, or zero if base is 0
 * (a whole image without its zero blocks: it needs no earlier record);
 * csum is the CRC-32C of the whole new revision, len bytes.
 *
 * See Documentation/trace/flowjit.rst.
 */
#ifndef _UAPI_LINUX_FLOWJIT_H
#define _UAPI_LINUX_FLOWJIT_H

#include <linux/types.h>

#define FLOWJIT_RECORD_VERSION	1

/* bytes of code in one record at most: a page, to suit small buffers */
#define FLOWJIT_CHUNK_MAX	4096

/* rec.asid of kernel code; user address spaces have ids > 0 */
#define FLOWJIT_ASID_KERNEL	0

enum flowjit_kind {
	FLOWJIT_KIND_BPF_PROG		= 1,	/* id: prog id; sub: 0 */
	FLOWJIT_KIND_BPF_SUBPROG	= 2,	/* id: prog id; sub: index */
	FLOWJIT_KIND_BPF_TRAMPOLINE	= 3,
	FLOWJIT_KIND_BPF_DISPATCHER	= 4,
	FLOWJIT_KIND_TEXT_POKE		= 5,	/* patched kernel text */
	FLOWJIT_KIND_MODULE_TEXT	= 6,	/* relocated, patched */
	FLOWJIT_KIND_USER_JIT		= 7,	/* a page of user JIT code */
	FLOWJIT_KIND_MAX,
};

enum flowjit_op {
	/* [addr, addr + len) holds the bytes carried from now on */
	FLOWJIT_OP_IMAGE		= 1,
	/* [addr, addr + len) holds no such code any more; no bytes */
	FLOWJIT_OP_RETIRE		= 2,
	/* [addr, addr + len) holds revision base with the pieces carried */
	FLOWJIT_OP_DELTA		= 3,
	FLOWJIT_OP_MAX,
};

/* rec.flags */
#define FLOWJIT_F_OLD_BYTES	0x1U	/* bytes are those before the change */
#define FLOWJIT_F_EXISTING	0x2U	/* code existed before the event */
/*
 * USER_JIT image of a page pinned for writes that bypass the page tables
 * (io_uring fixed buffers, O_DIRECT, RDMA): its bytes may change later
 * without a fault and without a record
 */
#define FLOWJIT_F_PINNED	0x4U

struct flowjit_record {
	__u16	version;	/* FLOWJIT_RECORD_VERSION */
	__u8	kind;		/* enum flowjit_kind */
	__u8	op;		/* enum flowjit_op */
	__u32	flags;		/* FLOWJIT_F_* */
	__u64	asid;		/* FLOWJIT_ASID_KERNEL or a user address space */
	/* the task that made the code, in the event's pid namespace */
	__u32	pid;		/* its process */
	__u32	tid;		/* its thread */
	__u64	addr;		/* first byte of the code object */
	__u64	len;		/* bytes of the whole object, all chunks */
	/*
	 * kind specific: the BPF prog id; for a USER_JIT image, the user
	 * IP whose instruction fetch faulted (0: not known), where a trace
	 * shows the fault (it may lie on the page before, for an
	 * instruction that crosses into this one)
	 */
	__u64	id;
	__u32	sub;		/* kind specific: the BPF subprog index */
	__u32	revision;	/* of the bytes at (asid, addr); from 1 */
	__u32	csum;		/* CRC-32C of the whole object's len bytes */
	__u32	chunk_off;	/* where this record's bytes start in it */
	__u32	chunk_len;	/* bytes in this record */
	__u32	base;		/* DELTA: the revision changed (0: zeros) */
};

/* A piece of a FLOWJIT_OP_DELTA record: @len bytes at @off follow it. */
struct flowjit_delta_piece {
	__u16	off;		/* from rec.addr */
	__u16	len;		/* > 0 */
};

/* the longest object a delta may describe (__u16 offsets) */
#define FLOWJIT_DELTA_LEN_MAX	65536

#endif /* _UAPI_LINUX_FLOWJIT_H */
